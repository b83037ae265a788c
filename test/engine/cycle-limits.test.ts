// The bounds on a whole cycle (src/engine/cycle-limits.ts): real crawls of
// loopback sites with real SQLite stores; what was fetched is read from the
// servers' own request logs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CrawlEvents } from '../../src/engine/crawl-events.ts';
import type { CrawlEvent } from '../../src/engine/crawler.ts';
import { CycleLimits } from '../../src/engine/cycle-limits.ts';
import { startFixtureSite, type HostSpec } from '../support/fixture-site.ts';
import { collectionXml, runCrawl, tempDir } from '../support/crawl-harness.ts';

const list = (name: string, items: readonly string[]) =>
  `<attrib name="${name}" type="list-string">${items.map((i) => `<member>${i}</member>`).join('')}</attrib>`;

/** An index page linking to n pages, each linking back and to the next one. */
function chain(ip: string, n: number): HostSpec {
  const routes: HostSpec['routes'] = {
    '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
    '/': { kind: 'html', body: `<h1>index</h1>${Array.from({ length: n }, (_, i) => `<a href="/p${i}.html">p${i}</a>`).join(' ')}` },
  };
  for (let i = 0; i < n; i++) routes[`/p${i}.html`] = { kind: 'html', body: `<p>page ${i}</p><a href="/">home</a><a href="/p${i + 1}.html">next</a>` };
  return { ip, routes };
}

const pagesFetched = (paths: readonly string[]): string[] => paths.filter((p) => p !== '/robots.txt');

describe('trawl_limits.max_unique_urls', () => {
  it('fetches that many URIs in the cycle, abandons the rest and ends the cycle complete', async () => {
    const ip = '127.0.7.1';
    const site = await startFixtureSite([chain(ip, 20)]);
    try {
      const h = site.host(ip);
      const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">4</attrib>
        <section name="trawl_limits"><attrib name="max_unique_urls" type="integer">5</attrib></section>`));
      const fetched = pagesFetched(site.fetchedPaths(ip));
      assert.equal(fetched.length, 5, fetched.join(' '));
      assert.equal(new Set(fetched).size, 5);
      assert.equal(run.summary.stoppedBy, 'max-unique-urls');
      assert.equal(run.summary.complete, true);
      assert.equal(run.summary.queued, 0);
      assert.ok(run.summary.abandoned >= 15, String(run.summary.abandoned));
      assert.ok(run.events.some((e) => e.type === 'cycle' && /trawl_limits\.max_unique_urls reached; \d+ queued URIs are abandoned/.test(e.message)), JSON.stringify(run.events.filter((e) => e.type === 'cycle')));
    } finally {
      await site.close();
    }
  });

  it('counts what a cycle fetched before it was stopped when it resumes', async () => {
    const ip = '127.0.7.2';
    const site = await startFixtureSite([chain(ip, 20)]);
    try {
      const h = site.host(ip);
      const dir = tempDir();
      const xml = collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">1</attrib>
        <section name="trawl_limits"><attrib name="max_unique_urls" type="integer">7</attrib></section>`);
      const first = await runCrawl(xml, { dir, maxPages: 3 });
      assert.equal(first.summary.stoppedBy, 'max-pages');
      assert.equal(first.summary.complete, false);
      const second = await runCrawl(xml, { dir });
      assert.equal(second.summary.resumed, true);
      assert.equal(second.summary.stoppedBy, 'max-unique-urls');
      const fetched = pagesFetched(site.fetchedPaths(ip));
      assert.equal(fetched.length, 7, fetched.join(' '));
    } finally {
      await site.close();
    }
  });
});

describe('trawl_limits.max_crawl_duration', () => {
  it('starts no fetch after the cycle has run that long, and ends it complete', async () => {
    const ip = '127.0.7.3';
    const site = await startFixtureSite([chain(ip, 30)]);
    try {
      const h = site.host(ip);
      const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0.3</attrib><attrib name="max_pending" type="integer">1</attrib>
        <section name="trawl_limits"><attrib name="max_crawl_duration" type="integer">1</attrib></section>`));
      const pages = site.requests.filter((r) => r.path !== '/robots.txt');
      // A fetch every 0.3 s for 1 s: 3 or 4 of the 31 pages, depending on where robots.txt falls.
      assert.ok(pages.length >= 2 && pages.length <= 5, String(pages.length));
      const spanMs = pages.at(-1)!.startMs - pages[0]!.startMs;
      assert.ok(spanMs < 1000, `the last fetch started ${spanMs} ms after the first`);
      assert.equal(run.summary.stoppedBy, 'max-duration');
      assert.equal(run.summary.complete, true);
      assert.equal(run.summary.queued, 0);
      // Ended near the deadline, not at the next site's delay nor after the whole site (9 s).
      assert.ok(run.summary.durationMs < 2500, String(run.summary.durationMs));
    } finally {
      await site.close();
    }
  });
});

describe('limits.max_doc', () => {
  it('goes refresh-only once the collection holds max_doc documents, then refreshes only those', async () => {
    const ip = '127.0.7.4';
    const site = await startFixtureSite([chain(ip, 12)]);
    try {
      const h = site.host(ip);
      const dir = tempDir();
      const xml = collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">1</attrib>
        <section name="limits"><attrib name="max_doc" type="integer">4</attrib><attrib name="max_doc_slack" type="integer">0</attrib></section>`);
      const first = await runCrawl(xml, { dir, maxConcurrency: 1 });
      const stored = first.records.filter((r) => r.status === 'stored').map((r) => new URL(r.url).pathname).sort();
      // Exactly max_doc: the fetches under way hold their places before their documents are committed.
      assert.equal(stored.length, 4, stored.join(' '));
      const firstFetched = pagesFetched(site.fetchedPaths(ip));
      assert.deepEqual([...firstFetched].sort(), stored);
      assert.ok((first.summary.uriSkips.rl ?? 0) > 0, JSON.stringify(first.summary.uriSkips));
      assert.equal(first.summary.complete, true);
      assert.ok(first.events.some((e) => e.type === 'cycle' && e.code === 'rl' && /refresh-only/.test(e.message)));

      // The next cycle starts at the limit: the known documents are fetched again, nothing new.
      site.reset();
      const second = await runCrawl(xml, { dir, maxConcurrency: 1 });
      assert.equal(second.summary.resumed, false);
      assert.deepEqual(pagesFetched(site.fetchedPaths(ip)).sort(), stored);
      assert.equal(second.records.filter((r) => r.status === 'stored' || r.status === 'unchanged').length, stored.length);
    } finally {
      await site.close();
    }
  });

  it('leaves refresh-only only below max_doc - max_doc_slack (hysteresis)', () => {
    const events: CrawlEvent[] = [];
    const limits = new CycleLimits({ maxCrawlDurationS: undefined, maxUniqueUrls: undefined, maxDoc: 10, maxDocSlack: 3, refreshMin: 0 }, new CrawlEvents((e) => events.push(e)));
    limits.begin(0, { documents: 9, inCycle: 0 });
    assert.equal(limits.refreshOnly, false);
    limits.noteDocuments(1);
    assert.equal(limits.refreshOnly, true);
    limits.noteDocuments(-3); // 7: not below 10 - 3
    assert.equal(limits.refreshOnly, true);
    limits.noteDocuments(-1); // 6
    assert.equal(limits.refreshOnly, false);
    assert.deepEqual(events.map((e) => e.code), ['rl', undefined]);
    // Off (0): never counted, never refresh-only.
    const off = new CycleLimits({ maxCrawlDurationS: undefined, maxUniqueUrls: undefined, maxDoc: 0, maxDocSlack: 3, refreshMin: 0 }, new CrawlEvents(() => undefined));
    off.begin(0, undefined);
    off.noteDocuments(1_000_000);
    assert.equal(off.refreshOnly, false);
    assert.equal(off.needsCounts, false);
  });
});

describe('dbswitch and dbswitch_delete', () => {
  // Cycle 1 fetches the whole site; cycles 2 and 3 may fetch two URIs each
  // (trawl_limits.max_unique_urls), so the pages the first cycle stored go
  // unprocessed from cycle 2 on.
  const xmlFor = (start: string, extra: string): string => collectionXml(`${list('start_uris', [start])}<attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">1</attrib>${extra}`);
  const capped = '<section name="trawl_limits"><attrib name="max_unique_urls" type="integer">2</attrib></section>';

  it('deletes the documents not processed in the last dbswitch cycles when dbswitch_delete is on', async () => {
    const ip = '127.0.7.5';
    const site = await startFixtureSite([chain(ip, 6)]);
    try {
      const start = site.host(ip).url('/');
      const dir = tempDir();
      const first = await runCrawl(xmlFor(start, ''), { dir, maxConcurrency: 1 });
      assert.equal(first.records.filter((r) => r.status === 'stored').length, 7);
      const second = await runCrawl(xmlFor(start, capped), { dir, maxConcurrency: 1 });
      const kept = second.records.filter((r) => r.epoch === 2).map((r) => r.url);
      assert.equal(kept.length, 2);
      // At the start of cycle 3, what cycle 1 wrote last was not processed in cycle 2: 3 - 1 > dbswitch 1.
      const third = await runCrawl(xmlFor(start, `${capped}<attrib name="dbswitch" type="integer">1</attrib><attrib name="dbswitch_delete" type="boolean">yes</attrib>`), { dir, maxConcurrency: 1 });
      assert.ok(third.events.some((e) => e.type === 'cycle' && e.message.startsWith('dbswitch: 5 documents not processed in the last 1 cycles expired and were deleted')), JSON.stringify(third.events.filter((e) => e.type === 'cycle')));
      // /p6.html, linked from the last page, is a 404: its record is a tombstone (deleted) with no document, left alone.
      assert.deepEqual(third.records.filter((r) => r.status !== 'deleted').map((r) => r.url).sort(), [...kept].sort());
    } finally {
      await site.close();
    }
  });

  it('queues expired documents again, keeping them, when dbswitch_delete is off', async () => {
    const ip = '127.0.7.6';
    const site = await startFixtureSite([chain(ip, 6)]);
    try {
      const start = site.host(ip).url('/');
      const dir = tempDir();
      await runCrawl(xmlFor(start, ''), { dir, maxConcurrency: 1 });
      await runCrawl(xmlFor(start, capped), { dir, maxConcurrency: 1 });
      const third = await runCrawl(xmlFor(start, `${capped}<attrib name="dbswitch" type="integer">1</attrib>`), { dir, maxConcurrency: 1 });
      assert.ok(third.events.some((e) => e.type === 'cycle' && e.message.startsWith('dbswitch: 5 documents not processed in the last 1 cycles expired; they are queued again')));
      assert.equal(third.records.filter((r) => r.status !== 'deleted').length, 7);
      assert.ok(third.summary.abandoned >= 5, String(third.summary.abandoned));
    } finally {
      await site.close();
    }
  });
});

describe('refresh: the end of the refresh period ends a cycle; refresh_mode decides what its queue becomes', () => {
  // refresh 0.02 min = 1.2 s against a 0.2 s delay: cycle 1 ends with most of A queued.
  const xmlFor = (starts: readonly string[], mode: string): string => collectionXml(`${list('start_uris', starts)}<attrib name="delay" type="real">0.2</attrib><attrib name="max_pending" type="integer">1</attrib>
    <attrib name="refresh" type="real">0.02</attrib><attrib name="refresh_mode" type="string">${mode}</attrib>`);

  it('ends the cycle at the refresh boundary, complete, with its queue left for the next cycle (append)', async () => {
    const ip = '127.0.7.7';
    const site = await startFixtureSite([chain(ip, 12)]);
    try {
      const start = site.host(ip).url('/');
      const dir = tempDir();
      const first = await runCrawl(xmlFor([start], 'append'), { dir });
      assert.equal(first.summary.stoppedBy, 'refresh');
      assert.equal(first.summary.complete, true);
      assert.ok(first.summary.queued > 0, String(first.summary.queued));
      assert.ok(first.summary.durationMs < 2600, String(first.summary.durationMs));
      assert.ok(first.events.some((e) => e.type === 'cycle' && /refresh period \(0\.02 min\) is over; the \d+ URIs left queued are crawled in the next cycle \(refresh_mode append\)/.test(e.message)));
      const fetchedFirst = new Set(pagesFetched(site.fetchedPaths(ip)));
      site.reset();
      const second = await runCrawl(xmlFor([start], 'append'), { dir });
      assert.equal(second.summary.resumed, false);
      // append: what cycle 1 left queued comes before the refresh of what it fetched.
      const firstOfSecond = pagesFetched(site.fetchedPaths(ip))[0]!;
      assert.ok(!fetchedFirst.has(firstOfSecond), `${firstOfSecond} was fetched in cycle 1 too`);
    } finally {
      await site.close();
    }
  });

  it('scratch drops what the last cycle left queued', async () => {
    const ip = '127.0.7.8';
    const site = await startFixtureSite([chain(ip, 12)]);
    try {
      const start = site.host(ip).url('/');
      const dir = tempDir();
      const first = await runCrawl(xmlFor([start], 'scratch'), { dir });
      assert.equal(first.summary.stoppedBy, 'refresh');
      assert.ok(first.events.some((e) => e.type === 'cycle' && /left queued are dropped when the next cycle starts \(refresh_mode scratch\)/.test(e.message)));
      site.reset();
      await runCrawl(xmlFor([start], 'scratch'), { dir });
      assert.equal(pagesFetched(site.fetchedPaths(ip))[0], '/');
    } finally {
      await site.close();
    }
  });

  it('soft refreshes only the sites whose queue the last cycle emptied', async () => {
    const slow = '127.0.7.9';
    const quick = '127.0.7.10';
    const site = await startFixtureSite([chain(slow, 20), chain(quick, 0)]);
    try {
      const starts = [site.host(slow).url('/'), site.host(quick).url('/')];
      const dir = tempDir();
      const first = await runCrawl(xmlFor(starts, 'soft'), { dir });
      assert.equal(first.summary.stoppedBy, 'refresh');
      const quickFirst = pagesFetched(site.fetchedPaths(quick));
      assert.deepEqual([...quickFirst].sort(), ['/']);
      const slowFirst = new Set(pagesFetched(site.fetchedPaths(slow)));
      site.reset();
      await runCrawl(xmlFor(starts, 'soft'), { dir });
      // The quick site emptied its queue: refreshed. The slow one did not: it goes on with its queue, nothing fetched again.
      assert.deepEqual(pagesFetched(site.fetchedPaths(quick)).sort(), ['/']);
      const slowSecond = pagesFetched(site.fetchedPaths(slow));
      assert.ok(slowSecond.length > 0);
      for (const p of slowSecond) assert.ok(!slowFirst.has(p), `${p} of the unfinished site was refreshed`);
    } finally {
      await site.close();
    }
  });
});
