// The plain-link resolver against the WHATWG URL parser (Node's URL): every
// link it answers must resolve exactly as URL.parse(link, base) does, over
// typical links and generated ones full of characters the parser rewrites.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plainLinkResolver } from '../../src/extract/resolve-link.ts';
import { prng } from '../support/prng.ts';

const BASES = [
  'http://127.0.1.5:8080/s03/page-301.html',
  'http://h.example/a/b/',
  'http://h.example/',
  'https://user:pw@h.example:8443/dir/sub/page?q=1&r=2',
  'http://h.example/a/b.html?x=y',
  'http://[::1]:8080/x/y/z',
];

function parsed(link: string, base: string): string {
  const u = URL.parse(link, base);
  assert.ok(u, `${link} against ${base} parses`);
  const h = u.href;
  const i = h.indexOf('#');
  return i < 0 ? h : h.slice(0, i);
}

/** Segments the resolver answers for, and ones it must leave to the parser. */
const PLAIN = ['..', '.', 'a', 'B', 'page-7.html', '', '.b', '...', '~u', 'a@b', '(1)', 'a=b;c', 'f#frag', '!$&*+,'];
const TRICKY = ['%2e', '.%2E', 'x:y', 'é', 'a b', 'a\tb', "it's", 'q?x=1', 'c\\d', '^', '`', '{x}', '|', '"q"', '<t>', '[1]'];

describe('plainLinkResolver', () => {
  it('resolves the links of the bench site and dot segments as the URL parser does', () => {
    const base = BASES[0]!;
    const resolve = plainLinkResolver(base)!;
    const cases: Record<string, string> = {
      '/s01/page-4.html': 'http://127.0.1.5:8080/s01/page-4.html',
      'page-7.html': 'http://127.0.1.5:8080/s03/page-7.html',
      '../s07/page-301.html#top': 'http://127.0.1.5:8080/s07/page-301.html',
      './a/../b/./c.html': 'http://127.0.1.5:8080/s03/b/c.html',
      '..': 'http://127.0.1.5:8080/',
      '.': 'http://127.0.1.5:8080/s03/',
      '../../../x': 'http://127.0.1.5:8080/x',
      '/a/b/..': 'http://127.0.1.5:8080/a/',
      '/a//b': 'http://127.0.1.5:8080/a//b',
    };
    for (const [link, want] of Object.entries(cases)) {
      assert.equal(resolve(link), want, link);
      assert.equal(want, parsed(link, base), `${link}: the expected value is the parser's`);
    }
  });

  it('leaves to the parser what it would rewrite: queries, escapes, colons, backslashes, spaces, non-ASCII, other hosts', () => {
    const resolve = plainLinkResolver(BASES[0]!)!;
    for (const link of ['?q=1', 'a?b', '%7Euser', 'x:y', 'a\\b', 'a b', 'é.html', '//other.example/', "it's", 'a^b', '', 'mailto:x@y']) {
      assert.equal(resolve(link), undefined, link);
    }
  });

  it('takes only an http(s) base as URL.href writes it, without a fragment', () => {
    assert.equal(plainLinkResolver('ftp://h.example/a/'), undefined);
    assert.equal(plainLinkResolver('http://h.example/a#f'), undefined);
    assert.equal(plainLinkResolver('http://H.example/a'), undefined); // not normalized: the host is lower-cased by URL
    assert.equal(plainLinkResolver('not a url'), undefined);
    assert.ok(plainLinkResolver('http://h.example'.replace(/$/, '/')));
  });

  it('agrees with URL.parse on 20,000 generated links over six bases', () => {
    const r = prng(7); // deterministic: a failure names a link that fails again
    let answered = 0;
    let total = 0;
    for (const base of BASES) {
      const resolve = plainLinkResolver(base);
      if (!resolve) assert.fail(`no resolver for ${base}`);
      for (let i = 0; i < 20_000 / BASES.length; i++) {
        const n = 1 + Math.floor(r() * 5);
        const parts: string[] = [];
        for (let k = 0; k < n; k++) {
          const from = r() < 0.85 ? PLAIN : TRICKY;
          parts.push(from[Math.floor(r() * from.length)]!);
        }
        const link = (r() < 0.4 ? '/' : '') + parts.join('/');
        total++;
        const got: string | undefined = resolve(link);
        if (got === undefined) continue;
        answered++;
        assert.equal(got, parsed(link, base), `${JSON.stringify(link)} against ${base}`);
      }
    }
    // The comparison must have run on a good share of the links, not only on the ones it declines.
    assert.ok(answered > total * 0.3, `answered ${answered} of ${total}`);
  });
});
