/**
 * The MS-FSCADM methods (2.2.8–2.2.10), each with its parameter signature.
 * A call with the wrong number or types of parameters, or one that fails,
 * becomes a fault (faultCode 1, 2.2.7); a method that reports its result as
 * a cresult returns [1, text] on success and [0, text] when it could not do
 * what was asked.
 */

import { TrawlError } from '../core/errors.ts';
import { VERSION } from '../core/version.ts';
import { sitesOfHostport, type AddedUris, type CrawlerService, type NotAdded } from '../service/crawler-service.ts';
import { encodeCollectionStatistics2, encodeGlobalStatistics, encodeSiteStatisticsDictionary, encodeStatisticsDictionary } from '../stats/statistics.ts';
import { readUriFile } from './uri-file.ts';
import { MULTINODE_METHODS } from './multinode-methods.ts';
import { VALIDATOR1_METHODS } from './validator1.ts';
import { isStruct, XmlRpcDouble, type XmlRpcStruct, type XmlRpcValue } from './xmlrpc.ts';
import { MAX_LOG_LINES } from '../service/crawl-log.ts';
import { DOCUMENT_SCHEMAS, siteMatcher, type DocumentSchema } from '../service/inspect.ts';

type ParamType = 'string' | 'int' | 'array' | 'struct';

interface MethodDef {
  readonly params: ReadonlyArray<readonly [name: string, type: ParamType]>;
  readonly run: (svc: CrawlerService, args: XmlRpcValue[]) => Promise<XmlRpcValue> | XmlRpcValue;
}

const ok = (text: string): XmlRpcValue[] => [1, text];

function typeOf(v: XmlRpcValue): string {
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'double';
  if (typeof v === 'bigint') return 'i8';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'string';
  if (v instanceof XmlRpcDouble) return 'double';
  if (v instanceof Date) return 'dateTime.iso8601';
  if (v instanceof Uint8Array) return 'base64';
  if (Array.isArray(v)) return 'array';
  return isStruct(v) ? 'struct' : 'unknown';
}

function flag(v: XmlRpcValue, name: string): boolean {
  if (v !== 0 && v !== 1) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `${name} must be 0 or 1, not ${String(v)}`);
  return v === 1;
}

function uriList(v: XmlRpcValue, name: string): string[] {
  const list = v as XmlRpcValue[];
  return list.map((u, i) => {
    if (typeof u !== 'string') throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `${name}[${i}] must be a string, not ${typeOf(u)}`);
    return u;
  });
}

/**
 * AddURIs' cresult (2.2.2.1): 1 unless URIs were refused and none added.
 * URIs the cycle already has are not refused (the text counts them).
 */
function added(r: AddedUris): XmlRpcValue[] {
  const refused = r.refused.length ? `; ${r.refused.length} refused (${r.refused.slice(0, 5).map((x) => `${x.url}: ${x.reason}`).join('; ')}${r.refused.length > 5 ? '; …' : ''})` : '';
  const seen = r.seen.length ? `; ${r.seen.length} already in this cycle` : '';
  return [r.added > 0 || r.refused.length === 0 ? 1 : 0, `${r.added} URIs added${refused}${seen}`];
}

/**
 * trawl.AddURIs / trawl.AddURIFile (trawl extensions): AddURIs' cresult as
 * `result`, and each URI that was not queued with why: `kind` malformed,
 * scope (with `code` and `rule`), crawled, queued or repeated.
 */
function addedDetail(r: AddedUris): XmlRpcValue {
  const entry = (x: NotAdded): XmlRpcValue => ({ uri: x.url, kind: x.kind, reason: x.reason, ...(x.code !== undefined ? { code: x.code } : {}), ...(x.rule !== undefined ? { rule: x.rule } : {}) });
  return { result: added(r), added: r.added, notAdded: [...r.refused, ...r.seen].map(entry) };
}

function absolute(uri: string, name: string): string {
  if (!URL.canParse(uri)) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `${name} must be an absolute URI, not ${JSON.stringify(uri)}`);
  return uri;
}

/** A member of a struct parameter: a string, or a flag (0, 1 or a boolean); undefined when absent. */
function member(o: XmlRpcStruct, name: string, kind: 'string'): string | undefined;
function member(o: XmlRpcStruct, name: string, kind: 'flag'): boolean | undefined;
function member(o: XmlRpcStruct, name: string, kind: 'string' | 'flag'): string | boolean | undefined {
  if (!Object.hasOwn(o, name)) return undefined;
  const v = o[name]!;
  if (kind === 'string') {
    if (typeof v !== 'string') throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `Selection.${name} must be a string, not ${typeOf(v)}`);
    return v;
  }
  if (typeof v === 'boolean') return v;
  return flag(v, `Selection.${name}`);
}

/** A plain JSON value (what the trawl.* methods return) as XML-RPC: absent members left out, whole numbers as int (i8 beyond int32). */
function toXmlRpc(v: unknown): XmlRpcValue {
  if (typeof v === 'number') return Number.isInteger(v) ? v : new XmlRpcDouble(v);
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(toXmlRpc);
  if (v !== null && typeof v === 'object') {
    const out: XmlRpcStruct = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined && x !== null) out[k] = toXmlRpc(x);
    return out;
  }
  throw new Error(`cannot encode ${String(v)}`);
}

const nowS = (): number => Date.now() / 1000;
const C: [string, ParamType] = ['Collection', 'string'];

export const METHODS: Readonly<Record<string, MethodDef>> = {
  // ------------------------------------------------------------ 2.2.8
  GetLogLevel: { params: [], run: (s) => s.logLevelMask },
  SetLogLevel: { params: [['Level', 'int']], run: (s, [l]) => {
    const mask = l as number;
    if (mask < 0 || (mask & ~0xfc) !== 0) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `Level ${mask} is not a mask of the log levels 0x04, 0x08, 0x10, 0x20, 0x40, 0x80 (MS-FSCADM 2.2.3.5)`);
    s.setLogLevel(mask);
    return 1;
  } },
  GetNodeSchedulerXmlRpcPorts: { params: [], run: () => {
    throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', 'this server is not a multinode scheduler (MS-FSCADM 2.2.8.2)');
  } },
  GetSiteManagerNum: { params: [], run: () => 1 },
  IsDistributed: { params: [], run: () => 0 },
  IsMultiNodeScheduler: { params: [], run: () => 0 },

  // ------------------------------------------------------------ 2.2.9
  AddURIs: { params: [C, ['Urgent', 'int'], ['URIs', 'array']], run: async (s, [c, u, list]) => added(await s.addUris(c as string, uriList(list!, 'URIs'), flag(u!, 'Urgent'))) },
  AddURIFile: { params: [C, ['Urgent', 'int'], ['URIFile', 'string']], run: async (s, [c, u, f]) => added(await addUriFile(s, c!, u!, f!)) },
  CollectionAdd: { params: [['ConfigData', 'string'], ['Force', 'int']], run: async (s, [xml, force]) => {
    flag(force!, 'Force'); // a single node ignores Force (2.2.9.3); a node scheduler: multinode-methods.ts
    const names = await s.addCollection(xml as string);
    return ok(`collection${names.length > 1 ? 's' : ''} ${names.join(', ')} added or updated`);
  } },
  CollectionDelete: { params: [C, ['Force', 'int']], run: async (s, [c, force]) => {
    flag(force!, 'Force');
    await s.deleteCollection(c as string);
    return ok(`collection ${c} is being deleted`);
  } },
  CollectionDeleteSite: { params: [C, ['Site', 'string']], run: async (s, [c, site]) => ok(`${await s.deleteSite(c as string, site as string)} documents of ${site} deleted`) },
  CollectionDeleteURIs: { params: [C, ['URIs', 'array']], run: async (s, [c, list]) => ok(`${await s.deleteUris(c as string, uriList(list!, 'URIs'))} documents deleted`) },
  CollectionDeleteURIFile: { params: [C, ['URIFile', 'string']], run: async (s, [c, f]) => ok(`${await s.deleteUris(c as string, await readUriFile(s.uriFileDir, f as string))} documents deleted`) },
  CollectionGetConfigurationXML: { params: [C], run: (s, [c]) => s.configXml(c as string) },
  CollectionGetList: { params: [], run: (s) => s.list() },
  CollectionGetSiteRoutingAddress: { params: [C, ['Site', 'string']], run: (s, [c, site]) => {
    if (!s.has(c as string)) throw new TrawlError('TRAWL_ERR_CONFIG_NOT_FOUND', `no collection named ${JSON.stringify(c)}`);
    sitesOfHostport(site as string); // checks the hostport
    // A single node routes every site to itself.
    return [1, [s.address.host, s.address.port]];
  } },
  CollectionPreemptSite: { params: [C, ['Site', 'string']], run: async (s, [c, site]) => {
    // Stopped now, crawled again later: the site is held for a minute.
    await s.holdSite(c as string, site as string, 60);
    return ok(`crawling of ${site} preempted; it resumes in 60 s`);
  } },
  CollectionQuarantineSite: { params: [C, ['Site', 'string'], ['Time', 'int']], run: async (s, [c, site, t]) => {
    if ((t as number) < 0) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `Time must not be negative, not ${String(t)}`);
    await s.holdSite(c as string, site as string, t as number, true);
    return ok(`${site} quarantined for ${String(t)} s; URIs found for it meanwhile are kept in its quarantine queue`);
  } },
  CollectionRefetch: { params: [C, ['SubCollection', 'string']], run: async (s, [c, sub]) => {
    const n = await s.refetch(c as string, (sub as string) || undefined);
    return ok(sub ? `${n} URIs of sub-collection ${sub} queued again` : 'a new refresh cycle starts now');
  } },
  CollectionRefetchURI: { params: [C, ['URI', 'string'], ['Refeed', 'int'], ['Site', 'int'], ['Immediately', 'int']], run: async (s, [c, uri, refeed, site, now]) => {
    try {
      new URL(uri as string);
    } catch {
      throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `URI must be absolute, not ${JSON.stringify(uri)}`);
    }
    const n = await s.refetchUri(c as string, uri as string, flag(refeed!, 'Refeed'), flag(site!, 'Site'), flag(now!, 'Immediately'));
    return ok(`${n} URIs queued again`);
  } },
  CollectionReprocessSite: { params: [C, ['Destination', 'string'], ['Site', 'string']], run: async (s, [c, d, site]) => {
    const n = await s.reprocess(c as string, d as string, { hostport: site as string });
    return ok(`${n} documents of ${site} queued for ${(d as string) || 'every destination'}`);
  } },
  CollectionReprocessSitePrefix: { params: [C, ['Site', 'string'], ['Prefix', 'string'], ['Destination', 'string']], run: async (s, [c, site, prefix, d]) => {
    const n = await s.reprocess(c as string, d as string, { hostport: site as string, prefix: prefix as string });
    return ok(`${n} documents of ${site} under ${JSON.stringify(prefix)} queued for ${(d as string) || 'every destination'}`);
  } },
  CollectionReprocessURI: { params: [C, ['Destination', 'string'], ['URIs', 'array']], run: async (s, [c, d, list]) => {
    // 2.2.9.17: processing SHOULD go on past URIs that are not valid; they are named in the result.
    const urls: string[] = [];
    const invalid: string[] = [];
    for (const v of list as XmlRpcValue[]) {
      if (typeof v === 'string' && URL.canParse(v) && /^https?:$/.test(new URL(v).protocol)) urls.push(v);
      else invalid.push(typeof v === 'string' ? JSON.stringify(v) : `a ${typeOf(v)}`);
    }
    const n = await s.reprocess(c as string, d as string, { urls });
    return ok(`${n} of ${urls.length} URIs queued for ${(d as string) || 'every destination'}${invalid.length > 0 ? `; not absolute URIs, skipped: ${invalid.slice(0, 10).join(', ')}${invalid.length > 10 ? ', …' : ''}` : ''}`);
  } },
  CollectionResume: { params: [C], run: async (s, [c]) => {
    await s.resume(c as string);
    return ok(`collection ${c} resumed`);
  } },
  CollectionSuspend: { params: [C], run: async (s, [c]) => {
    await s.suspend(c as string);
    return ok(`collection ${c} suspended`);
  } },
  CollectionResumeFeeding: { params: [C, ['Destination', 'string']], run: async (s, [c, d]) => {
    const changed = await s.setFeedingPaused(c as string, d as string, false);
    return ok(`feeding to ${changed.join(', ')} resumed`);
  } },
  CollectionSuspendFeeding: { params: [C, ['Destination', 'string']], run: async (s, [c, d]) => {
    const changed = await s.setFeedingPaused(c as string, d as string, true);
    return ok(`feeding to ${changed.join(', ')} suspended; documents wait in the feed outbox until it resumes`);
  } },

  // ------------------------------------------------------------ 2.2.10
  CollectionDisableRefreshOnly: { params: [C], run: async (s, [c]) => {
    await s.setRefreshOnly(c as string, false);
    return ok('new content is crawled again');
  } },
  CollectionEnableRefreshOnly: { params: [C], run: async (s, [c]) => {
    await s.setRefreshOnly(c as string, true);
    return ok('only previously crawled content is revisited (CrawlMode Refreshing(limit=user))');
  } },
  CollectionGetStatus: { params: [C], run: (s, [c]) => s.status(c as string) },
  CollectionGetSiteStatistics: { params: [C, ['Site', 'string']], run: async (s, [c, site]) => encodeSiteStatisticsDictionary(await s.siteStatistics(c as string, site as string), nowS()) },
  CollectionGetStatistics: { params: [C], run: (s, [c]) => {
    const names = (c as string) === '' ? s.list().filter((n) => s.has(n)) : [c as string];
    return encodeStatisticsDictionary(s.global, names.map((n) => s.collectionStatistics(n)), nowS());
  } },
  CollectionGetStatistics2: { params: [C], run: (s, [c]) => encodeCollectionStatistics2(s.collectionStatistics(c as string), s.global, nowS()) },
  GetGlobalStatistics: { params: [], run: (s) => encodeGlobalStatistics(s.global, nowS()) },

  // ------------------------------------------------------------ trawl's own (not MS-FSCADM)
  // Reading a collection while the daemon holds its store (`trawl inspect`, `trawl export`, `trawl admin log`).
  'trawl.GetDataDirectory': { params: [], run: (s) => s.dataDirectory() },
  'trawl.InspectURI': { params: [C, ['URI', 'string'], ['Body', 'int']], run: async (s, [c, uri, body]) => toXmlRpc(await s.inspectUri(c as string, absolute(uri as string, 'URI'), flag(body!, 'Body'))) },
  'trawl.ExportDocuments': { params: [C, ['Selection', 'struct'], ['Cursor', 'string'], ['Limit', 'int']], run: async (s, [c, sel, cursor, limit]) => {
    const o = sel as XmlRpcStruct;
    const from = cursor === '' ? 0 : Number(cursor);
    if (!Number.isSafeInteger(from) || from < 0) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `Cursor must be "" or a cursor this method returned, not ${JSON.stringify(cursor)}`);
    const n = limit as number;
    if (n < 1 || n > 1000) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `Limit must be 1 to 1000, not ${n}`);
    const site = member(o, 'site', 'string');
    const prefix = member(o, 'prefix', 'string');
    if (site !== undefined && siteMatcher(site) === undefined) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `Selection.site must be host or host:port, not ${JSON.stringify(site)}`);
    const schema = member(o, 'schema', 'string');
    if (schema !== undefined && !(DOCUMENT_SCHEMAS as readonly string[]).includes(schema)) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `Selection.schema must be ${DOCUMENT_SCHEMAS.join(' or ')}, not ${JSON.stringify(schema)}`);
    const page = await s.exportDocuments(c as string, { ...(site !== undefined ? { site } : {}), ...(prefix !== undefined ? { prefix } : {}), all: member(o, 'all', 'flag') ?? false }, from, {
      body: member(o, 'body', 'flag') ?? true, document: member(o, 'document', 'flag') ?? false, raw: member(o, 'raw', 'flag') ?? false, limit: n,
      ...(schema !== undefined ? { schema: schema as DocumentSchema } : {}),
    });
    return { documents: page.items.map(toXmlRpc), cursor: page.next === 0 ? '' : String(page.next) };
  } },
  'trawl.GetLog': { params: [C, ['Lines', 'int'], ['URI', 'string']], run: async (s, [c, lines, uri]) => {
    const n = lines as number;
    if (n < 1 || n > MAX_LOG_LINES) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `Lines must be 1 to ${MAX_LOG_LINES}, not ${n}`);
    return (await s.eventLog(c as string, n, (uri as string) === '' ? undefined : absolute(uri as string, 'URI'))).map((l) => toXmlRpc(l));
  } },

  // ------------------------------------------------------------ introspection
  'system.version': { params: [], run: () => `trawl ${VERSION}` },

  // ------------------------------------------------------------ trawl extensions (docs/admin.md)
  // The standard methods above keep their MS-FSCADM answers; these answer the same calls with detail.
  'trawl.AddURIs': { params: [C, ['Urgent', 'int'], ['URIs', 'array']], run: async (s, [c, u, list]) => addedDetail(await s.addUris(c as string, uriList(list!, 'URIs'), flag(u!, 'Urgent'))) },
  'trawl.AddURIFile': { params: [C, ['Urgent', 'int'], ['URIFile', 'string']], run: async (s, [c, u, f]) => addedDetail(await addUriFile(s, c!, u!, f!)) },
  'trawl.CollectionGetStatus': { params: [C], run: (s, [c]) => {
    const d = s.statusDetail(c as string);
    const y = d.cycle;
    return {
      status: d.status, activity: d.activity, ...(d.waitingFor !== undefined ? { waitingFor: d.waitingFor } : {}), ...(d.nextCycleMs !== undefined ? { nextCycle: new Date(d.nextCycleMs) } : {}),
      // The Elastic crawl lifecycle (cycle-lifecycle.ts): the running or last cycle's ID and status.
      ...(y !== undefined ? { cycleId: y.id, cycleStatus: y.status, cycleEpoch: y.epoch, cycleStarted: new Date(y.startedMs), ...(y.endedMs !== undefined ? { cycleEnded: new Date(y.endedMs) } : {}), ...(y.stoppedBy !== undefined ? { cycleStoppedBy: y.stoppedBy } : {}) } : {}),
      // The last automatic start skipped because a cycle was running (status skipped).
      ...(d.skipped !== undefined ? { skippedCycleId: d.skipped.id, skippedAt: new Date(d.skipped.startedMs), skippedReason: d.skipped.stoppedBy ?? '' } : {}),
    };
  } },
};

async function addUriFile(s: CrawlerService, c: XmlRpcValue, u: XmlRpcValue, f: XmlRpcValue): Promise<AddedUris> {
  const urgent = flag(u, 'Urgent');
  if (!s.has(c as string)) throw new TrawlError('TRAWL_ERR_CONFIG_NOT_FOUND', `no collection named ${JSON.stringify(c)}`);
  return s.addUris(c as string, await readUriFile(s.uriFileDir, f as string), urgent);
}

export const METHOD_NAMES: readonly string[] = [...Object.keys(METHODS), ...Object.keys(VALIDATOR1_METHODS)];

// The dispatch tables are Maps built from the objects' own keys: a method
// name comes from the network, and a lookup on a plain object would find
// "constructor", "toString" or "__proto__" on its prototype.
const TABLE = new Map<string, MethodDef>(Object.entries(METHODS));
const V1_TABLE = new Map(Object.entries(VALIDATOR1_METHODS));

/** Runs one call; throws TrawlError for faults (unknown method, wrong parameters, failures). */
export async function dispatch(svc: CrawlerService, name: string, args: XmlRpcValue[]): Promise<XmlRpcValue> {
  const v1 = V1_TABLE.get(name);
  if (v1) return v1(args);
  const def = TABLE.get(name);
  if (!def) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `unknown method ${JSON.stringify(name)}`);
  const signature = `${name}(${def.params.map(([n, t]) => `${t} ${n}`).join(', ')})`;
  if (args.length !== def.params.length) {
    // MS-FSCADM 2.2.8/2.2.9/2.2.10: all arguments MUST be specified.
    throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `${signature} takes ${def.params.length} parameter${def.params.length === 1 ? '' : 's'}, not ${args.length}`);
  }
  def.params.forEach(([pname, type], i) => {
    const got = typeOf(args[i]!);
    if (got !== type) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `${signature}: ${pname} must be ${type === 'int' ? 'an' : 'a'} ${type}, not ${got}`);
  });
  // A member of a multinode installation answers some methods by its role (multinode-methods.ts).
  const byRole = svc.role !== 'single' ? MULTINODE_METHODS.get(name) : undefined;
  return byRole ? byRole(svc, args, def.run) : def.run(svc, args);
}
