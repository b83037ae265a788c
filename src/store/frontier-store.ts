/**
 * The frontier role of the crawl store: per-site queues of URIs, and the
 * seen set (one entry per collection and URL, stamped with the last cycle
 * it was queued or fetched in: a URI left queued by an earlier cycle and
 * fetched in this one is seen in this one, and not queued again in it).
 *
 *            enqueue ──► frontier entry (queued, epoch = this cycle)
 *                            │ lease(site, n)
 *                            ▼
 *                          leased ──── crash ──► recoverLeases() ──► queued
 *                            │ complete(...)        (fetched again, never lost)
 *                            ▼
 *                           done ──► its record written, discovered links enqueued,
 *                                    one transaction (CrawlStore.complete)
 *
 * "Nothing ready now" and "finished" are different answers: an empty
 * `lease` or `sitesWithWork` means no URI is queued now, while leased ones
 * may still come back (release, retry, recoverLeases) and fetches under
 * way may discover more. The store never says a cycle is finished; its
 * caller knows, when nothing is queued (`counts`) and it has no fetch,
 * commit or lease of its own outstanding.
 */

/** A URI waiting in (or entering) the frontier. */
/** Which sub-collections' queued URIs dropQueued drops: those named, or with `except`, every other one (and those of no sub-collection). */
export interface DropSubs {
  readonly names: readonly string[];
  readonly except: boolean;
}

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
 *   PURGE     queued by the purge phase after the cycle (trawl_purge, engine/purge.ts):
 *             its document is deleted when it answers 3xx or 4xx
 *   RECRAWL   taken by a minor cycle of refresh_mode adaptive (engine/adaptive-refresh.ts):
 *             fetched when leased, also after a restart that lost the scheduler's memory
 */
export const URI_FLAGS = { SITEMAP: 1, FEED: 2, FROM_FEED: 4, SENT: 8, QUARANTINED: 16, REFEED: 32, PURGE: 64, RECRAWL: 128 } as const;
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

export interface LeasedUri extends QueuedUri {
  /** The lease: what complete, release, retry and armSuspect name the URI by. */
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

export interface SiteWork {
  readonly site: string;
  readonly queued: number;
  /** The earliest cycle any of those URIs was queued for (refresh_mode soft: where the site's unfinished cycle began). */
  readonly oldestEpoch: number;
}

/** A URI's entry in the seen set, as `frontierEntry` returns it (`trawl inspect`). */
export interface FrontierEntry {
  readonly state: 'queued' | 'leased' | 'done';
  /** The last cycle it was queued in (0: written outside a crawl, queued for no cycle). */
  readonly epoch: number;
  readonly depth: number;
  readonly hops: number;
  readonly redirects: number;
  readonly retries: number;
  readonly priority: number;
  /** The page that linked it when it was last queued; undefined for a start URI or one added by an operator. */
  readonly parent: string | undefined;
  readonly sub: string | undefined;
  /** URI_FLAGS bits and crash strikes (isSuspect). */
  readonly flags: number;
}

export interface FrontierCounts {
  readonly queued: number;
  readonly leased: number;
  readonly done: number;
}

/**
 * The per-site queues and the seen set. Each method is atomic on its own;
 * completing a lease is `CrawlStore.complete`, which spans the roles.
 */
export interface FrontierStore {
  /**
   * Queues the URIs not yet seen in `epoch` (the seen set: one entry per
   * collection and URL and cycle). `front` puts them before everything
   * queued so far (urgent URIs, refresh_mode prepend), in the batch's own
   * order. Returns the URIs actually added, in order, as the caller's own
   * objects; an already-seen URI (or a repeat within the batch) is not
   * returned. Idempotent within a cycle. A URI being fetched right now
   * is left alone (its completion marks it seen in the cycle fetching it).
   */
  enqueue(collection: string, epoch: number, uris: readonly QueuedUri[], front?: boolean): Promise<QueuedUri[]>;
  /**
   * Queues URIs again even if they were already seen in `epoch` (an
   * operator's refetch); a URI being fetched right now is left alone. The
   * URIs' flags are added to those the queued entry has. Returns how many
   * were queued.
   */
  requeue(collection: string, epoch: number, uris: readonly QueuedUri[], front?: boolean): Promise<number>;
  /** Ends a site's quarantine: its quarantined URIs join its ordinary queue. Returns how many (0 when none). */
  releaseQuarantine(collection: string, site: string): Promise<number>;
  /**
   * Forgets URIs (records and queue entries); returns the content references
   * to delete. A forgotten document that had content is queued for deletion
   * at each destination of `feedTo`, in the same transaction. A URI leased
   * right now keeps its queue entry (its fetch completes normally) but
   * loses its record. Unknown URLs are ignored.
   */
  deleteUris(collection: string, urls: readonly string[], feedTo?: readonly string[]): Promise<string[]>;
  /** Forgets a whole site of the collection, like deleteUris; returns the content references to delete. */
  deleteSite(collection: string, site: string, feedTo?: readonly string[]): Promise<string[]>;
  /** True when the URL was queued (or crawled) in `epoch` or a later cycle. */
  seen(collection: string, epoch: number, url: string): Promise<boolean>;
  /** Sites that have queued URIs now (quarantined ones not counted), with their counts; empty: nothing ready now. */
  sitesWithWork(collection: string): Promise<SiteWork[]>;
  /**
   * Leases up to `n` queued URIs of one site: highest priority first, then
   * first in, first out. With `levels` (pop_scheme rr or wrr:
   * frontier/level-pop.ts) the priority levels are preferred in that order
   * instead (a level not listed goes after those listed, by priority).
   * Quarantined URIs are never leased. Fewer than `n`, or none, means no
   * more are queued for the site now (see the file comment).
   */
  lease(collection: string, site: string, n: number, levels?: readonly number[]): Promise<LeasedUri[]>;
  /**
   * How many of the site's URIs queued in cycle `epoch` were taken from
   * each priority level so far (leased, or done): priority level → count.
   * What pop_scheme rr/wrr resume from after a restart (level-pop.ts).
   */
  levelCounts(collection: string, site: string, epoch: number): Promise<Map<number, number>>;
  /** Puts leased URIs back in the queue (a graceful stop), in their old order. A lease id no longer leased is ignored. */
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
   * Idempotent; a lease id no longer leased is ignored.
   */
  armSuspect(collection: string, id: number): Promise<void>;
  /**
   * Drops queued URIs (refresh_mode scratch at a cycle start; a site left for
   * the cycle): all of them, or one site's, and only those queued for a cycle
   * before `beforeEpoch` when it is given. They stay seen. Returns how many.
   * `subs` (a sub-collection's own refresh_mode): only the URIs queued as
   * those sub-collections' (the frontier's `sub`), or with `except`, only
   * the others (no sub-collection, or one not named).
   */
  dropQueued(collection: string, site?: string, beforeEpoch?: number, subs?: DropSubs): Promise<number>;
  /** The URL's entry in the seen set (its state, the cycle and the parent it was queued with); undefined when the frontier does not hold it. */
  frontierEntry(collection: string, url: string): Promise<FrontierEntry | undefined>;
  /** How many URIs are queued, leased, and done: every other entry of the seen set, of any cycle (dropped ones too). */
  counts(collection: string): Promise<FrontierCounts>;
}
