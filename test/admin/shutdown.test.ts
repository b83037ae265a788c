// SIGTERM and SIGINT stop the real `trawl serve` promptly in every state:
// idle, mid-crawl (a site's 60 s delay and a request that never answers
// used to hold the process), and between refresh cycles (a timer that was
// never cleared). The store must be intact after: a restart lists the
// collection and crawls on.
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe } from '../support/daemon.ts';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { freePort } from '../support/ports.ts';

function python(url: string, body: string): unknown {
  const script = `import json, xmlrpc.client\ns = xmlrpc.client.ServerProxy(${JSON.stringify(url)})\n${body}`;
  const r = spawnSync('python3', ['-c', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Sends the signal and resolves with the exit status and the time it took. */
async function stopTimed(child: ChildProcess, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const t0 = Date.now();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig })));
  child.kill(signal);
  // Bounded: a daemon that hangs is killed after 15 s and the test fails on the time.
  const guard = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const r = await exited;
  clearTimeout(guard);
  return { ...r, ms: Date.now() - t0 };
}

const config = (start: string, delayS: number, refreshMin: number): string => `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="web">
  <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
  <attrib name="delay" type="real">${delayS}</attrib><attrib name="refresh" type="real">${refreshMin}</attrib></DomainSpecification></CrawlerConfig>`;

describe('trawl serve stops within 5 s on SIGTERM/SIGINT, and keeps its store', () => {
  let site: FixtureSite;
  const running: ChildProcess[] = [];

  before(async () => {
    site = await startFixtureSite([
      // delay 60 s: after / the loop waits a minute for the next page.
      { ip: '127.0.4.3', routes: { '/': { kind: 'html', body: '<a href="/a.html">a</a> <a href="/b.html">b</a>' }, '/a.html': { kind: 'html', body: '<p>a</p>' }, '/b.html': { kind: 'html', body: '<p>b</p>' } } },
      // A request that is never answered.
      { ip: '127.0.4.4', routes: { '/': { kind: 'html', body: '<a href="/hang">h</a>' }, '/hang': { kind: 'hang' } } },
      // A small site crawled at once; the next cycle is 10 hours away.
      { ip: '127.0.4.5', routes: { '/': { kind: 'html', body: '<p>only page</p>' } } },
    ]);
  });
  after(async () => {
    for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await site?.close();
  });

  async function serve(data: string, port: number): Promise<ChildProcess> {
    const c = await spawnServe(['--data', data, '--port', String(port), '--allow-loopback']);
    running.push(c);
    return c;
  }

  it('idle, with no collection', async () => {
    const data = tempDir('trawl-stop-idle-');
    const port = await freePort();
    const r = await stopTimed(await serve(data, port), 'SIGTERM');
    assert.deepEqual([r.code, r.signal], [0, null]);
    assert.ok(r.ms < 5_000, `exited after ${r.ms} ms`);
  });

  it('mid-crawl, while a site waits out its 60 s delay; a restart crawls on', async () => {
    const data = tempDir('trawl-stop-delay-');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/RPC2`;
    let d = await serve(data, port);
    const h = site.host('127.0.4.3');
    python(url, `print(json.dumps(s.CollectionAdd(${JSON.stringify(config(h.url('/'), 60, 600))}, 0)))`);
    // robots.txt is the site's first request; its first page then waits out the delay.
    await until(() => site.fetchedPaths('127.0.4.3').length > 0, 10_000, 'the first request');
    await new Promise((r) => setTimeout(r, 300));
    const r = await stopTimed(d, 'SIGTERM');
    assert.deepEqual([r.code, r.signal], [0, null]);
    assert.ok(r.ms < 5_000, `exited after ${r.ms} ms`);
    const seen = site.fetchedPaths('127.0.4.3').length;
    assert.equal(seen, 1, `the delay was not kept: ${site.fetchedPaths('127.0.4.3').join(' ')}`);
    // The queue survived: after a restart the crawl goes on (a site's first request does not wait).
    d = await serve(data, port);
    assert.deepEqual(python(url, 'print(json.dumps([s.CollectionGetList(), s.CollectionGetStatus("web")]))'), [['web'], 'crawling']);
    await until(() => site.fetchedPaths('127.0.4.3').length > seen, 10_000, 'the crawl to go on after the restart');
    const r2 = await stopTimed(d, 'SIGINT');
    assert.deepEqual([r2.code, r2.signal], [0, null]);
    assert.ok(r2.ms < 5_000, `exited after ${r2.ms} ms`);
  });

  it('mid-crawl, with a request the server never answers; the URI is fetched again after a restart', async () => {
    const data = tempDir('trawl-stop-hang-');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/RPC2`;
    let d = await serve(data, port);
    const h = site.host('127.0.4.4');
    python(url, `print(json.dumps(s.CollectionAdd(${JSON.stringify(config(h.url('/'), 0, 600))}, 0)))`);
    await until(() => site.fetchedPaths('127.0.4.4').includes('/hang'), 10_000, 'the hanging request');
    const r = await stopTimed(d, 'SIGTERM');
    assert.deepEqual([r.code, r.signal], [0, null]);
    assert.ok(r.ms < 5_000, `exited after ${r.ms} ms`);
    const before = site.fetchedPaths('127.0.4.4').filter((p) => p === '/hang').length;
    d = await serve(data, port);
    await until(() => site.fetchedPaths('127.0.4.4').filter((p) => p === '/hang').length > before, 10_000, 'the in-flight URI to be fetched again');
    const r2 = await stopTimed(d, 'SIGTERM');
    assert.deepEqual([r2.code, r2.signal], [0, null]);
    assert.ok(r2.ms < 5_000, `exited after ${r2.ms} ms`);
  });

  it('between cycles, while the collection waits for its next refresh', async () => {
    const data = tempDir('trawl-stop-refresh-');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/RPC2`;
    let d = await serve(data, port);
    const h = site.host('127.0.4.5');
    python(url, `print(json.dumps(s.CollectionAdd(${JSON.stringify(config(h.url('/'), 0, 600))}, 0)))`);
    // The cycle is over once its statistics say so.
    await until(() => {
      const st = python(url, `print(json.dumps(s.CollectionGetStatistics2('web'), default=str))`) as [number, Record<string, Record<string, unknown>>];
      return st[1].complete?.Stored === 1;
    }, 15_000, 'the first cycle to end');
    const r = await stopTimed(d, 'SIGTERM');
    assert.deepEqual([r.code, r.signal], [0, null]);
    assert.ok(r.ms < 5_000, `exited after ${r.ms} ms`);
    d = await serve(data, port);
    const st = python(url, `print(json.dumps([s.CollectionGetList(), s.CollectionGetStatistics2('web')[1]['complete'].get('Stored')], default=str))`);
    assert.deepEqual(st, [['web'], 1]);
    const r2 = await stopTimed(d, 'SIGINT');
    assert.deepEqual([r2.code, r2.signal], [0, null]);
    assert.ok(r2.ms < 5_000, `exited after ${r2.ms} ms`);
  });
});
