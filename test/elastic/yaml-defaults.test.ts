// Elastic's defaults for an Elastic Open Crawler YAML collection, where they differ from
// MS-FSCCFG's (docs/elastic-migration.md, "Defaults"), shown by crawling loopback sites:
// what the site's log says was fetched, and which documents the console sink printed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite, type RouteSpec } from '../support/fixture-site.ts';
import { consoleEntries } from '../support/open-crawler-console.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const page = (title: string, links: string[] = []): RouteSpec => ({
  kind: 'html',
  body: `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`,
});

describe('Elastic defaults for a YAML collection', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-elastic-defaults-'));
  const sites: FixtureSite[] = [];
  after(async () => {
    for (const s of sites) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function crawl(name: string, yaml: string, extra: string[] = []) {
    const file = join(dir, `${name}.yml`);
    writeFileSync(file, yaml);
    const r = await runTrawl(['crawl', '--data', join(dir, `${name}-data`), ...extra, file], { timeoutMs: 120_000 });
    const docs = consoleEntries(r.out).map((e) => e.url);
    return { ...r, docs: docs.map((u) => new URL(u).pathname).sort() };
  }
  const yamlFor = (origin: string, more = '') => `domains:\n  - url: ${origin}\nloopback_allowed: true\noutput_sink: console\n${more}`;

  it('no extension filter, and content types as Elastic decides: HTML is indexed whatever the extension; other types only when binary extraction names them', async () => {
    const site = await startFixtureSite([{
      ip: '127.0.134.11',
      routes: {
        '/': page('home', ['/photo.jpg', '/archive.zip', '/report.pdf', '/data.xml', '/notes.txt']),
        '/photo.jpg': page('an HTML page named .jpg'),
        '/archive.zip': page('an HTML page named .zip'),
        '/report.pdf': { kind: 'binary', bytes: new TextEncoder().encode('%PDF-1.4 not really'), contentType: 'application/pdf' },
        '/data.xml': { kind: 'text', body: '<?xml version="1.0"?><a/>', contentType: 'application/xml' },
        '/notes.txt': { kind: 'text', body: 'plain text' },
      },
    }]);
    sites.push(site);
    const h = site.hosts[0]!;
    const plain = await crawl('types', yamlFor(h.origin));
    assert.equal(plain.code, 0, plain.err);
    // Every link is fetched: no extension is refused before the response says what it is.
    for (const p of ['/photo.jpg', '/archive.zip', '/report.pdf', '/data.xml', '/notes.txt']) assert.ok(site.fetchedPaths().includes(p), `${p} was not fetched`);
    assert.deepEqual(plain.docs, ['/', '/archive.zip', '/photo.jpg']);

    site.reset();
    const binary = await crawl('types-binary', yamlFor(h.origin, 'binary_content_extraction_enabled: true\nbinary_content_extraction_mime_types: [application/pdf]\n'));
    assert.equal(binary.code, 0, binary.err);
    assert.deepEqual(binary.docs, ['/', '/archive.zip', '/photo.jpg', '/report.pdf']);
  });

  it('robots.txt Sitemap: lines are followed unless sitemap_discovery_disabled', async () => {
    const site = await startFixtureSite([{
      ip: '127.0.134.12',
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\nSitemap: /sitemap.xml\n' },
        '/': page('home'),
        '/sitemap.xml': { kind: 'text', contentType: 'application/xml', body: '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{origin}/only-in-sitemap.html</loc></url></urlset>' },
        '/only-in-sitemap.html': page('listed in the sitemap only'),
      },
    }]);
    sites.push(site);
    const h = site.hosts[0]!;
    site.setRoute(h.ip, '/sitemap.xml', { kind: 'text', contentType: 'application/xml', body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${h.origin}/only-in-sitemap.html</loc></url></urlset>` });
    const on = await crawl('sitemaps-on', yamlFor(h.origin));
    assert.equal(on.code, 0, on.err);
    assert.ok(site.fetchedPaths().includes('/sitemap.xml'));
    assert.deepEqual(on.docs, ['/', '/only-in-sitemap.html']);

    site.reset();
    const off = await crawl('sitemaps-off', yamlFor(h.origin, 'sitemap_discovery_disabled: true\n'));
    assert.equal(off.code, 0, off.err);
    assert.ok(!site.fetchedPaths().includes('/sitemap.xml'));
    assert.deepEqual(off.docs, ['/']);
  });

  it('robots.txt is read again when each crawl starts', async () => {
    const site = await startFixtureSite([{ ip: '127.0.134.13', routes: { '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' }, '/': page('home', ['/a.html']), '/a.html': page('a') } }]);
    sites.push(site);
    const h = site.hosts[0]!;
    const r = await crawl('robots-each-crawl', yamlFor(h.origin), ['--cycles', '2']);
    assert.equal(r.code, 0, r.err);
    assert.equal(site.fetchedPaths().filter((p) => p === '/robots.txt').length, 2);
  });

  it('redirects are followed within the domains, up to max_redirects', async () => {
    const site = await startFixtureSite([
      {
        ip: '127.0.134.14',
        routes: {
          '/': page('home', ['/moved', '/away', '/chain1']),
          '/moved': { kind: 'redirect', to: '/new.html', status: 301 },
          '/new.html': page('the new place'),
          '/away': { kind: 'redirect', to: 'http://127.0.134.15:{port}/elsewhere.html' },
          '/chain1': { kind: 'redirect', to: '/chain2' },
          '/chain2': { kind: 'redirect', to: '/chain3' },
          '/chain3': { kind: 'redirect', to: '/end.html' },
          '/end.html': page('the end of a long chain'),
        },
      },
      { ip: '127.0.134.15', routes: { '/elsewhere.html': page('outside the domains') } },
    ]);
    sites.push(site);
    const [h, other] = site.hosts;
    site.setRoute(h!.ip, '/away', { kind: 'redirect', to: `${other!.origin}/elsewhere.html` });
    const r = await crawl('redirects', yamlFor(h!.origin, 'max_redirects: 2\n'));
    assert.equal(r.code, 0, r.err);
    assert.ok(r.docs.includes('/new.html'), r.docs.join(' '));
    assert.deepEqual(other!.requests.map((q) => q.path), []);
    assert.ok(!site.fetchedPaths(h!.ip).includes('/end.html'), 'the chain of 3 redirects was followed beyond max_redirects 2');
  });
});
