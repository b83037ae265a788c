// Crash safety: the real `trawl crawl` process is killed with SIGKILL at
// random points, at least five times, and restarted with the same command.
// The final crawl store must equal that of an uninterrupted crawl, and the
// servers must see no URL twice except what was in flight at a kill.
// Every test runs on each dialect of the crawl store: SQLite in the data
// directory, and PostgreSQL (`--store postgres://…`, a database of its own on
// a server the file starts; skipped where PostgreSQL is not installed, outside CI).
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { COMMIT_BACKLOG } from '../../src/frontier/site-scheduler.ts';
import type { CrawlStore } from '../../src/store/crawl-store.ts';
import { PostgresCrawlStore } from '../../src/store/postgres/postgres-crawl-store.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import { spawnServe } from '../support/daemon.ts';
import { generatedSite, generatedSiteExpected, startFixtureSite, type HostSpec } from '../support/fixture-site.ts';
import { freePort } from '../support/ports.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { startPostgres, type PostgresServer } from '../support/postgres.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { ROOT } from '../helpers.ts';

const BIN = join(ROOT, 'bin/trawl.js');
const HOSTS = ['127.0.2.1', '127.0.2.2'];
const MAX_PENDING = 2;

/** Deterministic "random" kill points, so a failure can be replayed. */
function* killDelays(seed: number): Generator<number> {
  let x = seed;
  for (;;) {
    x = (x * 1103515245 + 12345) % 2147483648;
    yield 450 + (x % 700);
  }
}

const pgSkip = skipUnless(TOOLS.postgres);
const pgServer: PostgresServer | undefined = pgSkip ? undefined : await startPostgres();
after(async () => {
  await pgServer?.stop();
});

/**
 * Where a crawl keeps its crawl store: the data directory's SQLite file, or
 * a new PostgreSQL database. `args` go to `trawl crawl`; `open` reads what
 * the crawl left (the crawler's process is gone by then).
 */
interface Dialect {
  readonly name: string;
  readonly skip: string | false;
  newStore(data: string): Promise<{ args: string[]; open: () => Promise<CrawlStore> }>;
}
const DIALECTS: Dialect[] = [
  { name: 'SQLite', skip: false, newStore: async (data) => ({ args: [], open: async () => new SqliteCrawlStore(join(data, 'trawl.db')) }) },
  {
    name: 'PostgreSQL',
    skip: pgSkip,
    newStore: async () => {
      const url = await pgServer!.createDatabase();
      return { args: ['--store', url], open: () => PostgresCrawlStore.open(url) };
    },
  },
];

function crawlProcess(data: string, config: string, storeArgs: string[]): { done: Promise<number | null>; kill: (signal?: NodeJS.Signals) => void; stdout: () => string; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, 'crawl', '--data', data, ...storeArgs, '--json', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  return { done: new Promise((resolve) => child.on('exit', (code) => resolve(code))), kill: (signal = 'SIGKILL') => child.kill(signal), stdout: () => out, stderr: () => err };
}

function writeConfig(url: string): string {
  const config = join(tempDir('trawl-crash-cfg-'), 'crash.xml');
  writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="crash">
  <attrib name="start_uris" type="list-string"><member>${url}</member></attrib>
  <attrib name="delay" type="real">0.01</attrib>
  <attrib name="max_pending" type="integer">${MAX_PENDING}</attrib>
  <section name="include_domains"><attrib name="exact" type="list-string">${HOSTS.map((h) => `<member>${h}</member>`).join('')}</attrib></section>
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
</DomainSpecification></CrawlerConfig>`);
  return config;
}

const siteOpts = (pagesPerHost: number) => ({ hosts: HOSTS, pagesPerHost, linksPerPage: 6, seed: 7 });

function slowSite(pagesPerHost: number): HostSpec[] {
  return generatedSite(siteOpts(pagesPerHost)).map((h) => ({
    ...h,
    // A little server time per page so that the crawl lasts a few seconds.
    routes: Object.fromEntries(Object.entries(h.routes).map(([k, v]) => [k, typeof v === 'object' && v.kind === 'html' ? { ...v, delayMs: 20 } : v])),
  }));
}

async function records(open: () => Promise<CrawlStore>) {
  const store = await open();
  try {
    // Depth is left out: with requests in parallel, which of two links reaches a
    // page first varies from run to run, crashes or not.
    return (await store.listRecords('crash')).map((r) => ({ url: r.url, status: r.status, httpStatus: r.httpStatus, checksum: r.checksum, redirectTo: r.redirectTo, errorCount: r.errorCount, skipCode: r.skipCode }));
  } finally {
    await store.close();
  }
}

for (const dialect of DIALECTS) describe(`crash safety (${dialect.name})`, { skip: dialect.skip }, () => {
  it('survives kill -9 at random points: the same crawl store, nothing lost, nothing refetched but what was in flight', async (t) => {
    const site = await startFixtureSite(slowSite(400));
    try {
      const config = writeConfig(site.host(HOSTS[0]!).url('/'));

      // The reference: one uninterrupted crawl.
      const reference = tempDir();
      const refStore = await dialect.newStore(reference);
      const t0 = performance.now();
      assert.equal(await crawlProcess(reference, config, refStore.args).done, 0);
      t.diagnostic(`uninterrupted crawl: ${Math.round(performance.now() - t0)} ms`);
      const expected = await records(refStore.open);
      assert.ok(expected.length > 200, String(expected.length));
      site.reset();

      // The same crawl, killed at random points, resumed each time by running the same command again.
      const data = tempDir();
      const store = await dialect.newStore(data);
      let kills = 0;
      let exit: number | null = null;
      const delays = killDelays(42);
      while (kills < 5) {
        const run = crawlProcess(data, config, store.args);
        const t = setTimeout(run.kill, delays.next().value as number);
        exit = await run.done;
        clearTimeout(t);
        if (exit === 0) break; // finished before the kill
        kills++;
      }
      assert.equal(kills, 5, 'the crawl finished before it could be killed five times: make the site slower');
      const last = crawlProcess(data, config, store.args);
      assert.equal(await last.done, 0, `${last.stdout()}\n${last.stderr()}`);

      // A kill that lands while a URI is fetched alone after the kill before
      // (it was in flight then too) sets that URI aside, as it would a page
      // that crashes the crawler (skip code cr): the same store otherwise.
      const got = await records(store.open);
      const setAside = got.filter((r) => r.skipCode === 'cr').map((r) => r.url);
      assert.ok(setAside.length < kills, `${setAside.length} URIs set aside after ${kills} kills`);
      const requested = (url: string): number => site.requests.filter((r) => `http://${r.host}${r.path}` === url).length;
      // Leased at one kill and fetched (its request perhaps not yet sent) at the next: asked for twice at most.
      for (const url of setAside) assert.ok(requested(url) <= 2, `${url} was requested ${requested(url)} times`);
      assert.deepEqual(got.filter((r) => !setAside.includes(r.url)), expected.filter((r) => !setAside.includes(r.url)));
      t.diagnostic(`${kills} kills; ${site.requests.length} requests; ${setAside.length} URIs set aside`);
      // Nothing refetched but what was in flight: per site and kill, at most
      // max_pending requests and the COMMIT_BACKLOG × max_pending fetched pages waiting for their commit.
      const requests = site.requests.filter((r) => r.method === 'GET');
      const seen = new Map<string, number>();
      for (const r of requests) seen.set(`${r.host}${r.path}`, (seen.get(`${r.host}${r.path}`) ?? 0) + 1);
      const refetched = [...seen.values()].reduce((n, c) => n + (c - 1), 0);
      assert.ok(refetched <= kills * MAX_PENDING * (1 + COMMIT_BACKLOG) * HOSTS.length, `${refetched} refetches after ${kills} kills`);
      // And every URL of the reference crawl was requested (a URI set aside perhaps not).
      const neverAsked = setAside.filter((url) => requested(url) === 0).length;
      assert.equal(seen.size + neverAsked, new Set(expected.map((r) => r.url)).size + HOSTS.length /* robots.txt */);
    } finally {
      await site.close();
    }
  });

  it('keeps the sites\' statistics in the store at most about a second behind the committed pages at a kill -9', async () => {
    const site = await startFixtureSite(slowSite(400));
    try {
      const config = writeConfig(site.host(HOSTS[0]!).url('/'));
      const data = tempDir();
      const at = await dialect.newStore(data);
      const run = crawlProcess(data, config, at.args);
      // Killed 2.5 s after its hundredth request, however long a loaded machine took to start it.
      const started = Date.now();
      let exit: number | null | undefined;
      void run.done.then((code) => (exit = code));
      while (site.requests.length < 100 && exit === undefined && Date.now() - started < 60_000) await sleep(50);
      await sleep(2500);
      run.kill();
      exit = await run.done;
      assert.notEqual(exit, 0, 'the crawl finished before the kill: make the site slower');
      const store = await at.open();
      try {
        const committed = (await store.listRecords('crash')).length;
        let processed = 0;
        for (const { json } of await store.listSiteStats('crash', { limit: 1000 })) processed += (JSON.parse(json) as { continuous: { Processed: number } }).continuous.Processed;
        // Saved once a second: after 2.5 s of crawling, the last save
        // holds well over a quarter of what was committed (none, if the
        // statistics were saved only when a cycle stops).
        assert.ok(committed > 50, `${committed} pages committed before the kill`);
        assert.ok(processed >= committed / 4, `statistics: ${processed} processed, store: ${committed} records`);
      } finally {
        await store.close();
      }
    } finally {
      await site.close();
    }
  });

  it('stops gracefully on SIGINT (Ctrl-C): in-flight URIs go back to the queue, and the next run finishes the cycle', async () => {
    const site = await startFixtureSite(slowSite(150));
    try {
      const config = writeConfig(site.host(HOSTS[0]!).url('/'));
      const data = tempDir();
      const at = await dialect.newStore(data);
      const run = crawlProcess(data, config, at.args);
      // Once the crawl is fetching (its signal handlers are in place by then), however long a loaded machine took to start it.
      const started = Date.now();
      while (site.requests.length < 5 && Date.now() - started < 30_000) await sleep(50);
      await sleep(300);
      run.kill('SIGINT');
      assert.equal(await run.done, 0);
      const first = JSON.parse(run.stdout()) as { collections: Array<{ complete: boolean; stoppedBy: string; requests: number; queued: number }> };
      assert.equal(first.collections[0]!.stoppedBy, 'signal');
      assert.equal(first.collections[0]!.complete, false);
      assert.ok(first.collections[0]!.requests > 0 && first.collections[0]!.queued > 0, JSON.stringify(first));
      // Nothing is left leased: a graceful stop returned the in-flight URIs.
      const store = await at.open();
      assert.equal((await store.counts('crash')).leased, 0);
      await store.close();
      const again = crawlProcess(data, config, at.args);
      assert.equal(await again.done, 0);
      const second = JSON.parse(again.stdout()) as { collections: Array<{ complete: boolean; resumed: boolean }> };
      assert.equal(second.collections[0]!.complete, true);
      assert.equal(second.collections[0]!.resumed, true);
      const seen = new Map<string, number>();
      for (const r of site.requests) seen.set(`${r.host}${r.path}`, (seen.get(`${r.host}${r.path}`) ?? 0) + 1);
      const refetched = [...seen.values()].reduce((n, c) => n + (c - 1), 0);
      assert.ok(refetched <= MAX_PENDING * HOSTS.length, `${refetched} refetches after one interrupt`);
    } finally {
      await site.close();
    }
  });
  it('trawl serve killed with -9 mid-crawl: the daemon started again resumes the collection from the store, every page fetched once but what was in flight', async (t) => {
    const pages = 150;
    const site = await startFixtureSite(slowSite(pages));
    let daemon: ChildProcess | undefined;
    try {
      const config = writeConfig(site.host(HOSTS[0]!).url('/'));
      const data = tempDir();
      const at = await dialect.newStore(data);
      const port = await freePort();
      const args = ['--data', data, ...at.args, '--port', String(port), '--allow-loopback'];
      daemon = await spawnServe(args);
      const added = spawnSync(process.execPath, [BIN, 'admin', '--server', `http://127.0.0.1:${port}`, 'add', config], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(added.status, 0, added.stderr);
      const expected = generatedSiteExpected(siteOpts(pages));
      const fetchedAll = (): boolean => HOSTS.every((ip) => expected[ip]!.every((p) => site.fetchedPaths(ip).includes(p)));
      const waitFor = async (check: () => boolean, what: string): Promise<void> => {
        const end = Date.now() + 120_000;
        while (!check()) {
          assert.ok(Date.now() < end, `timed out waiting for ${what}`);
          await sleep(100);
        }
      };
      await waitFor(() => site.requests.length >= 60, '60 requests');
      assert.ok(!fetchedAll(), 'the crawl finished before the kill: make the site slower');
      daemon.kill('SIGKILL');
      await once(daemon, 'exit');
      const atKill = site.requests.length;
      daemon = await spawnServe(args);
      await waitFor(fetchedAll, 'every page of the site');
      // Resumed, not started over: the second daemon did not fetch the whole site again.
      const again = site.requests.length - atKill;
      assert.ok(again < HOSTS.length * (pages + 2), `${again} requests after the restart`);
      // Nothing fetched twice but what was in flight at the kill (per site: max_pending, and the fetched pages waiting for their commit).
      const seen = new Map<string, number>();
      for (const r of site.requests.filter((q) => q.method === 'GET')) seen.set(`${r.host}${r.path}`, (seen.get(`${r.host}${r.path}`) ?? 0) + 1);
      const refetched = [...seen.values()].reduce((n, c) => n + (c - 1), 0);
      assert.ok(refetched <= MAX_PENDING * (1 + COMMIT_BACKLOG) * HOSTS.length, `${refetched} refetches after one kill`);
      t.diagnostic(`${atKill} requests before the kill, ${again} after; ${refetched} refetched`);
    } finally {
      if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
        daemon.kill('SIGTERM');
        await once(daemon, 'exit');
      }
      await site.close();
    }
  });
});
