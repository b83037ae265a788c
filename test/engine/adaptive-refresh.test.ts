// refresh_mode adaptive (src/engine/adaptive-refresh.ts): the scoring rules
// on their own, then real `trawl crawl --cycles N` runs over loopback sites,
// what each minor cycle fetched read from the server's own request log and
// split at the minor cycles' starts the scheduler log (log.scheduler) gives.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { changedProbability, changeRate, inverseDepthScore, inverseLengthScore, landingPageScore } from '../../src/engine/adaptive-refresh.ts';
import { startFixtureSite, type FixtureSite, type HostSpec, type RequestRecord } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { runTrawl } from '../support/trawl-cli.ts';

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
    const often = changedProbability(changeRate(6, 60 * minute, 10 * minute), 10 * minute);
    const never = changedProbability(changeRate(0, 60 * minute, 10 * minute), 10 * minute);
    assert.ok(often > 0.5 && never < 0.1, `${often} ${never}`);
    // The longer since the last fetch, the likelier a change.
    assert.ok(changedProbability(changeRate(0, 60 * minute, 10 * minute), 100 * minute) > never);
    // An old Last-Modified (a long window without a change) lowers the estimate.
    assert.ok(changeRate(0, 1000 * minute, 10 * minute) < changeRate(0, 10 * minute, 10 * minute));
  });
});

const ip = (n: number): string => `127.0.33.${n}`;

function configXml(start: string, adaptive: string, delay = '0'): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="adapt">
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
  <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
  <attrib name="delay" type="real">${delay}</attrib>
  <attrib name="max_pending" type="integer">1</attrib>
  <attrib name="refresh" type="real">0</attrib>
  <attrib name="refresh_mode" type="string">adaptive</attrib>
  <section name="log"><attrib name="scheduler" type="string">text</attrib></section>
  ${adaptive}
</DomainSpecification></CrawlerConfig>`;
}

interface LogLine {
  readonly time: string;
  readonly event: string;
  readonly url?: string;
  readonly msg: string;
}

const readLog = (data: string): LogLine[] => readFileSync(join(data, 'logs/crawl.log'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine);

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
    paths: requests.filter((r) => r.path !== '/robots.txt' && r.startMs >= s.ms && (i + 1 === starts.length || r.startMs < starts[i + 1]!.ms)).map((r) => r.path),
  }));
}

describe('refresh_mode adaptive, crawled by trawl crawl --cycles', () => {
  let site: FixtureSite;
  let hotVersion = 0;
  const cold = Array.from({ length: 9 }, (_, i) => `/c${i}.html`);
  const dir = tempDir();

  before(async () => {
    const routes: HostSpec['routes'] = {
      '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
      '/': { kind: 'html', body: `<h1>index</h1><a href="/hot.html">hot</a> ${cold.map((p) => `<a href="${p}">${p}</a>`).join(' ')}` },
      // A page that is different at every request.
      '/hot.html': (_req, res) => {
        hotVersion++;
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<p>version ${hotVersion}</p><a href="/">home</a>`);
      },
    };
    for (const p of cold) routes[p] = { kind: 'html', body: `<p>${p} never changes</p><a href="/">home</a>` };
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
    // Every other minor cycle re-fetches coverage_min URIs, each once.
    for (const m of minors.slice(1)) {
      assert.equal(m.paths.length, 2, `${m.label}: ${m.paths.join(' ')}`);
      assert.equal(new Set(m.paths).size, 2, `${m.label}: ${m.paths.join(' ')}`);
    }
    // Once trawl has seen it change, the changing page is taken by every minor cycle;
    // the pages that never change share the rest, so none of them is left out for long.
    // Once trawl has seen it change, the changing page is re-fetched far more often than any page
    // that never changes; those share the rest in turn, so each of them is re-fetched too.
    const refetched = minors.slice(1).flatMap((m) => m.paths);
    const count = (p: string): number => refetched.filter((x) => x === p).length;
    const coldMost = Math.max(...cold.map(count), count('/'));
    assert.ok(count('/hot.html') >= 2 * coldMost, `hot ${count('/hot.html')}, a cold page at most ${coldMost}: ${refetched.join(' ')}`);
    for (const p of cold) assert.ok(count(p) >= 1, `${p} never re-fetched: ${refetched.join(' ')}`);
    // In the last refresh cycle the changing page is in at least two of its three minor cycles.
    assert.ok(minors.slice(-3).filter((m) => m.paths.includes('/hot.html')).length >= 2, minors.slice(-3).map((m) => m.paths.join(' ')).join(' | '));
    // The scheduler log gives each decision with its reason.
    const log = readLog(data).filter((l) => l.event === 'scheduler');
    assert.ok(log.some((l) => /re-crawl #1 \(score [\d.]+: change_history [\d.]+ \[P\(changed\) [\d.]+\]/.test(l.msg) && l.url?.endsWith('/hot.html')), 'no re-crawl line for /hot.html');
    assert.ok(log.some((l) => /budget 2 \(coverage_min 2, coverage_max_pct 0 % of 11 = 0\); re-crawls 2/.test(l.msg)), 'no site summary');
    assert.ok(log.some((l) => /minor cycle summary: .*: 2 of 2 re-crawls fetched/.test(l.msg)), 'no minor cycle summary');
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
