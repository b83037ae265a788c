/**
 * What operators set on a collection (MS-FSCADM), typed, and its codec to
 * the `extra` JSON the crawl store keeps per collection.
 *
 *   extra (stored JSON)                      OperatorState (memory)
 *   { refreshOnly?: boolean,           ◄──►  refreshOnly: boolean
 *     refetch?: boolean,               ◄──►  refetch: boolean
 *     feedingPaused?: {dest: boolean}, ◄──►  feedingPaused: Map<destination, paused>
 *     held?: {site: untilMs},          ◄──►  held: Map<site, untilMs>
 *     quarantine?: {site: untilMs},    ◄──►  quarantine: Map<site, untilMs>
 *     stats?: Statistics JSON,         ◄──►  stats: unknown (Statistics.fromJSON reads it)
 *     …anything else }                 ◄──►  other: kept as it was
 *
 * The stored format is the one earlier versions wrote, so a data directory
 * works with either. Decoding never throws: a value of the wrong type is
 * dropped (the state it held then starts again from its default), so a
 * damaged `extra` cannot keep the daemon from starting. Encoding writes a
 * flag or a map only when it is set, which earlier versions read the same
 * as an explicit `false` or `{}`.
 */

export interface OperatorState {
  /** CollectionEnableRefreshOnly: no new URIs are queued from links. */
  refreshOnly: boolean;
  /** CollectionRefetch: the next cycle starts now, whatever the refresh interval says; cleared when it starts. */
  refetch: boolean;
  /** CollectionSuspendFeeding / CollectionResumeFeeding: destination → paused. A destination not here is as its configuration says. */
  readonly feedingPaused: Map<string, boolean>;
  /** CollectionPreemptSite / CollectionQuarantineSite: site key (`scheme://host:port`) → held until (ms since the epoch). */
  readonly held: Map<string, number>;
  /** CollectionQuarantineSite: site key → quarantined until (ms since the epoch); each is in `held` too. */
  readonly quarantine: Map<string, number>;
  /** The collection's statistics as `Statistics.toJSON()` made them; undefined before the first save. */
  stats: unknown;
  /** Keys this version does not know, written back unchanged. */
  readonly other: Readonly<Record<string, unknown>>;
}

const KNOWN = new Set(['refreshOnly', 'refetch', 'feedingPaused', 'held', 'quarantine', 'stats']);

export function emptyOperatorState(): OperatorState {
  return { refreshOnly: false, refetch: false, feedingPaused: new Map(), held: new Map(), quarantine: new Map(), stats: undefined, other: {} };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function mapOf<T>(v: unknown, ok: (x: unknown) => x is T): Map<string, T> {
  const m = new Map<string, T>();
  if (isRecord(v)) for (const [k, x] of Object.entries(v)) if (ok(x)) m.set(k, x);
  return m;
}

const isBoolean = (x: unknown): x is boolean => typeof x === 'boolean';
const isTime = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** The state stored in a collection row's `extra` (anything, as read from the store). */
export function decodeOperatorState(extra: unknown): OperatorState {
  if (!isRecord(extra)) return emptyOperatorState();
  const other: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(extra)) if (!KNOWN.has(k)) other[k] = v;
  return {
    refreshOnly: extra.refreshOnly === true,
    refetch: extra.refetch === true,
    feedingPaused: mapOf(extra.feedingPaused, isBoolean),
    held: mapOf(extra.held, isTime),
    quarantine: mapOf(extra.quarantine, isTime),
    stats: extra.stats,
    other,
  };
}

/** The `extra` JSON to store for a state. */
export function encodeOperatorState(s: OperatorState): Record<string, unknown> {
  const out: Record<string, unknown> = { ...s.other };
  if (s.refreshOnly) out.refreshOnly = true;
  if (s.refetch) out.refetch = true;
  if (s.feedingPaused.size > 0) out.feedingPaused = Object.fromEntries(s.feedingPaused);
  if (s.held.size > 0) out.held = Object.fromEntries(s.held);
  if (s.quarantine.size > 0) out.quarantine = Object.fromEntries(s.quarantine);
  if (s.stats !== undefined) out.stats = s.stats;
  return out;
}

/** A copy that shares nothing mutable with `s` (the maps are new). */
export function copyOperatorState(s: OperatorState): OperatorState {
  return { ...s, feedingPaused: new Map(s.feedingPaused), held: new Map(s.held), quarantine: new Map(s.quarantine) };
}
