/**
 * The crawl store contract: collections, the frontier (per-site queues and
 * the seen set), the crawl store proper (one record per URI), per-site
 * state (robots.txt cache, statistics) — everything that must survive a
 * `kill -9` (MS-FSCADM 3.3.1).
 *
 *            enqueue ──► frontier row (state QUEUED, epoch = this cycle)
 *                            │ lease(site, n)
 *                            ▼
 *                        state LEASED ──── crash ──► recoverLeases() ──► QUEUED
 *                            │ complete(...)           (re-fetched, never lost)
 *                            ▼
 *   records ◄── upsert ── state DONE ──► discovered links enqueued, same transaction
 *
 * Every method is atomic. `complete` in particular marks the URI done,
 * writes its record, enqueues what it discovered and saves the site's
 * statistics in one transaction: after a crash either all of it happened or
 * none of it did (and the URI is fetched again).
 *
 * Dialects (SQLite now, PostgreSQL later) implement this interface and pass
 * the same suite, `test/store/crawl-store-suite.ts`.
 */

import type { DocSkipCode } from '../core/skip-codes.ts';

/** A URI waiting in (or entering) the frontier. */
export interface QueuedUri {
  readonly url: string;
  /** scheme://host:port */
  readonly site: string;
  /** Links followed from a start URI (redirects do not count). */
  readonly depth: number;
  /** Page hops for crawlmode DEPTH:n; reset on a domain change when reset_level is on. */
  readonly hops: number;
  /** Redirects followed to reach this URI. */
  readonly redirects: number;
  readonly parent: string | undefined;
  /** Priority level, 1 = highest (workqueue_priority). */
  readonly priority: number;
  /** The sub-collection the URI belongs to, if any. */
  readonly sub: string | undefined;
  /** What the URI is for: see URI_FLAGS. 0 (absent) for an ordinary page. */
  readonly flags?: number;
}

/**
 * Bits of QueuedUri.flags, kept in the frontier so they survive a restart.
 *   SITEMAP   fetch it as a sitemap (bits 8–11: its sitemap-index depth)
 *   FEED      fetch it as an RSS/Atom/RDF channel
 *   FROM_FEED found in a channel (rss.follow_links decides whether its links are followed)
 *   SENT      sent by another collection (send_links_to): scope-checked when leased
 *   QUARANTINED found for a quarantined site (MS-FSCADM CollectionQuarantineSite):
 *             a separate queue, never leased until releaseQuarantine
 *   REFEED    feed the document again after the fetch even if it did not change
 *             (MS-FSCADM CollectionRefetchURI Refeed)
 */
export const URI_FLAGS = { SITEMAP: 1, FEED: 2, FROM_FEED: 4, SENT: 8, QUARANTINED: 16, REFEED: 32 } as const;
/**
 * Crash strikes: bits 16–17 of a frontier row's flags, kept by the store
 * (a caller never passes them in a QueuedUri).
 *
 *   leased when the process died ── recoverLeases ──► queued with a strike: a suspect
 *   suspect leased (the strike is cleared) ── armSuspect, just before its fetch ──► armed
 *   armed when the process died again ── recoverLeases ──► crashed twice: stays leased, handed back
 *   completed ──► strike cleared
 *
 * The crawler fetches suspects one at a time, so that a second crash
 * names the one URI that was armed, not every URI that happened to be in
 * flight at both crashes: one poisoned URI cannot keep a daemon down.
 */
export const CRASH_STRIKE = 1 << 16;
export const CRASH_STRIKES_MASK = 3 << 16;
/** A URI leased with a crash strike: it was in flight when the process last died. */
export const isSuspect = (flags: number | undefined): boolean => ((flags ?? 0) & CRASH_STRIKES_MASK) !== 0;
export const sitemapDepthOf = (flags: number | undefined): number => ((flags ?? 0) >> 8) & 0xf;
/** Bits 12–15: documents outside a focused crawl's languages passed through to reach this URI (focused depth). */
export const focusHopsOf = (flags: number | undefined): number => ((flags ?? 0) >> 12) & 0xf;
export const withFocusHops = (flags: number, hops: number): number => (flags & ~0xf000) | (Math.min(hops, 15) << 12);
export const withSitemapDepth = (flags: number, depth: number): number => (flags & 0xff) | (Math.min(depth, 15) << 8);

/** What a sitemap said of a URL, kept for later scheduling. */
export interface SitemapMeta {
  readonly url: string;
  readonly lastmod: string | undefined;
  readonly changefreq: string | undefined;
  readonly priority: number | undefined;
}

export interface LeasedUri extends QueuedUri {
  readonly id: number;
  /** Retries already made in this cycle (http_errors RETRY:X). */
  readonly retries: number;
  /**
   * False when the store held no record of the URI at the lease, so that
   * getRecord would have answered undefined (a URI never crawled: every
   * URI of a first crawl); undefined when the store does not say.
   */
  readonly crawled?: boolean;
}

export type RecordStatus = 'stored' | 'unchanged' | 'duplicate' | 'redirect' | 'skipped' | 'error' | 'deleted';

/** One row of the crawl store: what trawl knows about a URI. */
export interface UriRecord {
  readonly url: string;
  readonly site: string;
  readonly status: RecordStatus;
  /** The last HTTP status; undefined for network errors. */
  readonly httpStatus: number | undefined;
  /** Hex digest of the content (see csum_cut_off); kept across unchanged refetches. */
  readonly checksum: string | undefined;
  readonly lastCrawledMs: number;
  readonly etag: string | undefined;
  readonly lastModified: string | undefined;
  /** Consecutive failures (http_errors DELETE:X counts these). */
  readonly errorCount: number;
  readonly skipCode: DocSkipCode | undefined;
  readonly mime: string | undefined;
  readonly size: number | undefined;
  readonly contentRef: string | undefined;
  /** For a duplicate: the URI whose content it repeats. */
  readonly duplicateOf: string | undefined;
  /** For a redirect: where it pointed. */
  readonly redirectTo: string | undefined;
  readonly depth: number;
  readonly parent: string | undefined;
  /** The refresh cycle that last wrote the record. */
  readonly epoch: number;
}

/** Which page of records listRecordPage returns; positions are opaque numbers from an earlier page. */
export interface RecordPageRequest {
  readonly from?: number;
  readonly backwards?: boolean;
  readonly limit: number;
}

export interface RecordPage {
  /** In the order they were first written. */
  readonly records: UriRecord[];
  /** The positions of the first and last record (0 when the page is empty). */
  readonly first: number;
  readonly last: number;
}

export interface CollectionRow {
  readonly name: string;
  readonly configXml: string;
  /** MS-FSCADM 2.2.3.4: crawling, suspended, compacting, zombie. */
  readonly state: string;
  /** The current refresh cycle; 0 before the first one. */
  readonly epoch: number;
  readonly cycleStartedMs: number | undefined;
  readonly cycleEndedMs: number | undefined;
  readonly createdMs: number;
  /** Free-form JSON the engine keeps per collection (refresh-only mode, paused destinations, …). */
  readonly extra: Record<string, unknown>;
}

export interface RobotsRow {
  readonly fetchedMs: number;
  /** HTTP status, or 0 for timeout, -1 for a network error. */
  readonly status: number;
  readonly body: Uint8Array;
}

export interface SiteWork {
  readonly site: string;
  readonly queued: number;
}

export interface FrontierCounts {
  readonly queued: number;
  readonly leased: number;
  readonly done: number;
}

/** The outcome of one fetch, written by `complete`. */
export interface Completion {
  readonly leaseId: number;
  /** The site the URI belongs to (where siteStats go). */
  readonly site: string;
  /** The URI's new record; undefined when nothing is recorded (e.g. refused by robots.txt). */
  readonly record?: UriRecord;
  /** Links found; those not yet seen in `epoch` are queued. */
  readonly discovered: readonly QueuedUri[];
  /** The site's statistics after this fetch (opaque JSON). */
  readonly siteStats?: string;
  /** Content submissions this fetch causes (the feed outbox), written in the same transaction. */
  readonly feed?: readonly FeedOp[];
}

/**
 * One content submission waiting in the feed outbox: a document to send to
 * a content destination (MS-FSCCFG 2.2.4.9 feeding), or to remove from it.
 * `add` is a document the destination has not had, `update` one it may have
 * (modified, refed or reprocessed). The document itself is read from the
 * crawl store and the content store when it is sent.
 */
export interface FeedOp {
  readonly destination: string;
  readonly url: string;
  readonly op: 'add' | 'update' | 'delete';
}

/** A FeedOp in the outbox; `ver` changes whenever the URL's operation is replaced. */
export interface PendingFeedOp extends FeedOp {
  readonly id: number;
  readonly ver: number;
}

/** Which stored documents to send again (MS-FSCADM CollectionReprocess*). */
export interface FeedSelection {
  readonly site?: string;
  /** URL prefix (with `site`: CollectionReprocessSitePrefix). */
  readonly prefix?: string;
  readonly urls?: readonly string[];
}

export interface CrawlStore {
  // ---------------------------------------------------------- collections
  /** Adds or replaces a collection's configuration; keeps its state and epoch when it exists. */
  putCollection(name: string, configXml: string, nowMs: number): Promise<void>;
  /** undefined when there is no such collection. */
  getCollection(name: string): Promise<CollectionRow | undefined>;
  listCollections(): Promise<CollectionRow[]>;
  updateCollection(name: string, patch: Partial<Pick<CollectionRow, 'state' | 'epoch' | 'cycleStartedMs' | 'cycleEndedMs' | 'extra'>>): Promise<void>;
  /** Removes the collection and every row that belongs to it. Idempotent. */
  deleteCollection(name: string): Promise<void>;

  // ------------------------------------------------------------- frontier
  /**
   * Queues the URIs not yet seen in `epoch` (the seen set: one entry per
   * collection and URL and cycle). `front` puts them before everything
   * queued so far (urgent URIs, refresh_mode prepend). Returns the URIs
   * actually added, in order; an already-seen URI is not returned.
   */
  enqueue(collection: string, epoch: number, uris: readonly QueuedUri[], front?: boolean): Promise<QueuedUri[]>;
  /**
   * Queues URIs again even if they were already seen in `epoch` (an
   * operator's refetch); a URI being fetched right now is left alone. The
   * URIs' flags are added to those the queued entry has.
   */
  requeue(collection: string, epoch: number, uris: readonly QueuedUri[], front?: boolean): Promise<number>;
  /** Ends a site's quarantine: its quarantined URIs join its ordinary queue. Returns how many. */
  releaseQuarantine(collection: string, site: string): Promise<number>;
  /**
   * Forgets URIs (records and queue entries); returns the content references
   * to delete. A forgotten document that had content is queued for deletion
   * at each destination of `feedTo`, in the same transaction.
   */
  deleteUris(collection: string, urls: readonly string[], feedTo?: readonly string[]): Promise<string[]>;
  /** Forgets a whole site of the collection, like deleteUris; returns the content references to delete. */
  deleteSite(collection: string, site: string, feedTo?: readonly string[]): Promise<string[]>;
  /** True when the URL was queued (or crawled) in `epoch`. */
  seen(collection: string, epoch: number, url: string): Promise<boolean>;
  /** Sites that have queued URIs, with their counts. */
  sitesWithWork(collection: string): Promise<SiteWork[]>;
  /** Leases up to `n` queued URIs of one site: highest priority first, then first in, first out. */
  lease(collection: string, site: string, n: number): Promise<LeasedUri[]>;
  /** Puts leased URIs back in the queue (a graceful stop), in their old order. */
  release(collection: string, ids: readonly number[]): Promise<void>;
  /** Puts a leased URI back at the end of its queue with one more retry counted. */
  retry(collection: string, id: number): Promise<void>;
  /**
   * After a crash: every leased URI of the collection back to queued, each
   * with a crash strike (see CRASH_STRIKE), and how many. An armed URI
   * (armSuspect) was in flight at this crash and the one before: it stays
   * leased and is returned in `crashedTwice`, for the caller to complete
   * (set it aside). Idempotent: until completed, it is returned again.
   */
  recoverLeases(collection: string): Promise<{ recovered: number; crashedTwice: LeasedUri[] }>;
  /**
   * Marks a leased suspect (isSuspect of its flags at the lease) as being
   * fetched now. Durable when it resolves: the fetch starts after that.
   */
  armSuspect(collection: string, id: number): Promise<void>;
  /**
   * Drops queued URIs (refresh_mode scratch at a cycle start; a site left for
   * the cycle): all of them, or one site's, and only those queued for a cycle
   * before `beforeEpoch` when it is given. Returns how many.
   */
  dropQueued(collection: string, site?: string, beforeEpoch?: number): Promise<number>;
  counts(collection: string): Promise<FrontierCounts>;

  // --------------------------------------------------------- crawl store
  /** The URI's record; undefined when it was never crawled. */
  getRecord(collection: string, url: string): Promise<UriRecord | undefined>;
  /** Another URI already stored with this checksum (diffcheck), if any. */
  findByChecksum(collection: string, checksum: string, exceptUrl: string): Promise<string | undefined>;
  /** Writes the fetch outcome atomically (see the file comment). Returns the discovered URIs that were queued. */
  complete(collection: string, epoch: number, c: Completion): Promise<QueuedUri[]>;
  /** Writes one record outside a fetch (e.g. a document deleted when its channel link expired). */
  putRecord(collection: string, record: UriRecord): Promise<void>;
  /** Every record of the collection, in URL order (tests, exports). */
  listRecords(collection: string): Promise<UriRecord[]>;
  /**
   * A page of the collection's records in the order they were first
   * written, for walking a large store without holding all of it: the
   * `limit` records after position `from` (from the start without it), or
   * with `backwards`, the last `limit` records before `from` (from the end
   * without it), still in written order. Pass on a page's `last` to go
   * forwards, its `first` to go backwards.
   */
  listRecordPage(collection: string, page: RecordPageRequest): Promise<RecordPage>;
  /** Number of records, optionally of one site and/or one status. */
  countRecords(collection: string, filter?: { site?: string; status?: RecordStatus }): Promise<number>;

  // ------------------------------------------------------- feed outbox
  /**
   * Queues content submissions. A URL has at most one pending operation per
   * destination: a newer one replaces it (an `update` of a pending `add`
   * stays an `add`) and keeps its place in the order.
   */
  queueFeed(collection: string, ops: readonly FeedOp[]): Promise<void>;
  /** Queues an `update` to each destination for every stored document that matches. Returns how many documents. */
  queueFeedFromRecords(collection: string, destinations: readonly string[], which: FeedSelection): Promise<number>;
  /** The oldest pending operations of a destination with id above `afterId`. */
  pendingFeed(collection: string, destination: string, afterId: number, limit: number): Promise<PendingFeedOp[]>;
  /** Removes sent operations; one replaced since it was read (another `ver`) stays. */
  ackFeed(collection: string, sent: ReadonlyArray<Pick<PendingFeedOp, 'id' | 'ver'>>): Promise<void>;
  /** Pending operations per destination. */
  feedBacklog(collection: string): Promise<Record<string, number>>;

  // ------------------------------------------------------ sitemaps, feeds
  /** Records sitemap metadata (lastmod, changefreq, priority); a later entry for a URL replaces the earlier one. */
  putSitemapMeta(collection: string, entries: readonly SitemapMeta[]): Promise<void>;
  getSitemapMeta(collection: string, url: string): Promise<SitemapMeta | undefined>;
  /**
   * Notes links of a channel (first-seen time is kept for links already
   * known), then expires the oldest beyond `maxCount` and those older than
   * `maxAgeMs` (0 = no age limit). Returns the expired links, which are
   * forgotten (MS-FSCCFG 2.2.4.30 max_link_count, max_link_age).
   */
  noteFeedLinks(collection: string, feed: string, urls: readonly string[], nowMs: number, maxCount: number, maxAgeMs: number): Promise<string[]>;

  // ---------------------------------------------------------------- sites
  getRobots(collection: string, site: string): Promise<RobotsRow | undefined>;
  putRobots(collection: string, site: string, row: RobotsRow): Promise<void>;
  /** The site's last saved statistics (opaque JSON), or undefined. */
  getSiteStats(collection: string, site: string): Promise<string | undefined>;
  putSiteStats(collection: string, site: string, json: string): Promise<void>;
  /** putSiteStats for many sites in one transaction (a cycle's end saves every site's). */
  putSiteStatsMany(collection: string, rows: ReadonlyArray<{ readonly site: string; readonly json: string }>): Promise<void>;
  /**
   * The collection's sites' statistics in site order: all of them, or a page
   * of at most `limit` sites after the site `after` (a broad crawl reads them
   * page by page instead of in one answer).
   */
  listSiteStats(collection: string, page?: { readonly after?: string; readonly limit: number }): Promise<Array<{ site: string; json: string }>>;

  /** Makes everything durable and releases the store. */
  close(): Promise<void>;
}
