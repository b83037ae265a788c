/**
 * The crawl store contract: everything that must survive a `kill -9`
 * (MS-FSCADM 3.3.1), as five roles, each a contract of its own, and the one
 * operation that spans them:
 *
 *   catalog-store.ts   CatalogStore   collections: configuration, state, epoch
 *   frontier-store.ts  FrontierStore  per-site queues, the seen set, leases, crash strikes
 *   record-store.ts    RecordStore    one record per URI
 *   feed-outbox.ts     FeedOutbox     content submissions waiting to be sent
 *   site-store.ts      SiteStore      robots.txt cache, site statistics, sitemap metadata, channel links
 *
 *   complete(lease) ── one transaction ──► frontier: the lease done, the discovered links queued
 *                                          records: the URI's record written
 *                                          sites:   the site's statistics saved
 *                                          outbox:  the fetch's feed operations queued
 *
 * Every method is atomic. After a crash either all of a `complete`
 * happened or none of it did (and the URI is fetched again).
 *
 * Dialects (`sqlite/` now, `postgres/` later) implement CrawlStore and pass
 * the same suite, `test/store/crawl-store-suite.ts`. Group commit (many
 * completions in one transaction) is not a dialect's business:
 * `group-commit.ts` does it above any dialect that can write a batch of
 * completions in one transaction.
 */

import type { CatalogStore } from './catalog-store.ts';
import type { FeedOp, FeedOutbox } from './feed-outbox.ts';
import type { FrontierStore, QueuedUri } from './frontier-store.ts';
import type { RecordStore, UriRecord } from './record-store.ts';
import type { SiteStore } from './site-store.ts';

export type { CatalogStore, CollectionPatch, CollectionRow, CycleRow, CycleStatus } from './catalog-store.ts';
export type { FeedOp, FeedOutbox, FeedSelection, PendingFeedOp } from './feed-outbox.ts';
export type { DropSubs, FrontierCounts, FrontierEntry, FrontierStore, LeasedUri, QueuedUri, SiteWork } from './frontier-store.ts';
export { CRASH_STRIKE, CRASH_STRIKES_MASK, focusHopsOf, isSuspect, sitemapDepthOf, URI_FLAGS, withFocusHops, withSitemapDepth } from './frontier-store.ts';
export type { CycleRecordCounts, RecordFilter, RecordPage, RecordPageRequest, RecordStatus, RecordStore, UriRecord } from './record-store.ts';
export type { ChangeHistory, RobotsRow, SitemapMeta, SiteStatsRow, SiteStore } from './site-store.ts';

/** The outcome of one fetch, written by `complete`. */
export interface Completion {
  readonly leaseId: number;
  /** The site the URI belongs to (where siteStats go). */
  readonly site: string;
  /** The URI's new record; undefined when nothing is recorded (e.g. refused by robots.txt). */
  readonly record?: UriRecord;
  /** Links found; those not yet seen in `epoch` are queued. */
  readonly discovered: readonly QueuedUri[];
  /** The site's statistics after this fetch (opaque JSON; cumulative, so a later one supersedes it). */
  readonly siteStats?: string;
  /** Content submissions this fetch causes (the feed outbox), written in the same transaction. */
  readonly feed?: readonly FeedOp[];
}

/** The whole crawl store: the five roles, the completion of a fetch, and closing. */
export interface CrawlStore extends CatalogStore, FrontierStore, RecordStore, FeedOutbox, SiteStore {
  /**
   * Writes a fetch's outcome in one transaction (see the file comment): the
   * lease done (its crash strikes cleared), the record when there is one,
   * the discovered URIs not yet seen in `epoch` queued, the site's
   * statistics, the feed operations. Resolves once all of it is durable,
   * with the discovered URIs that were queued (the caller's own objects, in
   * order); rejects with nothing of it written. A completion may wait a few
   * milliseconds to share its transaction with others (group-commit.ts).
   */
  complete(collection: string, epoch: number, c: Completion): Promise<QueuedUri[]>;
  /** Writes what is pending, makes everything durable and releases the store; later calls fail. */
  close(): Promise<void>;
}
