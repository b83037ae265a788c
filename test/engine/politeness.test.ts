// Heritrix-style politeness (trawl_politeness): the wait after each fetch
// follows its duration (delay_factor within min_delay and max_delay), a
// retried URI waits retry_delay; and --citeseerx applies the User
// Submission profile's values (4.0, 2 s, 20 s, 3 retries 10 s apart, its
// User-Agent and From). Real `trawl crawl` runs; assertions on the server's
// log, as lower bounds only (a slow machine only lengthens the gaps).
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fetchDelayMs } from '../../src/frontier/site-scheduler.ts';
import { withSubmissionProfile } from '../../src/config/csx-profile.ts';
import { readConfigFile } from '../../src/config/load.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { spawnServe } from '../support/daemon.ts';
import { freePort } from '../support/ports.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from '../helpers.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { startFixtureSite, type RequestRecord } from '../support/fixture-site.ts';
import { runTrawl } from '../support/trawl-cli.ts';

/** Timer and clock granularity between the two processes. */
const SLACK_MS = 25;

function config(dir: string, name: string, start: string, body: string): string {
  const path = join(dir, `${name}.xml`);
  writeFileSync(path, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="${name}">
    <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
    ${body}
  </DomainSpecification></CrawlerConfig>`);
  return path;
}

const pages = (reqs: readonly RequestRecord[]): RequestRecord[] => reqs.filter((q) => q.path !== '/robots.txt').sort((a, b) => a.startMs - b.startMs);

describe('Heritrix-style politeness', () => {
  it('computes delay_factor × the fetch\'s duration within [min_delay, max_delay]', () => {
    const p = { factor: 4, minMs: 2000, maxMs: 20_000 };
    assert.equal(fetchDelayMs(100, p), 2000);
    assert.equal(fetchDelayMs(1000, p), 4000);
    assert.equal(fetchDelayMs(9000, p), 20_000);
  });

  it('waits delay_factor × the last fetch\'s duration, at least min_delay, after each fetch ends', async () => {
    const ip = '127.0.31.51';
    const site = await startFixtureSite([{
      ip,
      routes: {
        '/': { kind: 'html', body: '<a href="/slow.html">slow</a> <a href="/a.html">a</a> <a href="/b.html">b</a>' },
        '/slow.html': { kind: 'html', body: '<p>slow</p>', delayMs: 400 },
        '/a.html': { kind: 'html', body: '<p>a</p>' },
        '/b.html': { kind: 'html', body: '<p>b</p>' },
      },
    }]);
    const h = site.host(ip);
    const dir = tempDir('trawl-politeness-');
    try {
      const cfg = config(dir, 'factor', h.url('/'), `<attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">4</attrib>
        <section name="trawl_politeness"><attrib name="delay_factor" type="real">2</attrib><attrib name="min_delay" type="real">0.3</attrib><attrib name="max_delay" type="real">5</attrib></section>`);
      const r = await runTrawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', cfg], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      const seen = pages(h.requests);
      assert.deepEqual(seen.map((q) => q.path).sort(), ['/', '/a.html', '/b.html', '/slow.html']);
      for (let i = 1; i < seen.length; i++) {
        const prev = seen[i - 1]!;
        const gap = seen[i]!.startMs - prev.endMs!;
        const want = fetchDelayMs(prev.endMs! - prev.startMs, { factor: 2, minMs: 300, maxMs: 5000 });
        assert.ok(gap >= want - SLACK_MS, `${seen[i]!.path} started ${Math.round(gap)} ms after ${prev.path} ended; at least ${Math.round(want)} ms expected`);
        assert.equal(seen[i]!.concurrentAtStart, 1, 'one fetch at a time, as Heritrix fetches a queue');
      }
      const slow = seen.findIndex((q) => q.path === '/slow.html');
      if (slow < seen.length - 1) assert.ok(seen[slow + 1]!.startMs - seen[slow]!.endMs! >= 800 - SLACK_MS, 'twice the 400 ms the slow page took');
    } finally {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('retries a network failure (http_errors net RETRY:3) with retry_delay between the attempts', async () => {
    const ip = '127.0.31.52';
    let attempts = 0;
    const site = await startFixtureSite([{
      ip,
      routes: {
        '/': { kind: 'html', body: '<a href="/flaky.html">flaky</a>' },
        '/flaky.html': (req, res) => {
          attempts++;
          if (attempts <= 2) {
            req.socket.destroy(); // the connection drops: a network error
            return;
          }
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<p>third time</p>');
        },
      },
    }]);
    const h = site.host(ip);
    const dir = tempDir('trawl-politeness-');
    try {
      const cfg = config(dir, 'retry', h.url('/'), `<attrib name="delay" type="real">0</attrib>
        <section name="http_errors"><attrib name="net" type="string">DELETE:3, RETRY:3</attrib></section>
        <section name="trawl_politeness"><attrib name="retry_delay" type="real">1</attrib></section>`);
      const r = await runTrawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', cfg], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      const tries = h.requests.filter((q) => q.path === '/flaky.html').sort((a, b) => a.startMs - b.startMs);
      assert.equal(tries.length, 3);
      for (let i = 1; i < tries.length; i++) {
        const gap = tries[i]!.startMs - tries[i - 1]!.startMs;
        assert.ok(gap >= 1000 - SLACK_MS, `attempt ${i + 1} came ${Math.round(gap)} ms after attempt ${i}; retry_delay is 1 s`);
      }
      const summary = (JSON.parse(r.out) as { collections: Array<{ stored: number; retries: number }> }).collections[0]!;
      assert.equal(summary.stored, 2, 'stored on the third attempt');
      assert.equal(summary.retries, 2);
    } finally {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--citeseerx applies the User Submission profile where the collection keeps the defaults: politeness, From, the CiteSeerBot token', async () => {
    const ip = '127.0.31.53';
    const site = await startFixtureSite([{
      ip,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: Mozilla\nDisallow: /\n\nUser-agent: CiteSeerBot\nDisallow: /private/\n' },
        '/': { kind: 'html', body: '<a href="/a.html">a</a> <a href="/private/p.html">p</a>' },
        '/a.html': { kind: 'html', body: '<p>a</p>' },
        '/private/p.html': { kind: 'html', body: '<p>p</p>' },
      },
    }]);
    const h = site.host(ip);
    const dir = tempDir('trawl-politeness-');
    try {
      // The document's csx-heritrix.xml, its broker on a loopback address where none listens.
      const csx = join(dir, 'csx-heritrix.xml');
      writeFileSync(csx, readFileSync(join(ROOT, 'test/fixtures/citeseerx/csx-heritrix.xml'), 'utf8').replace('ACTIVEMQ_HOST', '127.0.31.54'));
      const cfg = config(dir, 'profiled', h.url('/'), '');
      const r = await runTrawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--feed-timeout', '5', '--citeseerx', csx, '--repository-root', join(dir, 'repo'), cfg], { timeoutMs: 120_000 });
      // The citeseerx sink keeps only PDFs and hubs: none here, so nothing waits for the broker.
      assert.equal(r.code, 0, r.err);
      assert.ok(r.err.includes('collection profiled: the CiteSeerX User Submission profile applies: headers User-Agent: Mozilla/5.0 (compatible; CiteSeerBot/1.12.1 +http://citeseerx.ist.psu.edu/bot.html), From: citeseerx-bot@ist.psu.edu; delay 0; trawl_politeness delay_factor 4; min_delay 2; max_delay 20; retry_delay 10; http_errors net DELETE:3, RETRY:3'), r.err);
      for (const q of h.requests) {
        assert.equal(q.headers['user-agent'], 'Mozilla/5.0 (compatible; CiteSeerBot/1.12.1 +http://citeseerx.ist.psu.edu/bot.html)', q.path);
        assert.equal(q.headers.from, 'citeseerx-bot@ist.psu.edu', q.path);
      }
      const seen = pages(h.requests);
      assert.deepEqual(seen.map((q) => q.path), ['/', '/a.html'], 'the CiteSeerBot group of robots.txt');
      assert.ok(seen[1]!.startMs - seen[0]!.endMs! >= 2000 - SLACK_MS, 'min_delay 2 s after the start page');
    } finally {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves what a collection sets itself: its delay, User-Agent, politeness and net policy win over the profile', () => {
    const dir = tempDir('trawl-politeness-');
    try {
      const cfg = config(dir, 'own', 'http://127.0.31.56/', `<attrib name="delay" type="real">5</attrib>
        <attrib name="headers" type="list-string"><member>User-Agent: MyBot/2.0</member></attrib>
        <section name="http_errors"><attrib name="net" type="string">KEEP:0</attrib></section>
        <section name="trawl_politeness"><attrib name="delay_factor" type="real">1.5</attrib></section>`);
      const c = readConfigFile(cfg).document.collections[0]!;
      const { config: profiled, applied } = withSubmissionProfile(c);
      assert.deepEqual(applied, ['headers From: citeseerx-bot@ist.psu.edu', 'min_delay 2', 'max_delay 20', 'retry_delay 10']);
      const s = resolveSettings(profiled);
      assert.deepEqual(s.headers, ['User-Agent: MyBot/2.0', 'From: citeseerx-bot@ist.psu.edu']);
      assert.equal(s.delayS, 5);
      assert.equal(s.politeness.delayFactor, 1.5);
      assert.equal(s.httpErrors.net, 'KEEP:0');
      assert.equal(c.root.attribs.has('trawl_politeness'), false, 'the given configuration is not changed');
      assert.equal(resolveSettings(c).politeness.retryDelayS, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('trawl serve --citeseerx crawls the collections it is given with the profile\'s politeness and headers', async () => {
    const ip = '127.0.31.57';
    const site = await startFixtureSite([{
      ip,
      routes: {
        '/': { kind: 'html', body: '<a href="/a.html">a</a>' },
        '/a.html': { kind: 'html', body: '<p>a</p>' },
      },
    }]);
    const h = site.host(ip);
    const dir = tempDir('trawl-politeness-');
    const csx = join(dir, 'csx-heritrix.xml');
    writeFileSync(csx, readFileSync(join(ROOT, 'test/fixtures/citeseerx/csx-heritrix.xml'), 'utf8').replace('ACTIVEMQ_HOST', '127.0.31.58'));
    const port = await freePort('127.0.0.1');
    const daemon = await spawnServe(['--data', join(dir, 'data'), '--port', String(port), '--allow-loopback', '--citeseerx', csx, '--repository-root', join(dir, 'repo')]);
    try {
      const add = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'add', config(dir, 'served', h.url('/'), '')], { timeoutMs: 60_000 });
      assert.equal(add.code, 0, add.err);
      const deadline = Date.now() + 60_000;
      while (pages(h.requests).filter((q) => q.endMs !== undefined).length < 2 && Date.now() < deadline) await sleep(100);
      const seen = pages(h.requests);
      assert.deepEqual(seen.map((q) => q.path), ['/', '/a.html']);
      for (const q of h.requests) assert.equal(q.headers.from, 'citeseerx-bot@ist.psu.edu', q.path);
      assert.ok(seen[1]!.startMs - seen[0]!.endMs! >= 2000 - SLACK_MS, 'min_delay 2 s, not MS-FSCCFG\'s 60 s delay nor none');
    } finally {
      daemon.kill('SIGKILL');
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
