// FingerprintCache against a plain model of the same rules (a ring of keys in insertion order), under
// random operations on small tables where probe runs wrap and deletions move entries; then its
// fingerprints over a million URLs shaped like a crawl's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FingerprintCache, FingerprintReader, reservedNumber, reservedTag, stringTag, unreserved } from '../../src/core/fingerprint-cache.ts';
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
  get full(): boolean {
    return this.ring[this.next] !== undefined;
  }
  /** The live keys, oldest first, in a model of `max` places. */
  grown(max: number): Model {
    const g = new Model(max);
    for (let k = 0; k < this.max; k++) {
      const key = this.ring[(this.next + k) % this.max];
      if (key !== undefined) g.refresh(key, this.at.get(key)!.tag);
    }
    return g;
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

  it('grows into a larger cache that holds the same keys and tags and forgets them in the same order', () => {
    for (const [max, bigger, universe, seed] of [[1, 2, 4, 11], [7, 8, 30, 12], [7, 20, 40, 13], [64, 128, 400, 14], [100, 250, 300, 15]] as const) {
      const random = prng(seed);
      let c = new FingerprintCache(max, { shared: seed % 2 === 0 });
      let m = new Model(max);
      const keys = Array.from({ length: universe }, (_, i) => `http://127.0.1.${i % 7}:8080/p/${i}.html`);
      const step = (op: number): void => {
        const k = keys[Math.floor(random() * universe)]!;
        if (random() < 0.6) {
          const tag = Math.floor(random() * 5) - 2;
          c.refresh(k, tag);
          m.refresh(k, tag);
        } else assert.equal(c.get(k), m.get(k), `max ${max} → ${bigger}, seed ${seed}, op ${op}: get ${k}`);
        assert.equal(c.full, m.full, `op ${op}: full`);
      };
      for (let op = 0; op < 5_000; op++) step(op);
      const before = c;
      const held = keys.filter((k) => before.has(k)).map((k) => [k, before.get(k)]);
      c = c.grown(bigger);
      m = m.grown(bigger);
      assert.equal(c.max, bigger);
      assert.equal(c.size, m.size);
      for (const k of keys) assert.equal(c.get(k), m.get(k), `right after growing: ${k}`);
      assert.deepEqual(keys.filter((k) => before.has(k)).map((k) => [k, before.get(k)]), held, 'the old cache is left as it was');
      assert.equal(c.shared() !== undefined, seed % 2 === 0, 'shared as the old one was');
      for (let op = 5_000; op < 10_000; op++) step(op);
    }
    assert.throws(() => new FingerprintCache(4).grown(4), /holds more than 4 entries, got 4/);
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

  it('a shared cache reads the same through a FingerprintReader on its table, in this thread and in another', async () => {
    const random = prng(11);
    const c = new FingerprintCache(50, { shared: true });
    const view = new FingerprintReader(c.shared()!);
    const keys = Array.from({ length: 120 }, (_, i) => `http://127.0.1.${i % 3}:8080/p/${i}.html`);
    for (let op = 0; op < 5_000; op++) {
      const k = keys[Math.floor(random() * keys.length)]!;
      if (random() < 0.6) c.refresh(k, Math.floor(random() * 4));
      else assert.equal(view.get(k), c.get(k), `op ${op}: ${k}`);
    }
    // Another thread sees the same table without a copy: what it answers for every key is what the cache holds now.
    const { Worker } = await import('node:worker_threads');
    const script = `
      const { parentPort, workerData } = require('node:worker_threads');
      import(workerData.module).then(({ FingerprintReader }) => {
        const view = new FingerprintReader(workerData.mem);
        parentPort.postMessage(workerData.keys.map((k) => view.get(k) ?? null));
      });`;
    const w = new Worker(script, { eval: true, workerData: { module: new URL('../../src/core/fingerprint-cache.ts', import.meta.url).href, mem: c.shared(), keys } });
    const seen = await new Promise<Array<number | null>>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
    await w.terminate();
    assert.deepEqual(seen, keys.map((k) => c.get(k) ?? null));
    assert.ok(seen.filter((t) => t !== null).length === c.size);
  });

  it('tells whether a key is among fingerprints taken with lastFingerprint', () => {
    const c = new FingerprintCache(10);
    const pairs = new Int32Array(4);
    c.refresh('a', 1);
    c.refresh('b', 2);
    c.get('a');
    c.lastFingerprint(pairs, 0);
    c.has('b');
    c.lastFingerprint(pairs, 2);
    assert.deepEqual(['a', 'b', 'c'].map((k) => c.listed(k, pairs)), [true, true, false]);
    assert.equal(c.listed('a', new Int32Array(0)), false);
  });

  it('answers a batch of lookups (findMany) as get answers each key, fingerprints included', () => {
    const c = new FingerprintCache(1000, { shared: true });
    for (let i = 0; i < 1500; i++) c.refresh(`http://h${i % 7}.test/p${i}`, i % 7);
    const reader = new FingerprintReader(c.shared()!);
    // Held, evicted, never seen, repeated, and the empty batch.
    const keys = ['http://h0.test/p1400', 'http://h1.test/p8', 'http://nowhere.test/', 'http://h0.test/p1400', 'http://h0.test/p1001'];
    const fps = new Int32Array(keys.length * 2);
    const found = new Int32Array(keys.length);
    reader.findMany(keys, fps, found);
    const one = new Int32Array(2);
    keys.forEach((k, i) => {
      const tag = reader.get(k);
      reader.lastFingerprint(one, 0);
      assert.deepEqual([fps[2 * i], fps[2 * i + 1]], [one[0], one[1]], k);
      assert.equal(found[i]! >= 0 ? reader.tagAt(found[i]!) : undefined, tag, k);
    });
    assert.deepEqual([...found].map((slot) => slot >= 0), [true, false, false, true, true]);
    reader.findMany([], new Int32Array(0), new Int32Array(0));
  });

  it('lends its table only when made shared, and a reader checks the table\'s shape', () => {
    assert.equal(new FingerprintCache(10).shared(), undefined);
    assert.ok(new FingerprintCache(10, { shared: true }).shared()!.slots.buffer instanceof SharedArrayBuffer);
    assert.throws(() => new FingerprintReader({ slots: new Int32Array(12) }), /power of two slots of four numbers, got 12/);
  });

  it('refuses a size it cannot hold', () => {
    assert.throws(() => new FingerprintCache(0), /from 1 to 2\^28, got 0/);
    assert.throws(() => new FingerprintCache(1.5), RangeError);
  });
});

describe('reserved tags', () => {
  it('numbers 256 tags that no string\'s tag can be', () => {
    const reserved = Array.from({ length: 256 }, (_, n) => reservedTag(n));
    assert.equal(new Set(reserved).size, 256);
    reserved.forEach((t, n) => {
      assert.equal(reservedNumber(t), n);
      // A hash that lands in the block is moved out of it, to a tag that is not reserved.
      assert.equal(reservedNumber(unreserved(t)), -1);
      assert.notEqual(unreserved(t), t);
    });
    for (const t of [0, -1, 1, 0x7e57a4ff, 0x7e57a600]) {
      assert.equal(reservedNumber(t), -1, String(t));
      assert.equal(unreserved(t), t, 'other tags are kept');
    }
    for (let i = 0; i < 100_000; i++) assert.equal(reservedNumber(stringTag(`http://h${i}.example:80`)), -1);
    assert.throws(() => reservedTag(256), /from 0 to 255, got 256/);
    assert.throws(() => reservedTag(-1), RangeError);
  });
});
