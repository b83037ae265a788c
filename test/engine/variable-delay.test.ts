// variable_delay `suspend` slots (MS-FSCCFG 2.2.4.23): a sub-collection's
// slot holds its URIs, not the rest of the collection; the collection's own
// slot suspends the whole crawl and is told as status 8 (MS-FSCADM 2.2.3.3).
// Real crawls of loopback sites; what was fetched comes from the servers' logs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { CollectionCrawl } from '../../src/engine/crawler.ts';
import { openContentStore } from '../../src/store/open-content-store.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import { startFixtureSite, type HostSpec } from '../support/fixture-site.ts';
import { collectionXml, runCrawl, tempDir } from '../support/crawl-harness.ts';

const list = (name: string, items: readonly string[]) =>
  `<attrib name="${name}" type="list-string">${items.map((i) => `<member>${i}</member>`).join('')}</attrib>`;

/** A slot covering the whole of today, local time (the slots are judged in local time). */
function todaySlot(): string {
  const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][new Date().getDay()]!;
  return `${day}:00.00-${day}:23.59`;
}

function pages(ip: string, n: number, links: readonly string[] = []): HostSpec {
  const routes: HostSpec['routes'] = {
    '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
    '/': { kind: 'html', body: [...Array.from({ length: n }, (_, i) => `<a href="/p${i}.html">p${i}</a>`), ...links.map((l) => `<a href="${l}">x</a>`)].join(' ') },
  };
  for (let i = 0; i < n; i++) routes[`/p${i}.html`] = { kind: 'html', body: `<p>page ${i}</p>` };
  return { ip, routes };
}

describe('variable_delay suspend slots', () => {
  it('a sub-collection\'s suspend slot holds its URIs while the rest of the collection is crawled', async () => {
    const main = '127.0.7.21';
    const held = '127.0.7.22';
    const site = await startFixtureSite([pages(held, 3), pages(main, 3)]);
    try {
      const heldUrl = site.host(held).url('/');
      site.setRoute(main, '/', { kind: 'html', body: `<a href="/p0.html">0</a> <a href="/p1.html">1</a> <a href="/p2.html">2</a> <a href="${heldUrl}">held</a>` });
      const run = await runCrawl(collectionXml(`${list('start_uris', [site.host(main).url('/')])}<attrib name="delay" type="real">0</attrib>
        <section name="include_domains">${list('exact', [main, held])}</section>
        <section name="trawl_limits"><attrib name="max_crawl_duration" type="integer">2</attrib></section>
        <SubDomain name="night"><section name="include_domains">${list('exact', [held])}</section>
          <section name="variable_delay"><attrib name="${todaySlot()}" type="string">suspend</attrib></section></SubDomain>`));
      assert.deepEqual(site.fetchedPaths(main).filter((p) => p !== '/robots.txt').sort(), ['/', '/p0.html', '/p1.html', '/p2.html']);
      // Without the slot, the held host's page would have been fetched at once (delay 0): it was not, for 2 s.
      assert.deepEqual(site.fetchedPaths(held).filter((p) => p !== '/robots.txt'), []);
      assert.equal(run.summary.stoppedBy, 'max-duration');
    } finally {
      await site.close();
    }
  });

  it('the collection\'s own suspend slot holds the whole crawl, told as held by variable-delay (status 8)', async () => {
    const ip = '127.0.7.23';
    const site = await startFixtureSite([pages(ip, 2)]);
    const dir = tempDir();
    const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
    const config = readConfigXml(collectionXml(`${list('start_uris', [site.host(ip).url('/')])}<attrib name="delay" type="real">0</attrib>
      <section name="variable_delay"><attrib name="${todaySlot()}" type="string">suspend</attrib></section>`), 't.xml').document.collections[0]!;
    const content = openContentStore(join(dir, 'content'), { ...resolveSettings(config).storage });
    try {
      const crawl = new CollectionCrawl(config, { store, content });
      assert.equal(crawl.heldBy(), undefined);
      const cycle = crawl.runCycle();
      await sleep(500);
      assert.equal(crawl.heldBy(), 'variable-delay');
      assert.deepEqual(site.fetchedPaths(ip), []);
      crawl.stop();
      const summary = await cycle;
      assert.equal(summary.stoppedBy, 'signal');
    } finally {
      await content.close();
      await store.close();
      await site.close();
    }
  });
});
