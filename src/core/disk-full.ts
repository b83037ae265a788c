/**
 * Whether an error means "no space left": the one test every layer uses to
 * tell a full disk (wait for space, lose nothing) from a real failure.
 *
 *   fs write  ── ENOSPC / EDQUOT (err.code, or the code of an err.cause) ──┐
 *   SQLite    ── SQLITE_FULL (errcode 13; the storage thread sends it as   ├─► isDiskFull
 *                TRAWL_ERR_DISK_FULL, since a thread boundary keeps only   │
 *                the message and a TrawlError code)                        │
 *   TrawlError ─ TRAWL_ERR_DISK_FULL ──────────────────────────────────────┘
 */

/** errno codes of a write that failed for lack of space: the filesystem is full, or the user's quota is. */
export const DISK_FULL_ERRNOS: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

/** SQLite's primary result code for "database or disk is full" (the low byte of an extended code). */
export const SQLITE_FULL = 13;

/** The errno code or SQLite result that made `err` a disk-full error, if it is one (causes are followed, at most 8 deep). */
export function diskFullReason(err: unknown): string | undefined {
  let e: unknown = err;
  let named: string | undefined;
  for (let depth = 0; depth < 8 && typeof e === 'object' && e !== null; depth++) {
    const o = e as { code?: unknown; errcode?: unknown; cause?: unknown; message?: unknown };
    if (typeof o.code === 'string') {
      if (DISK_FULL_ERRNOS.has(o.code)) return o.code;
      // The errno or SQLite code, when the message that crossed a thread still says it.
      if (o.code === 'TRAWL_ERR_DISK_FULL') named ??= (typeof o.message === 'string' ? /\b(ENOSPC|EDQUOT|SQLITE_FULL)\b/.exec(o.message)?.[1] : undefined) ?? 'no space';
    }
    if (typeof o.errcode === 'number' && (o.errcode & 0xff) === SQLITE_FULL) return 'SQLITE_FULL';
    e = o.cause;
  }
  return named;
}

export function isDiskFull(err: unknown): boolean {
  return diskFullReason(err) !== undefined;
}
