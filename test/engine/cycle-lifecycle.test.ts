// Each refresh cycle's ID and Elastic crawl status (src/engine/cycle-lifecycle.ts):
// real crawls of a loopback site with a real SQLite store; the statuses as the
// crawl reported them, and as the store kept them.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CycleRow } from '../../src/store/crawl-store.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import { startFixtureSite, type HostSpec } from '../support/fixture-site.ts';
import { collectionXml, runCrawl, tempDir } from '../support/crawl-harness.ts';

const list = (name: string, items: readonly string[]) =>
  `<attrib name="${name}" type="list-string">${items.map((i) => `<member>${i}</member>`).join('')}</attrib>`;

function chain(ip: string, n: number): HostSpec {
  const routes: HostSpec['routes'] = {
    '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
    '/': { kind: 'html', body: `<h1>index</h1>${Array.from({ length: n }, (_, i) => `<a href="/p${i}.html">p${i}</a>`).join(' ')}` },
  };
  for (let i = 0; i < n; i++) routes[`/p${i}.html`] = { kind: 'html', body: `<p>page ${i}</p>` };
  return { ip, routes };
}

async function cyclesIn(dir: string): Promise<CycleRow[]> {
  const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
  try {
    return await store.listCycles('t', 10);
  } finally {
    await store.close();
  }
}

describe('the cycle lifecycle', () => {
  it('a cycle gets an ID and goes pending, starting, running, success; the store keeps it', async () => {
    const ip = '127.0.133.21';
    const site = await startFixtureSite([chain(ip, 3)]);
    try {
      const seen: CycleRow[] = [];
      const run = await runCrawl(collectionXml(`${list('start_uris', [site.host(ip).url('/')])}<attrib name="delay" type="real">0</attrib>`), { onCycle: (c) => seen.push(c) });
      assert.equal(site.fetchedPaths(ip).length, 5);
      assert.deepEqual(seen.map((c) => c.status), ['pending', 'starting', 'running', 'success']);
      assert.match(run.summary.cycleId, /^[0-9a-f]{24}$/);
      assert.ok(seen.every((c) => c.id === run.summary.cycleId && c.epoch === 1));
      assert.equal(run.summary.cycleStatus, 'success');
      const [stored] = await cyclesIn(run.dir);
      assert.deepEqual({ ...stored, statusMs: 0 }, { ...seen.at(-1)!, statusMs: 0 });
      assert.equal(stored!.stoppedBy, 'done');
      assert.ok(stored!.endedMs! >= stored!.startedMs);
      // The next cycle is another one, with a new ID.
      const next = await runCrawl(collectionXml(`${list('start_uris', [site.host(ip).url('/')])}<attrib name="delay" type="real">0</attrib>`), { dir: run.dir });
      assert.equal(next.summary.epoch, 2);
      assert.notEqual(next.summary.cycleId, run.summary.cycleId);
      assert.deepEqual((await cyclesIn(run.dir)).map((c) => [c.epoch, c.status]), [[2, 'success'], [1, 'success']]);
    } finally {
      await site.close();
    }
  });

  it('a cycle a trawl_limits bound stopped is a success, with the limit as its reason', async () => {
    const ip = '127.0.133.22';
    const site = await startFixtureSite([chain(ip, 10)]);
    try {
      const run = await runCrawl(collectionXml(`${list('start_uris', [site.host(ip).url('/')])}<attrib name="delay" type="real">0</attrib>
        <section name="trawl_limits"><attrib name="max_unique_urls" type="integer">3</attrib></section>`));
      assert.equal(site.fetchedPaths(ip).filter((p) => p !== '/robots.txt').length, 3);
      assert.equal(run.summary.cycleStatus, 'success');
      const [stored] = await cyclesIn(run.dir);
      assert.deepEqual([stored!.status, stored!.stoppedBy], ['success', 'max-unique-urls']);
    } finally {
      await site.close();
    }
  });

  it('a run stopped before the cycle ended leaves it canceled; the next run resumes it under the same ID', async () => {
    const ip = '127.0.133.23';
    const site = await startFixtureSite([chain(ip, 6)]);
    try {
      const dir = tempDir();
      const xml = collectionXml(`${list('start_uris', [site.host(ip).url('/')])}<attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">1</attrib>`);
      const first = await runCrawl(xml, { dir, maxPages: 2 });
      assert.equal(first.summary.complete, false);
      assert.equal(first.summary.cycleStatus, 'canceled');
      assert.deepEqual((await cyclesIn(dir)).map((c) => [c.id, c.status, c.stoppedBy]), [[first.summary.cycleId, 'canceled', 'max-pages']]);
      const seen: string[] = [];
      const second = await runCrawl(xml, { dir, onCycle: (c) => seen.push(c.status) });
      assert.equal(second.summary.resumed, true);
      assert.equal(second.summary.cycleId, first.summary.cycleId);
      assert.deepEqual(seen, ['pending', 'starting', 'running', 'success']);
      assert.deepEqual((await cyclesIn(dir)).map((c) => [c.id, c.status]), [[first.summary.cycleId, 'success']]);
      assert.equal(site.fetchedPaths(ip).filter((p) => p !== '/robots.txt').length, 7);
    } finally {
      await site.close();
    }
  });
});
