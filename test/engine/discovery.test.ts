// Discovery on a multi-host site: sitemaps (index, plain, gzip), robots.txt
// Sitemap lines, channels, meta refresh, rel=canonical, nofollow, every
// default link tag, a trap. Asserted from the servers' own request logs.
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { startFixtureSite, type RouteSpec } from '../support/fixture-site.ts';
import { byPath, collectionXml, runCrawl } from '../support/crawl-harness.ts';

const A = '127.0.3.1';
const B = '127.0.3.2';
const html = (body: string, head = ''): RouteSpec => ({ kind: 'html', body: `<!doctype html><html><head>${head}</head><body>${body}</body></html>` });
const urlset = (locs: string[]) => `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<url><loc>${l}</loc><changefreq>daily</changefreq><priority>0.7</priority></url>`).join('')}</urlset>`;

describe('discovery', () => {
  it('finds pages through sitemaps, channels and every default link tag, and fetches exactly the expected set', async () => {
    const site = await startFixtureSite([
      {
        ip: A,
        routes: {
          '/robots.txt': { kind: 'robots', body: 'User-agent: *\nDisallow: /private/\nSitemap: {{origin}}/sitemap_index.xml\n' },
          '/sitemap_index.xml': { kind: 'text', contentType: 'application/xml', body: `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>{{origin}}/sitemap-pages.xml</loc></sitemap><sitemap><loc>{{origin}}/sitemap-news.xml.gz</loc></sitemap></sitemapindex>` },
          '/sitemap-pages.xml': { kind: 'text', contentType: 'application/xml', body: urlset(['{{origin}}/orphan1.html', '{{origin}}/private/x.html', `{{origin:${B}}}/b-only.html`]) },
          '/sitemap-news.xml.gz': { kind: 'binary', contentType: 'application/gzip', bytes: new Uint8Array(0) }, // replaced below (needs the origin)
          '/': html(`
            <a href="/a.html">a</a>
            <map><area href="/area.html"></map>
            <iframe src="/iframe.html"></iframe>
            <a href="/refresh.html">refresh</a>
            <a href="/nf-target.html" rel="nofollow">nofollow</a>
            <a href="/canon-b.html">b</a>
            <img src="/img.jpg">
            <a href="/trap/">trap</a>
            <a href="{{origin:${B}}}/">other host</a>`,
            '<link rel="alternate" type="application/rss+xml" href="/feed.xml"><link rel="next" href="/linked.html">'),
          '/a.html': html('<p>a</p><frameset><frame src="/frame.html"></frameset>'),
          '/area.html': html('<p>area</p>'), '/iframe.html': html('<p>iframe</p>'), '/frame.html': html('<p>frame</p>'), '/linked.html': html('<p>linked</p>'),
          '/refresh.html': html('<p>moving</p>', '<meta http-equiv="refresh" content="0; url=/refreshed.html">'),
          '/refreshed.html': html('<p>refreshed</p>'),
          '/canon-a.html': html('<p>the canonical one</p>'),
          '/canon-b.html': html('<p>a variant</p>', '<link rel="canonical" href="/canon-a.html">'),
          '/feed.xml': { kind: 'text', contentType: 'application/rss+xml', body: `<?xml version="1.0"?><rss version="2.0"><channel><title>News</title><link>{{origin}}/</link><item><title>1</title><link>{{origin}}/post1.html</link></item><item><title>2</title><link>/post2.html</link></item></channel></rss>` },
          '/post1.html': html('<p>post 1</p>'), '/post2.html': html('<p>post 2</p>'),
          '/orphan1.html': html('<p>only in a sitemap</p>'), '/orphan2.html': html('<p>only in a gzip sitemap</p>'),
          '/nf-target.html': html('<p>only behind nofollow</p>'), '/private/x.html': html('<p>private</p>'),
          '/trap/': { kind: 'trap', depth: 30 },
        },
      },
      { ip: B, routes: { '/': html('<a href="/b1.html">b1</a>'), '/b1.html': html('<p>b1</p>'), '/b-only.html': html('<p>only in A\'s sitemap</p>') } },
    ]);
    try {
      const a = site.host(A);
      site.setRoute(A, '/sitemap-news.xml.gz', { kind: 'binary', contentType: 'application/gzip', bytes: gzipSync(urlset([a.url('/orphan2.html')])) });
      const run = await runCrawl(collectionXml(`
        <attrib name="start_uris" type="list-string"><member>${a.url('/')}</member></attrib>
        <attrib name="delay" type="real">0</attrib>
        <attrib name="use_sitemaps" type="boolean">yes</attrib>
        <attrib name="max_uri_recursion" type="integer">3</attrib>
        <section name="rss"><attrib name="auto_discover" type="boolean">yes</attrib></section>`));
      const gotA = site.fetchedPaths(A).filter((p) => !p.startsWith('/trap/')).sort();
      assert.deepEqual(gotA, [
        '/', '/a.html', '/area.html', '/canon-a.html', '/canon-b.html', '/feed.xml', '/frame.html', '/iframe.html', '/linked.html',
        '/orphan1.html', '/orphan2.html', '/post1.html', '/post2.html', '/refresh.html', '/refreshed.html', '/robots.txt',
        '/sitemap-news.xml.gz', '/sitemap-pages.xml', '/sitemap_index.xml',
      ].sort());
      assert.deepEqual(site.fetchedPaths(B).sort(), ['/', '/b1.html', '/robots.txt']);
      assert.deepEqual(site.duplicates(A), []);
      assert.deepEqual(site.duplicates(B), []);
      const trap = site.fetchedPaths(A).filter((p) => p.startsWith('/trap/'));
      assert.ok(trap.length > 0 && trap.length <= 10, `${trap.length} trap pages`);
      const r = byPath(run.records, a.origin);
      assert.equal(r.get('/refresh.html')!.status, 'redirect');
      assert.equal(r.get('/refresh.html')!.redirectTo, a.url('/refreshed.html'));
      assert.equal(r.get('/canon-b.html')!.status, 'duplicate');
      assert.equal(r.get('/canon-b.html')!.duplicateOf, a.url('/canon-a.html'));
      assert.equal(r.get('/canon-a.html')!.status, 'stored');
      assert.equal(r.get('/feed.xml')!.skipCode, 'rs'); // index_feed is no
      assert.equal(r.has('/sitemap_index.xml'), false); // sitemaps are not documents
      assert.ok(run.summary.uriSkips.nf! >= 1, JSON.stringify(run.summary.uriSkips));
      assert.ok(run.summary.uriSkips.ro! >= 1, JSON.stringify(run.summary.uriSkips));
    } finally {
      await site.close();
    }
  });

  it('focuses on languages: other-language pages are not stored and are passed through only `depth` times', async () => {
    const en = (t: string, links: string) => html(`<p>${t} The committee published its annual report on the state of the river and the new bridge, which the council will discuss next week.</p>${links}`, '');
    const de = (t: string, links: string) => html(`<p>${t} Der Ausschuss hat seinen Jahresbericht über den Zustand des Flusses und die neue Brücke veröffentlicht, die der Rat nächste Woche besprechen wird.</p>${links}`, '');
    const site = await startFixtureSite([{
      ip: '127.0.3.3',
      routes: {
        '/': en('home', '<a href="/de1.html">de1</a> <a href="/en1.html">en1</a>'),
        '/en1.html': en('en1', ''),
        '/de1.html': de('de1', '<a href="/de2.html">de2</a> <a href="/en2.html">en2</a>'),
        '/de2.html': de('de2', '<a href="/en3.html">en3</a>'),
        '/en2.html': en('en2', ''),
        '/en3.html': en('en3', ''),
      },
    }]);
    try {
      const h = site.host('127.0.3.3');
      const run = await runCrawl(collectionXml(`<attrib name="start_uris" type="list-string"><member>${h.url('/')}</member></attrib><attrib name="delay" type="real">0</attrib>
        <section name="focused"><attrib name="languages" type="list-string"><member>en</member></attrib><attrib name="depth" type="integer">1</attrib></section>`));
      // de1 is one hop out of focus (allowed by depth 1); de2 would be the second: its links are not followed.
      assert.deepEqual(site.fetchedPaths('127.0.3.3').sort(), ['/', '/de1.html', '/de2.html', '/en1.html', '/en2.html', '/robots.txt']);
      const r = byPath(run.records, h.origin);
      assert.equal(r.get('/de1.html')!.skipCode, 'fs');
      assert.equal(r.get('/en2.html')!.status, 'stored');
      assert.ok(run.summary.uriSkips.fo! >= 1);
    } finally {
      await site.close();
    }
  });

  it('stores one of several equal documents fetched at the same time and records the others as its duplicates', async () => {
    // Twelve pages with one body, all linked from the root and fetched
    // together (max_pending 16): each equal page that finishes while the
    // first is still being looked up or stored must wait for its answer.
    const same = html('<p>the same body on every copy</p>');
    const copies = Array.from({ length: 12 }, (_, i) => `/copy-${i}.html`);
    const site = await startFixtureSite([{
      ip: '127.0.3.6',
      routes: { '/': html(copies.map((c) => `<a href="${c}">c</a>`).join(' ')), ...Object.fromEntries(copies.map((c) => [c, same])) },
    }]);
    try {
      const h = site.host('127.0.3.6');
      const run = await runCrawl(collectionXml(`<attrib name="start_uris" type="list-string"><member>${h.url('/')}</member></attrib><attrib name="delay" type="real">0</attrib>
        <attrib name="max_pending" type="integer">16</attrib>`));
      assert.deepEqual(site.fetchedPaths('127.0.3.6').filter((p) => p.startsWith('/copy-')).sort(), [...copies].sort());
      const r = byPath(run.records, h.origin);
      const stored = copies.filter((c) => r.get(c)!.status === 'stored');
      assert.equal(stored.length, 1, JSON.stringify(copies.map((c) => [c, r.get(c)!.status])));
      for (const c of copies) if (c !== stored[0]) assert.deepEqual([c, r.get(c)!.status, r.get(c)!.duplicateOf], [c, 'duplicate', h.url(stored[0]!)]);
    } finally {
      await site.close();
    }
  });

  it('asks the store about a checksum only when a record may hold it, in a first crawl and in the next cycle', async () => {
    const ip = '127.0.3.7';
    const distinct = Array.from({ length: 10 }, (_, i) => `/p${i}.html`);
    // same-b is linked only from /next.html, which only same-a links to: it is found after same-a
    // is committed, when no claim stands for that body any more and only the filter or the store can tell.
    const same = html('<p>one body, two addresses</p><a href="/next.html">next</a>');
    const root = (extra: string[]) => html([...distinct, '/same-a.html', ...extra].map((p) => `<a href="${p}">x</a>`).join(' '));
    const site = await startFixtureSite([{
      ip,
      routes: {
        '/': root([]), ...Object.fromEntries(distinct.map((p) => [p, html(`<p>page ${p}</p>`)])),
        '/same-a.html': same, '/next.html': html('<a href="/same-b.html">b</a>'), '/same-b.html': same, '/same-c.html': same,
      },
    }]);
    try {
      const h = site.host(ip);
      const xml = collectionXml(`<attrib name="start_uris" type="list-string"><member>${h.url('/')}</member></attrib><attrib name="delay" type="real">0</attrib>`);
      const first: Record<string, number> = {};
      const run1 = await runCrawl(xml, { storeCalls: first });
      const r1 = byPath(run1.records, h.origin);
      const stored = ['/', ...distinct, '/same-a.html', '/next.html'];
      assert.deepEqual(stored.map((p) => [p, r1.get(p)?.status]), stored.map((p) => [p, 'stored']));
      assert.deepEqual([r1.get('/same-b.html')?.status, r1.get('/same-b.html')?.duplicateOf], ['duplicate', h.url('/same-a.html')]);
      // From an empty collection the store is asked only about same-b, whose checksum a commit of this cycle wrote.
      assert.equal(first.findByChecksum, 1);

      // The next cycle starts with records in the store, whose checksums the filter holds from the start:
      // same-c, a new address of a stored body and a start URI, is fetched right after the root, long before
      // same-a is fetched again, so only those records can tell that it is a duplicate.
      const second: Record<string, number> = {};
      const xml2 = collectionXml(`<attrib name="start_uris" type="list-string"><member>${h.url('/')}</member><member>${h.url('/same-c.html')}</member></attrib>
        <attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">1</attrib>`);
      const run2 = await runCrawl(xml2, { dir: run1.dir, storeCalls: second });
      const r2 = byPath(run2.records, h.origin);
      assert.deepEqual([r2.get('/same-c.html')?.status, r2.get('/same-c.html')?.duplicateOf], ['duplicate', h.url('/same-a.html')]);
      assert.deepEqual([r2.get('/same-b.html')?.status, r2.get('/same-b.html')?.duplicateOf], ['duplicate', h.url('/same-a.html')]);
      // same-c and same-b; the unchanged pages are recognised by their own records and never reach the check.
      assert.equal(second.findByChecksum, 2);
    } finally {
      await site.close();
    }
  });

  it('drops documents by exclude_headers and X-Robots-Tag, and follows links of duplicates only with extract_links_from_dupes', async () => {
    // csum_cut_off 16: the checksum covers only "<p>same body</p>", so dup2 is a
    // duplicate of dup1 although it links somewhere else.
    const same = '<p>same body</p>';
    const site = await startFixtureSite([{
      ip: '127.0.3.5',
      routes: {
        '/': html('<a href="/x.html">x</a> <a href="/tagged.html">t</a> <a href="/dup1.html">d1</a> <a href="/dup2.html">d2</a>'),
        '/x.html': { kind: 'html', body: '<p>x</p>', headers: { 'x-internal': 'draft-2026' } },
        '/tagged.html': { kind: 'html', body: '<p>t</p><a href="/behind-tag.html">b</a>', headers: { 'x-robots-tag': 'trawl: noindex, nofollow' } },
        '/behind-tag.html': html('never reached'),
        '/dup1.html': { kind: 'html', body: same },
        '/dup2.html': { kind: 'html', body: `${same}<a href="/from-dup.html">f</a>` },
        '/from-dup.html': html('reached through a duplicate only when links of duplicates are followed'),
      },
    }]);
    try {
      const h = site.host('127.0.3.5');
      for (const dupes of [false, true]) {
        site.reset();
        const run = await runCrawl(collectionXml(`<attrib name="start_uris" type="list-string"><member>${h.url('/')}</member></attrib><attrib name="delay" type="real">0</attrib>
          <attrib name="extract_links_from_dupes" type="boolean">${dupes ? 'yes' : 'no'}</attrib>
          <attrib name="csum_cut_off" type="integer">16</attrib><attrib name="max_pending" type="integer">1</attrib>
          <section name="exclude_headers"><attrib name="X-Internal" type="list-string"><member>^draft-</member></attrib></section>`));
        const r = byPath(run.records, h.origin);
        assert.equal(r.get('/x.html')!.skipCode, 'hx');
        assert.equal(r.get('/tagged.html')!.skipCode, 'ni');
        assert.equal(site.fetchedPaths('127.0.3.5').includes('/behind-tag.html'), false);
        // One request at a time, in link order: dup1 is the original, dup2 its duplicate.
        assert.equal(r.get('/dup2.html')!.duplicateOf, h.url('/dup1.html'));
        assert.equal(site.fetchedPaths('127.0.3.5').includes('/from-dup.html'), dupes);
      }
    } finally {
      await site.close();
    }
  });
});
