// BoundedMap against a plain model (an array in eviction order), over long
// random runs of set / refresh / delete / clear, so that the iterator it keeps
// across evictions is checked through rehashes, re-added keys and clears.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedMap } from '../../src/core/bounded-map.ts';
import { prng } from '../support/prng.ts';

class Model {
  order: string[] = [];
  values = new Map<string, number>();
  readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  set(k: string, v: number, refresh: boolean): void {
    if (this.values.has(k) && refresh) this.order.splice(this.order.indexOf(k), 1);
    if (!this.values.has(k) || refresh) this.order.push(k);
    this.values.set(k, v);
    while (this.order.length > this.max) this.values.delete(this.order.shift()!);
  }
  delete(k: string): void {
    if (this.values.delete(k)) this.order.splice(this.order.indexOf(k), 1);
  }
}

describe('BoundedMap', () => {
  it('forgets the oldest key first, keeps a replaced key in place, and moves a refreshed one to the end', () => {
    const m = new BoundedMap<string, number>(3);
    m.set('a', 1).set('b', 2).set('c', 3);
    m.set('a', 10); // replaced, still the oldest
    m.set('d', 4);
    assert.deepEqual([...m.keys()], ['b', 'c', 'd']);
    m.refresh('b', 20); // now the newest
    m.set('e', 5);
    assert.deepEqual([...m.keys()], ['d', 'b', 'e']);
    assert.equal(m.get('b'), 20);
    assert.equal(m.get('c'), undefined);
    assert.equal(m.size, 3);
  });

  it('rejects a maximum that is not a positive integer, naming it', () => {
    assert.throws(() => new BoundedMap(0), /positive integer, got 0/);
    assert.throws(() => new BoundedMap(2.5), /positive integer, got 2.5/);
  });

  for (const [max, keySpace] of [[1, 4], [7, 20], [64, 100], [1000, 5000]] as const) {
    it(`matches the model over 200,000 random operations (max ${max}, ${keySpace} keys)`, () => {
      const rnd = prng(max * 7919 + keySpace);
      const m = new BoundedMap<string, number>(max);
      const model = new Model(max);
      for (let i = 0; i < 200_000; i++) {
        const k = `k${Math.floor(rnd() * keySpace)}`;
        const r = rnd();
        if (r < 0.5) {
          m.set(k, i);
          model.set(k, i, false);
        } else if (r < 0.8) {
          m.refresh(k, i);
          model.set(k, i, true);
        } else if (r < 0.9999) {
          m.delete(k);
          model.delete(k);
        } else {
          m.clear();
          model.order = [];
          model.values.clear();
        }
        if (i % 997 === 0 || i === 199_999) {
          assert.deepEqual([...m.keys()], model.order, `eviction order after operation ${i}`);
          for (const key of model.order) assert.equal(m.get(key), model.values.get(key));
        }
        assert.ok(m.size <= max);
      }
    });
  }
});
