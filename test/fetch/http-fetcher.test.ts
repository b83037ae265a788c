// The fetcher's contract, against a real HTTP server on loopback: bodies
// decoded and bounded, the header block as stored, each failure turned into
// its skip code, and the connection dropped when a body is abandoned.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { EgressChecker, SiteResolver } from '../../src/fetch/egress.ts';
import { headerPairs, headerValues, HttpFetcher, setBodyMemoryBudget, type FetchLimits, type FetchOutcome, type FetchRequest, type ResponseOutcome } from '../../src/fetch/http-fetcher.ts';

const policy = { allowLoopback: true, allowPrivateNetworks: false, allowLinkLocal: false, allowIps: [], denyIps: [] };
const limits: FetchLimits = { fetchTimeoutMs: 5000, connectTimeoutMs: 5000, cutOffBytes: undefined, truncate: false, maxDecompressedBytes: 1 << 20 };
const PAGE = Buffer.from('<html>' + 'trawl fetches this page. '.repeat(400) + '</html>');

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

describe('HttpFetcher', () => {
  let server: Server;
  let port = 0;
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  /** Connections the server has accepted. */
  let connections = 0;
  /** Bytes the server managed to write for each path (what was sent before the client hung up). */
  const written = new Map<string, number>();
  let fetcher: HttpFetcher;

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/plain': (_q, res) => {
      res.setHeader('content-type', 'text/html');
      res.setHeader('etag', '"v1"');
      res.end(PAGE);
    },
    '/gzip': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(gzipSync(PAGE));
    },
    '/deflate': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'deflate' });
      res.end(deflateSync(PAGE));
    },
    '/br': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'br' });
      res.end(brotliCompressSync(PAGE));
    },
    '/bomb': (_q, res) => {
      // 64 MiB of zeros, about 64 KiB on the wire.
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.alloc(64 << 20)));
    },
    '/corrupt': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(Buffer.from('this is not gzip at all, not even close'));
    },
    '/compress': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'compress' });
      res.end('x');
    },
    '/multi': (_q, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.setHeader('X-Custom', 'yes');
      res.end('ok');
    },
    '/missing': (_q, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('n'.repeat(200_000));
    },
    '/slow-headers': (_q, res) => {
      setTimeout(() => res.end('late'), 1500).unref();
    },
    '/slow-body': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const t = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(t));
    },
    '/huge': (q, res) => {
      // A plain body far larger than cut_off, written until the client hangs up.
      res.writeHead(200, { 'content-type': 'text/html' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      const pump = (): void => {
        while (sent < 256 << 20) {
          sent += chunk.length;
          written.set(q.url!, sent);
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => written.set(q.url!, sent));
      pump();
    },
    '/announced': (_q, res) => {
      // Announces 10 GB and sends nothing more than the headers: refused by the length alone.
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(10 * 1024 ** 3) });
      res.flushHeaders();
    },
    '/paced': (q, res) => {
      // 64 KiB every ?every=MS ms up to ?bytes=N, so that several such bodies are read at the same time.
      const params = new URL(q.url!, 'http://x').searchParams;
      const total = Number(params.get('bytes'));
      res.writeHead(200, { 'content-type': 'text/html' });
      const chunk = Buffer.alloc(64 * 1024, 0x62);
      let sent = 0;
      const t = setInterval(() => {
        if (sent >= total) {
          clearInterval(t);
          res.end();
          return;
        }
        sent += chunk.length;
        res.write(chunk);
      }, Number(params.get('every')));
      res.on('close', () => clearInterval(t));
    },
    '/echo': (q, res) => {
      res.setHeader('content-type', 'text/plain');
      res.end(`${q.method} ${seen.at(-1)?.body ?? ''}`);
    },
  };

  before(async () => {
    server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(parts).toString() });
        const route = routes[req.url!.split('?')[0]!];
        if (route) route(req, res);
        else {
          res.writeHead(500);
          res.end();
        }
      });
    });
    server.on('connection', (s: Socket) => {
      connections++;
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    fetcher = new HttpFetcher(new SiteResolver(new EgressChecker(policy), 60_000, async () => [{ address: '127.0.0.1', family: 4 }]));
  });
  after(async () => {
    await fetcher.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const get = (path: string, more: Partial<FetchRequest> = {}, lim: Partial<FetchLimits> = {}, by: HttpFetcher = fetcher): Promise<FetchOutcome> =>
    by.fetch({ url: new URL(`http://site.test:${port}${path}`), headers: { 'user-agent': 'trawl-test' }, acceptCompression: true, http10: false, ...more, limits: { ...limits, ...lim } });
  const response = (o: FetchOutcome): ResponseOutcome => {
    assert.equal(o.kind, 'response', JSON.stringify(o));
    return o as ResponseOutcome;
  };
  const failure = (o: FetchOutcome, code: string): string => {
    assert.equal(o.kind, 'failure', `expected a failure with ${code}`);
    assert.equal(o.kind === 'failure' && o.code, code, o.kind === 'failure' ? o.reason : '');
    return o.kind === 'failure' ? o.reason : '';
  };

  it('returns the body, the headers by lower-case name, and the bytes both ways', async () => {
    const o = response(await get('/plain'));
    assert.equal(o.status, 200);
    assert.deepEqual(Buffer.from(o.body), PAGE);
    assert.equal(o.headers['content-type'], 'text/html');
    assert.equal(o.headers.etag, '"v1"');
    assert.equal(o.truncated, false);
    assert.equal(o.address, '127.0.0.1');
    assert.ok(o.bytesIn > PAGE.length && o.bytesIn < PAGE.length + 400, String(o.bytesIn));
    assert.ok(o.bytesOut > 40 && o.bytesOut < 300, String(o.bytesOut));
    const req = seen.at(-1)!;
    assert.equal(req.headers['user-agent'], 'trawl-test');
    assert.equal(req.headers['accept-encoding'], 'gzip, deflate, br');
  });

  it('writes the header block as stored with store_http_header: repeated headers joined', async () => {
    const o = response(await get('/multi'));
    const lines = o.headerBlock.split('\r\n');
    assert.equal(lines[0], 'HTTP/1.1 200');
    assert.ok(lines.includes('set-cookie: a=1, b=2'), o.headerBlock);
    assert.ok(lines.includes('x-custom: yes'), o.headerBlock);
    assert.ok(o.headerBlock.endsWith('\r\n'));
    assert.equal(o.headers['set-cookie'], 'a=1, b=2');
  });

  it('keeps repeated headers apart in rawHeaders: both Set-Cookie values, in order', async () => {
    const o = response(await get('/multi'));
    assert.deepEqual(o.rawHeaders?.['set-cookie'], ['a=1', 'b=2']);
    assert.deepEqual(headerValues(o.rawHeaders, 'set-cookie'), ['a=1', 'b=2']);
    assert.deepEqual(headerValues(o.rawHeaders, 'x-custom'), ['yes']);
    assert.deepEqual(headerPairs(o.rawHeaders).filter(([n]) => n === 'set-cookie'), [['set-cookie', 'a=1'], ['set-cookie', 'b=2']]);
  });

  it('tells each of two fetches of the same URL at once that its own request left', async () => {
    // "Request sent" was a process-wide map keyed by origin and path: the second fetch's callback replaced the first's.
    const fresh = new HttpFetcher(new SiteResolver(new EgressChecker(policy), 60_000, async () => [{ address: '127.0.0.1', family: 4 }]));
    try {
      let one = 0;
      let two = 0;
      const [a, b] = await Promise.all([get('/plain?same', { onSent: () => one++ }, {}, fresh), get('/plain?same', { onSent: () => two++ }, {}, fresh)]);
      response(a);
      response(b);
      assert.deepEqual([one, two], [1, 1]);
    } finally {
      await fresh.close();
    }
  });

  for (const enc of ['gzip', 'deflate', 'br']) {
    it(`decodes a ${enc} body and counts the bytes on the wire`, async () => {
      const o = response(await get(`/${enc}`));
      assert.deepEqual(Buffer.from(o.body), PAGE);
      assert.ok(o.bytesIn < PAGE.length / 4, `${o.bytesIn} bytes in for a ${PAGE.length}-byte page`);
    });
  }

  it('asks for identity when compression is off', async () => {
    response(await get('/plain', { acceptCompression: false }));
    assert.equal(seen.at(-1)!.headers['accept-encoding'], 'identity');
  });

  it('stops a compression bomb at max_decompressed_bytes ("tl")', async () => {
    const reason = failure(await get('/bomb'), 'tl');
    assert.match(reason, /inflates past 1048576 bytes \(trawl_limits\.max_decompressed_bytes\)/);
  });

  it('refuses a body that does not decode, and an encoding it does not know ("en")', async () => {
    assert.match(failure(await get('/corrupt'), 'en'), /cannot decode the gzip body/);
    assert.match(failure(await get('/compress'), 'en'), /unsupported Content-Encoding "compress"/);
  });

  it('cuts a body at cut_off when truncate is on, and drops the connection', async () => {
    const o = response(await get('/huge?t', {}, { cutOffBytes: 100_000, truncate: true }));
    assert.equal(o.body.length, 100_000);
    assert.equal(o.truncated, true);
    assert.ok(Buffer.from(o.body).every((b) => b === 0x61));
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(written.get('/huge?t')! < 64 << 20, `the server wrote ${written.get('/huge?t')} bytes`);
  });

  it('fails a body past cut_off when truncate is off ("tl"), and drops the connection', async () => {
    assert.match(failure(await get('/huge?f', {}, { cutOffBytes: 100_000, truncate: false }), 'tl'), /larger than cut_off \(100000 bytes\)/);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(written.get('/huge?f')! < 64 << 20, `the server wrote ${written.get('/huge?f')} bytes`);
  });

  it('fails any body past max_document_bytes ("tl"), cut_off or not, and drops the connection', async () => {
    assert.match(failure(await get('/huge?m', {}, { maxDocumentBytes: 300_000 }), 'tl'), /larger than 300000 bytes \(trawl_limits\.max_document_bytes\)/);
    // cut_off above the bound does not lift it; truncate keeps its meaning below it.
    assert.match(failure(await get('/huge?m2', {}, { maxDocumentBytes: 300_000, cutOffBytes: 1_000_000, truncate: true }), 'tl'), /max_document_bytes/);
    assert.equal(response(await get('/huge?m3', {}, { maxDocumentBytes: 300_000, cutOffBytes: 200_000, truncate: true })).body.length, 200_000);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(written.get('/huge?m')! < 64 << 20, `the server wrote ${written.get('/huge?m')} bytes`);
  });

  it('bounds every body when the caller names no limit (DEFAULT_MAX_DOCUMENT_BYTES), and refuses a larger Content-Length before reading', async () => {
    const t0 = performance.now();
    assert.match(failure(await get('/announced'), 'tl'), /larger than 104857600 bytes/);
    assert.ok(performance.now() - t0 < 2000, 'refused at the headers, without waiting for the body');
  });

  it('gives up the largest body when the bodies in flight pass the process-wide budget; the others are read whole', async () => {
    const before = setBodyMemoryBudget(1 << 20);
    try {
      // Each body is within its own limit (2 MB); together they are not. The big one grows fastest.
      const lim = { maxDocumentBytes: 2_000_000 };
      const [big, a, b] = await Promise.all([get('/paced?bytes=1900000&every=2&big', {}, lim), get('/paced?bytes=900000&every=5&a', {}, lim), get('/paced?bytes=900000&every=5&b', {}, lim)]);
      assert.match(failure(big, 'tl'), /bodies in flight hold more than 2000000 bytes together/);
      assert.equal(response(a).body.length, 14 * 65536);
      assert.equal(response(b).body.length, 14 * 65536);
    } finally {
      setBodyMemoryBudget(before);
    }
  });

  it('reads at most maxErrorBodyBytes of an error body', async () => {
    const o = response(await get('/missing', {}, { maxErrorBodyBytes: 1000 }));
    assert.equal(o.status, 404);
    assert.equal(o.body.length, 1000);
    assert.equal(o.truncated, false);
  });

  it('times out a server that does not answer, and one that answers too slowly ("ti")', async () => {
    const t0 = performance.now();
    assert.match(failure(await get('/slow-headers', {}, { fetchTimeoutMs: 300 }), 'ti'), /longer than fetch_timeout/);
    assert.match(failure(await get('/slow-body', {}, { fetchTimeoutMs: 300 }), 'ti'), /longer than fetch_timeout/);
    assert.ok(performance.now() - t0 < 1400, 'each gave up at its timeout');
  });

  it('gives up when the crawl stops, before or during the request', async () => {
    const stopped = new AbortController();
    stopped.abort(new Error('stop'));
    const before = seen.length;
    assert.match(failure(await get('/plain', { signal: stopped.signal }), 'ot'), /the crawl is stopping/);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(seen.length, before, 'a request made after the stop is never sent');
    const later = new AbortController();
    setTimeout(() => later.abort(new Error('stop')), 100);
    assert.match(failure(await get('/slow-body', { signal: later.signal }), 'ot'), /the crawl is stopping/);
  });

  it('reports a refused connection as "co", a connect failure', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const o = await fetcher.fetch({ url: new URL(`http://site.test:${deadPort}/`), headers: {}, acceptCompression: false, http10: false, limits });
    failure(o, 'co');
    assert.equal(o.kind === 'failure' && o.connectFailure, true);
  });

  it('sends a POST body, conditional headers and Connection: close for HTTP/1.0, and says when the request left', async () => {
    let sent = 0;
    const o = response(await get('/echo', { postBody: 'a=1&b=2', ifNoneMatch: '"v1"', ifModifiedSince: 'Wed, 25 Nov 2026 10:00:00 GMT', http10: true, onSent: () => sent++ }));
    assert.equal(Buffer.from(o.body).toString(), 'POST a=1&b=2');
    const req = seen.at(-1)!;
    assert.equal(req.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(req.headers['if-none-match'], '"v1"');
    assert.equal(req.headers['if-modified-since'], 'Wed, 25 Nov 2026 10:00:00 GMT');
    assert.equal(req.headers.connection, 'close');
    assert.equal(req.headers['accept-encoding'], 'identity');
    assert.equal(sent, 1);
  });

  it('settles a response read to its end without an Error, and keeps its connection for the next', async () => {
    // Until 5f2ed51 every page made an Error (the abort reason of a request
    // that had already completed), and capturing its stack trace was 5% of
    // the crawl's main thread (bench/README.md). Errors are counted through
    // a Proxy on the global constructor, which `new Error(...)` looks up
    // when it runs; it is put back before any assertion.
    await get('/plain'); // a connection to reuse
    const before = { requests: seen.length, connections };
    const Original = globalThis.Error;
    let made = 0;
    globalThis.Error = new Proxy(Original, {
      construct(target, args, newTarget) {
        made++;
        return Reflect.construct(target, args, newTarget) as object;
      },
    });
    const outcomes: FetchOutcome[] = [];
    try {
      for (let i = 0; i < 20; i++) outcomes.push(await get(i % 2 ? `/plain?e${i}` : `/gzip?e${i}`));
    } finally {
      globalThis.Error = Original;
    }
    for (const o of outcomes) assert.deepEqual(Buffer.from(response(o).body), PAGE);
    assert.equal(made, 0, `${made} Errors made for 20 complete responses`);
    assert.equal(seen.length - before.requests, 20);
    // undici may open a second connection when the next request is sent in the same turn the last one completed.
    assert.ok(connections - before.connections <= 1, `${connections - before.connections} connections opened for 20 requests`);
  });

  it('fetches many pages at once over few connections, each body whole', async () => {
    const all = await Promise.all(Array.from({ length: 200 }, (_, i) => get(i % 2 ? `/gzip?${i}` : `/plain?${i}`)));
    for (const o of all) assert.deepEqual(Buffer.from(response(o).body), PAGE);
  });
});
