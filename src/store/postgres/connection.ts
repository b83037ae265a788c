/**
 * The PostgreSQL dialect's adapter: how a store URL is opened (a pg Pool,
 * the first connection checked at once so that a wrong URL fails with a
 * clear error), and how a transaction is run. The rest of the dialect
 * (schema.ts, migrations.ts, statements.ts, postgres-crawl-store.ts) takes
 * an open pool.
 *
 * Lock strategy: rows are locked by the statements themselves (leasing
 * takes its rows with `FOR UPDATE SKIP LOCKED`, postgres-crawl-store.ts),
 * so several processes may share a store; a transaction that deadlocks
 * with another one (PostgreSQL aborts one of the two) or loses a
 * serialization race is run again, at most TX_ATTEMPTS times. `trawl
 * crawl` and `trawl serve` open it `exclusive` (holdExclusive: a session
 * advisory lock), one process per store as with a SQLite file, until the
 * multinode installation shares one.
 *
 * Durability: PostgreSQL's own (synchronous_commit as the server sets it;
 * `on` by default): a committed transaction survives the death of both the
 * crawler and the server.
 *
 * Capabilities the layers above rely on: every call is asynchronous, so a
 * dialect method has done its work when its promise resolves, and group
 * commit (group-commit.ts) waits for one batch's transaction before it
 * writes the next. The pool runs independent calls side by side.
 */

import pg from 'pg';
import { isTrawlError, trawlError, type TrawlError } from '../../core/errors.ts';
import { maskStoreUrl } from './url.ts';

export { maskStoreUrl } from './url.ts';

export type Pool = pg.Pool;
export type Client = pg.PoolClient;
export type Row = Record<string, unknown>;

/** Connections per store (pool size): the group commit's one, the leases and reads beside it. */
const POOL_SIZE = 8;
/** How long opening waits for the server to answer before it reports it unreachable. */
const CONNECT_TIMEOUT_MS = 10_000;
/** A transaction aborted by a deadlock or a serialization failure is run again, at most this many times in all. */
const TX_ATTEMPTS = 4;
/** SQLSTATEs of a transaction worth running again: serialization_failure, deadlock_detected. */
const RETRYABLE = new Set(['40001', '40P01']);

/** A connection error, as the store error a user reads (the URL masked, the reason without it). */
export function connectionError(url: string, err: unknown): TrawlError {
  if (isTrawlError(err)) return err;
  const e = err as { code?: string; message?: string };
  const masked = maskStoreUrl(url);
  const reason = (e.message ?? String(err)).split(url).join(masked);
  // 28P01 invalid_password, 28000 invalid_authorization_specification.
  if (e.code === '28P01' || e.code === '28000') return trawlError('STORE_PG_LOGIN', { url: masked, reason }, { cause: err });
  if (e.code === '3D000') return trawlError('STORE_PG_NO_DATABASE', { url: masked, reason }, { cause: err });
  return trawlError('STORE_PG_UNREACHABLE', { url: masked, reason: reason || String(e.code) }, { cause: err });
}

/**
 * A pool on `url` whose first connection has answered: rejects with
 * TRAWL_ERR_STORE_UNAVAILABLE, naming the URL with its password masked,
 * when the server cannot be reached, refuses the login or has no such
 * database. `prepare` runs on that first connection (the schema, its
 * migration) before the pool is handed out.
 */
export async function openPool(url: string, prepare: (c: Client) => Promise<void>, opts: { max?: number } = {}): Promise<Pool> {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? POOL_SIZE, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, idleTimeoutMillis: 30_000 });
  // An idle connection the server drops (a restart) is an 'error' event, not a crash: the next query reconnects.
  pool.on('error', () => {});
  let client: Client;
  try {
    client = await pool.connect();
  } catch (err) {
    await pool.end().catch(() => {});
    throw connectionError(url, err);
  }
  try {
    await prepare(client);
    client.release();
    return pool;
  } catch (err) {
    client.release(true);
    await pool.end().catch(() => {});
    throw err;
  }
}

/** The advisory lock an exclusive store holds for its whole life (an arbitrary constant: "trawl1" in ASCII). */
const EXCLUSIVE_LOCK = 0x747261776c31;

/**
 * Holds the store for this process alone, as SQLite's EXCLUSIVE mode does
 * for a file: a session advisory lock on a connection of its own, kept
 * until `release` (or the process's death, when the server drops the
 * connection and the lock with it). Rejects with TRAWL_ERR_IO when another
 * process holds it.
 */
export async function holdExclusive(url: string): Promise<{ release(): Promise<void> }> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // A connection the server drops is an 'error' event, not a crash; the lock goes with it.
  c.on('error', () => {});
  try {
    await c.connect();
  } catch (err) {
    throw connectionError(url, err);
  }
  const got = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [EXCLUSIVE_LOCK]).catch(async (err: unknown) => {
    await c.end().catch(() => {});
    throw connectionError(url, err);
  });
  if (got.rows[0]?.ok !== true) {
    await c.end().catch(() => {});
    throw trawlError('STORE_PG_IN_USE', { url: maskStoreUrl(url) });
  }
  return { release: () => c.end().catch(() => {}) };
}

/**
 * Runs `fn` in one transaction on a connection of its own: committed when
 * it resolves, rolled back when it throws. A deadlock or serialization
 * failure runs `fn` again from the start (so `fn` must keep nothing of a
 * failed attempt).
 */
export async function transaction<T>(pool: Pool, fn: (c: Client) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const c = await pool.connect();
    let broken = false;
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      try {
        await c.query('ROLLBACK');
      } catch {
        broken = true; // the connection is gone: the pool drops it
      }
      if (attempt < TX_ATTEMPTS && RETRYABLE.has(String((err as { code?: unknown }).code))) continue;
      throw err;
    } finally {
      c.release(broken);
    }
  }
}
