/**
 * A sub-collection's own `refresh` (MS-FSCCFG 2.2.3, 2.2.4.33: lower than
 * its collection's): while the collection waits for its next refresh
 * cycle, each sub-collection whose period is over has its URIs queued
 * again as its own refresh_mode says (Seeder.refreshSub: scratch drops
 * what of it is still queued first, prepend queues in front, soft leaves
 * out the sites with URIs still queued) and the cycle reopened, so they
 * are fetched then and not only with the collection's next cycle. One
 * that falls due while a cycle runs is recorded as a `skipped` cycle
 * (crawler-service.ts) and due again one period later.
 *
 *   collection cycle starts at S ──► sub-collection due at S + refresh(sub), then every
 *   refresh(sub) after its last refetch, until the collection's next cycle
 *
 * The times of the last refetches are the runner's, in memory: after a
 * restart a sub-collection is due one period after the cycle's start (at
 * once when that has passed).
 */

import type { CollectionConfig } from '../config/model.ts';
import { resolveSettings, subcollectionNames } from '../config/effective.ts';

export class SubRefresh {
  private readonly periods: ReadonlyArray<{ readonly name: string; readonly periodMs: number }>;
  private readonly last = new Map<string, number>();

  constructor(config: CollectionConfig, node: string | undefined, mainRefreshMin: number) {
    const nodeOpt = node !== undefined ? { node } : {};
    this.periods = subcollectionNames(config, node)
      .map((name) => ({ name, periodMs: resolveSettings(config, { ...nodeOpt, subcollection: name }).refreshMin * 60_000 }))
      .filter((p) => p.periodMs > 0 && p.periodMs < mainRefreshMin * 60_000);
  }

  get any(): boolean {
    return this.periods.length > 0;
  }

  /** The sub-collection due first in the cycle that started at `cycleStartedMs`, and when. */
  next(cycleStartedMs: number): { name: string; atMs: number } | undefined {
    let best: { name: string; atMs: number } | undefined;
    for (const p of this.periods) {
      const from = Math.max(cycleStartedMs, this.last.get(p.name) ?? cycleStartedMs);
      const at = from + p.periodMs;
      if (best === undefined || at < best.atMs) best = { name: p.name, atMs: at };
    }
    return best;
  }

  /** The sub-collection's URIs were queued again now. */
  done(name: string, nowMs: number): void {
    this.last.set(name, nowMs);
  }
}
