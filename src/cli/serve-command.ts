/**
 * `trawl serve`: the daemon. Loads the persisted collections, resumes them,
 * and answers MS-FSCADM over XML-RPC on POST /RPC2.
 */

import { chmodSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve as resolvePath } from 'node:path';
import type { Command } from 'commander';
import pino from 'pino';
import { trawlError } from '../core/errors.ts';
import { isoTimeEachMs } from '../core/log-file.ts';
import { openCrawlStore } from '../store/open-crawl-store.ts';
import { isPostgresUrl, maskStoreUrl } from '../store/postgres/url.ts';
import type { Io } from './io.ts';
import { maskingLogOptions, openEventLog } from './logging.ts';
import { CITESEERX_HELP, citeseerxConfig, withCiteseerxProfile, withCiteseerxSink } from './citeseerx-option.ts';
import { brokerAddress } from '../core/broker-url.ts';
import { wholeNumberOption } from './options.ts';

export const DEFAULT_ADMIN_PORT = 13000;

/** The admin server's defaults (src/admin/server.ts ADMIN_DEFAULTS), here so `--help` does not load fastify. */
const ADMIN_LIMITS = { maxRequestBytes: 8 * 1024 * 1024, maxConnections: 256, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000 } as const;

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

export function readToken(file: string): string {
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw trawlError('SERVE_TOKEN_UNREADABLE', { file, reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
  }
  if (token.length < 16) throw trawlError('SERVE_TOKEN_SHORT', { file });
  return token;
}

/**
 * The URI file folder (AddURIFile, MS-FSCADM 2.2.9.2): the default one,
 * `<data>/uri-files`, is created readable by its owner only; one the
 * operator names must exist and be a directory.
 */
function uriFileFolder(data: string, given: string | undefined): string {
  if (given === undefined) {
    const dir = resolvePath(data, 'uri-files');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    return dir;
  }
  let isDir = false;
  try {
    isDir = statSync(given).isDirectory();
  } catch (err) {
    throw trawlError('SERVE_URI_FILE_DIR_UNREADABLE', { dir: given, reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
  }
  if (!isDir) throw trawlError('SERVE_URI_FILE_DIR_NOT_DIR', { dir: given });
  return resolvePath(given);
}

/**
 * Listens, or throws SERVE_ADDRESS_IN_USE (its own exit status) when another
 * process holds the address, after `release` stopped what was started.
 * Other listen errors are thrown as they are.
 */
async function listenOrExplain(server: { listen(o: { host: string; port: number }): Promise<string> }, host: string, port: number, release: () => Promise<void>): Promise<string> {
  try {
    return await server.listen({ host, port });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    await release();
    throw trawlError('SERVE_ADDRESS_IN_USE', { host, port });
  }
}

interface ServeOptions {
  data: string; store?: string; host: string; port: string; tokenFile?: string; node?: string; allowLoopback?: boolean; allowPrivateNetworks?: boolean; logLevel: string; statsCycles: string;
  uriFileDir?: string; allowHost: string[]; maxRequestBytes: string; maxConnections: string; headersTimeoutMs: string; requestTimeoutMs: string; keepAliveTimeoutMs: string;
  citeseerx?: string; repositoryRoot?: string; role?: string; nodeTimeout: string;
}

export function registerServeCommand(program: Command, io: Io, setExit: (code: number) => void): void {
  program
    .command('serve')
    .description('run the crawler daemon: resume the persisted collections and answer MS-FSCADM XML-RPC on POST /RPC2')
    .option('--data <dir>', 'data directory', './trawl-data')
    .option('--store <url>', 'the crawl store: sqlite:PATH (default <data>/trawl.db) or postgres://user@host:port/database')
    .option('--host <host>', 'address to listen on (loopback unless a token is set)', '127.0.0.1')
    .option('--port <n>', 'port to listen on', String(DEFAULT_ADMIN_PORT))
    .option('--token-file <file>', 'file holding the bearer token clients must send (required off loopback)')
    .option('--node <name>', 'this node scheduler\'s name (applies <Node> overrides); with --store postgres://…, joins that multinode installation as this node')
    .option('--role <role>', 'in a multinode installation (--store postgres://…): node (the default with --node) or scheduler (the multinode scheduler: crawls nothing, answers for every node)')
    .option('--node-timeout <s>', 'multinode: seconds without a heartbeat after which a node is taken for dead (its sites move, its in-flight URIs go back to the queue)', '30')
    .option('--allow-loopback', 'allow crawling loopback addresses')
    .option('--allow-private-networks', 'allow crawling private network addresses')
    .option('--log-level <level>', 'trace, debug, info, warn, error', 'info')
    .option('--stats-cycles <k>', 'statistics cycles kept besides the lifetime total (MS-FSCADM 2.2.4.5)', '2')
    .option('--uri-file-dir <dir>', 'the only folder AddURIFile and CollectionDeleteURIFile read from (default <data>/uri-files, created owner-only)')
    .option('--allow-host <name>', 'a further name clients may use in the Host header, e.g. this machine\'s DNS name (repeatable)', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--max-request-bytes <n>', 'largest XML-RPC request body; larger ones are refused with 413 while they arrive', String(ADMIN_LIMITS.maxRequestBytes))
    .option('--max-connections <n>', 'open admin connections at most; more are closed at once', String(ADMIN_LIMITS.maxConnections))
    .option('--headers-timeout-ms <ms>', 'time a client has to send the request headers', String(ADMIN_LIMITS.headersTimeoutMs))
    .option('--request-timeout-ms <ms>', 'time a client has to send the whole request, body included', String(ADMIN_LIMITS.requestTimeoutMs))
    .option('--keep-alive-timeout-ms <ms>', 'an idle keep-alive connection is closed after this', String(ADMIN_LIMITS.keepAliveTimeoutMs))
    .option('--citeseerx <file>', CITESEERX_HELP.file)
    .option('--repository-root <dir>', CITESEERX_HELP.root)
    .addHelpText('after', `
The admin server accepts only POST /RPC2 with Content-Type text/xml or
application/xml, a Host header naming this server (localhost, 127.0.0.1,
[::1], the --host address or an --allow-host name, with the port) and no
Origin header other than its own: browsers on other sites cannot reach it.
With --token-file every request needs "Authorization: Bearer <token>";
10 failed checks from one address within a minute lock that address out
(429) for a minute. AddURIFile reads files only inside --uri-file-dir.
GET /metrics answers the Prometheus text format (same checks, token
included); GET /healthz answers 200 or 503 and needs no token.`)
    .action(async (opts: ServeOptions) => {
      const statsCycles = wholeNumberOption('--stats-cycles', opts.statsCycles, 1);
      const port = wholeNumberOption('--port', opts.port, 0, 65535);
      const limits = {
        maxRequestBytes: wholeNumberOption('--max-request-bytes', opts.maxRequestBytes, 1024),
        maxConnections: wholeNumberOption('--max-connections', opts.maxConnections, 1),
        headersTimeoutMs: wholeNumberOption('--headers-timeout-ms', opts.headersTimeoutMs, 100),
        requestTimeoutMs: wholeNumberOption('--request-timeout-ms', opts.requestTimeoutMs, 100),
        keepAliveTimeoutMs: wholeNumberOption('--keep-alive-timeout-ms', opts.keepAliveTimeoutMs, 100),
      };
      if (limits.requestTimeoutMs < limits.headersTimeoutMs) {
        throw trawlError('SERVE_TIMEOUTS', { requestMs: limits.requestTimeoutMs, headersMs: limits.headersTimeoutMs });
      }
      const nodeTimeoutS = wholeNumberOption('--node-timeout', opts.nodeTimeout, 2, 3600);
      if (opts.role !== undefined && opts.role !== 'node' && opts.role !== 'scheduler') throw trawlError('NODE_ROLE_BAD', { role: opts.role });
      if (opts.role === 'node' && opts.node === undefined) throw trawlError('NODE_ROLE_BAD', { role: 'node without --node NAME' });
      const token = opts.tokenFile !== undefined ? readToken(opts.tokenFile) : undefined;
      if (!isLoopback(opts.host) && token === undefined) {
        throw trawlError('SERVE_NEEDS_TOKEN', { host: opts.host });
      }
      // Loaded here, not at the top: every other command (`trawl crawl` above
      // all) would otherwise load Fastify and the service too, modules kept in
      // memory for nothing (bench/README.md, *What changed*, 2f6968a).
      const [{ buildAdminServer }, { CrawlerService }] = await Promise.all([import('../admin/server.ts'), import('../service/crawler-service.ts')]);
      // The data directory holds the stored configurations (secrets included): its owner's only.
      mkdirSync(opts.data, { recursive: true, mode: 0o700 });
      const uriFileDir = uriFileFolder(opts.data, opts.uriFileDir);
      const log = pino({ level: opts.logLevel, base: { service: 'trawl' }, timestamp: isoTimeEachMs(), ...maskingLogOptions() });
      const csx = citeseerxConfig(opts, (m) => log.warn({ citeseerx: opts.citeseerx }, m), true);
      const csxSink = csx?.sink;
      // The file's newSubmissionsChannel: consumed on the broker the file names, with its clientID.
      const csxBroker = csxSink ? brokerAddress(csxSink.brokerUrl) : undefined;
      const submissions = csx?.submissions && csxBroker && !('problem' in csxBroker)
        ? { label: opts.citeseerx!, queue: csx.submissions.queue, profile: csx.submissions.profile, endpoint: { host: csxBroker.host, port: csxBroker.port, clientId: csxSink!.clientId } }
        : undefined;
      // A member of a multinode installation: --role, or --node on a PostgreSQL store (docs/multinode.md).
      const postgres = opts.store !== undefined && isPostgresUrl(opts.store);
      const role = opts.role ?? (opts.node !== undefined && postgres ? 'node' : undefined);
      const memberName = role === 'scheduler' ? opts.node ?? 'scheduler' : opts.node;
      const member = role !== undefined && memberName !== undefined ? { name: memberName, role: role as 'node' | 'scheduler', leaseTtlMs: nodeTimeoutS * 1000 } : undefined;
      const store = await openCrawlStore(opts.store, opts.data, member);
      const installation = member
        ? await (await import('../store/postgres/installation.ts')).Installation.join(opts.store as string, { ...member, host: opts.host, port, timeoutMs: nodeTimeoutS * 1000, ...(token !== undefined ? { token } : {}) })
          .catch(async (err: unknown) => {
            await store.close();
            throw err;
          })
        : undefined;
      const service = new CrawlerService({
        ...(csxSink !== undefined ? { adjustSettings: (settings, name) => withCiteseerxSink(settings, csxSink, name, (m) => log.warn({ collection: name }, m)) } : {}),
        ...(csxSink !== undefined ? { adjustConfig: (config) => withCiteseerxProfile(config, csxSink, (m) => log.warn({ collection: config.name }, m)) } : {}),
        ...(submissions ? { submissions } : {}),
        dataDir: opts.data, store, log, address: { host: opts.host, port }, statsCycles, uriFileDir, openEventLog,
        ...(opts.node !== undefined ? { nodeName: opts.node } : {}),
        ...(installation ? { installation } : {}),
        egress: { ...(opts.allowLoopback ? { allowLoopback: true } : {}), ...(opts.allowPrivateNetworks ? { allowPrivateNetworks: true } : {}) },
      });
      const server = buildAdminServer({ service, log, host: opts.host, allowedHosts: opts.allowHost, ...limits, ...(token !== undefined ? { token } : {}) });
      // Signals are taken from here on, so that one that comes while the
      // collections load still stops the daemon the graceful way.
      let stopping = false;
      const signalled = new Promise<string>((resolve) => {
        const onSignal = (signal: string): void => {
          if (stopping) {
            io.err('trawl: forced stop');
            process.exit(130);
          }
          stopping = true;
          resolve(signal);
        };
        process.on('SIGINT', () => onSignal('SIGINT'));
        process.on('SIGTERM', () => onSignal('SIGTERM'));
      });
      await service.start();
      const address = await listenOrExplain(server, opts.host, port, async () => {
        await service.stop();
        await installation?.leave();
        await store.close();
      });
      log.info({ address }, 'admin server listening (POST /RPC2, GET /metrics, GET /healthz)');
      if (installation && port === 0) await installation.setAddress(opts.host, Number(new URL(address).port));
      io.err(`trawl: serving MS-FSCADM XML-RPC at ${address}/RPC2 (data in ${opts.data})${member ? `; ${member.role === 'scheduler' ? 'multinode scheduler' : `node scheduler ${member.name}`} of the installation in ${maskStoreUrl(opts.store as string)}` : ''}`);
      const signal = await signalled;
      log.info({ signal }, 'stopping: in-flight URIs go back to the queue');
      // Every wait of the service is abortable (running cycles, refresh
      // timers, feeders), so nothing here outlives the stop: the process
      // then ends because nothing is left on the event loop.
      await server.close();
      await service.stop();
      // Leaving: the others route this node's sites at their next tick.
      await installation?.leave();
      await store.close();
      log.flush();
      setExit(0);
    });
}
