// The core handler against a loopback server, without the interceptors:
// when onSent fires, the request's size, repeated headers kept apart, and
// a call sent through the core twice (what an authentication interceptor does).
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { boundedExchange } from '../../src/fetch/bounded-exchange.ts';
import { headerPairs, headerValues, type FetchOutcome, type FetchRequest, type ResponseOutcome } from '../../src/fetch/fetch-types.ts';
import { composeFetch, FetchCall, type FetchInterceptor } from '../../src/fetch/interceptor.ts';

const limits = { fetchTimeoutMs: 5000, connectTimeoutMs: 5000, cutOffBytes: undefined, truncate: false, maxDecompressedBytes: 1 << 20 };

describe('boundedExchange', () => {
  let server: Server;
  let base = '';
  /** Each request the server saw: its path, headers and when it arrived. */
  const seen: Array<{ url: string; headers: IncomingMessage['headers']; atMs: number }> = [];
  const agents: Agent[] = [];
  const agent = (connections: number): Agent => {
    const a = new Agent({ connections, pipelining: 1 });
    agents.push(a);
    return a;
  };

  before(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url!, headers: req.headers, atMs: performance.now() });
      if (req.url === '/slow') {
        setTimeout(() => res.end('slow'), 200);
      } else if (req.url === '/private') {
        if (req.headers.authorization === 'Basic dTpw') return void res.end('welcome');
        res.writeHead(401, [['WWW-Authenticate', 'Basic realm="a"'], ['Set-Cookie', 'seen=1'], ['WWW-Authenticate', 'Digest realm="a", qop="auth"']]);
        res.end('no');
      } else {
        res.setHeader('content-type', 'text/plain');
        res.end('ok');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const a of agents) await a.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const req = (path: string, more: Partial<FetchRequest> = {}): FetchRequest => ({ url: new URL(base + path), headers: { 'user-agent': 'trawl-test' }, acceptCompression: false, http10: false, limits, ...more });
  const response = (o: FetchOutcome): ResponseOutcome => {
    assert.equal(o.kind, 'response', JSON.stringify(o));
    return o as ResponseOutcome;
  };

  it('says a request left when it is written, not while it waits for a connection', async () => {
    const a = agent(1);
    const sentAt: number[] = [];
    const t0 = performance.now();
    // One connection: the second request waits until the first's response (200 ms) is in.
    const first = boundedExchange(new FetchCall(req('/slow', { onSent: () => sentAt.push(performance.now()) }), a));
    const second = boundedExchange(new FetchCall(req('/plain?2', { onSent: () => sentAt.push(performance.now()) }), a));
    await Promise.all([first, second]);
    assert.equal(sentAt.length, 2);
    assert.ok(sentAt[1]! - t0 >= 190, `the second was reported sent after ${sentAt[1]! - t0} ms`);
    const arrived = seen.find((s) => s.url === '/plain?2')!.atMs;
    assert.ok(sentAt[1]! <= arrived, 'reported before the server had it');
  });

  it('tells each of two fetches of the same URL at once that its own request left', async () => {
    // The process-wide map this replaced was keyed by origin and path: the second fetch's callback took the first's place.
    const a = agent(2);
    let one = 0;
    let two = 0;
    await Promise.all([
      boundedExchange(new FetchCall(req('/same', { onSent: () => one++ }), a)),
      boundedExchange(new FetchCall(req('/same', { onSent: () => two++ }), a)),
    ]);
    assert.deepEqual([one, two], [1, 1]);
  });

  it('never sends, nor says it sent, a request whose crawl stopped first', async () => {
    const stopped = new AbortController();
    stopped.abort(new Error('stop'));
    let sent = 0;
    const before = seen.length;
    const o = await boundedExchange(new FetchCall(req('/plain?stopped', { signal: stopped.signal, onSent: () => sent++ }), agent(1)));
    assert.equal(o.kind === 'failure' && o.reason, 'aborted: the crawl is stopping');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(seen.length, before);
    assert.equal(sent, 0);
  });

  it('counts the request\'s bytes as sent: request line, Host, header lines, blank line, body', async () => {
    const c = new FetchCall(req('/plain?bytes'), agent(1));
    c.method = 'POST';
    c.body = 'a=é';
    c.headers['content-type'] = 'application/x-www-form-urlencoded';
    const host = new URL(base).host;
    const expected = `POST /plain?bytes HTTP/1.1\r\nhost: ${host}\r\nuser-agent: trawl-test\r\ncontent-type: application/x-www-form-urlencoded\r\n\r\n`.length + 4;
    assert.equal(response(await boundedExchange(c)).bytesOut, expected);
  });

  it('keeps repeated headers apart in rawHeaders, and joins them in headers and the header block', async () => {
    const o = response(await boundedExchange(new FetchCall(req('/private'), agent(1))));
    assert.equal(o.status, 401);
    assert.deepEqual(headerValues(o.rawHeaders, 'www-authenticate'), ['Basic realm="a"', 'Digest realm="a", qop="auth"']);
    assert.deepEqual(headerValues(o.rawHeaders, 'set-cookie'), ['seen=1']);
    assert.deepEqual(headerValues(o.rawHeaders, 'location'), []);
    assert.deepEqual(headerPairs(o.rawHeaders).filter(([n]) => n === 'www-authenticate' || n === 'set-cookie'), [
      ['www-authenticate', 'Basic realm="a"'], ['www-authenticate', 'Digest realm="a", qop="auth"'], ['set-cookie', 'seen=1'],
    ]);
    assert.equal(o.headers['www-authenticate'], 'Basic realm="a", Digest realm="a", qop="auth"');
    assert.ok(o.headerBlock.includes('www-authenticate: Basic realm="a", Digest realm="a", qop="auth"\r\n'), o.headerBlock);
  });

  it('sends a call again when an interceptor asks (a 401 answered with credentials), saying each time it left', async () => {
    const withCredentials: FetchInterceptor = (next) => async (c) => {
      const first = await next(c);
      if (first.kind !== 'response' || first.status !== 401 || !headerValues(first.rawHeaders, 'www-authenticate').some((v) => v.startsWith('Basic '))) return first;
      c.headers.authorization = 'Basic dTpw';
      return next(c);
    };
    let sent = 0;
    const before = seen.length;
    const o = response(await composeFetch(boundedExchange, [withCredentials])(new FetchCall(req('/private', { onSent: () => sent++ }), agent(1))));
    assert.equal(o.status, 200);
    assert.equal(Buffer.from(o.body).toString(), 'welcome');
    assert.deepEqual(seen.slice(before).map((s) => s.headers.authorization), [undefined, 'Basic dTpw']);
    assert.equal(sent, 2);
  });
});
