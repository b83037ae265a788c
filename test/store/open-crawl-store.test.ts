// Which crawl store `--store` names (src/store/open-crawl-store.ts).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { isTrawlError } from '../../src/core/errors.ts';
import { openCrawlStore, parseStoreSpec } from '../../src/store/open-crawl-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-open-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('no --store is SQLite in the data directory; sqlite:PATH is that file; postgres:// and postgresql:// are PostgreSQL', () => {
  assert.deepEqual(parseStoreSpec(undefined, '/data'), { kind: 'sqlite', path: '/data/trawl.db' });
  assert.deepEqual(parseStoreSpec('sqlite:rel/x.db', '/data'), { kind: 'sqlite', path: resolve('rel/x.db') });
  assert.deepEqual(parseStoreSpec('sqlite:/abs/x.db', '/data'), { kind: 'sqlite', path: '/abs/x.db' });
  assert.deepEqual(parseStoreSpec('postgres://u:p@db:5432/trawl', '/data'), { kind: 'postgres', url: 'postgres://u:p@db:5432/trawl' });
  assert.deepEqual(parseStoreSpec('postgresql://db/trawl', '/data'), { kind: 'postgres', url: 'postgresql://db/trawl' });
});

test('anything else is a usage error naming the value, a password in it masked', () => {
  for (const [spec, shown] of [['mysql://db/x', 'mysql://db/x'], ['trawl.db', 'trawl.db'], ['postgres://u:hunter2@[bad/x', 'postgres://u:********@[bad/x']]) {
    assert.throws(() => parseStoreSpec(spec, '/data'), (err: unknown) => {
      assert.ok(isTrawlError(err) && err.code === 'TRAWL_ERR_USAGE');
      assert.equal(err.message, `--store ${shown}: not a crawl store (give sqlite:PATH, or postgres://user@host:port/database)`);
      return true;
    });
  }
});

test('openCrawlStore opens SQLite at the path it names', async () => {
  const path = join(dir, 'named.db');
  const s = await openCrawlStore(`sqlite:${path}`, join(dir, 'data'));
  await s.putCollection('c', '<x/>', 1);
  await s.close();
  assert.ok(existsSync(path));
  assert.ok(!existsSync(join(dir, 'data', 'trawl.db')));
});
