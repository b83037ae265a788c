/**
 * A collection's fetch measurements for the daemon's /metrics: a latency
 * histogram with fixed buckets and the body bytes received. One per
 * collection for the life of the process (the counters of Prometheus reset
 * only when the process restarts), fed by the fetcher's measuring
 * interceptor (src/fetch/interceptors/measure.ts) at every fetch: O(1) and
 * allocation-free, a few comparisons and additions on typed arrays.
 */

/** The histogram's upper bounds, seconds (Prometheus `le`); a last bucket, +Inf, takes the rest. */
export const FETCH_LATENCY_BUCKETS_S: readonly number[] = Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]);

export interface LatencySnapshot {
  /** Upper bounds, seconds, without +Inf. */
  readonly bounds: readonly number[];
  /** Cumulative counts: `cumulative[i]` fetches took at most `bounds[i]`; the last entry is every fetch (+Inf). */
  readonly cumulative: readonly number[];
  readonly sum: number;
  readonly count: number;
}

export class FetchMetrics {
  /** Per bucket (not cumulative); index FETCH_LATENCY_BUCKETS_S.length is +Inf. */
  private readonly buckets = new Float64Array(FETCH_LATENCY_BUCKETS_S.length + 1);
  private sum = 0;
  private count = 0;
  /** Body bytes received by every fetch, pages and robots.txt. */
  bodyBytes = 0;

  /** One fetch's duration; a duration that is not a number is not an observation (it would make the sum NaN). */
  observe(seconds: number): void {
    if (Number.isNaN(seconds)) return;
    const b = FETCH_LATENCY_BUCKETS_S;
    let i = 0;
    while (i < b.length && seconds > b[i]!) i++;
    this.buckets[i]!++;
    this.sum += seconds;
    this.count++;
  }

  addBytes(n: number): void {
    this.bodyBytes += n;
  }

  latency(): LatencySnapshot {
    const cumulative: number[] = [];
    let n = 0;
    for (const c of this.buckets) cumulative.push((n += c));
    return { bounds: FETCH_LATENCY_BUCKETS_S, cumulative, sum: this.sum, count: this.count };
  }
}
