/**
 * Measuring (the daemon's /metrics): each fetch's duration and the body
 * bytes it received go to an observer. Composed outermost, and only when
 * the crawl was given an observer (`trawl serve`), so `trawl crawl` pays
 * nothing for it; when composed it costs one `then` per fetch and a few
 * additions (the observer keeps fixed arrays: no allocation per fetch).
 */

import type { FetchOutcome } from '../fetch-types.ts';
import type { FetchInterceptor } from '../interceptor.ts';

/** What a measured fetch is told to (src/stats/fetch-metrics.ts keeps it for a collection). */
export interface FetchObserver {
  /** A fetch ended with an outcome after `seconds` (a fetch the crawl's stop aborted is not observed). */
  observe(seconds: number): void;
  /** Body bytes received, as they came over the wire (before decompression). */
  addBytes(n: number): void;
}

/**
 * The body bytes of an outcome: a response's `bytesIn` less its header
 * block; a failure's `bytesIn` is what arrived of the body alone.
 */
export function bodyBytesIn(o: FetchOutcome): number {
  return o.kind === 'response' ? Math.max(0, o.bytesIn - o.headerBlock.length) : o.bytesIn;
}

export function measureFetch(observer: FetchObserver): FetchInterceptor {
  return (next) => (call) => next(call).then((o) => {
    observer.addBytes(bodyBytesIn(o));
    if (call.request.signal?.aborted !== true) observer.observe(o.durationMs / 1000);
    return o;
  });
}
