// The smfilter Bloom filter: no false negatives, and a false-positive rate near the theory.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BloomFilter } from '../../src/frontier/bloom.ts';

describe('Bloom filter (smfilter)', () => {
  it('never forgets what was added, and rarely claims what was not', () => {
    const b = new BloomFilter(10 * 10_000);
    for (let i = 0; i < 10_000; i++) b.add(`http://h${i % 97}.test/p/${i}.html`);
    for (let i = 0; i < 10_000; i++) assert.equal(b.mightContain(`http://h${i % 97}.test/p/${i}.html`), true);
    let fp = 0;
    for (let i = 0; i < 10_000; i++) if (b.mightContain(`http://other.test/q/${i}`)) fp++;
    // 10 bits per element and 7 hashes: about 0.8% in theory.
    assert.ok(fp < 300, `${fp} false positives in 10,000`);
  });
});
