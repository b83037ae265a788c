// The extract worker gives the same result as extractHtml on this thread,
// and leaves the caller's page as it was (the worker gets a transferred copy).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { FingerprintCache, reservedTag, stringTag } from '../../src/core/fingerprint-cache.ts';
import { URI_SKIP_CODE_LIST } from '../../src/core/skip-codes.ts';
import { ExtractPool } from '../../src/extract/extract-pool.ts';
import { packExtraction, unpackExtraction } from '../../src/extract/extract-wire.ts';
import { extractHtml, type ExtractHtmlOptions } from '../../src/extract/html.ts';

const PAGE = `<!doctype html><html lang="de"><head><title>  Wire   test </title>
<base href="http://a.test/dir/">
<link rel="canonical" href="/canon.html"><link rel="stylesheet" href="s.css">
<link rel="alternate" type="application/rss+xml" href="/feed.xml">
<meta name="robots" content="noarchive"><meta http-equiv="refresh" content="5; url=/next.html">
</head><body>
<a href="a.html">a</a> <a href="../b.html#frag" rel="nofollow">b</a> <a href="http://other.test/x?q=1&amp;r=2">x</a>
<area href="/area.html"><img src="/i.png"><iframe src="/frame.html"></iframe>
<form action="/search" method="get"><button formaction="/go">go</button></form>
<a href="mailto:x@a.test">mail</a> <a href="caf%C3%A9 d.html">space</a>
</body></html>`;
const OPTS: ExtractHtmlOptions = { flags: { a: true, action: true, area: true, card: true, comment: true, embed: true, frame: true, go: true, img: true, layer: true, link: true, meta: true, metaRefresh: true, object: true, script: false, scriptJava: false, style: true } };

describe('ExtractPool', () => {
  const pool = new ExtractPool();
  after(() => pool.close());

  it('returns what extractHtml returns here, link for link', async () => {
    const body = Buffer.from(PAGE);
    const here = extractHtml(body, 'http://a.test/dir/page.html', OPTS);
    assert.ok(here.links.length >= 8, JSON.stringify(here.links));
    assert.ok(here.links.some((l) => l.nofollow) && here.links.some((l) => !l.nofollow));
    assert.deepEqual(await pool.extract(body, 'http://a.test/dir/page.html', OPTS), here);
  });

  it('leaves the caller\'s page readable and unchanged, also a slice of a shared buffer', async () => {
    const pooled = Buffer.allocUnsafe(PAGE.length);
    pooled.write(PAGE);
    const before = Buffer.from(pooled);
    const x = await pool.extract(pooled, 'http://a.test/dir/page.html', OPTS);
    assert.ok(x.links.length > 0);
    assert.equal(pooled.byteLength, PAGE.length, 'the caller\'s buffer was detached');
    assert.ok(pooled.equals(before));
  });

  it('handles pages without links, empty pages and many pages at once (one batch, one shared buffer)', async () => {
    const pages = Array.from({ length: 50 }, (_, i) => (i === 3 ? Buffer.alloc(0) : Buffer.from(i % 5 === 0 ? '<p>no links</p>' : `<a href="/p${i}.html">p</a><a href="/q${i}.html" rel=nofollow>q</a>`)));
    const got = await Promise.all(pages.map((b, i) => pool.extract(b, `http://a.test/${i}`, OPTS)));
    got.forEach((x, i) => assert.deepEqual(x, extractHtml(pages[i]!, `http://a.test/${i}`, OPTS), `page ${i}`));
    assert.deepEqual(got[0]!.links, []);
    assert.deepEqual(got[1]!.links.map((l) => [l.url, l.nofollow]), [['http://a.test/p1.html', false], ['http://a.test/q1.html', true]]);
  });
});

describe('ExtractPool with a crawler\'s screened-URI cache lent to the worker', () => {
  const pool = new ExtractPool();
  after(() => pool.close());
  const PAGE_URL = 'http://a.test/dir/page.html';
  const own = stringTag('http://a.test:80');
  const other = stringTag('http://other.test:80');
  const SCREENED_PAGE = `<a href="a.html">a</a> <a href="http://other.test/x">x</a> <a href="page.html">self</a>
    <a href="b.html" rel="nofollow">b</a> <a href="/i.png">pic</a> <img src="/i.png"> <a href="new.html">new</a>
    <link rel="canonical" href="/dir/a.html">`;

  it('leaves out the links the cache holds and counts them by site, once per URL', async () => {
    const cache = new FingerprintCache(100, { shared: true });
    for (const u of ['http://a.test/dir/a.html', 'http://a.test/i.png', PAGE_URL, 'http://a.test/dir/b.html']) cache.refresh(u, own);
    cache.refresh('http://other.test/x', other);
    const id = pool.share(cache)!;
    try {
      const body = Buffer.from(SCREENED_PAGE);
      const all = extractHtml(body, PAGE_URL, OPTS);
      const x = await pool.extract(body, PAGE_URL, OPTS, { id, ownTag: own });
      // a.html, other.test/x and /i.png (twice: navigate and embed) are left out. The page itself, the
      // nofollow link and the canonical link stay although the cache holds them; new.html is not held.
      const left = new Set(['http://a.test/dir/a.html', 'http://other.test/x', 'http://a.test/i.png']);
      assert.deepEqual(x.links, all.links.filter((l) => !(left.has(l.url) && (l.kind === 'navigate' || l.kind === 'embed'))));
      assert.deepEqual(x.links.map((l) => [l.url, l.kind]), [
        [PAGE_URL, 'navigate'], ['http://a.test/dir/b.html', 'navigate'], ['http://a.test/dir/new.html', 'navigate'], ['http://a.test/dir/a.html', 'canonical'],
      ]);
      assert.equal(x.screened?.links, 4);
      assert.equal(x.screened?.local, 2);
      assert.equal(x.screened?.fwd, 1);
      assert.equal(x.screened?.fingerprints.length, 6);
      for (const u of left) assert.ok(cache.listed(u, x.screened.fingerprints), u);
      assert.equal(cache.listed('http://a.test/dir/new.html', x.screened.fingerprints), false);
      // Every field but the links is what extractHtml gave.
      const { links: _a, screened: _s, ...rest } = x;
      const { links: _b, ...restHere } = all;
      assert.deepEqual(rest, restHere);
    } finally {
      pool.unshare(id);
    }
  });

  it('leaves out the links the crawler marked as refused by their URL alone, and counts them by skip code, once per URL', async () => {
    const cache = new FingerprintCache(100, { shared: true });
    const ur = URI_SKIP_CODE_LIST.indexOf('ur');
    const ch = URI_SKIP_CODE_LIST.indexOf('ch');
    cache.refresh('http://a.test/s.css', reservedTag(ur));
    cache.refresh('http://a.test/i.png', reservedTag(ur));
    cache.refresh('http://other.test/x', reservedTag(ch));
    cache.refresh('http://a.test/dir/a.html', own);
    const id = pool.share(cache)!;
    try {
      const body = Buffer.from(`<link rel="stylesheet" href="/s.css"><a href="/i.png">pic</a> <img src="/i.png">
        <a href="http://other.test/x">x</a> <a href="a.html">a</a> <a href="new.html">new</a> <a href="/s.css" rel="nofollow">css</a>`);
      const x = await pool.extract(body, PAGE_URL, OPTS, { id, ownTag: own });
      // The nofollow link stays, as it would for any screened URL: the crawler counts it as nf.
      assert.deepEqual(x.links.map((l) => [l.url, l.nofollow]), [['http://a.test/dir/new.html', false], ['http://a.test/s.css', true]]);
      assert.equal(x.screened?.links, 5);
      assert.equal(x.screened?.local, 1);
      assert.equal(x.screened?.fwd, 0);
      const want: number[] = Array.from({ length: Math.max(ur, ch) + 1 }, () => 0);
      want[ur] = 2; // s.css and i.png, the latter linked twice
      want[ch] = 1;
      assert.deepEqual(x.screened?.refused, want);
      for (const u of ['http://a.test/s.css', 'http://a.test/i.png', 'http://other.test/x']) assert.ok(cache.listed(u, x.screened.fingerprints), u);
      // Without refused links there is no refused field.
      const plain = await pool.extract(Buffer.from('<a href="a.html">a</a>'), PAGE_URL, OPTS, { id, ownTag: own });
      assert.equal(plain.screened?.refused, undefined);
    } finally {
      pool.unshare(id);
    }
  });

  it('sees what the crawler adds to the cache after lending it, and stops screening once it is taken back', async () => {
    const cache = new FingerprintCache(100, { shared: true });
    const id = pool.share(cache)!;
    const body = Buffer.from('<a href="/later.html">later</a>');
    const first = await pool.extract(body, 'http://a.test/', OPTS, { id, ownTag: own });
    assert.deepEqual(first.links.map((l) => l.url), ['http://a.test/later.html']);
    assert.equal(first.screened?.links, 0);
    cache.refresh('http://a.test/later.html', own);
    const second = await pool.extract(body, 'http://a.test/', OPTS, { id, ownTag: own });
    assert.deepEqual(second.links, []);
    assert.equal(second.screened?.local, 1);
    pool.unshare(id);
    const third = await pool.extract(body, 'http://a.test/', OPTS, { id, ownTag: own });
    assert.deepEqual(third.links.map((l) => l.url), ['http://a.test/later.html']);
    assert.equal(third.screened, undefined);
  });

  it('lends the cache again to a worker started after the first one died', async () => {
    const cache = new FingerprintCache(100, { shared: true });
    cache.refresh('http://a.test/dir/a.html', own);
    const id = pool.share(cache)!;
    try {
      const body = Buffer.from('<a href="a.html">a</a><a href="c.html">c</a>');
      assert.equal((await pool.extract(body, PAGE_URL, OPTS, { id, ownTag: own })).screened?.local, 1);
      const worker = (pool as unknown as { worker: { terminate(): Promise<number> } }).worker;
      await worker.terminate();
      const again = await pool.extract(body, PAGE_URL, OPTS, { id, ownTag: own });
      assert.notEqual((pool as unknown as { worker: unknown }).worker, worker, 'a new worker');
      assert.deepEqual(again.links.map((l) => l.url), ['http://a.test/dir/c.html']);
      assert.equal(again.screened?.local, 1);
    } finally {
      pool.unshare(id);
    }
  });

  it('does not lend a cache whose table is not shared', () => {
    assert.equal(pool.share(new FingerprintCache(10)), undefined);
  });
});

describe('extract wire format', () => {
  it('packs and unpacks every field', () => {
    const x = extractHtml(Buffer.from(PAGE), 'http://a.test/dir/page.html', OPTS);
    const packed = packExtraction(x);
    assert.equal(packed.count, x.links.length);
    assert.deepEqual(unpackExtraction(structuredClone(packed)), x);
    const empty = extractHtml(Buffer.from('<p>x</p>'), 'http://a.test/', OPTS);
    assert.deepEqual(unpackExtraction(structuredClone(packExtraction(empty))), empty);
    // nofollow first, last, in a row and alone.
    const mixed = extractHtml(Buffer.from(['n1', 'f2', 'n3', 'n4', 'f5', 'n6'].map((p) => `<a href="/${p}"${p.startsWith('n') ? ' rel="nofollow"' : ''}>${p}</a>`).join('')), 'http://a.test/', OPTS);
    assert.deepEqual(mixed.links.map((l) => l.nofollow), [true, false, true, true, false, true]);
    assert.deepEqual(unpackExtraction(structuredClone(packExtraction(mixed))), mixed);
  });

  it('screens pages of any number of links, one after another (its lookup arrays grow and are reused)', () => {
    const cache = new FingerprintCache(1000);
    const own = stringTag('http://a.test:80');
    for (let i = 0; i < 300; i += 2) cache.refresh(`http://a.test/p${i}`, own);
    const screenWith = { cache, ownTag: own, pageUrl: 'http://a.test/' };
    for (const n of [3, 300, 5, 150]) {
      const x = extractHtml(Buffer.from(Array.from({ length: n }, (_, i) => `<a href="/p${i}">p</a>`).join('')), 'http://a.test/', OPTS);
      const packed = packExtraction(x, screenWith);
      const held = Math.ceil(n / 2);
      assert.equal(packed.screened?.local, held, `${n} links`);
      assert.equal(packed.count, n - held);
      assert.deepEqual(packed.urls, x.links.filter((_, i) => i % 2 === 1).map((l) => l.url));
      assert.equal(packed.screened?.fingerprints.length, 2 * held);
    }
  });
});
