// When the daemon crawls again (MS-FSCCFG 2.2.3): a sub-collection's own,
// shorter `refresh` fetches its URIs again before the collection's next
// cycle; `refresh_when_idle` starts the next cycle as soon as the crawl is
// idle. The real daemon against loopback sites; read from the servers' logs.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { daemonTestParts, spawnServe } from '../support/daemon.ts';
import { runTrawl } from '../support/trawl-cli.ts';
import { freePort } from '../support/ports.ts';

async function until(check: () => boolean | Promise<boolean>, ms = 40_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

const count = (paths: readonly string[], p: string): number => paths.filter((x) => x === p).length;

describe('refresh timing in the daemon', () => {
  const { daemons, sites, dirs } = daemonTestParts();

  async function serve(ip: string, body: (origin: string) => string): Promise<{ site: FixtureSite; port: number }> {
    const site = await startFixtureSite([{
      ip,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
        '/': { kind: 'html', body: '<a href="/sub/s.html">s</a> <a href="/m.html">m</a>' },
        '/sub/s.html': { kind: 'html', body: '<p>in the sub-collection</p>' },
        '/m.html': { kind: 'html', body: '<p>in the collection</p>' },
      },
    }]);
    sites.push(site);
    const data = tempDir('trawl-refresh-');
    dirs.push(data);
    const port = await freePort();
    daemons.push(await spawnServe(['--data', data, '--port', String(port), '--allow-loopback']));
    const xml = join(data, 'web.xml');
    writeFileSync(xml, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="web">
      <attrib name="start_uris" type="list-string"><member>${site.host(ip).url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib>
      <section name="include_domains"><attrib name="exact" type="list-string"><member>${ip}</member></attrib></section>
      ${body(site.host(ip).url('/').replace(/\/$/, ''))}
    </DomainSpecification></CrawlerConfig>`);
    const add = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'add', xml], { timeoutMs: 30_000 });
    assert.equal(add.code, 0, add.err);
    return { site, port };
  }

  it('a sub-collection with refresh 0.05 min is fetched again every 3 s while the collection waits 600 min', async () => {
    const ip = '127.0.133.61';
    const { site } = await serve(ip, (origin) => `<attrib name="refresh" type="real">600</attrib>
      <SubDomain name="fast"><section name="include_uris"><attrib name="prefix" type="list-string"><member>${origin}/sub/</member></attrib></section>
        <attrib name="refresh" type="real">0.05</attrib></SubDomain>`);
    await until(() => count(site.fetchedPaths(ip), '/sub/s.html') >= 3);
    const paths = site.fetchedPaths(ip);
    // The collection's own pages wait for its next cycle, 600 minutes away.
    assert.equal(count(paths, '/'), 1, paths.join(' '));
    assert.equal(count(paths, '/m.html'), 1, paths.join(' '));
    // Fetched again on the sub-collection's period (3 s from one refetch to the next, less the cycle's own start-up), not back to back.
    const times = site.requests.filter((r) => r.path === '/sub/s.html').map((r) => r.startMs);
    assert.ok(times[2]! - times[1]! >= 1500, `${times[2]! - times[1]!} ms between the second and third fetch`);
  });

  it('refresh_when_idle: the next cycle starts as soon as the crawl is idle, not 600 minutes later', async () => {
    const ip = '127.0.133.62';
    const { site, port } = await serve(ip, () => '<attrib name="refresh" type="real">600</attrib><attrib name="refresh_when_idle" type="boolean">yes</attrib>');
    await until(() => count(site.fetchedPaths(ip), '/') >= 2);
    const st = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, '--json', 'status', 'web'], { timeoutMs: 30_000 });
    assert.ok((JSON.parse(st.out) as { cycleEpoch: number }).cycleEpoch >= 2, st.out);
  });
});
