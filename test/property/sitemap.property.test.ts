// Property-based tests of the sitemap reader (src/extract/sitemap.ts): arbitrary
// bytes, generated urlsets and sitemap indexes with odd nesting, entities, CDATA,
// namespaces, gzip and large counts.
// Properties: never throws, at most maxUrls entries, every <loc> returned is an
// absolute URL, truncation is reported at maxUrls and maxBytes, bounded time.
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseSitemap, type SitemapParse, type SitemapParseOptions } from '../../src/extract/sitemap.ts';

const BASE = 'http://127.0.0.1:8080/maps/sitemap.xml';

function parseChecked(body: Uint8Array, opts: SitemapParseOptions, budgetMs = 2000): SitemapParse {
  const t0 = performance.now();
  const r = parseSitemap(body, opts);
  const ms = performance.now() - t0;
  assert.ok(ms < budgetMs, `parse took ${ms.toFixed(0)} ms`);
  if (r.kind === 'invalid') {
    assert.ok(r.reason.length > 0);
    return r;
  }
  const locs = r.kind === 'index' ? r.sitemaps.map((s) => s.loc) : r.urls.map((u) => u.loc);
  assert.ok(locs.length <= opts.maxUrls, `${locs.length} entries, maxUrls ${opts.maxUrls}`);
  for (const loc of locs) {
    assert.ok(URL.canParse(loc), `not an absolute URL: ${JSON.stringify(loc)}`);
    assert.equal(loc, loc.trim());
  }
  if (r.kind !== 'index') {
    for (const u of r.urls) {
      if (u.priority !== undefined) assert.ok(u.priority >= 0 && u.priority <= 1);
    }
  }
  return r;
}

const utf8 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));
const countOf = (r: SitemapParse): number => (r.kind === 'invalid' ? 0 : r.kind === 'index' ? r.sitemaps.length : r.urls.length);

// ------------------------------------------------------------ generators

const locText = fc.oneof(
  fc.constantFrom('http://127.0.0.1:8080/maps/a', 'https://127.0.0.1/b?x=1&amp;y=2', 'a/relative', '/rooted', '//127.0.0.1/proto-relative', 'javascript:alert(1)',
    'mailto:x@example.org', 'http://[bad', 'http://exa mple.org/', 'http://127.0.0.1/%zz', 'HTTP://127.0.0.1/UPPER', '  http://127.0.0.1/padded  ', '',
    'http://127.0.0.1/&nbsp;', 'http://127.0.0.1/&#x41;', 'http://127.0.0.1/&#0;', 'http://127.0.0.1/&lt;', 'ftp://127.0.0.1/f', 'http://127.0.0.1:99999/',
    'http:', 'http://', 'data:text/html,x', '\u00e9t\u00e9', 'http://127.0.0.1/\u00e9'),
  fc.webUrl({ withQueryParameters: true, withFragments: true }).map((u) => u.replace(/&/g, '&amp;')),
  fc.string({ maxLength: 30 }).map((s) => s.replace(/[<&]/g, '')),
);
const wrapText = (t: string, how: number): string => (how === 1 ? `<![CDATA[${t}]]>` : how === 2 ? `\n  ${t}\n` : how === 3 ? `${t}<!-- c -->` : t);

const field = fc.oneof(
  fc.tuple(locText, fc.nat(3)).map(([t, h]) => `<loc>${wrapText(t, h)}</loc>`),
  fc.constantFrom('<lastmod>2024-02-29</lastmod>', '<lastmod>2024-02-30</lastmod>', '<lastmod>2024-01-01T10:00:00+01:00</lastmod>', '<changefreq>Daily</changefreq>',
    '<changefreq>sometimes</changefreq>', '<priority>0.8</priority>', '<priority>1.5</priority>', '<priority>-0</priority>', '<priority>NaN</priority>',
    '<image:image><image:loc>http://127.0.0.1/i.png</image:loc></image:image>', '<x:loc xmlns:x="urn:other">http://127.0.0.1/foreign</x:loc>',
    '<loc><b>http://127.0.0.1/nested</b></loc>', '<url><loc>http://127.0.0.1/inner</loc></url>', '&nbsp;', 'stray text', '<?pi x?>'),
);

const entry = fc.tuple(fc.constantFrom('url', 'sitemap', 'url', 'URL', 'x:url'), fc.array(field, { maxLength: 5 })).map(([tag, fs]) =>
  tag === 'x:url' ? `<x:url xmlns:x="urn:other">${fs.join('')}</x:url>` : `<${tag}>${fs.join('')}</${tag}>`);

const document = fc.record({
  root: fc.constantFrom('urlset', 'sitemapindex', 'urlset', 'rss', 'sm:urlset'),
  ns: fc.constantFrom(' xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"', '', ' xmlns="urn:wrong"'),
  prolog: fc.constantFrom('', '<?xml version="1.0" encoding="UTF-8"?>', '\n\n  <?xml version="1.0"?>', '<!DOCTYPE urlset>', '<!DOCTYPE x [<!ENTITY a "b">]>', '\uFEFF'),
  entries: fc.array(entry, { maxLength: 20 }),
  nest: fc.nat(40),
  cut: fc.option(fc.nat(), { freq: 4 }),
}).map((g) => {
  const open = g.root === 'sm:urlset' ? `<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">` : `<${g.root}${g.ns}>`;
  const deep = `${'<d>'.repeat(g.nest)}${'</d>'.repeat(g.nest)}`;
  let text = `${g.prolog}${open}${g.entries.join('\n')}${deep}</${g.root}>`;
  if (g.cut !== null) text = text.slice(0, g.cut % (text.length + 1));
  return text;
});

const options = fc.record({
  maxUrls: fc.integer({ min: 1, max: 30 }),
  maxBytes: fc.integer({ min: 1, max: 4096 }),
  contentType: fc.option(fc.constantFrom('application/xml', 'text/plain', 'text/html', 'application/octet-stream', 'text/plain; charset=utf-8'), { nil: undefined }),
}).map((o) => ({ url: BASE, ...o } as SitemapParseOptions));

// ------------------------------------------------------------ properties

describe('sitemap reader: generated input', () => {
  it('arbitrary bytes (plain or gzipped): never throws, bounded results', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 800 }), fc.boolean(), options, (bytes, gz, opts) => {
      parseChecked(gz ? new Uint8Array(gzipSync(bytes)) : bytes, opts);
    }), { numRuns: 300 });
  });

  it('generated urlsets and indexes (odd nesting, entities, CDATA, namespaces, cut short): never throws, bounded, absolute locs', () => {
    fc.assert(fc.property(document, options, fc.boolean(), (text, opts, gz) => {
      const body = utf8(text);
      parseChecked(gz ? new Uint8Array(gzipSync(body)) : body, { ...opts, maxBytes: 1 << 20 });
    }), { numRuns: 300 });
  });

  it('text sitemaps: one absolute URL a line, at most maxUrls', () => {
    const line = fc.oneof(locText, fc.constant(''), fc.constant('http://127.0.0.1/ok'));
    fc.assert(fc.property(fc.array(line, { maxLength: 40 }), fc.constantFrom('\n', '\r\n', '\r'), options, (lines, eol, opts) => {
      parseChecked(utf8(lines.join(eol)), { ...opts, contentType: 'text/plain', maxBytes: 1 << 20 });
    }), { numRuns: 200 });
  });

  it('regression: a <loc> with a scheme that is not a URL is dropped, not returned as written', () => {
    const r = parseSitemap(utf8('<urlset><url><loc>http://exa mple.org/</loc></url><url><loc>http://[bad</loc></url><url><loc>http://127.0.0.1/ok</loc></url></urlset>'), { url: BASE, maxUrls: 10, maxBytes: 1 << 20 });
    assert.deepEqual(r, { kind: 'urlset', urls: [{ loc: 'http://127.0.0.1/ok' }], truncated: false });
  });
});

describe('sitemap reader: limits', () => {
  const urlset = (n: number): string => `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${Array.from({ length: n }, (_, i) => `<url><loc>http://127.0.0.1/p${i}</loc></url>`).join('\n')}</urlset>`;

  it('stops at maxUrls and reports truncation, for any count and limit', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 1, max: 3000 }), fc.boolean(), (n, maxUrls, gz) => {
      const body = utf8(urlset(n));
      const r = parseChecked(gz ? new Uint8Array(gzipSync(body)) : body, { url: BASE, maxUrls, maxBytes: 1 << 22 });
      assert.ok(r.kind === 'urlset', r.kind);
      assert.equal(countOf(r), Math.min(n, maxUrls));
      assert.equal(r.truncated, n > maxUrls);
      if (n > 0) assert.equal(r.urls.at(-1)!.loc, `http://127.0.0.1/p${Math.min(n, maxUrls) - 1}`);
    }), { numRuns: 40 });
  });

  it('stops at maxBytes and reports truncation with the entries before the limit, plain or gzipped', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 200, max: 100_000 }), fc.boolean(), (n, maxBytes, gz) => {
      const text = urlset(n);
      const body = utf8(text);
      const r = parseChecked(gz ? new Uint8Array(gzipSync(body)) : body, { url: BASE, maxUrls: 50_000, maxBytes });
      if (body.byteLength <= maxBytes) {
        assert.equal(countOf(r), n);
        assert.equal(r.kind !== 'invalid' && r.truncated, false);
        return;
      }
      assert.equal(r.kind, 'urlset', JSON.stringify(r).slice(0, 200));
      assert.equal(r.kind === 'urlset' && r.truncated, true);
      // Every entry complete within the first maxBytes is there, none after it.
      const complete = (text.slice(0, maxBytes).match(/<\/url>/g) ?? []).length;
      assert.ok(countOf(r) <= complete, `${countOf(r)} entries, ${complete} complete within maxBytes`);
      // Plain bodies are cut exactly; gzipped ones at a flush point up to half the limit earlier.
      assert.ok(countOf(r) >= (gz ? (text.slice(0, maxBytes >> 1).match(/<\/url>/g) ?? []).length : complete), `${countOf(r)} entries of ${complete}`);
    }), { numRuns: 60 });
  });

  it('a gzip bomb stops at maxBytes in bounded time', () => {
    const bomb = gzipSync(Buffer.alloc(64 << 20, 0x20));
    const r = parseChecked(new Uint8Array(bomb), { url: BASE, maxUrls: 10, maxBytes: 1 << 20 }, 3000);
    assert.equal(r.kind, 'invalid');
  });
});
