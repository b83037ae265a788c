// `trawl crawl URL` with the one-shot options (--delay, --depth, --user-agent, --sitemaps), asserted on what the site saw.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { runTrawl, type TrawlRun } from '../support/trawl-cli.ts';

const dir = tempDir('trawl-one-shot-');
after(() => rmSync(dir, { recursive: true, force: true }));

function trawl(args: string[]): Promise<TrawlRun> {
  return runTrawl(args);
}

/** A chain / → /a.html → /b.html → /c.html, robots.txt naming a sitemap that lists /from-sitemap.html. */
async function chain(ip: string): Promise<FixtureSite> {
  const page = (title: string, next?: string): string => `<html><head><title>${title}</title></head><body>${title}${next ? ` <a href="${next}">next</a>` : ''}</body></html>`;
  return startFixtureSite([{
    ip,
    routes: {
      '/robots.txt': (req, res, { host }) => {
        res.setHeader('content-type', 'text/plain');
        res.end(`User-agent: *\nAllow: /\nSitemap: ${host.url('/sitemap.xml')}\n`);
      },
      '/sitemap.xml': (req, res, { host }) => {
        res.setHeader('content-type', 'application/xml');
        res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${host.url('/from-sitemap.html')}</loc></url></urlset>`);
      },
      '/': { kind: 'html', body: page('Home', '/a.html') },
      '/a.html': { kind: 'html', body: page('A', '/b.html') },
      '/b.html': { kind: 'html', body: page('B', '/c.html') },
      '/c.html': { kind: 'html', body: page('C') },
      '/from-sitemap.html': { kind: 'html', body: page('S') },
    },
  }]);
}

describe('trawl crawl URL with one-shot options', () => {
  it('--depth 1 fetches the URL and what it links to, no further; --user-agent is the header sent; --delay spaces the requests', async () => {
    const s = await chain('127.0.6.11');
    try {
      const r = await trawl(['crawl', '--data', join(dir, 'depth'), '--allow-loopback', '--depth', '1', '--delay', '0.4', '--user-agent', 'probe/1.0 (+https://example.test/bot)', s.host('127.0.6.11').url('/')]);
      assert.equal(r.code, 0, r.err);
      const pages = s.fetchedPaths('127.0.6.11').filter((p) => p !== '/robots.txt');
      assert.deepEqual(pages, ['/', '/a.html']);
      for (const req of s.requests) assert.equal(req.headers['user-agent'], 'probe/1.0 (+https://example.test/bot)', req.path);
      assert.ok(s.minStartGapMs('127.0.6.11') >= 350, `requests ${s.minStartGapMs('127.0.6.11')} ms apart`);
    } finally {
      await s.close();
    }
  });

  it('--sitemaps reads the sitemap robots.txt names; without it the sitemap is not fetched', async () => {
    const s = await chain('127.0.6.12');
    try {
      const url = s.host('127.0.6.12').url('/');
      const without = await trawl(['crawl', '--data', join(dir, 'nositemaps'), '--allow-loopback', '--delay', '0', url]);
      assert.equal(without.code, 0, without.err);
      assert.ok(!s.fetchedPaths('127.0.6.12').includes('/sitemap.xml'));
      s.reset();
      const withIt = await trawl(['crawl', '--data', join(dir, 'sitemaps'), '--allow-loopback', '--delay', '0', '--sitemaps', url]);
      assert.equal(withIt.code, 0, withIt.err);
      assert.ok(s.fetchedPaths('127.0.6.12').includes('/sitemap.xml'));
      assert.ok(s.fetchedPaths('127.0.6.12').includes('/from-sitemap.html'));
    } finally {
      await s.close();
    }
  });

  it('the one-shot options are for URLs: with only a configuration file they are a usage error', async () => {
    const r = await trawl(['crawl', '--depth', '1', '--user-agent', 'x', join(dir, 'none.xml')]);
    assert.equal(r.code, 64);
    assert.match(r.err, /--depth, --user-agent apply to the URLs given on the command line/);
    const bad = await trawl(['crawl', '--delay', '-1', 'http://127.0.0.1:9/']);
    assert.equal(bad.code, 64);
    assert.match(bad.err, /--delay must be a number of seconds/);
  });

  it('--cycles 2 runs a second refresh cycle after the first, refetching every page, with a summary each', async () => {
    const s = await chain('127.0.6.15');
    try {
      const r = await trawl(['crawl', '--data', join(dir, 'cycles'), '--allow-loopback', '--delay', '0', '--cycles', '2', '--json', s.host('127.0.6.15').url('/')]);
      assert.equal(r.code, 0, r.err);
      const out = JSON.parse(r.out) as { collections: Array<{ epoch: number; complete: boolean; requests: number }> };
      assert.deepEqual(out.collections.map((c) => [c.epoch, c.complete]), [[1, true], [2, true]]);
      const pages = s.fetchedPaths('127.0.6.15').filter((p) => p !== '/robots.txt' && p !== '/sitemap.xml');
      // Each page once per cycle.
      for (const p of ['/', '/a.html', '/b.html', '/c.html']) assert.equal(pages.filter((x) => x === p).length, 2, `${p}: ${pages.join(' ')}`);
      assert.equal(out.collections[1]!.requests, out.collections[0]!.requests);
    } finally {
      await s.close();
    }
  });

  it('--cycles takes a whole number of at least 1', async () => {
    const r = await trawl(['crawl', '--data', join(dir, 'cycles0'), '--cycles', '0', 'http://127.0.0.1:9/']);
    assert.equal(r.code, 64, r.err);
    assert.match(r.err, /--cycles/);
  });
});

