/**
 * `trawl admin`: the operator's client for the MS-FSCADM admin protocol, in
 * the spirit of FAST's crawleradmin: short commands, tables by default,
 * `--json` for scripts.
 */

import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { Command } from 'commander';
import { TrawlError, trawlError } from '../core/errors.ts';
import { MAX_LOG_LINES, type LogLine } from '../service/crawl-log.ts';
import type { InspectReport } from '../service/inspect.ts';
import { inspectText, logText } from './inspect-command.ts';
import { wholeNumberOption } from './options.ts';
import { encodeMethodCall, parseMethodResponse, XmlRpcDouble, isStruct, type ParseOptions, type XmlRpcValue } from '../admin/xmlrpc.ts';
import { DEFAULT_ADMIN_PORT, readToken } from './serve-command.ts';
import type { Io } from './io.ts';
import { formatDiagnostic, hasErrors } from '../config/diagnostics.ts';
import { configWarnings } from '../config/honoured.ts';
import { detectFormat, readConfigBytes } from '../config/load.ts';
import { writeConfigXml } from '../config/writer.ts';

export interface Client {
  call(method: string, ...params: XmlRpcValue[]): Promise<XmlRpcValue>;
}

/**
 * What the trawl.* reading methods may answer: a page of documents holds up
 * to 8 MiB of bodies, or one document of up to max_document_bytes (100 MiB
 * by default) in base64.
 */
export const READER_PARSE_LIMITS: ParseOptions = { maxBytes: 320 * 1024 * 1024, maxValues: 1_000_000, maxTags: 4_000_000 };

export function client(server: string, token: string | undefined, limits: ParseOptions = {}): Client {
  const url = server.endsWith('/RPC2') ? server : `${server.replace(/\/$/, '')}/RPC2`;
  return {
    async call(method, ...params) {
      let res: Response;
      try {
        res = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/xml', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: encodeMethodCall(method, params) });
      } catch (err) {
        throw new TrawlError('TRAWL_ERR_IO', `cannot reach ${url}: ${((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}`);
      }
      if (res.status === 401) throw new TrawlError('TRAWL_ERR_USAGE', `${url} wants a bearer token: pass --token-file`);
      if (!res.ok) throw new TrawlError('TRAWL_ERR_IO', `${url} answered HTTP ${res.status}`);
      const r = parseMethodResponse(await res.text(), limits);
      if ('fault' in r) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `${method}: ${r.fault.faultString}`);
      return r.value;
    },
  };
}

/** Plain JSON for --json: doubles as numbers, bytes as base64, dates as ISO strings. */
export function toJson(v: XmlRpcValue): unknown {
  if (v instanceof XmlRpcDouble) return v.value;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(toJson);
  if (isStruct(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x)]));
  return v;
}

function table(rows: Array<[string, string]>): string {
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
}

function human(v: unknown): string {
  if (Array.isArray(v) && v.length === 2 && (v[0] === 1 || v[0] === 0 || (typeof v[0] === 'number' && v[0] < 1)) && typeof v[1] === 'string') {
    return `${v[0] === 1 ? 'ok' : 'failed'}: ${v[1]}`;
  }
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return (v as string[]).join('\n') || '(none)';
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    return table(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, typeof x === 'object' ? JSON.stringify(x) : String(x)]));
  }
  return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
}

/** Calls a trawl extension method, or the standard one when the server does not know the extension (an older trawl). */
async function callWithFallback(c: Client, extension: [string, XmlRpcValue[]], standard: [string, XmlRpcValue[]]): Promise<{ extended: boolean; value: XmlRpcValue }> {
  try {
    return { extended: true, value: await c.call(extension[0], ...extension[1]) };
  } catch (err) {
    if (!(err instanceof TrawlError) || !/unknown method/.test(err.message)) throw err;
    return { extended: false, value: await c.call(standard[0], ...standard[1]) };
  }
}

function untilText(ms: number, nowMs: number): string {
  const s = Math.max(0, Math.round((ms - nowMs) / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  return m < 120 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** One line for `trawl admin status`: the MS-FSCADM status with what the collection does now (trawl.CollectionGetStatus). */
export function statusLine(d: { status?: unknown; activity?: unknown; waitingFor?: unknown; nextCycle?: unknown; cycleId?: unknown; cycleStatus?: unknown; cycleEpoch?: unknown; cycleStoppedBy?: unknown; skippedCycleId?: unknown; skippedReason?: unknown }, nowMs = Date.now()): string {
  const activity = activityText(d, nowMs);
  if (typeof d.cycleId !== 'string') return activity;
  const by = typeof d.cycleStoppedBy === 'string' ? ` (${d.cycleStoppedBy})` : '';
  const skipped = typeof d.skippedCycleId === 'string' ? `\nlast skipped ${d.skippedCycleId}: skipped (${String(d.skippedReason)})` : '';
  return `${activity}\ncycle ${String(d.cycleEpoch)} ${d.cycleId}: ${String(d.cycleStatus)}${by}${skipped}`;
}

function activityText(d: { status?: unknown; activity?: unknown; waitingFor?: unknown; nextCycle?: unknown }, nowMs: number): string {
  const next = typeof d.nextCycle === 'string' ? Date.parse(d.nextCycle) : NaN;
  const at = Number.isNaN(next) ? '' : ` at ${new Date(next).toISOString().replace(/\.\d{3}Z$/, 'Z')} (in ${untilText(next, nowMs)})`;
  switch (d.activity) {
    case 'crawling': return 'crawling: a refresh cycle runs';
    case 'idle': return d.waitingFor === 'disk-full' ? `idle, waiting for disk space; checked again${at}` : `idle, next refresh${at || ' when an operator starts it'}`;
    case 'suspended': return 'suspended: nothing is crawled until `trawl admin resume`';
    case 'deleting': return 'zombie: the collection is being deleted';
    default: return String(d.status);
  }
}

/** The rows `trawl admin stats` prints, for the current and the last finished cycle side by side. */
const STATS_ROWS = ['Status', 'Processed', 'Downloaded', 'Stored', 'Modified', 'Unchanged', 'Deleted', 'Retries', 'DocSizeAvg', 'DLTimeAvg', 'DocRate', 'ActiveSites', 'CrawlMode', 'HTTPResponse', 'URISkip', 'DocSkip', 'Progress'] as const;

function statValue(k: string, v: unknown): string {
  if (v === undefined) return '-';
  if (k === 'Progress' && Array.isArray(v)) return `${String(v[0])}%, ${String(v[1])}`;
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(k === 'DLTimeAvg' ? 3 : 1);
  if (v !== null && typeof v === 'object') {
    const e = Object.entries(v as Record<string, unknown>);
    return e.length ? e.map(([a, b]) => `${a} ${String(b)}`).join(', ') : '-';
  }
  return String(v) || '-';
}

/**
 * CollectionGetStatistics2 as two columns: the current cycle ("cur") and the
 * last finished one ("prev", MS-FSCADM 2.2.10.6), one row per statistic.
 */
export function statsTable(v: unknown): string {
  const r = Array.isArray(v) ? (v[1] as Record<string, Record<string, unknown>> | undefined) : undefined;
  if (!r || typeof r !== 'object') return JSON.stringify(v, null, 2);
  const cur = r.cur ?? {};
  const prev = r.prev;
  const curEmpty = Object.keys(cur).length === 0;
  const heads = ['', 'current cycle', prev ? 'last finished cycle' : 'last finished cycle (none yet)'];
  const rows = STATS_ROWS.filter((k) => k in cur || (prev !== undefined && k in prev)).map((k) => [k, curEmpty ? '-' : statValue(k, cur[k]), prev ? statValue(k, prev[k]) : '-']);
  if (rows.length === 0) return `${heads[1]}; ${heads[2]}`;
  const all = [heads, ...rows];
  const w = [0, 1].map((i) => Math.max(...all.map((row) => row[i]!.length)));
  return all.map((row) => `${row[0]!.padEnd(w[0]!)}  ${row[1]!.padEnd(w[1]!)}  ${row[2]}`.trimEnd()).join('\n');
}

/** What `trawl admin add-uris` says of one URI that was not added, with what to do. */
function notAddedLine(name: string, x: { uri?: unknown; kind?: unknown; reason?: unknown; code?: unknown; rule?: unknown }): string {
  const uri = String(x.uri);
  const reason = String(x.reason);
  switch (x.kind) {
    case 'malformed': return `  ${uri}: malformed: ${reason}; give an absolute http(s) URL`;
    case 'scope': return `  ${uri}: out of scope: ${typeof x.rule === 'string' ? `rule ${x.rule} refuses it` : 'refused'} (${reason}); \`trawl admin config ${name}\` shows the rules, \`trawl urltest FILE URL --explain\` each one consulted`;
    case 'crawled': return `  ${uri}: ${reason}; to fetch it again now: trawl admin refetch-uri --now ${name} ${uri}`;
    case 'queued': return `  ${uri}: ${reason}`;
    case 'repeated': return `  ${uri}: ${reason} in this call; added once`;
    default: return `  ${uri}: ${reason}`;
  }
}

/**
 * `trawl admin add FILE.yml`: the Elastic Open Crawler YAML converted to
 * MS-FSCCFG XML as `trawl config convert` converts it; what was converted
 * and every warning go to stderr, and a file that does not convert stops
 * here with its errors and how to fix them.
 */
function convertYaml(io: Io, file: string, bytes: Buffer): string {
  const r = readConfigBytes(bytes, file, 'yaml');
  const errors = r.diagnostics.filter((d) => d.severity === 'error');
  for (const d of r.diagnostics) io.err(formatDiagnostic(d));
  if (hasErrors(r.diagnostics) || r.document.collections.length === 0) {
    throw new TrawlError(errors[0]?.code ?? 'TRAWL_ERR_CONFIG_YAML', `${file} does not convert to MS-FSCCFG (${errors.length} error${errors.length === 1 ? '' : 's'} above); nothing was added. Fix each line named above (\`trawl config validate ${file}\` checks the file again), or convert it with \`trawl config convert ${file} --to xml -o ${file.replace(/\.ya?ml$/i, '')}.xml\`, edit the XML and add that`);
  }
  for (const c of r.document.collections) {
    for (const d of configWarnings(c)) io.err(formatDiagnostic(d));
    const params = [...c.root.attribs.keys(), ...c.root.sections.keys()];
    io.err(`trawl: ${file}: Elastic Open Crawler YAML converted to MS-FSCCFG collection ${JSON.stringify(c.name)}, setting ${params.join(', ')}${r.diagnostics.length ? ` (${r.diagnostics.length} warning${r.diagnostics.length === 1 ? '' : 's'} above)` : ''}; \`trawl config convert ${file} --to xml\` prints the XML`);
  }
  return writeConfigXml(r.document);
}

export function registerAdminCommand(program: Command, io: Io, setExit: (code: number) => void): void {
  const admin = program
    .command('admin')
    .description('steer a running `trawl serve` over MS-FSCADM XML-RPC')
    .option('--server <url>', 'the server', `http://127.0.0.1:${DEFAULT_ADMIN_PORT}`)
    .option('--token-file <file>', 'file holding the bearer token')
    .option('--json', 'print results as JSON');

  const run = (method: (...a: string[]) => [string, XmlRpcValue[]], show?: (v: unknown) => string) => async (...args: unknown[]): Promise<void> => {
    // commander passes the positional arguments, then the options and the command.
    const g = admin.opts<{ server: string; tokenFile?: string; json?: boolean }>();
    const positional = args.slice(0, -2).flatMap((a) => (Array.isArray(a) ? (a as string[]) : [a as string]));
    const [name, params] = method(...positional);
    const c = client(g.server, g.tokenFile !== undefined ? readToken(g.tokenFile) : undefined);
    const value = toJson(await c.call(name, ...params));
    io.out(g.json ? JSON.stringify(value, null, 2) : (show ?? human)(value));
    const failed = Array.isArray(value) && typeof value[0] === 'number' && value[0] < 1;
    setExit(failed ? 1 : 0);
  };
  const flagOf = (cmd: Command, name: string): number => (cmd.opts()[name] ? 1 : 0);

  admin.command('list').description('collections (CollectionGetList)').action(run(() => ['CollectionGetList', []]));
  admin.command('add').description('add or update a collection from an MS-FSCCFG file, or an Elastic Open Crawler YAML file converted as `trawl config convert` does (CollectionAdd)').argument('<file>').option('--force', 'Force=1')
    .action(async (file: string, o: { force?: boolean }, cmd: Command) => {
      let bytes: Buffer;
      try {
        bytes = readFileSync(file);
      } catch (err) {
        throw new TrawlError('TRAWL_ERR_IO', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      const xml = detectFormat(file, bytes) === 'yaml' ? convertYaml(io, file, bytes) : bytes.toString('utf8');
      await run(() => ['CollectionAdd', [xml, o.force ? 1 : 0]])(file, o, cmd);
    });
  admin.command('delete').description('delete a collection (CollectionDelete)').argument('<name>').option('--force', 'Force=1')
    .action((n: string, o: { force?: boolean }, cmd: Command) => run(() => ['CollectionDelete', [n, o.force ? 1 : 0]])(n, o, cmd));
  admin.command('config').description('a collection\'s configuration XML (CollectionGetConfigurationXML)').argument('<name>').action(run((n) => ['CollectionGetConfigurationXML', [n!]]));
  admin.command('status').description('a collection\'s state (CollectionGetStatus), and whether it crawls or waits for its next refresh (trawl.CollectionGetStatus)').argument('<name>')
    .action(async (n: string) => {
      const g = admin.opts<{ server: string; tokenFile?: string; json?: boolean }>();
      const c = client(g.server, g.tokenFile !== undefined ? readToken(g.tokenFile) : undefined);
      const r = await callWithFallback(c, ['trawl.CollectionGetStatus', [n]], ['CollectionGetStatus', [n]]);
      const value = toJson(r.value);
      io.out(g.json ? JSON.stringify(value, null, 2) : r.extended ? statusLine(value as Record<string, unknown>) : String(value));
      setExit(0);
    });
  admin.command('add-uris').description('queue URIs (AddURIs), or a file of URIs on the server (AddURIFile); says why each URI not added was not').argument('<name>').argument('[urls...]')
    .option('--file <path>', 'a file of URIs on the server').option('--urgent', 'crawl them first')
    .action(async (n: string, urls: string[], o: { file?: string; urgent?: boolean }) => {
      if (o.file === undefined && urls.length === 0) throw new TrawlError('TRAWL_ERR_USAGE', 'give URLs or --file');
      const g = admin.opts<{ server: string; tokenFile?: string; json?: boolean }>();
      const c = client(g.server, g.tokenFile !== undefined ? readToken(g.tokenFile) : undefined);
      const urgent = o.urgent ? 1 : 0;
      const [method, params]: [string, XmlRpcValue[]] = o.file !== undefined ? ['AddURIFile', [n, urgent, resolvePath(o.file)]] : ['AddURIs', [n, urgent, urls]];
      const r = await callWithFallback(c, [`trawl.${method}`, params], [method, params]);
      const value = toJson(r.value);
      const result = (r.extended ? (value as { result: unknown }).result : value) as [number, string];
      if (g.json) io.out(JSON.stringify(value, null, 2));
      else {
        io.out(human(result));
        const notAdded = r.extended ? (value as { notAdded: Array<Record<string, unknown>> }).notAdded : [];
        if (notAdded.length) io.out(['not added:', ...notAdded.map((x) => notAddedLine(n, x))].join('\n'));
      }
      setExit(result[0] < 1 ? 1 : 0);
    });
  admin.command('delete-uris').description('forget URIs and their documents (CollectionDeleteURIs / CollectionDeleteURIFile)').argument('<name>').argument('[urls...]').option('--file <path>', 'a file of URIs on the server')
    .action((n: string, urls: string[], o: { file?: string }, cmd: Command) => run(() => (o.file !== undefined ? ['CollectionDeleteURIFile', [n, resolvePath(o.file)]] : ['CollectionDeleteURIs', [n, urls]]))(n, urls, o, cmd));
  admin.command('delete-site').description('forget a site (CollectionDeleteSite)').argument('<name>').argument('<hostport>').action(run((n, s) => ['CollectionDeleteSite', [n!, s!]]));
  admin.command('stats').description('statistics of the current and the last finished cycle, side by side (CollectionGetStatistics2), or of a site with --site (CollectionGetSiteStatistics)').argument('<name>').option('--site <hostport>')
    .action((n: string, o: { site?: string }, cmd: Command) => run(() => (o.site !== undefined ? ['CollectionGetSiteStatistics', [n, o.site]] : ['CollectionGetStatistics2', [n]]), (v) => (o.site !== undefined ? JSON.stringify(v, null, 2) : statsTable(v)))(n, o, cmd));
  admin.command('global-stats').description('global statistics (GetGlobalStatistics)').action(run(() => ['GetGlobalStatistics', []], (v) => JSON.stringify(v, null, 2)));
  admin.command('suspend').description('suspend crawling (CollectionSuspend)').argument('<name>').action(run((n) => ['CollectionSuspend', [n!]]));
  admin.command('resume').description('resume crawling (CollectionResume)').argument('<name>').action(run((n) => ['CollectionResume', [n!]]));
  admin.command('suspend-feeding').description('pause a content destination (CollectionSuspendFeeding)').argument('<name>').argument('[destination]').action(run((n, d) => ['CollectionSuspendFeeding', [n!, d ?? '']]));
  admin.command('resume-feeding').description('resume a content destination (CollectionResumeFeeding)').argument('<name>').argument('[destination]').action(run((n, d) => ['CollectionResumeFeeding', [n!, d ?? '']]));
  admin.command('refetch').description('refetch the collection, or one sub-collection (CollectionRefetch)').argument('<name>').argument('[subcollection]').action(run((n, sub) => ['CollectionRefetch', [n!, sub ?? '']]));
  admin.command('refetch-uri').description('refetch a URI or its site (CollectionRefetchURI)').argument('<name>').argument('<uri>').option('--refeed').option('--site').option('--now')
    .action((n: string, u: string, _o: unknown, cmd: Command) => run(() => ['CollectionRefetchURI', [n, u, flagOf(cmd, 'refeed'), flagOf(cmd, 'site'), flagOf(cmd, 'now')]])(n, u, _o, cmd));
  admin.command('preempt').description('stop crawling a site for now (CollectionPreemptSite)').argument('<name>').argument('<hostport>').action(run((n, s) => ['CollectionPreemptSite', [n!, s!]]));
  admin.command('quarantine').description('hold a site for a time (CollectionQuarantineSite)').argument('<name>').argument('<hostport>').argument('<seconds>')
    .action((n: string, s: string, t: string, o: unknown, cmd: Command) => run(() => ['CollectionQuarantineSite', [n, s, Number(t)]])(n, s, t, o, cmd));
  admin.command('refresh-only').description('only revisit known content, or not (CollectionEnableRefreshOnly / CollectionDisableRefreshOnly)').argument('<name>').argument('<on|off>')
    .action(run((n, v) => {
      if (v !== 'on' && v !== 'off') throw new TrawlError('TRAWL_ERR_USAGE', 'refresh-only takes on or off');
      return [v === 'on' ? 'CollectionEnableRefreshOnly' : 'CollectionDisableRefreshOnly', [n!]];
    }));
  admin.command('reprocess-site').description('re-send a site\'s documents (CollectionReprocessSite)').argument('<name>').argument('<destination>').argument('<hostport>').action(run((n, d, s) => ['CollectionReprocessSite', [n!, d!, s!]]));
  admin.command('reprocess-prefix').description('re-send documents under a prefix (CollectionReprocessSitePrefix)').argument('<name>').argument('<hostport>').argument('<prefix>').argument('<destination>')
    .action(run((n, s, p, d) => ['CollectionReprocessSitePrefix', [n!, s!, p!, d!]]));
  admin.command('reprocess-uris').description('re-send documents (CollectionReprocessURI)').argument('<name>').argument('<destination>').argument('<uris...>')
    .action((n: string, d: string, uris: string[], o: unknown, cmd: Command) => run(() => ['CollectionReprocessURI', [n, d, uris]])(n, d, uris, o, cmd));
  admin.command('routing').description('the node that crawls a site (CollectionGetSiteRoutingAddress)').argument('<name>').argument('<hostport>').action(run((n, s) => ['CollectionGetSiteRoutingAddress', [n!, s!]]));
  admin.command('loglevel').description('show or set the log level bitmask (GetLogLevel / SetLogLevel): 0x04 info, 0x08 debug, 0x10 warning, 0x20 error, 0x40 critical, 0x80 verbose').argument('[mask]')
    .action(run((m) => (m === undefined ? ['GetLogLevel', []] : ['SetLogLevel', [Number(m)]])));
  admin.command('info').description('node information (IsDistributed, IsMultiNodeScheduler, GetSiteManagerNum, version)')
    .action(async () => {
      const g = admin.opts<{ server: string; tokenFile?: string; json?: boolean }>();
      const c = client(g.server, g.tokenFile !== undefined ? readToken(g.tokenFile) : undefined);
      const info = { version: await c.call('system.version'), distributed: await c.call('IsDistributed'), multinodeScheduler: await c.call('IsMultiNodeScheduler'), siteManagers: await c.call('GetSiteManagerNum') };
      io.out(g.json ? JSON.stringify(toJson(info as unknown as XmlRpcValue), null, 2) : human(toJson(info as unknown as XmlRpcValue)));
      setExit(0);
    });
  admin.command('inspect').description('what the daemon holds of a URL: record, skip code, frontier state, parent, history (trawl.InspectURI; `trawl inspect` without the daemon)').argument('<name>').argument('<url>')
    .option('--body', 'also print the stored body')
    .action(async (n: string, u: string, o: { body?: boolean }) => {
      const g = admin.opts<{ server: string; tokenFile?: string; json?: boolean }>();
      const c = client(g.server, g.tokenFile !== undefined ? readToken(g.tokenFile) : undefined, READER_PARSE_LIMITS);
      const report = toJson(await c.call('trawl.InspectURI', n, u, o.body ? 1 : 0)) as InspectReport;
      if (!report.known && report.history.length === 0) throw trawlError('URL_UNKNOWN', { url: report.url, name: report.collection });
      if (g.json) io.out(JSON.stringify(report, null, 2));
      else for (const line of inspectText(report)) io.out(line);
      setExit(0);
    });
  admin.command('log').description('the last lines of a collection\'s event log, or those about one URL (trawl.GetLog)').argument('<name>')
    .option('--lines <n>', 'how many lines', '50').option('--url <url>', 'only the lines about this URL')
    .action(async (n: string, o: { lines: string; url?: string }) => {
      const g = admin.opts<{ server: string; tokenFile?: string; json?: boolean }>();
      const c = client(g.server, g.tokenFile !== undefined ? readToken(g.tokenFile) : undefined, READER_PARSE_LIMITS);
      const lines = toJson(await c.call('trawl.GetLog', n, wholeNumberOption('--lines', o.lines, 1, MAX_LOG_LINES), o.url ?? '')) as LogLine[];
      for (const l of lines) io.out(g.json ? JSON.stringify(l) : logText(l));
      setExit(0);
    });
  admin.command('call').description('call any method with JSON parameters, e.g. call AddURIs \'"news"\' 0 \'["https://example.com/"]\'').argument('<method>').argument('[params...]')
    .action(run((m, ...p) => [m!, p.map((x) => {
      try {
        return JSON.parse(x) as XmlRpcValue;
      } catch {
        return x;
      }
    })]));
}
