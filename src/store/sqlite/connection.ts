/**
 * The SQLite dialect's adapter: how a store file is opened (its mode, the
 * pragmas, the lock strategy) and how a transaction is run. The rest of
 * the dialect (schema.ts, migrations.ts, statements.ts,
 * sqlite-crawl-store.ts) takes an open connection.
 *
 * Lock strategy: EXCLUSIVE locking mode. The connection holds the file
 * from its first read until close, and SQLite keeps the WAL index in its
 * own memory instead of the -shm file, so a transaction makes no fcntl()
 * lock calls. One process per data directory: a second `trawl crawl` or
 * `trawl serve` on it stops with a clear error instead of sharing the
 * frontier. A crash releases the lock with the process.
 *
 * Durability: WAL with synchronous=NORMAL. A committed transaction survives
 * the process being killed (kill -9); only a power loss can take the last
 * transactions, and then the URIs involved are simply fetched again.
 *
 * Capabilities the layers above rely on: node:sqlite is synchronous, so a
 * dialect method has done its work when it returns, and group commit
 * (group-commit.ts) writes a batch without an await.
 */

import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { isTrawlError, TrawlError } from '../../core/errors.ts';

/**
 * WAL pages between automatic checkpoints (SQLite's default is 1,000). A
 * checkpoint copies every page the WAL holds into the database file and
 * syncs it; the pages a crawl dirties most (the frontier's queue ends, the
 * site rows) are copied once per checkpoint however often they were
 * rewritten, so fewer, larger checkpoints write less. 10,000 pages: a WAL
 * of about 40 MiB (bench/README.md, *The storage thread alone*).
 */
const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/**
 * SQLite's page cache for this connection, in KiB (a negative cache_size).
 * At SQLite's default of 2 MiB a completion's random index pages are read
 * back from the operating system's page cache, one pread() each, because
 * the indexes it touches outgrow the cache within seconds; larger than 8
 * MiB, SQLite's own lookups cost more than the reads saved (bench/README.md,
 * *The SQLite store's settings, and what chose them*). The cache is filled
 * only as the store grows, so a small crawl does not pay for it.
 */
const PAGE_CACHE_KIB = 8192;

/** SQLite's result code for a database file locked by another connection. */
const SQLITE_BUSY = 5;

/**
 * The crawl store holds the stored configurations, secrets included, so the
 * file is created readable by its owner only (0600), and an existing one is
 * narrowed to that. SQLite gives the -wal and -journal files it creates the
 * database file's mode; existing ones are narrowed here too.
 */
function ownerOnly(path: string): void {
  try {
    closeSync(openSync(path, 'a', 0o600));
    for (const p of [path, `${path}-wal`, `${path}-journal`]) {
      if (existsSync(p) && (statSync(p).mode & 0o077) !== 0) chmodSync(p, 0o600);
    }
  } catch {
    // Opening the database reports what is wrong with the path, with the store's own message.
  }
}

/**
 * Opens the store file at `path` (`:memory:` for none) with the dialect's
 * pragmas, then runs `prepare` on the connection (the schema, its
 * migration). `busyTimeoutMs`: how long opening waits for another process
 * that holds the file. Throws TRAWL_ERR_IO naming the file, with the
 * connection closed, when it cannot be opened or prepared.
 */
export function openConnection(path: string, busyTimeoutMs: number, prepare: (db: DatabaseSync) => void): DatabaseSync {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    ownerOnly(path);
  }
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path);
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}; PRAGMA locking_mode = EXCLUSIVE;`);
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}; PRAGMA cache_size = -${PAGE_CACHE_KIB};`);
    prepare(db);
    return db;
  } catch (err) {
    if (db?.isOpen) db.close();
    if ((err as { errcode?: number }).errcode === SQLITE_BUSY) {
      throw new TrawlError('TRAWL_ERR_IO', `the crawl store ${path} is in use by another process (another trawl crawl or trawl serve on the same data directory?)`, { cause: err });
    }
    if (isTrawlError(err)) throw err;
    throw new TrawlError('TRAWL_ERR_IO', `cannot open the crawl store ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** Whether `err` says the store file is held by another process (what openConnection throws then). */
export function isStoreInUse(err: unknown): boolean {
  return isTrawlError(err) && ((err as Error).cause as { errcode?: number } | undefined)?.errcode === SQLITE_BUSY;
}

/** Runs `fn` in one write transaction: committed when it returns, rolled back when it throws. */
export function transaction<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const out = fn();
    db.exec('COMMIT');
    return out;
  } catch (err) {
    // SQLite may have rolled the transaction back itself (SQLITE_FULL can
    // do that): a ROLLBACK then fails with "no transaction is active",
    // which would hide the error that matters.
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
}
