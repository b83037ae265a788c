// The HTTP client connects only to an address the egress policy checked. It
// takes the pinned answer; when the resolver has dropped the answer between
// the start of the fetch and the connect (it expired while the request
// waited for a connection), the host is resolved and checked again.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import { EgressChecker, SiteResolver, type ResolveResult } from '../../src/fetch/egress.ts';
import { HttpFetcher } from '../../src/fetch/http-fetcher.ts';

const policy = { allowLoopback: true, allowPrivateNetworks: false, allowLinkLocal: false, allowIps: [], denyIps: [] };
const limits = { fetchTimeoutMs: 5000, connectTimeoutMs: 5000, cutOffBytes: undefined, truncate: false, maxDecompressedBytes: 1 << 20 };

/** A resolver whose pinned answer is gone whenever the client connects: what a sweep can do. */
class ForgetfulResolver extends SiteResolver {
  resolves = 0;
  override resolve(host: string): Promise<ResolveResult> {
    this.resolves++;
    return super.resolve(host);
  }
  override pinned(): ResolveResult | undefined {
    return undefined;
  }
}

describe('HttpFetcher connect', () => {
  let server: Server;
  let port = 0;
  const served: string[] = [];
  before(async () => {
    server = createServer((req, res) => {
      served.push(req.url ?? '');
      res.setHeader('content-type', 'text/plain');
      res.end('hello');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('resolves again when the pinned answer was dropped before the connect', async () => {
    const resolver = new ForgetfulResolver(new EgressChecker(policy), 60_000, async () => [{ address: '127.0.0.1', family: 4 }]);
    const f = new HttpFetcher(resolver);
    const o = await f.fetch({ url: new URL(`http://site.test:${port}/page`), headers: {}, acceptCompression: false, http10: false, limits });
    assert.equal(o.kind, 'response');
    assert.equal(Buffer.from((o as { body: Uint8Array }).body).toString(), 'hello');
    assert.deepEqual(served, ['/page']);
    assert.equal(resolver.resolves, 2, 'once when the fetch began, once at the connect');
    assert.equal(resolver.lookups, 1, 'the second came from the pinned cache');
  });

  it('still refuses at the connect what the policy refuses', async () => {
    // The first lookup answers 127.0.0.1, every later one a private address; each reading of the
    // clock is 2 s after the last, so a pinned answer (TTL 1 s) has expired by the connect.
    const answers = [[{ address: '127.0.0.1', family: 4 as const }]];
    let now = 0;
    const resolver = new ForgetfulResolver(new EgressChecker(policy), 1000, async () => answers.shift() ?? [{ address: '10.1.2.3', family: 4 }], () => (now += 2000));
    const f = new HttpFetcher(resolver);
    const url = new URL(`http://rebind.test:${port}/secret`);
    const o = f.fetch({ url, headers: {}, acceptCompression: false, http10: false, limits });
    const out = await o;
    assert.equal(out.kind, 'failure');
    assert.equal(out.kind === 'failure' && out.blocked, true);
    assert.match((out as { reason: string }).reason, /rebind\.test resolves to 10\.1\.2\.3 is a private address/);
    assert.ok(!served.includes('/secret'), 'nothing reached the server');
  });
});
