// The egress interceptor around a fake core, and the connect-time lookup undici is given.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EgressChecker, SiteResolver, type Resolved, type ResolveResult } from '../../../src/fetch/egress.ts';
import type { FailureOutcome } from '../../../src/fetch/fetch-types.ts';
import { composeFetch } from '../../../src/fetch/interceptor.ts';
import { egressCheck, pinnedLookup } from '../../../src/fetch/interceptors/egress.ts';
import { call, fakeCore } from '../fake-core.ts';

const policy = { allowLoopback: true, allowPrivateNetworks: false, allowLinkLocal: false, allowIps: [], denyIps: [] };

/** A resolver over a fixed table of answers, counting its resolve() calls, on a clock the test moves. */
class TableResolver extends SiteResolver {
  resolves = 0;
  nowMs = 0;
  constructor(table: Record<string, Resolved[] | Error>, ttlMs = 60_000) {
    super(new EgressChecker(policy), ttlMs, async (host) => {
      const a = table[host];
      if (a instanceof Error) throw a;
      return a ?? [];
    }, () => this.nowMs);
  }
  override resolve(host: string): Promise<ResolveResult> {
    this.resolves++;
    return super.resolve(host);
  }
}

const table = {
  'site.test': [{ address: '127.0.0.1', family: 4 as const }],
  'inside.test': [{ address: '10.1.2.3', family: 4 as const }],
  'gone.test': Object.assign(new Error('not found'), { code: 'ENOTFOUND' }),
};

describe('egressCheck', () => {
  it('lets a host through with its checked address, and a pinned one without resolving again', async () => {
    const resolver = new TableResolver(table);
    const { core, reached } = fakeCore();
    const send = composeFetch(core, [egressCheck(resolver)]);
    assert.equal((await send(call())).kind, 'response');
    assert.equal((await send(call())).kind, 'response');
    assert.deepEqual(reached.map((r) => r.address), ['127.0.0.1', '127.0.0.1']);
    assert.equal(resolver.lookups, 1);
    assert.equal(resolver.resolves, 1, 'the second fetch took the pinned answer at once');
  });

  it('resolves and checks a host again once its answer has expired', async () => {
    const resolver = new TableResolver(table, 1000);
    const { core } = fakeCore();
    const send = composeFetch(core, [egressCheck(resolver)]);
    await send(call());
    resolver.nowMs += 1500;
    await send(call());
    assert.equal(resolver.lookups, 2);
  });

  it('refuses a host the policy refuses, as blocked, without sending anything', async () => {
    const { core, reached } = fakeCore();
    const o = await composeFetch(core, [egressCheck(new TableResolver(table))])(call({ url: new URL('http://inside.test/x') })) as FailureOutcome;
    assert.equal(o.kind, 'failure');
    assert.deepEqual([o.code, o.errorKey, o.blocked, o.connectFailure, o.bytesIn, o.bytesOut], ['ot', 'net', true, false, 0, 0]);
    assert.match(o.reason, /inside\.test resolves to 10\.1\.2\.3 is a private address/);
    assert.ok(o.durationMs >= 0);
    assert.equal(reached.length, 0);
  });

  it('answers a host that does not resolve as a connect failure ("co"), not as blocked', async () => {
    const { core, reached } = fakeCore();
    const o = await composeFetch(core, [egressCheck(new TableResolver(table))])(call({ url: new URL('http://gone.test/x') })) as FailureOutcome;
    assert.deepEqual([o.kind, o.code, o.blocked, o.connectFailure], ['failure', 'co', false, true]);
    assert.match(o.reason, /DNS: ENOTFOUND for gone\.test/);
    assert.equal(reached.length, 0);
  });

  it('takes an IPv6 literal without its brackets', async () => {
    const { core, reached } = fakeCore();
    const o = await composeFetch(core, [egressCheck(new TableResolver(table))])(call({ url: new URL('http://[::1]:8080/') }));
    assert.equal(o.kind, 'response');
    assert.equal(reached[0]!.address, '::1');
  });
});

describe('pinnedLookup', () => {
  const lookup = (resolver: SiteResolver, host: string, all: boolean): Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }> =>
    new Promise((resolve) => {
      pinnedLookup(resolver)(host, { all }, ((err: NodeJS.ErrnoException | null, address: unknown, family?: number) => resolve({ err, address, family })) as never);
    });

  it('answers the pinned address, alone or as a list', async () => {
    const resolver = new TableResolver(table);
    await resolver.resolve('site.test');
    assert.deepEqual(await lookup(resolver, 'site.test', false), { err: null, address: '127.0.0.1', family: 4 });
    assert.deepEqual((await lookup(resolver, 'site.test', true)).address, [{ address: '127.0.0.1', family: 4 }]);
    assert.equal(resolver.lookups, 1);
  });

  it('resolves and checks a host that is not pinned, and fails a refused one with EGRESS_REFUSED', async () => {
    const resolver = new TableResolver(table);
    assert.equal((await lookup(resolver, 'site.test', false)).address, '127.0.0.1');
    const refused = await lookup(resolver, 'inside.test', false);
    assert.equal(refused.err?.code, 'EGRESS_REFUSED');
    assert.match(refused.err!.message, /private address/);
  });
});
