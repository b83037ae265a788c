// The SQLite dialect's adapter (src/store/sqlite/connection.ts): opening a store file, and transactions.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TrawlError } from '../../../src/core/errors.ts';
import { openConnection, transaction } from '../../../src/store/sqlite/connection.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-sqlite-conn-'));

test('a new store file is created readable by its owner only, in a folder made for it; an existing one is narrowed', () => {
  const path = join(dir, 'new', 'deeper', 'trawl.db');
  openConnection(path, 0, () => undefined).close();
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(statSync(join(dir, 'new', 'deeper')).mode & 0o777, 0o700);
  chmodSync(path, 0o644);
  openConnection(path, 0, () => undefined).close();
  assert.equal(statSync(path).mode & 0o777, 0o600);
});

test('the connection holds the file exclusively, in WAL mode, with the page cache the crawl relies on', () => {
  const db = openConnection(join(dir, 'pragmas.db'), 0, () => undefined);
  try {
    const pragma = (name: string): unknown => db.prepare(`PRAGMA ${name}`).get()?.[name];
    assert.equal(pragma('locking_mode'), 'exclusive');
    assert.equal(pragma('journal_mode'), 'wal');
    assert.equal(pragma('synchronous'), 1); // NORMAL
    assert.equal(pragma('cache_size'), -8192);
  } finally {
    db.close();
  }
});

test('a file that is not a store, or a preparation that fails, is reported as TRAWL_ERR_IO naming the file', () => {
  const notDb = join(dir, 'not-a-db');
  writeFileSync(notDb, 'plain text, long enough to look like a header page. '.repeat(20));
  assert.throws(() => openConnection(notDb, 0, (db) => db.exec('CREATE TABLE t (x)')), (err: TrawlError) => {
    assert.equal(err.code, 'TRAWL_ERR_IO');
    assert.ok(err.message.includes(`cannot open the crawl store ${notDb}`), err.message);
    return true;
  });
  // A TrawlError of the preparation (an unknown schema version) keeps its own message.
  const own = new TrawlError('TRAWL_ERR_IO', 'schema version 9');
  assert.throws(() => openConnection(join(dir, 'own.db'), 0, () => { throw own; }), (err) => err === own);
});

test('a transaction commits what its function did, or rolls all of it back and throws the function\'s error', () => {
  const db = openConnection(join(dir, 'tx.db'), 0, (d) => d.exec('CREATE TABLE t (x INTEGER)'));
  try {
    assert.equal(transaction(db, () => db.prepare('INSERT INTO t VALUES (1)').run().changes), 1);
    const boom = new Error('boom');
    assert.throws(() => transaction(db, () => {
      db.prepare('INSERT INTO t VALUES (2)').run();
      throw boom;
    }), (err) => err === boom);
    assert.equal(db.isTransaction, false);
    assert.deepEqual(db.prepare('SELECT x FROM t').all().map((r) => r.x), [1]);
    // A transaction SQLite already ended itself: the function's error, not ROLLBACK's "no transaction is active".
    assert.throws(() => transaction(db, () => {
      db.exec('ROLLBACK');
      throw boom;
    }), (err) => err === boom);
  } finally {
    db.close();
  }
});
