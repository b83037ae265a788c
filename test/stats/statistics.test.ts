// The statistics model and its MS-FSCADM encodings. The key lists and types
// come from the spec text itself (the 2.2.4.8–2.2.4.10 schema tables, the
// 2.2.5 and 2.2.6 flattened tables, and the §4.3 example response), so a key
// missing from the encoders, or a wrong int/double, fails here.
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { XmlRpcDouble, encodeMethodResponse, isStruct, parseMethodResponse } from '../../src/admin/xmlrpc.ts';
import { SiteStats } from '../../src/stats/site-stats.ts';
import {
  DEFAULT_KEEP,
  GlobalStatistics,
  KINDS,
  SCHEMAS,
  Statistics,
  crawlModeString,
  cycleNumberOfEpoch,
  deltaFromCounters,
  dnsErrorOutcome,
  encodeCollectionStatistics2,
  encodeGlobalStatistics,
  encodeSchema,
  encodeSiteStatisticsDictionary,
  encodeStatisticsDictionary,
  encodeTuple,
  formatDuration,
  progress,
  statusString,
  sumSiteCounters,
} from '../../src/stats/statistics.ts';
import type { Kind, RpcStruct, RpcValue, SchemaName } from '../../src/stats/statistics.ts';
import { FIXTURES } from '../helpers.ts';

const spec = readFileSync(join(FIXTURES, 'specs', 'MS-FSCADM-crawler-administration-and-status-protocol.md'), 'utf8');

/** The spec text from the heading of `from` to the next heading of `to`. */
function section(from: string, to: string): string {
  const heading = (n: string): RegExp => new RegExp(`^#+ (?:\\*\\*)?${n.replace(/\./g, '\\.')} `, 'm');
  const start = spec.search(heading(from));
  const end = spec.search(heading(to));
  assert.ok(start >= 0 && end > start, `sections ${from}..${to} not found`);
  return spec.slice(start, end);
}

// ─── Reading the spec's tables ──────────────────────────────────────────────

type FlatType = 'int' | 'double' | 'string' | 'dictionary' | 'array';

/** "Attribute<TAB><b>type</b><TAB>…" rows of a flattened-structure table. */
function flatTable(text: string): Map<string, FlatType> {
  const rows = new Map<string, FlatType>();
  for (const m of text.matchAll(/^([A-Za-z]+)\t<b>(int|double|string|dictionary|array)<\/b>\t/gm)) rows.set(m[1]!, m[2] as FlatType);
  return rows;
}

const FLAT_COLLECTION = flatTable(section('2.2.5', '2.2.6'));
const FLAT_GLOBAL = flatTable(section('2.2.6', '2.2.7'));

/** "Attribute<TAB>Aggregation Type<TAB>…" rows of a schema table. */
function schemaTable(text: string): Map<string, Kind> {
  const rows = new Map<string, Kind>();
  for (const m of text.matchAll(/^([A-Za-z]+)\t(Continuous|Discrete|Histogram|Multidimension|Multidiscrete)\t/gm)) {
    rows.set(m[1]!, m[2]!.toLowerCase() as Kind);
  }
  return rows;
}

/**
 * 2.2.6 against 2.2.4.8 and §4.3: the table has DNSResponse as a double and
 * DNSResponses as a dictionary; the schema and the example have the RCODE
 * histogram under DNSResponse and the response count under DNSResponses.
 */
const GLOBAL_TABLE_ERRATA: Record<string, FlatType> = { DNSResponse: 'dictionary', DNSResponses: 'double' };

// ─── The XML-RPC types of values ─────────────────────────────────────────────

type Shape = 'int' | 'double' | 'string' | { array: Shape[] } | { struct: Record<string, Shape> };

/** The XML-RPC type of a value at every level (a plain number must be an int32: <int>). */
function shapeOf(x: RpcValue): Shape {
  if (x instanceof XmlRpcDouble) return 'double';
  if (typeof x === 'number') {
    assert.ok(Number.isInteger(x) && Math.abs(x) < 2 ** 31, `${x} is a plain number but not an int32`);
    return 'int';
  }
  if (typeof x === 'string') return 'string';
  if (Array.isArray(x)) return { array: x.map(shapeOf) };
  if (isStruct(x)) return { struct: Object.fromEntries(Object.entries(x).map(([k, v]) => [k, shapeOf(v)])) };
  throw new Error(`unexpected ${String(x)}: statistics use int, double, string, array and struct only`);
}

function flatTypeOf(x: RpcValue | undefined): FlatType | 'missing' | 'other' {
  if (x === undefined) return 'missing';
  const s = shapeOf(x);
  if (s === 'int' || s === 'double' || s === 'string') return s;
  if ('array' in s) return 'array';
  return 'dictionary';
}

function asStruct(x: RpcValue | undefined): RpcStruct {
  assert.ok(isStruct(x), 'not a struct');
  return x;
}

function numberIn(x: RpcValue | undefined): number {
  if (x instanceof XmlRpcDouble) return x.value;
  assert.equal(typeof x, 'number');
  return x as number;
}

function close(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${actual} ≠ ${expected}`);
}

// ─── The §4.3 example ───────────────────────────────────────────────────────

/**
 * The example's response, copied out of the spec. It is split over pages,
 * and two page breaks left stray closing tags in the text; each repair below
 * must match exactly once.
 */
function exampleResponse(): RpcValue {
  const text = section('4.3', '5');
  const response = text.slice(text.indexOf('**Response:**'));
  let xml = [...response.matchAll(/```\n([\s\S]*?)```/g)].map((m) => m[1]!).join('\n').trim();
  const repairs = [
    // After "Progress" in "cur": "</struct></member></struct></value>" and a second "</data></array></value></member>".
    /(<\/data><\/array><\/value>\s*<\/member>)\s*<\/struct>\s*<\/member>\s*<\/struct>\s*<\/value>\s*<\/data><\/array><\/value>\s*<\/member>/g,
    // After "DocSizeAvg" in "complete": "</struct></member></member>".
    /(<name>DocSizeAvg<\/name>\s*<value><double>4071\.0<\/double><\/value>\s*<\/member>)\s*<\/struct>\s*<\/member>\s*<\/member>/g,
  ];
  for (const r of repairs) {
    assert.equal(xml.match(r)?.length, 1, `repair ${r} should match once`);
    xml = xml.replace(r, '$1');
  }
  const r = parseMethodResponse(xml);
  assert.ok('value' in r);
  return r.value;
}

const FIRST_UPDATE = 1234195119.4230039;
const LAST_UPDATE = 1234197855.7882121;
const UPTIME = 1234197854.7414169;

/** The statistics behind §4.3: 40 pages of contoso, fetched through the engine's counters. */
function exampleStatistics(): { collection: Statistics<'collectionschema'>; global: GlobalStatistics; nowS: number } {
  const site = new SiteStats();
  const bigTime = 0.20227789878845215;
  const restTime = (0.30214595794677734 - bigTime) / 39;
  for (let i = 0; i < 40; i++) {
    site.add('Processed');
    site.add('Downloaded');
    site.add('Stored');
    site.download(i === 0 ? bigTime : restTime, i === 0 ? 8460 : i === 1 ? 3960 : 3959);
    site.count('MimeType', 'text/html');
    site.count('HTTPResponse', '200');
  }
  site.count('HTTPResponse', '200');
  site.count('HTTPResponse', '404');
  site.add('ReadNet', 174367);
  site.add('WriteNet', 12790);
  site.add('Local', 320);
  Object.assign(site.data.discrete, { Epoch: 1, LastRefresh: 1234195119, CrawlStarted: 1234195119, LastUri: 'http://contoso.com/' });
  const collection = new Statistics({ schema: 'collectionschema', name: 'contoso', nowS: FIRST_UPDATE });
  collection.absorbCounters(
    { totals: sumSiteCounters([site.data]), pp: { PPAdded: 40 } },
    { uptimeS: UPTIME, activeSites: 0, feeding: true, status: 1, crawlLimit: 'none', ppChecksums: 40 },
  );
  collection.mergeDelta(LAST_UPDATE);
  const global = new GlobalStatistics({ nowS: FIRST_UPDATE });
  global.setDnsRateLimit(10);
  global.mergeDelta(LAST_UPDATE);
  return { collection, global, nowS: LAST_UPDATE + 26.2 };
}

describe('§4.3 CollectionGetStatistics2 example', () => {
  const example = exampleResponse() as RpcValue[];
  const { collection, global, nowS } = exampleStatistics();
  const encoded = encodeCollectionStatistics2({ stats: collection, refreshMin: 1980, refreshMode: 'scratch' }, global, nowS);
  // Ours, through the bytes of the reply: encoded as XML-RPC and read back.
  const reply = parseMethodResponse(encodeMethodResponse(encoded));
  assert.ok('value' in reply);
  const ours = reply.value as RpcValue[];

  /** Keys we return beyond the example's, each named in a 2.2.5 or 2.2.6 table. */
  const EXTRAS: Record<string, string[]> = {
    cur: ['StatUpdate'],
    complete: ['StatUpdate', 'DNSRequest', 'DNSRate', 'DNSDataRateIn', 'DNSDataRateOut'],
    delta: ['DNSRequest'],
  };

  it('is [int, struct] with cur, complete and delta (no prev in cycle 0), as ours', () => {
    assert.equal(example.length, 2);
    assert.equal(example[0], 1);
    assert.deepEqual(Object.keys(asStruct(example[1])).sort(), ['complete', 'cur', 'delta']);
    assert.equal(ours[0], 1);
    assert.deepEqual(Object.keys(asStruct(ours[1])).sort(), ['complete', 'cur', 'delta']);
  });

  for (const part of ['cur', 'complete', 'delta'] as const) {
    it(`"${part}": every key of the example, with the same type at every level`, () => {
      const want = (shapeOf(asStruct(example[1])[part]!) as { struct: Record<string, Shape> }).struct;
      const got = (shapeOf(asStruct(ours[1])[part]!) as { struct: Record<string, Shape> }).struct;
      assert.ok(Object.keys(want).length >= 14, `${part}: the example has ${Object.keys(want).length} keys`);
      for (const [key, shape] of Object.entries(want)) assert.deepEqual(got[key], shape, `${part}.${key}`);
      const extra = Object.keys(got).filter((k) => !(k in want)).sort();
      assert.deepEqual(extra, [...EXTRAS[part]!].sort(), `${part}: keys beyond the example`);
      for (const k of extra) assert.ok(FLAT_COLLECTION.has(k) || FLAT_GLOBAL.has(k), `${k} is in no table`);
    });

    it(`"${part}": the example's numbers`, () => {
      const want = asStruct(asStruct(example[1])[part]);
      const got = asStruct(asStruct(ours[1])[part]);
      let compared = 0;
      for (const [key, value] of Object.entries(want)) {
        if (key === 'StatUpdated' || key === 'Progress' || (typeof value === 'object' && !(value instanceof XmlRpcDouble))) continue;
        if (typeof value === 'string') assert.equal(got[key], value, `${part}.${key}`);
        else close(numberIn(got[key]), numberIn(value), `${part}.${key}`);
        compared++;
      }
      assert.ok(compared >= 13, `${part}: ${compared} values compared`);
      if (part !== 'delta') {
        assert.equal(got.StatUpdated, '26.2s');
        assert.deepEqual(got.HTTPResponse, want.HTTPResponse);
        assert.deepEqual(got.MimeType, want.MimeType);
        const p = got.Progress as RpcValue[];
        assert.equal(p[0], (want.Progress as RpcValue[])[0]);
        assert.match(p[1] as string, /^1 day \d+h \d+m \d+s until scratch refresh$/);
      }
    });
  }
});

// ─── Every key of 2.2.5 and 2.2.6 ───────────────────────────────────────────

describe('flattened structures (2.2.5, 2.2.6)', () => {
  it('the tables read out of the spec have every row', () => {
    assert.equal(FLAT_COLLECTION.size, 43);
    assert.equal(FLAT_GLOBAL.size, 11);
    assert.equal(FLAT_COLLECTION.get('Progress'), 'array');
    assert.equal(FLAT_COLLECTION.get('DocumentStore'), 'int');
  });

  const { collection, global, nowS } = exampleStatistics();
  collection.newCycle(LAST_UPDATE + 10);
  collection.record('Downloaded', 1);
  collection.mergeDelta(LAST_UPDATE + 20);
  const [ok, result] = encodeCollectionStatistics2({ stats: collection, refreshMin: 60, refreshMode: 'adaptive' }, global, nowS);

  for (const part of ['cur', 'prev', 'complete'] as const) {
    it(`CollectionGetStatistics2 "${part}" has every 2.2.5 key with its type`, () => {
      assert.equal(ok, 1);
      const flat = asStruct(asStruct(result)[part]);
      for (const [key, type] of FLAT_COLLECTION) assert.equal(flatTypeOf(flat[key]), type, `${part}.${key}`);
    });
  }

  it('CollectionGetStatistics2 "complete" also has every 2.2.6 key', () => {
    const flat = asStruct(asStruct(result).complete);
    for (const [key, type] of FLAT_GLOBAL) assert.equal(flatTypeOf(flat[key]), GLOBAL_TABLE_ERRATA[key] ?? type, key);
  });

  for (const part of ['delta', 'complete'] as const) {
    it(`GetGlobalStatistics "${part}" has every 2.2.6 key with its type (DNSResponse/DNSResponses as 2.2.4.8 and §4.3)`, () => {
      const [rc, dict] = encodeGlobalStatistics(global, nowS);
      assert.equal(rc, 1);
      assert.deepEqual(Object.keys(asStruct(dict)).sort(), ['complete', 'delta']);
      const flat = asStruct(asStruct(dict)[part]);
      for (const [key, type] of FLAT_GLOBAL) assert.equal(flatTypeOf(flat[key]), GLOBAL_TABLE_ERRATA[key] ?? type, `${part}.${key}`);
      assert.equal(flatTypeOf(flat.DNSRequests), 'double');
    });
  }

  it('Status maps every 2.2.3.3 code to its 2.2.5 string', () => {
    assert.deepEqual([1, 3, 4, 5, 6, 8].map(statusString), ['Crawling', 'Zombie', 'Suspended', 'Disk full', 'Compacting', 'Variable delay suspended']);
    assert.equal(statusString(0), 'Crawling');
    assert.throws(() => statusString(2), RangeError);
    assert.throws(() => statusString(7), RangeError);
    const s = new Statistics({ schema: 'collectionschema', name: 'c', nowS: 0 });
    assert.throws(() => s.set('Status', 7), RangeError);
    s.set('Status', 5);
    s.mergeDelta(1);
    const [, d] = encodeCollectionStatistics2({ stats: s, refreshMin: 1, refreshMode: 'soft' }, new GlobalStatistics({ nowS: 0 }), 1);
    assert.equal(asStruct(asStruct(d).cur).Status, 'Disk full');
  });

  it('CrawlMode strings of 2.2.3.6 (read from the spec)', () => {
    const table = [...section('2.2.3.6', '2.2.4').matchAll(/^(Refreshing\(limit=(\w+)\))\t/gm)];
    assert.equal(table.length, 3);
    for (const [, text, limit] of table) assert.equal(crawlModeString(limit as 'max_doc'), text);
    assert.equal(crawlModeString(undefined), '');
  });
});

// ─── Schemas (2.2.4.7–2.2.4.10) ─────────────────────────────────────────────

describe('schemas', () => {
  const global = schemaTable(section('2.2.4.8', '2.2.4.9'));
  const site = schemaTable(section('2.2.4.9', '2.2.4.10'));
  const collection = new Map([...site, ...schemaTable(section('2.2.4.10', '2.2.5'))]);
  const tables: Record<SchemaName, Map<string, Kind>> = { globalschema: global, siteschema: site, collectionschema: collection };

  for (const schema of Object.keys(tables) as SchemaName[]) {
    it(`${schema}: the attributes and aggregation types of the spec's table`, () => {
      const ours = new Map(KINDS.flatMap((k) => (SCHEMAS[schema][k] as readonly string[]).map((a) => [a, k] as const)));
      assert.deepEqual(new Map([...ours].sort()), new Map([...tables[schema]].sort()));
    });
  }

  it('the table sizes (so the readers above are not vacuous)', () => {
    assert.deepEqual([global.size, site.size, collection.size], [9, 28, 46]);
  });

  it('a schema dictionary has the 2.2.4.7 keys and every attribute as [name, value]', () => {
    const s = new Statistics({ schema: 'collectionschema', name: 'contoso', nowS: 100 });
    s.record('DocSize', 1000);
    s.record('DocSize', 3000);
    s.count('HTTPResponse', '200', 2);
    s.setRows('StartUriStatus', { 'seeds.txt': [5000, 1200] });
    s.set('CrawlMode', crawlModeString('user'));
    s.record('DLTime', 0.25);
    const d = encodeSchema('collectionschema', 'contoso', s.delta, 160);
    assert.equal(d.__schemaname__, 'collectionschema');
    assert.deepEqual(d.__startts__, new XmlRpcDouble(100));
    assert.deepEqual(d.__stoptts__, new XmlRpcDouble(160));
    assert.equal(d.name, 'contoso');
    for (const kind of KINDS) {
      const pairs = d[kind] as RpcValue[][];
      assert.deepEqual(pairs.map((p) => p[0]), [...SCHEMAS.collectionschema[kind]], kind);
      for (const [, value] of pairs) assert.equal((value as RpcValue[]).length, 4);
    }
    const get = (kind: Kind, name: string): RpcValue => (d[kind] as RpcValue[][]).find((p) => p[0] === name)![1]!;
    assert.deepEqual(get('continuous', 'DocSize'), [4000, 1000, 3000, 2]);
    assert.deepEqual(get('continuous', 'DLTime'), [new XmlRpcDouble(0.25), new XmlRpcDouble(0.25), new XmlRpcDouble(0.25), 1]);
    assert.deepEqual(get('continuous', 'Processed'), [0, 0, 0, 0]);
    assert.deepEqual(get('histogram', 'HTTPResponse'), [{ 200: 2 }, 'None', 'None', 1]);
    assert.deepEqual(get('multidimension', 'StartUriStatus'), [{ 'seeds.txt': [5000, 1200] }, 'None', 'None', 1]);
    assert.deepEqual(get('multidimension', 'FeedingDestinations'), [{}, 'None', 'None', 0]);
    assert.deepEqual(get('discrete', 'CrawlMode'), ['Refreshing(limit=user)', 'Refreshing(limit=user)', 'Refreshing(limit=user)', 1]);
    assert.deepEqual(get('discrete', 'Feeding'), [1, 1, 1, 0]);
    assert.deepEqual(get('multidiscrete', 'SumActiveSites'), [0, 0, 0, 0]);
    const site = encodeSchema('siteschema', 'www.contoso.com', new Statistics({ schema: 'siteschema', name: 'x', nowS: 0 }).delta);
    assert.ok(!('multidiscrete' in site) && !('multidimension' in site) && !('__stoptts__' in site));
  });

  it('large and fractional numbers are doubles, int32 integers are ints', () => {
    const s = new GlobalStatistics({ nowS: 0 });
    s.record('DNSRead', 2 ** 31);
    s.record('DNSWrite', 1.5);
    const d = encodeSchema('globalschema', 'global', s.delta, 1);
    const get = (name: string): RpcValue => (d.continuous as RpcValue[][]).find((p) => p[0] === name)![1]!;
    assert.deepEqual(get('DNSRead'), [new XmlRpcDouble(2 ** 31), new XmlRpcDouble(2 ** 31), new XmlRpcDouble(2 ** 31), 1]);
    assert.deepEqual(get('DNSWrite'), [new XmlRpcDouble(1.5), new XmlRpcDouble(1.5), new XmlRpcDouble(1.5), 1]);
  });

  it('refuses names outside the schema and values of the wrong kind', () => {
    const s = new Statistics({ schema: 'siteschema', name: 'x', nowS: 0 }) as Statistics;
    assert.throws(() => s.record('PPFed' as never, 1), TypeError);
    assert.throws(() => s.record('LastUri' as never, 1), TypeError);
    assert.throws(() => s.set('LastUri', 3), TypeError);
    assert.throws(() => s.set('QueueLength', 'x'), TypeError);
    assert.throws(() => s.record('Processed', Number.NaN), RangeError);
    assert.throws(() => new Statistics({ schema: 'nosuchschema' as SchemaName, name: 'x', nowS: 0 }), TypeError);
  });
});

// ─── Delta, cycles, cOmPIEtE ────────────────────────────────────────────────

describe('delta, cycles and cOmPIEtE (2.2.4.3–2.2.4.5)', () => {
  it('a merge adds the delta to the current cycle and cOmPIEtE and resets it to 0', () => {
    const s = new Statistics({ schema: 'siteschema', name: 'a', nowS: 1000 });
    s.record('Processed', 1);
    s.record('Processed', 1);
    s.count('HTTPResponse', '200');
    assert.deepEqual(s.delta.scalar.Processed, [2, 1, 1, 2]);
    s.mergeDelta(1060);
    assert.deepEqual(Object.keys(s.delta.scalar), []);
    assert.deepEqual(Object.keys(s.delta.histogram), []);
    assert.equal(s.delta.startTs, 1060);
    assert.deepEqual(s.cycle(0)!.scalar.Processed, [2, 1, 1, 2]);
    assert.deepEqual(s.complete.scalar.Processed, [2, 1, 1, 2]);
    assert.equal(s.cycle(0)!.stopTs, 1060);
    assert.equal(s.cycle(0)!.merges, 1);
    // The encoded delta after the merge is all zeros.
    const [delta] = encodeTuple(s, 1070) as [RpcStruct, RpcStruct];
    const processed = (delta.continuous as RpcValue[][]).find((p) => p[0] === 'Processed')![1];
    assert.deepEqual(processed, [0, 0, 0, 0]);
  });

  it('continuous: the sum, the smallest and largest observation, and the observation count', () => {
    const s = new Statistics({ schema: 'siteschema', name: 'a', nowS: 0 });
    for (const x of [500, 120, 9000, 42]) s.record('DocSize', x);
    assert.deepEqual(s.delta.scalar.DocSize, [9662, 42, 9000, 4]);
    s.mergeDelta(10);
    s.record('DocSize', 7);
    s.record('DocSize', 10000);
    s.mergeDelta(20);
    assert.deepEqual(s.cycle(0)!.scalar.DocSize, [9662 + 10007, 7, 10000, 6]);
  });

  it('discrete: the latest value, the range seen, and how often it was set', () => {
    const s = new Statistics({ schema: 'siteschema', name: 'a', nowS: 0 });
    s.set('QueueLength', 30);
    s.set('QueueLength', 5);
    s.mergeDelta(1);
    s.set('QueueLength', 12);
    s.mergeDelta(2);
    assert.deepEqual(s.cycle(0)!.scalar.QueueLength, [12, 5, 30, 3]);
    s.set('LastUri', 'http://b/');
    s.set('LastUri', 'http://a/');
    assert.deepEqual(s.delta.scalar.LastUri, ['http://a/', 'http://a/', 'http://b/', 2]);
  });

  it('histograms add per bucket; multidimension rows are replaced', () => {
    const s = new Statistics({ schema: 'collectionschema', name: 'c', nowS: 0 });
    s.count('HTTPResponse', '200', 3);
    s.count('HTTPResponse', '404');
    s.count('URISkip', '__proto__');
    s.setRows('FeedingDestinations', { a: [1], b: [1] });
    s.mergeDelta(1);
    s.count('HTTPResponse', '200', 2);
    s.count('HTTPResponse', '500');
    s.setRows('FeedingDestinations', { a: [0] });
    s.mergeDelta(2);
    const c = s.cycle(0)!;
    assert.deepEqual({ ...c.histogram.HTTPResponse![0] }, { 200: 5, 404: 1, 500: 1 });
    assert.equal(c.histogram.HTTPResponse![1], 4);
    assert.equal(c.histogram.URISkip![0]['__proto__'], 1);
    assert.deepEqual({ ...c.multidimension.FeedingDestinations![0] }, { a: [0] });
    assert.equal(c.multidimension.FeedingDestinations![1], 2);
  });

  it('keeps k cycles; cOmPIEtE is the sum of all, including the dropped ones', () => {
    const s = new Statistics({ schema: 'siteschema', name: 'a', nowS: 0, keep: 3 });
    for (let cycle = 0; cycle < 6; cycle++) {
      if (cycle > 0) s.newCycle(cycle * 100);
      for (let i = 0; i <= cycle; i++) s.record('Downloaded', 1);
      s.count('MimeType', 'text/html', cycle + 1);
      s.mergeDelta(cycle * 100 + 50);
    }
    assert.deepEqual(s.cycleNumbers(), [3, 4, 5]);
    assert.equal(s.current, 5);
    assert.deepEqual(s.cycle(5)!.scalar.Downloaded, [6, 1, 1, 6]);
    assert.deepEqual(s.complete.scalar.Downloaded, [21, 1, 1, 21]);
    assert.equal(s.complete.histogram.MimeType![0]['text/html'], 21);
    assert.equal(s.complete.startTs, 0);
    assert.equal(s.complete.stopTs, 550);
    const [, cycles] = encodeTuple(s, 600) as [RpcStruct, RpcStruct];
    assert.deepEqual(Object.keys(cycles), ['3', '4', '5', 'cOmPIEtE']);
    s.keep = 1;
    assert.deepEqual(s.cycleNumbers(), [5]);
    assert.equal(s.previousCycle(), undefined);
    assert.throws(() => (s.keep = 0), RangeError);
    assert.throws(() => s.newCycle(700, 5), RangeError);
    assert.equal(DEFAULT_KEEP, 2);
  });

  it('newCycle merges the pending delta into the old cycle and carries the state over', () => {
    const s = new Statistics({ schema: 'collectionschema', name: 'c', nowS: 0 });
    s.set('Feeding', 0);
    s.set('Status', 4);
    s.record('Processed', 1);
    s.newCycle(50);
    assert.deepEqual(s.cycle(0)!.scalar.Processed, [1, 1, 1, 1]);
    assert.equal(s.cycle(0)!.stopTs, 50);
    assert.deepEqual(s.cycle(1)!.scalar.Feeding, [0, 0, 0, 0]);
    assert.deepEqual(s.cycle(1)!.scalar.Status, [4, 4, 4, 0]);
    assert.equal(s.cycle(1)!.scalar.Processed, undefined);
    assert.equal(s.cycle(1)!.startTs, 50);
    assert.equal(s.previousCycle()?.number, 0);
  });

  it('mergeDelta into "previous" adds to the cycle before the current one (a reopened cycle), and to cOmPIEtE', () => {
    const s = new Statistics({ schema: 'collectionschema', name: 'c', nowS: 0 });
    s.record('Processed', 1);
    s.record('Processed', 1);
    s.newCycle(50);
    s.record('Processed', 1);
    s.mergeDelta(60, 'previous');
    assert.deepEqual(s.cycle(0)!.scalar.Processed, [3, 1, 1, 3]);
    assert.equal(s.cycle(0)!.stopTs, 60);
    assert.equal(s.cycle(1)!.scalar.Processed, undefined);
    assert.deepEqual(s.complete.scalar.Processed, [3, 1, 1, 3]);
    assert.equal(s.previousCycle()?.number, 0);
    // With no earlier cycle kept, it is the current one.
    const one = new Statistics({ schema: 'collectionschema', name: 'd', nowS: 0, keep: 1 });
    one.newCycle(10);
    one.record('Processed', 1);
    one.mergeDelta(20, 'previous');
    assert.deepEqual(one.cycle(1)!.scalar.Processed, [1, 1, 1, 1]);
  });

  it('"prev" is the cycle before the current one, and "cur" is {} until something is merged', () => {
    const g = new GlobalStatistics({ nowS: 0 });
    const s = new Statistics({ schema: 'collectionschema', name: 'c', nowS: 0 });
    const view = { stats: s, refreshMin: 10, refreshMode: 'scratch' as const };
    let d = asStruct(encodeCollectionStatistics2(view, g, 1)[1]);
    assert.deepEqual(d.cur, {});
    assert.deepEqual(d.complete, {});
    assert.ok(!('prev' in d));
    s.record('Downloaded', 1);
    s.newCycle(100);
    d = asStruct(encodeCollectionStatistics2(view, g, 101)[1]);
    assert.deepEqual(d.cur, {});
    assert.equal(numberIn(asStruct(d.prev).Downloaded), 1);
    assert.equal(asStruct(d.prev).Epoch, 0);
    s.mergeDelta(110);
    d = asStruct(encodeCollectionStatistics2(view, g, 111)[1]);
    assert.equal(asStruct(d.cur).Epoch, 1);
    assert.equal(numberIn(asStruct(d.cur).Downloaded), 0);
    assert.equal(numberIn(asStruct(d.complete).Downloaded), 1);
  });
});

// ─── Derived values ─────────────────────────────────────────────────────────

describe('derived values (2.2.5)', () => {
  const s = new Statistics({ schema: 'collectionschema', name: 'c', nowS: 1000 });
  for (const [size, time] of [[1000, 0.5], [3001, 1.5], [200, 0.25]] as const) {
    s.record('Downloaded', 1);
    s.record('DocSize', size);
    s.record('DLTime', time);
  }
  for (let i = 0; i < 10; i++) s.record('Stored', 1);
  for (let i = 0; i < 3; i++) s.record('Modified', 1);
  s.record('Deleted', 1);
  s.record('ReadNet', 50_000);
  s.record('WriteNet', 2_000);
  s.mergeDelta(1100);
  s.record('Downloaded', 1);
  s.record('ReadNet', 600);
  const [, d] = encodeCollectionStatistics2({ stats: s, refreshMin: 60, refreshMode: 'scratch' }, new GlobalStatistics({ nowS: 1000 }), 1130);
  const cur = asStruct(asStruct(d).cur);
  const delta = asStruct(asStruct(d).delta);

  it('averages and maxima of DocSize and DLTime', () => {
    assert.deepEqual(cur.DocSize, new XmlRpcDouble(4201));
    assert.deepEqual(cur.DocSizeAvg, new XmlRpcDouble(1400)); // 4201 / 3, in whole bytes
    assert.deepEqual(cur.DocSizeMax, new XmlRpcDouble(3001));
    assert.deepEqual(cur.DLTimeAvg, new XmlRpcDouble(0.75));
    assert.deepEqual(cur.DLTimeMax, new XmlRpcDouble(1.5));
  });

  it('DocumentStore = Stored - Modified - Deleted, an int', () => {
    assert.equal(cur.DocumentStore, 6);
  });

  it('rates over the merged span (FirstUpdate..LastUpdate), and over the delta until now', () => {
    assert.deepEqual(cur.FirstUpdate, new XmlRpcDouble(1000));
    assert.deepEqual(cur.LastUpdate, new XmlRpcDouble(1100));
    assert.deepEqual(cur.DocRate, new XmlRpcDouble(0.03));
    assert.deepEqual(cur.DataRateIn, new XmlRpcDouble(500));
    assert.deepEqual(cur.DataRateOut, new XmlRpcDouble(20));
    assert.equal(cur.StatUpdated, '30.0s');
    close(numberIn(delta.DocRate), 1 / 30, 'delta DocRate');
    close(numberIn(delta.DataRateIn), 20, 'delta DataRateIn');
    assert.deepEqual(delta.DataRateOut, new XmlRpcDouble(0));
  });

  it('Progress: percent of the refresh period gone and the time left', () => {
    assert.deepEqual(cur.Progress, [3, '57m 50s until scratch refresh']);
    assert.deepEqual(progress({ cycleStartS: 0, nowS: 2 * 3600 + 3 * 60, refreshMin: 1440, refreshMode: 'scratch' }), [8, '21h 57m 0s until scratch refresh']);
    assert.deepEqual(progress({ cycleStartS: 0, nowS: 3600, refreshMin: 60 * 30, refreshMode: 'append' }), [3, '1 day 5h 0m 0s until append refresh']);
    assert.deepEqual(progress({ cycleStartS: 0, nowS: 7200 + 125, refreshMin: 60, refreshMode: 'soft' }), [100, 'soft refresh overdue by 1h 2m 5s']);
    assert.deepEqual(progress({ cycleStartS: 0, nowS: 10, refreshMin: 0, refreshMode: 'soft' }), [0, 'no scheduled refresh']);
    assert.equal(formatDuration(42), '42s');
    assert.equal(formatDuration(3 * 86400 + 61), '3 days 0h 1m 1s');
  });
});

// ─── The engine's counters ──────────────────────────────────────────────────

describe('deltas from the engine\'s counters (site-stats.ts)', () => {
  it('a site delta is the growth since the last snapshot', () => {
    const site = new SiteStats();
    site.add('Processed', 3);
    site.add('Downloaded', 2);
    site.download(0.5, 1000);
    site.download(0.25, 3000);
    site.add('ReadNet', 5000);
    site.count('HTTPResponse', '200', 2);
    Object.assign(site.data.discrete, { Epoch: 2, QueueLength: 7, LastUri: 'http://a/x' });
    const first = deltaFromCounters('siteschema', undefined, { totals: structuredClone(site.data) });
    assert.deepEqual(first.scalar.Processed, [3, 1, 1, 3]);
    assert.deepEqual(first.scalar.DocSize, [4000, 2000, 3000, 2]);
    assert.deepEqual(first.scalar.ReadNet, [5000, 5000, 5000, 1]);
    assert.deepEqual(first.scalar.Epoch, [1, 1, 1, 1]);
    assert.deepEqual(first.scalar.QueueLength, [7, 7, 7, 1]);
    assert.deepEqual({ ...first.histogram.HTTPResponse![0] }, { 200: 2 });
    const before = structuredClone(site.data);
    site.add('Processed');
    site.add('Downloaded');
    site.download(0.125, 500);
    site.count('HTTPResponse', '200');
    site.count('HTTPResponse', '301');
    const second = deltaFromCounters('siteschema', { totals: before }, { totals: site.data });
    assert.deepEqual(second.scalar.Processed, [1, 1, 1, 1]);
    assert.deepEqual(second.scalar.DocSize, [500, 500, 500, 1]);
    assert.equal(second.scalar.ReadNet, undefined);
    assert.deepEqual({ ...second.histogram.HTTPResponse![0] }, { 200: 1, 301: 1 });
    assert.throws(() => deltaFromCounters('siteschema', undefined, { totals: site.data, pp: { PPFed: 1 } }), TypeError);
  });

  it('histogram buckets count, merge and survive the JSON round trip, a `__proto__` bucket included', () => {
    const site = new SiteStats();
    for (const code of ['200', '200', '404', '301', '200']) site.count('HTTPResponse', code);
    site.count('MimeType', '__proto__', 2); // a Content-Type is whatever the server sent
    site.count('MimeType', 'text/html');
    site.count('MimeType', '__proto__');
    site.count('URISkip', 'ro', 4);
    assert.deepEqual({ ...site.data.histograms.HTTPResponse }, { 200: 3, 301: 1, 404: 1 });
    assert.equal(Object.getPrototypeOf(site.data.histograms.MimeType), Object.prototype, 'the bucket did not replace the prototype');
    assert.equal(site.data.histograms.MimeType['__proto__'], 3);
    const json = JSON.stringify(site);
    assert.match(json, /"HTTPResponse":\{"200":3,"301":1,"404":1\}/);
    assert.match(json, /"MimeType":\{"__proto__":3,"text\/html":1\}/);
    const back = SiteStats.parse(json);
    assert.deepEqual(JSON.parse(JSON.stringify(back)), JSON.parse(json));
    back.count('HTTPResponse', '200');
    back.count('MimeType', '__proto__');
    assert.equal(back.data.histograms.HTTPResponse['200'], 4);
    assert.equal(back.data.histograms.MimeType['__proto__'], 4);
    const sum = new SiteStats();
    sum.merge(site.data);
    sum.merge(back.data);
    assert.deepEqual({ ...sum.data.histograms.HTTPResponse }, { 200: 7, 301: 2, 404: 2 });
    assert.equal(sum.data.histograms.MimeType['__proto__'], 7);
    assert.deepEqual({ ...sum.data.histograms.URISkip }, { ro: 8 });
  });

  it('absorbCounters keeps the snapshot, so repeated absorbs add only growth', () => {
    const a = new SiteStats();
    const b = new SiteStats();
    const s = new Statistics({ schema: 'collectionschema', name: 'c', nowS: 0 });
    a.add('Stored', 4);
    b.add('Stored', 1);
    s.absorbCounters({ totals: sumSiteCounters([a.data, b.data]), pp: { PPFed: 3 } }, { feedingDestinations: { idx: true }, startUriFiles: { 'u.txt': { sizeBytes: 10, positionBytes: 4 } } });
    s.mergeDelta(10);
    a.add('Stored', 2);
    s.absorbCounters({ totals: sumSiteCounters([a.data, b.data]), pp: { PPFed: 5 } }, { activeSites: 2 });
    s.mergeDelta(20);
    const c = s.cycle(0)!;
    assert.deepEqual(c.scalar.Stored, [7, 1, 1, 7]);
    assert.deepEqual(c.scalar.PPFed, [5, 1, 1, 5]);
    assert.deepEqual(c.scalar.ActiveSites, [2, 2, 2, 1]);
    assert.deepEqual({ ...c.multidimension.FeedingDestinations![0] }, { idx: [1] });
    assert.deepEqual({ ...c.multidimension.StartUriStatus![0] }, { 'u.txt': [10, 4] });
    // The snapshot survives persistence.
    const back = Statistics.fromJSON(JSON.parse(JSON.stringify(s)));
    a.add('Stored', 1);
    back.absorbCounters({ totals: sumSiteCounters([a.data, b.data]), pp: { PPFed: 5 } });
    assert.deepEqual(back.delta.scalar.Stored, [1, 1, 1, 1]);
    assert.throws(() => new GlobalStatistics({ nowS: 0 }).absorbCounters({ totals: a.data }), TypeError);
  });

  it('engine epochs count from 1, protocol cycles from 0', () => {
    assert.deepEqual([0, 1, 2, 7].map(cycleNumberOfEpoch), [0, 0, 1, 6]);
  });
});

// ─── DNS ────────────────────────────────────────────────────────────────────

describe('DNS statistics (2.2.4.8)', () => {
  it('recordDnsLookup counts requests, retries, responses by RCODE, timeouts and bytes', () => {
    const g = new GlobalStatistics({ nowS: 0 });
    g.recordDnsLookup({ ok: true, timedOut: false, bytesOut: 40, bytesIn: 120 });
    g.recordDnsLookup({ ok: false, ...dnsErrorOutcome('ENOTFOUND'), bytesOut: 40, bytesIn: 90 });
    g.recordDnsLookup({ ok: false, ...dnsErrorOutcome('ETIMEOUT'), bytesOut: 80, bytesIn: 0, retries: 1 });
    g.recordDnsLookup({ ok: false, ...dnsErrorOutcome('ECONNREFUSED'), bytesOut: 40, bytesIn: 0 });
    g.setDnsRateLimit(10);
    const d = g.delta;
    assert.deepEqual(d.scalar.DNSRequests, [5, 1, 2, 4]);
    assert.deepEqual(d.scalar.DNSRetries, [1, 1, 1, 1]);
    assert.deepEqual(d.scalar.DNSResponses, [2, 1, 1, 2]);
    assert.deepEqual(d.scalar.DNSTimeout, [1, 1, 1, 1]);
    assert.deepEqual({ ...d.histogram.DNSResponse![0] }, { 0: 1, 3: 1 });
    assert.deepEqual(d.scalar.DNSWrite, [200, 40, 80, 4]);
    assert.deepEqual(d.scalar.DNSRead, [210, 90, 120, 2]);
    const [, out] = encodeGlobalStatistics(g, 10);
    const delta = asStruct(asStruct(out).delta);
    assert.deepEqual(delta.DNSRate, new XmlRpcDouble(0.5));
    assert.deepEqual(delta.DNSDataRateIn, new XmlRpcDouble(21));
    assert.deepEqual(delta.DNSDataRateOut, new XmlRpcDouble(20));
    assert.deepEqual(delta.DNSRateLimit, new XmlRpcDouble(10));
    assert.deepEqual(delta.DNSResponse, { 0: new XmlRpcDouble(1), 3: new XmlRpcDouble(1) });
    assert.deepEqual(asStruct(out).complete, {});
    g.mergeDelta(10);
    const [, after] = encodeGlobalStatistics(g, 15);
    assert.deepEqual(asStruct(asStruct(after).delta).DNSRequests, new XmlRpcDouble(0));
    assert.deepEqual(asStruct(asStruct(after).delta).DNSRateLimit, new XmlRpcDouble(10));
    assert.deepEqual(asStruct(asStruct(after).complete).DNSRequests, new XmlRpcDouble(5));
  });
});

// ─── The dictionaries of 2.2.10.4 and 2.2.10.5 ──────────────────────────────

describe('CollectionGetStatistics and CollectionGetSiteStatistics', () => {
  it('{dspec, global, <collection>: [delta, cycles]} with refresh and refresh_mode as strings', () => {
    const g = new GlobalStatistics({ nowS: 0 });
    const a = new Statistics({ schema: 'collectionschema', name: 'alpha', nowS: 0 });
    const b = new Statistics({ schema: 'collectionschema', name: 'beta', nowS: 0 });
    const d = encodeStatisticsDictionary(g, [
      { stats: a, refreshMin: 1440, refreshMode: 'scratch' },
      { stats: b, refreshMin: 30, refreshMode: 'adaptive' },
    ], 5);
    assert.deepEqual(Object.keys(d).sort(), ['alpha', 'beta', 'dspec', 'global']);
    assert.deepEqual(d.dspec, { alpha: { refresh: '1440', refresh_mode: '4' }, beta: { refresh: '30', refresh_mode: '32' } });
    const [delta, cycles] = d.alpha as [RpcStruct, RpcStruct];
    assert.equal(delta.__schemaname__, 'collectionschema');
    assert.deepEqual(Object.keys(cycles), ['0', 'cOmPIEtE']);
    assert.equal(asStruct((d.global as RpcValue[])[0]).__schemaname__, 'globalschema');
    const named = new Statistics({ schema: 'collectionschema', name: 'global', nowS: 0 });
    assert.throws(() => encodeStatisticsDictionary(g, [{ stats: named, refreshMin: 1, refreshMode: 'soft' }], 0), RangeError);
  });

  it('the site structure has the site for the collection and no "global"', () => {
    const s = new Statistics({ schema: 'siteschema', name: 'www.contoso.com', nowS: 0 });
    const d = encodeSiteStatisticsDictionary({ stats: s, refreshMin: 60, refreshMode: 'prepend' }, 1);
    assert.deepEqual(Object.keys(d).sort(), ['dspec', 'www.contoso.com']);
    assert.deepEqual(d.dspec, { 'www.contoso.com': { refresh: '60', refresh_mode: '2' } });
    assert.equal(asStruct((d['www.contoso.com'] as RpcValue[])[0]).__schemaname__, 'siteschema');
  });
});

// ─── Persistence ────────────────────────────────────────────────────────────

describe('JSON round trip', () => {
  it('restores every cycle, cOmPIEtE, the delta and k, and encodes the same', () => {
    const { collection, global, nowS } = exampleStatistics();
    collection.keep = 3;
    collection.newCycle(LAST_UPDATE + 100);
    collection.count('DocSkip', 'tl');
    collection.mergeDelta(LAST_UPDATE + 150);
    collection.record('Retries', 1);
    global.recordDnsLookup({ ok: true, timedOut: false, bytesOut: 1, bytesIn: 2 });
    const c2 = Statistics.fromJSON(JSON.parse(JSON.stringify(collection))) as Statistics<'collectionschema'>;
    const g2 = GlobalStatistics.fromJSON(JSON.parse(JSON.stringify(global)));
    assert.ok(g2 instanceof GlobalStatistics);
    assert.equal(c2.keep, 3);
    assert.equal(c2.current, 1);
    assert.deepEqual(c2.cycleNumbers(), [0, 1]);
    const view = (stats: Statistics<'collectionschema'>) => ({ stats, refreshMin: 1980, refreshMode: 'scratch' as const });
    assert.deepEqual(encodeCollectionStatistics2(view(c2), g2, nowS + 200), encodeCollectionStatistics2(view(collection), global, nowS + 200));
    assert.deepEqual(encodeStatisticsDictionary(g2, [view(c2)], nowS), encodeStatisticsDictionary(global, [view(collection)], nowS));
    assert.deepEqual(JSON.parse(JSON.stringify(c2)), JSON.parse(JSON.stringify(collection)));
  });

  it('refuses malformed JSON', () => {
    assert.throws(() => Statistics.fromJSON({ version: 2 }), TypeError);
    const good = JSON.parse(JSON.stringify(new Statistics({ schema: 'siteschema', name: 'a', nowS: 0 })));
    assert.throws(() => Statistics.fromJSON({ ...good, cycles: {} }), TypeError);
    assert.throws(() => Statistics.fromJSON({ ...good, delta: { ...good.delta, scalar: { Processed: [1] } } }), TypeError);
    assert.throws(() => GlobalStatistics.fromJSON(good), TypeError);
  });
});
