// Sitemaps: the crawlee / sitemaps.org conformance table, then gzip, bounds and XML safety.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { inSitemapScope, isW3cDatetime, parseSitemap, type SitemapParse, type SitemapUrl } from '../../src/extract/sitemap.ts';
import { FIXTURES } from '../helpers.ts';

const DIR = `${FIXTURES}conformance/sitemaps/`;
const LIMITS = { maxUrls: 50_000, maxBytes: 50 * 1024 * 1024 };

interface Expected {
  served_at: string | string[] | null;
  kind: 'urlset' | 'sitemapindex' | 'text' | 'not-a-sitemap';
  urls?: string[];
  sitemaps?: string[];
  metadata?: Array<Record<string, string | number | null>>;
  children?: Record<string, string>;
  expanded_urls?: string[];
  expanded_item_count?: number;
  policy_expectations?: Record<string, string[]>;
}

interface ScopeRules {
  sitemap_at: string;
  valid: string[];
  invalid_prefix_example: string;
}

const table = JSON.parse(readFileSync(`${DIR}expected.json`, 'utf8')) as Record<string, unknown>;
const scopeRules = table['_scope_rules (sitemaps.org "Sitemap file location")'] as ScopeRules;
const cases = Object.entries(table).filter(([k]) => !k.startsWith('_')) as [string, Expected][];

const parseFixture = (file: string, url: string): SitemapParse => parseSitemap(readFileSync(DIR + file), { url, ...LIMITS });
const locsOf = (r: SitemapParse): string[] =>
  r.kind === 'index' ? r.sitemaps.map((s) => s.loc) : r.kind === 'invalid' ? [] : r.urls.map((u) => u.loc);
const KIND: Record<Expected['kind'], SitemapParse['kind']> = { urlset: 'urlset', sitemapindex: 'index', text: 'text', 'not-a-sitemap': 'invalid' };
const isHttp = (u: string): boolean => /^https?:/i.test(u);

/** The URLs a crawler takes from a sitemap (following an index's children) under one policy. */
function collect(file: string, url: string, e: Expected, keep: (sitemapUrl: string, u: string) => boolean): string[] {
  const r = parseFixture(file, url);
  if (r.kind !== 'index') return locsOf(r).filter((u) => keep(url, u));
  return r.sitemaps.filter((s) => keep(url, s.loc)).flatMap((s) => {
    const child = e.children?.[s.loc];
    assert.ok(child, `no fixture for child ${s.loc}`);
    return collect(child, s.loc, e, keep);
  });
}

/** crawlee's policies, expressed with inSitemapScope and a scheme filter. */
const POLICIES: Record<string, (sitemapUrl: string, u: string) => boolean> = {
  // crawlee keeps the sitemap's hostname; the sitemaps.org rule (same origin, below the sitemap's directory) is at least as strict.
  'same-hostname (crawlee default)': (s, u) => inSitemapScope(s, u, false),
  all: (_s, u) => isHttp(u),
  'http(s) only, even with enqueueStrategy all': (_s, u) => isHttp(u),
};

describe('sitemap conformance (expected.json)', () => {
  for (const [file, e] of cases) {
    const servedAt = e.served_at === null ? ['http://not-exists.com/sitemap.xml'] : [e.served_at].flat();
    for (const url of servedAt) {
      it(`${file} served at ${url}`, () => {
        const r = parseFixture(file, url);
        assert.equal(r.kind, KIND[e.kind], JSON.stringify(r));
        if (r.kind !== 'invalid') assert.equal(r.truncated, false);
        if (e.urls) assert.deepEqual(locsOf(r), e.urls);
        if (e.sitemaps) assert.deepEqual(locsOf(r), e.sitemaps);
        const entries: Array<SitemapUrl | { loc: string; lastmod?: string }> = r.kind === 'index' ? r.sitemaps : r.kind === 'invalid' ? [] : r.urls;
        for (const m of e.metadata ?? []) {
          const got = entries.find((x) => x.loc === m.loc) as Record<string, unknown> | undefined;
          assert.ok(got, `no entry for ${m.loc}`);
          for (const key of ['lastmod', 'changefreq', 'priority']) {
            if (!(key in m)) continue;
            assert.equal(got[key], m[key] ?? undefined, `${m.loc} ${key}`);
          }
        }
        if (e.expanded_urls) {
          const all = collect(file, url, e, () => true);
          assert.deepEqual([...new Set(all)].sort(), [...e.expanded_urls].sort());
          if (e.expanded_item_count !== undefined) assert.equal(all.length, e.expanded_item_count);
        }
        for (const [policy, want] of Object.entries(e.policy_expectations ?? {})) {
          const keep = POLICIES[policy];
          assert.ok(keep, `unmapped policy ${policy}`);
          assert.deepEqual(collect(file, url, e, keep), want, policy);
        }
      });
    }
  }

  it('_scope_rules: the sitemaps.org "Sitemap file location" examples', () => {
    for (const u of scopeRules.valid) assert.equal(inSitemapScope(scopeRules.sitemap_at, u, false), true, u);
    assert.equal(inSitemapScope(scopeRules.sitemap_at, scopeRules.invalid_prefix_example, false), false);
    // Named in robots.txt: the whole host.
    assert.equal(inSitemapScope(scopeRules.sitemap_at, scopeRules.invalid_prefix_example, true), true);
  });
});

describe('inSitemapScope', () => {
  const at = 'http://example.com/catalog/sitemap.xml';
  it('wants the same scheme, host and port', () => {
    assert.equal(inSitemapScope(at, 'https://example.com/catalog/a', false), false);
    assert.equal(inSitemapScope(at, 'http://example.com:8080/catalog/a', false), false);
    assert.equal(inSitemapScope(at, 'http://www.example.com/catalog/a', false), false);
    assert.equal(inSitemapScope(at, 'http://EXAMPLE.com:80/catalog/a', false), true);
    assert.equal(inSitemapScope(at, 'http://other.test/catalog/a', true), false);
  });
  it('wants a path below the directory, not a sibling sharing a prefix', () => {
    assert.equal(inSitemapScope(at, 'http://example.com/catalog', false), false);
    assert.equal(inSitemapScope(at, 'http://example.com/catalogue/a', false), false);
    assert.equal(inSitemapScope(at, 'http://example.com/catalog/', false), true);
    assert.equal(inSitemapScope('http://example.com/sitemap.xml?x=/a/', 'http://example.com/b', false), true);
  });
  it('never admits other schemes or unparsable URLs', () => {
    for (const u of ['mailto:foo@bar.com', 'javascript:alert(1)', 'ftp://example.com/catalog/x', 'not a url']) {
      assert.equal(inSitemapScope(at, u, true), false, u);
    }
  });
});

describe('parseSitemap: gzip and size bounds', () => {
  const URLSET = (n: number): string =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${Array.from({ length: n }, (_, i) => `<url><loc>http://h.test/p${i}</loc></url>`).join('\n')}\n</urlset>\n`;

  it('reads a gzipped urlset (magic bytes), whatever its name', () => {
    const gz = gzipSync(readFileSync(`${DIR}crawlee/sitemap_child.xml`));
    for (const url of ['http://not-exists.com/sitemap.xml.gz', 'http://not-exists.com/sitemap']) {
      const r = parseSitemap(gz, { url, ...LIMITS });
      assert.equal(r.kind, 'urlset');
      assert.equal(locsOf(r).length, 5);
    }
  });
  it('reads a gzipped text sitemap', () => {
    const r = parseSitemap(gzipSync(readFileSync(`${DIR}crawlee/sitemap.txt`)), { url: 'http://not-exists.com/sitemap.txt.gz', ...LIMITS });
    assert.equal(r.kind, 'text');
    assert.equal(locsOf(r).length, 2);
  });
  it('reads a .gz URL whose body the HTTP layer already decompressed', () => {
    const r = parseSitemap(readFileSync(`${DIR}crawlee/sitemap.xml`), { url: 'http://not-exists.com/sitemap.xml.gz', contentType: 'application/x-gzip', ...LIMITS });
    assert.equal(r.kind, 'urlset');
    assert.equal(locsOf(r).length, 2);
  });
  it('stops a gzip bomb at maxBytes', () => {
    const maxBytes = 1024 * 1024;
    const bomb = gzipSync(Buffer.alloc(128 * 1024 * 1024, 0x20), { level: 9 });
    assert.ok(bomb.byteLength < maxBytes / 4, `the bomb is ${bomb.byteLength} bytes compressed`);
    const before = process.memoryUsage().arrayBuffers;
    const r = parseSitemap(bomb, { url: 'http://h.test/sitemap.xml.gz', maxUrls: 10, maxBytes });
    assert.equal(r.kind, 'invalid');
    assert.match(r.reason, /max_bytes/);
    assert.ok(process.memoryUsage().arrayBuffers - before < 32 * 1024 * 1024, 'decompression was not stopped early');
  });
  it('reads a plain body larger than maxBytes up to maxBytes, and says it truncated', () => {
    const body = Buffer.from(URLSET(100));
    const r = parseSitemap(body, { url: 'http://h.test/sitemap.xml', maxUrls: 1000, maxBytes: body.byteLength - 1 });
    assert.equal(r.kind, 'urlset');
    assert.equal(r.truncated, true);
    assert.equal(locsOf(r).length, 100);
    const half = parseSitemap(body, { url: 'http://h.test/sitemap.xml', maxUrls: 1000, maxBytes: body.byteLength >> 1 });
    assert.ok(half.kind === 'urlset' && half.truncated && half.urls.length > 40 && half.urls.length < 60, JSON.stringify(half).slice(0, 100));
    const whole = parseSitemap(body, { url: 'http://h.test/sitemap.xml', maxUrls: 1000, maxBytes: body.byteLength });
    assert.ok(whole.kind === 'urlset' && !whole.truncated);
  });
  it('keeps the first maxUrls entries and says it truncated', () => {
    const body = Buffer.from(URLSET(10));
    const cut = parseSitemap(body, { url: 'http://h.test/sitemap.xml', maxUrls: 3, maxBytes: 1e6 });
    assert.deepEqual(cut, { kind: 'urlset', urls: [0, 1, 2].map((i) => ({ loc: `http://h.test/p${i}` })), truncated: true });
    const exact = parseSitemap(body, { url: 'http://h.test/sitemap.xml', maxUrls: 10, maxBytes: 1e6 });
    assert.equal(exact.kind === 'urlset' && exact.truncated, false);
    const text = parseSitemap(Buffer.from('http://a.test/1\nhttp://a.test/2\nhttp://a.test/3\n'), { url: 'http://a.test/s.txt', maxUrls: 2, maxBytes: 1e6 });
    assert.deepEqual(text, { kind: 'text', urls: [{ loc: 'http://a.test/1' }, { loc: 'http://a.test/2' }], truncated: true });
    const index = parseSitemap(readFileSync(`${DIR}crawlee/sitemap_parent.xml`), { url: 'http://not-exists.com/sitemap_parent.xml', maxUrls: 1, maxBytes: 1e6 });
    assert.equal(index.kind === 'index' && index.truncated, true);
    assert.deepEqual(locsOf(index), ['http://not-exists.com/sitemap_child.xml']);
  });
});

describe('parseSitemap: XML safety and tolerance', () => {
  const opts = { url: 'http://h.test/sitemap.xml', ...LIMITS };
  const parse = (xml: string): SitemapParse => parseSitemap(Buffer.from(xml), opts);

  it('never expands a DOCTYPE\'s entities (billion laughs, external entities): the entries that use one are dropped, the others read', () => {
    const laughs = `<?xml version="1.0"?>
<!DOCTYPE urlset [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://h.test/&lol3;</loc></url><url><loc>http://h.test/a</loc></url></urlset>`;
    // elastic/crawler spec/integration/sitemap_xxe_spec.rb: the other entries are crawled, the file is never read.
    const xxe = `<?xml version="1.0"?>
<!DOCTYPE urlset [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://h.test/a</loc></url><url><loc>&xxe;</loc></url><url><loc>http://h.test/x?&xxe;</loc></url></urlset>`;
    for (const xml of [laughs, xxe]) assert.deepEqual(parse(xml), { kind: 'urlset', urls: [{ loc: 'http://h.test/a' }], truncated: false });
    const param = `<!DOCTYPE urlset [ <!entity % p SYSTEM "http://evil.test/x.dtd"> %p; ]><urlset><url><loc>http://h.test/a</loc></url></urlset>`;
    assert.deepEqual(locsOf(parse(param)), ['http://h.test/a']);
  });
  it('reads a DOCTYPE without entity declarations, and tolerates leading white space', () => {
    const r = parse('\n  <?xml version="1.0"?><!DOCTYPE urlset SYSTEM "urlset.dtd"><urlset><url><loc>http://h.test/a</loc></url></urlset>');
    assert.deepEqual(locsOf(r), ['http://h.test/a']);
  });
  it('stops at the depth bound', () => {
    const deep = `<urlset><url><loc>http://h.test/a</loc></url><url>${'<x>'.repeat(100)}${'</x>'.repeat(100)}</url><url><loc>http://h.test/b</loc></url></urlset>`;
    const r = parse(deep);
    assert.deepEqual(r, { kind: 'urlset', urls: [{ loc: 'http://h.test/a' }], truncated: true });
  });
  it('keeps what came before malformed XML, and says it truncated', () => {
    const r = parse('<urlset><url><loc>http://h.test/a</loc></url><url><loc>http://h.test/b</loc></url><url><loc>http://h.test/c</lo');
    assert.deepEqual(r, { kind: 'urlset', urls: [{ loc: 'http://h.test/a' }, { loc: 'http://h.test/b' }], truncated: true });
    assert.equal(parse('<urlset><url><loc>http://h.test/a</loc></url></urlset>').kind, 'urlset');
    assert.equal(parse('<<<>>>').kind, 'invalid');
  });
  it('is namespace-tolerant: no namespace, the old Google one, undeclared prefixes, extensions ignored', () => {
    assert.deepEqual(locsOf(parse('<urlset><url><loc>http://h.test/a</loc></url></urlset>')), ['http://h.test/a']);
    assert.deepEqual(locsOf(parse('<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>http://h.test/a</loc></url></urlset>')), ['http://h.test/a']);
    const images = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
      <url><image:image><image:loc>http://h.test/cat.jpg</image:loc></image:image><loc>http://h.test/page</loc><video:loc>http://h.test/v</video:loc></url>
      <url><image:loc>http://h.test/only-image.jpg</image:loc></url>
    </urlset>`;
    assert.deepEqual(locsOf(parse(images)), ['http://h.test/page']);
    const prefixed = '<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>http://h.test/a</sm:loc></sm:url></sm:urlset>';
    assert.deepEqual(locsOf(parse(prefixed)), ['http://h.test/a']);
  });
  it('decodes entities and CDATA, trims, resolves a relative <loc>, and drops empty ones', () => {
    const r = parse(`<urlset><url><loc>  http://h.test/?a=1&amp;b=&#x32;  </loc></url><url><loc><![CDATA[ http://h.test/c ]]></loc></url>
      <url><loc>/relative</loc></url><url><loc>   </loc><priority>0.1</priority></url></urlset>`);
    assert.deepEqual(locsOf(r), ['http://h.test/?a=1&b=2', 'http://h.test/c', 'http://h.test/relative']);
  });
  it('keeps an undefined entity as written; a bare "&" is malformed', () => {
    const r = parse('<urlset><url><loc>http://h.test/&nbsp;x</loc></url><url><loc>http://h.test/c</loc></url></urlset>');
    assert.deepEqual(r, { kind: 'urlset', urls: [{ loc: 'http://h.test/&nbsp;x' }, { loc: 'http://h.test/c' }], truncated: false });
    const bare = parse('<urlset><url><loc>http://h.test/a</loc></url><url><loc>http://h.test/?a=1&b=2</loc></url><url><loc>http://h.test/c;</loc></url></urlset>');
    assert.deepEqual(bare, { kind: 'urlset', urls: [{ loc: 'http://h.test/a' }], truncated: true });
  });
  it('keeps only valid metadata', () => {
    const r = parse(`<urlset>
      <url><loc>http://h.test/1</loc><lastmod>2024-02-30</lastmod><changefreq>Daily</changefreq><priority>1.0</priority></url>
      <url><loc>http://h.test/2</loc><lastmod>2024-02-29T10:00</lastmod><changefreq>sometimes</changefreq><priority>1.5</priority></url>
      <url><loc>http://h.test/3</loc><lastmod>2024-02-29T10:00:01.5-05:00</lastmod><priority>-0.1</priority></url>
      <url><loc>http://h.test/4</loc><priority>0x1</priority><priority>0.2</priority></url>
    </urlset>`);
    assert.deepEqual(r.kind === 'urlset' && r.urls, [
      { loc: 'http://h.test/1', changefreq: 'daily', priority: 1 },
      { loc: 'http://h.test/2' },
      { loc: 'http://h.test/3', lastmod: '2024-02-29T10:00:01.5-05:00' },
      { loc: 'http://h.test/4' },
    ]);
  });
  it('reads no text sitemap from HTML or JSON', () => {
    assert.equal(parseSitemap(Buffer.from('http://h.test/a\n'), { ...opts, contentType: 'text/html; charset=utf-8' }).kind, 'invalid');
    assert.equal(parseSitemap(Buffer.from('{"urls": ["http://h.test/a"]}'), { ...opts, contentType: 'application/json' }).kind, 'invalid');
    assert.equal(parseSitemap(Buffer.from('just words\n'), opts).kind, 'invalid');
    assert.equal(parseSitemap(Buffer.from('\uFEFF  \n'), opts).kind, 'invalid');
    const r = parseSitemap(Buffer.from('\uFEFFhttp://h.test/a\r\n\r\n not a url\rhttp://h.test/b'), { ...opts, contentType: 'text/plain' });
    assert.deepEqual(locsOf(r), ['http://h.test/a', 'http://h.test/b']);
  });
});

describe('isW3cDatetime', () => {
  it('takes the six W3C-DTF forms', () => {
    for (const v of ['1997', '1997-07', '1997-07-16', '1997-07-16T19:20+01:00', '1997-07-16T19:20:30+01:00', '1997-07-16T19:20:30.45Z', '2016-12-31T23:59:60Z']) {
      assert.equal(isW3cDatetime(v), true, v);
    }
  });
  it('refuses other forms and impossible dates', () => {
    for (const v of ['not-a-date', '', '97', '1997-7-16', '1997-13', '1997-02-29', '1997-07-16T19:20', '1997-07-16 19:20Z', '1997-07-16T24:00Z', '1997-07-16T19:20+0100', 'Thu, 01 Jan 2004 19:48:21 GMT']) {
      assert.equal(isW3cDatetime(v), false, v);
    }
  });
});
