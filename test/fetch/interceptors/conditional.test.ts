// The conditional-GET interceptor around a fake core.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeFetch } from '../../../src/fetch/interceptor.ts';
import { conditionalGet } from '../../../src/fetch/interceptors/conditional.ts';
import { call, fakeCore } from '../fake-core.ts';

describe('conditionalGet', () => {
  const send = async (more: Parameters<typeof call>[0]) => {
    const { core, reached } = fakeCore();
    await composeFetch(core, [conditionalGet])(call(more));
    return reached[0]!.headers;
  };

  it('sends the stored validators as If-None-Match and If-Modified-Since', async () => {
    const h = await send({ ifNoneMatch: '"v1"', ifModifiedSince: 'Wed, 25 Nov 2026 10:00:00 GMT' });
    assert.equal(h['if-none-match'], '"v1"');
    assert.equal(h['if-modified-since'], 'Wed, 25 Nov 2026 10:00:00 GMT');
  });

  it('sends each one only when the record has it', async () => {
    assert.deepEqual(await send({}), { 'user-agent': 'trawl-test' });
    assert.deepEqual(await send({ ifNoneMatch: '"v1"' }), { 'user-agent': 'trawl-test', 'if-none-match': '"v1"' });
    assert.deepEqual(await send({ ifModifiedSince: 'Wed, 25 Nov 2026 10:00:00 GMT' }), { 'user-agent': 'trawl-test', 'if-modified-since': 'Wed, 25 Nov 2026 10:00:00 GMT' });
  });

  it('sends no empty validator', async () => {
    assert.deepEqual(await send({ ifNoneMatch: '', ifModifiedSince: '' }), { 'user-agent': 'trawl-test' });
  });
});
