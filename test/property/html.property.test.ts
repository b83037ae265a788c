// Property-based tests of the HTML extractor (src/extract/html.ts, html-events.ts,
// resolve-link.ts): arbitrary strings and bytes, generated tag soup (unclosed tags,
// attributes without values, foreign content, <base>, huge attribute values, many links).
// Properties: never throws, at most maxLinks links, every link an absolute
// http(s) URL without a fragment, and time that grows about linearly with the input.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { extractHtml, type HtmlExtraction } from '../../src/extract/html.ts';

const DOC = 'http://127.0.0.1:8080/dir/page.html';

function extractChecked(html: string | Uint8Array, maxLinks: number, url = DOC): HtmlExtraction {
  const r = extractHtml(html, url, { maxLinks });
  assert.ok(r.links.length <= maxLinks, `${r.links.length} links, maxLinks ${maxLinks}`);
  assert.ok(r.truncatedLinks >= 0);
  const absolute = (u: string, what: string): void => {
    assert.ok(URL.canParse(u), `${what} is not a URL: ${JSON.stringify(u)}`);
    const p = new URL(u);
    assert.ok(p.protocol === 'http:' || p.protocol === 'https:', `${what} is not http(s): ${u}`);
    assert.equal(p.hash, '', `${what} has a fragment: ${u}`);
    // WHATWG-serialised: parsing it again changes nothing.
    assert.equal(p.href, u, `${what} is not serialised: ${u}`);
  };
  for (const l of r.links) absolute(l.url, `link <${l.tag} ${l.attr}>`);
  for (const f of r.feeds) absolute(f, 'feed');
  if (r.canonical !== undefined) absolute(r.canonical, 'canonical');
  if (r.metaRefresh !== undefined) absolute(r.metaRefresh.url, 'meta refresh');
  assert.ok(URL.canParse(r.baseUrl));
  const seen = new Set(r.links.map((l) => `${l.kind} ${l.url}`));
  assert.equal(seen.size, r.links.length, 'links are deduplicated by kind and URL');
  return r;
}

// ------------------------------------------------------------ generators

const url = fc.oneof(
  fc.constantFrom('a', '/b', '../c', './d?x=1#f', '//127.0.0.1/e', 'http://127.0.0.1/f', 'HTTPS://127.0.0.1:443/g', 'https://127.0.0.1:8443/h', 'javascript:x()',
    'mailto:a@b', 'data:text/html,x', 'http://[bad', 'http://exa mple.org/', ' \t/padded\n ', '', '#only', '?q', '%zz', '\u00e9', 'http://127.0.0.1/&amp;x', '&#x2F;ent',
    '&#106;avascript:x', 'http:', 'http://', 'http://127.0.0.1:99999/', 'ftp://127.0.0.1/x', 'http://127.0.0.1/\u0000', 'x:y', 'http://a.example/%2e%2E/'),
  fc.webUrl({ withFragments: true, withQueryParameters: true }),
);
const attrValue = fc.oneof(url, fc.string({ maxLength: 12 }));
const quote = (v: string, q: number): string => (q === 0 ? `"${v.replace(/"/g, '&quot;')}"` : q === 1 ? `'${v.replace(/'/g, '&#39;')}'` : v.replace(/[\s>"'=<`]/g, '') || 'x');

const LINK_TAGS: [string, string][] = [['a', 'href'], ['area', 'href'], ['img', 'src'], ['img', 'srcset'], ['iframe', 'src'], ['frame', 'src'], ['script', 'src'], ['link', 'href'],
  ['form', 'action'], ['embed', 'src'], ['object', 'data'], ['source', 'src'], ['video', 'poster'], ['body', 'background'], ['base', 'href'], ['meta', 'content'], ['input', 'src']];

const element = fc.record({
  tagAttr: fc.constantFrom(...LINK_TAGS),
  value: attrValue,
  q: fc.nat(2),
  rel: fc.constantFrom('', ' rel="nofollow"', ' rel="canonical"', ' rel="alternate" type="application/rss+xml"', ' rel="stylesheet"', ' rel', ' rel=next'),
  extra: fc.constantFrom('', ' disabled', ' data-x=1', ' http-equiv="refresh"', ' name="robots" content="noindex,nofollow"', ' property="og:url"', ' x=', ` ${'z'.repeat(50)}`),
  close: fc.constantFrom('', '', '/', '></x'),
}).map((g) => {
  const [tag, attr] = g.tagAttr;
  const v = tag === 'meta' && g.extra === ' http-equiv="refresh"' ? `0; url=${g.value}` : g.value;
  return `<${tag} ${attr}=${quote(v, g.q)}${g.rel}${g.extra}${g.close}>`;
});

const soupPiece = fc.oneof(
  { weight: 6, arbitrary: element },
  { weight: 1, arbitrary: fc.constantFrom('<svg><a xlink:href="/svg">', '</svg>', '<math><mi>', '</math>', '<svg><title>t</title><foreignObject><a href="/fo">', '<template><a href="/t">',
    '</template>', '<table><tr><td background="/bg">', '<select><option><a href=/opt>', '<noscript><a href="/ns"></noscript>', '<textarea><a href="/ta"></textarea>', '<title>', '</title>',
    '<style>a{background:url(/css.png)}@import "/i.css";', '</style>', '<script>var u="/js.html";</script>', '<script>', '<!--', '-->', '<!-- http://127.0.0.1/c.html -->', '<![CDATA[',
    ']]>', '<!DOCTYPE html>', '<html lang="en">', '</html>', '<p>', '</p>', '</div>', '<', '>', '&', '&amp;', '"', "'", '=', '\u0000', '\uFEFF', '<a', ' href', '<a href="/a"<b>',
    '<base href="http://127.0.0.1:9/base/">', '<base href="javascript:x">', '<base href="">', '<plaintext>', '<xmp><a href="/x"></xmp>', '<iframe srcdoc="<a href=/s>">',
    '<object codebase="http://127.0.0.1/cb/"><param name="movie" value="m.swf"></object>') },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);
const soup = fc.array(soupPiece, { maxLength: 60 }).map((a) => a.join(''));

// ------------------------------------------------------------ properties

describe('HTML extractor: generated input', () => {
  it('arbitrary strings and bytes: never throws, every link absolute http(s)', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 400 }), fc.uint8Array({ maxLength: 400 })), fc.integer({ min: 0, max: 20 }), (input, maxLinks) => {
      extractChecked(input, maxLinks);
    }), { numRuns: 300 });
  });

  it('tag soup (unclosed tags, bare attributes, foreign content, <base>, comments, scripts): never throws, bounded, absolute links', () => {
    fc.assert(fc.property(soup, fc.integer({ min: 0, max: 30 }), fc.constantFrom(DOC, 'https://127.0.0.1/', 'http://127.0.0.1:8080/a/b/c?q#f'), (html, maxLinks, doc) => {
      extractChecked(html, maxLinks, doc);
    }), { numRuns: 400 });
  });

  it('many links: at most maxLinks, the rest counted as truncated', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 3000 }), (n, maxLinks) => {
      const html = Array.from({ length: n }, (_, i) => `<a href="/p${i}">x</a>`).join('');
      const r = extractChecked(html, maxLinks);
      assert.equal(r.links.length, Math.min(n, maxLinks));
      assert.equal(r.truncatedLinks, Math.max(0, n - maxLinks));
    }), { numRuns: 30 });
  });

  it('huge attribute values and counts: never throws, bounded time', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1 << 20 }), fc.integer({ min: 0, max: 20_000 }), fc.constantFrom('"', "'", ''), (valueLen, attrCount, q) => {
      const big = 'a'.repeat(valueLen);
      const attrs = Array.from({ length: attrCount }, (_, i) => ` d${i}=${q}v${q}`).join('');
      const html = `<a href=${q}/${big}${q}${attrs}>x</a><img srcset="${big} 1x, /s.png 2x"><a href="/ok">`;
      const t0 = performance.now();
      extractChecked(html, 100);
      const ms = performance.now() - t0;
      assert.ok(ms < 1500, `${ms.toFixed(0)} ms for ${html.length} characters`);
    }), { numRuns: 15 });
  });
});

describe('HTML extractor: time grows about linearly with the input', () => {
  /** The best of `n` runs, in ms: the least disturbed by other work on the machine. */
  function bestOf(n: number, f: () => void): number {
    let best = Infinity;
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      f();
      best = Math.min(best, performance.now() - t0);
    }
    return best;
  }

  it('pathological inputs: at most 400 ms a MiB, and four times the input well under 16 times the time', () => {
    const shapes: [string, (n: number) => string][] = [
      ['unclosed tags', (n) => '<a href="/x"><div><span>'.repeat(n)],
      ['unterminated attribute', (n) => `<a href="${'x'.repeat(n * 20)}`],
      ['unterminated comment', (n) => `<!--${'<a href="/y">'.repeat(n)}`],
      ['bare attributes', (n) => `<a ${'x '.repeat(n * 10)}>`],
      ['nested svg', (n) => '<svg><g><a xlink:href="/s">'.repeat(n)],
      ['open scripts', (n) => '<script>"/a.html"; </scrip'.repeat(n)],
      ['many <base>', (n) => '<base href="/b/">'.repeat(n)],
      ['entities', (n) => `<a href="${'&amp;&#x41;&bogus;'.repeat(n)}">`],
      ['srcset', (n) => `<img srcset="${'/i.png 1x, '.repeat(n)}">`],
      ['css urls', (n) => `<style>${'a{background:url(/c.png)} '.repeat(n)}</style>`],
      ['less-than signs', (n) => '<'.repeat(n * 20)],
    ];
    for (const [name, make] of shapes) {
      const small = make(10_000);
      const large = make(40_000);
      const tSmall = bestOf(3, () => extractHtml(small, DOC, { maxLinks: 1000 }));
      const tLarge = bestOf(3, () => extractHtml(large, DOC, { maxLinks: 1000 }));
      const mib = large.length / (1 << 20);
      assert.ok(tLarge < 400 * Math.max(mib, 1), `${name}: ${tLarge.toFixed(1)} ms for ${mib.toFixed(2)} MiB`);
      // Only a ratio of times long enough to measure means something.
      // Four times the input: linear work takes about 4x, quadratic 16x; 10x leaves room for noise.
      if (tSmall > 2) assert.ok(tLarge / tSmall < 10, `${name}: ${tSmall.toFixed(1)} ms, then ${tLarge.toFixed(1)} ms for four times the input`);
    }
  });
});
