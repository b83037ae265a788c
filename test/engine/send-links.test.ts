// send_links_to: one collection discovers, another crawls what it found, under its own scope.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { CollectionCrawl } from '../../src/engine/crawler.ts';
import { openContentStore } from '../../src/store/open-content-store.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import { startFixtureSite } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';

describe('send_links_to', () => {
  it('hands extracted links to the named collection, which crawls those its own scope allows', async () => {
    const site = await startFixtureSite([{
      ip: '127.0.3.4',
      routes: {
        '/': { kind: 'html', body: '<a href="/news/1.html">1</a> <a href="/news/2.html">2</a> <a href="/other.html">o</a>' },
        '/news/1.html': { kind: 'html', body: '<p>one</p>' },
        '/news/2.html': { kind: 'html', body: '<p>two</p>' },
        '/other.html': { kind: 'html', body: '<p>other</p>' },
      },
    }]);
    const dir = tempDir();
    const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
    try {
      const h = site.host('127.0.3.4');
      const r = readConfigXml(`<CrawlerConfig>
        <DomainSpecification name="discover">
          <attrib name="start_uris" type="list-string"><member>${h.url('/')}</member></attrib>
          <attrib name="delay" type="real">0</attrib><attrib name="send_links_to" type="string">news</attrib>
          <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
        </DomainSpecification>
        <DomainSpecification name="news">
          <attrib name="delay" type="real">0</attrib>
          <section name="include_uris"><attrib name="prefix" type="list-string"><member>${h.url('/news/')}</member></attrib></section>
          <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
        </DomainSpecification></CrawlerConfig>`);
      assert.deepEqual(r.diagnostics, []);
      const [discover, news] = r.document.collections;
      await store.putCollection('news', '<CrawlerConfig/>', Date.now()); // known to the crawler before the links arrive
      const run = async (c: typeof discover) => {
        const content = openContentStore(join(dir, 'content', c!.name), { datastore: 'flatfile', compress: false, compressExcludeMime: [], storeHttpHeader: false, clusters: 1 });
        try {
          return await new CollectionCrawl(c!, { store, content }).runCycle();
        } finally {
          await content.close();
        }
      };
      const first = await run(discover);
      assert.equal(first.requests, 1); // only the start page: its links went to "news"
      assert.deepEqual(site.fetchedPaths().sort(), ['/', '/robots.txt']);
      const second = await run(news);
      // Each collection reads robots.txt itself (its own cache, its own User-Agent).
      assert.deepEqual(site.fetchedPaths().sort(), ['/', '/news/1.html', '/news/2.html', '/robots.txt', '/robots.txt']);
      assert.equal(second.stored, 2);
      assert.equal(second.uriSkips.ur, 1); // /other.html: outside the news collection's include_uris
    } finally {
      await store.close();
      await site.close();
    }
  });
});

describe('quarantine', () => {
  it('keeps URIs found for a quarantined site in a separate queue, crawled once the quarantine ends', async () => {
    const site = await startFixtureSite([
      { ip: '127.0.3.6', routes: { '/': { kind: 'html', body: '<a href="{{origin:127.0.3.7}}/q1.html">q1</a> <a href="/a.html">a</a>' }, '/a.html': { kind: 'html', body: '<p>a</p>' } } },
      { ip: '127.0.3.7', routes: { '/q1.html': { kind: 'html', body: '<p>q1</p>' } } },
    ]);
    const dir = tempDir();
    const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
    try {
      const a = site.host('127.0.3.6');
      const b = site.host('127.0.3.7');
      const r = readConfigXml(`<CrawlerConfig><DomainSpecification name="q">
        <attrib name="start_uris" type="list-string"><member>${a.url('/')}</member></attrib><attrib name="delay" type="real">0</attrib>
        <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section></DomainSpecification></CrawlerConfig>`);
      const c = r.document.collections[0]!;
      const bSite = b.origin; // scheme://host:port, the site key
      const content = openContentStore(join(dir, 'content'), { datastore: 'flatfile', compress: false, compressExcludeMime: [], storeHttpHeader: false, clusters: 1 });
      try {
        const quarantined = new Map([[bSite, Date.now() + 60_000]]);
        const first = await new CollectionCrawl(c, { store, content, quarantinedSites: () => quarantined }).runCycle();
        assert.deepEqual(site.fetchedPaths('127.0.3.7'), []); // nothing of the quarantined site
        assert.equal(first.complete, false); // its URIs still wait
        assert.equal((await store.counts('q')).queued, 1);
        assert.equal(await store.releaseQuarantine('q', bSite), 1);
        const second = await new CollectionCrawl(c, { store, content }).runCycle();
        assert.equal(second.resumed, true);
        assert.equal(second.complete, true);
        assert.deepEqual(site.fetchedPaths('127.0.3.7'), ['/robots.txt', '/q1.html']);
      } finally {
        await content.close();
      }
    } finally {
      await store.close();
      await site.close();
    }
  });
});
