// The proxy route around a fake core: each site keeps its proxy,
// proxy_max_pending holds calls back until a place is free, a proxy that
// cannot be connected to hands the call to the next one, and what a proxy
// refuses becomes a connection failure that names it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { FetchOutcome, FailureOutcome } from '../../../src/fetch/fetch-types.ts';
import { composeFetch, type FetchCall } from '../../../src/fetch/interceptor.ts';
import { proxyRoute } from '../../../src/fetch/interceptors/proxy.ts';
import { ProxyPool } from '../../../src/fetch/proxy.ts';
import { call, response } from '../fake-core.ts';

const pools: ProxyPool[] = [];
after(async () => {
  for (const p of pools) await p.close();
});

function pool(maxPending: number): ProxyPool {
  const p = new ProxyPool({ maxPending, connectTimeoutMs: 1000 });
  pools.push(p);
  return p;
}

const failure = (more: Partial<FailureOutcome>): FailureOutcome => ({
  kind: 'failure', code: 'ot', errorKey: 'int', reason: 'x', blocked: false, connectFailure: false, bytesIn: 0, bytesOut: 0, durationMs: 1, ...more,
});

describe('proxyRoute', () => {
  it('leaves a call without proxies alone', async () => {
    const seen: FetchCall[] = [];
    const send = composeFetch((c) => (seen.push(c), Promise.resolve(response())), [proxyRoute]);
    const c = call();
    const before = c.dispatcher;
    await send(c);
    assert.equal(seen[0]!.dispatcher, before);
  });

  it('sends every call of a host through the same proxy of the set, and spreads hosts over the set', async () => {
    const set = pool(100).set([1, 2, 3].map((i) => ({ host: `10.0.0.${i}`, port: 3128, username: undefined, password: undefined })));
    const used = new Map<string, Set<unknown>>();
    const send = composeFetch((c) => {
      const k = c.request.url.hostname;
      if (!used.has(k)) used.set(k, new Set());
      used.get(k)!.add(c.dispatcher);
      return Promise.resolve(response());
    }, [proxyRoute]);
    for (let i = 0; i < 40; i++) await send(call({ url: new URL(`http://site${i % 20}.test/p${i}`), proxy: set }));
    for (const [host, agents] of used) assert.equal(agents.size, 1, host);
    const agentsUsed = new Set([...used.values()].map((s) => [...s][0]));
    assert.ok(agentsUsed.size >= 2, 'twenty hosts all went to one proxy');
    for (const a of agentsUsed) assert.ok(set.endpoints.some((e) => e.agent === a));
  });

  it('proxy_max_pending: holds calls back until a place is free, first come first served, and gives up a wait when the crawl stops', async () => {
    const set = pool(2).set([{ host: '10.0.0.9', port: 8080, username: 'u', password: 'p' }]);
    const e = set.endpoints[0]!;
    const release: Array<() => void> = [];
    let inCore = 0;
    let most = 0;
    const order: string[] = [];
    const send = composeFetch((c) => new Promise<FetchOutcome>((resolve) => {
      inCore++;
      most = Math.max(most, inCore);
      order.push(c.path);
      release.push(() => {
        inCore--;
        resolve(response());
      });
    }), [proxyRoute]);
    const stop = new AbortController();
    const runs = ['/1', '/2', '/3', '/4'].map((p) => send(call({ url: new URL(`http://a.test${p}`), proxy: set })));
    const stopped = send(call({ url: new URL('http://a.test/5'), proxy: set, signal: stop.signal }));
    await new Promise((r) => setImmediate(r));
    assert.equal(inCore, 2);
    assert.equal(e.queued, 3);
    stop.abort();
    const s = await stopped;
    assert.equal(s.kind, 'failure');
    assert.match((s as FailureOutcome).reason, /stopping/);
    assert.equal(e.queued, 2);
    for (let i = 0; i < 4; i++) {
      release.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(runs);
    assert.equal(most, 2);
    assert.deepEqual(order, ['/1', '/2', '/3', '/4']);
    assert.equal(e.inFlight, 0);
  });

  it('hands a call to the next proxy when one cannot be connected to, adding up the bytes, and names the last one when none can', async () => {
    const set = pool(10).set([{ host: '10.0.0.1', port: 1, username: undefined, password: undefined }, { host: '10.0.0.2', port: 2, username: undefined, password: undefined }]);
    const refused = failure({ code: 'co', errorKey: 'net', connectFailure: true, reason: 'ECONNREFUSED: connect ECONNREFUSED', bytesOut: 0, bytesIn: 3 });
    let n = 0;
    const firstUp = composeFetch(() => Promise.resolve(++n === 1 ? refused : response()), [proxyRoute]);
    const o = await firstUp(call({ proxy: set }));
    assert.equal(o.kind, 'response');
    assert.equal(o.bytesIn, 23);
    assert.equal(n, 2);

    let m = 0;
    const allDown = composeFetch(() => (m++, Promise.resolve(refused)), [proxyRoute]);
    const d = await allDown(call({ proxy: set })) as FailureOutcome;
    assert.equal(m, 2, 'each proxy is tried once');
    assert.equal(d.code, 'co');
    assert.match(d.reason, /^cannot connect to the proxy 10\.0\.0\.\d:\d: ECONNREFUSED/);
    assert.equal(d.bytesIn, 6);
  });

  it('turns what the proxy refuses into a connection failure that names the proxy and why', async () => {
    const set = pool(10).set([{ host: 'proxy.test', port: 3128, username: 'crawler', password: 'pw' }]);
    const through = async (o: FailureOutcome): Promise<FailureOutcome> => (await composeFetch(() => Promise.resolve(o), [proxyRoute])(call({ proxy: set }))) as FailureOutcome;
    const cases: Array<[string, RegExp]> = [
      ['Proxy response (407) !== 200 when HTTP Tunneling', /^proxy authentication failed: .*\(crawler@proxy\.test:3128 answered CONNECT with 407\)$/],
      ['Proxy response (401) !== 200 when HTTP Tunneling', /^proxy authentication failed/],
      ['Proxy Authentication Required (407)', /^proxy authentication failed: .*answered 407\)$/],
      ['Proxy response (502) !== 200 when HTTP Tunneling', /^the proxy crawler@proxy\.test:3128 could not connect to the site \(CONNECT answered 502\)$/],
      ['Proxy response (403) !== 200 when HTTP Tunneling', /^the proxy crawler@proxy\.test:3128 refused the tunnel \(CONNECT answered 403\)$/],
    ];
    for (const [reason, expected] of cases) {
      const o = await through(failure({ reason }));
      assert.equal(o.code, 'co', reason);
      assert.equal(o.connectFailure, true, reason);
      assert.match(o.reason, expected);
      assert.doesNotMatch(o.reason, /pw/);
    }
    // A failure of the site's own (a timeout, a bad body) is left as it is.
    const timeout = failure({ code: 'ti', errorKey: 'ttl', reason: 'the download took longer than fetch_timeout' });
    assert.deepEqual(await through(timeout), timeout);
  });

  it('one endpoint per proxy: a set of the collection and one of a sub-collection that name it share its places', () => {
    const p = pool(5);
    const a = p.set([{ host: 'Proxy.test', port: 3128, username: undefined, password: undefined }]);
    const b = p.set([{ host: 'proxy.test', port: 3128, username: undefined, password: undefined }, { host: 'other.test', port: 8080, username: undefined, password: undefined }]);
    assert.equal(a.endpoints[0], b.endpoints[0]);
    assert.equal(p.size, 2);
  });
});
