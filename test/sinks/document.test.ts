// The search document a sink receives, built from stored bytes the way the
// feeder builds it: the Elastic crawler's field names and limits, charsets,
// non-text bodies, and the links and headings of a page.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EXTRACTION_LIMITS, buildDocument, cutUtf8, documentId, htmlFields } from '../../src/sinks/document.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { documentOptionsOf } from '../../src/sinks/collection-feeder.ts';
import { rec } from '../store/crawl-store-suite.ts';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const opts = { collection: 'web', crawlCollection: 'crawl1' };

describe('the search document', () => {
  it('has the Elastic schema fields for an HTML page', () => {
    const url = 'http://example.test:8080/news/2024/05/story.html?x=1';
    const html = `<!doctype html><html><head><title>  The   story </title>
      <meta name="Description" content="  A   short summary ">
      <meta name="keywords" content="alpha, beta">
      <script>var hidden = "no";</script><style>p{}</style></head>
      <body><h1>Headline</h1><p>First &amp; second.</p><h2>Sub <b>head</b></h2>
      <a href="/other#frag">o</a><a href="/other">dup</a><a href="mailto:x@y.test">m</a>
      <a href="https://elsewhere.test/">e</a><noscript>ignored</noscript></body></html>`;
    const doc = buildDocument({ record: rec(url, { checksum: 'abc123', lastCrawledMs: Date.UTC(2026, 0, 2, 3, 4, 5) }), body: enc(html), mime: 'text/html' }, opts);
    assert.equal(doc.id, documentId(url));
    assert.match(doc.id, /^[0-9a-f]{40}$/);
    assert.equal(doc.url, url);
    assert.equal(doc.url_scheme, 'http');
    assert.equal(doc.url_host, 'example.test');
    assert.equal(doc.url_port, '8080');
    assert.equal(doc.url_path, '/news/2024/05/story.html');
    assert.deepEqual([doc.url_path_dir1, doc.url_path_dir2, doc.url_path_dir3], ['news', '2024', '05']);
    assert.equal(doc.title, 'The story');
    assert.equal(doc.meta_description, 'A short summary');
    assert.equal(doc.meta_keywords, 'alpha, beta');
    assert.deepEqual(doc.headings, ['Headline', 'Sub head']);
    assert.deepEqual(doc.links, ['http://example.test:8080/other', 'https://elsewhere.test/']);
    // A space around every element, as the Elastic crawler reads a page; <noscript> is text (jsoup parses it without scripting).
    assert.equal(doc.body_content, 'Headline First & second. Sub head o dup m e ignored');
    assert.equal(doc.body_base64, undefined);
    assert.equal(doc.content_hash, 'abc123');
    assert.equal(doc.last_crawled_at, '2026-01-02T03:04:05.000Z');
    assert.equal(doc.collection, 'web');
    assert.equal(doc.crawl_collection, 'crawl1');
    assert.equal(doc.http_status, 200);
    assert.equal(doc.content_type, 'text/html');
    assert.equal(doc.content_length, enc(html).length);
  });

  it('fills the default ports, counts the file name as a path segment, and leaves out the ones a short path lacks', () => {
    const a = buildDocument({ record: rec('https://a.test/x'), body: enc('hi'), mime: 'text/plain' }, opts);
    assert.equal(a.url_port, '443');
    assert.equal(a.url_path_dir1, 'x');
    assert.equal(a.url_path_dir2, undefined);
    assert.equal(a.body_content, 'hi');
    assert.equal(a.headings, undefined, 'plain text has no headings field');
    const b = buildDocument({ record: rec('http://a.test/'), body: enc('<p>x</p>'), mime: 'text/html' }, opts);
    assert.equal(b.url_port, '80');
    assert.equal(b.title, undefined);
  });

  it('carries a body that is not text as base64, byte for byte', () => {
    const pdf = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0xfe, 0x80]);
    const doc = buildDocument({ record: rec('http://a.test/f.pdf'), body: pdf, mime: 'application/pdf' }, opts);
    assert.equal(doc.body_content, undefined);
    assert.deepEqual(new Uint8Array(Buffer.from(doc.body_base64!, 'base64')), pdf);
    assert.equal(doc.content_length, 8);
    // JSON and XML are text
    const json = buildDocument({ record: rec('http://a.test/d.json'), body: enc('{"a":1}'), mime: 'application/json' }, opts);
    assert.equal(json.body_content, '{"a":1}');
  });

  it('decodes the charset of the Content-Type, else the one the page declares', () => {
    const latin1 = Buffer.from('<title>caf\xe9</title><p>na\xefve</p>', 'latin1');
    const fromHeader = buildDocument({ record: rec('http://a.test/'), body: latin1, mime: 'text/html', charset: 'iso-8859-1' }, opts);
    assert.equal(fromHeader.title, 'café');
    assert.equal(fromHeader.body_content, 'naïve');
    const declared = Buffer.from('<meta charset="windows-1252"><title>caf\xe9 \x80</title>', 'latin1');
    assert.equal(buildDocument({ record: rec('http://a.test/'), body: declared, mime: 'text/html' }, opts).title, 'café €');
    // an unknown charset falls back to UTF-8 instead of failing the feed
    const bogus = buildDocument({ record: rec('http://a.test/'), body: enc('<title>ok ✓</title>'), mime: 'text/html', charset: 'x-no-such' }, opts);
    assert.equal(bogus.title, 'ok ✓');
  });

  it('cuts fields to the extraction limits on a character boundary', () => {
    assert.equal(cutUtf8('abc', 10), 'abc');
    assert.equal(cutUtf8('ééé', 5), 'éé', 'a two-byte character is not split');
    assert.equal(Buffer.byteLength(cutUtf8('€'.repeat(1000), 1024)), 1023);
    const longTitle = 'é'.repeat(EXTRACTION_LIMITS.titleBytes);
    const doc = buildDocument({ record: rec('http://a.test/'), body: enc(`<title>${longTitle}</title>`), mime: 'text/html' }, opts);
    assert.equal(Buffer.byteLength(doc.title!), EXTRACTION_LIMITS.titleBytes);
    assert.ok(!doc.title!.includes('\uFFFD'));
  });

  it('cuts to the trawl_limits a collection sets (max_title_bytes … max_headings), read from its configuration', () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="c">
      <section name="trawl_limits">
        <attrib name="max_title_bytes" type="integer">5</attrib><attrib name="max_body_bytes" type="integer">12</attrib>
        <attrib name="max_keywords_bytes" type="integer">4</attrib><attrib name="max_description_bytes" type="integer">6</attrib>
        <attrib name="max_indexed_links" type="integer">2</attrib><attrib name="max_headings" type="integer">1</attrib>
      </section></DomainSpecification></CrawlerConfig>`;
    const config = readConfigXml(xml, 'limits.xml').document.collections[0]!;
    const o = { ...opts, ...documentOptionsOf(resolveSettings(config)) };
    const html = `<title>A long title</title><meta name="description" content="described at length"><meta name="keywords" content="one, two">
      <h1>First</h1><h2>Second</h2><p>body text that goes on</p><a href="/a">a</a><a href="/b">b</a><a href="/c">c</a>`;
    const doc = buildDocument({ record: rec('http://example.test/p'), body: enc(html), mime: 'text/html' }, o);
    assert.equal(doc.title, 'A lon');
    assert.equal(doc.meta_description, 'descri');
    assert.equal(doc.meta_keywords, 'one,');
    assert.ok(Buffer.byteLength(doc.body_content!) <= 12 && doc.body_content!.startsWith('First'), doc.body_content);
    assert.deepEqual(doc.headings, ['First']);
    assert.deepEqual(doc.links, ['http://example.test/a', 'http://example.test/b']);
    // The defaults are Elastic's.
    const plain = buildDocument({ record: rec('http://example.test/p'), body: enc(html), mime: 'text/html' }, { ...opts, ...documentOptionsOf(resolveSettings(readConfigXml(xml.replace(/<section name="trawl_limits">[\s\S]*?<\/section>/, ''), 'd.xml').document.collections[0]!)) });
    assert.equal(plain.title, 'A long title');
    assert.equal(plain.links!.length, 3);
  });

  it('keeps the first 25 links, or every link (up to maxLinks) for ds_send_links', () => {
    const html = Array.from({ length: 40 }, (_, i) => `<a href="/p${i}">${i}</a>`).join('');
    const some = buildDocument({ record: rec('http://a.test/'), body: enc(html), mime: 'text/html' }, opts);
    assert.equal(some.links!.length, EXTRACTION_LIMITS.indexedLinks);
    assert.equal(some.links![24], 'http://a.test/p24');
    const all = buildDocument({ record: rec('http://a.test/'), body: enc(html), mime: 'text/html' }, { ...opts, allLinks: true, maxLinks: 30 });
    assert.equal(all.links!.length, 30);
  });

  it('resolves links against <base>, and ignores an unusable one', () => {
    assert.deepEqual(htmlFields('<base href="http://b.test/dir/"><a href="x">x</a>', 'http://a.test/', 10).links, ['http://b.test/dir/x']);
    assert.deepEqual(htmlFields('<base href="http://[bad"><a href="x">x</a>', 'http://a.test/p/', 10).links, ['http://a.test/p/x']);
    // The first <base href> is the base, as the HTML standard and the crawl's extractor say.
    assert.deepEqual(htmlFields('<base href="http://b.test/one/"><base href="http://b.test/two/"><a href="x">x</a>', 'http://a.test/', 10).links, ['http://b.test/one/x']);
    const doc = buildDocument({ record: rec('http://a.test/'), body: enc('<base target="_top"><base href="/one/"><base href="/two/"><a href="x">x</a>'), mime: 'text/html' }, opts);
    assert.deepEqual(doc.links, ['http://a.test/one/x']);
  });

  it('parses the types uri_search_mime names as HTML', () => {
    const body = enc('<title>T</title><p>x</p>');
    const asText = buildDocument({ record: rec('http://a.test/'), body, mime: 'text/x-custom' }, opts);
    assert.equal(asText.title, undefined);
    const asHtml = buildDocument({ record: rec('http://a.test/'), body, mime: 'text/x-custom' }, { ...opts, htmlMime: ['text/x-custom'] });
    assert.equal(asHtml.title, 'T');
    assert.equal(asHtml.body_content, 'x');
    assert.equal(buildDocument({ record: rec('http://a.test/'), body, mime: 'text/x-custom' }, { ...opts, htmlMime: ['text/*'] }).title, 'T', 'a whole-field wildcard matches');
  });
});
