/**
 * The MS-FSCADM methods whose answer depends on the role of the server in
 * a multinode installation (docs/multinode.md): a node scheduler
 * (`trawl serve --node NAME --store postgres://…`) or the multinode
 * scheduler (`--role scheduler`). A single node answers with methods.ts
 * alone; dispatch there consults this table only for a member.
 *
 *   method                             node scheduler            multinode scheduler
 *   IsDistributed                      1                         1
 *   IsMultiNodeScheduler               0                         1
 *   GetSiteManagerNum                  1                         0
 *   GetNodeSchedulerXmlRpcPorts        fault                     [[host, port], …] of the live nodes
 *   SetLogLevel                        its own                   forwarded to every live node first; 0 if one failed
 *   CollectionAdd / CollectionDelete   fault unless Force is 1   the installation's: written, and forwarded with Force 1 to every live node
 *   CollectionGetSiteRoutingAddress    the site's node           the site's node
 *   CollectionGetStatistics(2)         its own                   summed over the live nodes, with SumActiveSites, SumPPChecksums
 *   operator methods (FORWARDED)       its own                   its own on the database, then forwarded to every live node
 *                                                                (so that each node's runner sees the change now)
 */

import { TrawlError } from '../core/errors.ts';
import { sitesOfHostport, type CrawlerService } from '../service/crawler-service.ts';
import type { Member } from '../store/postgres/installation.ts';
import { encodeMethodCall, isStruct, parseMethodResponse, XmlRpcDouble, type XmlRpcStruct, type XmlRpcValue } from './xmlrpc.ts';

type Run = (svc: CrawlerService, args: XmlRpcValue[]) => Promise<XmlRpcValue> | XmlRpcValue;
type Override = (svc: CrawlerService, args: XmlRpcValue[], single: Run) => Promise<XmlRpcValue> | XmlRpcValue;

/** How long the scheduler waits for a node's answer to a forwarded call. */
const FORWARD_TIMEOUT_MS = 10_000;

/** Calls `method` on a member's admin server; rejects with its fault or the transport error. */
export async function callMember(m: Pick<Member, 'host' | 'port'>, method: string, params: readonly XmlRpcValue[], token?: string): Promise<XmlRpcValue> {
  const host = m.host.includes(':') ? `[${m.host}]` : m.host;
  const res = await fetch(`http://${host}:${m.port}/RPC2`, {
    method: 'POST',
    headers: { 'content-type': 'text/xml', ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
    body: encodeMethodCall(method, params),
    signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
  });
  const r = parseMethodResponse(await res.text());
  if ('fault' in r) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `${method} on node ${m.host}:${m.port}: ${r.fault.faultString}`);
  return r.value;
}

/** The live node schedulers of the installation. */
async function liveNodes(svc: CrawlerService): Promise<Member[]> {
  return (await svc.installation!.members()).filter((m) => m.role === 'node' && m.live);
}

/** Calls every live node; the answers, and the nodes that failed with why. */
async function forwardAll(svc: CrawlerService, method: string, args: readonly XmlRpcValue[]): Promise<{ answers: XmlRpcValue[]; failed: string[] }> {
  const nodes = await liveNodes(svc);
  const token = svc.installation!.token;
  const settled = await Promise.allSettled(nodes.map((n) => callMember(n, method, args, token)));
  const answers: XmlRpcValue[] = [];
  const failed: string[] = [];
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') answers.push(s.value);
    else failed.push(`${nodes[i]!.name} (${(s.reason as Error).message})`);
  });
  return { answers, failed };
}

const num = (v: XmlRpcValue | undefined): number | undefined =>
  (typeof v === 'number' ? v : v instanceof XmlRpcDouble ? v.value : undefined);

/**
 * Two statistics answers summed: numbers add up (counts, bytes, rates,
 * histogram buckets), except maxima (the larger), first times (the
 * earlier), last times and uptimes (the later); structs member by member;
 * anything else (status strings, progress) is the first's.
 */
function sumValues(a: XmlRpcValue, b: XmlRpcValue, key: string): XmlRpcValue {
  const x = num(a);
  const y = num(b);
  if (x !== undefined && y !== undefined) {
    let v: number;
    if (/Max$|^LastUpdate$|^StatUpdate$|^Uptime$|^LastRefresh$/.test(key)) v = Math.max(x, y);
    else if (/^FirstUpdate$|^Epoch$/.test(key)) v = Math.min(x, y);
    else if (/Avg$/.test(key)) v = (x + y) / 2;
    else v = x + y;
    return typeof a === 'number' ? Math.round(v) : new XmlRpcDouble(v);
  }
  if (isStruct(a) && isStruct(b)) {
    const out: XmlRpcStruct = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = k in a ? sumValues(a[k]!, v, k) : v;
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.length === 2 && (a[0] === 1 || a[0] === 0)) {
    // A cresult: the sum of the values, 1 only if every node answered 1.
    return [Math.min(Number(a[0]), Number(b[0])), sumValues(a[1]!, b[1]!, key)];
  }
  return a;
}

/** The scheduler's own Sum* attributes (MS-FSCADM 2.2.5): beside each summed ActiveSites and PPChecksums. */
function withSums(v: XmlRpcValue): XmlRpcValue {
  if (Array.isArray(v)) return v.map(withSums);
  if (!isStruct(v)) return v;
  const out: XmlRpcStruct = {};
  for (const [k, x] of Object.entries(v)) out[k] = withSums(x);
  if ('ActiveSites' in v) out.SumActiveSites = Math.round(num(v.ActiveSites) ?? 0);
  if ('PPChecksums' in v) out.SumPPChecksums = new XmlRpcDouble(num(v.PPChecksums) ?? 0);
  return out;
}

/** Statistics of the installation: every live node's answer, summed. */
async function summed(svc: CrawlerService, method: string, args: XmlRpcValue[]): Promise<XmlRpcValue> {
  const { answers, failed } = await forwardAll(svc, method, args);
  if (answers.length === 0) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `${method}: no node scheduler answered${failed.length > 0 ? `: ${failed.join('; ')}` : ''}`);
  return withSums(answers.slice(1).reduce((a, b) => sumValues(a, b, ''), answers[0]!));
}

/** Runs the method on the scheduler (the database), then on every live node. */
function forwarded(method: string): Override {
  return async (svc, args, single) => {
    const own = await single(svc, args);
    if (svc.role !== 'scheduler') return own;
    const { failed } = await forwardAll(svc, method, args);
    if (failed.length > 0) return [0, `${Array.isArray(own) ? String(own[1]) : 'done'}; not done on ${failed.join('; ')}`];
    return own;
  };
}

/** The methods forwarded from the scheduler to every node after its own answer: they act on each node's running crawl. */
const FORWARDED = [
  'AddURIs', 'CollectionRefetchURI', 'CollectionSuspend', 'CollectionResume', 'CollectionRefetch', 'CollectionPreemptSite', 'CollectionQuarantineSite',
  'CollectionEnableRefreshOnly', 'CollectionDisableRefreshOnly', 'CollectionSuspendFeeding', 'CollectionResumeFeeding',
];

/**
 * CollectionAdd, CollectionDelete: a node refuses them without Force 1;
 * the scheduler forwards them (with Force 1) to every live node, so that a
 * node's running crawl takes an updated configuration now, and stops a
 * deleted collection before its rows go: a delete goes to the nodes
 * first, an add after the scheduler has written the configuration.
 */
function installationWide(method: 'CollectionAdd' | 'CollectionDelete'): Override {
  return async (svc, args, single) => {
    const force = args[args.length - 1];
    if (svc.role === 'node') {
      if (force !== 1) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `this server is a node scheduler of a multinode installation: ${method} goes to the multinode scheduler, or give Force 1 (MS-FSCADM 2.2.9.3, 2.2.9.4)`);
      return single(svc, args);
    }
    const forward = (): Promise<{ failed: string[] }> => forwardAll(svc, method, [...args.slice(0, -1), 1]);
    const before = method === 'CollectionDelete' ? await forward() : { failed: [] };
    const own = await single(svc, args);
    const { failed } = method === 'CollectionAdd' ? await forward() : before;
    if (failed.length > 0) return [0, `${Array.isArray(own) ? String(own[1]) : 'done'}; not done on ${failed.join('; ')} (a node follows the database within a heartbeat)`];
    return own;
  };
}

const OVERRIDES: Record<string, Override> = {
  IsDistributed: () => 1,
  IsMultiNodeScheduler: (svc) => (svc.role === 'scheduler' ? 1 : 0),
  GetSiteManagerNum: (svc) => (svc.role === 'scheduler' ? 0 : 1),
  GetNodeSchedulerXmlRpcPorts: async (svc, args, single) => {
    if (svc.role !== 'scheduler') return single(svc, args);
    const nodes = await liveNodes(svc);
    if (nodes.length === 0) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', 'no node scheduler is live in this installation (MS-FSCADM 2.2.8.2 needs at least one)');
    return nodes.map((n) => [n.host, n.port]);
  },
  SetLogLevel: async (svc, args, single) => {
    if (svc.role !== 'scheduler') return single(svc, args);
    // 2.2.8.6: forwarded to every node scheduler before the answer.
    const { failed } = await forwardAll(svc, 'SetLogLevel', args);
    await single(svc, args);
    await svc.installation!.setLogLevel(args[0] as number);
    return failed.length === 0 ? 1 : 0;
  },
  CollectionAdd: installationWide('CollectionAdd'),
  CollectionDelete: installationWide('CollectionDelete'),
  CollectionGetSiteRoutingAddress: async (svc, [c, site]) => {
    if (!svc.has(c as string)) throw new TrawlError('TRAWL_ERR_CONFIG_NOT_FOUND', `no collection named ${JSON.stringify(c)}`);
    const node = await svc.installation!.routeOf(c as string, sitesOfHostport(site as string));
    if (!node) return [0, `${String(site)} is not routed to a node yet: no URI of it has been queued`];
    return [1, [node.host, node.port]];
  },
  CollectionGetStatistics: (svc, args, single) => (svc.role === 'scheduler' ? summed(svc, 'CollectionGetStatistics', args) : single(svc, args)),
  CollectionGetStatistics2: (svc, args, single) => (svc.role === 'scheduler' ? summed(svc, 'CollectionGetStatistics2', args) : single(svc, args)),
  ...Object.fromEntries(FORWARDED.map((m) => [m, forwarded(m)])),
};

/** The override of `name` for a member of an installation, if its answer differs by role. */
export const MULTINODE_METHODS: ReadonlyMap<string, Override> = new Map(Object.entries(OVERRIDES));
