// JavaScript rendering (use_javascript) through the real `trawl crawl`
// process and Debian's Chromium, on a site whose links appear only once its
// script runs (inserted by script, fetched from a JSON endpoint, pushed by
// client-side routing), a script on another loopback address, a page that
// hangs its renderer and one that crashes it. Everything asserted comes from
// the servers' logs and the crawl store.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { openContentStore } from '../../src/store/open-content-store.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import type { UriRecord } from '../../src/store/crawl-store.ts';
import { startFixtureSite, type FixtureSite, type Handler, type HostSpec } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { skipUnless, TOOLS, toolPath } from '../support/system-tools.ts';
import { runTrawl, TRAWL_CLI } from '../support/trawl-cli.ts';

const MAIN = '127.0.35.1';
const OTHER = '127.0.35.2';
const SLOW = '127.0.35.3';
const skip = skipUnless(TOOLS.chromium);

const APP_JS = `
document.getElementById('app').insertAdjacentHTML('beforeend', '<a href="/js-only.html">added by script</a>');
fetch('/api/links.json').then((r) => r.json()).then((j) => {
  document.getElementById('app').insertAdjacentHTML('beforeend', '<a href="' + j.href + '">from fetch</a>');
});
history.pushState({}, '', '/routed.html');
try { new WebSocket('ws://${MAIN}:9/socket'); } catch (e) {}
`;

function page(title: string, body = ''): { kind: 'html'; body: string } {
  return { kind: 'html', body: `<!doctype html><html><head><title>${title}</title></head><body><p>${title}</p>${body}</body></html>` };
}

function jsSite(opts: { slowMs?: number } = {}): HostSpec[] {
  return [
    {
      ip: MAIN,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nDisallow: /private/\n' },
        '/': page('home', '<a href="/plain.html">plain</a> <a href="/ext.html">ext</a> <a href="/hang.html">hang</a> <a href="/crash.html">crash</a> <a href="/c1.html">c1</a> <a href="/c2.html">c2</a> <a href="/c3.html">c3</a> <div id="app"></div><script src="/app.js"></script><script src="/private/blocked.js"></script>'),
        '/app.js': { kind: 'text', body: APP_JS, contentType: 'application/javascript' },
        '/private/blocked.js': { kind: 'text', body: 'document.body.insertAdjacentHTML("beforeend", "<a href=/robots-only.html>r</a>");', contentType: 'application/javascript' },
        '/api/links.json': { kind: 'text', body: '{"href":"/fetched.html"}', contentType: 'application/json', ...(opts.slowMs ? { delayMs: opts.slowMs } : {}) },
        '/plain.html': page('plain'),
        '/js-only.html': page('js-only'),
        '/fetched.html': page('fetched'),
        '/routed.html': page('routed'),
        '/robots-only.html': page('robots-only'),
        '/ext-only.html': page('ext-only'),
        '/ext.html': (_req, res, ctx) => {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(`<!doctype html><html><body><p>ext</p>${['/lib.js', '/lib2.js', '/lib3.js'].map((p) => `<script src="${ctx.site.host(OTHER).url(p)}"></script>`).join('')}</body></html>`);
        },
        '/c1.html': slowScriptPage, '/c2.html': slowScriptPage, '/c3.html': slowScriptPage,
        '/hang.html': page('hang', '<script>for (;;) {}</script>'),
        '/crash.html': page('crash', '<script>const keep = []; for (;;) keep.push(new Array(1e6).fill(keep.length));</script>'),
      },
    },
    {
      ip: OTHER,
      routes: {
        '/': page('other home', '<a href="/other-page.html">o</a>'),
        '/lib.js': { kind: 'text', body: 'document.body.insertAdjacentHTML("beforeend", "<a href=/ext-only.html>e</a>");', contentType: 'application/javascript' },
        '/other-page.html': page('other page'),
        '/lib2.js': { kind: 'text', body: 'window.two = 2;', contentType: 'application/javascript' },
        '/lib3.js': { kind: 'text', body: 'window.three = 3;', contentType: 'application/javascript' },
      },
    },
    { ip: SLOW, routes: { '/slow.json': { kind: 'text', body: '{}', contentType: 'application/json', delayMs: 800 } } },
  ];
}

/** A page whose script fetches a JSON document that takes 0.8 s from the SLOW host: its render lasts that long. */
const slowScriptPage: Handler = (req, res, ctx) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html><body><p>${req.url}</p><script>fetch(${JSON.stringify(ctx.site.host(SLOW).url(`/slow.json?from=${req.url ?? ''}`))});</script></body></html>`);
};

function writeConfig(site: FixtureSite, attribs: string, egress = '', browser = toolPath(TOOLS.chromium), render = ''): string {
  const config = join(tempDir('trawl-render-cfg-'), 'render.xml');
  writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="js">
  <attrib name="start_uris" type="list-string"><member>${site.host(MAIN).url('/')}</member></attrib>
  <attrib name="delay" type="real">0</attrib>
  <attrib name="max_pending" type="integer">2</attrib>
  ${attribs}
  <section name="include_domains"><attrib name="exact" type="list-string"><member>${MAIN}</member></attrib></section>
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib>${egress}</section>
  <section name="trawl_render"><attrib name="browser" type="string">${browser}</attrib><attrib name="page_timeout" type="integer">4</attrib><attrib name="page_memory" type="integer">64</attrib><attrib name="network_idle" type="integer">600</attrib>${render}</section>
</DomainSpecification></CrawlerConfig>`);
  return config;
}

const JS_ON = '<attrib name="use_javascript" type="boolean">yes</attrib><attrib name="javascript_delay" type="real">0</attrib>';

async function records(data: string): Promise<UriRecord[]> {
  const store = new SqliteCrawlStore(join(data, 'trawl.db'));
  try {
    return await store.listRecords('js');
  } finally {
    await store.close();
  }
}

async function storedBody(data: string, config: string, rec: UriRecord | undefined): Promise<string> {
  assert.ok(rec?.contentRef, `${rec?.url} has stored content`);
  const content = openContentStore(join(data, 'content', 'js'), { ...resolveSettings(readConfigXml(readFileSync(config, 'utf8'), 'render.xml').document.collections[0]!).storage });
  const doc = await content.get(rec.contentRef);
  return Buffer.from(doc!.body).toString('utf8');
}

/** The rendering line of the crawl log: the browser's launches and restarts. */
function renderSummary(data: string): { launches: number; restarts: number; outOfScope: number } {
  const log = readFileSync(join(data, 'logs', 'crawl.log'), 'utf8');
  const m = /Chromium started (\d+) times \((\d+) restarts\)/.exec(log);
  const o = /\((\d+) outside the scope, never crawled as pages\)/.exec(log);
  assert.ok(m && o, 'the crawl log has the rendering line');
  return { launches: Number(m[1]), restarts: Number(m[2]), outOfScope: Number(o[1]) };
}

const byPath = (site: FixtureSite, recs: UriRecord[], path: string): UriRecord | undefined => recs.find((r) => r.url === site.host(MAIN).url(path));

describe('JavaScript rendering (use_javascript)', { skip, timeout: 180_000 }, () => {
  it('crawls the links that exist only after rendering, and not without use_javascript; a hanging and a crashing page are skipped with js', async () => {
    const site = await startFixtureSite(jsSite());
    try {
      // Without use_javascript: only the links of the HTML as served.
      const plainData = tempDir();
      const plain = await runTrawl(['crawl', '--data', plainData, '--json', writeConfig(site, '')], { timeoutMs: 60_000 });
      assert.equal(plain.code, 0, plain.err);
      const plainPaths = site.fetchedPaths(MAIN);
      for (const p of ['/js-only.html', '/fetched.html', '/routed.html', '/api/links.json', '/ext-only.html']) assert.ok(!plainPaths.includes(p), `${p} not fetched without use_javascript`);
      assert.ok(plainPaths.includes('/plain.html'));
      assert.deepEqual(site.fetchedPaths(OTHER), []);
      // The crawl follows <script src> as a link either way (link_extraction): counted to tell the render's own fetch apart.
      const appAsLink = plainPaths.filter((p) => p === '/app.js').length;
      site.reset();

      // With use_javascript, and javascript_delay 0.4 s between the dependency fetches from one host.
      const data = tempDir();
      const config = writeConfig(site, JS_ON.replace('"real">0<', '"real">0.4<'), '', undefined, '<attrib name="restart_after" type="integer">4</attrib>');
      const r = await runTrawl(['crawl', '--data', data, '--json', config], { timeoutMs: 150_000 });
      assert.equal(r.code, 0, r.err);
      const paths = site.fetchedPaths(MAIN);
      for (const p of ['/js-only.html', '/fetched.html', '/routed.html', '/plain.html', '/ext-only.html']) assert.ok(paths.includes(p), `${p} crawled with use_javascript (server saw ${paths.join(' ')})`);
      // The main document is the response already fetched: the page is requested once, its script
      // once more than without rendering, as the page's dependency.
      assert.equal(paths.filter((p) => p === '/').length, 1);
      assert.equal(paths.filter((p) => p === '/app.js').length, appAsLink + 1);
      // robots.txt applies to a dependency: the disallowed script is never requested, and its link never appears.
      assert.ok(!paths.includes('/private/blocked.js'));
      assert.ok(!paths.includes('/robots-only.html'));
      // The other host's script is fetched as a dependency, never crawled as a page.
      assert.deepEqual(site.fetchedPaths(OTHER).filter((p) => p !== '/robots.txt'), ['/lib.js', '/lib2.js', '/lib3.js']);
      // javascript_delay: the three scripts of the other host were fetched at least 0.4 s apart (a lower bound: load only widens it).
      assert.ok(site.minStartGapMs(OTHER, (p) => p === '/robots.txt') >= 390, `gap ${site.minStartGapMs(OTHER, (p) => p === '/robots.txt')} ms`);
      const recs = await records(data);
      assert.ok(!recs.some((x) => x.url.startsWith(site.host(OTHER).origin)), 'no record of the other host');
      assert.ok(!recs.some((x) => x.url.endsWith('.json')), 'no record of the JSON the script fetched');
      // The renderer's failures: tried twice, then skipped with js; the rest of the site completed.
      for (const p of ['/hang.html', '/crash.html']) {
        const rec = byPath(site, recs, p);
        assert.equal(rec?.skipCode, 'js', `${p}: ${JSON.stringify(rec)}`);
      }
      assert.equal(byPath(site, recs, '/routed.html')?.status, 'stored');
      // Not javascript_keep_html: the stored document is the original.
      const home = await storedBody(data, config, byPath(site, recs, '/'));
      assert.ok(home.includes('id="app"></div>') && !home.includes('js-only.html'), home);
      // restart_after 4: a dozen pages rendered by more than one browser process.
      const summary = renderSummary(data);
      assert.ok(summary.launches >= 3 && summary.restarts >= 2, JSON.stringify(summary));
      // Counted apart: the other host's three scripts and the three slow JSON documents (more if a
      // render was tried again), outside include_domains; the server logs above show none crawled as a page.
      assert.ok(summary.outOfScope >= 6, JSON.stringify(summary));
    } finally {
      await site.close();
    }
  });

  it('javascript_keep_html stores the rendered HTML; a dependency on an address the egress policy refuses is not fetched unless allowed', async () => {
    const site = await startFixtureSite(jsSite());
    try {
      const data = tempDir();
      const denied = `<attrib name="deny_ips" type="list-string"><member>${OTHER}</member></attrib>`;
      const config = writeConfig(site, `${JS_ON}<attrib name="javascript_keep_html" type="boolean">yes</attrib>`, denied, undefined,
        '<attrib name="contexts" type="integer">1</attrib><attrib name="total_memory" type="integer">64</attrib>');
      const r = await runTrawl(['crawl', '--data', data, '--json', config], { timeoutMs: 150_000 });
      assert.equal(r.code, 0, r.err);
      const recs = await records(data);
      const home = await storedBody(data, config, byPath(site, recs, '/'));
      assert.ok(home.includes('href="/js-only.html"') && home.includes('href="/fetched.html"'), home);
      // The refused address saw no request at all, and the link its script would add was never found.
      assert.deepEqual(site.fetchedPaths(OTHER), []);
      assert.ok(!site.fetchedPaths(MAIN).includes('/ext-only.html'));
      assert.ok(site.fetchedPaths(MAIN).includes('/js-only.html'));
      // contexts 1: one page rendered at a time, so the three pages' slow requests never overlapped.
      assert.equal(site.fetchedPaths(SLOW).filter((p) => p !== '/robots.txt').length, 3);
      assert.equal(site.maxConcurrency(SLOW), 1);
      // total_memory 64 MiB, below what Chromium takes: the browser was restarted (restart_after is 200).
      const summary = renderSummary(data);
      assert.ok(summary.restarts >= 1, JSON.stringify(summary));
    } finally {
      await site.close();
    }
  });

  it('kill -9 while pages render loses nothing: the next run completes the crawl', async () => {
    // The JSON a page's script fetches takes 1.5 s: the kill lands while the page renders.
    const site = await startFixtureSite(jsSite({ slowMs: 1500 }));
    try {
      const data = tempDir();
      const config = writeConfig(site, JS_ON);
      const child = spawn(process.execPath, [TRAWL_CLI, 'crawl', '--data', data, '--json', config], { stdio: ['ignore', 'ignore', 'ignore'] });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      // Bounded wait for the render to be under way (the slow dependency asked for).
      for (let i = 0; i < 600 && !site.fetchedPaths(MAIN).includes('/api/links.json'); i++) await sleep(100);
      assert.ok(site.fetchedPaths(MAIN).includes('/api/links.json'), 'the render began');
      child.kill('SIGKILL');
      await exited;
      const again = await runTrawl(['crawl', '--data', data, '--json', config], { timeoutMs: 150_000 });
      assert.equal(again.code, 0, again.err);
      const recs = await records(data);
      for (const p of ['/', '/js-only.html', '/fetched.html', '/routed.html', '/plain.html']) assert.equal(byPath(site, recs, p)?.status, 'stored', `${p} stored after the kill`);
      assert.equal(byPath(site, recs, '/hang.html')?.skipCode, 'js');
    } finally {
      await site.close();
    }
  });

  it('says what to install when use_javascript is set and there is no Chromium', async () => {
    const site = await startFixtureSite(jsSite());
    try {
      const config = writeConfig(site, JS_ON, '', '/nonexistent/chromium');
      const r = await runTrawl(['crawl', '--data', tempDir(), config], { timeoutMs: 60_000 });
      assert.notEqual(r.code, 0);
      assert.match(r.err, /TRAWL_ERR_RENDER_BROWSER/);
      assert.match(r.err, /apt-get install chromium/);
      assert.deepEqual(site.fetchedPaths(MAIN), []);
    } finally {
      await site.close();
    }
  });
});
