/**
 * The thread that owns the SQLite crawl store for WorkerCrawlStore: it
 * opens the database, runs each method call it receives on it, and answers
 * with the result or the error.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { isTrawlError } from '../../core/errors.ts';
import { SqliteCrawlStore } from './sqlite-crawl-store.ts';

export interface StoreCall {
  readonly id: number;
  readonly method: string;
  readonly args: unknown[];
}

export interface StoreReply {
  readonly id: number;
  readonly result?: unknown;
  readonly error?: { readonly message: string; readonly code?: string };
}

function errorOf(err: unknown): StoreReply['error'] {
  return isTrawlError(err) ? { message: err.message, code: err.code } : { message: (err as Error).message ?? String(err) };
}

const { path, commitWindowMs } = workerData as { path: string; commitWindowMs?: number };
let store: SqliteCrawlStore | undefined;
let openError: StoreReply['error'];
try {
  store = new SqliteCrawlStore(path, commitWindowMs !== undefined ? { commitWindowMs } : {});
} catch (err) {
  openError = errorOf(err);
}

parentPort!.on('message', (m: StoreCall) => {
  if (!store) {
    parentPort!.postMessage({ id: m.id, error: openError } satisfies StoreReply);
    return;
  }
  const fn = (store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[m.method];
  if (typeof fn !== 'function') {
    parentPort!.postMessage({ id: m.id, error: { message: `the crawl store has no method ${m.method}` } } satisfies StoreReply);
    return;
  }
  fn.apply(store, m.args).then(
    (result) => parentPort!.postMessage({ id: m.id, result } satisfies StoreReply),
    (err: unknown) => parentPort!.postMessage({ id: m.id, error: errorOf(err) } satisfies StoreReply),
  );
});
parentPort!.postMessage({ id: 0, ...(openError ? { error: openError } : { result: 'open' }) } satisfies StoreReply);
