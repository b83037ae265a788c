/**
 * `trawl serve`: the daemon. Loads the persisted collections, resumes them,
 * and answers MS-FSCADM over XML-RPC on POST /RPC2.
 */

import { readFileSync } from 'node:fs';
import { mkdirSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Command } from 'commander';
import pino from 'pino';
import { TrawlError } from '../core/errors.ts';
import { isoTimeEachMs } from '../core/log-file.ts';
import { openThreadedCrawlStore } from '../store/storage-client.ts';
import type { Io } from './io.ts';
import { maskingLogOptions } from './logging.ts';
import { wholeNumberOption } from './options.ts';

export const DEFAULT_ADMIN_PORT = 13000;

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

export function readToken(file: string): string {
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new TrawlError('TRAWL_ERR_IO', `cannot read the token file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (token.length < 16) throw new TrawlError('TRAWL_ERR_USAGE', `the token in ${file} is too short: use at least 16 characters`);
  return token;
}

export function registerServeCommand(program: Command, io: Io, setExit: (code: number) => void): void {
  program
    .command('serve')
    .description('run the crawler daemon: resume the persisted collections and answer MS-FSCADM XML-RPC on POST /RPC2')
    .option('--data <dir>', 'data directory', './trawl-data')
    .option('--host <host>', 'address to listen on (loopback unless a token is set)', '127.0.0.1')
    .option('--port <n>', 'port to listen on', String(DEFAULT_ADMIN_PORT))
    .option('--token-file <file>', 'file holding the bearer token clients must send (required off loopback)')
    .option('--node <name>', 'this node scheduler\'s name (applies <Node> overrides)')
    .option('--allow-loopback', 'allow crawling loopback addresses')
    .option('--allow-private-networks', 'allow crawling private network addresses')
    .option('--log-level <level>', 'trace, debug, info, warn, error', 'info')
    .option('--stats-cycles <k>', 'statistics cycles kept besides the lifetime total (MS-FSCADM 2.2.4.5)', '2')
    .action(async (opts: { data: string; host: string; port: string; tokenFile?: string; node?: string; allowLoopback?: boolean; allowPrivateNetworks?: boolean; logLevel: string; statsCycles: string }) => {
      const statsCycles = wholeNumberOption('--stats-cycles', opts.statsCycles, 1);
      const port = wholeNumberOption('--port', opts.port, 0, 65535);
      const token = opts.tokenFile !== undefined ? readToken(opts.tokenFile) : undefined;
      if (!isLoopback(opts.host) && token === undefined) {
        throw new TrawlError('TRAWL_ERR_USAGE', `listening on ${opts.host} (not loopback) needs --token-file: the admin protocol can change every collection`);
      }
      // Loaded here, not at the top: every other command (`trawl crawl` above
      // all) would otherwise load Fastify and the service too (about 130
      // modules kept in memory for nothing; bench/README.md, peak RSS).
      const [{ buildAdminServer }, { CrawlerService }] = await Promise.all([import('../admin/server.ts'), import('../service/crawler-service.ts')]);
      // The data directory holds the stored configurations (secrets included): its owner's only.
      mkdirSync(opts.data, { recursive: true, mode: 0o700 });
      const log = pino({ level: opts.logLevel, base: { service: 'trawl' }, timestamp: isoTimeEachMs(), ...maskingLogOptions() });
      const store = await openThreadedCrawlStore(join(opts.data, 'trawl.db'));
      const service = new CrawlerService({
        dataDir: opts.data, store, log, address: { host: opts.host, port }, statsCycles,
        ...(opts.node !== undefined ? { nodeName: opts.node } : {}),
        egress: { ...(opts.allowLoopback ? { allowLoopback: true } : {}), ...(opts.allowPrivateNetworks ? { allowPrivateNetworks: true } : {}) },
      });
      const server = buildAdminServer({ service, log, ...(token !== undefined ? { token } : {}) });
      await service.start();
      const address = await server.listen({ host: opts.host, port });
      log.info({ address }, 'admin server listening (POST /RPC2)');
      io.err(`trawl: serving MS-FSCADM XML-RPC at ${address}/RPC2 (data in ${opts.data})`);
      await new Promise<void>((resolve) => {
        let stopping = false;
        const stop = (signal: string): void => {
          if (stopping) {
            io.err('trawl: forced stop');
            process.exit(130);
          }
          stopping = true;
          log.info({ signal }, 'stopping: in-flight URIs go back to the queue');
          void (async () => {
            await server.close();
            await service.stop();
            await store.close();
            log.flush();
            resolve();
          })();
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
      });
      setExit(0);
    });
}
