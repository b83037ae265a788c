// The SQLite dialect's statement table (src/store/sqlite/statements.ts) against its schema (schema.ts).
import assert from 'node:assert/strict';
import { DatabaseSync, StatementSync } from 'node:sqlite';
import { test } from 'node:test';
import { migrateToLatest } from '../../../src/store/sqlite/migrations.ts';
import { COLLECTION_TABLES } from '../../../src/store/sqlite/schema.ts';
import { prepareStatements } from '../../../src/store/sqlite/statements.ts';

function newStore(): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  migrateToLatest(db, ':memory:');
  return db;
}

test('every statement of the table prepares against the current schema', () => {
  const db = newStore();
  const st = prepareStatements(db);
  const entries = Object.entries(st).flatMap(([name, s]) => (Array.isArray(s) ? s.map((x, i) => [`${name}[${i}]`, x] as const) : [[name, s] as const]));
  assert.ok(entries.length > 50);
  for (const [name, s] of entries) assert.ok(s instanceof StatementSync, name);
  db.close();
});

test('deleteCollection reaches every table that holds a collection\'s rows', () => {
  const db = newStore();
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('meta', 'collections') ORDER BY name").all() as Array<{ name: string }>)
    .map((r) => r.name)
    .filter((t) => (db.prepare(`PRAGMA table_info(${t})`).all() as Array<{ name: string }>).some((c) => c.name === 'collection'));
  assert.deepEqual(tables, [...COLLECTION_TABLES].sort());
  const st = prepareStatements(db);
  assert.deepEqual(st.deleteCollectionRows.map((s) => s.sourceSQL), COLLECTION_TABLES.map((t) => `DELETE FROM ${t} WHERE collection = ?`));
  db.close();
});
