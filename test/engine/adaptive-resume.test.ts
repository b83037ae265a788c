// refresh_mode adaptive outside a single uninterrupted `trawl crawl`: in the
// real daemon (`trawl serve`), whose cycles follow `refresh` and whose minor
// cycles follow refresh / refresh_count, and across a `trawl crawl` killed
// with SIGKILL in the middle of a minor cycle and run again. Asserted from
// the fixture site's own request log, the scheduler log and the crawl store.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import { MINOR_CYCLE_KEY } from '../../src/engine/adaptive-refresh.ts';
import { startFixtureSite, type FixtureSite, type HostSpec } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe } from '../support/daemon.ts';
import { freePort, until } from '../support/ports.ts';
import { readCrawlLog, type LogLine } from '../support/crawl-log.ts';
import { runTrawl, TRAWL_CLI } from '../support/trawl-cli.ts';

const PAGES = Array.from({ length: 12 }, (_, i) => `/p${i}.html`);

function routesOf(): HostSpec['routes'] {
  const routes: HostSpec['routes'] = {
    '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
    '/': { kind: 'html', body: `<h1>index</h1>${PAGES.map((p) => `<a href="${p}">${p}</a>`).join(' ')}` },
  };
  for (const p of PAGES) routes[p] = { kind: 'html', body: `<p>${p}</p><a href="/">home</a>` };
  return routes;
}

function configXml(name: string, start: string, ip: string, refreshMin: string, delay: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="${name}">
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
  <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
  <section name="include_domains"><attrib name="exact" type="list-string"><member>${ip}</member></attrib></section>
  <attrib name="delay" type="real">${delay}</attrib>
  <attrib name="max_pending" type="integer">1</attrib>
  <attrib name="refresh" type="real">${refreshMin}</attrib>
  <attrib name="refresh_mode" type="string">adaptive</attrib>
  <section name="adaptive"><attrib name="refresh_count" type="integer">3</attrib><attrib name="coverage_min" type="integer">4</attrib>
    <attrib name="coverage_max_pct" type="integer">0</attrib><attrib name="refresh_quota" type="integer">100</attrib></section>
  <section name="log"><attrib name="scheduler" type="string">text</attrib></section>
</DomainSpecification></CrawlerConfig>`;
}

describe('refresh_mode adaptive in trawl serve', () => {
  const ip = '127.0.33.41';
  let site: FixtureSite | undefined;
  let daemon: ChildProcess | undefined;
  const data = tempDir('trawl-adaptive-serve-');
  after(async () => {
    daemon?.kill('SIGKILL');
    await site?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('runs the minor cycles at refresh / refresh_count and logs each decision (log.scheduler)', async () => {
    site = await startFixtureSite([{ ip, routes: routesOf() }]);
    const port = await freePort();
    daemon = await spawnServe(['--data', data, '--port', String(port), '--allow-loopback']);
    const xml = join(data, 'adapt.xml');
    // A refresh cycle of 9 s in 3 minor cycles of 3 s; 4 re-crawls in each.
    writeFileSync(xml, configXml('adapt', site.host(ip).url('/'), ip, '0.15', '0.05'));
    const add = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'add', xml], { timeoutMs: 30_000 });
    assert.equal(add.code, 0, add.err);
    const logFile = join(data, 'logs', 'collections', 'adapt.log');
    const scheduler = (): LogLine[] => readCrawlLog(logFile).filter((l) => l.event === 'scheduler');
    // Cycle 2 is the first with budgets (cycle 1 discovers the site); wait until its last minor cycle is summed up
    // (the summary comes when cycle 3's first minor cycle begins).
    await until('minor cycle 1/3 of cycle 3', () => scheduler().some((l) => /^minor cycle 1\/3 of cycle 3 begins/.test(l.msg)), 120_000);
    const log = scheduler();
    for (const k of [1, 2, 3]) {
      assert.ok(log.some((l) => l.msg.startsWith(`minor cycle ${k}/3 of cycle 2 begins: 1 sites with known URIs`)), `no start of minor cycle ${k}/3 of cycle 2`);
      assert.ok(log.some((l) => new RegExp(`^minor cycle ${k}/3 of cycle 2: http://${ip.replace(/\./g, '\\.')}:\\d+: 13 known URIs; budget 4 \\(coverage_min 4`).test(l.msg)), `no budget line in minor cycle ${k}/3 of cycle 2`);
    }
    // Each minor cycle of cycle 2 names the 4 URIs it took, and the summaries say they were fetched.
    const taken = log.filter((l) => /^minor cycle \d\/3 of cycle 2: re-crawl #\d+ \(score /.test(l.msg)).map((l) => new URL(l.url!).pathname);
    assert.equal(taken.length, 12, taken.join(' '));
    const summaries = log.filter((l) => /^minor cycle summary: .*: 4 of 4 re-crawls fetched/.test(l.msg));
    assert.ok(summaries.length >= 3, log.map((l) => l.msg).filter((m) => m.startsWith('minor cycle summary')).join('\n'));
    // The server saw those re-crawls in cycle 2, and no other page: cycle 2 ran from its first minor cycle's start
    // to cycle 3's.
    const t = (re: RegExp): number => Date.parse(log.find((l) => re.test(l.msg))!.time);
    const from = t(/^minor cycle 1\/3 of cycle 2 begins/);
    const to = t(/^minor cycle 1\/3 of cycle 3 begins/);
    const fetched = site.requests.filter((r) => r.path !== '/robots.txt' && r.startMs >= from && r.startMs < to).map((r) => r.path);
    assert.deepEqual([...fetched].sort(), [...taken].sort());
    // The 12 re-crawls went round the 13 known URIs: none twice in the cycle (nothing changes, and a copy just
    // fetched has no age).
    assert.equal(new Set(fetched).size, 12, fetched.join(' '));
  });
});

describe('refresh_mode adaptive: a trawl crawl killed in a minor cycle resumes it', () => {
  const ip = '127.0.33.42';
  let site: FixtureSite | undefined;
  const dir = tempDir('trawl-adaptive-resume-');
  after(async () => {
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('goes on with the same minor cycle; the URIs it took and had not fetched are fetched, none lost, none twice', async () => {
    site = await startFixtureSite([{ ip, routes: routesOf() }]);
    const data = join(dir, 'data');
    mkdirSync(data, { recursive: true });
    const file = join(dir, 'adapt.xml');
    // refresh 0: each minor cycle begins once the one before is done; 0.4 s between requests, so that a minor
    // cycle of 4 re-crawls lasts over a second.
    writeFileSync(file, configXml('adapt', site.host(ip).url('/'), ip, '0', '0.4'));
    const first = await runTrawl(['crawl', '--data', data, '--json', file], { timeoutMs: 90_000 });
    assert.equal(first.code, 0, first.err);
    const logFile = join(data, 'logs', 'crawl.log');
    const scheduler = (): LogLine[] => readCrawlLog(logFile).filter((l) => l.event === 'scheduler');
    const pageFetches = (fromMs: number): string[] => site!.requests.filter((r) => r.path !== '/robots.txt' && r.startMs >= fromMs).map((r) => r.path);

    // Cycle 2, killed once minor cycle 2/3 has fetched one of its re-crawls.
    const child = spawn(process.execPath, [TRAWL_CLI, 'crawl', '--data', data, '--json', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let minor2Ms = 0;
    try {
      await until('minor cycle 2/3 of cycle 2 fetching', () => {
        const start = scheduler().find((l) => l.msg.startsWith('minor cycle 2/3 of cycle 2 begins'));
        if (start) minor2Ms = Date.parse(start.time);
        return start !== undefined && pageFetches(minor2Ms).length >= 1;
      }, 90_000);
    } finally {
      child.kill('SIGKILL');
    }
    assert.equal(await exited, null, err);
    const log1 = scheduler();
    const takenBy = (label: string): string[] => log1.filter((l) => l.msg.startsWith(`${label}: re-crawl #`)).map((l) => new URL(l.url!).pathname);
    const taken2 = takenBy('minor cycle 2/3 of cycle 2');
    assert.equal(taken2.length, 4, log1.map((l) => l.msg).join('\n'));
    const fetchedBeforeKill = pageFetches(minor2Ms);
    assert.ok(fetchedBeforeKill.length < 4, `the minor cycle was over before the kill: ${fetchedBeforeKill.join(' ')}`);
    // What the crashed run wrote: the minor cycle under way.
    const store = new SqliteCrawlStore(join(data, 'trawl.db'));
    try {
      const row = (await store.listChangeHistory('adapt')).find((r) => r.url === MINOR_CYCLE_KEY);
      assert.deepEqual([row?.checks, row?.changes], [2, 1]);
    } finally {
      await store.close();
    }

    const killedAt = Date.now();
    const again = await runTrawl(['crawl', '--data', data, '--json', file], { timeoutMs: 90_000 });
    assert.equal(again.code, 0, again.err);
    const out = JSON.parse(again.out) as { collections: Array<{ epoch: number; complete: boolean }> };
    assert.deepEqual(out.collections.map((c) => [c.epoch, c.complete]), [[2, true]]);
    const log2 = scheduler().filter((l) => Date.parse(l.time) >= killedAt);
    // The same minor cycle goes on (it does not begin the cycle's minor cycles again), then the last one.
    assert.ok(log2.some((l) => l.msg.startsWith('minor cycle 2/3 of cycle 2 resumes after a restart')), log2.map((l) => l.msg).join('\n'));
    assert.ok(!log2.some((l) => l.msg.startsWith('minor cycle 1/3 of cycle 2 begins')), log2.map((l) => l.msg).join('\n'));
    assert.equal(log2.filter((l) => l.msg.startsWith('minor cycle 3/3 of cycle 2 begins')).length, 1, log2.map((l) => l.msg).join('\n'));
    // Every re-crawl minor cycle 2 took was fetched: before the kill, or after the restart before minor cycle 3 began.
    const minor3Ms = Date.parse(log2.find((l) => l.msg.startsWith('minor cycle 3/3 of cycle 2 begins'))!.time);
    const afterRestart = site.requests.filter((r) => r.path !== '/robots.txt' && r.startMs >= killedAt && r.startMs < minor3Ms).map((r) => r.path);
    assert.deepEqual([...new Set([...fetchedBeforeKill, ...afterRestart])].sort(), [...taken2].sort(), `before the kill ${fetchedBeforeKill.join(' ')}; after ${afterRestart.join(' ')}`);
    // Only what was in flight at the kill is fetched twice.
    assert.ok(afterRestart.filter((p) => fetchedBeforeKill.includes(p)).length <= 1, `${fetchedBeforeKill.join(' ')} | ${afterRestart.join(' ')}`);
    // Over the whole cycle, the three minor cycles' re-crawls (4 each) reach 12 of the 13 known URIs, each once
    // but for the one in flight at the kill.
    const cycle2 = pageFetches(Date.parse(log1.find((l) => l.msg.startsWith('minor cycle 1/3 of cycle 2 begins'))!.time));
    assert.ok(cycle2.length >= 12 && cycle2.length <= 13, cycle2.join(' '));
    assert.ok(new Set(cycle2).size >= 12, cycle2.join(' '));
  });
});
