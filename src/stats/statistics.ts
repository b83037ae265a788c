/**
 * The statistics model of MS-FSCADM 2.2.4 and its encodings for the admin
 * methods (2.2.10.4–2.2.10.7). Pure: no I/O, no clock. Every time is passed in
 * as seconds since the epoch (`nowS`), so callers and tests decide the time.
 *
 * One `Statistics` per scope (the global scope, each collection, each site):
 *
 *   record / set / count / setRows / absorb
 *        │
 *        ▼
 *   ┌──────────┐ mergeDelta(nowS) ┌─────────────────────────────────────────┐
 *   │  delta   │ ───────────────► │ cycles  { 3: Values, 4: Values }  (k=2) │
 *   │ (since   │      adds to     │         the k most recent; 4 = current  │
 *   │  the last│ ───────────────► │ cOmPIEtE  every cycle ever, summed      │
 *   │  merge)  │  then resets to 0└─────────────────────────────────────────┘
 *   └──────────┘
 *   newCycle(nowS): merge the delta, open cycle n+1 (discrete state carried
 *   over), drop the oldest cycles beyond k. cOmPIEtE is never dropped.
 *
 * A `Values` holds one schema's attributes (2.2.4.7):
 *   scalar          continuous / discrete / multidiscrete   [cur, min, max, updates]
 *   histogram       {bucket: count}, updates                 (2.2.4.6.3)
 *   multidimension  {key: number[]}, updates                 (2.2.4.6.4)
 * Attributes never touched are absent; the encoders write them as zeros.
 *
 * Choices the spec leaves open (each with the section that leaves it open):
 *
 * - Continuous data (2.2.4.6.1). `record(x)` adds one observation: [0] is the
 *   sum of the observations, [1]/[2] the smallest/largest single observation,
 *   [3] the number of observations. So DocSizeMax is DocSize[2] and
 *   DocSizeAvg is DocSize[0] / DocSize[3] (2.2.5). Merging adds the sums and
 *   the counts and keeps the extreme observations.
 * - Discrete and multidiscrete (2.2.4.6.2): [0] is the latest value, [1]/[2]
 *   the smallest/largest value seen (strings such as LastUri and CrawlMode
 *   compare by code unit), [3] the number of times it was set. A new cycle
 *   starts with the last cycle's discrete and multidimension values (with 0
 *   updates), so Feeding, Status, Uptime, … stay true across cycles.
 * - "Updates" ([3] of every type) counts observations: calls of record, set,
 *   count and setRows. Merges add them up. For the engine's counters
 *   (`absorbCounters`), a counter that only ever grows by 1 (Processed,
 *   Downloaded, Local, …) grew by d means d observations of 1; DocSize and
 *   DLTime have one observation per download (the growth of Downloaded);
 *   ReadNet and WriteNet, one per absorb; each discrete and collection state
 *   value, one per absorb; histograms, one per counted occurrence.
 * - k, the cycles kept (2.2.4.3, 3.3.1: "implementation dependent"): 2 by
 *   default, the current cycle and the previous one, which is what
 *   CollectionGetStatistics2 shows ("cur", "prev"). Any k ≥ 1 may be set.
 * - "prev" (2.2.10.6): the highest-numbered kept cycle below the current one,
 *   if anything was merged into it; otherwise the key is left out (so with
 *   k = 1 there is never a "prev").
 * - Cycle numbers (2.2.4.5 and Epoch in 2.2.4.9) start at 0. The engine counts
 *   its epochs from 1, so the protocol's number is epoch − 1
 *   (`cycleNumberOfEpoch`).
 * - Rates (2.2.5 DocRate, DataRateIn/Out; 2.2.6 DNSRate, DNSDataRateIn/Out)
 *   are totals divided by the span the structure covers: for a cycle or
 *   cOmPIEtE, from its __startts__ (FirstUpdate) to its last merge
 *   (__stoptts__, LastUpdate); for the delta, from its __startts__ to now.
 *   With the §4.3 numbers this gives exactly the example's DocRate,
 *   DataRateIn and DataRateOut (40 documents / 2736.37 s = 0.0146…).
 *   FirstUpdate is therefore the start of the cycle's statistics and is not
 *   moved at a restart (2.2.5 asks for that; the totals survive a restart,
 *   so moving the start would inflate the rates). CrawlStarted still tells
 *   when crawling last began.
 * - "cur", "prev" and "complete" show merged data only; what is not merged
 *   yet (at most a minute or two, 2.2.4.4) is shown under "delta".
 *   StatUpdated (§4.3) is the age of the merged data, e.g. "26.2s". The
 *   flattened "delta" shows the latest merged value of a discrete attribute
 *   the delta has not set since the merge reset it (§4.3 shows DNSRateLimit
 *   10.0 there); the raw delta in the schema dictionary stays zeroed.
 * - A structure nothing has been merged into yet is "no statistics
 *   available": its flattened dictionary is empty (2.2.10.6, 2.2.10.7).
 * - DocSizeAvg is in whole bytes (rounded down), as in §4.3 (162862 bytes /
 *   40 documents = 4071.0). DLTimeAvg is not rounded.
 * - DocumentStore = Stored − Modified − Deleted exactly as 2.2.5 says, not
 *   clamped.
 * - Progress (2.2.5): [⌊100 · elapsed / refresh⌋ clamped to 0..100, "1 day 8h
 *   34m 23s until scratch refresh"], elapsed counted from the start of the
 *   current cycle; "refresh overdue by …" once the refresh period has passed,
 *   "no scheduled refresh" when refresh ≤ 0. The same value is shown in cur,
 *   prev and complete (it is about the current cycle), as in §4.3.
 * - Status (2.2.3.3 → 2.2.5): never set means 1, "Crawling". The reserved
 *   codes 2 and 7 are refused by `set`.
 * - StatUpdate (2.2.5, "when the crawl collection ended the crawl") is
 *   CrawlEnded, 0 while the cycle runs.
 * - DNSRateLimit (2.2.4.8) is the configured limit on DNS requests per second,
 *   set by the resolver's owner with `setDnsRateLimit`; 0 when unlimited.
 * - StartUriStatus and FeedingDestinations are multidimension attributes,
 *   whose rows 2.2.4.6.4 says are numbers: a start URI file maps to [size in
 *   bytes, position in bytes] and a destination to [1] (feeding) or [0]
 *   (paused). 2.2.4.10 describes the same values as strings.
 *
 * Encodings and where the §4.3 example differs from the tables:
 *
 * - 2.2.10.4/2.2.10.5 ask for the pyfastmarshal format of MS-FSWCU, which is
 *   not public. The encoders return plain XML-RPC values (numbers, strings,
 *   `XmlRpcDouble`, arrays, structs) and src/admin/xmlrpc.ts writes them.
 *   XML-RPC struct member names are strings, so the int cycle keys are
 *   written "0", "1", … next to "cOmPIEtE", and the 2.2.4.2 values refresh
 *   and refresh_mode ("int … converted to string") are decimal strings.
 * - Types: a plain JS number is always an int32 integer (XML-RPC <int>);
 *   everything the tables call double, and any number that is not an int32
 *   integer (2.2.4.6: "double is used to store large numeric values"), is a
 *   `XmlRpcDouble`.
 * - The schema dictionary (2.2.4.7): "name" is the scope's name (the
 *   collection, the site, or "global"); each of discrete, continuous, … is an
 *   array of [attribute name, value] pairs, one for every attribute of the
 *   schema; __stoptts__ is now for the delta and the last merge for a cycle.
 * - CollectionGetStatistics2 (§4.3 is the reference): besides cur/prev/
 *   complete, §4.3 returns "delta" (the global delta's DNS fields and the
 *   collection delta's DocRate, DataRateIn, DataRateOut), adds the global
 *   fields to "complete", and has Unchanged, PPPartialUpdate, LastUpdate and
 *   StatUpdated (a string) that the 2.2.5 table lacks. All of these are
 *   returned, together with every key of the 2.2.5 table (StatUpdate too).
 * - 2.2.4.1 puts collections next to "dspec" and "global" in one
 *   dictionary, so a collection (or site) with one of those names cannot be
 *   encoded there; the encoders raise a RangeError for it.
 * - 2.2.6 lists DNSRequest (double), DNSResponse (double) and DNSResponses
 *   (dictionary); 2.2.4.8 and §4.3 have DNSRequests (double), DNSResponses
 *   (double, a count) and DNSResponse (dictionary, the RCODE histogram).
 *   The flattened global structure follows 2.2.4.8 and §4.3, and also
 *   carries DNSRequest (= DNSRequests) so every name of 2.2.6 is there.
 */

// The value types are the XML-RPC codec's (type-only import); the double marker lives in src/core.
import { XmlRpcDouble } from '../core/xmlrpc-value.ts';
import type { XmlRpcStruct, XmlRpcValue } from '../admin/xmlrpc.ts';
import { CONTINUOUS_KEYS, emptyStats, HISTOGRAM_KEYS, SiteStats } from './site-stats.ts';
import type { StatsData } from './site-stats.ts';

// ─── XML-RPC values ──────────────────────────────────────────────────────────

export { XmlRpcDouble };
/** What the encoders return: values src/admin/xmlrpc.ts writes as they are. */
export type RpcValue = XmlRpcValue;
export type RpcStruct = XmlRpcStruct;

const INT32_MAX = 2 ** 31 - 1;
const INT32_MIN = -(2 ** 31);

/** An int32 integer stays an <int>; anything else is a <double> (2.2.4.6). */
function num(x: number): number | XmlRpcDouble {
  return Number.isInteger(x) && x >= INT32_MIN && x <= INT32_MAX ? x : new XmlRpcDouble(x);
}

/** A value 2.2.5 types as int: truncated and clamped to int32. */
function int(x: number): number {
  if (!Number.isFinite(x)) return 0;
  return Math.min(INT32_MAX, Math.max(INT32_MIN, Math.trunc(x)));
}

function dbl(x: number): XmlRpcDouble {
  return new XmlRpcDouble(Number.isFinite(x) ? x : 0);
}

// ─── Schemas (2.2.4.7–2.2.4.10) ─────────────────────────────────────────────

export type SchemaName = 'globalschema' | 'siteschema' | 'collectionschema';
export type Kind = 'discrete' | 'continuous' | 'histogram' | 'multidimension' | 'multidiscrete';
/** The order the schema dictionary lists the kinds in (2.2.4.7). */
export const KINDS: readonly Kind[] = ['discrete', 'continuous', 'histogram', 'multidimension', 'multidiscrete'];

const SITE_DISCRETE = ['LastUri', 'QueueLength', 'CrawlStarted', 'CrawlEnded', 'Epoch', 'LastRefresh'] as const;

/** The collection's content-submission counters (2.2.4.10). */
export const PP_COUNTERS = ['PPFailed', 'PPSucceeded', 'PPFed', 'PPDeleted', 'PPAdded', 'PPModified', 'PPURLsChange', 'PPPartialUpdate'] as const;
export type PPCounter = (typeof PP_COUNTERS)[number];

/** Every attribute of every schema, by aggregation type. */
export const SCHEMAS = {
  globalschema: {
    discrete: ['Uptime', 'DNSRateLimit'],
    continuous: ['DNSWrite', 'DNSRead', 'DNSRequests', 'DNSResponses', 'DNSRetries', 'DNSTimeout'],
    histogram: ['DNSResponse'],
    multidimension: [],
    multidiscrete: [],
  },
  siteschema: {
    discrete: SITE_DISCRETE,
    continuous: CONTINUOUS_KEYS,
    histogram: HISTOGRAM_KEYS,
    multidimension: [],
    multidiscrete: [],
  },
  collectionschema: {
    discrete: [...SITE_DISCRETE, 'Uptime', 'ActiveSites', 'Feeding', 'Status', 'CrawlMode', 'PPChecksums'],
    continuous: [...CONTINUOUS_KEYS, ...PP_COUNTERS],
    histogram: HISTOGRAM_KEYS,
    multidimension: ['StartUriStatus', 'FeedingDestinations'],
    multidiscrete: ['SumActiveSites', 'SumPPChecksums'],
  },
} as const satisfies Record<SchemaName, Record<Kind, readonly string[]>>;

/** The attribute names of schema S with aggregation type K. */
export type AttrOf<S extends SchemaName, K extends Kind> = (typeof SCHEMAS)[S][K][number];

/** Discrete attributes whose values are strings. */
const TEXT_ATTRS = new Set(['LastUri', 'CrawlMode']);
/** Discrete attributes whose "never set" value is not 0. */
const INITIAL: Readonly<Record<string, number>> = { Feeding: 1, Status: 1 };

const KIND_OF: ReadonlyMap<SchemaName, ReadonlyMap<string, Kind>> = new Map(
  (Object.keys(SCHEMAS) as SchemaName[]).map((s) => [s, new Map(KINDS.flatMap((k) => (SCHEMAS[s][k] as readonly string[]).map((a) => [a, k] as const)))]),
);

function kindOf(schema: SchemaName, name: string): Kind | undefined {
  return KIND_OF.get(schema)!.get(name);
}

// ─── Codes and strings ──────────────────────────────────────────────────────

/** 2.2.3.3 (2 and 7 are reserved and MUST NOT be used). */
export type StatusCode = 1 | 3 | 4 | 5 | 6 | 8;

/** 2.2.3.3 code → the 2.2.5 Status string. */
export const STATUS_STRINGS: Readonly<Record<StatusCode, string>> = {
  1: 'Crawling',
  3: 'Zombie',
  4: 'Suspended',
  5: 'Disk full',
  6: 'Compacting',
  8: 'Variable delay suspended',
};

function isStatusCode(code: unknown): code is StatusCode {
  return typeof code === 'number' && Object.hasOwn(STATUS_STRINGS, code);
}

/** The 2.2.5 Status string of a 2.2.3.3 code; 0 (never set) reads as 1. */
export function statusString(code: number): string {
  const c = code === 0 ? 1 : code;
  if (!isStatusCode(c)) throw new RangeError(`MS-FSCADM 2.2.3.3: ${code} is not a collection status code`);
  return STATUS_STRINGS[c];
}

/** The crawl limits of 2.2.3.6 (MS-FSCCFG 2.2.4.18). */
export type CrawlLimit = 'max_doc' | 'disk_free' | 'user';

/** 2.2.3.6: "Refreshing(limit=max_doc)" …, or "" when no limit is reached. */
export function crawlModeString(limit: CrawlLimit | undefined): string {
  return limit === undefined ? '' : `Refreshing(limit=${limit})`;
}

export type RefreshMode = 'append' | 'prepend' | 'scratch' | 'soft' | 'adaptive';

/** 2.2.4.2: the refresh_mode codes. */
export const REFRESH_MODE_CODES: Readonly<Record<RefreshMode, number>> = { append: 1, prepend: 2, scratch: 4, soft: 8, adaptive: 32 };

/** The protocol's cycle number (from 0, 2.2.4.5) of the engine's epoch (from 1). */
export function cycleNumberOfEpoch(epoch: number): number {
  return Math.max(0, epoch - 1);
}

/** "1 day 8h 34m 23s", "2h 0m 5s", "42s": from the largest non-zero unit down. */
export function formatDuration(seconds: number): string {
  let s = Math.max(0, Math.round(seconds));
  const days = Math.floor(s / 86400);
  s -= days * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const parts: string[] = [];
  if (days > 0) parts.push(`${days} ${days === 1 ? 'day' : 'days'}`);
  if (parts.length > 0 || h > 0) parts.push(`${h}h`);
  if (parts.length > 0 || m > 0) parts.push(`${m}m`);
  parts.push(`${s}s`);
  return parts.join(' ');
}

export interface ProgressInput {
  /** When the current cycle began. */
  readonly cycleStartS: number;
  readonly nowS: number;
  /** MS-FSCCFG refresh, in minutes. */
  readonly refreshMin: number;
  readonly refreshMode: RefreshMode;
}

/** 2.2.5 Progress: [percent of the cycle's refresh period gone, time until the next refresh]. */
export function progress(p: ProgressInput): [number, string] {
  const periodS = p.refreshMin * 60;
  if (!(periodS > 0)) return [0, 'no scheduled refresh'];
  const elapsedS = Math.max(0, p.nowS - p.cycleStartS);
  const percent = Math.min(100, Math.floor((100 * elapsedS) / periodS));
  const leftS = periodS - elapsedS;
  if (leftS < 0) return [percent, `${p.refreshMode} refresh overdue by ${formatDuration(-leftS)}`];
  return [percent, `${formatDuration(leftS)} until ${p.refreshMode} refresh`];
}

// ─── Values ─────────────────────────────────────────────────────────────────

/** [current, min, max, updates] of a continuous, discrete or multidiscrete attribute. */
export type Scalar = [cur: number | string, min: number | string, max: number | string, updates: number];
/** A histogram: {bucket: count} and its updates. */
export type Hist = [counts: Record<string, number>, updates: number];
/** A multidimension attribute: {key: row} and its updates. */
export type Rows = [rows: Record<string, number[]>, updates: number];

/** One schema's attribute values over a span of time (a delta, a cycle, or cOmPIEtE). */
export interface Values {
  /** __startts__: when aggregation began. */
  startTs: number;
  /** __stoptts__: the last merge; absent before the first. Deltas leave it out (they run until now). */
  stopTs?: number;
  /** Deltas merged into this structure; 0 means "no statistics available". */
  merges: number;
  scalar: Record<string, Scalar>;
  histogram: Record<string, Hist>;
  multidimension: Record<string, Rows>;
}

/** A dictionary without a prototype: bucket names come from the network ("__proto__"). */
function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function own<T>(o: Record<string, T> | undefined, k: string): T | undefined {
  return o !== undefined && Object.hasOwn(o, k) ? o[k] : undefined;
}

export function emptyValues(startTs: number): Values {
  return { startTs, merges: 0, scalar: dict(), histogram: dict(), multidimension: dict() };
}

function cloneValues(v: Values): Values {
  const out = emptyValues(v.startTs);
  if (v.stopTs !== undefined) out.stopTs = v.stopTs;
  out.merges = v.merges;
  for (const [k, s] of Object.entries(v.scalar)) out.scalar[k] = [...s];
  for (const [k, [c, n]] of Object.entries(v.histogram)) out.histogram[k] = [Object.assign(dict<number>(), c), n];
  for (const [k, [r, n]] of Object.entries(v.multidimension)) out.multidimension[k] = [cloneRows(r), n];
  return out;
}

function cloneRows(r: Record<string, number[]>): Record<string, number[]> {
  const out = dict<number[]>();
  for (const [k, row] of Object.entries(r)) out[k] = [...row];
  return out;
}

function lessThan(a: number | string, b: number | string): boolean {
  return typeof a === typeof b ? a < b : typeof a === 'number';
}

function observeContinuous(v: Values, name: string, x: number): void {
  if (!Number.isFinite(x)) throw new RangeError(`${name}: ${x} is not a finite number`);
  const s = v.scalar[name];
  if (s === undefined || s[3] === 0) v.scalar[name] = [(typeof s?.[0] === 'number' ? s[0] : 0) + x, x, x, 1];
  else v.scalar[name] = [(s[0] as number) + x, lessThan(x, s[1]) ? x : s[1], lessThan(s[2], x) ? x : s[2], s[3] + 1];
}

function observeDiscrete(v: Values, name: string, x: number | string): void {
  if (typeof x === 'number' && !Number.isFinite(x)) throw new RangeError(`${name}: ${x} is not a finite number`);
  const s = v.scalar[name];
  if (s === undefined || s[3] === 0) v.scalar[name] = [x, x, x, 1];
  else v.scalar[name] = [x, lessThan(x, s[1]) ? x : s[1], lessThan(s[2], x) ? x : s[2], s[3] + 1];
}

function countInto(v: Values, name: string, bucket: string, n: number, updates: number): void {
  if (!Number.isFinite(n)) throw new RangeError(`${name}: ${n} is not a finite number`);
  const h = (v.histogram[name] ??= [dict<number>(), 0]);
  h[0][bucket] = (own(h[0], bucket) ?? 0) + n;
  h[1] += updates;
}

function setRowsInto(v: Values, name: string, rows: Readonly<Record<string, readonly number[]>>): void {
  const copy = dict<number[]>();
  for (const [k, row] of Object.entries(rows)) {
    if (!row.every(Number.isFinite)) throw new RangeError(`${name}[${k}]: every value must be a finite number`);
    copy[k] = [...row];
  }
  v.multidimension[name] = [copy, (v.multidimension[name]?.[1] ?? 0) + 1];
}

/**
 * Adds `from` into `into` (2.2.4.4/2.2.4.5): continuous sums add, discrete
 * values take the newer one, histograms add per bucket, multidimension rows
 * are replaced by the newer ones; updates add everywhere; extremes are kept.
 */
function mergeValues(schema: SchemaName, into: Values, from: Values): void {
  for (const [name, b] of Object.entries(from.scalar)) {
    const a = into.scalar[name];
    if (a === undefined) {
      into.scalar[name] = [...b];
      continue;
    }
    const aHas = a[3] > 0;
    const bHas = b[3] > 0;
    const min = !bHas ? a[1] : !aHas ? b[1] : lessThan(b[1], a[1]) ? b[1] : a[1];
    const max = !bHas ? a[2] : !aHas ? b[2] : lessThan(a[2], b[2]) ? b[2] : a[2];
    const cur = kindOf(schema, name) === 'continuous' ? (a[0] as number) + (b[0] as number) : bHas ? b[0] : a[0];
    into.scalar[name] = [cur, min, max, a[3] + b[3]];
  }
  for (const [name, [counts, n]] of Object.entries(from.histogram)) {
    const h = (into.histogram[name] ??= [dict<number>(), 0]);
    for (const [bucket, c] of Object.entries(counts)) h[0][bucket] = (own(h[0], bucket) ?? 0) + c;
    h[1] += n;
  }
  for (const [name, [rows, n]] of Object.entries(from.multidimension)) {
    const prev = into.multidimension[name];
    into.multidimension[name] = [n > 0 || prev === undefined ? cloneRows(rows) : prev[0], (prev?.[1] ?? 0) + n];
  }
}

/** The state a new cycle starts with: the discrete values and rows, with 0 updates. */
function carryOver(schema: SchemaName, from: Values, startTs: number): Values {
  const v = emptyValues(startTs);
  for (const [name, s] of Object.entries(from.scalar)) {
    if (kindOf(schema, name) !== 'continuous') v.scalar[name] = [s[0], s[0], s[0], 0];
  }
  for (const [name, [rows]] of Object.entries(from.multidimension)) v.multidimension[name] = [cloneRows(rows), 0];
  return v;
}

// ─── The engine's counters (src/stats/site-stats.ts) ────────────────────────

/** Cumulative counters as the engine keeps them; deltas are their growth. */
export interface CounterSnapshot {
  /** One site's counters, or the collection's: the sum of its sites (`sumSiteCounters`, or a crawl's running `counterTotals`). */
  readonly totals: StatsData;
  /** The collection's content-submission counters, cumulative (collection scope only). */
  readonly pp?: Readonly<Partial<Record<PPCounter, number>>>;
}

/** The collection-only state values of 2.2.4.10, each one observation when given. */
export interface CollectionState {
  /** When the collection was added (timestamp). */
  readonly uptimeS?: number;
  readonly activeSites?: number;
  readonly feeding?: boolean;
  readonly status?: StatusCode;
  /** The crawl limit reached, or 'none'. */
  readonly crawlLimit?: CrawlLimit | 'none';
  /** Start URI files being read: file → sizes in bytes. Empty when none is. */
  readonly startUriFiles?: Readonly<Record<string, { readonly sizeBytes: number; readonly positionBytes: number }>>;
  /** Non-default content destinations → feeding (true) or paused (false). */
  readonly feedingDestinations?: Readonly<Record<string, boolean>>;
  readonly sumActiveSites?: number;
  readonly ppChecksums?: number;
  readonly sumPPChecksums?: number;
}

/** The collection's counters: the sum of its sites' (as SiteStats.merge adds them). */
export function sumSiteCounters(sites: Iterable<StatsData>): StatsData {
  const sum = new SiteStats();
  for (const s of sites) sum.merge(s);
  return sum.data;
}

/** Growth of a cumulative counter; a counter that went down was reset, so all of it is new. */
function growth(now: number, before: number | undefined): number {
  const d = now - (before ?? 0);
  return d < 0 ? now : d;
}

function applyState(v: Values, s: CollectionState): void {
  if (s.uptimeS !== undefined) observeDiscrete(v, 'Uptime', s.uptimeS);
  if (s.activeSites !== undefined) observeDiscrete(v, 'ActiveSites', s.activeSites);
  if (s.feeding !== undefined) observeDiscrete(v, 'Feeding', s.feeding ? 1 : 0);
  if (s.status !== undefined) {
    if (!isStatusCode(s.status)) throw new RangeError(`MS-FSCADM 2.2.3.3: ${String(s.status)} is not a collection status code`);
    observeDiscrete(v, 'Status', s.status);
  }
  if (s.crawlLimit !== undefined) observeDiscrete(v, 'CrawlMode', crawlModeString(s.crawlLimit === 'none' ? undefined : s.crawlLimit));
  if (s.startUriFiles !== undefined) {
    setRowsInto(v, 'StartUriStatus', Object.fromEntries(Object.entries(s.startUriFiles).map(([f, p]) => [f, [p.sizeBytes, p.positionBytes]])));
  }
  if (s.feedingDestinations !== undefined) {
    setRowsInto(v, 'FeedingDestinations', Object.fromEntries(Object.entries(s.feedingDestinations).map(([d, on]) => [d, [on ? 1 : 0]])));
  }
  if (s.sumActiveSites !== undefined) observeDiscrete(v, 'SumActiveSites', s.sumActiveSites);
  if (s.ppChecksums !== undefined) observeDiscrete(v, 'PPChecksums', s.ppChecksums);
  if (s.sumPPChecksums !== undefined) observeDiscrete(v, 'SumPPChecksums', s.sumPPChecksums);
}

/**
 * The delta between two snapshots of the engine's cumulative counters, as a
 * site-schema (or collection-schema) `Values`. `prev` undefined means
 * "everything is new". The engine keeps DocSizeMax/DLTimeMax over all time
 * only, so a window's largest observation is known when that maximum grew
 * in the window; otherwise the window's average stands in (a lower bound).
 */
export function deltaFromCounters(schema: 'siteschema' | 'collectionschema', prev: CounterSnapshot | undefined, cur: CounterSnapshot, state?: CollectionState): Values {
  if (schema === 'siteschema' && (cur.pp !== undefined || state !== undefined)) {
    throw new TypeError('content-submission counters and collection state belong to the collection schema');
  }
  const v = emptyValues(0);
  const p = prev?.totals;
  const c = cur.totals;
  const downloads = growth(c.continuous.Downloaded, p?.continuous.Downloaded);
  for (const key of CONTINUOUS_KEYS) {
    const d = growth(c.continuous[key], p?.continuous[key]);
    if (!(d > 0)) continue;
    if (key === 'DocSize' || key === 'DLTime') {
      const n = Math.max(1, downloads);
      const maxKey = key === 'DocSize' ? 'DocSizeMax' : 'DLTimeMax';
      const avg = d / n;
      const max = p === undefined || c.maxima[maxKey] > p.maxima[maxKey] ? Math.max(avg, c.maxima[maxKey]) : avg;
      v.scalar[key] = [d, avg, max, n];
    } else if (key === 'ReadNet' || key === 'WriteNet') {
      v.scalar[key] = [d, d, d, 1];
    } else {
      v.scalar[key] = [d, 1, 1, d];
    }
  }
  const disc = c.discrete;
  observeDiscrete(v, 'LastUri', disc.LastUri);
  observeDiscrete(v, 'QueueLength', disc.QueueLength);
  observeDiscrete(v, 'CrawlStarted', disc.CrawlStarted);
  observeDiscrete(v, 'CrawlEnded', disc.CrawlEnded);
  observeDiscrete(v, 'Epoch', cycleNumberOfEpoch(disc.Epoch));
  observeDiscrete(v, 'LastRefresh', disc.LastRefresh);
  for (const h of HISTOGRAM_KEYS) {
    for (const [bucket, n] of Object.entries(c.histograms[h])) {
      const d = growth(n, own(p?.histograms[h], bucket));
      if (d > 0) countInto(v, h, bucket, d, d);
    }
  }
  if (schema === 'collectionschema') {
    for (const k of PP_COUNTERS) {
      const d = growth(cur.pp?.[k] ?? 0, prev?.pp?.[k]);
      if (d > 0) v.scalar[k] = [d, 1, 1, d];
    }
    if (state !== undefined) applyState(v, state);
  }
  return v;
}

// ─── The accumulator ────────────────────────────────────────────────────────

/** The JSON `Statistics.toJSON` writes and `Statistics.fromJSON` reads. */
export interface StatisticsJson {
  readonly version: 1;
  readonly schema: SchemaName;
  readonly name: string;
  readonly keep: number;
  readonly current: number;
  readonly delta: Values;
  readonly cycles: Record<string, Values>;
  readonly complete: Values;
  readonly baseline?: CounterSnapshot;
}

export interface StatisticsOptions<S extends SchemaName> {
  readonly schema: S;
  /** The collection's or site's name; "global" for the global scope. */
  readonly name: string;
  /** When the scope's statistics begin (cycle 0 and cOmPIEtE start here). */
  readonly nowS: number;
  /** k, the number of cycles kept (≥ 1, default 2). */
  readonly keep?: number;
}

export const DEFAULT_KEEP = 2;

function checkKeep(k: number): number {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`MS-FSCADM 2.2.4.3: k must be an int greater than 0, not ${k}`);
  return k;
}

/**
 * The statistics of one scope: a delta, the k most recent cycles and
 * cOmPIEtE. Recording goes to the delta; `mergeDelta` moves it into the
 * current cycle and cOmPIEtE. Recording a name that is not in the schema,
 * or with the wrong aggregation type, throws a TypeError.
 */
export class Statistics<S extends SchemaName = SchemaName> {
  readonly schema: S;
  readonly name: string;
  private keepCycles: number;
  private currentCycle: number;
  private pending: Values;
  private readonly cycleMap: Map<number, Values>;
  private all: Values;
  private baseline: CounterSnapshot | undefined;

  constructor(opts: StatisticsOptions<S>) {
    if (!Object.hasOwn(SCHEMAS, opts.schema)) throw new TypeError(`unknown statistics schema ${String(opts.schema)}`);
    this.schema = opts.schema;
    this.name = opts.name;
    this.keepCycles = checkKeep(opts.keep ?? DEFAULT_KEEP);
    this.currentCycle = 0;
    this.pending = emptyValues(opts.nowS);
    this.cycleMap = new Map([[0, emptyValues(opts.nowS)]]);
    this.all = emptyValues(opts.nowS);
  }

  /** k: how many cycles are kept. */
  get keep(): number {
    return this.keepCycles;
  }

  set keep(k: number) {
    this.keepCycles = checkKeep(k);
    this.dropOld();
  }

  /** The current cycle's number. */
  get current(): number {
    return this.currentCycle;
  }

  /** What was recorded since the last merge. */
  get delta(): Readonly<Values> {
    return this.pending;
  }

  /** cOmPIEtE: every cycle ever, summed. */
  get complete(): Readonly<Values> {
    return this.all;
  }

  /** The kept cycles' numbers, oldest first. */
  cycleNumbers(): number[] {
    return [...this.cycleMap.keys()].sort((a, b) => a - b);
  }

  cycle(n: number): Readonly<Values> | undefined {
    return this.cycleMap.get(n);
  }

  /** The cycle shown as "prev" (see the file header), if any. */
  previousCycle(): { number: number; values: Readonly<Values> } | undefined {
    const below = this.cycleNumbers().filter((n) => n < this.currentCycle);
    const n = below.at(-1);
    if (n === undefined) return undefined;
    const values = this.cycleMap.get(n)!;
    return values.merges > 0 ? { number: n, values } : undefined;
  }

  private check(name: string, ...kinds: Kind[]): void {
    const k = kindOf(this.schema, name);
    if (k === undefined || !kinds.includes(k)) {
      throw new TypeError(`${name} is not a ${kinds.join(' or ')} attribute of the ${this.schema} (MS-FSCADM 2.2.4.8–2.2.4.10)`);
    }
  }

  /** One observation of a continuous attribute (a document's size, one more URI processed: 1). */
  record(name: AttrOf<S, 'continuous'>, value: number): void {
    this.check(name, 'continuous');
    observeContinuous(this.pending, name, value);
  }

  /** The new value of a discrete or multidiscrete attribute. */
  set(name: AttrOf<S, 'discrete'> | AttrOf<S, 'multidiscrete'>, value: number | string): void {
    this.check(name, 'discrete', 'multidiscrete');
    if (TEXT_ATTRS.has(name) !== (typeof value === 'string')) throw new TypeError(`${name} takes a ${TEXT_ATTRS.has(name) ? 'string' : 'number'}`);
    if (name === 'Status' && !isStatusCode(value)) throw new RangeError(`MS-FSCADM 2.2.3.3: ${value} is not a collection status code`);
    observeDiscrete(this.pending, name, value);
  }

  /** n more occurrences of `bucket` in a histogram (one update). */
  count(name: AttrOf<S, 'histogram'>, bucket: string, n = 1): void {
    this.check(name, 'histogram');
    countInto(this.pending, name, bucket, n, 1);
  }

  /** The new rows of a multidimension attribute (replacing the old ones). */
  setRows(name: AttrOf<S, 'multidimension'>, rows: Readonly<Record<string, readonly number[]>>): void {
    this.check(name, 'multidimension');
    setRowsInto(this.pending, name, rows);
  }

  /** Adds a prepared delta (e.g. from `deltaFromCounters`) to the pending delta. */
  absorb(values: Values): void {
    for (const name of [...Object.keys(values.scalar), ...Object.keys(values.histogram), ...Object.keys(values.multidimension)]) {
      if (kindOf(this.schema, name) === undefined) throw new TypeError(`${name} is not an attribute of the ${this.schema}`);
    }
    mergeValues(this.schema, this.pending, values);
  }

  /**
   * Adds the growth of the engine's cumulative counters since the last call
   * (the snapshot is kept, and persisted with the statistics) to the delta.
   * Absorb before `newCycle`, so a cycle's tail is not counted in the next.
   */
  absorbCounters(snapshot: CounterSnapshot, state?: CollectionState): void {
    if (this.schema === 'globalschema') throw new TypeError('the global schema has no site counters');
    this.absorb(deltaFromCounters(this.schema as 'siteschema' | 'collectionschema', this.baseline, snapshot, state));
    this.baseline = structuredClone({ totals: snapshot.totals, ...(snapshot.pp !== undefined ? { pp: snapshot.pp } : {}) });
  }

  /**
   * Content submissions and state while no crawl reports site counters (a
   * reprocess between cycles): the site counters count as unchanged.
   */
  absorbFeeding(pp: CounterSnapshot['pp'], state?: CollectionState): void {
    this.absorbCounters({ totals: this.baseline?.totals ?? emptyStats(), ...(pp !== undefined ? { pp } : {}) }, state);
  }

  /** The content-submission counters last absorbed (persisted): where a restarted feeder counts on from. */
  get lastPP(): CounterSnapshot['pp'] {
    return this.baseline?.pp;
  }

  /**
   * 2.2.4.4: adds the delta to the current cycle and cOmPIEtE, and starts an
   * empty delta. `into` 'previous': to the cycle before the current one
   * instead (the one `previousCycle` shows), when it is kept: what a
   * finished refresh cycle fetches after it was reopened (AddURIs between
   * cycles) belongs to that cycle, not to the next.
   */
  mergeDelta(nowS: number, into: 'current' | 'previous' = 'current'): void {
    const previous = into === 'previous' ? this.cycleNumbers().filter((n) => n < this.currentCycle).at(-1) : undefined;
    const cycle = this.cycleMap.get(previous ?? this.currentCycle)!;
    for (const into of [cycle, this.all]) {
      mergeValues(this.schema, into, this.pending);
      into.stopTs = nowS;
      into.merges++;
    }
    this.pending = emptyValues(nowS);
  }

  /** Merges the delta, then opens cycle `number` (default current + 1) and drops cycles beyond k. */
  newCycle(nowS: number, number = this.currentCycle + 1): void {
    if (!Number.isInteger(number) || number <= this.currentCycle) {
      throw new RangeError(`MS-FSCADM 2.2.4.5: cycle numbers increase; ${number} does not follow ${this.currentCycle}`);
    }
    this.mergeDelta(nowS);
    this.cycleMap.set(number, carryOver(this.schema, this.cycleMap.get(this.currentCycle)!, nowS));
    this.currentCycle = number;
    this.dropOld();
  }

  private dropOld(): void {
    const numbers = this.cycleNumbers();
    for (const n of numbers.slice(0, Math.max(0, numbers.length - this.keepCycles))) this.cycleMap.delete(n);
  }

  toJSON(): StatisticsJson {
    return {
      version: 1,
      schema: this.schema,
      name: this.name,
      keep: this.keepCycles,
      current: this.currentCycle,
      delta: this.pending,
      cycles: Object.fromEntries(this.cycleNumbers().map((n) => [String(n), this.cycleMap.get(n)!])),
      complete: this.all,
      ...(this.baseline !== undefined ? { baseline: this.baseline } : {}),
    };
  }

  /** Reads what `toJSON` wrote (after JSON.stringify/parse). Global scopes come back as `GlobalStatistics`. */
  static fromJSON(json: unknown): Statistics {
    const j = parseJson(json);
    const stats = j.schema === 'globalschema'
      ? new GlobalStatistics({ name: j.name, nowS: j.complete.startTs, keep: j.keep })
      : new Statistics({ schema: j.schema, name: j.name, nowS: j.complete.startTs, keep: j.keep });
    stats.restore(j);
    return stats;
  }

  private restore(j: StatisticsJson): void {
    this.currentCycle = j.current;
    this.pending = cloneValues(j.delta);
    this.cycleMap.clear();
    for (const [n, v] of Object.entries(j.cycles)) this.cycleMap.set(Number(n), cloneValues(v));
    this.all = cloneValues(j.complete);
    this.baseline = j.baseline !== undefined ? structuredClone(j.baseline) : undefined;
  }
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function parseValues(x: unknown, where: string): Values {
  const bad = (why: string): never => {
    throw new TypeError(`statistics JSON: ${where}: ${why}`);
  };
  if (!isObject(x)) return bad('not an object');
  if (typeof x.startTs !== 'number') bad('startTs is not a number');
  if (x.stopTs !== undefined && typeof x.stopTs !== 'number') bad('stopTs is not a number');
  if (typeof x.merges !== 'number') bad('merges is not a number');
  if (!isObject(x.scalar) || !isObject(x.histogram) || !isObject(x.multidimension)) bad('scalar, histogram or multidimension is missing');
  for (const [k, s] of Object.entries(x.scalar as object)) {
    if (!Array.isArray(s) || s.length !== 4 || typeof s[3] !== 'number') bad(`${k} is not [cur, min, max, updates]`);
  }
  for (const [k, h] of Object.entries({ ...(x.histogram as object), ...(x.multidimension as object) })) {
    if (!Array.isArray(h) || h.length !== 2 || !isObject(h[0]) || typeof h[1] !== 'number') bad(`${k} is not [dictionary, updates]`);
  }
  return cloneValues(x as unknown as Values);
}

function parseJson(json: unknown): StatisticsJson {
  const bad = (why: string): never => {
    throw new TypeError(`statistics JSON: ${why}`);
  };
  if (!isObject(json)) return bad('not an object');
  if (json.version !== 1) bad(`version ${String(json.version)} is not 1`);
  if (typeof json.schema !== 'string' || !Object.hasOwn(SCHEMAS, json.schema)) bad(`unknown schema ${String(json.schema)}`);
  if (typeof json.name !== 'string') bad('name is not a string');
  if (typeof json.keep !== 'number' || typeof json.current !== 'number') bad('keep or current is not a number');
  if (!isObject(json.cycles) || !Object.hasOwn(json.cycles, String(json.current))) bad('the current cycle is missing');
  const cycles: Record<string, Values> = {};
  for (const [n, v] of Object.entries(json.cycles as object)) {
    if (!/^(0|[1-9]\d*)$/.test(n)) bad(`cycle key ${n} is not a cycle number`);
    cycles[n] = parseValues(v, `cycle ${n}`);
  }
  if (json.baseline !== undefined && (!isObject(json.baseline) || !isObject(json.baseline.totals))) bad('baseline has no totals');
  return {
    version: 1,
    schema: json.schema as SchemaName,
    name: json.name as string,
    keep: json.keep as number,
    current: json.current as number,
    delta: parseValues(json.delta, 'delta'),
    cycles,
    complete: parseValues(json.complete, 'cOmPIEtE'),
    ...(json.baseline !== undefined ? { baseline: json.baseline as unknown as CounterSnapshot } : {}),
  };
}

// ─── Global DNS statistics (2.2.4.8) ────────────────────────────────────────

/** One name resolution as the resolver saw it. */
export interface DnsLookup {
  /** An answer came back (NOERROR). */
  readonly ok: boolean;
  /** The response's RCODE (RFC 1035 4.1.1), when a response came back. */
  readonly rcode?: number;
  /** No response before the timeout. */
  readonly timedOut: boolean;
  /** Bytes sent to DNS servers, retries included. */
  readonly bytesOut: number;
  /** Bytes received from DNS servers. */
  readonly bytesIn: number;
  /** Requests sent again after the first (counted in DNSRequests too). */
  readonly retries?: number;
}

/**
 * What a failed Node lookup (`err.code`) says about the DNS response: the
 * c-ares codes name the RCODE (ENOTFOUND = NXDOMAIN = 3, ESERVFAIL = 2, …);
 * other codes (ECONNREFUSED, EAI_AGAIN, …) mean no response is known.
 */
export function dnsErrorOutcome(code: string | undefined): { rcode?: number; timedOut: boolean } {
  switch (code) {
    case 'ETIMEOUT':
    case 'ETIMEDOUT':
      return { timedOut: true };
    case 'ENODATA':
      return { rcode: 0, timedOut: false };
    case 'EFORMERR':
      return { rcode: 1, timedOut: false };
    case 'ESERVFAIL':
      return { rcode: 2, timedOut: false };
    case 'ENOTFOUND':
      return { rcode: 3, timedOut: false };
    case 'ENOTIMP':
      return { rcode: 4, timedOut: false };
    case 'EREFUSED':
      return { rcode: 5, timedOut: false };
    default:
      return { timedOut: false };
  }
}

/** The global scope: Statistics of the global schema, plus the resolver's recorder. */
export class GlobalStatistics extends Statistics<'globalschema'> {
  constructor(opts: Omit<StatisticsOptions<'globalschema'>, 'schema' | 'name'> & { readonly name?: string }) {
    super({ schema: 'globalschema', name: opts.name ?? 'global', nowS: opts.nowS, ...(opts.keep !== undefined ? { keep: opts.keep } : {}) });
  }

  static override fromJSON(json: unknown): GlobalStatistics {
    const s = Statistics.fromJSON(json);
    if (!(s instanceof GlobalStatistics)) throw new TypeError(`statistics JSON: ${s.schema} is not the global schema`);
    return s;
  }

  /** Records one resolution: requests, retries, a response and its RCODE, or a timeout, and the bytes. */
  recordDnsLookup(l: DnsLookup): void {
    const retries = Math.max(0, Math.trunc(l.retries ?? 0));
    this.record('DNSRequests', 1 + retries);
    if (retries > 0) this.record('DNSRetries', retries);
    if (l.timedOut) {
      this.record('DNSTimeout', 1);
    } else if (l.ok || l.rcode !== undefined) {
      this.record('DNSResponses', 1);
      const rcode = l.rcode ?? 0;
      // RFC 1035 4.1.1: RCODE is a 4-bit field.
      if (Number.isInteger(rcode) && rcode >= 0 && rcode <= 15) this.count('DNSResponse', String(rcode));
    }
    if (l.bytesOut > 0) this.record('DNSWrite', l.bytesOut);
    if (l.bytesIn > 0) this.record('DNSRead', l.bytesIn);
  }

  /** The configured limit on DNS requests per second (0: none). */
  setDnsRateLimit(perS: number): void {
    this.set('DNSRateLimit', perS);
  }
}

// ─── Encoders ───────────────────────────────────────────────────────────────

function scalarOf(v: Readonly<Values>, name: string): Scalar {
  const s = v.scalar[name];
  if (s !== undefined) return s;
  const init = TEXT_ATTRS.has(name) ? '' : (INITIAL[name] ?? 0);
  return [init, init, init, 0];
}

function numberOf(v: Readonly<Values>, name: string): number {
  const x = scalarOf(v, name)[0];
  return typeof x === 'number' ? x : 0;
}

function isSet(v: Readonly<Values>, name: string): boolean {
  return v.scalar[name] !== undefined;
}

function scalarValue(x: number | string): RpcValue {
  return typeof x === 'string' ? x : num(x);
}

/** 2.2.4.7: one scope's Values as a schema dictionary. */
export function encodeSchema(schema: SchemaName, name: string, v: Readonly<Values>, stopTs: number | undefined = v.stopTs): RpcStruct {
  const out: RpcStruct = { __schemaname__: schema, __startts__: dbl(v.startTs) };
  if (stopTs !== undefined) out.__stoptts__ = dbl(stopTs);
  out.name = name;
  for (const kind of KINDS) {
    const attrs = SCHEMAS[schema][kind] as readonly string[];
    if (attrs.length === 0) continue;
    out[kind] = attrs.map((a): RpcValue => {
      if (kind === 'histogram') {
        const [counts, n] = v.histogram[a] ?? [{}, 0];
        return [a, [Object.fromEntries(Object.entries(counts).map(([b, c]) => [b, num(c)])), 'None', 'None', num(n)]];
      }
      if (kind === 'multidimension') {
        const [rows, n] = v.multidimension[a] ?? [{}, 0];
        return [a, [Object.fromEntries(Object.entries(rows).map(([k, row]) => [k, row.map(num)])), 'None', 'None', num(n)]];
      }
      return [a, scalarOf(v, a).map(scalarValue)];
    });
  }
  return out;
}

/** 2.2.4.3: [delta, {"0": cycle, …, "cOmPIEtE": all}]; the delta runs until now. */
export function encodeTuple(stats: Statistics, nowS: number): RpcValue[] {
  const cycles: RpcStruct = {};
  for (const n of stats.cycleNumbers()) cycles[String(n)] = encodeSchema(stats.schema, stats.name, stats.cycle(n)!);
  cycles.cOmPIEtE = encodeSchema(stats.schema, stats.name, stats.complete);
  return [encodeSchema(stats.schema, stats.name, stats.delta, nowS), cycles];
}

/** A collection (or site) with the configuration the protocol client computes progress from. */
export interface ScopeView<S extends SchemaName = SchemaName> {
  readonly stats: Statistics<S>;
  /** MS-FSCCFG refresh, in minutes. */
  readonly refreshMin: number;
  readonly refreshMode: RefreshMode;
}

function dspecEntry(c: ScopeView): RpcStruct {
  return { refresh: String(Math.trunc(c.refreshMin)), refresh_mode: String(REFRESH_MODE_CODES[c.refreshMode]) };
}

function checkName(name: string): void {
  if (name === 'dspec' || name === 'global') {
    throw new RangeError(`MS-FSCADM 2.2.4.1: a scope named "${name}" cannot be told apart from the "${name}" key`);
  }
}

/** 2.2.10.5 CollectionGetStatistics: {dspec, global, <collection>: tuple, …}. */
export function encodeStatisticsDictionary(global: GlobalStatistics, collections: readonly ScopeView<'collectionschema'>[], nowS: number): RpcStruct {
  const dspec: RpcStruct = {};
  const out: RpcStruct = { dspec, global: encodeTuple(global, nowS) };
  for (const c of collections) {
    checkName(c.stats.name);
    dspec[c.stats.name] = dspecEntry(c);
    out[c.stats.name] = encodeTuple(c.stats, nowS);
  }
  return out;
}

/** 2.2.10.4 CollectionGetSiteStatistics: as 2.2.10.5 with the site for the collection and no "global". */
export function encodeSiteStatisticsDictionary(site: ScopeView<'siteschema'>, nowS: number): RpcStruct {
  checkName(site.stats.name);
  return { dspec: { [site.stats.name]: dspecEntry(site) }, [site.stats.name]: encodeTuple(site.stats, nowS) };
}

function rate(total: number, fromS: number, toS: number | undefined): number {
  const span = (toS ?? fromS) - fromS;
  return span > 0 ? total / span : 0;
}

function histogramDoubles(v: Readonly<Values>, name: string): RpcStruct {
  const out: RpcStruct = {};
  for (const [b, c] of Object.entries(v.histogram[name]?.[0] ?? {})) out[b] = dbl(c);
  return out;
}

interface FlattenContext {
  readonly cycleNumber: number;
  readonly nowS: number;
  /** When the collection was added (used when Uptime was never set). */
  readonly uptimeS: number;
  readonly progress: [number, string];
}

/** 2.2.5 (plus the §4.3 extras): a collection's cycle or cOmPIEtE; {} when nothing was merged. */
function flattenCollection(v: Readonly<Values>, ctx: FlattenContext): RpcStruct {
  if (v.merges === 0) return {};
  const c = (name: string): XmlRpcDouble => dbl(numberOf(v, name));
  const docSize = scalarOf(v, 'DocSize');
  const dlTime = scalarOf(v, 'DLTime');
  const docs = docSize[3];
  const dls = dlTime[3];
  const stop = v.stopTs ?? v.startTs;
  return {
    ActiveSites: int(numberOf(v, 'ActiveSites')),
    Processed: c('Processed'),
    Downloaded: c('Downloaded'),
    Modified: c('Modified'),
    Stored: c('Stored'),
    Deleted: c('Deleted'),
    ReadNet: c('ReadNet'),
    WriteNet: c('WriteNet'),
    DocSize: c('DocSize'),
    DocSizeAvg: dbl(docs > 0 ? Math.floor((docSize[0] as number) / docs) : 0),
    DocSizeMax: dbl(docs > 0 ? (docSize[2] as number) : 0),
    Retries: c('Retries'),
    NodeSchedulerFwd: c('NodeSchedulerFwd'),
    LocalFwd: c('LocalFwd'),
    Local: c('Local'),
    Epoch: int(isSet(v, 'Epoch') ? numberOf(v, 'Epoch') : ctx.cycleNumber),
    LastRefresh: int(isSet(v, 'LastRefresh') ? numberOf(v, 'LastRefresh') : v.startTs),
    Feeding: int(numberOf(v, 'Feeding')),
    CrawlMode: String(scalarOf(v, 'CrawlMode')[0]),
    MimeType: histogramDoubles(v, 'MimeType'),
    HTTPResponse: histogramDoubles(v, 'HTTPResponse'),
    Uptime: dbl(isSet(v, 'Uptime') ? numberOf(v, 'Uptime') : ctx.uptimeS),
    DLTime: c('DLTime'),
    DLTimeAvg: dbl(dls > 0 ? (dlTime[0] as number) / dls : 0),
    DLTimeMax: dbl(dls > 0 ? (dlTime[2] as number) : 0),
    Status: statusString(numberOf(v, 'Status')),
    URISkip: histogramDoubles(v, 'URISkip'),
    DocSkip: histogramDoubles(v, 'DocSkip'),
    DocumentStore: int(numberOf(v, 'Stored') - numberOf(v, 'Modified') - numberOf(v, 'Deleted')),
    Progress: [ctx.progress[0], ctx.progress[1]],
    FirstUpdate: dbl(v.startTs),
    StatUpdate: c('CrawlEnded'),
    DocRate: dbl(rate(numberOf(v, 'Downloaded'), v.startTs, stop)),
    DataRateIn: dbl(rate(numberOf(v, 'ReadNet'), v.startTs, stop)),
    DataRateOut: dbl(rate(numberOf(v, 'WriteNet'), v.startTs, stop)),
    PPFailed: c('PPFailed'),
    PPSucceeded: c('PPSucceeded'),
    PPFed: c('PPFed'),
    PPDeleted: c('PPDeleted'),
    PPAdded: c('PPAdded'),
    PPModified: c('PPModified'),
    PPURLsChange: c('PPURLsChange'),
    PPChecksums: c('PPChecksums'),
    // In §4.3 but not in the 2.2.5 table:
    Unchanged: c('Unchanged'),
    PPPartialUpdate: c('PPPartialUpdate'),
    LastUpdate: dbl(stop),
    StatUpdated: `${Math.max(0, ctx.nowS - stop).toFixed(1)}s`,
  };
}

/** 2.2.6 (as 2.2.4.8 and §4.3 name the fields, see the header) over [fromS, toS]. */
function flattenGlobal(v: Readonly<Values>, fromS: number, toS: number | undefined, uptimeS: number): RpcStruct {
  const c = (name: string): XmlRpcDouble => dbl(numberOf(v, name));
  return {
    Uptime: dbl(isSet(v, 'Uptime') ? numberOf(v, 'Uptime') : uptimeS),
    DNSWrite: c('DNSWrite'),
    DNSRead: c('DNSRead'),
    DNSRequests: c('DNSRequests'),
    DNSRequest: c('DNSRequests'),
    DNSResponses: c('DNSResponses'),
    DNSResponse: histogramDoubles(v, 'DNSResponse'),
    DNSRetries: c('DNSRetries'),
    DNSTimeout: c('DNSTimeout'),
    DNSRateLimit: c('DNSRateLimit'),
    DNSRate: dbl(rate(numberOf(v, 'DNSRequests'), fromS, toS)),
    DNSDataRateIn: dbl(rate(numberOf(v, 'DNSRead'), fromS, toS)),
    DNSDataRateOut: dbl(rate(numberOf(v, 'DNSWrite'), fromS, toS)),
  };
}

/**
 * The delta as the flattened structures show it: its own observations, and
 * for discrete attributes it has not set (a merge resets them, 2.2.4.4) the
 * latest merged value, so the delta shows DNSRateLimit 10.0 as §4.3 does.
 */
function deltaView(stats: Statistics): Values {
  const v = carryOver(stats.schema, stats.complete, stats.delta.startTs);
  mergeValues(stats.schema, v, stats.delta);
  return v;
}

function globalDelta(global: GlobalStatistics, nowS: number): RpcStruct {
  return flattenGlobal(deltaView(global), global.delta.startTs, nowS, global.complete.startTs);
}

function globalComplete(global: GlobalStatistics): RpcStruct {
  const v = global.complete;
  return v.merges === 0 ? {} : flattenGlobal(v, v.startTs, v.stopTs, v.startTs);
}

/** 2.2.10.7 GetGlobalStatistics: [1, {delta, complete}]. */
export function encodeGlobalStatistics(global: GlobalStatistics, nowS: number): RpcValue[] {
  return [1, { delta: globalDelta(global, nowS), complete: globalComplete(global) }];
}

/**
 * 2.2.10.6 CollectionGetStatistics2: [1, {cur, prev?, complete, delta}], each
 * a flattened structure (2.2.5); "complete" also carries the global fields
 * and "delta" the global delta with the collection's rates, as in §4.3.
 */
export function encodeCollectionStatistics2(collection: ScopeView<'collectionschema'>, global: GlobalStatistics, nowS: number): RpcValue[] {
  const s = collection.stats;
  const current = s.cycle(s.current)!;
  const ctx = {
    nowS,
    uptimeS: s.complete.startTs,
    progress: progress({ cycleStartS: current.startTs, nowS, refreshMin: collection.refreshMin, refreshMode: collection.refreshMode }),
  };
  const out: RpcStruct = { cur: flattenCollection(current, { ...ctx, cycleNumber: s.current }) };
  const prev = s.previousCycle();
  if (prev !== undefined) out.prev = flattenCollection(prev.values, { ...ctx, cycleNumber: prev.number });
  const complete = flattenCollection(s.complete, { ...ctx, cycleNumber: s.current });
  if (Object.keys(complete).length > 0) {
    const { Uptime: _globalUptime, ...g } = globalComplete(global);
    out.complete = { ...g, ...complete };
  } else {
    out.complete = {};
  }
  const { Uptime: _uptime, ...gd } = globalDelta(global, nowS);
  const d = s.delta;
  out.delta = {
    ...gd,
    DocRate: dbl(rate(numberOf(d, 'Downloaded'), d.startTs, nowS)),
    DataRateIn: dbl(rate(numberOf(d, 'ReadNet'), d.startTs, nowS)),
    DataRateOut: dbl(rate(numberOf(d, 'WriteNet'), d.startTs, nowS)),
  };
  return [1, out];
}
