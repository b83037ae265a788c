import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPath, parseDate, pathMatch } from 'tough-cookie';
import { MAX_COOKIE_BYTES, MAX_COOKIES_PER_DOMAIN, MemoryCookieJar } from '../../src/fetch/cookies.ts';

/** RFC 6265 5.1.1 through tough-cookie, which the jar parses Expires with: ms, or undefined when refused. */
const parseCookieDate = (text: string): number | undefined => parseDate(text)?.getTime();

function jar(now = { t: Date.UTC(2026, 0, 1) }, sessionTtlMs = 900_000): MemoryCookieJar {
  return new MemoryCookieJar({ sessionTtlMs, now: () => now.t });
}

describe('MemoryCookieJar: RFC 6265 section 3.1 examples', () => {
  it('a host-only cookie comes back to the same host only', () => {
    const j = jar();
    j.setCookie('SID=31d4d96e407aad42', 'http://example.com/');
    assert.equal(j.getCookieString('http://example.com/'), 'SID=31d4d96e407aad42');
    assert.equal(j.getCookieString('http://www.example.com/'), '', 'host-only: not to a subdomain');
  });

  it('Path=/ and Domain=example.com: both cookies to the domain and its subdomains', () => {
    const j = jar();
    j.setCookie('SID=31d4d96e407aad42; Path=/; Domain=example.com', 'http://example.com/');
    j.setCookie('lang=en-US; Path=/; Domain=example.com', 'http://example.com/');
    assert.equal(j.getCookieString('http://example.com/'), 'SID=31d4d96e407aad42; lang=en-US');
    assert.equal(j.getCookieString('http://www.example.com/a/b'), 'SID=31d4d96e407aad42; lang=en-US');
    assert.equal(j.getCookieString('http://notexample.com/'), '');
  });

  it('Secure goes over https only, and a Secure cookie is not taken from http (RFC 6265bis)', () => {
    const j = jar();
    j.setCookie('SID=31d4d96e407aad42; Path=/; Secure; HttpOnly', 'https://example.com/');
    j.setCookie('lang=en-US; Path=/; Domain=example.com', 'https://example.com/');
    assert.equal(j.getCookieString('https://example.com/'), 'SID=31d4d96e407aad42; lang=en-US');
    assert.equal(j.getCookieString('http://example.com/'), 'lang=en-US');
    j.setCookie('evil=1; Secure', 'http://example.com/');
    assert.equal(j.getCookieString('https://example.com/'), 'SID=31d4d96e407aad42; lang=en-US');
  });

  it('an Expires in the past deletes the cookie; a persistent one lives until its Expires', () => {
    const now = { t: Date.UTC(2021, 5, 1) };
    const j = jar(now);
    j.setCookie('SID=31d4d96e407aad42; Path=/; Domain=example.com', 'http://example.com/');
    j.setCookie('lang=en-US; Expires=Wed, 09 Jun 2021 10:18:14 GMT', 'http://example.com/');
    assert.equal(j.getCookieString('http://example.com/'), 'SID=31d4d96e407aad42; lang=en-US');
    j.setCookie('lang=; Expires=Sun, 06 Nov 1994 08:49:37 GMT', 'http://example.com/');
    assert.equal(j.getCookieString('http://example.com/'), 'SID=31d4d96e407aad42');
    j.setCookie('lang=en-US; Expires=Wed, 09 Jun 2021 10:18:14 GMT', 'http://example.com/');
    now.t = Date.UTC(2021, 5, 9, 10, 18, 15);
    assert.equal(j.getCookieString('http://example.com/'), '', 'lang ended at its Expires, SID (a session cookie) with cookie_timeout long before');
  });
});

describe('MemoryCookieJar: storage rules (RFC 6265 5.3)', () => {
  it('refuses a Domain the host is not in, and a bare top-level domain', () => {
    const j = jar();
    j.setCookie('a=1; Domain=other.com', 'http://www.example.com/');
    j.setCookie('b=2; Domain=com', 'http://www.example.com/');
    j.setCookie('c=3; Domain=.com', 'http://www.example.com/');
    j.setCookie('d=4; Domain=www.example.com.evil', 'http://www.example.com/');
    assert.equal(j.size, 0);
    j.setCookie('e=5; Domain=.Example.COM', 'http://www.example.com/');
    assert.equal(j.getCookieString('http://other.example.com/'), 'e=5');
  });

  it('refuses a Domain on the public suffix list, takes the registrable domain below it', () => {
    const j = jar();
    j.setCookie('a=1; Domain=co.uk', 'http://www.example.co.uk/');
    j.setCookie('b=2; Domain=.co.uk', 'http://www.example.co.uk/');
    j.setCookie('c=3; Domain=github.io', 'http://someone.github.io/');
    assert.equal(j.size, 0, 'co.uk and github.io are public suffixes');
    j.setCookie('d=4; Domain=example.co.uk', 'http://www.example.co.uk/');
    assert.equal(j.getCookieString('http://shop.example.co.uk/'), 'd=4');
    assert.equal(j.getCookieString('http://other.co.uk/'), '');
  });

  it('Domain=localhost from localhost is kept and sent back', () => {
    // RFC 6265 5.3 step 5 would make this host-only; tough-cookie treats
    // localhost as an RFC 6761 special-use name, not a public suffix, so
    // it is a domain cookie for localhost (the jar had no list before).
    const j = jar();
    j.setCookie('a=1; Domain=localhost', 'http://localhost/');
    assert.equal(j.getCookieString('http://localhost/'), 'a=1');
    assert.equal(j.all()[0]!.hostOnly, false);
  });

  it('an IP address host: a Domain must be the address itself', () => {
    const j = jar();
    j.setCookie('a=1; Domain=0.0.1', 'http://127.0.0.1/');
    j.setCookie('b=2; Domain=127.0.0.1', 'http://127.0.0.1/');
    j.setCookie('c=3', 'http://127.0.0.1/');
    assert.equal(j.getCookieString('http://127.0.0.1/'), 'b=2; c=3');
    assert.equal(j.getCookieString('http://127.0.0.2/'), '');
  });

  it('default path is the request directory; longer paths are sent first, then older cookies', () => {
    assert.equal(defaultPath('/a/b/c'), '/a/b');
    assert.equal(defaultPath('/a'), '/');
    assert.equal(defaultPath(''), '/');
    assert.equal(pathMatch('/a/b', '/a'), true);
    assert.equal(pathMatch('/ab', '/a'), false);
    assert.equal(pathMatch('/a/', '/a/'), true);
    const now = { t: 1000 };
    const j = jar(now);
    j.setCookie('root=1; Path=/', 'http://h.test/x/y');
    now.t++;
    j.setCookie('dir=2', 'http://h.test/x/y');
    now.t++;
    j.setCookie('root2=3; Path=/', 'http://h.test/');
    assert.equal(j.getCookieString('http://h.test/x/z'), 'dir=2; root=1; root2=3');
    assert.equal(j.getCookieString('http://h.test/xy'), 'root=1; root2=3');
  });

  it('the same name, domain and path replaces the value and keeps the creation time', () => {
    const now = { t: 1000 };
    const j = jar(now);
    j.setCookie('a=1; Path=/', 'http://h.test/');
    now.t++;
    j.setCookie('b=2; Path=/', 'http://h.test/');
    now.t++;
    j.setCookie('a=3; Path=/', 'http://h.test/');
    assert.equal(j.getCookieString('http://h.test/'), 'a=3; b=2');
    assert.equal(j.size, 2);
  });

  it('Max-Age wins over Expires; Max-Age=0 deletes', () => {
    const now = { t: Date.UTC(2026, 0, 1) };
    const j = jar(now);
    j.setCookie('a=1; Expires=Thu, 01 Jan 2026 00:00:01 GMT; Max-Age=3600', 'http://h.test/');
    now.t += 2000;
    assert.equal(j.getCookieString('http://h.test/'), 'a=1');
    j.setCookie('a=1; Max-Age=0', 'http://h.test/');
    assert.equal(j.getCookieString('http://h.test/'), '');
  });

  it('cookie_timeout bounds a session cookie: gone after sessionTtlMs, persistent ones stay', () => {
    const now = { t: Date.UTC(2026, 0, 1) };
    const j = jar(now, 60_000);
    j.setCookie('session=1', 'http://h.test/');
    j.setCookie('kept=2; Max-Age=86400', 'http://h.test/');
    now.t += 59_000;
    assert.equal(j.getCookieString('http://h.test/'), 'session=1; kept=2');
    now.t += 2_000;
    assert.equal(j.getCookieString('http://h.test/'), 'kept=2');
  });

  it('at most 50 cookies per domain: the oldest goes', () => {
    const now = { t: 1 };
    const j = jar(now);
    for (let i = 0; i <= MAX_COOKIES_PER_DOMAIN; i++) {
      now.t++;
      j.setCookie(`c${i}=v`, 'http://h.test/');
    }
    assert.equal(j.size, MAX_COOKIES_PER_DOMAIN);
    assert.doesNotMatch(j.getCookieString('http://h.test/'), /\bc0=/);
  });

  it('ignores a Set-Cookie without "=", with an empty name, with control characters, or too long', () => {
    const j = jar();
    for (const h of ['novalue', '=x', 'a=b\u0001c', '', `big=${'x'.repeat(MAX_COOKIE_BYTES)}`]) j.setCookie(h, 'http://h.test/');
    j.setCookie('x=1', 'not a url');
    assert.equal(j.size, 0);
    assert.equal(j.getCookieString('not a url'), '');
  });

  it('Secure from loopback http is refused too: trawl does not treat 127.0.0.0/8 as https', () => {
    const j = jar();
    j.setCookie('s=1; Secure', 'http://127.0.0.1/');
    j.setCookie('t=2; Secure', 'https://127.0.0.1/');
    assert.equal(j.getCookieString('http://127.0.0.1/'), '');
    assert.equal(j.getCookieString('https://127.0.0.1/'), 't=2');
  });
});

describe('cookie dates (RFC 6265 5.1.1)', () => {
  it('reads the three HTTP date forms and two-digit years', () => {
    const t = Date.UTC(1994, 10, 6, 8, 49, 37);
    assert.equal(parseCookieDate('Sun, 06 Nov 1994 08:49:37 GMT'), t);
    assert.equal(parseCookieDate('Sunday, 06-Nov-94 08:49:37 GMT'), t);
    assert.equal(parseCookieDate('Sun Nov  6 08:49:37 1994'), t);
    assert.equal(parseCookieDate('Wed, 09 Jun 21 10:18:14 GMT'), Date.UTC(2021, 5, 9, 10, 18, 14));
    assert.equal(parseCookieDate('Sun, 31 Feb 1994 08:49:37 GMT'), undefined);
    assert.equal(parseCookieDate('tomorrow'), undefined);
  });
});

describe('serialize and deserialize (the crawl store keeps the jar)', () => {
  it('round-trips the live cookies, drops the expired ones, and tracks changes', () => {
    const now = { t: Date.UTC(2026, 0, 1) };
    const j = jar(now, 60_000);
    assert.equal(j.changed, false);
    j.setCookie('a=1; Domain=example.com; Path=/p; Max-Age=86400', 'http://www.example.com/p/x');
    j.setCookie('s=2', 'https://www.example.com/');
    j.setCookie('gone=3; Max-Age=1', 'http://www.example.com/');
    assert.equal(j.changed, true);
    now.t += 5000;
    const text = j.serialize();
    assert.equal(j.changed, false);
    const k = MemoryCookieJar.deserialize(text, { sessionTtlMs: 60_000, now: () => now.t });
    assert.equal(k.getCookieString('https://x.example.com/p/q'), 'a=1');
    assert.equal(k.getCookieString('https://www.example.com/p/q'), 'a=1; s=2');
    assert.equal(k.size, 2);
    now.t += 60_000;
    assert.equal(MemoryCookieJar.deserialize(text, { sessionTtlMs: 60_000, now: () => now.t }).size, 1, 'the session cookie ended with cookie_timeout');
    assert.equal(MemoryCookieJar.deserialize('not json', { sessionTtlMs: 1 }).size, 0);
  });

  it('reads text it did not write as an empty jar: the format before tough-cookie, and damaged text', () => {
    const opts = { sessionTtlMs: 60_000, now: () => Date.UTC(2026, 0, 1) };
    const before = JSON.stringify({ version: 1, cookies: [{ name: 'a', value: '1', domain: 'h.test', path: '/', hostOnly: true, secure: false, expiresMs: Date.UTC(2030, 0, 1), persistent: true, createdMs: 1 }] });
    for (const text of [before, '{}', 'null', '[]', '{"version":"tough-cookie@6.1.0","cookies":[null,{"key":"k"},7]}', '{"version":"tough-cookie@6.1.0","cookies":"x"}']) {
      const k = MemoryCookieJar.deserialize(text, opts);
      assert.equal(k.size, 0, text);
      assert.equal(k.getCookieString('http://h.test/'), '', text);
      assert.equal(k.changed, false, text);
    }
  });

  it('keeps the session mark and the jar options through the crawl store text', () => {
    const now = { t: Date.UTC(2026, 0, 1) };
    const j = jar(now, 60_000);
    j.setCookie('s=1', 'http://www.example.co.uk/');
    j.setCookie('p=2; Max-Age=600', 'http://www.example.co.uk/');
    // Text that asks for the public suffixes to be let through does not get it.
    const text = j.serialize().replace('"rejectPublicSuffixes":true', '"rejectPublicSuffixes":false');
    const k = MemoryCookieJar.deserialize(text, { sessionTtlMs: 60_000, now: () => now.t });
    assert.deepEqual(k.describe('http://www.example.co.uk/'), ['s (www.example.co.uk/, session)', 'p (www.example.co.uk/)']);
    k.setCookie('x=1; Domain=co.uk', 'http://www.example.co.uk/');
    assert.equal(k.size, 2);
  });
});

describe('MemoryCookieJar: the bounds trawl keeps around tough-cookie', () => {
  it('at most 3000 cookies in all: the oldest goes, whatever its domain', () => {
    const now = { t: 1 };
    const j = jar(now);
    for (let d = 0; d < 61; d++) {
      for (let i = 0; i < 50 && d * 50 + i <= 3000; i++) {
        now.t++;
        j.setCookie(`c${i}=v`, `http://d${d}.test/`);
      }
    }
    assert.equal(j.size, 3000);
    assert.equal(j.getCookieString('http://d0.test/').split('; ')[0], 'c1=v', 'c0 of the first domain, the oldest, went');
    assert.equal(j.getCookieString('http://d60.test/'), 'c0=v');
  });
});
