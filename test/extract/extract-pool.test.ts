// The extract worker gives the same result as extractHtml on this thread,
// and leaves the caller's page as it was (the worker gets a transferred copy).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
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

  it('handles pages without links and many pages at once', async () => {
    const pages = Array.from({ length: 50 }, (_, i) => Buffer.from(i % 5 === 0 ? '<p>no links</p>' : `<a href="/p${i}.html">p</a><a href="/q${i}.html" rel=nofollow>q</a>`));
    const got = await Promise.all(pages.map((b, i) => pool.extract(b, `http://a.test/${i}`, OPTS)));
    got.forEach((x, i) => assert.deepEqual(x, extractHtml(pages[i]!, `http://a.test/${i}`, OPTS), `page ${i}`));
    assert.deepEqual(got[0]!.links, []);
    assert.deepEqual(got[1]!.links.map((l) => [l.url, l.nofollow]), [['http://a.test/p1.html', false], ['http://a.test/q1.html', true]]);
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
  });
});
