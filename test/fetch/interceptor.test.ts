// How interceptors compose around the core, and what a FetchCall starts as.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeFetch, FetchCall, type FetchInterceptor } from '../../src/fetch/interceptor.ts';
import { call, fakeCore, request, response } from './fake-core.ts';

describe('composeFetch', () => {
  it('runs the interceptors in order, the first outermost, and the outcome back through them in reverse', async () => {
    const log: string[] = [];
    const named = (name: string): FetchInterceptor => (next) => async (c) => {
      log.push(`${name} in`);
      const o = await next(c);
      log.push(`${name} out`);
      return o;
    };
    const { core } = fakeCore(() => {
      log.push('core');
      return response();
    });
    await composeFetch(core, [named('a'), named('b'), named('c')])(call());
    assert.deepEqual(log, ['a in', 'b in', 'c in', 'core', 'c out', 'b out', 'a out']);
  });

  it('is the core itself when there is no interceptor', () => {
    const { core } = fakeCore();
    assert.equal(composeFetch(core, []), core);
  });

  it('makes each interceptor once, not once per fetch', async () => {
    let made = 0;
    const counted: FetchInterceptor = (next) => {
      made++;
      return next;
    };
    const handler = composeFetch(fakeCore().core, [counted]);
    for (let i = 0; i < 3; i++) await handler(call());
    assert.equal(made, 1);
  });

  it('lets an interceptor send the same call on again (a retry with credentials), changed', async () => {
    const { core, reached } = fakeCore((_c, n) => response(n === 1 ? 401 : 200));
    const retry: FetchInterceptor = (next) => async (c) => {
      const first = await next(c);
      if (first.kind !== 'response' || first.status !== 401) return first;
      c.headers.authorization = 'Basic dTpw';
      return next(c);
    };
    const o = await composeFetch(core, [retry])(call());
    assert.equal(o.kind === 'response' && o.status, 200);
    assert.equal(reached.length, 2);
    assert.equal(reached[0]!.headers.authorization, undefined);
    assert.equal(reached[1]!.headers.authorization, 'Basic dTpw');
  });
});

describe('FetchCall', () => {
  const fakeDispatcher = call().dispatcher;

  it('starts as a GET of the URL\'s path and query, with a copy of the request\'s headers', () => {
    const req = request();
    const before = performance.now();
    const c = new FetchCall(req, fakeDispatcher);
    assert.equal(c.method, 'GET');
    assert.equal(c.path, '/a/page?q=1');
    assert.equal(c.body, undefined);
    assert.equal(c.address, undefined);
    assert.deepEqual({ ...c.headers }, { 'user-agent': 'trawl-test' });
    assert.ok(c.startedMs >= before && c.startedMs <= performance.now());
    assert.equal(c.dispatcher, fakeDispatcher);
    // The request's headers are the collection's, shared by every fetch: an interceptor's header must not reach them.
    c.headers['if-none-match'] = '"x"';
    assert.deepEqual(req.headers, { 'user-agent': 'trawl-test' });
  });
});
