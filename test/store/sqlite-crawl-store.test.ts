// The SQLite dialect against the CrawlStore contract, on real database files.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
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
  assert.match(s.queryPlan('leaseSelect'), /USING INDEX frontier_site/);
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
