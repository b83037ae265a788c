/**
 * What the SQL dialects share when they read their rows back: the two
 * hold the same columns under the same names (snake_case, NULL for
 * absent), so a record row becomes a `UriRecord` the same way in both.
 */

import type { DocSkipCode } from '../core/skip-codes.ts';
import type { RecordPage, RecordStatus, UriRecord } from './record-store.ts';

/** A row as a driver returns it: column name → value. */
export type Row = Record<string, unknown>;

/** A nullable text column. */
export const str = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v));
/** A nullable number column (a driver may give a bigint or a string for a large integer). */
export const num = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));

/** A records row (the columns of RECORD_COLUMNS in either dialect's schema). */
export function recordOfRow(r: Row): UriRecord {
  return {
    url: String(r.url), site: String(r.site), status: String(r.status) as RecordStatus, httpStatus: num(r.http_status), checksum: str(r.checksum),
    lastCrawledMs: Number(r.last_crawled_ms), etag: str(r.etag), lastModified: str(r.last_modified), errorCount: Number(r.error_count),
    skipCode: str(r.skip_code) as DocSkipCode | undefined, mime: str(r.mime), size: num(r.size), contentRef: str(r.content_ref),
    duplicateOf: str(r.duplicate_of), redirectTo: str(r.redirect_to), depth: Number(r.depth), parent: str(r.parent), epoch: Number(r.epoch),
  };
}

/** A page of listRecordPage from its rows (each with its `id`, the record's position), in the order they are to be returned. */
export function recordPageOf(rows: readonly Row[], positions: boolean | undefined): RecordPage {
  const first = rows[0];
  const last = rows[rows.length - 1];
  return {
    records: rows.map(recordOfRow), first: first ? Number(first.id) : 0, last: last ? Number(last.id) : 0,
    ...(positions ? { positions: rows.map((r) => Number(r.id)) } : {}),
  };
}
