// refresh_mode adaptive (src/engine/adaptive-refresh.ts): the scoring rules
// on their own, then real `trawl crawl --cycles N` runs over loopback sites,
// what each minor cycle fetched read from the server's own request log and
// split at the minor cycles' starts the scheduler log (log.scheduler) gives.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AdaptiveRefresh, ageIndex, ageScore, changedProbability, changeRate, expectedAge, inverseDepthScore, inverseLengthScore, landingPageScore } from '../../src/engine/adaptive-refresh.ts';
import { CrawlEvents } from '../../src/engine/crawl-events.ts';
import type { CrawlStore, SitemapMeta, UriRecord } from '../../src/store/crawl-store.ts';
import { startFixtureSite, type FixtureSite, type HostSpec, type RequestRecord } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { runTrawl } from '../support/trawl-cli.ts';
import { readCrawlLog, type LogLine } from '../support/crawl-log.ts';

describe('adaptive scoring rules', () => {
  it('inverse length: 1 at the root, less with each slash, 0 from 10 slashes', () => {
    assert.equal(inverseLengthScore(new URL('http://a.test/')), 1);
    assert.ok(inverseLengthScore(new URL('http://a.test/a/b')) < inverseLengthScore(new URL('http://a.test/a')));
    assert.equal(inverseLengthScore(new URL('http://a.test/1/2/3/4/5/6/7/8/9/10')), 0);
  });

  it('inverse depth: 1 for a start URI, 0 from 10 hops', () => {
    assert.equal(inverseDepthScore(0), 1);
    assert.equal(inverseDepthScore(5), 0.5);
    assert.equal(inverseDepthScore(10), 0);
    assert.equal(inverseDepthScore(12), 0);
  });

  it('landing page: a path ending in / or index.html without a query', () => {
    assert.equal(landingPageScore(new URL('http://a.test/docs/')), 1);
    assert.equal(landingPageScore(new URL('http://a.test/docs/index.html')), 1);
    assert.equal(landingPageScore(new URL('http://a.test/docs/?page=2')), 0);
    assert.equal(landingPageScore(new URL('http://a.test/docs/a.html')), 0);
  });

  it('change history: a page seen changing at each check is more likely changed than one never seen changing', () => {
    const minute = 60_000;
    // 6 checks over an hour: 6 changes against none, same prior (10 min), 10 min since the last fetch.
    const often = changedProbability(changeRate(6, 6, 60 * minute, 10 * minute), 10 * minute);
    const never = changedProbability(changeRate(0, 6, 60 * minute, 10 * minute), 10 * minute);
    assert.ok(often > 0.5 && never < 0.1, `${often} ${never}`);
    // The longer since the last fetch, the likelier a change.
    assert.ok(changedProbability(changeRate(0, 6, 60 * minute, 10 * minute), 100 * minute) > never);
    // An old Last-Modified (a long window without a change) lowers the estimate.
    assert.ok(changeRate(0, 1, 1000 * minute, 10 * minute) < changeRate(0, 1, 10 * minute, 10 * minute));
    // The more checks found it changed, the higher the rate, without bound as every check does.
    assert.ok(changeRate(12, 12, 60 * minute, 10 * minute) > changeRate(6, 6, 60 * minute, 10 * minute));
    assert.ok(changeRate(6, 12, 60 * minute, 10 * minute) < changeRate(12, 12, 60 * minute, 10 * minute));
  });

  it('expected age: t − (1 − e^(−λt))/λ, about λt²/2 for a rare change and t − 1/λ for a frequent one', () => {
    const s = 1000;
    assert.equal(expectedAge(0.1 / s, 0), 0);
    assert.equal(expectedAge(0, 50 * s), 0);
    // λ = 1/1800 s, t = 30 s: λt²/2 = 0.25 s, a little less.
    const rare = expectedAge(1 / (1800 * s), 30 * s);
    assert.ok(rare > 0.24 * s && rare < 0.25 * s, `${rare}`);
    // λ = 1/s, t = 60 s: 59 s.
    assert.ok(Math.abs(expectedAge(1 / s, 60 * s) - 59 * s) < 1);
    // The small-λt series and the closed form agree where they meet.
    assert.ok(Math.abs(expectedAge(0.999e-3, 1) - expectedAge(1.001e-3, 1)) < 1e-6);
  });

  it('age index: λt³/3 for a rare change, so that the age-optimal interval goes as λ^(−1/3)', () => {
    const s = 1000;
    const lambda = 1 / (1800 * s);
    const t = 30 * s;
    const j = ageIndex(lambda, t);
    assert.ok(Math.abs(j / ((lambda * t ** 3) / 3) - 1) < 0.01, `${j}`);
    // Closed form and series agree around their switch (x = 0.01).
    const a = ageIndex(0.00999, 1);
    const b = ageIndex(0.01001, 1);
    assert.ok(Math.abs(a - b) / a < 0.01, `${a} ${b}`);
    // It grows with the time since the fetch and with the rate.
    assert.ok(ageIndex(lambda, 2 * t) > ageIndex(lambda, t));
    assert.ok(ageIndex(10 * lambda, t) > ageIndex(lambda, t));
    // The interval at which a page reaches a common threshold: a page changing 1,000 times less
    // often reaches it 10 times later (λ^(−1/3)), not 1,000 times later as a threshold on P(changed) would give.
    const threshold = ageIndex(1 / (10 * s), 5 * s);
    const reach = (rate: number): number => {
      let lo = 0;
      let hi = 1e9;
      for (let i = 0; i < 200; i++) {
        const mid = (lo + hi) / 2;
        if (ageIndex(rate, mid) < threshold) lo = mid;
        else hi = mid;
      }
      return hi;
    };
    const ratio = reach(1 / (10_000 * s)) / reach(1 / (10 * s));
    assert.ok(ratio > 8 && ratio < 14, `${ratio}`);
    // For a page that changes far faster than it is fetched, t²/2 − 1/λ²: the rate hardly matters any more.
    assert.ok(Math.abs(ageIndex(10 / s, 60 * s) / ageIndex(100 / s, 60 * s) - 1) < 0.001);
  });

  it('age score: 0 right after a fetch, half at the index of one minor cycle of a page that changed at once, below 1', () => {
    const minorMs = 6000;
    assert.equal(ageScore(0, minorMs), 0);
    assert.ok(Math.abs(ageScore((minorMs * minorMs) / 2, minorMs) - 0.5) < 1e-12);
    assert.ok(ageScore(1e15, minorMs) < 1 && ageScore(1e15, minorMs) > 0.99);
  });
});


describe('adaptive scoring: sitemap lastmod and priority', () => {
  it('a lastmod later than the last fetch makes a change certain; priority scales the sitemap rule around 0.5', async () => {
    const now = Date.parse('2026-06-01T12:00:00Z');
    const meta: SitemapMeta[] = [
      { url: 'http://a.test/new', lastmod: '2026-06-01T11:00:00Z', changefreq: undefined, priority: undefined },
      { url: 'http://a.test/old', lastmod: '2026-05-01', changefreq: undefined, priority: undefined },
      { url: 'http://a.test/high', lastmod: undefined, changefreq: 'daily', priority: 1 },
      { url: 'http://a.test/low', lastmod: undefined, changefreq: 'daily', priority: 0 },
      { url: 'http://a.test/mid', lastmod: undefined, changefreq: 'daily', priority: undefined },
    ];
    const store = { listChangeHistory: () => Promise.resolve([]), listSitemapMeta: () => Promise.resolve(meta) } as unknown as CrawlStore;
    const ar = new AdaptiveRefresh({
      refreshCount: 4, refreshQuotaPct: 90, coverageMin: 25, coverageMaxPct: 10, markupMime: ['text/html'], refreshMs: 3_600_000,
      weights: { inverseLength: 0, inverseDepth: 0, isLandingPage: 0, isMimeMarkup: 0, changeHistory: 10, sitemap: 10 },
      sitemapWeights: { always: 1, hourly: 0.64, daily: 0.32, weekly: 0.16, monthly: 0.08, yearly: 0.04, never: 0, default: 0.16 },
    }, { store, name: 'c', events: new CrawlEvents(undefined), epoch: () => 2, addWork: () => undefined, queuedOf: () => { throw new Error('not queued here'); } });
    await ar.begin(now - 60_000, () => now);
    const rec = (url: string): UriRecord => ({
      url, site: 'http://a.test:80', status: 'stored', httpStatus: 200, checksum: 'x', lastCrawledMs: now - 7_200_000, etag: undefined, lastModified: undefined,
      errorCount: 0, skipCode: undefined, mime: 'text/html', size: 1, contentRef: undefined, duplicateOf: undefined, redirectTo: undefined, depth: 1, parent: undefined, epoch: 1,
    });
    for (const m of meta) ar.noteRecord(rec(m.url), false);
    const score = (u: string) => ar.scoreOf(`http://a.test/${u}`, now)!;
    // Fetched two hours ago; the sitemap says it changed one hour ago: certain.
    assert.equal(score('new').pChanged, 1);
    assert.ok(score('old').pChanged < 1);
    assert.equal(score('new').urgency, 1);
    // daily = 0.32: × (0.5 + priority) × the sitemap weight 10, × the page's age score (the same for all: fetched at once, no history).
    const u = score('mid').urgency;
    assert.ok(u > 0.5 && u < 1, `${u}`);
    assert.ok(Math.abs(score('mid').sitemap - 0.32 * 10 * u) < 1e-9);
    assert.ok(Math.abs(score('high').sitemap - 0.32 * 1.5 * 10 * u) < 1e-9);
    assert.ok(Math.abs(score('low').sitemap - 0.32 * 0.5 * 10 * u) < 1e-9);
    // No changefreq: `default`.
    assert.ok(Math.abs(score('old').sitemap - 0.16 * 10 * u) < 1e-9);
    // The change history rule is the same age score under its weight.
    assert.ok(Math.abs(score('mid').change - 10 * u) < 1e-9);
    // Just fetched: no urgency, so neither rule scores.
    ar.noteRecord({ ...rec('http://a.test/mid'), lastCrawledMs: now }, false);
    assert.equal(score('mid').sitemap, 0);
    assert.equal(score('mid').change, 0);
    assert.equal(ar.scoreOf('http://a.test/unknown', now), undefined);
  });
});

const ip = (n: number): string => `127.0.33.${n}`;

function configXml(start: string, body: string, delay = '0'): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="adapt">
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
  <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
  <attrib name="delay" type="real">${delay}</attrib>
  <attrib name="max_pending" type="integer">1</attrib>
  <attrib name="refresh" type="real">0</attrib>
  <attrib name="refresh_mode" type="string">adaptive</attrib>
  <section name="log"><attrib name="scheduler" type="string">text</attrib></section>
  ${body}
</DomainSpecification></CrawlerConfig>`;
}

const readLog = (data: string): LogLine[] => readCrawlLog(join(data, 'logs/crawl.log'));

interface Minor {
  readonly label: string;
  readonly paths: string[];
}

/**
 * The server's page requests split at each minor cycle's start (the first
 * scheduler line naming it): with refresh 0 a minor cycle begins only once
 * the one before has nothing in flight, so the split is exact.
 */
function minorCycles(log: readonly LogLine[], requests: readonly RequestRecord[]): Minor[] {
  const starts: Array<{ label: string; ms: number }> = [];
  for (const l of log) {
    const m = /^(minor cycle \d+\/\d+ of cycle \d+) begins: /.exec(l.msg);
    if (m) starts.push({ label: m[1]!, ms: Date.parse(l.time) });
  }
  return starts.map((s, i) => ({
    label: s.label,
    paths: requests.filter((r) => r.path !== '/robots.txt' && r.path !== '/sitemap.xml' && r.startMs >= s.ms && (i + 1 === starts.length || r.startMs < starts[i + 1]!.ms)).map((r) => r.path),
  }));
}

const OLD = 'Mon, 01 Jan 2024 00:00:00 GMT';

describe('refresh_mode adaptive, crawled by trawl crawl --cycles', () => {
  let site: FixtureSite;
  let hotVersion = 0;
  const cold = Array.from({ length: 9 }, (_, i) => `/c${i}.html`);
  const dir = tempDir();

  before(async () => {
    const routes: HostSpec['routes'] = {
      '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
      // The pages that never change say so: a Last-Modified two years old (and a 304 to If-Modified-Since).
      '/': { kind: 'html', lastModified: OLD, body: `<h1>index</h1><a href="/hot.html">hot</a> ${cold.map((p) => `<a href="${p}">${p}</a>`).join(' ')}` },
      // A page that is different at every request.
      '/hot.html': (_req, res) => {
        hotVersion++;
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<p>version ${hotVersion}</p><a href="/">home</a>`);
      },
    };
    for (const p of cold) routes[p] = { kind: 'html', lastModified: OLD, body: `<p>${p} never changes</p><a href="/">home</a>` };
    site = await startFixtureSite([{ ip: ip(1), routes }]);
  });

  after(async () => {
    await site.close();
  });

  it('re-fetches the page that changes at every minor cycle, the ones that never change in turn, coverage_min URIs each', async () => {
    const data = join(dir, 'often');
    mkdirSync(data, { recursive: true });
    const file = join(data, 'adapt.xml');
    // Only the change history scores: two re-crawls per minor cycle (coverage_min 2, coverage_max_pct 0).
    writeFileSync(file, configXml(site.host(ip(1)).url('/'), `
      <section name="adaptive"><attrib name="refresh_count" type="integer">3</attrib><attrib name="coverage_min" type="integer">2</attrib>
        <attrib name="coverage_max_pct" type="integer">0</attrib><attrib name="refresh_quota" type="integer">100</attrib></section>
      <section name="weights"><attrib name="inverse_length" type="real">0</attrib><attrib name="inverse_depth" type="real">0</attrib>
        <attrib name="is_landing_page" type="real">0</attrib><attrib name="is_mime_markup" type="real">0</attrib><attrib name="sitemap" type="real">0</attrib></section>`,
      '0.05'));
    const r = await runTrawl(['crawl', '--data', data, '--cycles', '5', '--json', file], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out) as { collections: Array<{ epoch: number; complete: boolean }> };
    assert.deepEqual(out.collections.map((c) => [c.epoch, c.complete]), [[1, true], [2, true], [3, true], [4, true], [5, true]]);
    const minors = minorCycles(readLog(data), site.requests);
    assert.equal(minors.length, 15, minors.map((m) => m.label).join(', '));
    // The first minor cycle of the first refresh cycle discovers the site (no known URI: no budget).
    assert.deepEqual([...minors[0]!.paths].sort(), ['/', '/hot.html', ...cold].sort());
    // The rest of the first cycle belongs to the discovery: no re-crawls (the pages were just fetched).
    assert.deepEqual(minors.slice(1, 3).map((m) => m.paths), [[], []]);
    // Every later minor cycle re-fetches coverage_min URIs, each once.
    for (const m of minors.slice(3)) {
      assert.equal(m.paths.length, 2, `${m.label}: ${m.paths.join(' ')}`);
      assert.equal(new Set(m.paths).size, 2, `${m.label}: ${m.paths.join(' ')}`);
    }
    // Once trawl has seen it change, the changing page is taken by every minor cycle;
    // the pages that never change share the rest, so none of them is left out for long.
    // Once trawl has seen it change, the changing page is re-fetched far more often than any page
    // that never changes; those share the rest in turn, so each of them is re-fetched too.
    const refetched = minors.slice(3).flatMap((m) => m.paths);
    const count = (p: string): number => refetched.filter((x) => x === p).length;
    const coldMost = Math.max(...cold.map(count), count('/'));
    assert.ok(count('/hot.html') >= 2 * coldMost, `hot ${count('/hot.html')}, a cold page at most ${coldMost}: ${refetched.join(' ')}`);
    for (const p of cold) assert.ok(count(p) >= 1, `${p} never re-fetched: ${refetched.join(' ')}`);
    // Every refresh cycle after the discovery re-fetches the changing page.
    for (let c = 1; c < 5; c++) {
      const cyc = minors.slice(3 * c, 3 * c + 3);
      assert.ok(cyc.some((m) => m.paths.includes('/hot.html')), cyc.map((m) => `${m.label}: ${m.paths.join(' ')}`).join(' | '));
    }
    // The scheduler log gives each decision with its reason.
    const log = readLog(data).filter((l) => l.event === 'scheduler');
    assert.ok(log.some((l) => /re-crawl #\d+ \(score [\d.]+: change_history [\d.]+ \[age index [\d.]+, expected age [\d.]+ s, P\(changed\) [\d.]+\]/.test(l.msg) && l.url?.endsWith('/hot.html')), 'no re-crawl line for /hot.html');
    assert.ok(log.some((l) => /budget 2 \(coverage_min 2, coverage_max_pct 0 % of 11 = 0\); re-crawls 2/.test(l.msg)), 'no site summary');
    assert.ok(log.some((l) => /minor cycle summary: .*: 2 of 2 re-crawls fetched/.test(l.msg)), 'no minor cycle summary');
    assert.ok(log.some((l) => /minor cycle 2\/3 of cycle 1 begins: 0 sites with known URIs when the cycle began .*; 1 sites in their discovery, without a budget/.test(l.msg)), 'no discovery line');
  });

  it('splits a minor cycle between re-crawls and new URIs by refresh_quota, deferring the new ones beyond their share', async () => {
    const host = ip(2);
    const known = Array.from({ length: 19 }, (_, i) => `/k${i}.html`);
    const fresh = Array.from({ length: 10 }, (_, i) => `/n${i}.html`);
    const links = (ps: readonly string[]): string => ps.map((p) => `<a href="${p}">${p}</a>`).join(' ');
    const routes: HostSpec['routes'] = {
      '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
      '/': { kind: 'html', body: `<h1>index</h1>${links(known)}` },
    };
    for (const p of [...known, ...fresh]) routes[p] = { kind: 'html', body: `<p>${p}</p>` };
    const s = await startFixtureSite([{ ip: host, routes }]);
    try {
      const data = join(dir, 'quota');
      mkdirSync(data, { recursive: true });
      const file = join(data, 'adapt.xml');
      // A budget of 10 (coverage_min), 60 % re-crawls: 6 re-crawls and 4 new URIs;
      // the landing page scores highest, so the index is re-crawled first and finds the new pages.
      writeFileSync(file, configXml(s.host(host).url('/'), `
        <section name="adaptive"><attrib name="refresh_count" type="integer">3</attrib><attrib name="coverage_min" type="integer">10</attrib>
          <attrib name="coverage_max_pct" type="integer">0</attrib><attrib name="refresh_quota" type="integer">60</attrib></section>
        <section name="weights"><attrib name="is_landing_page" type="real">100</attrib></section>`));
      const first = await runTrawl(['crawl', '--data', data, '--json', file], { timeoutMs: 60_000 });
      assert.equal(first.code, 0, first.err);
      s.setRoute(host, '/', { kind: 'html', body: `<h1>index</h1>${links(known)} ${links(fresh)}` });
      s.reset();
      const second = await runTrawl(['crawl', '--data', data, '--json', file], { timeoutMs: 60_000 });
      assert.equal(second.code, 0, second.err);
      const minors = minorCycles(readLog(data).filter((l) => / of cycle 2 begins/.test(l.msg)), s.requests);
      assert.equal(minors.length, 3, minors.map((m) => m.label).join(', '));
      const split = minors.map((m) => ({ recrawls: m.paths.filter((p) => !fresh.includes(p)), news: m.paths.filter((p) => fresh.includes(p)) }));
      // Minor cycle 1: no new URI waits yet, so the budget goes to re-crawls; the index is among them,
      // and the new pages it links are deferred (their share of this minor cycle is what the re-crawls left: none).
      assert.equal(split[0]!.recrawls.length, 10, JSON.stringify(split[0]));
      assert.equal(split[0]!.recrawls[0], '/');
      assert.equal(split[0]!.news.length, 0, JSON.stringify(split[0]));
      // Then 60 % / 40 %: 6 re-crawls and 4 of the new pages, then the same again.
      for (const m of split.slice(1)) {
        assert.equal(m.recrawls.length, 6, JSON.stringify(m));
        assert.equal(m.news.length, 4, JSON.stringify(m));
      }
      const log = readLog(data).filter((l) => l.event === 'scheduler');
      assert.ok(log.some((l) => /new URI deferred to the next minor cycle/.test(l.msg)), 'no deferral logged');
      // The two new pages still deferred at the end are queued for the next cycle.
      assert.ok(log.some((l) => /cycle 2 ends: 2 deferred new URIs are queued for the next cycle/.test(l.msg)), log.map((l) => l.msg).filter((m) => /ends/.test(m)).join('\n'));
    } finally {
      await s.close();
    }
  });
});

describe('refresh_mode adaptive: the sitemap and URL rules', () => {
  const dir = tempDir();
  const links = (ps: readonly string[]): string => ps.map((p) => `<a href="${p}">${p}</a>`).join(' ');

  /** Runs two cycles (discovery, then minor cycles with budgets) and returns the minor cycles with a budget. */
  async function budgeted(name: string, s: FixtureSite, host: string, body: string): Promise<Minor[]> {
    const data = join(dir, name);
    mkdirSync(data, { recursive: true });
    const file = join(data, 'adapt.xml');
    writeFileSync(file, configXml(s.host(host).url('/'), body));
    const r = await runTrawl(['crawl', '--data', data, '--cycles', '2', '--json', file], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.err);
    const minors = minorCycles(readLog(data), s.requests);
    assert.equal(minors.length, 6, minors.map((m) => m.label).join(', '));
    // The first cycle is the site's discovery; the second's minor cycles have budgets.
    return minors.slice(3);
  }

  it('re-fetches the pages the sitemap changefreq weights score before those weighted 0, as many as coverage_max_pct allows (sitemap_weights)', async () => {
    const host = ip(3);
    const pages = Array.from({ length: 19 }, (_, i) => `/s${i}.html`);
    // The more often a page changes, the later its name sorts, so that URL order alone would give the opposite.
    const FREQ: Record<number, string> = { 18: 'always', 17: 'hourly', 16: 'daily', 15: 'weekly', 14: 'monthly', 13: 'yearly' };
    const freq = (i: number): string => (FREQ[i] !== undefined ? `<changefreq>${FREQ[i]}</changefreq>` : i < 9 ? '<changefreq>never</changefreq>' : '');
    const routes: HostSpec['routes'] = {
      '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\nSitemap: {{origin}}/sitemap.xml\n' },
      '/sitemap.xml': { kind: 'text', contentType: 'application/xml', body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${pages.map((p, i) => `<url><loc>{{origin}}${p}</loc>${freq(i)}</url>`).join('')}</urlset>` },
      '/': { kind: 'html', body: `<h1>index</h1>${links(pages)}` },
    };
    for (const p of pages) routes[p] = { kind: 'html', body: `<p>${p}</p>` };
    const s = await startFixtureSite([{ ip: host, routes }]);
    try {
      // 20 known URIs × coverage_max_pct 60 % = 12 a minor cycle (coverage_min 0); only the sitemap rule scores,
      // with the specification's weights but `default` (0.12) between weekly (0.16) and monthly (0.08).
      const minors = await budgeted('sitemap', s, host, `<attrib name="use_sitemaps" type="boolean">yes</attrib>
        <section name="adaptive"><attrib name="refresh_count" type="integer">3</attrib><attrib name="coverage_min" type="integer">0</attrib>
          <attrib name="coverage_max_pct" type="integer">60</attrib><attrib name="refresh_quota" type="integer">100</attrib></section>
        <section name="weights"><attrib name="inverse_length" type="real">0</attrib><attrib name="inverse_depth" type="real">0</attrib>
          <attrib name="is_landing_page" type="real">0</attrib><attrib name="is_mime_markup" type="real">0</attrib><attrib name="change_history" type="real">0</attrib></section>
        <section name="sitemap_weights"><attrib name="always" type="real">1</attrib><attrib name="hourly" type="real">0.64</attrib><attrib name="daily" type="real">0.32</attrib>
          <attrib name="weekly" type="real">0.16</attrib><attrib name="monthly" type="real">0.08</attrib><attrib name="yearly" type="real">0.04</attrib>
          <attrib name="never" type="real">0</attrib><attrib name="default" type="real">0.12</attrib></section>`);
      // Every page the weights give a score: always, hourly, daily, weekly, monthly, yearly, the pages without a
      // changefreq (the index is in no sitemap: default); then the first of those the sitemap says never change
      // (weight 0: no score at all, so the URL order decides), to fill the 12. Which of the scored pages comes first
      // depends on how long since each was fetched (the weight scales its age score), so the set is what is fixed.
      const expected = ['/s18.html', '/s17.html', '/s16.html', '/s15.html', '/s14.html', '/s13.html', '/', '/s9.html', '/s10.html', '/s11.html', '/s12.html', '/s0.html'];
      for (const m of minors) {
        assert.deepEqual([...m.paths].sort(), [...expected].sort(), m.label);
        // The page with weight 0 is last: the scored ones all outrank it.
        assert.equal(m.paths.at(-1), '/s0.html', m.label);
      }
      // The best page left out is one the sitemap says never changes, scoring nothing.
      const log = readLog(join(dir, 'sitemap')).filter((l) => l.event === 'scheduler' && / of cycle 2: 8 known URIs of .* not taken; the best of them: /.test(l.msg));
      assert.equal(log.length, 3, 'no "not taken" line per minor cycle');
      for (const l of log) assert.match(l.msg, /the best of them: \S+\/s1\.html \(score 0\.00:/);
    } finally {
      await s.close();
    }
  });

  it('scores short paths and markup above deep paths and other types (inverse_length, is_mime_markup), and pages near the start above far ones (inverse_depth)', async () => {
    const host = ip(4);
    const deep = '/a/b/c/d/e/f/g/h/i/deep.html';
    // A chain of 11 hops whose far end sorts first (/chain/a.html is 11 hops away, /chain/k.html 1).
    const chain = Array.from({ length: 11 }, (_, i) => `/chain/${String.fromCharCode(107 - i)}.html`);
    const routes: HostSpec['routes'] = {
      '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
      '/': { kind: 'html', body: `<h1>index</h1>${links(['/top.html', '/doc.txt', deep, chain[0]!])}` },
      '/top.html': { kind: 'html', body: '<p>top</p>' },
      '/doc.txt': { kind: 'text', body: 'plain text' },
      [deep]: { kind: 'html', body: '<p>deep</p>' },
    };
    chain.forEach((p, i) => (routes[p] = { kind: 'html', body: `<p>${p}</p>${i + 1 < chain.length ? links([chain[i + 1]!]) : ''}` }));
    const s = await startFixtureSite([{ ip: host, routes }]);
    try {
      const adaptive = `<section name="adaptive"><attrib name="refresh_count" type="integer">3</attrib><attrib name="coverage_min" type="integer">3</attrib>
          <attrib name="coverage_max_pct" type="integer">0</attrib><attrib name="refresh_quota" type="integer">100</attrib></section>`;
      const zero = (names: readonly string[]): string => names.map((n) => `<attrib name="${n}" type="real">0</attrib>`).join('');
      const byShape = await budgeted('shape', s, host, `${adaptive}<section name="weights">${zero(['inverse_depth', 'is_landing_page', 'change_history', 'sitemap'])}
          <attrib name="inverse_length" type="real">1</attrib><attrib name="is_mime_markup" type="real">5</attrib></section>`);
      for (const m of byShape) {
        assert.equal(m.paths.length, 3, `${m.label}: ${m.paths.join(' ')}`);
        assert.ok(!m.paths.includes('/doc.txt') && !m.paths.includes(deep), `${m.label}: ${m.paths.join(' ')}`);
      }
      s.reset();
      const byDepth = await budgeted('depth', s, host, `${adaptive}<section name="weights">${zero(['inverse_length', 'is_mime_markup', 'is_landing_page', 'change_history', 'sitemap'])}</section>`);
      // Depth 0, then two depth-1 pages in URL order (ties); not the chain's far end, which sorts before them.
      for (const m of byDepth) assert.deepEqual([...m.paths].sort(), ['/', deep, '/chain/k.html'].sort(), `${m.label}: ${m.paths.join(' ')}`);
    } finally {
      await s.close();
    }
  });
});
