// One Chromium for every collection that renders in a process: the real
// `trawl serve` with two use_javascript collections whose pages render at
// the same time (each page's script waits, at the server, for the other
// collection's page to ask too). Asserted from /proc (the browser processes
// below the daemon), the collections' event logs and the servers' logs.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite, type Handler } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe } from '../support/daemon.ts';
import { freePort } from '../support/ports.ts';
import { skipUnless, TOOLS, toolPath } from '../support/system-tools.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const A = '127.0.35.21';
const B = '127.0.35.22';
const skip = skipUnless(TOOLS.chromium);

const APP_JS = `fetch('/api/links.json').then((r) => r.json()).then((j) => {
  document.body.insertAdjacentHTML('beforeend', '<a href="' + j.href + '">from fetch</a>');
});`;

function html(title: string, body = ''): { kind: 'html'; body: string } {
  return { kind: 'html', body: `<!doctype html><html><head><title>${title}</title></head><body><p>${title}</p>${body}</body></html>` };
}

/**
 * Two sites, one per collection. Each home page's script fetches
 * /api/links.json, which answers only once the other site's has been asked
 * too (20 s at most): both collections have a page under way in the browser
 * at once. `slowMs`: B's JS-only page fetches a JSON document that takes that long.
 */
function sites(slowMs: number, others: number): Promise<FixtureSite> {
  const asked = new Set<string>();
  const api = (me: string, other: string): Handler => (_req, res) => {
    asked.add(me);
    void (async () => {
      for (let i = 0; i < 200 && !asked.has(other); i++) await sleep(100);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ href: `/js-only-${me}.html` }));
    })();
  };
  const host = (me: string, other: string, extra: Record<string, ReturnType<typeof html> | Handler | { kind: 'text'; body: string; contentType: string; delayMs?: number }>) => ({
    '/robots.txt': { kind: 'robots' as const, body: 'User-agent: *\nAllow: /\n' },
    '/': html(`home ${me}`, '<script src="/app.js"></script>'),
    '/app.js': { kind: 'text' as const, body: APP_JS, contentType: 'application/javascript' },
    '/api/links.json': api(me, other),
    ...extra,
  });
  const pagesOfA: Record<string, ReturnType<typeof html>> = {};
  for (let i = 0; i < others; i++) pagesOfA[`/p${i}.html`] = html(`p${i}`);
  return startFixtureSite([
    { ip: A, routes: host('a', 'b', { '/js-only-a.html': html('js-only a', Object.keys(pagesOfA).map((p) => `<a href="${p}">${p}</a>`).join(' ')), ...pagesOfA }) },
    {
      ip: B,
      routes: host('b', 'a', {
        '/js-only-b.html': html('js-only b', '<script>fetch("/slow.json").then(() => document.body.insertAdjacentHTML("beforeend", "<a href=/after-slow.html>s</a>"));</script>'),
        '/slow.json': { kind: 'text', body: '{}', contentType: 'application/json', delayMs: slowMs },
        '/after-slow.html': html('after slow'),
      }),
    },
  ]);
}

function collectionXml(dir: string, name: string, s: FixtureSite, ip: string, render = ''): string {
  const path = join(dir, `${name}.xml`);
  writeFileSync(path, `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="${name}">
  <attrib name="start_uris" type="list-string"><member>${s.host(ip).url('/')}</member></attrib>
  <attrib name="delay" type="real">0</attrib><attrib name="refresh" type="real">600</attrib>
  <attrib name="use_javascript" type="boolean">yes</attrib><attrib name="javascript_delay" type="real">0</attrib>
  <section name="include_domains"><attrib name="exact" type="list-string"><member>${ip}</member></attrib></section>
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
  <section name="trawl_render"><attrib name="browser" type="string">${toolPath(TOOLS.chromium)}</attrib><attrib name="page_timeout" type="integer">40</attrib><attrib name="network_idle" type="integer">300</attrib>${render}</section>
</DomainSpecification></CrawlerConfig>`);
  return path;
}

/** Chromium browser processes below `root` (the browser's own process: no --type= argument), from /proc. */
function browserProcesses(root: number): number {
  const parent = new Map<number, number>();
  const browsers: number[] = [];
  for (const n of readdirSync('/proc')) {
    const pid = Number(n);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      parent.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
      if (/(^|\/)chromium$/.test(argv[0] ?? '') && !argv.some((a) => a.startsWith('--type='))) browsers.push(pid);
    } catch {
      // gone
    }
  }
  return browsers.filter((pid) => {
    let p = parent.get(pid);
    for (let hops = 0; p !== undefined && p > 1 && hops < 16; hops++) {
      if (p === root) return true;
      p = parent.get(p);
    }
    return false;
  }).length;
}

/** The collection's rendering line (written as its cycle ends), once it is there. */
function renderLine(data: string, name: string): { rendered: number; retried: number; skipped: number; launches: number; restarts: number } | undefined {
  const file = join(data, 'logs', 'collections', `${name}.log`);
  if (!existsSync(file)) return undefined;
  const m = /rendering: (\d+) pages rendered, (\d+) tried again, (\d+) skipped \(js\).*?Chromium started (\d+) times \((\d+) restarts\)/.exec(readFileSync(file, 'utf8'));
  return m ? { rendered: Number(m[1]), retried: Number(m[2]), skipped: Number(m[3]), launches: Number(m[4]), restarts: Number(m[5]) } : undefined;
}

interface Run {
  site: FixtureSite;
  lines: { a: NonNullable<ReturnType<typeof renderLine>>; b: NonNullable<ReturnType<typeof renderLine>> };
  maxBrowsers: number;
}

/** Starts trawl serve, adds both collections, and samples the browser processes until both cycles ended (90 s at most). */
async function crawlBoth(opts: { slowMs: number; others: number; renderA?: string }): Promise<Run> {
  const site = await sites(opts.slowMs, opts.others);
  const data = tempDir('trawl-render-shared-');
  const port = await freePort();
  let daemon: ChildProcess | undefined;
  try {
    daemon = await spawnServe(['--data', data, '--port', String(port), '--allow-loopback']);
    const admin = (...args: string[]) => runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, ...args], { timeoutMs: 30_000 });
    for (const [name, ip, render] of [['ja', A, opts.renderA ?? ''], ['jb', B, '']] as const) {
      const r = await admin('add', collectionXml(data, name, site, ip, render));
      assert.equal(r.code, 0, r.err);
    }
    let maxBrowsers = 0;
    let a: ReturnType<typeof renderLine>;
    let b: ReturnType<typeof renderLine>;
    for (let i = 0; i < 450 && !((a = renderLine(data, 'ja')) && (b = renderLine(data, 'jb'))); i++) {
      maxBrowsers = Math.max(maxBrowsers, browserProcesses(daemon.pid!));
      await sleep(200);
    }
    assert.ok(a && b, `both cycles ended: ${JSON.stringify({ a, b })}`);
    return { site, lines: { a, b }, maxBrowsers };
  } catch (err) {
    await site.close();
    throw err;
  } finally {
    daemon?.kill('SIGKILL');
  }
}

describe('one Chromium for every collection that renders', { skip, timeout: 180_000 }, () => {
  it('trawl serve with two rendering collections runs one browser, and both collections\' JS-only links are crawled', async () => {
    const { site, lines, maxBrowsers } = await crawlBoth({ slowMs: 0, others: 2 });
    try {
      // Both home pages were under way at once (each JSON answer waited for the other's request).
      assert.ok(site.fetchedPaths(A).includes('/js-only-a.html'), site.fetchedPaths(A).join(' '));
      assert.ok(site.fetchedPaths(B).includes('/js-only-b.html'), site.fetchedPaths(B).join(' '));
      assert.ok(site.fetchedPaths(B).includes('/after-slow.html'), site.fetchedPaths(B).join(' '));
      // One browser started in all, by whichever collection needed it first; never two at once.
      assert.equal(lines.a.launches + lines.b.launches, 1, JSON.stringify(lines));
      assert.equal(maxBrowsers, 1);
    } finally {
      await site.close();
    }
  });

  it('a restart for one collection (restart_after 1) does not cut short the other\'s page under way', async () => {
    // B's JS-only page waits 3 s for its JSON while A renders its pages, each one followed by a restart.
    const { site, lines } = await crawlBoth({ slowMs: 3000, others: 4, renderA: '<attrib name="restart_after" type="integer">1</attrib>' });
    try {
      assert.ok(lines.a.restarts >= 3, JSON.stringify(lines));
      // A's pages were rendered, each followed by a restart, while B's page waited for its JSON.
      const slow = site.host(B).requests.find((q) => q.path === '/slow.json');
      assert.ok(slow?.endMs !== undefined);
      const during = site.host(A).requests.filter((q) => /^\/p\d\.html$/.test(q.path) && q.startMs > slow.startMs && q.startMs < slow.endMs!);
      assert.ok(during.length >= 2, `A's pages during B's render: ${during.length}`);
      // B's pages all rendered the first time: none failed, none was tried again.
      assert.deepEqual([lines.b.retried, lines.b.skipped], [0, 0], JSON.stringify(lines));
      assert.ok(site.fetchedPaths(B).includes('/after-slow.html'), site.fetchedPaths(B).join(' '));
      for (let i = 0; i < 4; i++) assert.ok(site.fetchedPaths(A).includes(`/p${i}.html`));
      assert.equal(lines.a.retried + lines.a.skipped, 0, JSON.stringify(lines));
    } finally {
      await site.close();
    }
  });
});
