// use_cookies and cookie_timeout through the real `trawl crawl`, against a
// site of the test's that sets a session cookie on its home page and
// answers its member pages only to a request that sends it back. The
// server's own request log (the Cookie header of every request) is the
// truth.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite, type RequestRecord } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const dir = tempDir('trawl-cookies-');
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run { code: number | null; out: string; err: string }

function trawl(args: string[], timeoutMs = 60_000): Promise<Run> {
  return runTrawl(args, { timeoutMs });
}

/**
 * `/` sets a session cookie sid=vN (N counts the cookies given) and a
 * persistent pref=blue, and links to /members/a.html; member pages answer
 * 403 without a sid this site gave.
 */
async function cookieSite(ip: string): Promise<FixtureSite> {
  const given = new Set<string>();
  const html = (title: string, links: string[] = []): string => `<html><head><title>${title}</title></head><body>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;
  const member = (title: string, links: string[] = []) => (req: IncomingMessage, res: ServerResponse): void => {
    const sid = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    res.setHeader('content-type', 'text/html');
    if (sid === undefined || !given.has(sid)) {
      res.statusCode = 403;
      res.end(html('Members only'));
      return;
    }
    res.end(html(title, links));
  };
  return startFixtureSite([{
    ip,
    routes: {
      '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
      '/': (_req, res) => {
        const sid = `v${given.size + 1}`;
        given.add(sid);
        res.setHeader('set-cookie', [`sid=${sid}; Path=/; HttpOnly`, 'pref=blue; Path=/; Max-Age=86400']);
        res.setHeader('content-type', 'text/html');
        res.end(html('Home', ['/members/a.html']));
      },
      '/members/a.html': member('A', ['/members/b.html']),
      '/members/b.html': member('B'),
    },
  }]);
}

function collection(name: string, start: string, attribs: string): string {
  const file = join(dir, `${name}-${Math.random().toString(36).slice(2)}.xml`);
  writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="${name}">
  <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
  <attrib name="delay" type="real">0</attrib>
  <attrib name="max_pending" type="integer">1</attrib>
  <section name="include_domains"><attrib name="exact" type="list-string"><member>${new URL(start).hostname}</member></attrib></section>
  ${attribs}
</DomainSpecification></CrawlerConfig>`);
  return file;
}

const cookieOf = (r: RequestRecord): string | undefined => r.headers.cookie as string | undefined;
const pagesOf = (s: FixtureSite): RequestRecord[] => s.requests.filter((r) => r.path !== '/robots.txt');

describe('use_cookies', () => {
  it('on: the session cookie from the home page goes back with every later request, and the member pages are stored', async () => {
    const s = await cookieSite('127.0.31.41');
    try {
      const home = s.host('127.0.31.41').url('/');
      const r = await trawl(['crawl', '--data', join(dir, 'on'), '--allow-loopback', collection('on', home, '<attrib name="use_cookies" type="boolean">yes</attrib>')]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /stored 3,/);
      const reqs = pagesOf(s);
      assert.deepEqual(reqs.map((q) => [q.path, q.status, cookieOf(q)]), [
        ['/', 200, undefined],
        ['/members/a.html', 200, 'sid=v1; pref=blue'],
        ['/members/b.html', 200, 'sid=v1; pref=blue'],
      ]);
    } finally {
      await s.close();
    }
  });

  it('off (the default): no Cookie header is ever sent, and the member page is refused', async () => {
    const s = await cookieSite('127.0.31.42');
    try {
      const home = s.host('127.0.31.42').url('/');
      const r = await trawl(['crawl', '--data', join(dir, 'off'), '--allow-loopback', collection('off', home, '')]);
      assert.match(r.out, /stored 1,/);
      assert.deepEqual(pagesOf(s).map((q) => [q.path, q.status]), [['/', 200], ['/members/a.html', 403]]);
      assert.ok(s.requests.every((q) => q.headers.cookie === undefined));
    } finally {
      await s.close();
    }
  });

  it('the jar is kept in the crawl store: the next run sends the cookies the last one was given', async () => {
    const s = await cookieSite('127.0.31.43');
    try {
      const home = s.host('127.0.31.43').url('/');
      const data = join(dir, 'restart');
      const first = await trawl(['crawl', '--data', data, '--allow-loopback', collection('restart', home, '<attrib name="use_cookies" type="boolean">yes</attrib>')]);
      assert.equal(first.code, 0, first.err);
      // urltest --explain --data names the cookies the saved jar would send, never their values.
      const config = collection('restart', home, '<attrib name="use_cookies" type="boolean">yes</attrib>');
      const explain = await trawl(['urltest', '--explain', '--no-fetch-robots', '--data', data, config, s.host('127.0.31.43').url('/members/b.html')]);
      assert.equal(explain.code, 0, explain.err);
      assert.match(explain.out, /^ {2}cookies: sid \(127\.0\.31\.43\/, session\), pref \(127\.0\.31\.43\/\)$/m);
      assert.doesNotMatch(explain.out, /v1|blue/);
      s.reset();
      // A new process; this time the crawl starts at a member page.
      const second = await trawl(['crawl', '--data', data, '--allow-loopback', collection('restart', s.host('127.0.31.43').url('/members/b.html'), '<attrib name="use_cookies" type="boolean">yes</attrib>')]);
      assert.equal(second.code, 0, second.err);
      // The new start URI is fetched first, with the session the first run was given.
      const firstReq = pagesOf(s)[0]!;
      assert.deepEqual([firstReq.path, firstReq.status, cookieOf(firstReq)], ['/members/b.html', 200, 'sid=v1; pref=blue'], JSON.stringify(pagesOf(s).map((q) => [q.path, cookieOf(q)])));
    } finally {
      await s.close();
    }
  });

  it('cookie_timeout ends a session cookie: after it, the next run sends only the persistent cookie', async () => {
    const s = await cookieSite('127.0.31.44');
    try {
      const data = join(dir, 'timeout');
      const attribs = '<attrib name="use_cookies" type="boolean">yes</attrib><attrib name="cookie_timeout" type="integer">1</attrib>';
      const first = await trawl(['crawl', '--data', data, '--allow-loopback', collection('timeout', s.host('127.0.31.44').url('/'), attribs)]);
      assert.equal(first.code, 0, first.err);
      assert.match(first.out, /stored 3,/, 'within the timeout the session cookie is sent');
      await new Promise((r) => setTimeout(r, 1500));
      s.reset();
      await trawl(['crawl', '--data', data, '--allow-loopback', collection('timeout', s.host('127.0.31.44').url('/members/b.html'), attribs)]);
      const firstReq = pagesOf(s)[0]!;
      assert.deepEqual([firstReq.path, firstReq.status, cookieOf(firstReq)], ['/members/b.html', 403, 'pref=blue'], JSON.stringify(pagesOf(s).map((q) => [q.path, cookieOf(q)])));
    } finally {
      await s.close();
    }
  });
});
