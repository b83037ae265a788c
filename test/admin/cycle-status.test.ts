// The cycle's ID and Elastic crawl status as an operator reads them from the
// real daemon (`trawl admin status`, trawl.CollectionGetStatus): a suspend
// cancels the running cycle, the status survives a restart of the daemon, and
// a resume carries on with the same cycle to success.
import assert from 'node:assert/strict';
import { type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite, type HostSpec } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe } from '../support/daemon.ts';
import { runTrawl } from '../support/trawl-cli.ts';
import { freePort } from '../support/ports.ts';

const IP = '127.0.133.31';
/** Half a second apart: the crawl runs about 8 s, long after the suspend below, even on a loaded machine. */
const PAGES = 16;

async function until(check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the cycle status through trawl admin', () => {
  let site: FixtureSite;
  let daemon: ChildProcess | undefined;
  const data = tempDir('trawl-cycle-status-');
  after(async () => {
    daemon?.kill('SIGKILL');
    await site?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('suspend: canceled; a restart keeps it; resume: the same cycle goes on to success', async () => {
    const routes: HostSpec['routes'] = {
      '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
      '/': { kind: 'html', body: Array.from({ length: PAGES }, (_, i) => `<a href="/p${i}.html">p${i}</a>`).join(' ') },
    };
    for (let i = 0; i < PAGES; i++) routes[`/p${i}.html`] = { kind: 'html', body: `<p>page ${i}</p>` };
    site = await startFixtureSite([{ ip: IP, routes }]);
    let port = await freePort();
    daemon = await spawnServe(['--data', data, '--port', String(port), '--allow-loopback']);
    const admin = (...args: string[]) => runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, ...args], { timeoutMs: 30_000 });
    const status = async (): Promise<Record<string, unknown>> => {
      const r = await admin('--json', 'status', 'web');
      assert.equal(r.code, 0, r.err);
      return JSON.parse(r.out) as Record<string, unknown>;
    };
    const xml = join(data, 'web.xml');
    writeFileSync(xml, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="web">
      <attrib name="start_uris" type="list-string"><member>${site.host(IP).url('/')}</member></attrib>
      <attrib name="delay" type="real">0.5</attrib><attrib name="refresh" type="real">600</attrib>
      <section name="include_domains"><attrib name="exact" type="list-string"><member>${IP}</member></attrib></section>
    </DomainSpecification></CrawlerConfig>`);
    assert.equal((await admin('add', xml)).code, 0);
    // The server's log says when the cycle fetches (a status poll could miss a state that short).
    await until(() => site.fetchedPaths(IP).length >= 3);
    assert.equal((await admin('suspend', 'web')).code, 0);
    await until(async () => (await status()).cycleStatus === 'canceled');
    const canceled = await status();
    const id = canceled.cycleId as string;
    assert.match(id, /^[0-9a-f]{24}$/);
    assert.deepEqual([canceled.activity, canceled.cycleId, canceled.cycleEpoch, canceled.cycleStoppedBy], ['suspended', id, 1, 'signal']);
    const fetchedBefore = site.fetchedPaths(IP).filter((p) => p.startsWith('/p')).length;
    assert.ok(fetchedBefore < PAGES, String(fetchedBefore));

    daemon.kill('SIGTERM');
    await once(daemon, 'exit');
    port = await freePort();
    daemon = await spawnServe(['--data', data, '--port', String(port), '--allow-loopback']);
    const human = await admin('status', 'web');
    assert.equal(human.code, 0, human.err);
    assert.equal(human.out.trim().split('\n')[1], `cycle 1 ${id}: canceled (signal)`);

    assert.equal((await admin('resume', 'web')).code, 0);
    await until(async () => (await status()).cycleStatus === 'success');
    const done = await status();
    assert.deepEqual([done.cycleId, done.cycleEpoch, done.cycleStoppedBy], [id, 1, 'done']);
    assert.deepEqual([...new Set(site.fetchedPaths(IP).filter((p) => p.startsWith('/p')))].sort(), Array.from({ length: PAGES }, (_, i) => `/p${i}.html`).sort());
  });
});
