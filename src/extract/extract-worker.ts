/**
 * The worker thread behind ExtractPool: runs extractHtml on pages the main
 * thread sends, in batches, and answers each batch with one message of the
 * results packed for the way back (extract-wire.ts).
 *
 * The main thread can also lend it a crawler's screened-URI cache (the
 * cache's shared memory, read here through a FingerprintReader); a page
 * that names one comes back without the links that cache holds.
 */

import { parentPort } from 'node:worker_threads';
import { FingerprintReader, type SharedFingerprints } from '../core/fingerprint-cache.ts';
import { extractHtml, type ExtractHtmlOptions } from './html.ts';
import { packExtraction } from './extract-wire.ts';

export interface ExtractRequest {
  readonly id: number;
  readonly body: Uint8Array;
  readonly url: string;
  readonly opts: ExtractHtmlOptions;
  /** Leave out the links held by the cache lent as `id`; `ownTag` is the page's site's tag in it. */
  readonly screen?: { readonly id: number; readonly ownTag: number };
}

/** A screened-URI cache lent to the worker, or taken back. */
export type ShareMessage = { readonly share: number; readonly mem: SharedFingerprints } | { readonly unshare: number };

export type ExtractMessage = ExtractRequest | ShareMessage;

const caches = new Map<number, FingerprintReader>();

// A batch of pages is answered with one message (batched-post.ts); the pool parses again on its own thread a page answered with an error.
parentPort?.on('message', (batch: ExtractMessage[]) => {
  const replies = [];
  for (const m of batch) {
    if ('share' in m) caches.set(m.share, new FingerprintReader(m.mem));
    else if ('unshare' in m) caches.delete(m.unshare);
    else {
      try {
        const s = m.screen;
        const cache = s && caches.get(s.id);
        const screenWith = s && cache ? { cache, ownTag: s.ownTag, pageUrl: m.url } : undefined;
        replies.push({ id: m.id, result: packExtraction(extractHtml(m.body, m.url, m.opts), screenWith) });
      } catch (err) {
        replies.push({ id: m.id, error: (err as Error).message });
      }
    }
  }
  if (replies.length > 0) parentPort!.postMessage(replies);
});
