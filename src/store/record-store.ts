/**
 * The records role of the crawl store: one record per collection and URL,
 * what trawl knows about the URI since it last fetched it. A fetch's
 * record is written by `CrawlStore.complete`, in the transaction that
 * marks its lease done; `putRecord` writes one outside a fetch.
 */

import type { DocSkipCode } from '../core/skip-codes.ts';

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
  /** The body's size in bytes. */
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
  /** Also return each record's position (`RecordPage.positions`), to resume after any record of the page. */
  readonly positions?: boolean;
}

export interface RecordPage {
  /** In the order they were first written. */
  readonly records: UriRecord[];
  /** The positions of the first and last record (0 when the page is empty). */
  readonly first: number;
  readonly last: number;
  /** With `positions`: each record's position, in the same order. */
  readonly positions?: number[];
}

/** Which records countRecords counts: every field given must match. */
export interface RecordFilter {
  site?: string;
  status?: RecordStatus;
}

/** The records. Each method is atomic on its own. */
export interface RecordStore {
  /** The URI's record; undefined when there is none (never crawled, or forgotten). */
  getRecord(collection: string, url: string): Promise<UriRecord | undefined>;
  /**
   * The URL of another record with this checksum whose status is `stored`
   * or `unchanged` (diffcheck); undefined when there is none.
   */
  findByChecksum(collection: string, checksum: string, exceptUrl: string): Promise<string | undefined>;
  /**
   * The URLs of the records that are duplicates of `url` (status
   * `duplicate`, `duplicateOf` = url), in URL order, at most `limit`: the
   * search document's additional_urls.
   */
  duplicatesOf(collection: string, url: string, limit: number): Promise<string[]>;
  /**
   * Writes one record outside a fetch (e.g. a document deleted when its
   * channel link expired), replacing the URL's record in place (it keeps
   * its position in `listRecordPage`). A URL the frontier does not hold
   * does not become seen. Idempotent.
   */
  putRecord(collection: string, record: UriRecord): Promise<void>;
  /** Every record of the collection, in URL order (tests, exports). */
  listRecords(collection: string): Promise<UriRecord[]>;
  /**
   * A page of the collection's records in the order they were first
   * written, for walking a large store without holding all of it: the
   * `limit` records after position `from` (from the start without it), or
   * with `backwards`, the last `limit` records before `from` (from the end
   * without it), still in written order. Pass on a page's `last` to go
   * forwards, its `first` to go backwards. A page shorter than `limit` is
   * the last one in that direction.
   */
  listRecordPage(collection: string, page: RecordPageRequest): Promise<RecordPage>;
  /** Number of records, optionally of one site and/or one status. */
  countRecords(collection: string, filter?: RecordFilter): Promise<number>;
  /**
   * What the cycle limits start from (MS-FSCCFG 2.2.4.18 `limits.max_doc`,
   * `trawl_limits.max_unique_urls`): `documents`, the records that hold a
   * document (stored or unchanged, with content: what the destinations
   * have), and `inCycle`, the records written in cycle `epoch` (each URI
   * fetched in that cycle, once). One pass over the collection's records;
   * called once per cycle start, and only when such a limit is set.
   */
  cycleRecordCounts(collection: string, epoch: number): Promise<CycleRecordCounts>;
}

/** See RecordStore.cycleRecordCounts. */
export interface CycleRecordCounts {
  readonly documents: number;
  readonly inCycle: number;
}
