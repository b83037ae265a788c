// Reading the headers a response kept apart.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { headerPairs, headerValues } from '../../src/fetch/fetch-types.ts';

describe('headerValues and headerPairs', () => {
  const raw = { 'set-cookie': ['a=1', 'b=2'], 'content-type': 'text/html', absent: undefined };

  it('give every value of a header, one or repeated, and none for an absent one or an outcome made without rawHeaders', () => {
    assert.deepEqual(headerValues(raw, 'set-cookie'), ['a=1', 'b=2']);
    assert.deepEqual(headerValues(raw, 'content-type'), ['text/html']);
    assert.deepEqual(headerValues(raw, 'absent'), []);
    assert.deepEqual(headerValues(raw, 'location'), []);
    assert.deepEqual(headerValues(undefined, 'set-cookie'), []);
  });

  it('list the pairs, a repeated header\'s values together and in order', () => {
    assert.deepEqual(headerPairs(raw), [['set-cookie', 'a=1'], ['set-cookie', 'b=2'], ['content-type', 'text/html']]);
    assert.deepEqual(headerPairs(undefined), []);
  });
});
