/**
 * The engine's public types: what a crawl is given (CrawlerOptions), what it
 * reports while it runs (CrawlEvent, Progress) and what a cycle returns
 * (CycleSummary). `crawler.ts` re-exports them.
 */

import type { EgressPolicy, LookupFn } from '../fetch/egress.ts';
import type { FetchObserver } from '../fetch/http-fetcher.ts';
import type { ExtractPool } from '../extract/extract-pool.ts';
import type { ContentStore } from '../store/content-store.ts';
import type { CrawlStore, CycleRow, CycleStatus, QueuedUri } from '../store/crawl-store.ts';
import type { LimitStop } from './cycle-limits.ts';
import type { ScreenedCaches } from './link-screening.ts';

/** Something a crawl reports: a fetch, a URI or document turned away, robots.txt, the cycle, an error, the disk. */
export interface CrawlEvent {
  /** `scheduler`: a decision of refresh_mode adaptive, under log.scheduler text (adaptive-refresh.ts). `login`: a form login (MS-FSCCFG 2.2.4.31) was tried, ok or failed, named in the message (form-logins.ts). `disk`: the data directory's disk filled up, went below limits.disk_free, or has space again; or a part of `limits` is not honoured (disk-guard.ts). */
  readonly type: 'fetch' | 'skip' | 'robots' | 'cycle' | 'error' | 'disk' | 'login' | 'elastic' | 'scheduler';
  readonly url?: string;
  readonly status?: number;
  /**
   * A `skip`'s skip code; an `error`'s skip code where one applies (`cr`, a
   * connection failure's `co`…), else its `TRAWL_ERR_*` code (core/errors.ts).
   */
  readonly code?: string;
  readonly message: string;
  /**
   * Only while the Elastic event log is on (trawl_elastic.events; elastic-events.ts):
   * the page a skipped link was found on, a redirect's target, a fetch's body
   * bytes and duration, and the event's record in the Elastic crawler's terms
   * (type `elastic`: an event only that log has).
   */
  readonly from?: string;
  readonly location?: string;
  /** A redirect's place in its chain: 1 for the first redirect from a page queued as a link or seed. */
  readonly redirectCount?: number;
  readonly bytes?: number;
  readonly durationMs?: number;
  readonly ecs?: Readonly<Record<string, unknown>>;
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
  /** Each change of the cycle's status (cycle-lifecycle.ts), as it happens. */
  readonly onCycle?: (c: CycleRow) => void;
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
  /**
   * A CiteSeerX submitted job that reports failures (docs/citeseerx.md "URL
   * Status Messages"): each URI that finally fails, or is refused before any
   * request, queues its status in the feed outbox (STATUS_DESTINATION), with
   * its fetch's transaction. Absent: nothing of the kind is done.
   */
  readonly reportFailures?: boolean;
  /** Where pages are parsed; default: the process's worker thread (src/extract/extract-pool.ts). */
  readonly extractPool?: ExtractPool;
  /** How many sites' robots rules stay in memory (default ROBOTS_MEMO_MAX; the rest are read back from the crawl store). */
  readonly robotsMemo?: number;
  /** Entries the screened URI cache starts with when cachesize.screened is unset (default SCREENED_START; tests make it small to see it grow). */
  readonly screenedStart?: number;
  /**
   * Where the screened-URI cache is kept between cycles, for crawl objects
   * made one per cycle (trawl serve's, CollectionRuntime.newCrawl); default:
   * this crawl object's own (link-screening.ts, ScreenedCaches).
   */
  readonly screenedCaches?: ScreenedCaches;
  /**
   * A node of a multinode installation (docs/multinode.md): which sites are
   * routed to this node. Absent on a single node: every site is its own,
   * and nothing of this is asked.
   */
  readonly routing?: SiteRouting;
}

/** The site routing of a multinode installation, as a crawl of one node sees it (service/node-membership.ts). */
export interface SiteRouting {
  /** 'me': routed to this node; 'other': to another node; undefined: not routed yet (the next routing step decides). */
  ownerOf(site: string): 'me' | 'other' | undefined;
  /** No fetch may start: this node could not renew its heartbeat (the others may be taking its sites). */
  readonly fenced: boolean;
  /** True when the collection has URIs queued or leased anywhere in the installation: this node's cycle goes on. */
  pending(): Promise<boolean>;
  /** How long an idle node waits for work before it asks again (ms). */
  readonly pollMs: number;
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
  /** The cycle's ID and the status it ended with (cycle-lifecycle.ts). */
  readonly cycleId: string;
  readonly cycleStatus: CycleStatus;
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
