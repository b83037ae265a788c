// The request-headers interceptor around a fake core: method, body and protocol headers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeFetch } from '../../../src/fetch/interceptor.ts';
import { requestHeaders } from '../../../src/fetch/interceptors/request-headers.ts';
import { call, fakeCore } from '../fake-core.ts';

describe('requestHeaders', () => {
  const send = async (more: Parameters<typeof call>[0]) => {
    const { core, reached } = fakeCore();
    await composeFetch(core, [requestHeaders])(call(more));
    assert.equal(reached.length, 1);
    return reached[0]!;
  };

  it('asks for every encoding the core decodes, keeps the configured headers, and sends a GET without a body', async () => {
    const r = await send({});
    assert.deepEqual(r.headers, { 'user-agent': 'trawl-test', 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(r.method, 'GET');
    assert.equal(r.body, undefined);
  });

  it('asks for identity when compression is off', async () => {
    assert.equal((await send({ acceptCompression: false })).headers['accept-encoding'], 'identity');
  });

  it('in HTTP/1.0 mode closes the connection and asks for identity, whatever accept_compression says', async () => {
    const r = await send({ http10: true, acceptCompression: true });
    assert.equal(r.headers.connection, 'close');
    assert.equal(r.headers['accept-encoding'], 'identity');
  });

  it('sends post_payload as a form POST', async () => {
    const r = await send({ postBody: 'a=1&b=2' });
    assert.equal(r.method, 'POST');
    assert.equal(r.body, 'a=1&b=2');
    assert.equal(r.headers['content-type'], 'application/x-www-form-urlencoded');
  });

  it('sends an empty post_payload as a POST too', async () => {
    const r = await send({ postBody: '' });
    assert.equal(r.method, 'POST');
    assert.equal(r.body, '');
  });
});

describe('requestHeaders: Referer', () => {
  it('sends the referer the request names, and none otherwise', async () => {
    const { core, reached } = fakeCore();
    const send = composeFetch(core, [requestHeaders]);
    await send(call({ referer: 'http://site.test/list' }));
    await send(call());
    assert.equal(reached[0]!.headers.referer, 'http://site.test/list');
    assert.equal(reached[1]!.headers.referer, undefined);
  });
});
