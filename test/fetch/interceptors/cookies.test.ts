import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryCookieJar } from '../../../src/fetch/cookies.ts';
import { composeFetch } from '../../../src/fetch/interceptor.ts';
import { cookieInterceptor } from '../../../src/fetch/interceptors/cookies.ts';
import { call, fakeCore, response } from '../fake-core.ts';

describe('cookie interceptor (use_cookies)', () => {
  it('stores every Set-Cookie of a response and sends the jar\'s cookies with the next request', async () => {
    const jar = new MemoryCookieJar({ sessionTtlMs: 900_000 });
    const { core, reached } = fakeCore((_c, n) => (n === 1 ? response(200, { 'set-cookie': ['a=1; Path=/', 'b=2; Path=/a'] }) : response(200)));
    const send = composeFetch(core, [cookieInterceptor(jar)]);
    await send(call());
    await send(call());
    await send(call({ url: new URL('http://site.test/other') }));
    await send(call({ url: new URL('http://elsewhere.test/a/') }));
    assert.deepEqual(reached.map((r) => r.headers.cookie), [undefined, 'b=2; a=1', 'a=1', undefined]);
    assert.equal(jar.changed, true);
  });

  it('a Cookie line of the configured headers goes first, and stays when the jar has nothing', async () => {
    const jar = new MemoryCookieJar({ sessionTtlMs: 900_000 });
    jar.setCookie('s=9', 'http://site.test/');
    const { core, reached } = fakeCore();
    const send = composeFetch(core, [cookieInterceptor(jar)]);
    await send(call({ headers: { cookie: 'fixed=1' } }));
    await send(call({ headers: { cookie: 'fixed=1' }, url: new URL('http://other.test/') }));
    assert.deepEqual(reached.map((r) => r.headers.cookie), ['fixed=1; s=9', 'fixed=1']);
  });
});
