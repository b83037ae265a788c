// Property-based tests of the RSS / Atom / RDF reader (src/extract/feed.ts):
// arbitrary bytes, generated feeds with odd nesting, entities, CDATA, xml:base
// and large counts. Properties: never throws, at most maxEntries entries,
// with an http(s) document URL every link and entry link is an absolute URL, bounded time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseFeed, type Feed, type FeedParseOptions } from '../../src/extract/feed.ts';

const BASE = 'http://127.0.0.1:8080/news/feed.xml';

function parseChecked(body: Uint8Array | string, opts: FeedParseOptions, budgetMs = 2000): Feed | { invalid: string } {
  const t0 = performance.now();
  const r = parseFeed(body, opts);
  const ms = performance.now() - t0;
  assert.ok(ms < budgetMs, `parse took ${ms.toFixed(0)} ms`);
  if ('invalid' in r) {
    assert.ok(r.invalid.length > 0);
    return r;
  }
  if (opts.maxEntries !== undefined) assert.ok(r.entries.length <= opts.maxEntries, `${r.entries.length} entries, maxEntries ${opts.maxEntries}`);
  for (const e of r.entries) {
    const urls = [...(e.link !== undefined ? [e.link] : []), ...e.links.map((l) => l.href)];
    for (const u of urls) assert.ok(URL.canParse(u), `not an absolute URL: ${JSON.stringify(u)}`);
  }
  return r;
}

// ------------------------------------------------------------ generators

const ref = fc.oneof(
  fc.constantFrom('http://127.0.0.1/a', 'https://127.0.0.1/b?x=1&amp;y=2', 'rel/item', '/rooted', '../up', '//127.0.0.1/p', '?q', '#frag', '', '  padded  ',
    'javascript:alert(1)', 'mailto:x@example.org', 'http://[bad', 'http://exa mple.org/', 'http://127.0.0.1:99999/', 'http:', '%zz', '&nbsp;', '&#x41;', '\u00e9'),
  fc.webUrl().map((u) => u.replace(/&/g, '&amp;')),
);
const text = fc.oneof(fc.string({ maxLength: 20 }).map((s) => s.replace(/[<&]/g, '')), fc.constantFrom('&amp;', '&lt;b&gt;x&lt;/b&gt;', '<![CDATA[<b>x</b> & y]]>', '&nbsp;', '&#0;'));
const wrap = (t: string, how: number): string => (how === 1 ? `<![CDATA[${t}]]>` : how === 2 ? `\n ${t} \n` : t);

const rssItemField = fc.oneof(
  fc.tuple(ref, fc.nat(2)).map(([r, h]) => `<link>${wrap(r, h)}</link>`),
  fc.tuple(ref, fc.boolean()).map(([r, p]) => `<guid${p ? '' : ' isPermaLink="false"'}>${r}</guid>`),
  ref.map((r) => `<enclosure url="${r.replace(/"/g, '')}" type="audio/mpeg"/>`),
  text.map((t) => `<title>${t}</title>`),
  fc.constantFrom('<pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate>', '<dc:date xmlns:dc="http://purl.org/dc/elements/1.1/">2024</dc:date>', '<source url="x">s</source>',
    '<description><![CDATA[<p>x</p>]]></description>', '<author>a</author>', '<item><link>http://127.0.0.1/nested</link></item>'),
);
const atomEntryField = fc.oneof(
  fc.tuple(ref, fc.constantFrom('', ' rel="alternate"', ' rel="enclosure"', ' rel="self"', ' rel="related" type="text/html"', ' type="application/pdf"')).map(([r, a]) => `<link href="${r.replace(/"/g, '')}"${a}/>`),
  ref.map((r) => `<id>${r}</id>`),
  fc.tuple(text, fc.constantFrom('', ' type="html"', ' type="xhtml"', ' type="text"')).map(([t, a]) => (a === ' type="xhtml"' ? `<title${a}><div xmlns="http://www.w3.org/1999/xhtml"><a href="x">${t}</a></div></title>` : `<title${a}>${t}</title>`)),
  fc.constantFrom('<updated>2024-01-01T00:00:00Z</updated>', '<published>x</published>', '<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>p</p></div></content>', '<author><name>n</name></author>'),
);
const xmlBase = fc.option(ref.map((r) => ` xml:base="${r.replace(/"/g, '')}"`), { nil: '' });

const rss = fc.record({
  items: fc.array(fc.tuple(xmlBase, fc.array(rssItemField, { maxLength: 5 })), { maxLength: 15 }),
  channelLink: ref,
  version: fc.constantFrom('2.0', '0.91', ''),
}).map((g) => `<rss version="${g.version}"><channel><title>t</title><link>${g.channelLink}</link>${g.items.map(([b, fs]) => `<item${b}>${fs.join('')}</item>`).join('\n')}</channel></rss>`);

const atom = fc.record({
  base: xmlBase,
  entries: fc.array(fc.tuple(xmlBase, fc.array(atomEntryField, { maxLength: 5 })), { maxLength: 15 }),
  ns: fc.constantFrom('http://www.w3.org/2005/Atom', 'http://purl.org/atom/ns#', 'urn:other'),
}).map((g) => `<feed xmlns="${g.ns}"${g.base}><title>t</title>${g.entries.map(([b, fs]) => `<entry${b}>${fs.join('')}</entry>`).join('\n')}</feed>`);

const rdf = fc.array(fc.tuple(ref, fc.array(rssItemField, { maxLength: 3 })), { maxLength: 10 }).map((items) =>
  `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><channel rdf:about="${BASE}"><title>t</title></channel>${items.map(([a, fs]) => `<item rdf:about="${a.replace(/"/g, '')}">${fs.join('')}</item>`).join('')}</rdf:RDF>`);

const feedDoc = fc.record({
  prolog: fc.constantFrom('', '<?xml version="1.0" encoding="UTF-8"?>', '<?xml version="1.0" encoding="ISO-8859-1"?>', '<?xml version="1.0" encoding="x-unknown"?>', '\uFEFF', '<!DOCTYPE rss>', '<!DOCTYPE x [<!ENTITY a "b">]>'),
  body: fc.oneof(rss, atom, rdf),
  nest: fc.nat(300),
  cut: fc.option(fc.nat(), { freq: 4 }),
}).map((g) => {
  let t = `${g.prolog}${g.body.replace(/(<\/(?:item|entry)>)/, `$1${'<x>'.repeat(g.nest)}${'</x>'.repeat(g.nest)}`)}`;
  if (g.cut !== null) t = t.slice(0, g.cut % (t.length + 1));
  return t;
});

// ------------------------------------------------------------ properties

describe('feed reader: generated input', () => {
  it('arbitrary bytes: never throws', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
      parseChecked(bytes, { url: BASE, maxEntries: 5 });
    }), { numRuns: 300 });
  });

  it('generated RSS, Atom and RDF (xml:base, entities, CDATA, odd nesting, cut short): never throws, bounded, absolute links', () => {
    fc.assert(fc.property(feedDoc, fc.integer({ min: 1, max: 20 }), fc.constantFrom(BASE, 'https://127.0.0.1/f'), (doc, maxEntries, url) => {
      parseChecked(doc, { url, maxEntries });
    }), { numRuns: 300 });
  });

  it('many entries: at most maxEntries kept, in document order', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 1, max: 5000 }), (n, maxEntries) => {
      const doc = `<rss><channel>${Array.from({ length: n }, (_, i) => `<item><link>/p${i}</link></item>`).join('')}</channel></rss>`;
      const r = parseChecked(doc, { url: BASE, maxEntries });
      assert.ok(!('invalid' in r));
      assert.equal(r.entries.length, Math.min(n, maxEntries));
      if (n > 0) assert.equal(r.entries.at(-1)!.link, `http://127.0.0.1:8080/p${Math.min(n, maxEntries) - 1}`);
    }), { numRuns: 30 });
  });

  it('regression: an xml:base that does not parse is ignored, so the references under it are still resolved', () => {
    const doc = '<feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://[bad"><entry xml:base="%zz"><link href="%zz"/></entry></feed>';
    const r = parseFeed(doc, { url: BASE });
    assert.ok(!('invalid' in r));
    assert.deepEqual(r.entries.map((e) => e.link), ['http://127.0.0.1:8080/news/%zz']);
  });

  it('regression: a link with a scheme that is not a URL is dropped, not returned as written', () => {
    const r = parseFeed('<rss><channel><item><link>http://exa mple.org/</link></item><item><link>http://127.0.0.1/ok</link></item></channel></rss>', { url: BASE });
    assert.ok(!('invalid' in r));
    assert.deepEqual(r.entries.map((e) => e.link), [undefined, 'http://127.0.0.1/ok']);
  });
});
