/**
 * The CrawlStore contract, as one suite that takes the implementation.
 * Every dialect runs it (SQLite now; PostgreSQL later).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSuspect, type CrawlStore, type QueuedUri, type UriRecord } from '../../src/store/crawl-store.ts';

export interface SuiteTarget {
  readonly name: string;
  /** A fresh, empty store. */
  open(): Promise<CrawlStore>;
  /** Closes and reopens the same store (persistence); undefined when not supported. */
  reopen?(store: CrawlStore): Promise<CrawlStore>;
}

export const q = (url: string, extra: Partial<QueuedUri> = {}): QueuedUri => ({
  url, site: new URL(url).origin.replace(/^(https?:\/\/[^:/]+)$/, (s) => `${s}:${s.startsWith('https') ? 443 : 80}`),
  depth: 0, hops: 0, redirects: 0, parent: undefined, priority: 1, sub: undefined, ...extra,
});

export const rec = (url: string, extra: Partial<UriRecord> = {}): UriRecord => ({
  url, site: q(url).site, status: 'stored', httpStatus: 200, checksum: 'c0', lastCrawledMs: 1000, etag: undefined, lastModified: undefined,
  errorCount: 0, skipCode: undefined, mime: 'text/html', size: 10, contentRef: undefined, duplicateOf: undefined, redirectTo: undefined,
  depth: 0, parent: undefined, epoch: 1, ...extra,
});

export function crawlStoreSuite(target: SuiteTarget): void {
  describe(`CrawlStore contract: ${target.name}`, () => {
    it('keeps collections: put, get, list, update, and put again keeps state and epoch', async () => {
      const s = await target.open();
      assert.equal(await s.getCollection('a'), undefined);
      await s.putCollection('a', '<x/>', 5);
      await s.updateCollection('a', { state: 'suspended', epoch: 3, extra: { refreshOnly: true } });
      await s.putCollection('a', '<y/>', 9);
      const a = await s.getCollection('a');
      assert.equal(a!.configXml, '<y/>');
      assert.equal(a!.state, 'suspended');
      assert.equal(a!.epoch, 3);
      assert.equal(a!.createdMs, 5);
      assert.deepEqual(a!.extra, { refreshOnly: true });
      await s.putCollection('b', '<z/>', 1);
      assert.deepEqual((await s.listCollections()).map((c) => c.name), ['a', 'b']);
      await s.close();
    });

    it('enqueue is the seen set: a URL enters once per cycle, again in a later cycle', async () => {
      const s = await target.open();
      const added = await s.enqueue('c', 1, [q('http://a.test/1'), q('http://a.test/2'), q('http://a.test/1')]);
      assert.deepEqual(added.map((u) => u.url), ['http://a.test/1', 'http://a.test/2']);
      assert.deepEqual(await s.enqueue('c', 1, [q('http://a.test/2')]), []);
      assert.equal(await s.seen('c', 1, 'http://a.test/2'), true);
      assert.equal(await s.seen('c', 1, 'http://a.test/3'), false);
      assert.equal(await s.seen('other', 1, 'http://a.test/2'), false);
      const [l] = await s.lease('c', 'http://a.test:80', 1);
      await s.complete('c', 1, { leaseId: l!.id, site: l!.site, record: rec(l!.url), discovered: [] });
      assert.deepEqual(await s.enqueue('c', 1, [q('http://a.test/1')]), []); // done in this cycle: still seen
      assert.equal((await s.enqueue('c', 2, [q('http://a.test/1')])).length, 1); // a new cycle
      assert.deepEqual(await s.counts('c'), { queued: 2, leased: 0, done: 0 });
      await s.close();
    });

    it('a URI left queued by an earlier cycle and fetched in this one is seen in this one (refresh_mode append)', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/left'), q('http://a.test/busy')]);
      // Cycle 2 keeps them queued (append) and fetches them.
      const [left, busy] = await s.lease('c', 'http://a.test:80', 2);
      assert.deepEqual([left!.url, busy!.url], ['http://a.test/left', 'http://a.test/busy']);
      // Linked again while /busy is being fetched: neither is queued again, nor is the lease given up.
      const linked = [q('http://a.test/left'), q('http://a.test/busy')];
      assert.deepEqual(await s.complete('c', 2, { leaseId: left!.id, site: left!.site, record: rec(left!.url, { epoch: 2 }), discovered: linked }), []);
      assert.deepEqual(await s.frontierEntry('c', 'http://a.test/left').then((e) => [e!.state, e!.epoch]), ['done', 2]);
      assert.equal((await s.frontierEntry('c', 'http://a.test/busy'))!.state, 'leased');
      assert.deepEqual(await s.enqueue('c', 2, linked), []);
      assert.equal(await s.seen('c', 2, 'http://a.test/left'), true);
      await s.complete('c', 2, { leaseId: busy!.id, site: busy!.site, record: rec(busy!.url, { epoch: 2 }), discovered: linked });
      assert.deepEqual(await s.counts('c'), { queued: 0, leased: 0, done: 2 });
      assert.deepEqual(await s.enqueue('c', 2, linked), []);
      // A completion never takes an entry back to an earlier cycle; the next cycle queues both again.
      assert.equal((await s.frontierEntry('c', 'http://a.test/busy'))!.epoch, 2);
      assert.equal((await s.enqueue('c', 3, linked)).length, 2);
      await s.close();
    });

    it('frontierEntry: the state, cycle and parent as queued, leased and done; undefined when unknown', async () => {
      const s = await target.open();
      assert.equal(await s.frontierEntry('c', 'http://a.test/x'), undefined);
      await s.enqueue('c', 3, [q('http://a.test/x', { depth: 2, hops: 2, parent: 'http://a.test/' })]);
      assert.deepEqual(await s.frontierEntry('c', 'http://a.test/x'), {
        state: 'queued', epoch: 3, depth: 2, hops: 2, redirects: 0, retries: 0, priority: 1, parent: 'http://a.test/', sub: undefined, flags: 0,
      });
      const [l] = await s.lease('c', 'http://a.test:80', 1);
      assert.equal((await s.frontierEntry('c', 'http://a.test/x'))!.state, 'leased');
      await s.complete('c', 3, { leaseId: l!.id, site: l!.site, record: rec(l!.url), discovered: [] });
      assert.equal((await s.frontierEntry('c', 'http://a.test/x'))!.state, 'done');
      assert.equal(await s.frontierEntry('other', 'http://a.test/x'), undefined);
      await s.close();
    });

    it('leases by priority, then first in first out; front insertion goes first, in batch order', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/1'), q('http://a.test/2', { priority: 2 }), q('http://a.test/3')]);
      await s.enqueue('c', 1, [q('http://a.test/u1'), q('http://a.test/u2')], true);
      await s.enqueue('c', 1, [q('http://b.test/x')]);
      const l = await s.lease('c', 'http://a.test:80', 10);
      assert.deepEqual(l.map((u) => u.url), ['http://a.test/u1', 'http://a.test/u2', 'http://a.test/1', 'http://a.test/3', 'http://a.test/2']);
      assert.deepEqual(await s.lease('c', 'http://a.test:80', 10), []);
      assert.deepEqual((await s.sitesWithWork('c')).map((w) => [w.site, w.queued]), [['http://b.test:80', 1]]);
      await s.close();
    });

    it('leases the priority levels in the order given (pop_scheme rr/wrr), a level not named last, then first in first out', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/1a'), q('http://a.test/2a', { priority: 2 }), q('http://a.test/3a', { priority: 3 }), q('http://a.test/1b'), q('http://a.test/2b', { priority: 2 })]);
      assert.deepEqual((await s.lease('c', 'http://a.test:80', 1, [2, 1])).map((u) => u.url), ['http://a.test/2a']);
      assert.deepEqual((await s.lease('c', 'http://a.test:80', 10, [1, 2])).map((u) => u.url), ['http://a.test/1a', 'http://a.test/1b', 'http://a.test/2b', 'http://a.test/3a']);
      assert.deepEqual(await s.lease('c', 'http://a.test:80', 10, [3, 2, 1]), []);
      // What the cycle took from each level (leased or done), for pop_scheme to resume from; other cycles and sites apart.
      await s.enqueue('c', 2, [q('http://a.test/next', { priority: 2 })]);
      await s.enqueue('c', 1, [q('http://b.test/1')]);
      assert.deepEqual([...(await s.levelCounts('c', 'http://a.test:80', 1))].sort(), [[1, 2], [2, 2], [3, 1]]);
      assert.deepEqual([...(await s.levelCounts('c', 'http://a.test:80', 2))], []);
      await s.close();
    });

    it('keeps each cycle\'s ID and status, the latest first; deleting the collection deletes them', async () => {
      const s = await target.open();
      await s.putCollection('c', '<x/>', 1);
      const first = { id: 'a'.repeat(24), epoch: 1, status: 'running' as const, statusMs: 10, startedMs: 10, endedMs: undefined, stoppedBy: undefined };
      await s.putCycle('c', first);
      await s.putCycle('c', { ...first, status: 'success', statusMs: 20, endedMs: 20, stoppedBy: 'max-unique-urls' });
      await s.putCycle('c', { id: 'b'.repeat(24), epoch: 2, status: 'canceling', statusMs: 30, startedMs: 30, endedMs: undefined, stoppedBy: undefined });
      await s.putCycle('d', { ...first, id: 'c'.repeat(24) });
      assert.deepEqual(await s.listCycles('c', 10), [
        { id: 'b'.repeat(24), epoch: 2, status: 'canceling', statusMs: 30, startedMs: 30, endedMs: undefined, stoppedBy: undefined },
        { id: 'a'.repeat(24), epoch: 1, status: 'success', statusMs: 20, startedMs: 10, endedMs: 20, stoppedBy: 'max-unique-urls' },
      ]);
      assert.equal((await s.listCycles('c', 1)).length, 1);
      if (target.reopen) {
        const again = await target.reopen(s);
        assert.equal((await again.listCycles('c', 1))[0]?.status, 'canceling');
        await again.deleteCollection('c');
        assert.deepEqual(await again.listCycles('c', 10), []);
        assert.equal((await again.listCycles('d', 10)).length, 1);
        await again.close();
        return;
      }
      await s.deleteCollection('c');
      assert.deepEqual(await s.listCycles('c', 10), []);
      await s.close();
    });

    it('release, retry and recoverLeases put URIs back in the queue', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/1'), q('http://a.test/2'), q('http://a.test/3')]);
      const [a, b, c] = await s.lease('c', 'http://a.test:80', 3);
      await s.release('c', [a!.id]);
      await s.retry('c', b!.id);
      assert.deepEqual(await s.counts('c'), { queued: 2, leased: 1, done: 0 });
      const again = await s.lease('c', 'http://a.test:80', 3);
      assert.deepEqual(again.map((u) => [u.url, u.retries]), [['http://a.test/1', 0], ['http://a.test/2', 1]]);
      assert.deepEqual(await s.recoverLeases('c'), { recovered: 3, crashedTwice: [] });
      assert.deepEqual(await s.counts('c'), { queued: 3, leased: 0, done: 0 });
      void c;
      await s.close();
    });

    it('crash strikes: a recovered URI is a suspect; an armed suspect leased at the next crash is handed back as crashed twice', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/1'), q('http://a.test/2'), q('http://a.test/3')]);
      const first = await s.lease('c', 'http://a.test:80', 3);
      assert.deepEqual(first.map((u) => isSuspect(u.flags)), [false, false, false]);
      // The first crash: all three were leased.
      assert.deepEqual(await s.recoverLeases('c'), { recovered: 3, crashedTwice: [] });
      const again = await s.lease('c', 'http://a.test:80', 3);
      assert.deepEqual(again.map((u) => [u.url, isSuspect(u.flags)]), [['http://a.test/1', true], ['http://a.test/2', true], ['http://a.test/3', true]]);
      // /1 is fetched alone (armed); /2 completes; /3 waits, leased but not armed. The second crash:
      await s.armSuspect('c', again[0]!.id);
      await s.complete('c', 1, { leaseId: again[1]!.id, site: again[1]!.site, discovered: [] });
      const second = await s.recoverLeases('c');
      assert.deepEqual(second.crashedTwice.map((u) => u.url), ['http://a.test/1']);
      assert.equal(second.recovered, 1);
      assert.deepEqual(await s.counts('c'), { queued: 1, leased: 1, done: 1 });
      // Until it is completed the armed URI stays leased and is handed back again.
      assert.deepEqual((await s.recoverLeases('c')).crashedTwice.map((u) => u.url), ['http://a.test/1']);
      await s.complete('c', 1, { leaseId: second.crashedTwice[0]!.id, site: 'http://a.test:80', discovered: [] });
      // /3 was waiting, not armed: one strike only, a suspect again, and leased without one.
      const third = await s.lease('c', 'http://a.test:80', 3);
      assert.deepEqual(third.map((u) => [u.url, isSuspect(u.flags)]), [['http://a.test/3', true]]);
      await s.complete('c', 1, { leaseId: third[0]!.id, site: 'http://a.test:80', discovered: [] });
      // A completed URI loses its strike: queued again in the next cycle, it is no suspect.
      await s.enqueue('c', 2, [q('http://a.test/3')]);
      assert.deepEqual((await s.lease('c', 'http://a.test:80', 3)).map((u) => [u.url, isSuspect(u.flags)]), [['http://a.test/3', false]]);
      await s.close();
    });

    it('complete writes the record, the discovered links and the site statistics together', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/')]);
      const [l] = await s.lease('c', 'http://a.test:80', 1);
      const added = await s.complete('c', 1, {
        leaseId: l!.id, site: l!.site, record: rec('http://a.test/', { checksum: 'abc', etag: '"e"' }),
        discovered: [q('http://a.test/x', { depth: 1, parent: 'http://a.test/' }), q('http://a.test/'), q('http://b.test/y')], siteStats: '{"Processed":1}',
      });
      assert.deepEqual(added.map((u) => u.url), ['http://a.test/x', 'http://b.test/y']);
      const r = await s.getRecord('c', 'http://a.test/');
      assert.equal(r!.checksum, 'abc');
      assert.equal(r!.etag, '"e"');
      assert.equal(r!.lastModified, undefined);
      assert.equal(await s.getSiteStats('c', 'http://a.test:80'), '{"Processed":1}');
      assert.deepEqual(await s.counts('c'), { queued: 2, leased: 0, done: 1 });
      assert.equal(await s.findByChecksum('c', 'abc', 'http://other/'), 'http://a.test/');
      assert.equal(await s.findByChecksum('c', 'abc', 'http://a.test/'), undefined);
      const [x] = await s.lease('c', 'http://a.test:80', 1);
      assert.equal(x!.depth, 1);
      assert.equal(x!.parent, 'http://a.test/');
      await s.close();
    });

    it('duplicatesOf lists the duplicates of a URL, in URL order, up to the limit', async () => {
      const s = await target.open();
      await s.putRecord('c', rec('http://a.test/', { checksum: 'abc' }));
      for (const u of ['http://b.test/2', 'http://a.test/1', 'http://b.test/1']) await s.putRecord('c', rec(u, { status: 'duplicate', checksum: 'abc', duplicateOf: 'http://a.test/' }));
      await s.putRecord('c', rec('http://a.test/was', { status: 'stored', checksum: 'def', duplicateOf: undefined }));
      await s.putRecord('other', rec('http://a.test/o', { status: 'duplicate', checksum: 'abc', duplicateOf: 'http://a.test/' }));
      assert.deepEqual(await s.duplicatesOf('c', 'http://a.test/', 10), ['http://a.test/1', 'http://b.test/1', 'http://b.test/2']);
      assert.deepEqual(await s.duplicatesOf('c', 'http://a.test/', 2), ['http://a.test/1', 'http://b.test/1']);
      assert.deepEqual(await s.duplicatesOf('c', 'http://b.test/1', 10), []);
      await s.close();
    });

    it('complete is all or nothing', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/')]);
      const [l] = await s.lease('c', 'http://a.test:80', 1);
      const bad = { ...q('http://a.test/bad'), url: null as unknown as string };
      await assert.rejects(s.complete('c', 1, { leaseId: l!.id, site: l!.site, record: rec('http://a.test/'), discovered: [q('http://a.test/ok'), bad] }));
      assert.equal(await s.getRecord('c', 'http://a.test/'), undefined);
      assert.deepEqual(await s.counts('c'), { queued: 0, leased: 1, done: 0 });
      await s.close();
    });

    it('dropQueued empties the queue (refresh_mode scratch)', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/1'), q('http://b.test/1')]);
      await s.enqueue('c', 2, [q('http://c.test/1')]);
      assert.equal(await s.dropQueued('c', 'http://a.test:80'), 1);
      assert.equal(await s.dropQueued('c', undefined, 2), 1); // only what was queued before cycle 2
      assert.equal(await s.dropQueued('c'), 1);
      assert.deepEqual(await s.counts('c'), { queued: 0, leased: 0, done: 3 });
      await s.close();
    });

    it('dropQueued drops one sub-collection\'s queued URIs, or all but some sub-collections\' (a sub-collection\'s own refresh_mode)', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/main'), q('http://a.test/news', { sub: 'news' }), q('http://a.test/docs', { sub: 'docs' }), q('http://b.test/news', { sub: 'news' })]);
      await s.enqueue('c', 2, [q('http://a.test/news2', { sub: 'news' })]);
      // Only the news sub-collection's, of one site, queued before cycle 2.
      assert.equal(await s.dropQueued('c', 'http://a.test:80', 2, { names: ['news'], except: false }), 1);
      // Everything but the docs sub-collection's: the main collection's URI and b.test's news one (a.test/news2 is cycle 2's).
      assert.equal(await s.dropQueued('c', undefined, 2, { names: ['docs'], except: true }), 2);
      const left = (await s.lease('c', 'http://a.test:80', 10)).map((l) => l.url).sort();
      assert.deepEqual(left, ['http://a.test/docs', 'http://a.test/news2']);
      assert.equal(await s.dropQueued('c', undefined, undefined, { names: [], except: false }), 0);
      await s.close();
    });

    it('keeps flags, sitemap metadata and channel links with FIFO and age expiry', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/sitemap.xml', { flags: 1 | (2 << 8) })]);
      const [l] = await s.lease('c', 'http://a.test:80', 1);
      assert.equal(l!.flags, 1 | (2 << 8));
      await s.putSitemapMeta('c', [{ url: 'http://a.test/x', lastmod: '2026-01-01', changefreq: 'daily', priority: 0.8 }]);
      await s.putSitemapMeta('c', [{ url: 'http://a.test/x', lastmod: '2026-02-01', changefreq: 'weekly', priority: undefined }]);
      assert.deepEqual(await s.getSitemapMeta('c', 'http://a.test/x'), { url: 'http://a.test/x', lastmod: '2026-02-01', changefreq: 'weekly', priority: undefined });
      assert.equal(await s.getSitemapMeta('c', 'http://a.test/y'), undefined);
      assert.deepEqual(await s.listSitemapMeta('c'), [{ url: 'http://a.test/x', lastmod: '2026-02-01', changefreq: 'weekly', priority: undefined }]);
      const feed = 'http://a.test/feed.xml';
      assert.deepEqual(await s.noteFeedLinks('c', feed, ['u1', 'u2', 'u3'], 1000, 3, 0), []);
      assert.deepEqual(await s.noteFeedLinks('c', feed, ['u2', 'u4'], 2000, 3, 0), ['u1']); // the oldest goes first
      assert.deepEqual((await s.noteFeedLinks('c', feed, [], 100_000, 10, 60_000)).sort(), ['u2', 'u3', 'u4']);
      await s.close();
    });

    it('keeps change histories (refresh_mode adaptive), a later entry replacing the earlier', async () => {
      const s = await target.open();
      assert.deepEqual(await s.listChangeHistory('c'), []);
      await s.putChangeHistory('c', [
        { url: 'http://a.test/x', checks: 1, changes: 0, sinceMs: 1000, lastChangeMs: undefined },
        { url: 'http://a.test/y', checks: 2, changes: 1, sinceMs: 500, lastChangeMs: 1500 },
      ]);
      await s.putChangeHistory('c', [{ url: 'http://a.test/x', checks: 3, changes: 2, sinceMs: 1000, lastChangeMs: 4000 }]);
      await s.putChangeHistory('other', [{ url: 'http://a.test/x', checks: 9, changes: 9, sinceMs: 1, lastChangeMs: 2 }]);
      const rows = (await s.listChangeHistory('c')).sort((a, b) => a.url.localeCompare(b.url));
      assert.deepEqual(rows, [
        { url: 'http://a.test/x', checks: 3, changes: 2, sinceMs: 1000, lastChangeMs: 4000 },
        { url: 'http://a.test/y', checks: 2, changes: 1, sinceMs: 500, lastChangeMs: 1500 },
      ]);
      await s.deleteCollection('c');
      assert.deepEqual(await s.listChangeHistory('c'), []);
      assert.equal((await s.listChangeHistory('other')).length, 1);
      await s.close();
    });

    it('requeues seen URIs on request, and forgets URIs and sites', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/1'), q('http://a.test/2'), q('http://b.test/1')]);
      for (const site of ['http://a.test:80', 'http://b.test:80']) {
        for (const l of await s.lease('c', site, 5)) await s.complete('c', 1, { leaseId: l.id, site: l.site, record: rec(l.url, { contentRef: `ref-${l.url}` }), discovered: [] });
      }
      assert.deepEqual(await s.enqueue('c', 1, [q('http://a.test/1')]), []);
      assert.equal(await s.requeue('c', 1, [q('http://a.test/1'), q('http://a.test/9')], true), 2);
      assert.deepEqual((await s.lease('c', 'http://a.test:80', 5)).map((u) => u.url), ['http://a.test/1', 'http://a.test/9']);
      assert.deepEqual(await s.deleteUris('c', ['http://a.test/2', 'http://a.test/none']), ['ref-http://a.test/2']);
      assert.equal(await s.getRecord('c', 'http://a.test/2'), undefined);
      assert.deepEqual(await s.deleteSite('c', 'http://b.test:80'), ['ref-http://b.test/1']);
      assert.equal(await s.countRecords('c', { site: 'http://b.test:80' }), 0);
      assert.equal(await s.countRecords('c'), 1);
      await s.close();
    });

    it('keeps quarantined URIs in a separate queue until the quarantine ends', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/1'), q('http://a.test/2', { flags: 16 }), q('http://a.test/3', { flags: 16 | 1 })]);
      assert.deepEqual((await s.sitesWithWork('c')).map((w) => w.queued), [1]);
      assert.deepEqual((await s.lease('c', 'http://a.test:80', 10)).map((u) => u.url), ['http://a.test/1']);
      assert.equal(await s.releaseQuarantine('c', 'http://a.test:80'), 2);
      const released = await s.lease('c', 'http://a.test:80', 10);
      assert.deepEqual(released.map((u) => [u.url, u.flags]), [['http://a.test/2', 0], ['http://a.test/3', 1]]);
      await s.close();
    });

    it('keeps the feed outbox: one operation per URL and destination, in order, written with the fetch', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/1')]);
      const [l] = await s.lease('c', 'http://a.test:80', 1);
      await s.complete('c', 1, { leaseId: l!.id, site: l!.site, record: rec(l!.url, { contentRef: 'r1' }), discovered: [], feed: [{ destination: 'A', url: l!.url, op: 'add' }, { destination: 'B', url: l!.url, op: 'add' }] });
      await s.queueFeed('c', [{ destination: 'A', url: 'http://a.test/2', op: 'delete' }, { destination: 'A', url: 'http://a.test/1', op: 'update' }]);
      const a = await s.pendingFeed('c', 'A', 0, 10);
      // The update of a pending add stays an add, and keeps its place.
      assert.deepEqual(a.map((p) => [p.url, p.op]), [['http://a.test/1', 'add'], ['http://a.test/2', 'delete']]);
      assert.deepEqual(await s.feedBacklog('c'), { A: 2, B: 1 });
      assert.deepEqual((await s.pendingFeed('c', 'A', a[0]!.id, 10)).map((p) => p.url), ['http://a.test/2']);
      // Replaced after it was read: the ack of the old version leaves the new one.
      await s.queueFeed('c', [{ destination: 'A', url: 'http://a.test/2', op: 'add' }]);
      await s.ackFeed('c', a);
      assert.deepEqual((await s.pendingFeed('c', 'A', 0, 10)).map((p) => [p.url, p.op]), [['http://a.test/2', 'add']]);
      assert.deepEqual(await s.pendingFeed('other', 'A', 0, 10), []);
      await s.close();
    });

    it('keeps one record per URL: a completion rewrites it, putRecord writes one for a URL never queued', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/1')]);
      const [l] = await s.lease('c', 'http://a.test:80', 1);
      // A lease tells whether the store holds a record of the URI (the crawler then skips getRecord); false or unsaid before the first crawl.
      assert.notEqual(l!.crawled, true);
      await s.complete('c', 1, { leaseId: l!.id, site: l!.site, record: rec(l!.url, { checksum: 'first', etag: '"1"' }), discovered: [] });
      assert.equal((await s.getRecord('c', 'http://a.test/1'))?.etag, '"1"');
      // The next cycle fetches it again: the same record, rewritten.
      assert.equal((await s.enqueue('c', 2, [q('http://a.test/1')])).length, 1);
      const [again] = await s.lease('c', 'http://a.test:80', 1);
      assert.notEqual(again!.crawled, false);
      await s.complete('c', 2, { leaseId: again!.id, site: again!.site, record: rec(again!.url, { checksum: 'second', epoch: 2 }), discovered: [] });
      assert.equal((await s.getRecord('c', 'http://a.test/1'))?.checksum, 'second');
      assert.equal((await s.getRecord('c', 'http://a.test/1'))?.etag, undefined);
      assert.equal(await s.countRecords('c'), 1);
      // A record for a URL the frontier never held: found by URL, rewritten in place, and the URL can still be queued.
      await s.putRecord('c', rec('http://a.test/orphan', { status: 'deleted', contentRef: undefined }));
      await s.putRecord('c', rec('http://a.test/orphan', { status: 'deleted', errorCount: 3 }));
      assert.equal((await s.getRecord('c', 'http://a.test/orphan'))?.errorCount, 3);
      assert.equal(await s.countRecords('c'), 2);
      assert.equal(await s.seen('c', 2, 'http://a.test/orphan'), false);
      assert.deepEqual((await s.enqueue('c', 2, [q('http://a.test/orphan')])).map((u) => u.url), ['http://a.test/orphan']);
      assert.equal(await s.getRecord('other', 'http://a.test/1'), undefined);
      await s.close();
    });

    it('a deleted record stays gone for its URL, even while the URI is leased and other records are written', async () => {
      const s = await target.open();
      await s.enqueue('c', 1, [q('http://a.test/1'), q('http://a.test/2')]);
      const [l] = await s.lease('c', 'http://a.test:80', 1);
      await s.complete('c', 1, { leaseId: l!.id, site: l!.site, record: rec(l!.url, { contentRef: 'r1' }), discovered: [] });
      assert.equal((await s.enqueue('c', 2, [q('http://a.test/1')])).length, 1);
      const out = await s.lease('c', 'http://a.test:80', 2);
      assert.deepEqual(out.map((u) => u.url), ['http://a.test/2', 'http://a.test/1']);
      const [two, leased] = out;
      // Deleted while its next fetch is under way: the frontier row stays, the record goes.
      assert.deepEqual(await s.deleteUris('c', ['http://a.test/1']), ['r1']);
      assert.equal(await s.getRecord('c', 'http://a.test/1'), undefined);
      await s.putRecord('c', rec('http://a.test/3'));
      await s.complete('c', 2, { leaseId: two!.id, site: two!.site, record: rec(two!.url), discovered: [] });
      assert.equal(await s.getRecord('c', 'http://a.test/1'), undefined);
      assert.deepEqual((await s.listRecords('c')).map((r) => r.url), ['http://a.test/2', 'http://a.test/3']);
      // The leased fetch ends: its record is new.
      await s.complete('c', 2, { leaseId: leased!.id, site: leased!.site, record: rec(leased!.url, { checksum: 'after' }), discovered: [] });
      assert.equal((await s.getRecord('c', 'http://a.test/1'))?.checksum, 'after');
      assert.equal(await s.countRecords('c'), 3);
      await s.close();
    });

    it('counts the documents held and the records written in a cycle (the cycle limits start from these)', async () => {
      const s = await target.open();
      assert.deepEqual(await s.cycleRecordCounts('c', 1), { documents: 0, inCycle: 0 });
      await s.putRecord('c', rec('http://a.test/1', { contentRef: 'r1', epoch: 1 }));
      await s.putRecord('c', rec('http://a.test/2', { contentRef: 'r2', status: 'unchanged', epoch: 2 }));
      await s.putRecord('c', rec('http://a.test/3', { contentRef: undefined, status: 'deleted', epoch: 2 }));
      await s.putRecord('c', rec('http://a.test/4', { contentRef: 'r4', status: 'duplicate', epoch: 2 }));
      await s.putRecord('other', rec('http://a.test/5', { contentRef: 'r5', epoch: 2 }));
      assert.deepEqual(await s.cycleRecordCounts('c', 2), { documents: 2, inCycle: 3 });
      assert.deepEqual(await s.cycleRecordCounts('c', 1), { documents: 2, inCycle: 1 });
      await s.close();
    });

    it('lists records a page at a time in the order they were written, forwards and backwards', async () => {
      const s = await target.open();
      const urls = ['http://b.test/z', 'http://a.test/m', 'http://c.test/a', 'http://a.test/b', 'http://b.test/c'];
      for (const u of urls) await s.putRecord('c', rec(u));
      await s.putRecord('other', rec('http://a.test/other'));
      // Rewritten in place: the record keeps its position.
      await s.putRecord('c', rec('http://a.test/m', { checksum: 'again' }));
      const walk = async (backwards: boolean, limit: number): Promise<string[][]> => {
        const pages: string[][] = [];
        for (let from: number | undefined; ;) {
          const p = await s.listRecordPage('c', { ...(from !== undefined ? { from } : {}), backwards, limit });
          if (p.records.length > 0) pages.push(p.records.map((r) => r.url));
          if (p.records.length < limit) return pages;
          from = backwards ? p.first : p.last;
        }
      };
      assert.deepEqual(await walk(false, 2), [urls.slice(0, 2), urls.slice(2, 4), urls.slice(4)]);
      assert.deepEqual(await walk(true, 2), [urls.slice(3), urls.slice(1, 3), urls.slice(0, 1)]);
      assert.deepEqual(await walk(false, 5), [urls]);
      const page = await s.listRecordPage('c', { limit: 10 });
      assert.equal(page.records.find((r) => r.url === 'http://a.test/m')?.checksum, 'again');
      // Each record's position: a walk may resume after any of them.
      const withPos = await s.listRecordPage('c', { limit: 3, positions: true });
      assert.equal(withPos.positions!.length, 3);
      assert.equal(withPos.positions![0], withPos.first);
      assert.equal(withPos.positions![2], withPos.last);
      assert.deepEqual((await s.listRecordPage('c', { from: withPos.positions![1]!, limit: 1 })).records.map((r) => r.url), [urls[2]]);
      assert.equal(page.positions, undefined);
      assert.deepEqual(await s.listRecordPage('none', { limit: 10 }), { records: [], first: 0, last: 0 });
      assert.deepEqual(await s.listRecordPage('c', { from: page.last, limit: 10 }), { records: [], first: 0, last: 0 });
      await s.close();
    });

    it('queues stored documents again by site, prefix or URL, and deletions of forgotten documents', async () => {
      const s = await target.open();
      for (const [url, extra] of [['http://a.test/x/1', {}], ['http://a.test/x/2', { status: 'unchanged' }], ['http://a.test/y/1', {}], ['http://b.test/1', {}], ['http://a.test/x/3', { status: 'error' }]] as const) {
        await s.putRecord('c', rec(url, { contentRef: `ref ${url}`, ...extra }));
      }
      await s.putRecord('c', rec('http://a.test/x/4', { contentRef: undefined }));
      assert.equal(await s.queueFeedFromRecords('c', ['A', 'B'], { site: 'http://a.test:80', prefix: 'http://a.test/x/' }), 2);
      assert.deepEqual((await s.pendingFeed('c', 'B', 0, 10)).map((p) => [p.url, p.op]), [['http://a.test/x/1', 'update'], ['http://a.test/x/2', 'update']]);
      assert.equal(await s.queueFeedFromRecords('c', ['A'], { urls: ['http://b.test/1', 'http://nowhere.test/'] }), 1);
      assert.equal(await s.queueFeedFromRecords('c', ['Z'], {}), 4);
      await s.ackFeed('c', await s.pendingFeed('c', 'A', 0, 10));
      assert.deepEqual(await s.deleteUris('c', ['http://b.test/1', 'http://a.test/x/4'], ['A']), ['ref http://b.test/1']);
      assert.deepEqual((await s.deleteSite('c', 'http://a.test:80', ['A'])).length, 4);
      assert.deepEqual((await s.pendingFeed('c', 'A', 0, 10)).map((p) => [p.url, p.op]), [
        ['http://b.test/1', 'delete'], ['http://a.test/x/1', 'delete'], ['http://a.test/x/2', 'delete'], ['http://a.test/x/3', 'delete'], ['http://a.test/y/1', 'delete'],
      ]);
      await s.deleteCollection('c');
      assert.deepEqual(await s.feedBacklog('c'), {});
      await s.close();
    });

    it('caches robots.txt per site and lists statistics', async () => {
      const s = await target.open();
      assert.equal(await s.getRobots('c', 'http://a.test:80'), undefined);
      await s.putSiteStats('c', 'http://a.test:80', '{"a":1}');
      await s.putRobots('c', 'http://a.test:80', { fetchedMs: 7, status: 200, body: new TextEncoder().encode('User-agent: *\nDisallow: /x') });
      const r = await s.getRobots('c', 'http://a.test:80');
      assert.equal(r!.status, 200);
      assert.equal(new TextDecoder().decode(r!.body), 'User-agent: *\nDisallow: /x');
      assert.deepEqual(await s.listSiteStats('c'), [{ site: 'http://a.test:80', json: '{"a":1}' }]);
      // Many at once: new sites added, a known one replaced, another collection untouched.
      await s.putSiteStatsMany('d', [{ site: 'http://a.test:80', json: '{"d":1}' }]);
      await s.putSiteStatsMany('c', [{ site: 'http://a.test:80', json: '{"a":2}' }, { site: 'http://b.test:80', json: '{"b":1}' }]);
      await s.putSiteStatsMany('c', []);
      assert.deepEqual(await s.listSiteStats('c'), [{ site: 'http://a.test:80', json: '{"a":2}' }, { site: 'http://b.test:80', json: '{"b":1}' }]);
      assert.deepEqual(await s.listSiteStats('d'), [{ site: 'http://a.test:80', json: '{"d":1}' }]);
      // Page by page, in site order.
      await s.putSiteStatsMany('c', [{ site: 'http://c.test:80', json: '{"c":1}' }]);
      assert.deepEqual((await s.listSiteStats('c', { limit: 2 })).map((r) => r.site), ['http://a.test:80', 'http://b.test:80']);
      assert.deepEqual(await s.listSiteStats('c', { after: 'http://b.test:80', limit: 2 }), [{ site: 'http://c.test:80', json: '{"c":1}' }]);
      assert.deepEqual(await s.listSiteStats('c', { after: 'http://c.test:80', limit: 2 }), []);
      await s.close();
    });

    it('keeps a cookie jar per collection: replaced by put, gone with its collection', async () => {
      const s = await target.open();
      await s.putCollection('c', '<x/>', 1);
      await s.putCollection('d', '<x/>', 1);
      assert.equal(await s.getCookieJar('c'), undefined);
      await s.putCookieJar('c', '{"cookies":[1]}', 10);
      await s.putCookieJar('c', '{"cookies":[2]}', 11);
      await s.putCookieJar('d', '{"cookies":[3]}', 11);
      assert.equal(await s.getCookieJar('c'), '{"cookies":[2]}');
      await s.deleteCollection('c');
      assert.equal(await s.getCookieJar('c'), undefined);
      assert.equal(await s.getCookieJar('d'), '{"cookies":[3]}');
      await s.close();
    });

    it('deleteCollection removes everything of that collection only', async () => {
      const s = await target.open();
      for (const c of ['c', 'd']) {
        await s.putCollection(c, '<x/>', 1);
        await s.enqueue(c, 1, [q('http://a.test/')]);
        const [l] = await s.lease(c, 'http://a.test:80', 1);
        await s.complete(c, 1, { leaseId: l!.id, site: l!.site, record: rec('http://a.test/'), discovered: [], siteStats: '{}' });
      }
      await s.deleteCollection('c');
      await s.deleteCollection('c');
      assert.equal(await s.getCollection('c'), undefined);
      assert.equal(await s.countRecords('c'), 0);
      assert.deepEqual(await s.counts('c'), { queued: 0, leased: 0, done: 0 });
      assert.equal(await s.countRecords('d'), 1);
      assert.equal(await s.countRecords('d', { status: 'stored', site: 'http://a.test:80' }), 1);
      await s.close();
    });

    if (target.reopen) {
      it('persists across a reopen, leased URIs included', async () => {
        let s = await target.open();
        await s.putCollection('c', '<x/>', 1);
        await s.enqueue('c', 1, [q('http://a.test/1'), q('http://a.test/2')]);
        await s.lease('c', 'http://a.test:80', 1);
        s = await target.reopen!(s);
        assert.deepEqual(await s.counts('c'), { queued: 1, leased: 1, done: 0 });
        assert.equal((await s.recoverLeases('c')).recovered, 1);
        await s.enqueue('c', 1, [q('http://a.test/3')]);
        assert.deepEqual((await s.lease('c', 'http://a.test:80', 5)).map((u) => u.url), ['http://a.test/1', 'http://a.test/2', 'http://a.test/3']);
        await s.close();
      });
    }
  });
}
