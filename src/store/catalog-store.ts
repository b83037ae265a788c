/**
 * The catalog role of the crawl store: one row per collection, with its
 * stored configuration and the state the service keeps across restarts.
 * Every other role's rows belong to a collection by name; deleting a
 * collection here deletes them too.
 */

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

/**
 * The Elastic crawl statuses a refresh cycle moves through (engine/cycle-lifecycle.ts):
 * pending → starting → running → success | canceling → canceled | failed.
 * `skipped` is Elastic's for an automatic crawl not started because another was active.
 */
export type CycleStatus = 'pending' | 'starting' | 'running' | 'success' | 'canceling' | 'canceled' | 'failed' | 'skipped';

/** One refresh cycle of a collection as `putCycle` keeps it: its ID, its refresh cycle number and its status. */
export interface CycleRow {
  /** 24 hexadecimal digits, made when the cycle begins; kept when it is resumed. */
  readonly id: string;
  readonly epoch: number;
  readonly status: CycleStatus;
  /** When the status was set. */
  readonly statusMs: number;
  readonly startedMs: number;
  /** When it ended (success, canceled, failed); undefined while it runs or waits to resume. */
  readonly endedMs: number | undefined;
  /** What ended it (CycleSummary.stoppedBy: done, a limit, the refresh boundary, stop, …), or why it failed. */
  readonly stoppedBy: string | undefined;
}

/** The fields of a collection `updateCollection` may change. */
export type CollectionPatch = Partial<Pick<CollectionRow, 'state' | 'epoch' | 'cycleStartedMs' | 'cycleEndedMs' | 'extra'>>;

/**
 * The collections. Each method is atomic on its own.
 */
export interface CatalogStore {
  /**
   * Adds a collection, or replaces the configuration of an existing one
   * and keeps its state, epoch, creation time and `extra` (`nowMs` is the
   * creation time of a new one). Idempotent.
   */
  putCollection(name: string, configXml: string, nowMs: number): Promise<void>;
  /** The collection's row; undefined when there is no such collection. */
  getCollection(name: string): Promise<CollectionRow | undefined>;
  /** Every collection, in name order. */
  listCollections(): Promise<CollectionRow[]>;
  /**
   * Sets the fields present in `patch` (a field present with the value
   * undefined is cleared); the others keep their values. Changes nothing
   * when there is no such collection. Idempotent.
   */
  updateCollection(name: string, patch: CollectionPatch): Promise<void>;
  /**
   * The collection's cookie jar (use_cookies) as it was last saved: the
   * jar's own serialized text, opaque to the store; undefined when none was.
   */
  getCookieJar(name: string): Promise<string | undefined>;
  /**
   * Replaces the collection's saved cookie jar (`nowMs`: when). Idempotent.
   * Deleting the collection deletes it.
   */
  putCookieJar(name: string, jar: string, nowMs: number): Promise<void>;
  /** Writes a cycle's row (by collection and cycle ID), replacing the one written before. Idempotent. */
  putCycle(name: string, cycle: CycleRow): Promise<void>;
  /** The collection's cycles, the latest first (by epoch, then start), at most `limit`. */
  listCycles(name: string, limit: number): Promise<CycleRow[]>;
  /** Removes the collection and every row of every role that belongs to it, in one transaction. Idempotent. */
  deleteCollection(name: string): Promise<void>;
}
