// The fixture site itself, driven with plain fetch and node:http on loopback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip, gunzipSync } from 'node:zlib';
import {
  diffAgainstExpected,
  generatedSite,
  generatedSiteExpected,
  STANDARD_BOMB_BYTES,
  STANDARD_SITE_EXPECTED,
  standardSite,
  startFixtureSite,
  type FixtureSite,
  type HostSpec,
} from './fixture-site.ts';

const A = '127.0.0.2';
const B = '127.0.1.5';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request on its own connection; the body is NOT decompressed. */
function raw(url: string, opts: { method?: string; headers?: Record<string, string>; maxBytes?: number } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let n = 0;
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        n += c.length;
        if (opts.maxBytes !== undefined && n >= opts.maxBytes) {
          res.destroy();
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) });
        }
      });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function withSite(hosts: HostSpec[], fn: (site: FixtureSite) => Promise<void>): Promise<void> {
  const site = await startFixtureSite(hosts);
  try {
    await fn(site);
  } finally {
    await site.close();
  }
}

/** Waits until `cond` holds (the server sees a client's abort a moment later). */
async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await sleep(10);
  }
}

test('routes: kinds, queries, prefixes, handlers, placeholders and notFound', () =>
  withSite(
    [
      {
        ip: A,
        routes: {
          '/': { kind: 'html', body: '<a href="{{origin:127.0.1.5}}/x">x</a> {{host}} {{port}}', headers: { 'X-Extra': 'yes' } },
          '/t.txt': { kind: 'text', body: 'hello' },
          '/robots.txt': { kind: 'robots', body: 'User-agent: *\nDisallow: /p/\n' },
          '/bin': { kind: 'binary', bytes: new Uint8Array([0, 1, 2, 255]), contentType: 'application/octet-stream' },
          '/s?q=1': { kind: 'text', body: 'query one' },
          '/s': { kind: 'text', body: 'any query' },
          '/files/*': { kind: 'text', body: 'prefix' },
          '/h': (req, res, ctx) => {
            res.end(`${req.socket.localAddress} ${ctx.host.origin} ${ctx.site.hosts.length}`);
          },
          '/throws': () => {
            throw new Error('boom');
          },
          '/gone': { kind: 'status', status: 410 },
          '/busy': { kind: 'status', status: 503, headers: { 'Retry-After': '1' }, body: 'later' },
          '/junk': { kind: 'garbage', bytes: new Uint8Array([0xff, 0xfe, 0]) },
        },
      },
      { ip: B, routes: {}, notFound: { kind: 'text', body: 'custom missing', status: 404 } },
    ],
    async (site) => {
      const a = site.host(A);
      const b = site.host(B);
      let r = await fetch(a.url('/'));
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(r.headers.get('x-extra'), 'yes');
      assert.equal(await r.text(), `<a href="${b.origin}/x">x</a> ${A}:${a.port} ${a.port}`);

      r = await fetch(a.url('t.txt'));
      assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(await r.text(), 'hello');
      assert.equal(await (await fetch(a.url('/robots.txt'))).text(), 'User-agent: *\nDisallow: /p/\n');

      r = await fetch(a.url('/bin'));
      assert.equal(r.headers.get('content-type'), 'application/octet-stream');
      assert.deepEqual([...new Uint8Array(await r.arrayBuffer())], [0, 1, 2, 255]);

      assert.equal(await (await fetch(a.url('/s?q=1'))).text(), 'query one');
      assert.equal(await (await fetch(a.url('/s?q=2'))).text(), 'any query');
      assert.equal(await (await fetch(a.url('/files/deep/x.txt'))).text(), 'prefix');
      assert.equal(await (await fetch(a.url('/h'))).text(), `${A} ${a.origin} 2`);

      r = await fetch(a.url('/throws'));
      assert.equal(r.status, 500);
      assert.match(await r.text(), /boom/);

      r = await fetch(a.url('/gone'));
      assert.equal(r.status, 410);
      await r.arrayBuffer();
      r = await fetch(a.url('/busy'));
      assert.equal(r.status, 503);
      assert.equal(r.headers.get('retry-after'), '1');
      assert.equal(await r.text(), 'later');

      r = await fetch(a.url('/junk'));
      assert.equal(r.headers.get('content-type'), 'text/html');
      assert.deepEqual([...new Uint8Array(await r.arrayBuffer())], [0xff, 0xfe, 0]);

      r = await fetch(a.url('/nope'));
      assert.equal(r.status, 404);
      assert.match(await r.text(), /Not Found/);
      r = await fetch(b.url('/nope'));
      assert.equal(r.status, 404);
      assert.equal(await r.text(), 'custom missing');

      // The log: start order, statuses, body bytes, query kept in the path.
      const recs = a.requests;
      assert.deepEqual(
        recs.map((x) => [x.path, x.status]),
        [
          ['/', 200], ['/t.txt', 200], ['/robots.txt', 200], ['/bin', 200], ['/s?q=1', 200], ['/s?q=2', 200],
          ['/files/deep/x.txt', 200], ['/h', 200], ['/throws', 500], ['/gone', 410], ['/busy', 503], ['/junk', 200], ['/nope', 404],
        ],
      );
      assert.equal(recs[1]!.bytesOut, 5);
      assert.equal(recs[3]!.bytesOut, 4);
      assert.equal(recs[0]!.host, `${A}:${a.port}`);
      assert.equal(recs[0]!.headers.host, `${A}:${a.port}`);
      for (const x of recs) assert.ok(x.endMs !== undefined && x.endMs >= x.startMs);
      assert.equal(site.requests.length, recs.length + 1);
      assert.deepEqual(site.fetchedPaths(B), ['/nope']);
    },
  ));

test('setRoute changes content between cycles; reset clears the logs', () =>
  withSite([{ ip: A, routes: { '/p': { kind: 'text', body: 'v1' } } }], async (site) => {
    const a = site.host(A);
    assert.equal(await (await fetch(a.url('/p'))).text(), 'v1');
    site.setRoute(A, '/p', { kind: 'text', body: 'v2' });
    site.setRoute(`${A}:${a.port}`, '/new', { kind: 'text', body: 'new' });
    assert.equal(await (await fetch(a.url('/p'))).text(), 'v2');
    assert.equal(await (await fetch(a.url('/new'))).text(), 'new');
    assert.deepEqual(site.duplicates(), ['/p']);
    site.reset();
    assert.deepEqual(site.requests, []);
    assert.deepEqual(a.requests, []);
    assert.deepEqual(site.fetchedPaths(), []);
    await (await fetch(a.url('/p'))).text();
    assert.deepEqual(site.fetchedPaths(A), ['/p']);
    assert.throws(() => site.host('127.9.9.9'), /no host/);
  }));

test('conditional GET: If-None-Match and If-Modified-Since answer 304', () =>
  withSite(
    [
      {
        ip: A,
        routes: {
          '/p': { kind: 'html', body: '<p>v1</p>', etag: 'v1', lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT' },
          '/lm': { kind: 'html', body: '<p>lm</p>', lastModified: '2024-01-01T00:00:00.500Z' },
        },
      },
    ],
    async (site) => {
      const a = site.host(A);
      let r = await raw(a.url('/p'));
      assert.equal(r.status, 200);
      assert.equal(r.headers.etag, '"v1"');
      assert.equal(r.headers['last-modified'], 'Mon, 01 Jan 2024 00:00:00 GMT');

      r = await raw(a.url('/p'), { headers: { 'If-None-Match': '"v1"' } });
      assert.equal(r.status, 304);
      assert.equal(r.body.length, 0);
      assert.equal(r.headers.etag, '"v1"');
      assert.equal((await raw(a.url('/p'), { headers: { 'If-None-Match': '"x", W/"v1"' } })).status, 304);
      assert.equal((await raw(a.url('/p'), { headers: { 'If-None-Match': '"v0"' } })).status, 200);
      // If-None-Match wins over a matching If-Modified-Since.
      assert.equal((await raw(a.url('/p'), { headers: { 'If-None-Match': '"v0"', 'If-Modified-Since': 'Tue, 02 Jan 2024 00:00:00 GMT' } })).status, 200);

      assert.equal((await raw(a.url('/lm'), { headers: { 'If-Modified-Since': 'Mon, 01 Jan 2024 00:00:00 GMT' } })).status, 304);
      assert.equal((await raw(a.url('/lm'), { headers: { 'If-Modified-Since': 'Sun, 31 Dec 2023 23:59:59 GMT' } })).status, 200);

      site.setRoute(A, '/p', { kind: 'html', body: '<p>v2</p>', etag: 'v2' });
      r = await raw(a.url('/p'), { headers: { 'If-None-Match': '"v1"' } });
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), '<p>v2</p>');
      assert.deepEqual(
        a.requests.map((x) => x.status),
        [200, 304, 304, 200, 200, 304, 200, 200],
      );
    },
  ));

test('gzip pages and the gzip bomb', () =>
  withSite(
    [
      {
        ip: A,
        routes: {
          '/z': { kind: 'gzip', body: '<p>zipped {{port}}</p>' },
          '/bomb-small': { kind: 'gzip-bomb', decompressedBytes: 1_000_003 },
          '/bomb': { kind: 'gzip-bomb', decompressedBytes: STANDARD_BOMB_BYTES },
        },
      },
    ],
    async (site) => {
      const a = site.host(A);
      let r = await raw(a.url('/z'));
      assert.equal(r.headers['content-encoding'], 'gzip');
      assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(gunzipSync(r.body).toString(), `<p>zipped ${a.port}</p>`);
      assert.equal(await (await fetch(a.url('/z'))).text(), `<p>zipped ${a.port}</p>`);

      r = await raw(a.url('/bomb-small'));
      const small = gunzipSync(r.body);
      assert.equal(small.length, 1_000_003);
      assert.ok(small.every((x) => x === 0));

      r = await raw(a.url('/bomb'));
      assert.equal(r.headers['content-encoding'], 'gzip');
      assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(Number(r.headers['content-length']), r.body.length);
      assert.ok(r.body.length < 128 * 1024, `bomb is ${r.body.length} bytes on the wire`);
      assert.equal(a.requests.at(-1)!.bytesOut, r.body.length);
      // Inflate as a stream, counting, so the test never holds 64 MiB.
      let inflated = 0;
      await new Promise<void>((resolve, reject) => {
        const g = createGunzip();
        g.on('data', (c: Buffer) => (inflated += c.length));
        g.on('end', resolve);
        g.on('error', reject);
        g.end(r.body);
      });
      assert.equal(inflated, STANDARD_BOMB_BYTES);
    },
  ));

test('redirects: relative, absolute, chains and loops', () =>
  withSite(standardSite({ main: A, other: B }), async (site) => {
    const a = site.host(A);
    let r = await fetch(a.url('/r1'), { redirect: 'manual' });
    assert.equal(r.status, 301);
    assert.equal(r.headers.get('location'), '/r2');
    r = await fetch(a.url('/r2'), { redirect: 'manual' });
    assert.equal(r.status, 302);
    assert.equal(r.headers.get('location'), a.url('/final.html'));

    site.reset();
    r = await fetch(a.url('/r1'));
    assert.equal(r.url, a.url('/final.html'));
    assert.match(await r.text(), /End of the redirect chain/);
    assert.deepEqual(site.fetchedPaths(A), ['/r1', '/r2', '/final.html']);

    await assert.rejects(fetch(a.url('/loop-a')));
    assert.deepEqual(new Set(site.duplicates(A)), new Set(['/loop-a', '/loop-b']));
  }));

test('hang: the client times out, and the server records the abort', () =>
  withSite([{ ip: A, routes: { '/hang': { kind: 'hang' } } }], async (site) => {
    const a = site.host(A);
    const t0 = Date.now();
    await assert.rejects(fetch(a.url('/hang'), { signal: AbortSignal.timeout(200) }), { name: 'TimeoutError' });
    assert.ok(Date.now() - t0 >= 190);
    await until(() => a.requests[0]?.endMs !== undefined);
    const rec = a.requests[0]!;
    assert.equal(rec.status, 0);
    assert.equal(rec.bytesOut, 0);
    assert.ok(rec.endMs! - rec.startMs >= 150);
  }));

test('close() destroys hanging sockets and returns promptly', async () => {
  const site = await startFixtureSite([{ ip: A, routes: { '/hang': { kind: 'hang' }, '/slow': { kind: 'slow', body: 'x'.repeat(10_000), bytesPerSecond: 100 } } }]);
  const a = site.host(A);
  const hung = raw(a.url('/hang')).then(
    () => 'answered',
    (err: NodeJS.ErrnoException) => err.code ?? err.message,
  );
  const slow = raw(a.url('/slow')).then(
    (r) => `answered ${r.body.length}`,
    (err: NodeJS.ErrnoException) => err.code ?? err.message,
  );
  await until(() => a.requests.length === 2);
  assert.equal(site.maxConcurrency(A), 2);
  const t0 = Date.now();
  await site.close();
  assert.ok(Date.now() - t0 < 1000, `close took ${Date.now() - t0} ms`);
  assert.equal(await hung, 'ECONNRESET');
  assert.notEqual(await slow, 'answered 10000');
  await until(() => a.requests.every((x) => x.endMs !== undefined));
  await site.close(); // idempotent
  await assert.rejects(raw(a.url('/hang')), { code: 'ECONNREFUSED' });
});

test('slow trickles at about bytesPerSecond; oversize streams and stops when the client leaves', () =>
  withSite(
    [
      {
        ip: A,
        routes: {
          '/slow': { kind: 'slow', body: 'y'.repeat(600), bytesPerSecond: 2000 },
          '/big': { kind: 'oversize', bytes: 1_000_001 },
          '/huge': { kind: 'oversize', bytes: 1024 * 1024 * 1024, chunked: true, contentType: 'text/plain' },
        },
      },
    ],
    async (site) => {
      const a = site.host(A);
      const t0 = Date.now();
      let r = await raw(a.url('/slow'));
      const took = Date.now() - t0;
      assert.equal(r.body.toString(), 'y'.repeat(600));
      assert.ok(took >= 250 && took < 2000, `600 bytes at 2000 B/s took ${took} ms`);

      r = await raw(a.url('/big'));
      assert.equal(Number(r.headers['content-length']), 1_000_001);
      assert.equal(r.body.length, 1_000_001);
      assert.equal(a.requests[1]!.bytesOut, 1_000_001);

      r = await raw(a.url('/huge'), { maxBytes: 200_000 });
      assert.equal(r.headers['content-length'], undefined);
      assert.equal(r.headers['transfer-encoding'], 'chunked');
      assert.equal(r.headers['content-type'], 'text/plain');
      await until(() => a.requests[2]!.endMs !== undefined);
      // Backpressure: the server stopped far short of 1 GiB once the client left.
      assert.ok(a.requests[2]!.bytesOut < 64 * 1024 * 1024, `sent ${a.requests[2]!.bytesOut}`);
    },
  ));

test('concurrency and start-gap accounting', () =>
  withSite(
    [
      { ip: A, routes: { '/slow': { kind: 'html', body: 'ok', delayMs: 150 }, '/fast': { kind: 'text', body: 'ok' }, '/robots.txt': { kind: 'robots', body: '' } } },
      { ip: B, routes: { '/fast': { kind: 'text', body: 'ok' } } },
    ],
    async (site) => {
      await Promise.all([1, 2, 3].map(async () => (await fetch(site.host(A).url('/slow'))).text()));
      assert.equal(site.maxConcurrency(A), 3);
      assert.deepEqual(site.host(A).requests.map((r) => r.concurrentAtStart), [1, 2, 3]);
      assert.ok(site.minStartGapMs(A) < 100);

      site.reset();
      for (const p of ['/robots.txt', '/fast', '/fast', '/fast']) {
        await (await fetch(site.host(A).url(p))).text();
        await (await fetch(site.host(B).url('/fast'))).text();
        if (p !== '/robots.txt') await sleep(80);
      }
      assert.equal(site.maxConcurrency(A), 1);
      assert.equal(site.maxConcurrency(B), 1);
      const gap = site.minStartGapMs(A, (p) => p === '/robots.txt');
      assert.ok(gap >= 75, `gap ${gap}`);
      assert.ok(site.minStartGapMs(A) < gap, 'robots.txt was followed at once by /fast');
      assert.equal(site.minStartGapMs(B, () => true), Infinity);
      // Hosts share one clock: starts interleave A, B, A, B …
      assert.deepEqual(site.requests.map((r) => r.host.split(':')[0]), [A, B, A, B, A, B, A, B]);
      const starts = site.requests.map((r) => r.startMs);
      assert.deepEqual(starts, [...starts].sort((x, y) => x - y));
    },
  ));

test('two hosts on different 127.x addresses are separate servers', () =>
  withSite(
    [
      { ip: A, routes: { '/who': (req, res) => void res.end(`A ${req.socket.localAddress}`) } },
      { ip: B, routes: { '/who': (req, res) => void res.end(`B ${req.socket.localAddress}`) } },
    ],
    async (site) => {
      const [a, b] = [site.host(A), site.host(B)];
      assert.notEqual(a.origin, b.origin);
      assert.equal(await (await fetch(a.url('/who'))).text(), `A ${A}`);
      assert.equal(await (await fetch(b.url('/who'))).text(), `B ${B}`);
      // Each server is bound to its own address only.
      await assert.rejects(raw(`http://${B}:${a.port}/who`), { code: 'ECONNREFUSED' });
      assert.deepEqual(site.fetchedPaths(A), ['/who']);
      assert.deepEqual(site.fetchedPaths(B), ['/who']);
      assert.deepEqual(site.fetchedPaths(), ['/who', '/who']);
    },
  ));

test('a fixed port, and two hosts sharing one address', async () => {
  const probe = await startFixtureSite([{ ip: A, routes: {} }]);
  const port = probe.host(A).port;
  await probe.close();
  await withSite(
    [
      { ip: A, port, routes: { '/': { kind: 'text', body: 'first' } } },
      { ip: A, routes: { '/': { kind: 'text', body: 'second' } } },
    ],
    async (site) => {
      assert.equal(site.hosts[0]!.port, port);
      const second = site.hosts[1]!;
      assert.equal(await (await fetch(`http://${A}:${port}/`)).text(), 'first');
      assert.equal(await (await fetch(second.url('/'))).text(), 'second');
      assert.equal(site.host(`${A}:${second.port}`), second);
      assert.deepEqual(site.fetchedPaths(`${A}:${port}`), ['/']);
      assert.deepEqual(site.fetchedPaths(A), ['/', '/']);
    },
  );
});

test('the trap recurses forever below its root, up to its safety depth', () =>
  withSite([{ ip: A, routes: { '/trap/': { kind: 'trap', depth: 3 } } }], async (site) => {
    const a = site.host(A);
    const hrefs = async (p: string): Promise<string[]> => [...(await (await fetch(a.url(p))).text()).matchAll(/href="([^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(await hrefs('/trap/'), ['/trap/a/', '/trap/a/b/a/b/']);
    assert.deepEqual(await hrefs('/trap/a/'), ['/trap/a/a/', '/trap/a/b/a/b/']);
    assert.deepEqual(await hrefs('/trap/a/b/'), ['/trap/a/b/a/', '/trap/a/b/b/a/b/b/']);
    assert.deepEqual(await hrefs('/trap/a/a/a/'), []);
    assert.equal((await fetch(a.url('/trap/x/y/z/w/'))).status, 200);
  }));

/**
 * A minimal reference crawl of the standard site: robots.txt Disallow lines
 * for *, exclude .png, meta nofollow, redirects as new URLs, HTML links only,
 * trap cut at 3 repeats of a segment. It checks that STANDARD_SITE_EXPECTED
 * agrees with what the site really serves.
 */
async function referenceCrawl(seed: string, inScope: (u: URL) => boolean): Promise<void> {
  const disallow = new Map<string, string[]>();
  const seen = new Set<string>();
  const queue = [seed];
  const allowed = async (u: URL): Promise<boolean> => {
    if (!disallow.has(u.host)) {
      const r = await raw(`${u.origin}/robots.txt`);
      disallow.set(u.host, [...r.body.toString().matchAll(/^Disallow:\s*(\S+)/gm)].map((m) => m[1]!));
    }
    return !disallow.get(u.host)!.some((d) => u.pathname.startsWith(d));
  };
  while (queue.length > 0) {
    const u = new URL(queue.shift()!);
    u.hash = '';
    if (seen.has(u.href) || !inScope(u) || u.pathname.endsWith('.png')) continue;
    seen.add(u.href);
    const segs = u.pathname.split('/').filter(Boolean);
    if (segs.some((s) => segs.filter((x) => x === s).length > 3)) continue;
    if (!(await allowed(u))) continue;
    const r = await raw(u.href, { maxBytes: 1024 * 1024 });
    if (r.status >= 300 && r.status < 400 && r.headers.location) {
      queue.push(new URL(r.headers.location, u).href);
      continue;
    }
    if (r.status !== 200 || !String(r.headers['content-type']).startsWith('text/html') || r.headers['content-encoding']) continue;
    const html = r.body.toString('utf8');
    if (/<meta name="robots" content="[^"]*nofollow/i.test(html)) continue;
    for (const m of html.matchAll(/href="([^"]+)"/g)) queue.push(new URL(m[1]!, u).href);
  }
}

test('STANDARD_SITE_EXPECTED matches a reference crawl of standardSite()', () =>
  withSite(standardSite({ main: A, other: B, sameIpAlias: 'localhost' }), async (site) => {
    const a = site.host(A);
    const b = site.host(B);
    const index = await (await fetch(a.url('/'))).text();
    assert.ok(index.includes(`href="${b.origin}/"`));
    assert.ok(index.includes(`href="http://localhost:${a.port}/alias/one.html"`));
    assert.ok(!index.includes('{{'));
    site.reset();

    const hosts = new Set([a.origin, b.origin].map((o) => new URL(o).host));
    await referenceCrawl(a.url('/'), (u) => hosts.has(u.host));
    for (const [ip, expected] of [[A, STANDARD_SITE_EXPECTED.main], [B, STANDARD_SITE_EXPECTED.other]] as const) {
      const diff = diffAgainstExpected(site.fetchedPaths(ip), expected);
      assert.deepEqual(diff, { missing: [], forbidden: [], unexpected: [], repeated: [], overBound: [] }, ip);
    }
    const trapPages = site.fetchedPaths(A).filter((p) => p.startsWith('/trap/')).length;
    assert.ok(trapPages > 3, `trap pages: ${trapPages}`);

    // The alias: the same server, another Host header (localhost resolves to 127.0.0.1, so
    // reach the main server directly, as a test resolver mapping the name to A would).
    site.reset();
    await raw(a.url('/robots.txt'), { headers: { Host: `localhost:${a.port}` } });
    for (const p of ['/alias/one.html', '/alias/two.html']) {
      const r = await raw(a.url(p), { headers: { Host: `localhost:${a.port}` } });
      assert.equal(r.status, 200, p);
    }
    await raw(a.url('/a.html'));
    assert.deepEqual(diffAgainstExpected(site.fetchedPaths(A, { hostHeader: 'LOCALHOST' }), STANDARD_SITE_EXPECTED.alias), {
      missing: [], forbidden: [], unexpected: [], repeated: [], overBound: [],
    });
    assert.deepEqual(site.fetchedPaths(A, { hostHeader: A }), ['/a.html']);

    // The diff reports what a broken crawl did.
    const bad = diffAgainstExpected(['/', '/', '/private/secret.html', '/favicon.ico', ...Array.from({ length: 41 }, (_, i) => `/trap/${i}/`)], STANDARD_SITE_EXPECTED.main);
    assert.ok(bad.missing.includes('/robots.txt'));
    assert.deepEqual(bad.forbidden, ['/private/secret.html']);
    assert.deepEqual(bad.unexpected, ['/favicon.ico']);
    assert.deepEqual(bad.repeated, ['/']);
    assert.deepEqual(bad.overBound, [{ prefix: '/trap/', count: 41, max: 40 }]);
  }));

test('standard site: special pages answer as documented', () =>
  withSite(standardSite({ main: A, other: B }), async (site) => {
    const a = site.host(A);
    const expectStatus: Array<[string, number, string | undefined]> = [
      ['/gone', 410, undefined],
      ['/missing', 404, undefined],
      ['/error', 500, undefined],
      ['/busy', 503, undefined],
      ['/doc.pdf', 200, 'application/pdf'],
      ['/logo.png', 200, 'image/png'],
      ['/garbage.html', 200, 'text/html'],
      ['/notes.txt', 200, 'text/plain; charset=utf-8'],
    ];
    for (const [p, status, type] of expectStatus) {
      const r = await raw(a.url(p));
      assert.equal(r.status, status, p);
      if (type) assert.equal(r.headers['content-type'], type, p);
    }
    assert.equal((await raw(a.url('/busy'))).headers['retry-after'], '1');
    assert.match((await raw(a.url('/doc.pdf'))).body.toString('latin1'), /^%PDF-1\.4[\s\S]*%%EOF\n$/);
    const dupA = await raw(a.url('/dup-a.html'));
    const dupB = await raw(a.url('/dup-b.html'));
    assert.deepEqual(dupA.body, dupB.body);
    assert.equal((await raw(a.url('/a.html'), { headers: { 'If-None-Match': '"a-v1"' } })).status, 304);
    const robots = (await raw(a.url('/robots.txt'))).body.toString();
    assert.match(robots, /^Disallow: \/private\/$/m);
    assert.doesNotMatch(robots, /^crawl-delay/im);
  }));

test('generatedSite is deterministic and fully reachable from one index', async () => {
  const opts = { hosts: [A, B], pagesPerHost: 15, linksPerPage: 4, seed: 7 };
  assert.deepEqual(generatedSite(opts), generatedSite(opts));
  assert.notDeepEqual(generatedSite(opts), generatedSite({ ...opts, seed: 8 }));
  await withSite(generatedSite(opts), async (site) => {
    const origins = new Set(site.hosts.map((h) => new URL(h.origin).host));
    await referenceCrawl(site.host(A).url('/'), (u) => origins.has(u.host));
    const expected = generatedSiteExpected(opts);
    for (const ip of opts.hosts) {
      assert.deepEqual([...site.fetchedPaths(ip)].sort(), [...expected[ip]!].sort(), ip);
      assert.deepEqual(site.duplicates(ip), []);
    }
    const body = await (await fetch(site.host(A).url('/p/0.html'))).text();
    assert.equal([...body.matchAll(/<a href=/g)].length, 4);
  });
});
