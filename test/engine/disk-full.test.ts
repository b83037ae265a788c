// A full disk, for real: the data directory lives on an 8 MiB tmpfs, a
// ballast file leaves about a megabyte free, and `trawl crawl` (the real
// process) crawls a loopback site larger than that. The crawl must pause
// with one clear message naming the data directory and its free space, and
// finish by itself once the ballast is deleted: every page fetched, the
// crawl store intact, the event log still holding the lines written before.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { startFixtureSite, type HostSpec } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { ROOT } from '../helpers.ts';

const BIN = join(ROOT, 'bin/trawl.js');
const HOST = '127.0.4.1';
const PAGES = 120;
/** Per page: base64 of random bytes, which zstd cannot shrink much, so the pages together outgrow the free space. */
const PAGE_TEXT_BYTES = 24 * 1024;
const FS_BYTES = 8 * 1024 * 1024;
/** What the ballast leaves free once the first run has written its share. */
const LEFT_FREE_BYTES = 1024 * 1024;
const TEST_TIMEOUT_MS = 60_000;

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const inCi = process.env.CI === 'true';
const skip = !isRoot && !inCi ? 'needs root to mount a small tmpfs (set CI=true to make this a failure instead)' : false;

function site(): HostSpec[] {
  const routes: HostSpec['routes'] = {
    '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
    '/': { kind: 'html', body: `<html><body>${Array.from({ length: PAGES }, (_, i) => `<a href="/p${i}">p${i}</a>`).join(' ')}</body></html>` },
  };
  for (let i = 0; i < PAGES; i++) {
    routes[`/p${i}`] = { kind: 'html', body: `<html><body><a href="/">home</a><p>${randomBytes((PAGE_TEXT_BYTES * 3) / 4).toString('base64')}</p></body></html>` };
  }
  return [{ ip: HOST, routes }];
}

function writeConfig(url: string): string {
  const config = join(tempDir('trawl-diskfull-cfg-'), 'diskfull.xml');
  writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="diskfull">
  <attrib name="start_uris" type="list-string"><member>${url}</member></attrib>
  <attrib name="delay" type="real">0</attrib>
  <attrib name="max_pending" type="integer">4</attrib>
  <section name="include_domains"><attrib name="exact" type="list-string"><member>${HOST}</member></attrib></section>
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
</DomainSpecification></CrawlerConfig>`);
  return config;
}

interface Run {
  readonly done: Promise<number | null>;
  stderr(): string;
  stdout(): string;
  kill(): void;
}

function crawl(data: string, config: string, extra: string[] = []): Run {
  const child = spawn(process.execPath, [BIN, 'crawl', '--data', data, '--json', ...extra, config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return { done: new Promise((resolve) => child.on('exit', (code) => resolve(code))), stderr: () => err, stdout: () => out, kill: () => child.kill('SIGKILL') };
}

/** Waits until `cond` holds, polling every 50 ms, at most `ms`. */
async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A file of `bytes` random bytes (tmpfs would hold zeros in the page cache all the same, but random says what is meant). */
function writeBallast(path: string, bytes: number): void {
  const fd = openSync(path, 'w');
  try {
    const block = randomBytes(64 * 1024);
    for (let left = bytes; left > 0; left -= block.length) writeSync(fd, block, 0, Math.min(left, block.length));
  } finally {
    closeSync(fd);
  }
}

describe('a full disk', { skip }, () => {
  it('pauses trawl crawl with one message naming the data directory and its free space, and finishes once space is freed', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const mnt = tempDir('trawl-diskfull-mnt-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${FS_BYTES}`, 'tmpfs', mnt]);
    const fixture = await startFixtureSite(site());
    const runs: Run[] = [];
    try {
      const data = join(mnt, 'data');
      mkdirSync(data);
      const config = writeConfig(fixture.host(HOST).url('/'));

      // A first run writes the event log's earlier lines (and some pages).
      const first = crawl(data, config, ['--max-pages', '5']);
      runs.push(first);
      assert.equal(await first.done, 0, first.stderr());
      const logPath = join(data, 'logs', 'crawl.log');
      const earlierLog = readFileSync(logPath, 'utf8');
      assert.ok(earlierLog.split('\n').length > 5, `the first run logged its fetches:\n${earlierLog}`);

      // The ballast takes all but about LEFT_FREE_BYTES.
      const s = statfsSync(mnt);
      const ballast = join(mnt, 'ballast');
      writeBallast(ballast, s.bavail * s.bsize - LEFT_FREE_BYTES);
      t.diagnostic(`free before the second run: ${statfsSync(mnt).bavail * s.bsize} bytes`);

      const second = crawl(data, config);
      runs.push(second);
      let exited: number | null | undefined;
      void second.done.then((c) => (exited = c));
      await until(() => /disk full/.test(second.stderr()) || exited !== undefined, 40_000, 'the disk-full message');
      assert.equal(exited, undefined, `the crawl did not wait for space (exit ${exited}):\n${second.stderr()}`);
      const message = second.stderr().split('\n').find((l) => l.includes('disk full'))!;
      assert.ok(message.includes(`the data directory ${data} has `), message);
      assert.match(message, /has \d+(\.\d)? (B|KiB|MiB) free of \d+(\.\d)? MiB/, message);
      assert.match(message, /Fetching is paused/, message);
      const requestsWhenFull = fixture.fetchedPaths(HOST).length;
      t.diagnostic(`${requestsWhenFull} requests when the disk filled: ${message}`);
      assert.ok(fixture.fetchedPaths(HOST).filter((p) => p.startsWith('/p')).length < PAGES, 'the disk filled before every page was fetched');

      // Paused: no new requests while the disk stays full (two poll periods).
      await new Promise((r) => setTimeout(r, 1500));
      const whilePaused = fixture.fetchedPaths(HOST).length;
      await new Promise((r) => setTimeout(r, 5000));
      assert.equal(fixture.fetchedPaths(HOST).length, whilePaused, 'no fetch starts while the disk is full');
      assert.equal(exited, undefined, second.stderr());

      rmSync(ballast);
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([second.done, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 30_000)))]);
      clearTimeout(timer);
      assert.equal(code, 0, second.stderr());
      const err = second.stderr();
      assert.doesNotMatch(err, /TRAWL_ERR_INTERNAL|internal error/, err);
      assert.equal(err.split('\n').filter((l) => /disk full \(/.test(l)).length, 1, `one message for the full disk:\n${err}`);
      assert.match(err, /disk space is back/, err);
      const summary = JSON.parse(second.stdout()) as { collections: Array<{ complete: boolean; errors: number }> };
      assert.equal(summary.collections[0]!.complete, true, second.stdout());
      assert.equal(summary.collections[0]!.errors, 0, second.stdout());

      // Every page was fetched (some twice: those whose write failed).
      const fetched = new Set(fixture.fetchedPaths(HOST));
      for (let i = 0; i < PAGES; i++) assert.ok(fetched.has(`/p${i}`), `/p${i} was never fetched`);

      const db = new DatabaseSync(join(data, 'trawl.db'));
      try {
        assert.deepEqual(db.prepare('PRAGMA integrity_check').all().map((r) => ({ ...r })), [{ integrity_check: 'ok' }]);
        const stored = db.prepare("SELECT count(*) AS n FROM records WHERE collection = 'diskfull' AND status = 'stored'").get() as { n: number };
        assert.equal(Number(stored.n), PAGES + 1, 'every page and the index are stored once');
        const left = db.prepare("SELECT count(*) AS n FROM frontier WHERE collection = 'diskfull' AND state <> 2").get() as { n: number };
        assert.equal(Number(left.n), 0, 'nothing left queued or leased');
      } finally {
        db.close();
      }

      const log = readFileSync(logPath, 'utf8');
      assert.ok(log.startsWith(earlierLog), 'the event log keeps its earlier lines');
      const lines = log.trimEnd().split('\n');
      for (const l of lines) JSON.parse(l); // every line whole
      assert.ok(lines.some((l) => l.includes('"event":"disk"')), 'the log tells of the full disk once it can be written');
    } finally {
      for (const r of runs) r.kill();
      await fixture.close();
      execFileSync('umount', [mnt]);
      rmSync(mnt, { recursive: true, force: true });
    }
  });
});

describe('a full disk under the crawl store', { skip }, () => {
  it('rejects the storage thread\'s writes with TRAWL_ERR_DISK_FULL (SQLITE_FULL), and the store works again once space is freed', { timeout: TEST_TIMEOUT_MS }, async () => {
    const mnt = tempDir('trawl-diskfull-db-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt]);
    try {
      const { openThreadedCrawlStore } = await import('../../src/store/storage-client.ts');
      const path = join(mnt, 'trawl.db');
      const store = await openThreadedCrawlStore(path);
      let closed = false;
      try {
        await store.putCollection('c', '<x/>', 1);
        await store.enqueue('c', 1, [{ url: 'http://127.0.0.1/first', site: 'http://127.0.0.1', depth: 0, hops: 0, redirects: 0, parent: undefined, priority: 1, sub: undefined }]);
        // The ballast leaves 256 KiB; then batches of long URLs fill it (bounded: 2 MiB cannot take 200 batches of 200 KiB).
        const s = statfsSync(mnt);
        writeBallast(join(mnt, 'ballast'), s.bavail * s.bsize - 256 * 1024);
        let failure: unknown;
        for (let batch = 0; batch < 200 && failure === undefined; batch++) {
          const uris = Array.from({ length: 100 }, (_, i) => ({ url: `http://127.0.0.1/${batch}/${i}/${'x'.repeat(2000)}`, site: 'http://127.0.0.1', depth: 1, hops: 1, redirects: 0, parent: undefined, priority: 1, sub: undefined }));
          await store.enqueue('c', 1, uris).catch((err: unknown) => (failure = err));
        }
        assert.ok(failure !== undefined, 'the store filled the disk');
        const e = failure as { code?: string; message: string };
        assert.equal(e.code, 'TRAWL_ERR_DISK_FULL', e.message);
        assert.match(e.message, new RegExp(`cannot write the crawl store ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*SQLITE_FULL`));
        rmSync(join(mnt, 'ballast'));
        // The same connection goes on: what was committed is there, and it takes writes again.
        const [leased] = await store.lease('c', 'http://127.0.0.1', 1);
        assert.equal(leased!.url, 'http://127.0.0.1/first');
        await store.complete('c', 1, { leaseId: leased!.id, site: 'http://127.0.0.1', discovered: [] });
        await store.close();
        closed = true;
      } finally {
        if (!closed) await store.close().catch(() => undefined);
      }
      const db = new DatabaseSync(path);
      try {
        assert.deepEqual(db.prepare('PRAGMA integrity_check').all().map((r) => ({ ...r })), [{ integrity_check: 'ok' }]);
      } finally {
        db.close();
      }
    } finally {
      execFileSync('umount', [mnt]);
      rmSync(mnt, { recursive: true, force: true });
    }
  });
});

// The guard's own state machine needs no root.
describe('DiskGuard', () => {
  it('enters refresh-only below limits.disk_free and leaves it only at disk_free + disk_free_slack', async () => {
    const { DiskGuard } = await import('../../src/engine/disk-guard.ts');
    let free = 50;
    const changes: string[] = [];
    const g = new DiskGuard({
      dir: '/data', minFreePct: 10, slackPct: 3, pollMs: 1_000_000,
      space: async () => ({ freeBytes: free * 1024 * 1024, totalBytes: 100 * 1024 * 1024 }),
      onChange: (state, message) => changes.push(`${state}: ${message}`),
    });
    await g.check();
    assert.equal(g.refreshOnly, false);
    free = 9;
    await g.check();
    assert.equal(g.refreshOnly, true);
    assert.match(changes.at(-1)!, /^low: .*\/data is 9\.0% .*below limits\.disk_free 10%.*Refreshing\(limit=disk_free\).*until 13%/);
    free = 12;
    await g.check();
    assert.equal(g.refreshOnly, true, 'inside the slack: still refresh-only');
    free = 13;
    await g.check();
    assert.equal(g.refreshOnly, false);
    assert.match(changes.at(-1)!, /^ok: .*back to 13\.0%/);
    assert.equal(changes.length, 2);
  });

  it('pauses on ENOSPC, EDQUOT and SQLITE_FULL only, and resumes once a megabyte more is free than when it filled', async () => {
    const { DiskGuard } = await import('../../src/engine/disk-guard.ts');
    const { TrawlError } = await import('../../src/core/errors.ts');
    let freeBytes = 4096;
    const changes: string[] = [];
    const g = new DiskGuard({
      dir: '/data', minFreePct: 0, slackPct: 3, pollMs: 20,
      space: async () => ({ freeBytes, totalBytes: 8 * 1024 * 1024 }),
      onChange: (state, message) => changes.push(`${state}: ${message}`),
    });
    assert.equal(g.noteFailure(new Error('EACCES'), 'x'), false);
    assert.equal(g.noteFailure(Object.assign(new Error('boom'), { code: 'EACCES' }), 'x'), false);
    assert.equal(g.paused, false);
    const enospc = new TrawlError('TRAWL_ERR_DISK_FULL', 'cannot write /data/content: ENOSPC', { cause: Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }) });
    assert.equal(g.noteFailure(enospc, 'while crawling http://127.0.0.1'), true);
    assert.equal(g.noteFailure(Object.assign(new Error('database or disk is full'), { errcode: 13 }), 'y'), true);
    assert.equal(g.paused, true);
    await g.check();
    assert.equal(changes.length, 1, 'one message however many writes fail');
    assert.match(changes[0]!, /^full: disk full \(ENOSPC\) while crawling http:\/\/127\.0\.0\.1: the data directory \/data has 4\.0 KiB free of 8\.0 MiB\. Fetching is paused/);
    const ac = new AbortController();
    const waiting = g.waitForSpace(ac.signal);
    freeBytes = 4096 + 512 * 1024;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(g.paused, true, 'half a megabyte more is not enough');
    freeBytes = 4096 + 1024 * 1024;
    await waiting;
    assert.equal(g.paused, false);
    assert.match(changes.at(-1)!, /^ok: disk space is back \(the data directory \/data has 1\.0 MiB free\): fetching resumes/);
    g.stop();
  });
});
