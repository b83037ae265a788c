// The order within a site (MS-FSCCFG 2.2.4.15–16): put_scheme include puts
// /a… pages in level 1 and the rest in the default level 2; pop_scheme
// decides the order they leave. Real crawls of loopback sites; the order
// is read from the servers' own request logs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LevelPop } from '../../src/frontier/level-pop.ts';
import { startFixtureSite, type HostSpec } from '../support/fixture-site.ts';
import { collectionXml, runCrawl, tempDir } from '../support/crawl-harness.ts';

const list = (name: string, items: readonly string[]) =>
  `<attrib name="${name}" type="list-string">${items.map((i) => `<member>${i}</member>`).join('')}</attrib>`;

/**
 * An index linking, in document order, b1 b2 b3 then a1 a2 a3: first in, first out would fetch the b pages first.
 * `delayMs` slows the linked pages' answers.
 */
function twoLevels(ip: string, delayMs = 0): HostSpec {
  const pages = ['b1', 'b2', 'b3', 'a1', 'a2', 'a3'];
  const routes: HostSpec['routes'] = {
    '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
    '/': { kind: 'html', body: `<h1>index of ${ip}</h1>${pages.map((p) => `<a href="/${p}">${p}</a>`).join(' ')}` },
  };
  for (const p of pages) routes[`/${p}`] = { kind: 'html', body: `<p>${p} of ${ip}</p>`, delayMs };
  return { ip, routes };
}

function workqueue(origins: readonly string[], scheme: string, shares: [number, number] | undefined): string {
  const share = (i: 0 | 1) => (shares ? `<attrib name="share" type="integer">${shares[i]}</attrib>` : '');
  return `<section name="workqueue_priority">
      <attrib name="levels" type="integer">2</attrib>
      <attrib name="default" type="integer">2</attrib>
      <attrib name="start_uri_pri" type="integer">1</attrib>
      <attrib name="pop_scheme" type="string">${scheme}</attrib>
      <attrib name="put_scheme" type="string">include</attrib>
      <section name="1">${share(0)}<section name="include_uris">${list('prefix', origins.map((o) => `${o}/a`))}</section></section>
      <section name="2">${share(1)}</section>
    </section>`;
}

const pages = (paths: readonly string[]): string[] => paths.filter((p) => p !== '/robots.txt' && p !== '/').map((p) => p.slice(1));

async function crawlOrder(ip: string, scheme: string, shares?: [number, number], extra = ''): Promise<string[]> {
  const site = await startFixtureSite([twoLevels(ip)]);
  try {
    const h = site.host(ip);
    const origin = h.url('/').replace(/\/$/, '');
    const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>
      <attrib name="max_pending" type="integer">1</attrib>${extra}${workqueue([origin], scheme, shares)}`));
    assert.equal(run.summary.complete, true);
    return pages(site.fetchedPaths(ip));
  } finally {
    await site.close();
  }
}

describe('workqueue_priority pop_scheme', () => {
  it('pri: level 1 while it has URIs, then level 2', async () => {
    assert.deepEqual(await crawlOrder('127.0.133.1', 'pri'), ['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
  });

  it('rr: the levels in turn (the start URI, level 1, took the first turn)', async () => {
    assert.deepEqual(await crawlOrder('127.0.133.2', 'rr', [5, 1]), ['b1', 'a1', 'b2', 'a2', 'b3', 'a3']);
  });

  it('wrr: by share, two level-1 URIs for each level-2 one', async () => {
    // Turns after the start URI (level 1): a1 (2/2 vs 1/1, a tie goes to level 1), b1, a2, a3, then what is left.
    assert.deepEqual(await crawlOrder('127.0.133.3', 'wrr', [2, 1]), ['a1', 'b1', 'a2', 'a3', 'b2', 'b3']);
  });

  it('default is wrr', async () => {
    assert.deepEqual(await crawlOrder('127.0.133.4', 'default', [2, 1]), ['a1', 'b1', 'a2', 'a3', 'b2', 'b3']);
  });

  it('the levels put_scheme chose are kept in the frontier: a crawl stopped and resumed goes on in level order', async () => {
    const ip = '127.0.133.5';
    const site = await startFixtureSite([twoLevels(ip)]);
    try {
      const h = site.host(ip);
      const origin = h.url('/').replace(/\/$/, '');
      const dir = tempDir();
      const xml = collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>
        <attrib name="max_pending" type="integer">1</attrib>${workqueue([origin], 'pri', undefined)}`);
      const first = await runCrawl(xml, { dir, maxPages: 2 });
      assert.equal(first.summary.complete, false);
      const second = await runCrawl(xml, { dir });
      assert.equal(second.summary.resumed, true);
      assert.deepEqual(pages(site.fetchedPaths(ip)), ['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
    } finally {
      await site.close();
    }
  });

  it('rr resumes where it stopped: a crawl stopped after three pages goes on in the same turns', async () => {
    const ip = '127.0.133.8';
    const site = await startFixtureSite([twoLevels(ip)]);
    try {
      const h = site.host(ip);
      const origin = h.url('/').replace(/\/$/, '');
      const dir = tempDir();
      const xml = collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>
        <attrib name="max_pending" type="integer">1</attrib>${workqueue([origin], 'rr', undefined)}`);
      const first = await runCrawl(xml, { dir, maxPages: 3 });
      assert.equal(first.summary.complete, false);
      assert.deepEqual(pages(site.fetchedPaths(ip)), ['b1', 'a1']);
      await runCrawl(xml, { dir });
      // Starting the turns again from nothing would give a2 next (a tie goes to level 1); the cycle had taken two of level 1 (/ and a1) and one of level 2.
      assert.deepEqual(pages(site.fetchedPaths(ip)), ['b1', 'a1', 'b2', 'a2', 'b3', 'a3']);
    } finally {
      await site.close();
    }
  });

  it('max_inter_docs still rotates the sites, and each site keeps its rr order', async () => {
    const [ipX, ipY] = ['127.0.133.6', '127.0.133.7'];
    // 150 ms a linked page: each site's index is committed long before the other site's
    // pages run out, however loaded the machine, so the turns do not depend on commit timing.
    const site = await startFixtureSite([twoLevels(ipX, 150), twoLevels(ipY, 150)]);
    try {
      const x = site.host(ipX);
      const y = site.host(ipY);
      // Level 1 holds the /a pages of both sites (two include_uris prefixes).
      const wq = workqueue([x, y].map((h) => h.url('/').replace(/\/$/, '')), 'rr', undefined);
      const run = await runCrawl(collectionXml(`${list('start_uris', [x.url('/'), y.url('/')])}<attrib name="delay" type="real">0</attrib>
        <attrib name="max_pending" type="integer">1</attrib><attrib name="max_sites" type="integer">1</attrib><attrib name="max_inter_docs" type="integer">2</attrib>${wq}`));
      assert.equal(run.summary.complete, true);
      const byHost = (ip: string) => pages(site.fetchedPaths(ip));
      assert.deepEqual(byHost(ipX), ['b1', 'a1', 'b2', 'a2', 'b3', 'a3']);
      assert.deepEqual(byHost(ipY), ['b1', 'a1', 'b2', 'a2', 'b3', 'a3']);
      // The sites took turns: a run of one host's linked pages longer than max_inter_docs happens
      // only while the other has nothing queued (its index page not yet committed, or its pages done),
      // so the turns are counted rather than each run's length.
      const hosts = site.requests.filter((r) => r.path !== '/robots.txt' && r.path !== '/').map((r) => r.host);
      assert.equal(hosts.length, 12);
      const switches = hosts.filter((h, i) => i > 0 && h !== hosts[i - 1]).length;
      assert.ok(switches >= 3, hosts.join(' '));
    } finally {
      await site.close();
    }
  });
});

describe('LevelPop', () => {
  it('orders the levels by their next turn, ties to the higher priority', () => {
    const p = LevelPop.of(3, 'wrr', new Map([[1, 3], [2, 1], [3, 1]]))!;
    const seq: number[] = [];
    for (let i = 0; i < 10; i++) {
      const l = p.order('s')[0]!;
      seq.push(l);
      p.took('s', l);
    }
    assert.deepEqual(seq, [1, 1, 1, 2, 3, 1, 1, 1, 2, 3]);
    // Shares 3:1:1 over 10 turns: six of level 1, two each of 2 and 3.
    assert.deepEqual([1, 2, 3].map((l) => seq.filter((x) => x === l).length), [6, 2, 2]);
    assert.equal(LevelPop.of(1, 'wrr', new Map()), undefined);
    assert.equal(LevelPop.of(3, 'pri', new Map()), undefined);
  });
});
