// The crawl store on the storage thread (what `trawl crawl` and `trawl serve` use) against the contract.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isTrawlError } from '../../src/core/errors.ts';
import type { CrawlStore } from '../../src/store/crawl-store.ts';
import { openThreadedCrawlStore } from '../../src/store/storage-client.ts';
import { crawlStoreSuite } from './crawl-store-suite.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-wstore-'));
let n = 0;
const paths = new WeakMap<CrawlStore, string>();

crawlStoreSuite({
  name: 'sqlite on the storage thread',
  async open() {
    const s = await openThreadedCrawlStore(join(dir, `store-${n++}.db`));
    paths.set(s, s.path);
    return s;
  },
  async reopen(store) {
    const path = paths.get(store)!;
    await store.close();
    const s = await openThreadedCrawlStore(path);
    paths.set(s, path);
    return s;
  },
});

test('a store that cannot be opened rejects with the store\'s own error, naming the file', async () => {
  const notDb = join(dir, 'not-a-db');
  writeFileSync(notDb, 'this is not a database, just text that is long enough to fill a header page. '.repeat(20));
  await assert.rejects(openThreadedCrawlStore(notDb), (err: unknown) => isTrawlError(err) && err.code === 'TRAWL_ERR_IO' && err.message.includes(notDb));
});

test('a closed store refuses calls', async () => {
  const s = await openThreadedCrawlStore(join(dir, 'closed.db'));
  await s.putCollection('c', '<x/>', 1);
  assert.equal((await s.getCollection('c'))!.configXml, '<x/>');
  await s.close();
  await assert.rejects(s.getCollection('c'), /the store is closed/);
});

test('a call whose arguments cannot be sent to the storage thread fails alone, with the reason; the calls beside it succeed', async () => {
  const s = await openThreadedCrawlStore(join(dir, 'unclonable.db'));
  try {
    const calls = [
      s.putCollection('a', '<a/>', 1),
      s.putCollection('b', (() => '<b/>') as unknown as string, 1),
      s.putCollection('c', '<c/>', 1),
    ];
    const settled = await Promise.allSettled(calls);
    const [a, b, c] = [settled[0]!, settled[1]!, settled[2]!];
    assert.equal(a.status, 'fulfilled');
    assert.equal(c.status, 'fulfilled');
    assert.equal(b.status, 'rejected');
    assert.match(String((b as PromiseRejectedResult).reason), /cannot send putCollection to the storage thread: .*could not be cloned/);
    assert.deepEqual([(await s.getCollection('a'))?.configXml, await s.getCollection('b'), (await s.getCollection('c'))?.configXml], ['<a/>', undefined, '<c/>']);
  } finally {
    await s.close();
  }
});

test('complete and enqueue answer with the caller\'s own URI objects, the ones the store queued, in order', async () => {
  const s = await openThreadedCrawlStore(join(dir, 'subset.db'));
  try {
    await s.putCollection('c', '<x/>', 1);
    const uri = (url: string) => ({ url, site: 'http://a.test:80', depth: 0, hops: 0, redirects: 0, parent: undefined, priority: 0, sub: undefined });
    const first = [uri('http://a.test/1'), uri('http://a.test/2')];
    const added = await s.enqueue('c', 1, first);
    assert.equal(added.length, 2);
    assert.ok(added[0] === first[0] && added[1] === first[1]);
    // Front insertion reverses internally; the answer keeps the caller's order.
    const front = [uri('http://a.test/3'), uri('http://a.test/1'), uri('http://a.test/4')];
    const addedFront = await s.enqueue('c', 1, front, true);
    assert.deepEqual(addedFront.map((u) => u.url), ['http://a.test/3', 'http://a.test/4']);
    assert.ok(addedFront[0] === front[0] && addedFront[1] === front[2]);
    const [leased] = await s.lease('c', 'http://a.test:80', 1);
    const discovered = [uri('http://a.test/2'), uri('http://a.test/5')];
    const completed = await s.complete('c', 1, { leaseId: leased!.id, site: leased!.site, discovered });
    assert.equal(completed.length, 1);
    assert.ok(completed[0] === discovered[1]);
  } finally {
    await s.close();
  }
});
