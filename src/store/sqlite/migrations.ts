/**
 * The SQLite dialect's migrations: a store of an earlier schema version is
 * brought to SCHEMA_VERSION when opened, in one transaction with the
 * creation of what the current schema adds, so that a crash leaves it as
 * it was. A store of a later version is refused and left untouched.
 *
 *   version 1 ── MIGRATE_FROM_1 ──► 2 ── MIGRATE_FROM_2 ──► 3 ──► 4 ──► 5 (SCHEMA_VERSION)
 *
 * 3 to 4 only adds the cookie_jars table, and 4 to 5 the cycles and
 * change_history tables, which SCHEMA creates: there is nothing to move.
 */

import type { DatabaseSync } from 'node:sqlite';
import { TrawlError } from '../../core/errors.ts';
import { transaction } from './connection.ts';
import { RECORD_COLUMNS, RECORD_FIELDS, RECORDS_TABLE, SCHEMA, SCHEMA_VERSION } from './schema.ts';

/** Version 2's records table, which the migration from version 1 creates on the way to version 3. */
const RECORDS_TABLE_V2 = `CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  ${RECORD_FIELDS},
  UNIQUE (collection, url)
);`;

/**
 * Version 1 to 2: the frontier's full indexes give way to the partial ones
 * SCHEMA creates, and the records move into the rowid table (its indexes
 * are created again by SCHEMA).
 */
const MIGRATE_FROM_1 = `
DROP INDEX IF EXISTS frontier_site;
DROP INDEX IF EXISTS frontier_state;
DROP INDEX IF EXISTS records_checksum;
DROP INDEX IF EXISTS records_site;
ALTER TABLE records RENAME TO records_v1;
${RECORDS_TABLE_V2}
INSERT INTO records (${RECORD_COLUMNS}) SELECT ${RECORD_COLUMNS} FROM records_v1 ORDER BY collection, url;
DROP TABLE records_v1;
`;

/**
 * Version 2 to 3: each frontier row names its record, a record without a
 * frontier row gets one (done, epoch 0), and the records move into a table
 * without the (collection, url) index, keeping their ids. The links are
 * made while version 2's indexes still answer both lookups.
 */
const MIGRATE_FROM_2 = `
DROP INDEX IF EXISTS records_checksum;
DROP INDEX IF EXISTS records_site;
ALTER TABLE frontier ADD COLUMN record_id INTEGER;
INSERT INTO frontier (collection, url, site, state, priority, seq, epoch, depth, hops, redirects, parent)
  SELECT r.collection, r.url, r.site, 2, 0, 0, 0, r.depth, r.depth, 0, r.parent FROM records r
  WHERE NOT EXISTS (SELECT 1 FROM frontier f WHERE f.collection = r.collection AND f.url = r.url);
UPDATE frontier SET record_id = (SELECT r.id FROM records r WHERE r.collection = frontier.collection AND r.url = frontier.url);
ALTER TABLE records RENAME TO records_v2;
${RECORDS_TABLE}
INSERT INTO records (id, ${RECORD_COLUMNS}) SELECT id, ${RECORD_COLUMNS} FROM records_v2;
DROP TABLE records_v2;
`;

/**
 * Creates the tables of a new store, or migrates one of an earlier version,
 * in one transaction. Throws TRAWL_ERR_IO, naming `path`, for a version
 * this code does not know.
 */
export function migrateToLatest(db: DatabaseSync, path: string): void {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
  const row = hasMeta ? (db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: unknown } | undefined) : undefined;
  const version = row ? Number(row.value) : SCHEMA_VERSION;
  if (!(version >= 1 && version <= SCHEMA_VERSION)) {
    throw new TrawlError('TRAWL_ERR_IO', `the crawl store ${path} has schema version ${String(row?.value)}; this trawl reads versions 1 to ${SCHEMA_VERSION}`);
  }
  transaction(db, () => {
    if (version === 1) db.exec(MIGRATE_FROM_1);
    if (version <= 2) db.exec(MIGRATE_FROM_2);
    db.exec(SCHEMA);
    db.prepare("INSERT INTO meta (key, value) VALUES ('schema', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(String(SCHEMA_VERSION));
  });
}
