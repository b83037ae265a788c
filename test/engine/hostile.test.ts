// Hostile servers: the real `trawl crawl` process, with the default limits,
// against loopback servers written to misbehave (endless and 10 GB bodies, a
// 1 GB sitemap, slowloris headers and bodies, a server that never answers,
// bombs in every content-encoding, a redirect loop, wrong lengths), and a
// URI whose fetch kills the process twice in a row. Each case asserts its
// outcome in the crawl store (the skip code), the bytes the server sent, the
// process's peak RSS, and that the rest of the site was crawled.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { brotliCompressSync, constants as zlib, deflateSync } from 'node:zlib';
import { PostgresCrawlStore } from '../../src/store/postgres/postgres-crawl-store.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import type { CrawlStore, UriRecord } from '../../src/store/crawl-store.ts';
import { gzipBomb, startFixtureSite, type Handler, type HostSpec } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { startPostgres } from '../support/postgres.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { ROOT } from '../helpers.ts';

const BIN = join(ROOT, 'bin/trawl.js');
/** The bound the issue sets for a crawl of any hostile server. */
const PEAK_RSS_BOUND_BYTES = 400 * 1000 * 1000;
const GIB = 1024 * 1024 * 1024;
const MIB = 1024 * 1024;

interface Run {
  code: number | null;
  /** VmHWM of the process (bin/trawl.js re-executes itself in place, so the pid is the crawler's). */
  peakRssBytes: number;
  stdout: string;
  kill: () => void;
}

/** `trawl crawl --json CONFIG` in a child process, its peak RSS sampled from /proc until it exits. */
function crawl(data: string, config: string, onStart?: (kill: () => void) => void, timeoutMs = 120_000, storeArgs: string[] = []): Promise<Run> {
  const child = spawn(process.execPath, [BIN, 'crawl', '--data', data, ...storeArgs, '--json', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let peak = 0;
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.resume();
  const sample = (): void => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) * 1024);
    } catch {
      // The process is gone.
    }
  };
  const timer = setInterval(sample, 50);
  const kill = (): void => void child.kill('SIGKILL');
  onStart?.(kill);
  // A crawl that hangs fails its test instead of holding the suite.
  const deadline = setTimeout(kill, timeoutMs);
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      clearInterval(timer);
      clearTimeout(deadline);
      resolve({ code, peakRssBytes: peak, stdout, kill });
    });
  });
}

async function records(data: string, collection: string, open: () => Promise<CrawlStore> = async () => new SqliteCrawlStore(join(data, 'trawl.db'))): Promise<Map<string, UriRecord>> {
  const store = await open();
  try {
    return new Map((await store.listRecords(collection)).map((r) => [new URL(r.url).pathname, r]));
  } finally {
    await store.close();
  }
}

function config(name: string, body: string): string {
  const file = join(tempDir('trawl-hostile-cfg-'), `${name}.xml`);
  writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="${name}">
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
  ${body}
</DomainSpecification></CrawlerConfig>`);
  return file;
}

/** A response written straight to the socket: `head` as given, then `body` pieces `everyMs` apart, forever if `repeat`. */
function raw(head: string, body: Buffer | string, opts: { everyMs?: number; repeat?: boolean; close?: boolean } = {}): Handler {
  return (_req, res) => {
    const socket = res.socket as Socket;
    socket.write(head);
    if (opts.everyMs === undefined) {
      socket.write(body);
      if (opts.close) socket.end();
      return;
    }
    const timer = setInterval(() => {
      if (socket.destroyed) return clearInterval(timer);
      socket.write(body);
      if (!opts.repeat) clearInterval(timer);
    }, opts.everyMs);
    socket.on('close', () => clearInterval(timer));
  };
}

/** A urlset of `bytes` bytes, chunked, written with backpressure: `<url>`s of /from-sitemap/N on its own host. */
function endlessSitemap(bytes: number): Handler {
  return async (req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml' });
    let sent = 0;
    let n = 0;
    const write = (s: string): boolean => {
      sent += s.length;
      return res.write(s);
    };
    write('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n');
    while (sent < bytes && !res.destroyed) {
      let piece = '';
      for (let i = 0; i < 500; i++) piece += `<url><loc>http://${req.headers.host}/from-sitemap/${n++}</loc></url>\n`;
      if (!write(piece)) await new Promise((r) => res.once('drain', r).once('close', r));
    }
    res.end('</urlset>\n');
  };
}

const bombs = new Map<string, Buffer>();

/** A body of `bytes` zeros encoded with `encoding`: small on the wire, larger than max_decompressed_bytes decoded. Made once, when first asked for. */
function bomb(encoding: 'deflate' | 'br', bytes: number): Handler {
  return (_req, res) => {
    const key = `${encoding}:${bytes}`;
    let body = bombs.get(key);
    if (!body) {
      const zeros = Buffer.alloc(bytes);
      body = encoding === 'deflate' ? deflateSync(zeros, { level: 9 }) : brotliCompressSync(zeros, { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } });
      bombs.set(key, body);
    }
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': encoding, 'content-length': body.length });
    res.end(body);
  };
}

const NORMAL = Array.from({ length: 12 }, (_, i) => `/page-${i}.html`);
const page = (title: string, links: readonly string[]): { kind: 'html'; body: string } => ({
  kind: 'html', body: `<html><head><title>${title}</title></head><body>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`,
});

const DECODED = 150 * MIB; // past the default max_decompressed_bytes (100 MiB)

/** Every hostile route, by path; each host below serves some of them. */
function hostileRoutes(): Record<string, HostSpec['routes'][string]> {
  return {
    // Bodies: 10 GB announced; endless chunked; both far past max_document_bytes (100 MiB).
    '/ten-gb': { kind: 'oversize', bytes: 10 * GIB },
    '/endless': { kind: 'oversize', bytes: 10 * GIB, chunked: true },
    // Bombs in every content-encoding.
    '/bomb-gzip': { kind: 'gzip-bomb', decompressedBytes: DECODED },
    '/bomb-deflate': bomb('deflate', DECODED),
    '/bomb-br': bomb('br', DECODED),
    // A 1 GB sitemap (chunked, so nothing tells its size in advance).
    '/sitemap.xml': endlessSitemap(GIB),
    // Slowloris: a header line every 300 ms, forever; a body byte every 300 ms, forever.
    '/slow-headers': raw('HTTP/1.1 200 OK\r\n', 'X-Slow: 1\r\n', { everyMs: 300, repeat: true }),
    '/slow-body': raw('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000000\r\n\r\n', 'x', { everyMs: 300, repeat: true }),
    // Never answers.
    '/hang': { kind: 'hang' },
    // Wrong lengths: fewer bytes than announced, then the connection closes; more bytes than announced.
    '/short': raw('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000\r\n\r\n', '<html>cut', { close: true }),
    '/long': raw('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 6\r\nConnection: close\r\n\r\n', '<html>and a good deal more than six bytes', { close: true }),
    // A redirect loop.
    '/loop-a': { kind: 'redirect', to: '/loop-b' },
    '/loop-b': { kind: 'redirect', to: '/loop-a' },
  };
}

/** The hosts: the home page and normal pages on 127.0.3.1, the hostile routes spread over three more, so that they are fetched at the same time. */
const HOSTILE_HOSTS = ['127.0.3.2', '127.0.3.3', '127.0.3.4'];

interface HostileCrawl {
  run: Run;
  recs: Map<string, UriRecord>;
  /** Body bytes the servers sent for a path. */
  sent: (path: string) => number;
  fetches: (path: string) => number;
}

/** One `trawl crawl` with the default limits of a site whose home page links the normal pages and `paths` of the hostile routes. */
async function hostileCrawl(paths: readonly string[]): Promise<HostileCrawl> {
  if (paths.includes('/bomb-gzip')) await gzipBomb(DECODED);
  const all = hostileRoutes();
  const hostOf = (p: string): string => HOSTILE_HOSTS[paths.indexOf(p) % HOSTILE_HOSTS.length]!;
  const specs: HostSpec[] = [
    { ip: '127.0.3.1', routes: { '/': page('home', [...NORMAL, ...paths.filter((p) => p !== '/sitemap.xml').map((p) => `{{origin:${hostOf(p)}}}${p}`)]), ...Object.fromEntries(NORMAL.map((p) => [p, page(p, NORMAL)])) } },
    ...HOSTILE_HOSTS.map((ip) => ({ ip, routes: Object.fromEntries(paths.filter((p) => hostOf(p) === ip).map((p) => [p, all[p]!])) })),
  ];
  // A redirect's target is on the host of the redirect.
  if (paths.includes('/loop-a')) specs.find((h) => h.ip === hostOf('/loop-a'))!.routes['/loop-b'] = all['/loop-b']!;
  const site = await startFixtureSite(specs);
  try {
    const home = site.host('127.0.3.1');
    // The sitemap's first 20 entries are queued; its URLs answer 404.
    const sitemaps = paths.includes('/sitemap.xml') ? `<section name="trawl_sitemaps"><attrib name="urls" type="list-string"><member>${site.host(hostOf('/sitemap.xml')).url('/sitemap.xml')}</member></attrib>
      <attrib name="max_urls" type="integer">20</attrib></section>` : '';
    const file = config('hostile', `
      <attrib name="start_uris" type="list-string"><member>${home.url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib>
      <attrib name="fetch_timeout" type="integer">3</attrib>
      <attrib name="robots" type="boolean">no</attrib>
      <attrib name="use_sitemaps" type="boolean">yes</attrib>
      ${sitemaps}
      <section name="include_domains"><attrib name="prefix" type="list-string"><member>127.0.3.</member></attrib></section>`);
    const data = tempDir('trawl-hostile-');
    const run = await crawl(data, file);
    assert.equal(run.code, 0, run.stdout);
    assert.ok(run.peakRssBytes > 0, 'the peak RSS was sampled');
    const recs = await records(data, 'hostile');
    // The rest of the site: every normal page fetched once and stored.
    for (const p of ['/', ...NORMAL]) {
      assert.equal(home.requests.filter((r) => r.path === p).length, 1, `${p} fetched once`);
      assert.equal(recs.get(p)?.status, 'stored', p);
    }
    return {
      run, recs,
      sent: (p) => site.requests.filter((r) => r.path === p).reduce((n, r) => n + r.bytesOut, 0),
      fetches: (p) => site.requests.filter((r) => r.path === p).length,
    };
  } finally {
    await site.close();
  }
}

describe('hostile servers', () => {
  // The issue's measure: a crawl of each hostile server keeps peak RSS under 400 MB and finishes the rest of the site.
  const bodies: Array<[string, string]> = [
    ['/ten-gb', 'a 10 GB body (Content-Length)'], ['/endless', 'an endless chunked body'], ['/bomb-gzip', 'a gzip bomb'],
    ['/bomb-deflate', 'a deflate bomb'], ['/bomb-br', 'a brotli bomb'],
  ];
  for (const [path, what] of bodies) {
    it(`${what}: skipped with "tl" as it streams in, peak RSS under 400 MB, the rest of the site crawled`, async (t) => {
      const c = await hostileCrawl([path]);
      t.diagnostic(`peak RSS ${(c.run.peakRssBytes / MIB).toFixed(0)} MiB; the server sent ${(c.sent(path) / MIB).toFixed(1)} MiB`);
      assert.ok(c.run.peakRssBytes < PEAK_RSS_BOUND_BYTES, `peak RSS ${c.run.peakRssBytes} bytes, over the ${PEAK_RSS_BOUND_BYTES} bound`);
      assert.equal(c.recs.get(path)?.skipCode, 'tl', JSON.stringify(c.recs.get(path)));
      // The server stopped sending: nothing near the 10 GB or the 1 GB was read.
      assert.ok(c.sent(path) < 200 * MIB, `the server sent ${c.sent(path)} bytes`);
      if (path === '/ten-gb') assert.ok(c.sent(path) < 20 * MIB, 'the announced 10 GB is refused by its Content-Length, not read to the limit');
    });
  }

  it('a 1 GB sitemap: read up to trawl_sitemaps max_bytes as it streams in, its first entries queued, peak RSS under 400 MB', async (t) => {
    const c = await hostileCrawl(['/sitemap.xml']);
    t.diagnostic(`peak RSS ${(c.run.peakRssBytes / MIB).toFixed(0)} MiB; the server sent ${(c.sent('/sitemap.xml') / MIB).toFixed(1)} MiB`);
    assert.ok(c.run.peakRssBytes < PEAK_RSS_BOUND_BYTES, `peak RSS ${c.run.peakRssBytes} bytes`);
    // 50 MiB (max_bytes) and what was in the socket buffers when the connection closed.
    assert.ok(c.sent('/sitemap.xml') < 60 * MIB, `the server sent ${c.sent('/sitemap.xml')} bytes`);
    assert.equal(c.fetches('/sitemap.xml'), 1);
    const fromSitemap = [...c.recs.keys()].filter((p) => p.startsWith('/from-sitemap/'));
    assert.deepEqual(fromSitemap.sort(), Array.from({ length: 20 }, (_, i) => `/from-sitemap/${i}`).sort());
  });

  it('slowloris headers and bodies, a server that never answers, wrong lengths, a redirect loop: each ends, the site is crawled', async () => {
    const c = await hostileCrawl(['/slow-headers', '/slow-body', '/hang', '/short', '/long', '/loop-a']);
    for (const p of ['/slow-headers', '/slow-body', '/hang']) assert.equal(c.recs.get(p)?.skipCode, 'ti', `${p}: ${JSON.stringify(c.recs.get(p))}`);
    // Fewer bytes than announced: incomplete, or a network error when the close is seen first.
    assert.ok(['in', 'ne'].includes(c.recs.get('/short')?.skipCode ?? ''), JSON.stringify(c.recs.get('/short')));
    assert.ok(c.recs.has('/long'), 'the over-long answer has a record');
    for (const p of ['/loop-a', '/loop-b']) assert.equal(c.fetches(p), 1, `${p} fetched once`);
  });

  it('catastrophic rule regexes against links built to trigger them: the crawl finishes, the rules decide as written', async (t) => {
    // Without the linear-time fallback each of these links costs the
    // backtracking engine 2^40 steps against ^…(a+)+$ (hours).
    const trap = (i: number): string => `/${'a'.repeat(40 + i)}!`;
    const links = [...NORMAL, ...Array.from({ length: 5 }, (_, i) => trap(i)), '/aaaa'];
    const site = await startFixtureSite([{ ip: '127.0.3.8', routes: { '/': page('home', links), ...Object.fromEntries(links.map((p) => [p, page(p, [])])) } }]);
    try {
      const host = site.host('127.0.3.8');
      const file = config('regex', `
        <attrib name="start_uris" type="list-string"><member>${host.url('/')}</member></attrib>
        <attrib name="delay" type="real">0</attrib>
        <attrib name="robots" type="boolean">no</attrib>
        <section name="exclude_uris"><attrib name="regexp" type="list-string"><member>^http://[^/]+/(a+)+$</member><member>(?i)/(A|a)+$</member></attrib></section>
        <section name="trawl_crawl_rules"><section name="${host.origin}"><attrib name="rules" type="list-string"><member>disallow regex ^/(a|aa)+$</member></attrib></section></section>`);
      const t0 = performance.now();
      const run = await crawl(tempDir('trawl-regex-'), file, undefined, 30_000);
      assert.equal(run.code, 0, `the crawl did not finish within 30 s: ${run.stdout}`);
      t.diagnostic(`${Math.round(performance.now() - t0)} ms`);
      // The trap links match no rule and are crawled; /aaaa matches them and is not.
      const fetched = new Set(host.requests.map((r) => r.path));
      for (let i = 0; i < 5; i++) assert.ok(fetched.has(trap(i)), `${trap(i)}: ${run.stdout}`);
      assert.ok(!fetched.has('/aaaa'));
      for (const p of NORMAL) assert.ok(fetched.has(p), p);
    } finally {
      await site.close();
    }
  });

  it('a URI in flight at two crashes in a row is set aside ("cr"); the rest of the site is crawled', () =>
    crashedTwice((data) => ({ args: [], open: async () => new SqliteCrawlStore(join(data, 'trawl.db')) })));

  it('the same on PostgreSQL (--store postgres://…)', { skip: skipUnless(TOOLS.postgres) }, async () => {
    const server = await startPostgres();
    try {
      const url = await server.createDatabase();
      await crashedTwice(() => ({ args: ['--store', url], open: () => PostgresCrawlStore.open(url) }));
    } finally {
      await server.stop();
    }
  });
});

/**
 * A URI in flight at two crashes in a row is set aside; `store` is where the crawl keeps its crawl store
 * (`args` for trawl crawl and trawl urltest, `open` to read it afterwards).
 */
async function crashedTwice(store: (data: string) => { args: string[]; open: () => Promise<CrawlStore> }): Promise<void> {
  let onPoison: (() => void) | undefined;
  const slowPage = (p: string): Handler => (_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><title>${p}</title><body><a href="/">home</a></body></html>`);
    }, 150);
  };
  const routes: HostSpec['routes'] = {
    '/': page('home', ['/poison', ...NORMAL]),
    // The page that "kills" the crawler: the test kills it with SIGKILL when it is requested.
    '/poison': () => onPoison?.(),
    ...Object.fromEntries(NORMAL.map((p) => [p, slowPage(p)])),
  };
  const site = await startFixtureSite([{ ip: '127.0.3.9', routes }]);
  try {
    const host = site.host('127.0.3.9');
    const file = config('poison', `
      <attrib name="start_uris" type="list-string"><member>${host.url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib>
      <attrib name="max_pending" type="integer">4</attrib>
      <attrib name="robots" type="boolean">no</attrib>`);
    const data = tempDir('trawl-poison-');
    const at = store(data);
    const requestsOf = (p: string): number => host.requests.filter((r) => r.path === p).length;
    // Two runs, each killed while /poison is being fetched.
    for (let i = 1; i <= 2; i++) {
      const run = await crawl(data, file, (kill) => (onPoison = kill), 120_000, at.args);
      assert.equal(run.code, null, `run ${i} was killed`);
      assert.equal(requestsOf('/poison'), i);
    }
    onPoison = undefined;
    // The third run sets /poison aside instead of fetching it a third time, and finishes the site.
    const third = await crawl(data, file, undefined, 120_000, at.args);
    assert.equal(third.code, 0, third.stdout);
    assert.equal(requestsOf('/poison'), 2);
    const recs = await records(data, 'poison', at.open);
    assert.equal(recs.get('/poison')?.status, 'skipped');
    assert.equal(recs.get('/poison')?.skipCode, 'cr');
    // Pages in flight at a kill beside /poison are fetched again, not set aside.
    for (const p of ['/', ...NORMAL]) assert.equal(recs.get(p)?.status, 'stored', `${p}: ${JSON.stringify(recs.get(p))}`);
    assert.deepEqual((JSON.parse(third.stdout) as { collections: Array<{ docSkips: Record<string, number> }> }).collections[0]!.docSkips, { cr: 1 });
    // urltest shows it from the crawl store.
    const shown = spawnSync(process.execPath, [BIN, 'urltest', '--no-fetch-robots', '--data', data, ...at.args, file, host.url('/poison')], { encoding: 'utf8' });
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, /stored: skipped \(cr: Crashed twice: in flight when the crawler died twice in a row/);
  } finally {
    await site.close();
  }
}
