/**
 * The engine's public types: what a crawl is given (CrawlerOptions), what it
 * reports while it runs (CrawlEvent, Progress) and what a cycle returns
 * (CycleSummary). `crawler.ts` re-exports them.
 */

import type { EgressPolicy, LookupFn } from '../fetch/egress.ts';
import type { FetchObserver } from '../fetch/http-fetcher.ts';
import type { ExtractPool } from '../extract/extract-pool.ts';
import type { ContentStore } from '../store/content-store.ts';
import type { CrawlStore, QueuedUri } from '../store/crawl-store.ts';
import type { LimitStop } from './cycle-limits.ts';

/** Something a crawl reports: a fetch, a URI or document turned away, robots.txt, the cycle, an error, the disk. */
export interface CrawlEvent {
  /** `scheduler`: a decision of refresh_mode adaptive, under log.scheduler text (adaptive-refresh.ts). `login`: a form login (MS-FSCCFG 2.2.4.31) was tried, ok or failed, named in the message (form-logins.ts). `disk`: the data directory's disk filled up, went below limits.disk_free, or has space again; or a part of `limits` is not honoured (disk-guard.ts). */
  readonly type: 'fetch' | 'skip' | 'robots' | 'cycle' | 'error' | 'disk' | 'login' | 'scheduler';
  readonly url?: string;
  readonly status?: number;
  /**
   * A `skip`'s skip code; an `error`'s skip code where one applies (`cr`, a
   * connection failure's `co`…), else its `TRAWL_ERR_*` code (core/errors.ts).
   */
  readonly code?: string;
  readonly message: string;
}

export interface CrawlerOptions {
  readonly store: CrawlStore;
  readonly content: ContentStore;
  /** Overrides of the collection's trawl_egress settings (CLI flags). */
  readonly egress?: Partial<EgressPolicy>;
  /** Requests in flight at once over all sites. */
  readonly maxConcurrency?: number;
  /** Stop starting new fetches after this many in this run (the cycle stays unfinished). */
  readonly maxPages?: number;
  readonly node?: string;
  /** Base directory for relative start_uri_files. */
  readonly baseDir?: string;
  /** The data directory: its free space is watched (limits.disk_free) and reported when a write fails for lack of it. */
  readonly dataDir?: string;
  /** How often the data directory's free space is checked (default DISK_POLL_MS). */
  readonly diskPollMs?: number;
  readonly lookup?: LookupFn;
  readonly now?: () => number;
  readonly onEvent?: (e: CrawlEvent) => void;
  /**
   * send_links_to: hands every link this collection extracts to another
   * collection. Absent: such links are dropped with an error event.
   */
  readonly sendLinks?: (target: string, links: readonly QueuedUri[]) => Promise<void>;
  /** Refresh-only mode (MS-FSCADM CollectionEnableRefreshOnly): no new URIs are queued from links. */
  readonly refreshOnly?: () => boolean;
  /** Told every fetch's duration and body bytes (the daemon's /metrics); absent: nothing is measured. */
  readonly fetchObserver?: FetchObserver;
  /** Each DNS lookup the crawl makes (global DNS statistics). */
  readonly onDnsLookup?: (ok: boolean, code: string | undefined) => void;
  /** Sites paused until a time (ms): quarantined or preempted by an operator. */
  readonly heldSites?: () => ReadonlyMap<string, number>;
  /** Quarantined sites (until when, ms): URIs found for them go to their separate quarantine queue. */
  readonly quarantinedSites?: () => ReadonlyMap<string, number>;
  /**
   * The content destinations documents are fed to (src/sinks/feeding.ts):
   * each stored, changed or deleted document queues an operation for each,
   * in the feed outbox, with its fetch's transaction. Absent or empty: no
   * feeding (the collection has no sinks).
   */
  readonly feedTo?: readonly string[];
  /** Operations were queued in the feed outbox (wakes the feeder). */
  readonly onFeed?: () => void;
  /** Where pages are parsed; default: the process's worker thread (src/extract/extract-pool.ts). */
  readonly extractPool?: ExtractPool;
  /** How many sites' robots rules stay in memory (default ROBOTS_MEMO_MAX; the rest are read back from the crawl store). */
  readonly robotsMemo?: number;
  /** Entries the screened URI cache starts with when cachesize.screened is unset (default SCREENED_START; tests make it small to see it grow). */
  readonly screenedStart?: number;
}

export interface CycleSummary {
  readonly collection: string;
  readonly epoch: number;
  readonly resumed: boolean;
  /** The cycle ran to completion (nothing left queued). */
  readonly complete: boolean;
  /**
   * Why the loop ended: it ran out of work, `--max-pages`, a stop, or a
   * trawl_limits bound (max_crawl_duration, max_unique_urls: the cycle is
   * then complete, what was still queued abandoned; cycle-limits.ts).
   */
  readonly stoppedBy: 'done' | 'max-pages' | 'signal' | LimitStop;
  /** URIs still queued when a trawl_limits bound ended the cycle, dropped from it. */
  readonly abandoned: number;
  readonly requests: number;
  readonly stored: number;
  readonly unchanged: number;
  readonly duplicates: number;
  readonly errors: number;
  readonly deleted: number;
  readonly retries: number;
  readonly robotsRequests: number;
  readonly bytesIn: number;
  readonly uriSkips: Readonly<Record<string, number>>;
  readonly docSkips: Readonly<Record<string, number>>;
  readonly httpStatus: Readonly<Record<string, number>>;
  readonly queued: number;
  readonly durationMs: number;
}

export interface Progress {
  readonly requests: number;
  readonly stored: number;
  readonly errors: number;
  readonly queued: number;
  readonly inFlight: number;
  readonly activeSites: number;
  readonly elapsedMs: number;
}
