// A sub-collection's own settings apply to its URIs (MS-FSCCFG 2.2.4.33):
// crawlmode, start_uri_files, rss start_uris and use_sitemaps. Real crawls
// of a loopback site; what was fetched is read from the server's own log.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startFixtureSite, type HostSpec } from '../support/fixture-site.ts';
import { collectionXml, runCrawl, tempDir } from '../support/crawl-harness.ts';

const list = (name: string, items: readonly string[]) =>
  `<attrib name="${name}" type="list-string">${items.map((i) => `<member>${i}</member>`).join('')}</attrib>`;
const page = (body: string) => ({ kind: 'html' as const, body });

const pagesOf = (paths: readonly string[]) => paths.filter((p) => p !== '/robots.txt').sort();

describe('sub-collection settings', () => {
  it('crawlmode: DEPTH:1 in the sub-collection stops its URIs one hop from a start URI; the collection\'s FULL goes on', async () => {
    const ip = '127.0.133.51';
    const host: HostSpec = {
      ip,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
        '/': page('<a href="/sub/a.html">a</a> <a href="/m1.html">m1</a>'),
        '/sub/a.html': page('<a href="/sub/b.html">b</a>'),
        '/sub/b.html': page('<p>two hops</p>'),
        '/m1.html': page('<a href="/m2.html">m2</a>'),
        '/m2.html': page('<a href="/m3.html">m3</a>'),
        '/m3.html': page('<p>three hops</p>'),
      },
    };
    const site = await startFixtureSite([host]);
    try {
      const h = site.host(ip);
      const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>
        <SubDomain name="shallow"><section name="include_uris">${list('prefix', [h.url('/sub/')])}</section>
          <section name="crawlmode"><attrib name="mode" type="string">DEPTH:1</attrib></section></SubDomain>`));
      assert.equal(run.summary.complete, true);
      assert.deepEqual(pagesOf(site.fetchedPaths(ip)), ['/', '/m1.html', '/m2.html', '/m3.html', '/sub/a.html']);
      assert.equal(run.summary.uriSkips.de, 1);
    } finally {
      await site.close();
    }
  });

  it('start_uri_files and rss start_uris of a sub-collection seed the crawl', async () => {
    const ip = '127.0.133.52';
    const dir = tempDir();
    const site = await startFixtureSite([{
      ip,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
        '/': page('<p>nothing linked</p>'),
        '/sub/from-file.html': page('<p>listed in the sub-collection\'s start URI file</p>'),
        '/sub/feed.xml': { kind: 'text', contentType: 'application/rss+xml', body: `<?xml version="1.0"?><rss version="2.0"><channel><title>f</title><link>http://x/</link><description>d</description>
          <item><title>i</title><link>/sub/item.html</link></item></channel></rss>` },
        '/sub/item.html': page('<p>an item of the sub-collection\'s channel</p>'),
      },
    }]);
    try {
      const h = site.host(ip);
      const file = join(dir, 'sub-seeds.txt');
      writeFileSync(file, `${h.url('/sub/from-file.html')}\n`);
      const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>
        <SubDomain name="news"><section name="include_uris">${list('prefix', [h.url('/sub/')])}</section>
          ${list('start_uri_files', [file])}
          <section name="rss">${list('start_uris', [h.url('/sub/feed.xml')])}</section></SubDomain>`));
      assert.equal(run.summary.complete, true);
      assert.deepEqual(pagesOf(site.fetchedPaths(ip)), ['/', '/sub/feed.xml', '/sub/from-file.html', '/sub/item.html']);
    } finally {
      await site.close();
    }
  });

  it('use_sitemaps of a sub-collection: its sitemap from robots.txt is read, the collection\'s own is not', async () => {
    const ip = '127.0.133.53';
    const site = await startFixtureSite([{
      ip,
      routes: {
        '/robots.txt': (req, res) => {
          const origin = `http://${req.headers.host}`;
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(`User-agent: *\nAllow: /\nSitemap: ${origin}/sub/sitemap.xml\nSitemap: ${origin}/main-sitemap.xml\n`);
        },
        '/': page('<p>nothing linked</p>'),
        '/sub/sitemap.xml': (req, res) => {
          res.writeHead(200, { 'content-type': 'application/xml' });
          res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://${req.headers.host}/sub/hidden.html</loc></url></urlset>`);
        },
        '/main-sitemap.xml': (req, res) => {
          res.writeHead(200, { 'content-type': 'application/xml' });
          res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://${req.headers.host}/main-hidden.html</loc></url></urlset>`);
        },
        '/sub/hidden.html': page('<p>only in the sub-collection\'s sitemap</p>'),
        '/main-hidden.html': page('<p>only in the collection\'s sitemap</p>'),
      },
    }]);
    try {
      const h = site.host(ip);
      const run = await runCrawl(collectionXml(`${list('start_uris', [h.url('/')])}<attrib name="delay" type="real">0</attrib>
        <SubDomain name="mapped"><section name="include_uris">${list('prefix', [h.url('/sub/')])}</section>
          <attrib name="use_sitemaps" type="boolean">yes</attrib></SubDomain>`));
      assert.equal(run.summary.complete, true);
      assert.deepEqual(pagesOf(site.fetchedPaths(ip)), ['/', '/sub/hidden.html', '/sub/sitemap.xml']);
    } finally {
      await site.close();
    }
  });
});
