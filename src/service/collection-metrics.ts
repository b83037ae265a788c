/**
 * What `GET /metrics` reports of one collection, kept by the service for
 * the life of the process, under the collection's name: a CollectionAdd
 * that updates a collection replaces its ManagedCollection, and the
 * counters of Prometheus must still only grow until the process restarts.
 *
 *   counters = the crawls that ended (added as each ends)
 *            + the crawl running now (CollectionCrawl.counters(), read at the scrape)
 *   fetch    = FetchMetrics, told by every fetch of every crawl (latency, body bytes)
 *
 * A crawl's counters are added in the same synchronous step that detaches
 * it from its collection (CrawlerService.run), so a scrape counts each
 * crawl once: running or ended, never both, never neither.
 */

import type { Counters } from '../engine/cycle-stats.ts';
import { FetchMetrics } from '../stats/fetch-metrics.ts';

const NUMERIC = ['requests', 'stored', 'unchanged', 'duplicates', 'errors', 'deleted', 'retries', 'robotsRequests', 'bytesIn'] as const;
const MAPS = ['uriSkips', 'docSkips', 'httpStatus'] as const;

export function zeroCounters(): Counters {
  return { requests: 0, stored: 0, unchanged: 0, duplicates: 0, errors: 0, deleted: 0, retries: 0, robotsRequests: 0, bytesIn: 0, uriSkips: {}, docSkips: {}, httpStatus: {} };
}

/** Adds `from` into `into`. */
export function addCounters(into: Counters, from: Readonly<Counters>): void {
  for (const k of NUMERIC) into[k] += from[k];
  for (const k of MAPS) {
    const h = into[k];
    for (const [key, n] of Object.entries(from[k])) h[key] = (h[key] ?? 0) + n;
  }
}

export class CollectionMetrics {
  readonly fetch = new FetchMetrics();
  /** The counters of the crawls that ended in this process. */
  private readonly ended = zeroCounters();
  /**
   * URIs queued when no crawl runs: the count the last cycle ended with, or
   * read from the crawl store once; undefined when unknown (forget() after
   * an operation that changes the queue while no cycle runs).
   */
  queuedIdle: number | undefined;

  /** A crawl ended (or failed): its counters join the ended ones; `queued` is what it left queued, when known. */
  crawlEnded(c: Readonly<Counters>, queued: number | undefined): void {
    addCounters(this.ended, c);
    this.queuedIdle = queued;
  }

  /** The queue changed while no cycle runs. */
  forgetQueue(): void {
    this.queuedIdle = undefined;
  }

  /** Every crawl's counters of this process: the ended ones plus `running`'s. A new object. */
  counters(running: Readonly<Counters> | undefined): Counters {
    const out = zeroCounters();
    addCounters(out, this.ended);
    if (running) addCounters(out, running);
    return out;
  }
}
