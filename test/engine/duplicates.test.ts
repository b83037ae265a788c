import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DuplicateDetector, holdsChecksum } from '../../src/engine/duplicates.ts';
import type { CrawlStore, UriRecord } from '../../src/store/crawl-store.ts';

const A = 'http://a.test/a';
const B = 'http://a.test/b';
const SUM = 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3';

function detector(answer: (checksum: string) => Promise<string | undefined>): { d: DuplicateDetector; lookups: () => number } {
  let n = 0;
  const store = { findByChecksum: (_c: string, checksum: string) => (n++, answer(checksum)) } as unknown as CrawlStore;
  return { d: new DuplicateDetector(store, 't'), lookups: () => n };
}

const record = (over: Partial<UriRecord>): UriRecord => ({ url: A, site: 'http://a.test:80', status: 'stored', checksum: SUM, contentRef: 'r', ...over }) as UriRecord;

describe('duplicate detector', () => {
  it('claims a checksum no record holds at once, without asking the store', () => {
    const { d, lookups } = detector(() => Promise.resolve(undefined));
    d.beginCycle();
    const c = d.claim(SUM, A);
    assert.ok(!(c instanceof Promise));
    assert.equal(c.url, A);
    assert.equal(lookups(), 0);
  });

  it('makes an equal page that arrives while the first is claimed its duplicate, without asking the store', async () => {
    const { d, lookups } = detector(() => Promise.resolve(undefined));
    d.beginCycle();
    const first = d.claim(SUM, A);
    assert.equal(await d.claim(SUM, B), A);
    // Released after its commit: from then on the store answers.
    d.release(SUM, first as Exclude<typeof first, Promise<unknown>>);
    d.noteRecord(record({}));
    const again = await d.claim(SUM, B);
    assert.notEqual(typeof again, 'string');
    assert.equal(lookups(), 1);
  });

  it('asks the store for a checksum a record may hold, and answers with the original it names', async () => {
    const { d, lookups } = detector((c) => Promise.resolve(c === SUM ? A : undefined));
    d.beginCycle();
    d.noteRecord(record({}));
    assert.equal(await d.claim(SUM, B), A);
    assert.equal(lookups(), 1);
    // A duplicate holds no claim: the next page asks again.
    assert.equal(await d.claim(SUM, 'http://a.test/c'), A);
    assert.equal(lookups(), 2);
  });

  it('asks the store for every checksum before the first cycle begins (no filter yet)', async () => {
    const { d, lookups } = detector(() => Promise.resolve(undefined));
    const c = d.claim(SUM, A);
    assert.ok(c instanceof Promise);
    await c;
    assert.equal(lookups(), 1);
  });

  it('rejects a failed lookup for the page and those waiting on it, and leaves no claim behind', async () => {
    let fail = true;
    const { d } = detector(() => (fail ? Promise.reject(new Error('store gone')) : Promise.resolve(undefined)));
    const first = d.claim(SUM, A);
    const waiting = d.claim(SUM, B);
    await assert.rejects(first as Promise<unknown>, /store gone/);
    await assert.rejects(waiting as Promise<unknown>, /store gone/);
    fail = false;
    assert.notEqual(typeof (await d.claim(SUM, B)), 'string');
  });

  it('counts only stored and unchanged records with a checksum as holding it', () => {
    assert.equal(holdsChecksum(record({})), true);
    assert.equal(holdsChecksum(record({ status: 'unchanged' })), true);
    assert.equal(holdsChecksum(record({ status: 'duplicate' })), false);
    assert.equal(holdsChecksum(record({ checksum: undefined })), false);
  });
});
