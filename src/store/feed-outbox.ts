/**
 * The feed outbox role of the crawl store: content submissions waiting to
 * be sent to a content destination (MS-FSCCFG 2.2.4.9 feeding). A fetch's
 * operations are written by `CrawlStore.complete` in the fetch's own
 * transaction, so a crash loses none and sends none that was not recorded;
 * the feeder reads them oldest first and acknowledges what the sinks took
 * (delivery at least once).
 *
 *   queueFeed / complete ──► (collection, destination, url) → op, ver
 *                             a newer op replaces the pending one (ver + 1)
 *   pendingFeed ──► sinks ──► ackFeed(id, ver): removed unless replaced meanwhile
 */

/**
 * One content submission waiting in the feed outbox: a document to send to
 * a content destination (MS-FSCCFG 2.2.4.9 feeding), or to remove from it.
 * `add` is a document the destination has not had, `update` one it may have
 * (modified, refed or reprocessed), `inaccessible` one whose page answered
 * a server error (5xx) and that is kept for now: it is sent as stored, marked
 * inaccessible (trawl_purge; sinks/feeder.ts). The document itself is read
 * from the crawl store and the content store when it is sent.
 */
export interface FeedOp {
  readonly destination: string;
  readonly url: string;
  readonly op: 'add' | 'update' | 'delete' | 'inaccessible' | StatusOp;
}

/**
 * A URL Status Message waiting in the outbox (CiteSeerX statusUpdates,
 * docs/citeseerx.md): the op carries the STATUS to report, and the row goes
 * to `STATUS_DESTINATION`, a name no content destination can have (those
 * have no spaces), so the feeder sends it to the status queue, not to sinks.
 */
export type StatusOp = `status:${number}`;

/** The outbox destination URL Status Messages wait under. */
export const STATUS_DESTINATION = 'status updates';

/** A FeedOp in the outbox; `ver` changes whenever the URL's operation is replaced. */
export interface PendingFeedOp extends FeedOp {
  readonly id: number;
  readonly ver: number;
}

/** Which stored documents to send again (MS-FSCADM CollectionReprocess*); none given: every one. */
export interface FeedSelection {
  readonly site?: string;
  /** URL prefix (with `site`: CollectionReprocessSitePrefix). */
  readonly prefix?: string;
  readonly urls?: readonly string[];
}

/** The outbox. Each method is atomic on its own. */
export interface FeedOutbox {
  /**
   * Queues content submissions. A URL has at most one pending operation per
   * destination: a newer one replaces it (an `update` of a pending `add`
   * stays an `add`) and keeps its place in the order.
   */
  queueFeed(collection: string, ops: readonly FeedOp[]): Promise<void>;
  /**
   * Queues an `update` to each destination for every stored document that
   * matches (status stored or unchanged, with content). Returns how many
   * documents (counted once, not once per destination).
   */
  queueFeedFromRecords(collection: string, destinations: readonly string[], which: FeedSelection): Promise<number>;
  /**
   * The oldest pending operations of a destination with id above `afterId`,
   * at most `limit`. Reading removes nothing; empty: nothing pending now.
   */
  pendingFeed(collection: string, destination: string, afterId: number, limit: number): Promise<PendingFeedOp[]>;
  /** Removes sent operations; one replaced since it was read (another `ver`) stays. Idempotent. */
  ackFeed(collection: string, sent: ReadonlyArray<Pick<PendingFeedOp, 'id' | 'ver'>>): Promise<void>;
  /** Pending operations per destination; a destination with none is absent. */
  feedBacklog(collection: string): Promise<Record<string, number>>;
}
