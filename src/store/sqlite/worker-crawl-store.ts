/**
 * The SQLite crawl store on its own thread. A crawl's main thread fetches,
 * checks scope and schedules; the store's SQL (above all the group commits)
 * was a fifth of its CPU on the bench site, so `trawl crawl` and
 * `trawl serve` keep the database in a worker thread and talk to it by
 * message (bench/README.md has the before and after).
 *
 *   main thread                                  store thread
 *   store.complete(c) ──postMessage {id, method, args}──► SqliteCrawlStore.complete
 *        ◄──────────── {id, result | error} ─────────────  (after its group commit)
 *
 * Every CrawlStore method is forwarded as it is; the contract suite runs
 * against this class too. Calls are answered in the order the store
 * finishes them, which for everything but `complete` (held for its group
 * commit) is the order they were made. Errors keep their TrawlError code.
 * The thread dies with the process: a kill -9 loses exactly what it loses
 * for the in-thread store, since a completion resolves only once committed.
 */

import { Worker } from 'node:worker_threads';
import { TrawlError, type ErrorCode } from '../../core/errors.ts';
import type { CrawlStore } from '../crawl-store.ts';
import type { StoreCall, StoreReply } from './store-worker.ts';

const METHODS = [
  'putCollection', 'getCollection', 'listCollections', 'updateCollection', 'deleteCollection',
  'enqueue', 'requeue', 'releaseQuarantine', 'deleteUris', 'deleteSite', 'seen', 'sitesWithWork', 'lease', 'release', 'retry',
  'recoverLeases', 'dropQueued', 'counts',
  'getRecord', 'findByChecksum', 'complete', 'putRecord', 'listRecords', 'countRecords',
  'queueFeed', 'queueFeedFromRecords', 'pendingFeed', 'ackFeed', 'feedBacklog',
  'putSitemapMeta', 'getSitemapMeta', 'noteFeedLinks',
  'getRobots', 'putRobots', 'getSiteStats', 'putSiteStats', 'listSiteStats',
  'close',
] as const satisfies ReadonlyArray<keyof CrawlStore>;

// Every method of the contract is forwarded: adding one to CrawlStore without listing it here does not compile.
type Unlisted = Exclude<keyof CrawlStore, (typeof METHODS)[number]>;
const everyMethodListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyMethodListed;

const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './store-worker.ts' : './store-worker.js', import.meta.url);

function toError(e: NonNullable<StoreReply['error']>): Error {
  return e.code ? new TrawlError(e.code as ErrorCode, e.message) : new Error(e.message);
}

/** Opens the store at `path` on a new thread; rejects with the store's own error when it cannot be opened. */
export async function openWorkerCrawlStore(path: string, opts: { commitWindowMs?: number } = {}): Promise<CrawlStore & { readonly path: string }> {
  const worker = new Worker(WORKER_URL, { workerData: { path, ...opts } });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  let nextId = 1;
  let dead: Error | undefined;
  const opened = new Promise<void>((resolve, reject) => pending.set(0, { resolve: () => resolve(), reject }));
  worker.on('message', (m: StoreReply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error) p.reject(toError(m.error));
    else p.resolve(m.result);
  });
  const fail = (err: Error): void => {
    dead ??= new TrawlError('TRAWL_ERR_IO', `the crawl store thread stopped: ${err.message}`, { cause: err });
    for (const [id, p] of pending) {
      pending.delete(id);
      p.reject(dead);
    }
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
  try {
    await opened;
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  const call = (method: string, args: unknown[]): Promise<unknown> => {
    if (dead) return Promise.reject(dead);
    return new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, method, args } satisfies StoreCall);
    });
  };
  const store = { path } as Record<string, unknown>;
  for (const m of METHODS) store[m] = (...args: unknown[]) => call(m, args);
  store.close = async () => {
    if (!dead) await call('close', []);
    dead ??= new TrawlError('TRAWL_ERR_IO', 'the crawl store is closed');
    await worker.terminate();
  };
  return store as unknown as CrawlStore & { readonly path: string };
}
