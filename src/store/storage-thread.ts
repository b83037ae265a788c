/**
 * The storage thread: owns the SQLite connections of the process's crawl
 * stores and runs the method calls the main thread sends it (see
 * storage-client.ts).
 *
 *   {op: open, handle, kind, args}          → constructs the store
 *   {op: call, handle, method, args}        → store[method](...args)
 *   every message                           → {id, result | error}
 */

import { parentPort } from 'node:worker_threads';
import { isTrawlError } from '../core/errors.ts';
import { SqliteCrawlStore } from './sqlite/sqlite-crawl-store.ts';

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

function errorOf(err: unknown): StorageReply['error'] {
  return isTrawlError(err) ? { message: err.message, code: err.code } : { message: err instanceof Error ? err.message : String(err) };
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
  return result;
}

parentPort!.on('message', (m: StorageMessage) => {
  handle(m).then(
    (result) => parentPort!.postMessage({ id: m.id, result } satisfies StorageReply),
    (err: unknown) => parentPort!.postMessage({ id: m.id, error: errorOf(err) } satisfies StorageReply),
  );
});
