// FingerprintCache against a plain model of the same rules (a ring of keys in insertion order), under
// random operations on small tables where probe runs wrap and deletions move entries; then its
// fingerprints over a million URLs shaped like a crawl's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FingerprintCache } from '../../src/core/fingerprint-cache.ts';
import { prng } from '../support/prng.ts';

/** The intended behaviour, written plainly: a ring of max places; refresh leaves a hole where the key was. */
class Model {
  private readonly ring: Array<string | undefined>;
  private readonly at = new Map<string, { place: number; tag: number }>();
  private next = 0;
  readonly max: number;
  constructor(max: number) {
    this.max = max;
    this.ring = new Array<string | undefined>(max);
  }
  get size(): number {
    return this.at.size;
  }
  get(k: string): number | undefined {
    return this.at.get(k)?.tag;
  }
  refresh(k: string, tag: number): void {
    const old = this.at.get(k);
    if (old) this.ring[old.place] = undefined;
    const evicted = this.ring[this.next];
    if (evicted !== undefined) this.at.delete(evicted);
    this.ring[this.next] = k;
    this.at.set(k, { place: this.next, tag });
    this.next = (this.next + 1) % this.max;
  }
  clear(): void {
    this.ring.fill(undefined);
    this.at.clear();
    this.next = 0;
  }
}

describe('FingerprintCache', () => {
  it('behaves as the model under random refresh, get, has and clear', () => {
    for (const [max, universe, seed] of [[1, 3, 1], [2, 5, 2], [7, 20, 3], [7, 9, 4], [64, 200, 5], [100, 120, 6]] as const) {
      const random = prng(seed);
      const c = new FingerprintCache(max);
      const m = new Model(max);
      const keys = Array.from({ length: universe }, (_, i) => `http://127.0.1.${i % 7}:8080/p/${i}.html`);
      for (let op = 0; op < 20_000; op++) {
        const k = keys[Math.floor(random() * universe)]!;
        const r = random();
        if (r < 0.6) {
          const tag = Math.floor(random() * 5) - 2;
          c.refresh(k, tag);
          m.refresh(k, tag);
        } else if (r < 0.9995) {
          assert.equal(c.get(k), m.get(k), `max ${max} seed ${seed} op ${op}: get ${k}`);
          assert.equal(c.has(k), m.get(k) !== undefined);
        } else {
          c.clear();
          m.clear();
        }
        assert.equal(c.size, m.size, `max ${max} seed ${seed} op ${op}: size`);
        assert.ok(c.size <= max);
      }
      // Every key of the universe answers as the model does at the end.
      for (const k of keys) assert.equal(c.get(k), m.get(k), `max ${max} seed ${seed}: final ${k}`);
    }
  });

  it('forgets the oldest first, and a refreshed key counts as new', () => {
    const c = new FingerprintCache(3);
    for (const k of ['a', 'b', 'c']) c.refresh(k, 1);
    c.refresh('d', 2); // full: a, the oldest, goes
    assert.deepEqual(['a', 'b', 'c', 'd'].map((k) => c.get(k)), [undefined, 1, 1, 2]);
    c.refresh('c', 3); // c becomes the newest; its old place is left as a hole, and b, now the oldest, goes
    assert.deepEqual(['b', 'c', 'd'].map((k) => c.get(k)), [undefined, 3, 2]);
    assert.equal(c.size, 2);
    c.refresh('e', 4); // the ring reaches c's old place, a hole: nothing is forgotten
    assert.deepEqual(['c', 'd', 'e'].map((k) => c.get(k)), [3, 2, 4]);
    assert.equal(c.size, 3);
  });

  it('holds a million URLs shaped like a crawl\'s with no two sharing a fingerprint', () => {
    const n = 1_000_000;
    const c = new FingerprintCache(n);
    const url = (i: number): string => `http://127.0.${(i >> 16) & 255}.${i & 255}:8080/s${i % 97}/page-${i}.html?q=${i % 13}`;
    for (let i = 0; i < n; i++) c.refresh(url(i), i);
    // A collision would lose a key (refresh would treat the second as the first): the size would fall short.
    assert.equal(c.size, n);
    for (let i = 0; i < n; i += 997) assert.equal(c.get(url(i)), i);
    // Near misses, one character off, are not held.
    for (let i = 0; i < n; i += 4999) {
      assert.equal(c.has(`${url(i)}x`), false);
      assert.equal(c.has(url(i).replace('http:', 'https:')), false);
    }
  });

  it('refuses a size it cannot hold', () => {
    assert.throws(() => new FingerprintCache(0), /from 1 to 2\^28, got 0/);
    assert.throws(() => new FingerprintCache(1.5), RangeError);
  });
});
