// A sub-collection's own refresh_mode (MS-FSCCFG 2.2.3, 2.2.4.33) applies to
// its URIs, the collection's to the others: `trawl crawl --cycles 2` against
// two hosts, one the collection's and one a sub-collection's, whose first
// cycle ends at its `refresh` boundary with a URI left queued on each; and
// the collection's own append and prepend with no sub-collection. Whatever
// the mode, the second cycle fetches each URI once.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite, type HostSpec } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { startPostgres, type PostgresServer } from '../support/postgres.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const SLOW_MS = 9000;
/** refresh 0.1 min: the first cycle's boundary falls at 6 s, while /slow (9 s) is in flight. */
const REFRESH = '0.1';

/**
 * Each host: / links to /slow, whose first answer takes 9 s and links to
 * /next. The first cycle ends at its boundary when /slow is in: /next is
 * left queued. The second /slow answers at once.
 */
function routes(ip: string): HostSpec['routes'] {
  let slowSeen = 0;
  return {
    '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
    // Each host's pages differ from the others' (the duplicate check would skip them).
    '/': { kind: 'html', body: `<p>${ip}</p><a href="/slow">slow</a>` },
    '/slow': (_req, res) => {
      const wait = slowSeen++ === 0 ? SLOW_MS : 0;
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<p>slow ${ip}</p><a href="/next">next</a>`);
      }, wait);
    },
    '/next': { kind: 'html', body: `<p>next ${ip}</p>` },
  };
}

describe('refresh_mode: a sub-collection\'s own, and the collection\'s alone', () => {
  const ips = ['127.0.133.71', '127.0.133.72', '127.0.133.73', '127.0.133.74', '127.0.133.75', '127.0.133.76', '127.0.133.77', '127.0.133.78'];
  let site: FixtureSite;
  const dir = tempDir('trawl-submode-');
  // The same drop in the PostgreSQL dialect of the crawl store, when PostgreSQL is installed.
  const noPostgres = skipUnless(TOOLS.postgres);
  let pg: PostgresServer | undefined;

  before(async () => {
    site = await startFixtureSite(ips.map((ip) => ({ ip, routes: routes(ip) })));
    if (!noPostgres) pg = await startPostgres();
  });
  after(async () => {
    await site.close();
    await pg?.stop();
  });

  /**
   * Crawls two cycles: `mainIp` the collection's with `mainMode`, and with `sub` the host of a
   * sub-collection with its own mode (without: the collection alone, no sub-collection).
   */
  async function crawl(name: string, mainIp: string, mainMode: string, sub?: { ip: string; mode: string }, store: readonly string[] = []) {
    const file = join(dir, `${name}.xml`);
    const hosts = sub ? [mainIp, sub.ip] : [mainIp];
    const member = (xs: readonly string[]): string => xs.map((x) => `<member>${x}</member>`).join('');
    writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="${name}">
      <attrib name="start_uris" type="list-string">${member(hosts.map((ip) => site.host(ip).url('/')))}</attrib>
      <attrib name="delay" type="real">0</attrib>
      <attrib name="refresh" type="real">${REFRESH}</attrib>
      <attrib name="refresh_mode" type="string">${mainMode}</attrib>
      <section name="include_domains"><attrib name="exact" type="list-string">${member(hosts)}</attrib></section>
      ${sub ? `<SubDomain name="other"><section name="include_domains"><attrib name="exact" type="list-string"><member>${sub.ip}</member></attrib></section>
        <attrib name="refresh_mode" type="string">${sub.mode}</attrib></SubDomain>` : ''}
    </DomainSpecification></CrawlerConfig>`);
    const r = await runTrawl(['crawl', ...store, '--data', join(dir, name), '--allow-loopback', '--cycles', '2', '--json', file], { timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.err);
    // No warning: the sub-collection's mode is applied.
    assert.doesNotMatch(r.err, /refresh_mode/);
    const cycles = (JSON.parse(r.out) as { collections: Array<{ epoch: number; stoppedBy: string }> }).collections;
    assert.deepEqual(cycles.map((c) => [c.epoch, c.stoppedBy]), [[1, 'refresh'], [2, 'done']], r.out);
  }

  /** What the second cycle fetched from `ip`, in order: every request after the first /slow (the first cycle's last). */
  function secondCycle(ip: string): string[] {
    const paths = site.fetchedPaths(ip).filter((p) => p !== '/robots.txt');
    assert.deepEqual(paths.slice(0, 2), ['/', '/slow'], paths.join(' '));
    return paths.slice(2);
  }

  it('append keeps what the first cycle left queued and fetches it first, once; scratch drops it (found again through /slow); prepend queues it last', async () => {
    await Promise.all([
      crawl('mainappend', ips[0]!, 'append', { ip: ips[1]!, mode: 'scratch' }),
      crawl('mainscratch', ips[2]!, 'scratch', { ip: ips[3]!, mode: 'append' }),
      ...(pg ? [crawl('pgappend', ips[4]!, 'append', { ip: ips[5]!, mode: 'scratch' }, ['--store', await pg.createDatabase()])] : []),
      // No sub-collection: the collection's own append and prepend.
      crawl('plainappend', ips[6]!, 'append'),
      crawl('plainprepend', ips[7]!, 'prepend'),
    ]);
    const append = [ips[0]!, ips[3]!, ips[6]!, ...(pg ? [ips[4]!] : [])];
    const scratch = [ips[1]!, ips[2]!, ...(pg ? [ips[5]!] : [])];
    // append (the collection's, then the sub-collection's): /next, left queued, is the second cycle's first fetch;
    // the known URIs are queued after it. /slow links it again, but a URI is fetched at most once a cycle.
    for (const ip of append) {
      const second = secondCycle(ip);
      assert.deepEqual(second, ['/next', '/', '/slow'], `${ip}: ${second.join(' ')}`);
    }
    // scratch (the sub-collection's, then the collection's): /next was dropped; the cycle finds it again only in the new /slow.
    for (const ip of scratch) {
      const second = secondCycle(ip);
      assert.deepEqual(second, ['/', '/slow', '/next'], `${ip}: ${second.join(' ')}`);
    }
    // prepend: the known URIs are queued in front of /next, left queued; it comes last, once.
    assert.deepEqual(secondCycle(ips[7]!), ['/', '/slow', '/next'], site.fetchedPaths(ips[7]!).join(' '));
  });
});
