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

/** Each link resolves to its expected href, and that href is the parser's. */
function assertResolves(resolve: (link: string) => string | undefined, base: string, cases: Record<string, string>): void {
  for (const [link, want] of Object.entries(cases)) {
    assert.equal(resolve(link), want, link);
    assert.equal(want, parsed(link, base), `${link}: the expected value is the parser's`);
  }
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
    assertResolves(resolve, base, cases);
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

describe('plainLinkResolver, absolute links', () => {
  const HTTP = new Set(['http:', 'https:']);

  it('answers absolute http(s) links in the form URL.href writes, as the URL parser does', () => {
    const resolve = plainLinkResolver(BASES[0]!, HTTP)!;
    const cases: Record<string, string> = {
      'http://127.0.1.6:8080/docs/s17/page-1777.html': 'http://127.0.1.6:8080/docs/s17/page-1777.html',
      'https://h.example/a/../b/./c#frag': 'https://h.example/b/c',
      'http://h.example': 'http://h.example/',
      'http://h.example#top': 'http://h.example/',
      'http://h.example:8080': 'http://h.example:8080/',
      'https://www.h-1.example:80/x': 'https://www.h-1.example:80/x',
      'http://h.example//../x': 'http://h.example/x',
      'http://0.0.0.0/': 'http://0.0.0.0/',
      'http://255.255.255.255:65535/a/..': 'http://255.255.255.255:65535/',
    };
    assertResolves(resolve, BASES[0]!, cases);
  });

  it('leaves to the parser the absolute links it would rewrite, and schemes not allowed', () => {
    const resolve = plainLinkResolver(BASES[0]!, HTTP)!;
    const declined = [
      'HTTP://h.example/', 'http://H.example/', 'http://u:p@h.example/', 'http://[::1]/', 'http://xn--nxasmq6b.example/', 'http://a.xn--p1ai/',
      'http://127.1/', 'http://0x7f.0.0.1/', 'http://127.000.0.1/', 'http://256.0.0.1/', 'http://1.2.3.4.5/', 'http://a.123/',
      'http://h.example:80/', 'https://h.example:443/', 'http://h.example:/', 'http://h.example:080/', 'http://h.example:99999/',
      'http://h.example./', 'http://a..b/', 'http:///x', 'http://h.example/a?b', 'http://h.example/%7e', 'http://h_1.example/',
      'http://h.example\\x', 'http:h.example/x',
    ];
    for (const link of declined) assert.equal(resolve(link), undefined, link);
    assert.equal(plainLinkResolver(BASES[0]!, new Set(['http:']))!('https://h.example/'), undefined, 'https not allowed');
    assert.equal(plainLinkResolver(BASES[0]!)!('http://h.example/'), undefined, 'no absolute schemes given');
  });

  it('agrees with URL.parse on 20,000 generated absolute links', () => {
    const r = prng(11);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const HOSTS = ['h.example', 'a.b.c', 'localhost', 'x-y', '127.0.1.5', '10.0.0.255', '1.2.3.4', 'www.example.org', 'a1.b2'];
    const TRICKY_HOSTS = ['H.example', '127.1', '0x7f.0.0.1', '01.2.3.4', '1.2.3', 'a.1', 'xn--abc.example', 'a.xn--abc', 'a..b', 'a.', '.a', 'é.example', 'a_b', '[::1]', 'u@h', '300.1.1.1', '1.2.3.4.5', 'a%41'];
    const PORTS = ['', ':8080', ':65535', ':1'];
    const TRICKY_PORTS = [':80', ':443', ':0', ':', ':65536', ':08', ':x'];
    const resolve = plainLinkResolver(BASES[1]!, HTTP)!;
    let answered = 0;
    const total = 20_000;
    for (let i = 0; i < total; i++) {
      const parts: string[] = [];
      const n = Math.floor(r() * 4);
      for (let k = 0; k < n; k++) parts.push(pick(r() < 0.85 ? PLAIN : TRICKY));
      const path = n === 0 && r() < 0.5 ? '' : `/${parts.join('/')}`;
      const link = `${r() < 0.5 ? 'http' : 'https'}://${pick(r() < 0.75 ? HOSTS : TRICKY_HOSTS)}${pick(r() < 0.85 ? PORTS : TRICKY_PORTS)}${path}`;
      const got = resolve(link);
      if (got === undefined) continue;
      answered++;
      assert.equal(got, parsed(link, BASES[1]!), JSON.stringify(link));
    }
    assert.ok(answered > total * 0.3, `answered ${answered} of ${total}`);
  });
});
