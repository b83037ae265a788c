/**
 * HTML extraction on the second core. The crawl's main thread fetches,
 * checks scope and writes the stores; parsing a page (htmlparser2's
 * tokenizer, resolving every link) was a large share of its CPU, so pages
 * are parsed in a worker thread while the main thread goes on with other
 * fetches (bench/README.md, *The thread layout, measured*).
 *
 *   extract stage ──extract(body, url, opts)──► worker: extractHtml ──► HtmlExtraction
 *
 * A response body is usually a slice of a larger buffer (Buffer's 64 KiB
 * pool, or undici's read buffer), and cloning a slice copies the whole
 * buffer, several times the cost of the page alone. So the pages of a
 * batch are copied into one SharedArrayBuffer and go as views of it: one
 * copy of each page instead of three (out of the slice, into the
 * serializer, out of it in the worker), which cut the sender's
 * postMessage to a fraction (bench/README.md, *What changed*, 821da2f,
 * and *Link extraction, measured*). The result comes back packed
 * (extract-wire.ts). Pages go to the worker, and results come back, in
 * batches: one message per turn of the sender's event loop
 * (batched-post.ts). If the worker cannot start or
 * dies, the page is parsed on the calling thread instead, so extraction
 * never fails because of the pool; the worker is started again for the
 * next page.
 *
 * A crawler lends the pool its screened-URI cache (share) for the length
 * of a cycle: the cache's table lives in a SharedArrayBuffer, and the
 * worker leaves out of a page's links those the cache holds
 * (extract-wire.ts says what it leaves out and what it sends instead). A
 * page parsed on this thread, when the worker is down, keeps every link,
 * and the crawler screens them itself as before.
 */

import { Worker } from 'node:worker_threads';
import { BatchedPost } from '../core/batched-post.ts';
import type { FingerprintCache, SharedFingerprints } from '../core/fingerprint-cache.ts';
import { extractHtml, type ExtractHtmlOptions } from './html.ts';
import type { ExtractMessage, ExtractRequest } from './extract-worker.ts';
import { unpackExtraction, type PackedExtraction, type PooledExtraction } from './extract-wire.ts';

interface Pending {
  readonly resolve: (x: PooledExtraction) => void;
  readonly reject: (err: unknown) => void;
  readonly req: ExtractRequest;
}

/** The batch with its pages copied into one SharedArrayBuffer, each request holding a view of it (see the top). */
function sharePages(batch: ExtractMessage[]): ExtractMessage[] {
  let total = 0;
  for (const m of batch) if ('body' in m) total += m.body.byteLength;
  if (total === 0) return batch;
  const pages = new Uint8Array(new SharedArrayBuffer(total));
  let at = 0;
  return batch.map((m) => {
    if (!('body' in m)) return m;
    pages.set(m.body, at);
    const body = pages.subarray(at, at + m.body.byteLength);
    at += m.body.byteLength;
    return { ...m, body };
  });
}

/** Parses on this thread: the fallback, with extractHtml's own errors. */
function here(p: Pending): void {
  try {
    p.resolve(extractHtml(p.req.body, p.req.url, p.req.opts));
  } catch (err) {
    p.reject(err);
  }
}

/** The worker's file: the .ts source when run from a checkout, the .js build in a package. */
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './extract-worker.ts' : './extract-worker.js', import.meta.url);

type Reply = { id: number; result?: PackedExtraction; error?: string };

export class ExtractPool {
  private worker: Worker | undefined;
  /** The pages for the current worker, sent once per turn of the event loop (batched-post.ts). */
  private outbox: BatchedPost<ExtractMessage> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** The caches lent to the worker, lent again to a worker started after one died. */
  private readonly shares = new Map<number, SharedFingerprints>();
  private nextShare = 1;
  private broken = false;

  private start(): Worker | undefined {
    if (this.worker) return this.worker;
    if (this.broken) return undefined;
    let w: Worker;
    try {
      w = new Worker(WORKER_URL);
    } catch {
      this.broken = true;
      return undefined;
    }
    w.on('message', (replies: Reply[]) => {
      for (const m of replies) {
        const p = this.pending.get(m.id);
        if (!p) continue;
        this.pending.delete(m.id);
        // An error in the worker is the same error on this thread: parse here and let it surface as usual.
        if (m.result) p.resolve(unpackExtraction(m.result));
        else here(p);
      }
      if (this.pending.size === 0) w.unref();
    });
    const outbox = new BatchedPost<ExtractMessage>(
      (batch) => w.postMessage(sharePages(batch)),
      (req) => {
        // A page that cannot be sent is parsed here (a cache's memory always can be).
        if (!('id' in req)) return;
        const p = this.pending.get(req.id);
        if (!p) return;
        this.pending.delete(req.id);
        here(p);
      },
    );
    const fail = (): void => {
      if (this.worker !== w) return;
      this.worker = undefined;
      this.outbox = undefined;
      // What the dead worker held is parsed here.
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        here(p);
      }
    };
    w.on('error', fail);
    w.on('exit', fail);
    w.unref();
    this.worker = w;
    this.outbox = outbox;
    for (const [id, mem] of this.shares) outbox.send({ share: id, mem });
    return w;
  }

  /**
   * Lends the worker a screened-URI cache made with `shared`: pages
   * extracted with `screen: {id}` come back without the links it holds.
   * Returns the id, or undefined for a cache whose memory is not shared.
   * Take it back with unshare when the cache is dropped.
   */
  share(cache: FingerprintCache): number | undefined {
    const mem = cache.shared();
    if (!mem) return undefined;
    const id = this.nextShare++;
    this.shares.set(id, mem);
    this.outbox?.send({ share: id, mem });
    return id;
  }

  unshare(id: number): void {
    if (!this.shares.delete(id)) return;
    this.outbox?.send({ unshare: id });
  }

  /**
   * Like extractHtml, on the worker thread. Throws (rejects) only where
   * extractHtml would. With `screen`, the links held by the cache lent as
   * `screen.id` are left out and counted in `screened` (extract-wire.ts);
   * `ownTag` is the page's site's tag in that cache.
   */
  extract(body: Uint8Array, url: string, opts: ExtractHtmlOptions, screen?: { readonly id: number; readonly ownTag: number }): Promise<PooledExtraction> {
    const w = this.start();
    if (!w) return Promise.resolve(extractHtml(body, url, opts));
    // A cache taken back is gone from the worker too (the unshare went before this page): the page keeps its links.
    const req: ExtractRequest = { id: this.nextId++, body, url, opts, screen };
    return new Promise((resolve, reject) => {
      this.pending.set(req.id, { resolve, reject, req });
      if (this.pending.size === 1) w.ref();
      this.outbox!.send(req);
    });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}

let shared: ExtractPool | undefined;

/** One pool per process: the crawls of a daemon share the second core. */
export function sharedExtractPool(): ExtractPool {
  shared ??= new ExtractPool();
  return shared;
}
