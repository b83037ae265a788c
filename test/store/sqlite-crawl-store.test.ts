// The SQLite dialect against the CrawlStore contract, on real database files.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import type { CrawlStore } from '../../src/store/crawl-store.ts';
import type { TrawlError } from '../../src/core/errors.ts';
import { crawlStoreSuite } from './crawl-store-suite.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-sqlite-'));
let n = 0;
const paths = new WeakMap<CrawlStore, string>();

crawlStoreSuite({
  name: 'sqlite',
  async open() {
    const path = join(dir, `store-${n++}.db`);
    const s = new SqliteCrawlStore(path);
    paths.set(s, path);
    return s;
  },
  async reopen(store) {
    const path = paths.get(store)!;
    await store.close();
    const s = new SqliteCrawlStore(path);
    paths.set(s, path);
    return s;
  },
});

// Regression: duplicate detection walked every record of the collection (the
// planner chose the primary key), which slowed a 100k-page crawl to a crawl.
test('findByChecksum uses the checksum index, not a scan of the collection', () => {
  const s = new SqliteCrawlStore(join(dir, 'plan.db'));
  assert.match(s.queryPlan('byChecksum'), /USING (COVERING )?INDEX records_checksum/);
  assert.match(s.queryPlan('leaseSelect'), /USING INDEX frontier_queue/);
  assert.match(s.queryPlan('recover'), /USING INDEX frontier_leased/);
  // A refresh's page of records is a range of rowids, not a sort of the whole collection for each page.
  assert.equal(s.queryPlan('recordsAfter'), 'SEARCH records USING INTEGER PRIMARY KEY (rowid>?)');
  assert.equal(s.queryPlan('recordsBefore'), 'SEARCH records USING INTEGER PRIMARY KEY (rowid<?)');
  // Schema 3: a URL's record through the frontier's URL index and the records' primary key, never a scan.
  for (const statement of ['getRecord', 'refsOfUrl', 'delRecord', 'feedUrl']) {
    const plan = s.queryPlan(statement);
    assert.match(plan, /SEARCH f(rontier)? USING INDEX sqlite_autoindex_frontier_1 \(collection=\? AND url=\?\)/, `${statement}: ${plan}`);
    assert.match(plan, /SEARCH (r|records) USING INTEGER PRIMARY KEY/, `${statement}: ${plan}`);
    assert.doesNotMatch(plan, /SCAN/, `${statement}: ${plan}`);
  }
});

// A completion's random index pages stay in SQLite's own cache instead of being read back with a pread() each (PAGE_CACHE_KIB).
test('the store opens with an 8 MiB page cache and the WAL settings the crawl relies on', async () => {
  const s = new SqliteCrawlStore(join(dir, 'pragmas.db'));
  try {
    const db = (s as unknown as { db: DatabaseSync }).db;
    const pragma = (name: string): unknown => db.prepare(`PRAGMA ${name}`).get()?.[name];
    assert.equal(pragma('cache_size'), -8192);
    assert.equal(pragma('journal_mode'), 'wal');
    assert.equal(pragma('wal_autocheckpoint'), 10000);
  } finally {
    await s.close();
  }
});

test('a lease says whether the URI has a record, from its frontier row', async () => {
  const s = new SqliteCrawlStore(join(dir, 'crawled.db'));
  try {
    await s.enqueue('c', 1, [{ url: 'http://a.test/', site: 'http://a.test:80', depth: 0, hops: 0, redirects: 0, parent: undefined, priority: 1, sub: undefined }]);
    const [first] = await s.lease('c', 'http://a.test:80', 1);
    assert.equal(first!.crawled, false);
    await s.complete('c', 1, {
      leaseId: first!.id, site: first!.site, discovered: [],
      record: { url: first!.url, site: first!.site, status: 'stored', httpStatus: 200, checksum: 'c0', lastCrawledMs: 1, etag: '"e"', lastModified: undefined, errorCount: 0, skipCode: undefined, mime: 'text/html', size: 1, contentRef: 'r', duplicateOf: undefined, redirectTo: undefined, depth: 0, parent: undefined, epoch: 1 },
    });
    await s.enqueue('c', 2, [{ url: 'http://a.test/', site: 'http://a.test:80', depth: 0, hops: 0, redirects: 0, parent: undefined, priority: 1, sub: undefined }]);
    const [again] = await s.lease('c', 'http://a.test:80', 1);
    assert.equal(again!.crawled, true);
  } finally {
    await s.close();
  }
});

/** A store file made from test/fixtures/crawl-store/v1.sql (a store as schema version 1 wrote it). */
function v1Store(name: string): string {
  const path = join(dir, name);
  const db = new DatabaseSync(path);
  db.exec(readFileSync(new URL('../fixtures/crawl-store/v1.sql', import.meta.url), 'utf8'));
  db.close();
  return path;
}

const indexNames = (path: string): string[] => {
  const db = new DatabaseSync(path);
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
  } finally {
    db.close();
  }
};

test('a store of schema version 1 is migrated when opened: records, queue, leases and statistics kept', async () => {
  const path = v1Store('v1.db');
  assert.ok(indexNames(path).includes('frontier_site'));
  // A record whose URL the frontier no longer holds (written by putRecord): version 3 finds records through frontier rows.
  const raw = new DatabaseSync(path);
  raw.exec(`INSERT INTO records (collection, url, site, status, http_status, checksum, last_crawled_ms, etag, last_modified, error_count,
    skip_code, mime, size, content_ref, duplicate_of, redirect_to, depth, parent, epoch)
    VALUES ('old', 'http://a.example/gone', 'a.example:80', 'deleted', 404, NULL, 1700000003000, NULL, NULL, 2, NULL, NULL, NULL, NULL, NULL, NULL, 2, 'http://a.example/b', 3)`);
  raw.close();
  const s = new SqliteCrawlStore(path);
  try {
    // The record without a frontier row got one, done and queued for no cycle.
    assert.deepEqual(await s.counts('old'), { queued: 2, leased: 1, done: 3 });
    const gone = await s.getRecord('old', 'http://a.example/gone');
    assert.equal(gone?.status, 'deleted');
    assert.equal(gone?.errorCount, 2);
    assert.equal(await s.seen('old', 1, 'http://a.example/gone'), false);
    const home = await s.getRecord('old', 'http://a.example/');
    assert.equal(home?.status, 'stored');
    assert.equal(home?.etag, '"v1"');
    assert.equal(home?.contentRef, 'ref-1');
    assert.equal(home?.lastCrawledMs, 1700000001000);
    const dup = await s.getRecord('old', 'http://a.example/b');
    assert.equal(dup?.duplicateOf, 'http://a.example/');
    assert.equal(dup?.lastModified, 'Tue, 14 Nov 2023 22:13:20 GMT');
    assert.equal(dup?.errorCount, 1);
    assert.equal(await s.findByChecksum('old', 'c0ffee', 'http://a.example/x'), 'http://a.example/');
    assert.equal((await s.getCollection('old'))?.epoch, 3);
    // The URI that was leased when the store was written goes back to the queue; leasing keeps priority order.
    assert.equal((await s.recoverLeases('old')).recovered, 1);
    assert.deepEqual((await s.lease('old', 'a.example:80', 10)).map((u) => u.url), ['http://a.example/c', 'http://a.example/e', 'http://a.example/d']);
    assert.equal(await s.seen('old', 3, 'http://a.example/b'), true);
    // Records written after the migration sit beside the migrated ones.
    await s.putRecord('old', { ...home!, url: 'http://a.example/e', checksum: 'beef' });
    assert.deepEqual((await s.listRecords('old')).map((r) => r.url), ['http://a.example/', 'http://a.example/b', 'http://a.example/e', 'http://a.example/gone']);
    assert.equal((await s.getRecord('old', 'http://a.example/e'))?.checksum, 'beef');
  } finally {
    await s.close();
  }
  assert.deepEqual(indexNames(path), ['feed_outbox_order', 'frontier_leased', 'frontier_queue', 'records_checksum', 'records_site']);
  const db = new DatabaseSync(path);
  assert.equal((db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string }).value, '5');
  db.close();
  // Opened again, it is a version 3 store and needs nothing more.
  const again = new SqliteCrawlStore(path);
  assert.equal((await again.listRecords('old')).length, 4);
  assert.equal((await again.getRecord('old', 'http://a.example/'))?.etag, '"v1"');
  await again.close();
});

test('a store of a later schema version is refused and left as it was', () => {
  const path = v1Store('v9.db');
  const db = new DatabaseSync(path);
  db.exec("UPDATE meta SET value = '9' WHERE key = 'schema'; PRAGMA wal_checkpoint(TRUNCATE);");
  db.close();
  const before = readFileSync(path);
  assert.throws(() => new SqliteCrawlStore(path), (err: Error) => {
    assert.equal((err as TrawlError).code, 'TRAWL_ERR_IO');
    assert.match(err.message, /crawl store .*v9\.db has schema version 9; this trawl reads versions 1 to 5/);
    return true;
  });
  assert.equal(statSync(path).size, before.length);
  assert.deepEqual(readFileSync(path), before);
  assert.ok(indexNames(path).includes('frontier_site'));
});

test('a store held by another process is refused with a clear error, and opens once that process is gone', async () => {
  const path = join(dir, 'held.db');
  await new SqliteCrawlStore(path).close();
  // Another process opens the store and keeps it (as a running `trawl crawl` does) until told to stop.
  const holder = spawn(process.execPath, ['--input-type=module', '-e', `
    const { SqliteCrawlStore } = await import(${JSON.stringify(new URL('../../src/store/sqlite/sqlite-crawl-store.ts', import.meta.url).href)});
    const s = new SqliteCrawlStore(${JSON.stringify(path)});
    await s.listCollections();
    process.stdout.write('held\\n');
    process.stdin.once('data', async () => { await s.close(); process.exit(0); });
  `], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    await once(holder.stdout, 'data');
    assert.throws(() => new SqliteCrawlStore(path, { busyTimeoutMs: 50 }), (err: Error) => {
      assert.equal((err as TrawlError).code, 'TRAWL_ERR_IO');
      assert.match(err.message, /crawl store .*held\.db is in use by another process/);
      return true;
    });
  } finally {
    holder.stdin.write('stop\n');
    await once(holder, 'exit');
  }
  const s = new SqliteCrawlStore(path, { busyTimeoutMs: 50 });
  assert.deepEqual(await s.listCollections(), []);
  await s.close();
});
