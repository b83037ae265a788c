// `trawl crawl` through Debian's tinyproxy (MS-FSCCFG proxy, proxy_max_pending):
// every request the site sees came through the proxy (tinyproxy's Via
// header, and the proxy's own log names it), proxy authentication with an
// !ENC! password, the egress policy still judging the target, a sub-collection's
// proxy, and proxy_max_pending measured at the sites.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { freePort } from '../support/ports.ts';
import { startTinyproxy } from '../support/tinyproxy.ts';
import { ProxySet, type ProxyEndpoint } from '../../src/fetch/proxy.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const dir = tempDir('trawl-proxy-');
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run { code: number | null; out: string; err: string }

function trawl(args: string[], stdin?: string): Promise<Run> {
  return runTrawl(args, { stdin: stdin ?? '' });
}

/** A collection file: the start URIs, their hosts in scope, no delay, and more attribs/sections. */
function collection(name: string, starts: string[], more: string, egress = '<attrib name="allow_loopback" type="boolean">yes</attrib>'): string {
  const file = join(dir, `${name}.xml`);
  writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="${name}">
    <attrib name="start_uris" type="list-string">${starts.map((s) => `<member>${s}</member>`).join('')}</attrib>
    <attrib name="delay" type="real">0</attrib>
    <section name="include_domains"><attrib name="exact" type="list-string">${[...new Set(starts.map((s) => new URL(s).hostname))].map((h) => `<member>${h}</member>`).join('')}</attrib></section>
    <section name="trawl_egress">${egress}</section>
    ${more}
  </DomainSpecification></CrawlerConfig>`);
  return file;
}

async function site(ip: string, pages = ['/a.html', '/b.html'], delayMs = 0): Promise<FixtureSite> {
  const routes: Record<string, { kind: 'html'; body: string; delayMs?: number } | { kind: 'robots'; body: string }> = {
    '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
    '/': { kind: 'html', body: `<html><head><title>Home of ${ip}</title></head><body>${pages.map((p) => `<a href="${p}">${p}</a>`).join(' ')}</body></html>`, ...(delayMs ? { delayMs } : {}) },
  };
  for (const p of pages) routes[p] = { kind: 'html', body: `<html><head><title>${p}</title></head><body>${p} of ${ip}</body></html>`, ...(delayMs ? { delayMs } : {}) };
  return startFixtureSite([{ ip, routes }]);
}

const via = (v: string | string[] | undefined): string => (Array.isArray(v) ? v.join(', ') : (v ?? ''));

describe('trawl crawl through a proxy (tinyproxy)', { skip: skipUnless(TOOLS.tinyproxy) }, () => {
  it('sends every request of an http site through the proxy, written host:port without a scheme, robots.txt included', async () => {
    const proxy = await startTinyproxy(dir, '127.0.31.1');
    const s = await site('127.0.31.2');
    try {
      const h = s.host('127.0.31.2');
      const file = collection('plain', [h.url('/')], `<attrib name="proxy" type="list-string"><member>${proxy.host}:${proxy.port}</member></attrib>`);
      const r = await trawl(['crawl', '--data', join(dir, 'plain-data'), file]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(s.fetchedPaths('127.0.31.2').sort(), ['/', '/a.html', '/b.html', '/robots.txt']);
      // tinyproxy adds its Via header to what it forwards: the site saw nothing else.
      for (const req of s.requests) assert.match(via(req.headers.via), /tinyproxy/, `${req.path} did not come through the proxy`);
      const lines = proxy.requests();
      for (const p of ['/robots.txt', '/', '/a.html', '/b.html']) assert.ok(lines.includes(`GET ${h.url(p)} HTTP/1.1`), `the proxy's log has no GET ${p}: ${lines.join(' | ')}`);
    } finally {
      await s.close();
      await proxy.stop();
    }
  });

  it('authenticates to the proxy with Basic credentials whose password is !ENC! encrypted; without credentials the crawl fails naming the proxy refusal', async () => {
    const proxy = await startTinyproxy(dir, '127.0.31.1', { auth: { user: 'crawler', password: 'pr0xy-pass' } });
    const s = await site('127.0.31.3');
    try {
      const data = join(dir, 'auth-data');
      assert.equal((await trawl(['config', 'keygen', '--data', data])).code, 0);
      const enc = await trawl(['config', 'encrypt', '--data', data], 'pr0xy-pass\n');
      assert.equal(enc.code, 0, enc.err);
      const secret = enc.out.trim();
      assert.match(secret, /^!ENC!/);
      const h = s.host('127.0.31.3');
      const file = collection('auth', [h.url('/')], `<attrib name="proxy" type="list-string"><member>http://crawler:${secret}@${proxy.host}:${proxy.port}</member></attrib>`);
      const r = await trawl(['crawl', '--data', data, file]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(s.fetchedPaths('127.0.31.3').sort(), ['/', '/a.html', '/b.html', '/robots.txt']);
      for (const req of s.requests) assert.match(via(req.headers.via), /tinyproxy/);
      // The proxy's credentials are the proxy's: the site never sees them.
      for (const req of s.requests) assert.equal(req.headers['proxy-authorization'], undefined);
      assert.ok(!r.err.includes('pr0xy-pass'), 'the password was printed');

      s.reset();
      const none = collection('auth-none', [h.url('/')], `<attrib name="proxy" type="list-string"><member>${proxy.host}:${proxy.port}</member></attrib>`);
      const n = await trawl(['crawl', '--data', join(dir, 'auth-none-data'), none]);
      assert.notEqual(n.code, 0);
      assert.match(n.err, new RegExp(`proxy authentication failed: check the user name and password in proxy \\(${proxy.host}:${proxy.port} answered 407\\)`));
      assert.deepEqual(s.fetchedPaths('127.0.31.3'), [], 'a request reached the site without the proxy');
    } finally {
      await s.close();
      await proxy.stop();
    }
  });

  it('trawl urltest fetches robots.txt through the proxy too, and says which proxy a URL would use', async () => {
    const proxy = await startTinyproxy(dir, '127.0.31.1');
    const s = await startFixtureSite([{ ip: '127.0.31.11', routes: { '/robots.txt': { kind: 'robots', body: 'User-agent: *\nDisallow: /private/\n' } } }]);
    try {
      const h = s.host('127.0.31.11');
      const file = collection('urltest', [h.url('/')], `<attrib name="proxy" type="list-string"><member>${proxy.host}:${proxy.port}</member></attrib>`);
      const r = await trawl(['urltest', file, '--explain', h.url('/private/x'), h.url('/open')]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /denied {2}http:\/\/127\.0\.31\.11:\d+\/private\/x \(ro\)/);
      assert.match(r.out, new RegExp(`request: GET through proxy ${proxy.host}:${proxy.port};`));
      assert.match(via(s.requests[0]?.headers.via), /tinyproxy/);
      assert.deepEqual(proxy.requests(), [`GET ${h.url('/robots.txt')} HTTP/1.1`]);
    } finally {
      await s.close();
      await proxy.stop();
    }
  });

  it('with several proxies, a site whose proxy cannot be connected to goes through the next one', async () => {
    const live = await startTinyproxy(dir, '127.0.31.1');
    const s = await site('127.0.31.12');
    try {
      const h = s.host('127.0.31.12');
      // Nothing listens there. It goes where the site's host name puts the site's first proxy, so the other one is the fallback.
      const dead = `127.0.31.13:${await freePort('127.0.31.13')}`;
      const first = new ProxySet([{} as ProxyEndpoint, {} as ProxyEndpoint]).first('127.0.31.12');
      const members = first === 0 ? [dead, `${live.host}:${live.port}`] : [`${live.host}:${live.port}`, dead];
      const file = collection('failover', [h.url('/')], `<attrib name="proxy" type="list-string">${members.map((m) => `<member>${m}</member>`).join('')}</attrib>`);
      const r = await trawl(['crawl', '--data', join(dir, 'failover-data'), file]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(s.fetchedPaths('127.0.31.12').sort(), ['/', '/a.html', '/b.html', '/robots.txt']);
      for (const req of s.requests) assert.match(via(req.headers.via), /tinyproxy/);
      assert.equal(live.requests().length, 4);
    } finally {
      await s.close();
      await live.stop();
    }
  });

  it('still applies the egress policy to the target: a denied address is refused before the proxy is asked', async () => {
    const proxy = await startTinyproxy(dir, '127.0.31.1');
    const ok = await site('127.0.31.4');
    const denied = await site('127.0.31.5');
    try {
      const file = collection('egress', [ok.host('127.0.31.4').url('/'), denied.host('127.0.31.5').url('/')],
        `<attrib name="proxy" type="list-string"><member>${proxy.host}:${proxy.port}</member></attrib>`,
        '<attrib name="allow_loopback" type="boolean">yes</attrib><attrib name="deny_ips" type="list-string"><member>127.0.31.5</member></attrib>');
      const r = await trawl(['crawl', '--data', join(dir, 'egress-data'), file]);
      assert.equal(r.code, 0, r.err);
      assert.ok(ok.fetchedPaths('127.0.31.4').includes('/a.html'));
      assert.deepEqual(denied.fetchedPaths('127.0.31.5'), []);
      assert.ok(!proxy.requests().some((l) => l.includes('127.0.31.5')), `the proxy was asked for a denied address: ${proxy.requests().join(' | ')}`);
    } finally {
      await ok.close();
      await denied.close();
      await proxy.stop();
    }
  });

  it('sends a sub-collection through its own proxy, and the rest of the collection through the collection\'s', async () => {
    const main = await startTinyproxy(dir, '127.0.31.1');
    const news = await startTinyproxy(dir, '127.0.31.6');
    const s = await site('127.0.31.7', ['/a.html', '/news/1.html']);
    try {
      const h = s.host('127.0.31.7');
      const file = collection('subproxy', [h.url('/')], `
        <attrib name="proxy" type="list-string"><member>${main.host}:${main.port}</member></attrib>
        <SubDomain name="news">
          <section name="include_uris"><attrib name="prefix" type="list-string"><member>${h.url('/news/')}</member></attrib></section>
          <attrib name="proxy" type="list-string"><member>http://${news.host}:${news.port}</member></attrib>
        </SubDomain>`);
      const r = await trawl(['crawl', '--data', join(dir, 'subproxy-data'), file]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(s.fetchedPaths('127.0.31.7').sort(), ['/', '/a.html', '/news/1.html', '/robots.txt']);
      assert.deepEqual(news.requests(), [`GET ${h.url('/news/1.html')} HTTP/1.1`]);
      assert.ok(main.requests().includes(`GET ${h.url('/a.html')} HTTP/1.1`));
      assert.ok(!main.requests().some((l) => l.includes('/news/')));
    } finally {
      await s.close();
      await main.stop();
      await news.stop();
    }
  });

  it('proxy_max_pending 1: requests to three sites through the proxy never overlap, although each site and the crawl allow more', async () => {
    const proxy = await startTinyproxy(dir, '127.0.31.1');
    const ips = ['127.0.31.8', '127.0.31.9', '127.0.31.10'];
    const sites = await Promise.all(ips.map((ip) => site(ip, ['/a.html', '/b.html'], 150)));
    try {
      const starts = ips.map((ip, i) => sites[i]!.host(ip).url('/'));
      const file = collection('pending', starts, `
        <attrib name="proxy" type="list-string"><member>${proxy.host}:${proxy.port}</member></attrib>
        <attrib name="proxy_max_pending" type="integer">1</attrib>
        <attrib name="max_pending" type="integer">4</attrib>
        <attrib name="enforce_delay_per_ip" type="boolean">no</attrib>`);
      const r = await trawl(['crawl', '--data', join(dir, 'pending-data'), file]);
      assert.equal(r.code, 0, r.err);
      const all = sites.flatMap((x) => x.requests).filter((q) => q.path !== '/robots.txt').sort((a, b) => a.startMs - b.startMs);
      assert.equal(all.length, 9);
      for (let i = 1; i < all.length; i++) {
        // The server's end is its last write; the next request may start a hair before the client read it.
        assert.ok(all[i]!.startMs >= all[i - 1]!.endMs! - 5, `${all[i]!.host}${all[i]!.path} started while ${all[i - 1]!.host}${all[i - 1]!.path} was in flight`);
      }
    } finally {
      for (const x of sites) await x.close();
      await proxy.stop();
    }
  });
});
