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
  admin.command('add').description('add or update a collection from an MS-FSCCFG file (CollectionAdd)').argument('<file>').option('--force', 'Force=1')
    .action(async (file: string, o: { force?: boolean }, cmd: Command) => {
      let xml: string;
      try {
        xml = readFileSync(file, 'utf8');
      } catch (err) {
        throw new TrawlError('TRAWL_ERR_IO', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      await run(() => ['CollectionAdd', [xml, o.force ? 1 : 0]])(file, o, cmd);
    });
  admin.command('delete').description('delete a collection (CollectionDelete)').argument('<name>').option('--force', 'Force=1')
    .action((n: string, o: { force?: boolean }, cmd: Command) => run(() => ['CollectionDelete', [n, o.force ? 1 : 0]])(n, o, cmd));
  admin.command('config').description('a collection\'s configuration XML (CollectionGetConfigurationXML)').argument('<name>').action(run((n) => ['CollectionGetConfigurationXML', [n!]]));
  admin.command('status').description('a collection\'s state (CollectionGetStatus)').argument('<name>').action(run((n) => ['CollectionGetStatus', [n!]]));
  admin.command('add-uris').description('queue URIs (AddURIs), or a file of URIs on the server (AddURIFile)').argument('<name>').argument('[urls...]')
    .option('--file <path>', 'a file of URIs on the server').option('--urgent', 'crawl them first')
    .action((n: string, urls: string[], o: { file?: string; urgent?: boolean }, cmd: Command) => {
      if (o.file === undefined && urls.length === 0) throw new TrawlError('TRAWL_ERR_USAGE', 'give URLs or --file');
      return run(() => (o.file !== undefined ? ['AddURIFile', [n, o.urgent ? 1 : 0, resolvePath(o.file)]] : ['AddURIs', [n, o.urgent ? 1 : 0, urls]]))(n, urls, o, cmd);
    });
  admin.command('delete-uris').description('forget URIs and their documents (CollectionDeleteURIs / CollectionDeleteURIFile)').argument('<name>').argument('[urls...]').option('--file <path>', 'a file of URIs on the server')
    .action((n: string, urls: string[], o: { file?: string }, cmd: Command) => run(() => (o.file !== undefined ? ['CollectionDeleteURIFile', [n, resolvePath(o.file)]] : ['CollectionDeleteURIs', [n, urls]]))(n, urls, o, cmd));
  admin.command('delete-site').description('forget a site (CollectionDeleteSite)').argument('<name>').argument('<hostport>').action(run((n, s) => ['CollectionDeleteSite', [n!, s!]]));
  admin.command('stats').description('statistics (CollectionGetStatistics2, or CollectionGetSiteStatistics with --site)').argument('<name>').option('--site <hostport>')
    .action((n: string, o: { site?: string }, cmd: Command) => run(() => (o.site !== undefined ? ['CollectionGetSiteStatistics', [n, o.site]] : ['CollectionGetStatistics2', [n]]), (v) => {
      const cur = Array.isArray(v) ? (v[1] as Record<string, Record<string, unknown>>)?.cur : undefined;
      if (!cur) return JSON.stringify(v, null, 2);
      const keys = ['Status', 'Processed', 'Downloaded', 'Stored', 'Modified', 'Deleted', 'DocSizeAvg', 'DLTimeAvg', 'DocRate', 'ActiveSites', 'CrawlMode', 'Progress'];
      return table(keys.filter((k) => k in cur).map((k) => [k, typeof cur[k] === 'object' ? JSON.stringify(cur[k]) : String(cur[k])]));
    })(n, o, cmd));
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
