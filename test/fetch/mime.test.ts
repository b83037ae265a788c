import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectMime, mimeMatches } from '../../src/fetch/mime.ts';

describe('mimeMatches (allowed_types, uri_search_mime)', () => {
  it('matches whole fields, with * for either, in any case', () => {
    const allowed = ['text/html', 'application/*', 'Image/PNG'];
    assert.equal(mimeMatches('text/html', allowed), true);
    assert.equal(mimeMatches('TEXT/HTML', allowed), true);
    assert.equal(mimeMatches('text/htmlx', allowed), false);
    assert.equal(mimeMatches('text/plain', allowed), false);
    assert.equal(mimeMatches('application/pdf', allowed), true);
    assert.equal(mimeMatches('image/png', allowed), true);
    assert.equal(mimeMatches('image/gif', allowed), false);
    assert.equal(mimeMatches('anything/at-all', ['*/*']), true);
    assert.equal(mimeMatches('text/html', []), false);
  });

  it('answers each list by its own patterns, the same the second time as the first', () => {
    const a = ['text/*'];
    const b = ['application/pdf'];
    for (let round = 0; round < 2; round++) {
      assert.equal(mimeMatches('text/html', a), true);
      assert.equal(mimeMatches('text/html', b), false);
      assert.equal(mimeMatches('application/pdf', a), false);
      assert.equal(mimeMatches('application/pdf', b), true);
    }
  });

  it('stays right past the number of types it remembers per list', () => {
    const list = ['x-type/keep'];
    for (let i = 0; i < 1000; i++) assert.equal(mimeMatches(`x-type/t${i}`, list), false);
    assert.equal(mimeMatches('x-type/keep', list), true);
    assert.equal(mimeMatches('x-type/t999', list), false);
  });
});

describe('detectMime', () => {
  it('takes the declared type unless detection is forced', () => {
    const html = new TextEncoder().encode('<!doctype html><html><body>hi</body></html>');
    assert.equal(detectMime('text/plain; charset=utf-8', html, false), 'text/plain');
    assert.equal(detectMime('text/plain', html, true), 'text/html');
  });
});
