/**
 * The order in which a site's URIs leave its priority levels
 * (MS-FSCCFG 2.2.4.15 pop_scheme, 2.2.4.16 share).
 *
 *   pri        strict priority: level 1 while it has URIs, then 2, …
 *              (the store's own lease order; no LevelPop is made)
 *   rr         the levels in turn, one URI each
 *   wrr        the levels in turn, each by its share: with shares 2 and 1,
 *   default    level 1 gives two URIs for each one of level 2
 *
 * rr and wrr are stride scheduling: each site counts the URIs it took from
 * each level (`taken`), and the next lease prefers the level whose next URI
 * would have the lowest `(taken + 1) / share`; ties go to the higher
 * priority (the lower number). The preference is a full ordering of the
 * levels, handed to the store's lease, so a level with nothing queued is
 * passed over in the same query. A level without a share counts as share 1
 * (rr is wrr with every share 1).
 *
 * The levels themselves are the frontier's `priority` column, set by
 * put_scheme when a URI is queued: they survive a restart. So do the
 * turns: a site's counts start from what the crawl store says the cycle
 * took from each level (`FrontierStore.levelCounts`, read at the site's
 * first lease in a run), so a resumed cycle goes on where it stopped.
 *
 * Made only when the collection has more than one level and pop_scheme is
 * not pri: a single-level crawl has no per-lease work here.
 */

export type PopScheme = 'rr' | 'wrr' | 'pri' | 'default';

export class LevelPop {
  private readonly shares: Float64Array;
  private readonly taken = new Map<string, Float64Array>();
  readonly levels: number;

  /** `shares[i]`: the share of level i + 1 (undefined: 1). */
  constructor(levels: number, scheme: PopScheme, shares: ReadonlyMap<number, number>) {
    this.levels = levels;
    this.shares = new Float64Array(levels);
    for (let l = 1; l <= levels; l++) this.shares[l - 1] = scheme === 'rr' ? 1 : Math.max(1, shares.get(l) ?? 1);
  }

  /** The pop scheme's LevelPop for a collection, or undefined when the store's priority order is the answer (one level, or pri). */
  static of(levels: number, scheme: PopScheme, shares: ReadonlyMap<number, number>): LevelPop | undefined {
    return levels > 1 && scheme !== 'pri' ? new LevelPop(levels, scheme, shares) : undefined;
  }

  private counts(site: string): Float64Array {
    let c = this.taken.get(site);
    if (!c) {
      c = new Float64Array(this.levels);
      this.taken.set(site, c);
    }
    return c;
  }

  /** True when the site's counts are known in this run (else `resume` them first). */
  knows(site: string): boolean {
    return this.taken.has(site);
  }

  /** Starts a site's counts from what the cycle already took from each level (level → count). */
  resume(site: string, taken: ReadonlyMap<number, number>): void {
    const c = this.counts(site);
    for (const [level, n] of taken) c[Math.min(Math.max(level, 1), this.levels) - 1]! += n;
  }

  /** The levels in the order this site's next lease should prefer them. */
  order(site: string): number[] {
    const c = this.counts(site);
    const ls = Array.from({ length: this.levels }, (_, i) => i + 1);
    const key = (l: number): number => (c[l - 1]! + 1) / this.shares[l - 1]!;
    return ls.sort((a, b) => key(a) - key(b) || a - b);
  }

  /** Counts a URI of `level` taken from the site's queue (a level beyond `levels` counts as the last one). */
  took(site: string, level: number): void {
    const c = this.counts(site);
    c[Math.min(Math.max(level, 1), this.levels) - 1]!++;
  }

  /** Forgets a site's turns (it has left the cycle). */
  forget(site: string): void {
    this.taken.delete(site);
  }
}
