// The fetch latency histogram behind /metrics: Prometheus `le` buckets
// (a value equal to a bound falls in that bucket), cumulative counts, and
// NaN not counted at all (it would make the sum NaN).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FETCH_LATENCY_BUCKETS_S, FetchMetrics } from '../../src/stats/fetch-metrics.ts';

describe('FetchMetrics', () => {
  it('counts each observation in the first bucket whose bound is not below it, cumulatively', () => {
    const m = new FetchMetrics();
    for (const s of [0, 0.005, 0.0051, 1, 1.5, 120, 121, Number.NaN]) m.observe(s);
    const l = m.latency();
    assert.deepEqual(l.bounds, FETCH_LATENCY_BUCKETS_S);
    assert.equal(l.cumulative.length, FETCH_LATENCY_BUCKETS_S.length + 1);
    const at = (bound: number): number => l.cumulative[FETCH_LATENCY_BUCKETS_S.indexOf(bound)]!;
    assert.equal(at(0.005), 2);
    assert.equal(at(0.01), 3);
    assert.equal(at(1), 4);
    assert.equal(at(2.5), 5);
    assert.equal(at(120), 6);
    assert.equal(l.cumulative.at(-1), 7);
    assert.equal(l.count, 7);
    assert.equal(l.sum, 0 + 0.005 + 0.0051 + 1 + 1.5 + 120 + 121);
    for (let i = 1; i < l.cumulative.length; i++) assert.ok(l.cumulative[i]! >= l.cumulative[i - 1]!);
  });

  it('adds body bytes', () => {
    const m = new FetchMetrics();
    m.addBytes(10);
    m.addBytes(5);
    assert.equal(m.bodyBytes, 15);
  });
});
