/**
 * The storage thread: owns the SQLite connections of the process's crawl
 * stores and runs the method calls the main thread sends it (see
 * storage-client.ts).
 *
 *   {op: open, handle, kind, args}          → constructs the store
 *   {op: call, handle, method, args}        → store[method](...args)
 *   every message                           → {id, result | error}
 *
 * `complete` and `enqueue` answer with the URIs they queued, which are some
 * of those they were given: they travel back as positions in the given
 * list (storage-answers.ts), and the proxy answers with the caller's own
 * objects, as a store on the calling thread does. Cloning them back was a
 * QueuedUri of three URLs for each new link of every page.
 *
 * Both ways, the messages of one turn of the sender's event loop travel as
 * one array (batched-post.ts).
 */

import { parentPort } from 'node:worker_threads';
import { BatchedPost } from '../core/batched-post.ts';
import { diskFullReason } from '../core/disk-full.ts';
import { isTrawlError } from '../core/errors.ts';
import { SqliteCrawlStore } from './sqlite/sqlite-crawl-store.ts';
import { positionsIn, SUBSET_ANSWERS } from './storage-answers.ts';

export type StorageMessage =
  | { readonly id: number; readonly op: 'open'; readonly handle: number; readonly args: [path: string, opts: { commitWindowMs?: number }] }
  | { readonly id: number; readonly op: 'call'; readonly handle: number; readonly method: string; readonly args: unknown[] };

export interface StorageReply {
  readonly id: number;
  readonly result?: unknown;
  readonly error?: { readonly message: string; readonly code?: string };
}

type Target = Record<string, (...a: unknown[]) => Promise<unknown>>;

const objects = new Map<number, Target>();

/**
 * A reply keeps only a message and a TrawlError code, so a full disk is
 * named here, where SQLite's result code (`errcode`) is still known: the
 * crawl waits for space on TRAWL_ERR_DISK_FULL instead of failing.
 */
function errorOf(err: unknown, path: string | undefined): StorageReply['error'] {
  if (isTrawlError(err)) return { message: err.message, code: err.code };
  const message = err instanceof Error ? err.message : String(err);
  const full = diskFullReason(err);
  if (full !== undefined) return { message: `cannot write the crawl store${path !== undefined ? ` ${path}` : ''}: ${message} (${full})`, code: 'TRAWL_ERR_DISK_FULL' };
  return { message };
}

async function handle(m: StorageMessage): Promise<unknown> {
  if (m.op === 'open') {
    const obj = new SqliteCrawlStore(...m.args);
    objects.set(m.handle, obj as unknown as Target);
    return undefined;
  }
  const obj = objects.get(m.handle);
  if (!obj) throw new Error(`storage handle ${m.handle} is not open`);
  const fn = obj[m.method];
  if (typeof fn !== 'function') throw new Error(`the store has no method ${m.method}`);
  const result = await fn.apply(obj, m.args);
  if (m.method === 'close') objects.delete(m.handle);
  const subsetOf = SUBSET_ANSWERS[m.method];
  return subsetOf ? positionsIn(subsetOf(m.args), result as unknown[]) : result;
}

// Replies go back in batches too (batched-post.ts); one that cannot be cloned is answered with the reason.
const replies = new BatchedPost<StorageReply>(
  (batch) => parentPort!.postMessage(batch),
  (r, err) => parentPort!.postMessage([{ id: r.id, error: { message: `cannot send the result back: ${(err as Error).message}` } } satisfies StorageReply]),
);

parentPort!.on('message', (batch: StorageMessage[]) => {
  for (const m of batch) {
    handle(m).then(
      (result) => replies.send({ id: m.id, result }),
      (err: unknown) => replies.send({ id: m.id, error: errorOf(err, m.op === 'open' ? m.args[0] : (objects.get(m.handle) as { path?: string } | undefined)?.path) }),
    );
  }
});
