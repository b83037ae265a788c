/**
 * The bounds on one refresh cycle as a whole (per-site bounds such as
 * `max_doc` live in site-task.ts):
 *
 *   trawl_limits.max_crawl_duration   the Elastic crawler's `max_duration`: once the cycle has
 *                                     run this long (wall time since it started, a resumed
 *                                     cycle's earlier runs and the time between them
 *                                     included), no fetch starts; the ones under way finish
 *                                     and the URIs still queued are abandoned.
 *   trawl_limits.max_unique_urls      the Elastic crawler's `max_unique_url_count`: at most
 *                                     this many URIs are fetched in the cycle (each once;
 *                                     a retry within the cycle is the same URI), then as
 *                                     above. The Elastic reference: "Beyond this limit, the
 *                                     crawler will stop."
 *   limits.max_doc / max_doc_slack    MS-FSCCFG 2.2.4.18: once the collection holds max_doc
 *                                     documents it is in refresh-only mode (MS-FSCADM 2.2.3.6
 *                                     `Refreshing(limit=max_doc)`): no new URI is queued from
 *                                     links and a queued URI the crawl never fetched is not
 *                                     fetched (skip code `rl`); the known ones are refreshed.
 *                                     The mode ends once the documents fall below
 *                                     max_doc - max_doc_slack (deleted ones, dbswitch), so a
 *                                     collection at the limit does not flap; the same reading
 *                                     as disk_free_slack (disk-guard.ts).
 *
 * A cycle stopped by either trawl_limits bound ends as a success: it is
 * complete, its reason is in the summary and the event log, and the next
 * cycle starts as usual.
 *
 * MS-FSCCFG `refresh` bounds a cycle too: one still crawling `refresh`
 * minutes after it started ends there, complete, and what it left queued is
 * the next cycle's, as its `refresh_mode` says (scratch drops it, append and
 * prepend keep it, soft keeps those sites out of the refresh: seeding.ts).
 *
 * Nothing here runs per page when no bound is set, beyond a comparison.
 */

import type { CycleRecordCounts } from '../store/crawl-store.ts';
import type { CrawlEvents } from './crawl-events.ts';

/**
 * Why a cycle was ended by a bound (CycleSummary.stoppedBy): the two
 * trawl_limits bounds abandon what is left queued; `refresh`, the end of the
 * refresh period, leaves it to the next cycle's refresh_mode.
 */
export type LimitStop = 'max-duration' | 'max-unique-urls' | 'refresh';

export interface CycleLimitSettings {
  /** trawl_limits.max_crawl_duration, seconds; undefined: no bound. */
  readonly maxCrawlDurationS: number | undefined;
  /** trawl_limits.max_unique_urls; undefined: no bound. */
  readonly maxUniqueUrls: number | undefined;
  /** limits.max_doc; 0: off. */
  readonly maxDoc: number;
  /** limits.max_doc_slack. */
  readonly maxDocSlack: number;
  /** MS-FSCCFG refresh, minutes: a cycle still crawling this long after it started ends there; 0: no boundary. */
  readonly refreshMin: number;
}

/** The parameter each stop is named by, in messages and the summary. */
export const LIMIT_PARAMETER: Readonly<Record<LimitStop, string>> = {
  'max-duration': 'trawl_limits.max_crawl_duration',
  'max-unique-urls': 'trawl_limits.max_unique_urls',
  refresh: 'refresh',
};

export class CycleLimits {
  private readonly s: CycleLimitSettings;
  private readonly events: CrawlEvents;
  /** When the cycle must stop starting fetches (ms); Infinity without max_crawl_duration. */
  private deadlineMs = Number.POSITIVE_INFINITY;
  /** The end of the refresh period (ms); Infinity with refresh 0. */
  private refreshEndMs = Number.POSITIVE_INFINITY;
  /** URIs fetched in this cycle, earlier runs of it included, plus those reserved by fetches under way. */
  private fetched = 0;
  /** Documents the collection holds (limits.max_doc), counted from the store at the cycle start and kept up to date by the outcome writer. */
  private documents = 0;
  /** Never-fetched URIs being fetched under max_doc: each may become a document. */
  private pendingNew = 0;
  private docLimited = false;

  constructor(s: CycleLimitSettings, events: CrawlEvents) {
    this.s = s;
    this.events = events;
  }

  /** Whether `begin` needs the store's record counts (one pass over the records). */
  get needsCounts(): boolean {
    return this.s.maxUniqueUrls !== undefined || this.s.maxDoc > 0;
  }

  /** The cycle starts or resumes: it started at `cycleStartedMs`; `counts` when `needsCounts`. */
  begin(cycleStartedMs: number, counts: CycleRecordCounts | undefined): void {
    this.deadlineMs = this.s.maxCrawlDurationS !== undefined ? cycleStartedMs + this.s.maxCrawlDurationS * 1000 : Number.POSITIVE_INFINITY;
    this.refreshEndMs = this.s.refreshMin > 0 ? cycleStartedMs + this.s.refreshMin * 60_000 : Number.POSITIVE_INFINITY;
    this.fetched = counts?.inCycle ?? 0;
    this.documents = counts?.documents ?? 0;
    this.pendingNew = 0;
    this.docLimited = false;
    this.checkDocuments();
  }

  /** The first of max_crawl_duration's deadline and the refresh period's end (ms), for the loop's sleep; Infinity when neither applies. */
  get deadline(): number {
    return Math.min(this.deadlineMs, this.refreshEndMs);
  }

  /** What ends the cycle now, if a bound does: checked by the loop before it starts a task. */
  reached(now: number): LimitStop | undefined {
    if (now >= this.deadlineMs) return 'max-duration';
    if (this.s.maxUniqueUrls !== undefined && this.fetched >= this.s.maxUniqueUrls) return 'max-unique-urls';
    if (now >= this.refreshEndMs) return 'refresh';
    return undefined;
  }

  /**
   * A URI is about to be fetched: true when the cycle's budget of unique
   * URIs has room, which it then takes. A retry was counted when it was
   * first fetched. False: the caller puts the URI back unfetched.
   */
  takeFetch(retries: number): boolean {
    if (this.s.maxUniqueUrls === undefined || retries > 0) return true;
    if (this.fetched >= this.s.maxUniqueUrls) return false;
    this.fetched++;
    return true;
  }

  /** limits.max_doc reached: refresh-only. */
  get refreshOnly(): boolean {
    return this.docLimited;
  }

  /** Whether limits.max_doc is set: never-fetched URIs then take a place first (takeNewDocument). */
  get countsDocuments(): boolean {
    return this.s.maxDoc > 0;
  }

  /**
   * A never-fetched URI is about to be fetched: true when it fits under
   * max_doc with the documents held and the new ones being fetched, and it
   * then takes a place; false (refresh-only, or the last places are taken by
   * fetches under way) and the caller turns it away with `rl`. Counting the
   * fetches under way keeps the collection at max_doc even though the next
   * fetches start before the last one's document is committed.
   */
  takeNewDocument(): boolean {
    if (this.docLimited || this.documents + this.pendingNew >= this.s.maxDoc) return false;
    this.pendingNew++;
    return true;
  }

  /** A place taken by takeNewDocument is settled: `stored`, the URI is now a document. */
  settleNewDocument(stored: boolean): void {
    this.pendingNew = Math.max(0, this.pendingNew - 1);
    if (stored) this.noteDocuments(1);
  }

  /** The collection holds `delta` more documents (negative: fewer). Only counted when max_doc is set. */
  noteDocuments(delta: number): void {
    if (this.s.maxDoc === 0) return;
    this.documents += delta;
    this.checkDocuments();
  }

  private checkDocuments(): void {
    const { maxDoc, maxDocSlack } = this.s;
    if (maxDoc === 0) return;
    if (!this.docLimited && this.documents >= maxDoc) {
      this.docLimited = true;
      this.events.emit({ type: 'cycle', code: 'rl', message: `limits.max_doc: the collection holds ${this.documents} documents (max_doc ${maxDoc}); refresh-only until it holds fewer than ${Math.max(0, maxDoc - maxDocSlack)}: no new URI is fetched or queued` });
    } else if (this.docLimited && this.documents < maxDoc - maxDocSlack) {
      this.docLimited = false;
      this.events.emit({ type: 'cycle', message: `limits.max_doc: the collection holds ${this.documents} documents, below max_doc ${maxDoc} - max_doc_slack ${maxDocSlack}; crawling new URIs again` });
    }
  }
}
