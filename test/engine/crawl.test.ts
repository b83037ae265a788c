// Real crawls of real HTTP servers on loopback. Every assertion is on what
// the servers saw (their request logs) or on the rows in the crawl store.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  diffAgainstExpected, STANDARD_IPS, STANDARD_SITE_EXPECTED, standardSite, startFixtureSite, type FixtureSite,
} from '../support/fixture-site.ts';
import { byPath, collectionXml, runCrawl, tempDir, type CrawlRun } from '../support/crawl-harness.ts';
import { join } from 'node:path';
import { SiteStats, type StatsData } from '../../src/stats/site-stats.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import { rec } from '../store/crawl-store-suite.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { CollectionCrawl } from '../../src/engine/crawler.ts';
import { openContentStore } from '../../src/store/open-content-store.ts';

/** The running totals equal the site-by-site sum (DLTime up to the order of float additions). */
function assertCountersAgree(c: CrawlRun['counters']): void {
  const round = (d: StatsData) => ({ ...d, continuous: { ...d.continuous, DLTime: Number(d.continuous.DLTime.toFixed(9)) } });
  assert.ok(c.running, 'no running totals');
  assert.deepEqual(JSON.parse(JSON.stringify(round(c.running))), JSON.parse(JSON.stringify(round(c.summed))));
}

const list = (name: string, items: readonly string[]) =>
  `<attrib name="${name}" type="list-string">${items.map((i) => `<member>${i}</member>`).join('')}</attrib>`;

describe('a crawl of the standard fixture site', () => {
  let site: FixtureSite;
  let run: Awaited<ReturnType<typeof runCrawl>>;
  before(async () => {
    site = await startFixtureSite(standardSite());
    const main = site.host(STANDARD_IPS.main);
    run = await runCrawl(collectionXml(`
      ${list('start_uris', [main.url('/')])}
      <attrib name="delay" type="real">0</attrib>
      <attrib name="max_pending" type="integer">2</attrib>
      <section name="trawl_limits"><attrib name="max_decompressed_bytes" type="integer">1048576</attrib></section>`));
  });
  after(() => site.close());

  it('fetches exactly the expected set on each host, each URL once', () => {
    for (const [ip, expected] of [[STANDARD_IPS.main, STANDARD_SITE_EXPECTED.main], [STANDARD_IPS.other, STANDARD_SITE_EXPECTED.other]] as const) {
      const paths = site.fetchedPaths(ip, { hostHeader: ip });
      const diff = diffAgainstExpected(paths, expected);
      assert.deepEqual(diff, { missing: [], forbidden: [], unexpected: [], repeated: [], overBound: [] }, `${ip}: ${JSON.stringify(paths)}`);
      assert.deepEqual(site.duplicates(ip, { hostHeader: ip }), [], `${ip} saw a URL twice in one cycle`);
    }
    assert.equal(run.summary.complete, true);
  });

  it('keeps the collection\'s counters as the sum of its sites\' statistics', () => {
    assertCountersAgree(run.counters);
    assert.ok(run.counters.summed.continuous.Downloaded > 10, JSON.stringify(run.counters.summed.continuous));
    assert.ok(Object.keys(run.counters.summed.histograms.HTTPResponse).length >= 4, JSON.stringify(run.counters.summed.histograms));
  });

  it('reads robots.txt before any page of a site', () => {
    for (const ip of [STANDARD_IPS.main, STANDARD_IPS.other]) assert.equal(site.fetchedPaths(ip, { hostHeader: ip })[0], '/robots.txt');
  });

  it('records every outcome in the crawl store', () => {
    const main = site.host(STANDARD_IPS.main);
    const r = byPath(run.records, main.origin);
    assert.equal(r.get('/')!.status, 'stored');
    assert.equal(r.get('/r1')!.status, 'redirect');
    assert.equal(r.get('/r1')!.redirectTo, main.url('/r2'));
    assert.equal(r.get('/final.html')!.status, 'stored');
    assert.equal(r.get('/gone')!.httpStatus, 410);
    assert.equal(r.get('/missing')!.httpStatus, 404);
    assert.equal(r.get('/error')!.httpStatus, 500);
    assert.equal(r.get('/bomb.html')!.skipCode, 'tl');
    assert.equal(r.get('/doc.pdf')!.mime, 'application/pdf');
    assert.equal(r.get('/zipped.html')!.status, 'stored');
    const dups = ['/dup-a.html', '/dup-b.html'].map((p) => r.get(p)!);
    assert.deepEqual(dups.map((d) => d.status).sort(), ['duplicate', 'stored']);
    assert.equal(dups.find((d) => d.status === 'duplicate')!.duplicateOf, dups.find((d) => d.status === 'stored')!.url);
    assert.equal(r.has('/private/secret.html'), false);
    assert.equal(r.has('/logo.png'), false);
    assert.ok(run.summary.uriSkips.ro! >= 1, JSON.stringify(run.summary.uriSkips));
  });
});

describe('politeness, measured at the server', () => {
  // `tag` keeps the pages of two hosts different (identical pages would be duplicates).
  const pages = (n: number, slowMs = 0, tag = '') => {
    const routes: Record<string, { kind: 'html'; body: string; delayMs?: number }> = {
      '/': { kind: 'html', body: `<h1>${tag}</h1>${Array.from({ length: n }, (_, i) => `<a href="/p${i}.html">p${i}</a>`).join(' ')}` },
    };
    for (let i = 0; i < n; i++) routes[`/p${i}.html`] = { kind: 'html', body: `<p>page ${i} ${tag}</p>`, ...(slowMs ? { delayMs: slowMs } : {}) };
    return routes;
  };

  it('starts two requests to one site at least `delay` apart', async () => {
    const site = await startFixtureSite([{ ip: '127.0.1.11', routes: pages(6) }]);
    try {
      const h = site.host('127.0.1.11');
      await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0.25</attrib><attrib name="max_pending" type="integer">2</attrib>`));
      assert.equal(site.fetchedPaths('127.0.1.11').length, 8);
      // Server-side start times. The crawler spaces its request starts by the
      // delay; the server sees each start later by the time to reach it, which
      // varies by a few ms on loopback (a new connection takes longer), so 15 ms
      // of tolerance.
      assert.ok(site.minStartGapMs('127.0.1.11') >= 235, String(site.minStartGapMs('127.0.1.11')));
    } finally {
      await site.close();
    }
  });

  it('never has more than max_pending requests outstanding to one site', async () => {
    const site = await startFixtureSite([{ ip: '127.0.1.12', routes: pages(8, 300) }]);
    try {
      const h = site.host('127.0.1.12');
      await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">2</attrib>`));
      assert.equal(site.fetchedPaths('127.0.1.12').length, 10);
      assert.equal(site.maxConcurrency('127.0.1.12'), 2);
    } finally {
      await site.close();
    }
  });

  it('never has more than the crawl\'s max concurrency in flight over all its sites', async () => {
    const ips = ['127.0.1.21', '127.0.1.22', '127.0.1.23', '127.0.1.24'];
    const site = await startFixtureSite(ips.map((ip, i) => ({ ip, routes: pages(3, 150, `S${i}`) })));
    try {
      const starts = ips.map((ip) => site.host(ip).url('/'));
      await runCrawl(collectionXml(`${list('start_uris', starts)}<attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">2</attrib>`), { maxConcurrency: 3 });
      const pagesServed = site.requests.filter((r) => r.path.startsWith('/p'));
      assert.equal(pagesServed.length, 12);
      // Server-side overlap of the slow pages over every host (robots.txt and the index answer at once).
      let most = 0;
      for (const r of pagesServed) most = Math.max(most, pagesServed.filter((o) => o.startMs <= r.startMs && (o.endMs ?? Infinity) > r.startMs).length);
      // Never four, though four sites could take two each; and the cap was reached, not merely unneeded.
      assert.ok(most <= 3 && most >= 2, `at most ${most} pages in flight at once`);
    } finally {
      await site.close();
    }
  });

  for (const enforce of [true, false]) {
    it(`sites on one IP address ${enforce ? 'share' : 'do not share'} the delay when enforce_delay_per_ip is ${enforce ? 'yes' : 'no'}`, async () => {
      const site = await startFixtureSite([{ ip: '127.0.1.13', routes: pages(4, 0, 'A') }, { ip: '127.0.1.13', routes: pages(4, 0, 'B') }]);
      try {
        const [a, b] = site.hosts;
        await runCrawl(collectionXml(`${list('start_uris', [a!.url('/'), b!.url('/')])}
          <attrib name="delay" type="real">0.3</attrib><attrib name="enforce_delay_per_ip" type="boolean">${enforce ? 'yes' : 'no'}</attrib>`));
        const starts = site.requests.map((r) => r.startMs).sort((x, y) => x - y);
        assert.equal(starts.length, 12);
        const gap = Math.min(...starts.slice(1).map((t, i) => t - starts[i]!));
        if (enforce) assert.ok(gap >= 285, `smallest gap across the two sites: ${gap} ms`);
        else assert.ok(gap < 200, `the two sites should interleave, smallest gap ${gap} ms`);
      } finally {
        await site.close();
      }
    });
  }

  it('uses a sub-collection\'s own delay for its URIs', async () => {
    const routes = {
      '/': { kind: 'html' as const, body: '<a href="/a.html">a</a> <a href="/b.html">b</a> <a href="/news/1.html">1</a> <a href="/news/2.html">2</a> <a href="/news/3.html">3</a>' },
      '/a.html': { kind: 'html' as const, body: 'a' }, '/b.html': { kind: 'html' as const, body: 'b' },
      '/news/1.html': { kind: 'html' as const, body: 'n1' }, '/news/2.html': { kind: 'html' as const, body: 'n2' }, '/news/3.html': { kind: 'html' as const, body: 'n3' },
    };
    const site = await startFixtureSite([{ ip: '127.0.1.20', routes }]);
    try {
      const h = site.host('127.0.1.20');
      await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">1</attrib>
        <SubDomain name="news"><attrib name="delay" type="real">0.3</attrib><attrib name="refresh" type="real">60</attrib>
          <section name="include_uris">${list('prefix', [h.url('/news/')])}</section></SubDomain>`));
      const reqs = site.requests;
      assert.equal(reqs.length, 7);
      // A news request waits 0.3 s after the request before it; the others do not wait.
      for (let i = 1; i < reqs.length; i++) {
        const gap = reqs[i]!.startMs - reqs[i - 1]!.startMs;
        if (reqs[i]!.path.startsWith('/news/')) assert.ok(gap >= 285, `${reqs[i]!.path}: ${gap} ms`);
      }
      const fast = reqs.filter((r, i) => i > 0 && !r.path.startsWith('/news/')).map((r) => r.startMs - reqs[reqs.indexOf(r) - 1]!.startMs);
      assert.ok(fast.some((g) => g < 150), `collection URIs should not wait: ${fast}`);
    } finally {
      await site.close();
    }
  });

  it('honours robots.txt Crawl-delay when obey_robots_delay is yes', async () => {
    const routes = { ...pages(3), '/robots.txt': { kind: 'robots' as const, body: 'User-agent: *\nCrawl-delay: 0.4\n' } };
    const site = await startFixtureSite([{ ip: '127.0.1.14', routes }]);
    try {
      const h = site.host('127.0.1.14');
      await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib><attrib name="obey_robots_delay" type="boolean">yes</attrib>`));
      assert.equal(site.fetchedPaths('127.0.1.14').length, 5);
      assert.ok(site.minStartGapMs('127.0.1.14', (p) => p === '/robots.txt') >= 385, String(site.minStartGapMs('127.0.1.14')));
    } finally {
      await site.close();
    }
  });

  it('keeps obeying robots.txt and Crawl-delay when the robots memory cache has forgotten a site', async () => {
    // A one-site memory cache: every other site's robots.txt pushes the last one out while its
    // pages are still being fetched, so each site's rules are read back from the crawl store.
    const ips = ['127.0.1.61', '127.0.1.62', '127.0.1.63', '127.0.1.64'];
    const hosts = ips.map((ip, k) => {
      const routes: Record<string, { kind: 'html' | 'robots'; body: string }> = {
        '/robots.txt': { kind: 'robots', body: `User-agent: *\nDisallow: /private/\n${k === 0 ? 'Crawl-delay: 0.3\n' : ''}` },
        '/': { kind: 'html', body: `<h1>${ip}</h1>${Array.from({ length: 4 }, (_, i) => `<a href="/p${i}.html">p</a>`).join('')}<a href="/private/x.html">x</a>` },
        '/private/x.html': { kind: 'html', body: '<p>robots.txt forbids this page</p>' },
      };
      for (let i = 0; i < 4; i++) routes[`/p${i}.html`] = { kind: 'html', body: `<p>${ip} page ${i}</p>` };
      return { ip, routes };
    });
    const site = await startFixtureSite(hosts);
    try {
      const run = await runCrawl(collectionXml(`${list('start_uris', ips.map((ip) => site.host(ip).url('/')))}<attrib name="delay" type="real">0</attrib>
        <attrib name="obey_robots_delay" type="boolean">yes</attrib><attrib name="max_pending" type="integer">1</attrib>`), { robotsMemo: 1 });
      for (const ip of ips) {
        const paths = site.fetchedPaths(ip);
        assert.deepEqual(paths.filter((p) => p === '/robots.txt'), ['/robots.txt'], `${ip}: robots.txt fetched once, then read back from the store: ${JSON.stringify(paths)}`);
        assert.deepEqual(paths.filter((p) => p.startsWith('/private/')), [], `${ip} was asked for a page its robots.txt disallows`);
        assert.deepEqual([...paths].sort(), ['/', '/p0.html', '/p1.html', '/p2.html', '/p3.html', '/robots.txt'], ip);
      }
      assert.ok(site.minStartGapMs(ips[0]!) >= 285, `Crawl-delay 0.3 s, smallest gap ${site.minStartGapMs(ips[0]!)} ms`);
      assert.equal(run.summary.uriSkips.ro, ips.length);
    } finally {
      await site.close();
    }
  });

  it('honours Retry-After on 503 before retrying (http_errors 503 RETRY:1)', async () => {
    let calls = 0;
    const routes = {
      '/': { kind: 'html' as const, body: '<a href="/busy">busy</a>' },
      '/busy': (_req: unknown, res: ServerResponse) => {
        calls++;
        if (calls === 1) res.writeHead(503, { 'retry-after': '1', 'content-type': 'text/html' }).end('busy');
        else res.writeHead(200, { 'content-type': 'text/html' }).end('<p>now ok</p>');
      },
    };
    const site = await startFixtureSite([{ ip: '127.0.1.15', routes }]);
    try {
      const h = site.host('127.0.1.15');
      const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>
        <section name="http_errors"><attrib name="503" type="string">DELETE:3, RETRY:1</attrib></section>`));
      const busy = site.requests.filter((r) => r.path === '/busy');
      assert.equal(busy.length, 2);
      assert.ok(busy[1]!.startMs - busy[0]!.startMs >= 995, String(busy[1]!.startMs - busy[0]!.startMs));
      assert.equal(byPath(run.records, h.origin).get('/busy')!.status, 'stored');
      assert.equal(run.summary.retries, 1);
    } finally {
      await site.close();
    }
  });
});

describe('scope rules that need more than the URL', () => {
  it('judges ipmask rules once the address is known, and reads rule files', async () => {
    const page = (links: string) => ({ kind: 'html' as const, body: links });
    const site = await startFixtureSite([
      { ip: '127.0.1.21', routes: { '/': page('<a href="/in/a.html">a</a> <a href="/out/b.html">b</a> <a href="{{origin:127.0.1.22}}/">other</a>'), '/in/a.html': page('a'), '/out/b.html': page('b') } },
      { ip: '127.0.1.22', routes: { '/': page('x') } },
    ]);
    try {
      const a = site.host('127.0.1.21');
      const dir = tempDir();
      writeFileSync(`${dir}/uris.txt`, `# URI rules\nprefix:${a.url('/in/')}\nexact:${a.url('/')}\n`);
      const run = await runCrawl(collectionXml(`${list('start_uris', [a.url('/')])}<attrib name="delay" type="real">0</attrib>
        <section name="include_domains">${list('ipmask', ['127.0.1.21/32'])}</section>
        <section name="include_uris">${list('file', [`${dir}/uris.txt`])}${list('prefix', [site.host('127.0.1.22').url('/')])}</section>`));
      assert.deepEqual(site.fetchedPaths('127.0.1.21').sort(), ['/', '/in/a.html', '/robots.txt']);
      assert.deepEqual(site.fetchedPaths('127.0.1.22'), []); // refused by the ipmask once its address was known
      assert.ok(run.summary.uriSkips.do! >= 1 && run.summary.uriSkips.ur! >= 1, JSON.stringify(run.summary.uriSkips));
    } finally {
      await site.close();
    }
  });
});

describe('smfilter', () => {
  it('a Bloom filter in front of the seen set changes nothing in what is fetched', async () => {
    const site = await startFixtureSite(standardSite());
    try {
      const main = site.host(STANDARD_IPS.main);
      const run = await runCrawl(collectionXml(`${list('start_uris', [main.url('/')])}<attrib name="delay" type="real">0</attrib><attrib name="smfilter" type="integer">100000</attrib>
        <section name="trawl_limits"><attrib name="max_decompressed_bytes" type="integer">1048576</attrib></section>`));
      const diff = diffAgainstExpected(site.fetchedPaths(STANDARD_IPS.main, { hostHeader: STANDARD_IPS.main }), STANDARD_SITE_EXPECTED.main);
      assert.deepEqual(diff, { missing: [], forbidden: [], unexpected: [], repeated: [], overBound: [] });
      assert.ok(run.summary.uriSkips.ic! > 0);
    } finally {
      await site.close();
    }
  });
});

describe('site statistics of a broad crawl', () => {
  it('reads every site\'s stored statistics back, page by page, into the collection\'s totals', async () => {
    const site = await startFixtureSite([{ ip: '127.0.1.17', routes: { '/': { kind: 'html', body: '<p>one page</p>' } } }]);
    try {
      const dir = tempDir();
      // 2,500 sites crawled in an earlier cycle: more than one page of the store's answer.
      const before = new SqliteCrawlStore(join(dir, 'trawl.db'));
      const old = new SiteStats();
      old.add('Processed', 3);
      old.count('HTTPResponse', '200', 3);
      await before.putSiteStatsMany('t', Array.from({ length: 2500 }, (_, i) => ({ site: `http://old-${String(i).padStart(4, '0')}.test:80`, json: JSON.stringify(old) })));
      await before.close();
      const run = await runCrawl(collectionXml(`${list('start_uris', [site.host('127.0.1.17').url('/')])}<attrib name="delay" type="real">0</attrib>`), { dir });
      assert.equal(run.summary.stored, 1);
      assertCountersAgree(run.counters);
      assert.equal(run.counters.running!.continuous.Processed, 2500 * 3 + run.summary.requests);
      assert.equal(run.counters.running!.histograms.HTTPResponse['200'], 2500 * 3 + 1);
    } finally {
      await site.close();
    }
  });
});

describe('links refused by their URL alone are remembered, others are judged again', () => {
  it('counts every refused occurrence as before, and fetches a URL refused for depth once it is reached at a lower depth', async () => {
    // DEPTH:1. /a (1 hop) links /z (2 hops: refused for depth). /r (1 hop)
    // answers half a second later with a redirect to /z, and a redirect keeps
    // its hops: allowed then. Every page links the same stylesheet, refused
    // by exclude_exts on each page.
    const css = '<link rel="stylesheet" href="/s.css">';
    const site = await startFixtureSite([{ ip: '127.0.1.19', routes: {
      '/': { kind: 'html', body: `${css}<a href="/a">a</a> <a href="/r">r</a>` },
      '/a': { kind: 'html', body: `${css}<a href="/z">z</a>` },
      '/r': { kind: 'html', body: '', status: 302, headers: { location: '/z' }, delayMs: 500 },
      '/z': { kind: 'html', body: `${css}<p>z</p>` },
      '/s.css': { kind: 'text', body: 'p {}', contentType: 'text/css' },
    } }]);
    try {
      const run = await runCrawl(collectionXml(`${list('start_uris', [site.host('127.0.1.19').url('/')])}
        <attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">1</attrib>
        ${list('exclude_exts', ['.css'])}
        <section name="crawlmode"><attrib name="mode" type="string">DEPTH:1</attrib></section>`));
      const skips = run.events.filter((e) => e.type === 'skip').map((e) => `${new URL(e.url!).pathname} ${e.message}`);
      assert.deepEqual(site.fetchedPaths('127.0.1.19'), ['/robots.txt', '/', '/a', '/r', '/z'], skips.join('\n'));
      assert.equal(byPath(run.records, site.host('127.0.1.19').origin).get('/z')!.status, 'stored');
      assert.equal(run.summary.uriSkips.de, 1, JSON.stringify(run.summary.uriSkips));
      // /, /a and /z each link the stylesheet: three refusals, the last two remembered.
      assert.equal(run.summary.uriSkips.ur, 3, JSON.stringify(run.summary.uriSkips));
      assert.equal(run.counters.running!.histograms.URISkip.ur, 3);
    } finally {
      await site.close();
    }
  });
});

describe('the screened URI cache grows while cachesize.screened is unset', () => {
  it('doubles a full cache, keeps screening with it, and fetches and counts as a large one does', async () => {
    // 40 pages, each linking every other: a cache of 4 entries is full at once.
    const routes: Record<string, { kind: 'html'; body: string }> = {};
    const paths = Array.from({ length: 40 }, (_, i) => (i === 0 ? '/' : `/p${i}.html`));
    for (const p of paths) routes[p] = { kind: 'html', body: `<h1>${p}</h1>${paths.map((q) => `<a href="${q}">${q}</a>`).join(' ')}` };
    const site = await startFixtureSite([{ ip: '127.0.1.24', routes }]);
    try {
      const xml = (extra: string) => collectionXml(`${list('start_uris', [site.host('127.0.1.24').url('/')])}<attrib name="delay" type="real">0</attrib>${extra}`);
      const grown = await runCrawl(xml(''), { screenedStart: 4 });
      const served = site.requests.length;
      const large = await runCrawl(xml(''));
      const fixed = await runCrawl(xml('<section name="cachesize"><attrib name="screened" type="integer">4</attrib></section>'), { screenedStart: 4 });
      const notices = grown.events.filter((e) => e.type === 'cycle' && e.message.startsWith('screened URI cache grown')).map((e) => e.message);
      assert.deepEqual(notices, [4, 8, 16, 32, 64].map((n) => `screened URI cache grown to ${n * 2} entries (cachesize.screened is not set)`).slice(0, notices.length));
      assert.ok(notices.length >= 3, notices.join('\n'));
      assert.equal(large.events.filter((e) => e.message.startsWith('screened URI cache grown')).length, 0);
      assert.equal(fixed.events.filter((e) => e.message.startsWith('screened URI cache grown')).length, 0, 'a cachesize.screened that is set is kept');
      // Every page once, in each run; the same counts whatever the cache's size.
      const paths1 = site.requests.slice(0, served).map((r) => r.path).filter((p) => p !== '/robots.txt').sort();
      assert.deepEqual(paths1, [...paths].sort());
      for (const run of [grown, large, fixed]) {
        assert.equal(run.summary.stored, 40);
        assertCountersAgree(run.counters);
      }
      assert.equal(grown.summary.uriSkips.ic, large.summary.uriSkips.ic);
      assert.equal(fixed.summary.uriSkips.ic, large.summary.uriSkips.ic);
      assert.equal(grown.summary.uriSkips.ic, 40 * 39 - 39, 'each page\'s 39 links to the others, less the 39 that queued a page');
    } finally {
      await site.close();
    }
  });
});

describe('site statistics while a cycle runs', () => {
  it('saves the statistics of the sites that changed about once a second, and every site\'s when the cycle ends', async () => {
    // 8 pages 0.4 s apart: a cycle of about 3.5 s. The statistics in the
    // store are read while it runs, on the crawl's own store object.
    const routes: Record<string, { kind: 'html'; body: string }> = { '/': { kind: 'html', body: Array.from({ length: 8 }, (_, i) => `<a href="/p${i}.html">p${i}</a>`).join(' ') } };
    for (let i = 0; i < 8; i++) routes[`/p${i}.html`] = { kind: 'html', body: `<p>page ${i}</p>` };
    const site = await startFixtureSite([{ ip: '127.0.1.18', routes }]);
    const dir = tempDir();
    const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
    const xml = collectionXml(`${list('start_uris', [site.host('127.0.1.18').url('/')])}<attrib name="delay" type="real">0.4</attrib>`);
    const config = readConfigXml(xml, 'test.xml').document.collections[0]!;
    const content = openContentStore(join(dir, 'content'), { ...resolveSettings(config).storage });
    try {
      const crawl = new CollectionCrawl(config, { store, content });
      const origin = site.host('127.0.1.18').origin;
      const processed = async (): Promise<number> => {
        const json = await store.getSiteStats('t', origin);
        return json === undefined ? 0 : (JSON.parse(json) as StatsData).continuous.Processed;
      };
      const cycle = crawl.runCycle();
      const seen: number[] = [];
      for (let t = 0; t < 5; t++) {
        await new Promise((r) => setTimeout(r, 500));
        seen.push(await processed());
      }
      const summary = await cycle;
      assert.equal(summary.requests, 9);
      // Saved during the cycle (not only at its end), growing, and behind the crawl by at most about a second.
      assert.ok(seen.some((n) => n > 0 && n < 9), `statistics in the store at 0.5 s intervals: ${seen.join(', ')}`);
      assert.ok(seen.every((n, i) => i === 0 || n >= seen[i - 1]!), seen.join(', '));
      assert.ok(seen[4]! >= 4, `after 2.5 s (7 requests sent at 0.4 s apart), the store had ${seen[4]}`);
      assert.equal(await processed(), 9);
    } finally {
      await content.close();
      await store.close();
      await site.close();
    }
  });
});

describe('every URL the crawl queues is in its canonical form', () => {
  it('a rewrite rule that is not idempotent still applies to a link already seen in the form it gives', async () => {
    // /x becomes /x/x. /x/x links to /x/x as written, which the screened cache
    // holds already; normalized, it is /x/x/x, a URL not yet seen, so it must be fetched.
    const site = await startFixtureSite([{
      ip: '127.0.1.24',
      routes: {
        '/': { kind: 'html', body: '<a href="/x">x</a>' },
        '/x/x': { kind: 'html', body: '<a href="/x/x">again</a>' },
        '/x/x/x': { kind: 'html', body: '<p>end</p>' },
      },
    }]);
    try {
      const h = site.host('127.0.1.24');
      const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>
        <attrib name="rewrite_rules" type="list-string"><member>#/x$#/x/x#</member></attrib>`));
      assert.deepEqual(site.fetchedPaths('127.0.1.24').filter((p) => p !== '/robots.txt').sort(), ['/', '/x/x', '/x/x/x']);
      assert.equal(run.summary.stored, 3);
    } finally {
      await site.close();
    }
  });

  it('a meta refresh target is canonicalized like a link (sort_query_params)', async () => {
    const site = await startFixtureSite([{
      ip: '127.0.1.25',
      routes: {
        '/': { kind: 'html', body: '<html><head><meta http-equiv="refresh" content="0; url=/r?b=2&amp;a=1"></head><body></body></html>' },
        '/r': { kind: 'html', body: '<p>target</p>' },
      },
    }]);
    try {
      const h = site.host('127.0.1.25');
      const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>
        <attrib name="sort_query_params" type="boolean">yes</attrib>`));
      assert.deepEqual(site.fetchedPaths('127.0.1.25').filter((p) => p !== '/robots.txt'), ['/', '/r?a=1&b=2']);
      assert.equal(byPath(run.records, h.origin).get('/')!.redirectTo, h.url('/r?a=1&b=2'));
    } finally {
      await site.close();
    }
  });
});

describe('links to the page\'s own site and to others (MS-FSCADM Local, LocalFwd)', () => {
  it('takes the largest cachesize.screened the configuration allows (the cache keeps at most 2^24)', async () => {
    const site = await startFixtureSite([{ ip: '127.0.1.28', routes: { '/': { kind: 'html', body: '<a href="/a">a</a> <a href="/a">a</a>' }, '/a': { kind: 'html', body: '<a href="/">home</a>' } } }]);
    try {
      const run = await runCrawl(collectionXml(`${list('start_uris', [site.host('127.0.1.28').url('/')])}<attrib name="delay" type="real">0</attrib>
        <section name="cachesize"><attrib name="screened" type="integer">2147483647</attrib></section>`));
      assert.equal(run.summary.stored, 2);
      assert.deepEqual(site.fetchedPaths('127.0.1.28').filter((p) => p !== '/robots.txt').sort(), ['/', '/a']);
    } finally {
      await site.close();
    }
  });

  it('counts each distinct link once per page, whether the screened cache knew it or it was queued', async () => {
    const a = '127.0.1.26';
    const b = '127.0.1.27';
    const site = await startFixtureSite([
      {
        ip: a,
        routes: {
          '/': { kind: 'html', body: `<a href="/a">a</a> <a href="/b">b</a> <a href="{{origin:${b}}}/x">x</a>` },
          '/a': { kind: 'html', body: '<a href="/b">b</a> <a href="/">home</a> <a href="/b">b again</a>' },
          '/b': { kind: 'html', body: `<a href="/a">a</a> <a href="{{origin:${b}}}/x">x</a>` },
        },
      },
      {
        ip: b,
        routes: {
          '/x': { kind: 'html', body: `<a href="{{origin:${a}}}/a">a</a> <a href="/y">y</a>` },
          '/y': { kind: 'html', body: '<a href="/x">x</a>' },
        },
      },
    ]);
    try {
      const run = await runCrawl(collectionXml(`${list('start_uris', [site.host(a).url('/')])}<attrib name="delay" type="real">0</attrib>`));
      assert.equal(run.summary.stored, 5);
      // Per page: / 2 + 1, /a 2, /b 1 + 1, /x 1 + 1, /y 1. Most of them were in the screened cache when
      // they were met again; a hit must still tell the page's own site from another.
      assert.equal(run.counters.summed.continuous.Local, 7, JSON.stringify(run.counters.summed.continuous));
      assert.equal(run.counters.summed.continuous.LocalFwd, 3, JSON.stringify(run.counters.summed.continuous));
      assert.ok((run.summary.uriSkips.ic ?? 0) >= 4, JSON.stringify(run.summary.uriSkips));
    } finally {
      await site.close();
    }
  });

  it('counts once a known link and another spelling of it on the same page, in either order', async () => {
    // With sort_query_params, /r?b=2&a=1 is /r?a=1&b=2. By the time /p and /q are parsed, /r?a=1&b=2 is in
    // the screened cache: the extract worker leaves that spelling out and counts it, and the crawler
    // must not count the other one again once it has normalized it.
    const ip = '127.0.1.29';
    const site = await startFixtureSite([{
      ip,
      routes: {
        '/': { kind: 'html', body: '<a href="/r?a=1&amp;b=2">r</a> <a href="/p">p</a> <a href="/q">q</a>' },
        '/p': { kind: 'html', body: '<a href="/r?a=1&amp;b=2">r</a> <a href="/r?b=2&amp;a=1">r again</a>' },
        '/q': { kind: 'html', body: '<a href="/r?b=2&amp;a=1">r</a> <a href="/r?a=1&amp;b=2">r again</a>' },
        '/r': { kind: 'html', body: '<p>r</p>' },
      },
    }]);
    try {
      const run = await runCrawl(collectionXml(`${list('start_uris', [site.host(ip).url('/')])}<attrib name="delay" type="real">0</attrib>
        <attrib name="max_pending" type="integer">1</attrib><attrib name="sort_query_params" type="boolean">yes</attrib>`));
      assert.equal(run.summary.stored, 4);
      assert.deepEqual(site.fetchedPaths(ip).filter((p) => p !== '/robots.txt').sort(), ['/', '/p', '/q', '/r?a=1&b=2']);
      // / 3, /p 1, /q 1.
      assert.equal(run.counters.summed.continuous.Local, 5, JSON.stringify(run.counters.summed.continuous));
      assert.equal(run.summary.uriSkips.ic, 2, JSON.stringify(run.summary.uriSkips));
      assertCountersAgree(run.counters);
    } finally {
      await site.close();
    }
  });
});

describe('refresh cycles', () => {
  it('a second cycle sends conditional requests and counts 304s as unchanged', async () => {
    const routes = {
      '/': { kind: 'html' as const, body: '<a href="/a.html">a</a> <a href="/b.html">b</a>', etag: '"root"' },
      '/a.html': { kind: 'html' as const, body: '<p>a</p>', etag: '"a1"' },
      '/b.html': { kind: 'html' as const, body: '<p>b</p>', lastModified: 'Tue, 01 Sep 2026 10:00:00 GMT' },
    };
    const site = await startFixtureSite([{ ip: '127.0.1.16', routes }]);
    try {
      const h = site.host('127.0.1.16');
      const xml = collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>`);
      const dir = tempDir();
      const first = await runCrawl(xml, { dir });
      assert.equal(first.summary.stored, 3);
      site.reset();
      const second = await runCrawl(xml, { dir });
      assert.equal(second.summary.epoch, 2);
      // The second cycle's running totals start from the statistics the first one stored.
      assertCountersAgree(second.counters);
      assert.equal(second.counters.running!.continuous.Downloaded, first.counters.summed.continuous.Downloaded + 3);
      assert.equal(second.summary.unchanged, 3);
      assert.equal(second.summary.httpStatus['304'], 3);
      const byPathReq = new Map(site.requests.map((r) => [r.path, r.headers]));
      assert.equal(byPathReq.get('/a.html')!['if-none-match'], '"a1"');
      assert.equal(byPathReq.get('/b.html')!['if-modified-since'], 'Tue, 01 Sep 2026 10:00:00 GMT');
      site.setRoute('127.0.1.16', '/a.html', { kind: 'html', body: '<p>a, changed</p>', etag: '"a2"' });
      const third = await runCrawl(xml, { dir });
      assert.equal(third.summary.stored, 1);
      assert.equal(third.summary.unchanged, 2);
    } finally {
      await site.close();
    }
  });
});

describe('a refresh of a large crawl store', () => {
  // More records than one page of the store's answer (5,000), written in an order that is not the URLs'.
  const N = 12_001;
  const path = (i: number): string => `/k/${(i * 7919) % N}`;

  for (const mode of ['append', 'prepend'] as const) {
    it(`refresh_mode ${mode} queues every known URI again, in the order first written, ${mode === 'append' ? 'after' : 'before'} what was queued`, async () => {
      const site = await startFixtureSite([{ ip: '127.0.1.25', routes: { '/': { kind: 'html', body: '<p>start</p>' } } }]);
      try {
        const h = site.host('127.0.1.25');
        const origin = h.url('/').slice(0, -1);
        const dir = tempDir();
        const before = new SqliteCrawlStore(join(dir, 'trawl.db'));
        for (let i = 0; i < N; i++) await before.putRecord('t', rec(`${origin}${path(i)}`, { site: origin, depth: 1 }));
        await before.putRecord('t', rec(`${origin}/deleted`, { site: origin, status: 'deleted' }));
        // Queued by an earlier cycle, left over (append keeps it).
        await before.enqueue('t', 0, [{ url: `${origin}/left-over`, site: origin, depth: 1, hops: 1, redirects: 0, parent: undefined, priority: 1, sub: undefined }]);
        await before.close();
        // One fetch, then stop: the rest of the cycle's queue is left in the store to read.
        const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>
          <attrib name="refresh_mode" type="string">${mode}</attrib>`), { dir, maxPages: 1 });
        assert.deepEqual(site.fetchedPaths('127.0.1.25').filter((p) => p !== '/robots.txt'), [mode === 'prepend' ? '/' : '/left-over']);
        const after = new SqliteCrawlStore(join(dir, 'trawl.db'));
        try {
          await after.recoverLeases('t');
          const queued = (await after.lease('t', origin, N + 10)).map((l) => new URL(l.url).pathname);
          const known = Array.from({ length: N }, (_, i) => path(i));
          assert.deepEqual(queued, mode === 'prepend' ? [...known, '/left-over'] : ['/', ...known]);
        } finally {
          await after.close();
        }
        assert.equal(run.summary.requests, 1);
      } finally {
        await site.close();
      }
    });
  }
});

describe('the event log follows the collection\'s log section (MS-FSCCFG 2.2.4.5)', () => {
  let site: FixtureSite;
  before(async () => {
    site = await startFixtureSite([{
      ip: '127.0.1.23',
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nDisallow: /private/\n' },
        '/': { kind: 'html', body: '<a href="/a.html">a</a> <a href="/logo.png">logo</a> <a href="/private/x.html">x</a>' },
        '/a.html': { kind: 'html', body: '<a href="/">home</a> <a href="/logo.png">logo</a>' },
      },
    }]);
  });
  after(() => site.close());

  const crawlWith = async (log: string) => {
    const h = site.host('127.0.1.23');
    const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>${log}`));
    const skips = run.events.filter((e) => e.type === 'skip').map((e) => `${e.code} ${new URL(e.url!).pathname}`).sort();
    const fetches = run.events.filter((e) => e.type === 'fetch').map((e) => new URL(e.url!).pathname).sort();
    const uriSkips = run.summary.uriSkips;
    return { skips, fetches, uriSkips };
  };

  it('by default logs every download but no screened URI; the skips are still counted', async () => {
    const r = await crawlWith('');
    assert.deepEqual(r.fetches, ['/', '/a.html']);
    assert.deepEqual(r.skips, []);
    assert.equal(r.uriSkips.ur, 2, JSON.stringify(r.uriSkips));
  });

  it('screened=text logs each URI turned away, with its skip code', async () => {
    const r = await crawlWith('<section name="log"><attrib name="screened" type="string">text</attrib></section>');
    assert.deepEqual(r.skips, ['ro /private/x.html', 'ur /logo.png', 'ur /logo.png']);
    assert.deepEqual(r.fetches, ['/', '/a.html']);
  });

  it('fetch=none logs no download', async () => {
    const served = site.requests.length;
    const r = await crawlWith('<section name="log"><attrib name="fetch" type="string">none</attrib></section>');
    assert.deepEqual(r.fetches, []);
    // The pages were still fetched: only their log lines are gone.
    assert.deepEqual(site.requests.slice(served).map((x) => x.path).sort(), ['/', '/a.html', '/robots.txt']);
  });
});

describe('bad input: each gets its skip code and the crawl goes on', () => {
  it('unreachable seed, slow server, oversize body, garbage, unknown encoding, redirect loop', async () => {
    const routes = {
      '/': { kind: 'html' as const, body: ['/slow', '/big', '/junk', '/compress', '/loop1', '/ok.html'].map((p) => `<a href="${p}">${p}</a>`).join(' ') },
      // An encoding trawl cannot decode (before 6d4d483 this one page ended the whole crawl with an uncaught AbortError).
      '/compress': { kind: 'html' as const, body: 'not really compressed', headers: { 'Content-Encoding': 'compress' } },
      '/slow': { kind: 'slow' as const, body: 'x'.repeat(4000), bytesPerSecond: 500 },
      '/big': { kind: 'oversize' as const, bytes: 64_000_000, contentType: 'text/html' },
      '/junk': { kind: 'garbage' as const, bytes: new Uint8Array(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)) },
      '/loop1': { kind: 'redirect' as const, to: '/loop2' },
      '/loop2': { kind: 'redirect' as const, to: '/loop1' },
      '/ok.html': { kind: 'html' as const, body: '<p>fine</p>' },
    };
    const site = await startFixtureSite([{ ip: '127.0.1.17', routes }]);
    try {
      const h = site.host('127.0.1.17');
      // 127.0.1.18 has nothing listening: connection refused.
      const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/'), 'http://127.0.1.18:9/'])}
        <attrib name="delay" type="real">0</attrib><attrib name="fetch_timeout" type="integer">2</attrib>
        <attrib name="cut_off" type="integer">1000000</attrib><attrib name="truncate" type="boolean">no</attrib>`));
      const r = byPath(run.records, h.origin);
      assert.equal(r.get('/slow')!.skipCode, 'ti');
      assert.equal(r.get('/big')!.skipCode, 'tl');
      assert.equal(r.get('/compress')!.skipCode, 'en');
      assert.equal(r.get('/ok.html')!.status, 'stored');
      assert.ok(['stored', 'skipped'].includes(r.get('/junk')!.status));
      assert.equal(r.get('/loop1')!.status, 'redirect');
      assert.equal(r.get('/loop2')!.redirectTo, h.url('/loop1'));
      assert.deepEqual(site.duplicates('127.0.1.17'), []);
      const dead = run.records.find((x) => x.url === 'http://127.0.1.18:9/');
      assert.equal(dead!.skipCode, 'co');
      assert.equal(run.summary.complete, true);
      // The oversize body was abandoned, not read to the end.
      const big = site.requests.find((x) => x.path === '/big')!;
      assert.ok(big.bytesOut < 16_000_000, String(big.bytesOut));
    } finally {
      await site.close();
    }
  });

  it('refuses loopback addresses unless allowed, with a clear reason', async () => {
    const site = await startFixtureSite([{ ip: '127.0.1.19', routes: { '/': { kind: 'html', body: 'x' } } }]);
    try {
      const h = site.host('127.0.1.19');
      const run = await runCrawl(`<CrawlerConfig><DomainSpecification name="t">${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib></DomainSpecification></CrawlerConfig>`);
      assert.equal(site.requests.length, 0);
      assert.equal(run.records[0]!.status, 'skipped');
      assert.ok(run.events.some((e) => /loopback address; refused unless trawl_egress\.allow_loopback/.test(e.message)), JSON.stringify(run.events));
    } finally {
      await site.close();
    }
  });
});
