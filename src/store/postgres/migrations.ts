/**
 * The PostgreSQL dialect's migrations: a store of an earlier schema version
 * is brought to SCHEMA_VERSION when opened, in one transaction with the
 * creation of what the current schema adds, so that a failure leaves it as
 * it was. A store of a later version is refused and left untouched.
 *
 * Several processes may open one store at the same moment (the nodes of an
 * installation): the check and the creation run under a transaction-scoped
 * advisory lock, so one of them creates the tables and the others find them.
 *
 *   (no tables) ── SCHEMA ──► 1 ──► 2 (SCHEMA_VERSION)
 *
 * 1 to 2 only adds the cycles and change_history tables, which SCHEMA
 * creates: there is nothing to move.
 */

import { trawlError } from '../../core/errors.ts';
import { maskStoreUrl, type Client } from './connection.ts';
import { INSTALLATION_SCHEMA } from './installation-schema.ts';
import { SCHEMA, SCHEMA_VERSION } from './schema.ts';

/** The advisory lock key the schema check holds (an arbitrary constant: "trawl" in ASCII). */
const SCHEMA_LOCK = 0x747261776c;

/** The schema version the store holds; undefined for a database without trawl's tables. */
async function storedVersion(c: Client): Promise<string | undefined> {
  const meta = await c.query<{ t: string | null }>("SELECT to_regclass('trawl_meta')::text AS t");
  if (meta.rows[0]?.t === null || meta.rows[0]?.t === undefined) return undefined;
  const row = await c.query<{ value: string }>("SELECT value FROM trawl_meta WHERE key = 'schema'");
  return row.rows[0]?.value;
}

/**
 * Creates the tables of a new store, or migrates one of an earlier version,
 * in one transaction on `c`. Throws TRAWL_ERR_IO, naming `url` (its
 * password masked), for a version this code does not know.
 */
export async function migrateToLatest(c: Client, url: string): Promise<void> {
  await c.query('BEGIN');
  try {
    await c.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    const stored = await storedVersion(c);
    const version = stored === undefined ? SCHEMA_VERSION : Number(stored);
    if (!(Number.isInteger(version) && version >= 1 && version <= SCHEMA_VERSION)) {
      throw trawlError('STORE_PG_SCHEMA', { url: maskStoreUrl(url), version: String(stored), supported: SCHEMA_VERSION });
    }
    await c.query(SCHEMA);
    // The multinode installation's tables (installation.ts): tables of their own, no schema version of their own.
    await c.query(INSTALLATION_SCHEMA);
    await c.query("INSERT INTO trawl_meta (key, value) VALUES ('schema', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [String(SCHEMA_VERSION)]);
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
