// The SQLite dialect against the CrawlStore contract, on real database files.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { test } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import type { CrawlStore } from '../../src/store/crawl-store.ts';
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
  assert.match(s.queryPlan('leaseSelect'), /USING INDEX frontier_site/);
});
