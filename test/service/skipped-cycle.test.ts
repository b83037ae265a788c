// The Elastic crawl status `skipped` in `trawl serve`: a sub-collection's own
// refresh that falls due while a cycle of its collection runs is not started;
// a cycle with status skipped is recorded, and `trawl admin status` shows it.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startFixtureSite } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { daemonTestParts, spawnServe } from '../support/daemon.ts';
import { runTrawl } from '../support/trawl-cli.ts';
import { freePort, until } from '../support/ports.ts';
import { collectionLogPath } from '../../src/service/crawl-log.ts';

const SLOW_MS = 10_000;

describe('a sub-collection refresh that falls due while a cycle runs is skipped', () => {
  const { daemons, sites, dirs } = daemonTestParts();

  it('records a cycle with status skipped, shown by trawl admin status and the event log, and refreshes the sub-collection once the cycle is over', async () => {
    const ip = '127.0.133.81';
    // A second collection, on its own host, with the Elastic event log (trawl_elastic.events).
    const ecsIp = '127.0.133.82';
    const site = await startFixtureSite([ip, ecsIp].map((host) => ({
      ip: host,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
        '/': { kind: 'html', body: '<a href="/sub/s.html">s</a> <a href="/slow.html">slow</a>' },
        '/sub/s.html': { kind: 'html', body: '<p>in the sub-collection</p>' },
        // Keeps the collection's first cycle running for 10 s.
        '/slow.html': (_req, res) => {
          setTimeout(() => {
            res.writeHead(200, { 'content-type': 'text/html' });
            res.end(`<p>slow ${host}</p>`);
          }, SLOW_MS);
        },
      },
    })));
    sites.push(site);
    const data = tempDir('trawl-skipped-');
    dirs.push(data);
    const port = await freePort();
    const server = `http://127.0.0.1:${port}`;
    daemons.push(await spawnServe(['--data', data, '--port', String(port), '--allow-loopback']));
    // The collection refreshes every 600 min, the sub-collection every 0.05 min (3 s).
    const addCollection = async (name: string, host: string, extra: string): Promise<void> => {
      const origin = site.host(host).url('/').replace(/\/$/, '');
      const xml = join(data, `${name}.xml`);
      writeFileSync(xml, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="${name}">
        <attrib name="start_uris" type="list-string"><member>${origin}/</member></attrib>
        <attrib name="delay" type="real">0</attrib>
        <attrib name="refresh" type="real">600</attrib>
        <section name="include_domains"><attrib name="exact" type="list-string"><member>${host}</member></attrib></section>
        <SubDomain name="fast"><section name="include_uris"><attrib name="prefix" type="list-string"><member>${origin}/sub/</member></attrib></section>
          <attrib name="refresh" type="real">0.05</attrib></SubDomain>${extra}
      </DomainSpecification></CrawlerConfig>`);
      const add = await runTrawl(['admin', '--server', server, 'add', xml], { timeoutMs: 30_000 });
      assert.equal(add.code, 0, add.err);
    };
    await addCollection('web', ip, '');
    await addCollection('ecs', ecsIp, '<section name="trawl_elastic"><attrib name="events" type="boolean">yes</attrib></section>');

    const status = async (): Promise<Record<string, unknown>> => {
      const st = await runTrawl(['admin', '--server', server, '--json', 'status', 'web'], { timeoutMs: 30_000 });
      assert.equal(st.code, 0, st.err);
      return JSON.parse(st.out) as Record<string, unknown>;
    };
    const slow = () => site.requests.find((r) => r.path === '/slow.html' && r.host.startsWith(`${ip}:`));
    // While /slow.html is in flight, the sub-collection's refresh falls due (3 s after the cycle's start) and is skipped.
    let seen: Record<string, unknown> = {};
    await until('a skipped cycle in trawl admin status', async () => {
      seen = await status();
      return typeof seen.skippedCycleId === 'string';
    }, 40_000);
    assert.equal(slow()?.endMs, undefined, 'the skip was recorded after the cycle ended');
    assert.equal(seen.cycleStatus, 'running', JSON.stringify(seen));
    assert.match(String(seen.skippedCycleId), /^[0-9a-f]{24}$/);
    assert.notEqual(seen.skippedCycleId, seen.cycleId);
    assert.match(String(seen.skippedReason), /^sub-collection fast's refresh fell due while cycle 1 \([0-9a-f]{24}\) was running$/);
    // The text status says so too (a later skip, every 3 s while the cycle runs, may have replaced the first).
    const text = await runTrawl(['admin', '--server', server, 'status', 'web'], { timeoutMs: 30_000 });
    assert.match(text.out, /\ncycle 1 [0-9a-f]{24}: running\nlast skipped [0-9a-f]{24}: skipped \(sub-collection fast's refresh fell due while cycle 1 /);
    const skipLine = /automatic crawl skipped \(cycle [0-9a-f]{24}, status skipped\): sub-collection fast's refresh fell due while cycle 1 /;
    await until('the skip in the event log', () => skipLine.test(readFileSync(collectionLogPath(data, 'web'), 'utf8')), 40_000);
    // The Elastic event log: a crawl-skipped record whose crawl id is the skipped cycle's, not the running one's.
    const records = (action: string): Array<Record<string, unknown>> => readFileSync(collectionLogPath(data, 'ecs'), 'utf8').split('\n')
      .filter((l) => l.includes(`"${action}"`)).map((l) => JSON.parse(l) as Record<string, unknown>);
    await until('a crawl-skipped record in the Elastic event log', () => records('crawl-skipped').length > 0, 40_000);
    const ecs = records('crawl-skipped');
    const running = records('crawl-start')[0]!;
    assert.equal(ecs[0]!['crawler.crawl.status'], 'skipped');
    assert.match(String(ecs[0]!['crawler.crawl.id']), /^[0-9a-f]{24}$/);
    assert.notEqual(ecs[0]!['crawler.crawl.id'], running['crawler.crawl.id']);
    assert.match(String(ecs[0]!.message), /^sub-collection fast's refresh fell due while cycle 1 /);

    // Once the cycle is over, the sub-collection's next refresh runs: its page is fetched again, after /slow.html's answer.
    await until('the sub-collection refreshed', () => site.fetchedPaths(ip).filter((p) => p === '/sub/s.html').length >= 2, 40_000);
    const subFetches = site.requests.filter((r) => r.path === '/sub/s.html' && r.host.startsWith(`${ip}:`));
    const slowEnd = slow()!.endMs!;
    assert.equal(subFetches.filter((r) => r.startMs < slowEnd).length, 1, 'the sub-collection was refreshed into the running cycle');
    assert.ok(subFetches[1]!.startMs >= slowEnd);
    // The collection's own pages wait for its next cycle.
    assert.equal(site.fetchedPaths(ip).filter((p) => p === '/').length, 1);
  });
});
