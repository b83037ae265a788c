/**
 * A refresh cycle's ID and its status, as the Elastic crawler names a
 * crawl's states, kept in the crawl store's cycles table so that both
 * survive a restart.
 *
 *   new cycle ─► pending ─► starting ─► running ─┬─► success    the loop ended: nothing left, a trawl_limits
 *   (new ID)    (queue      (seeding)   (fetches) │               bound, or the refresh boundary (docs/crawling.md)
 *               prepared)                        ├─► canceling ─► canceled   stop(): a suspend, a daemon stop,
 *                   ▲                            │                           Ctrl-C, trawl crawl --max-pages
 *   resumed cycle ──┘ (its ID kept)              └─► failed     the cycle threw (the reason in stoppedBy)
 *
 * A cycle canceled or failed is unfinished in the crawl store: the next run
 * resumes it, under the same ID, and its status moves on from pending again.
 * (The Elastic crawler's cancel is final; trawl's refresh cycles resume.)
 * `skipped` marks an automatic start that did not happen: in `trawl
 * serve`, a sub-collection's own `refresh` that falls due while a cycle of
 * the collection runs (crawler-service.ts watchSkips) gets a row of its
 * own, a new ID, the running cycle's epoch, and status `skipped` from the
 * start, as Elastic skips an automatic crawl that falls due while another
 * is active. (The collection's own `refresh` never falls due during a
 * cycle: it ends the cycle at its boundary and the next one starts.)
 *
 * `current` is synchronous, for whoever reports on the cycle while it runs
 * (the event logs, CollectionGetStatus); each change is also handed to
 * `onChange` and written to the store, one write at a time, in order.
 */

import { randomBytes } from 'node:crypto';
import type { CrawlStore, CycleRow, CycleStatus } from '../store/crawl-store.ts';

/** A new cycle ID: 24 hexadecimal digits, the start second then 8 random bytes (the shape of the Elastic crawler's IDs). */
export function newCycleId(nowMs: number): string {
  return Math.floor(nowMs / 1000).toString(16).padStart(8, '0').slice(-8) + randomBytes(8).toString('hex');
}

const FINAL: ReadonlySet<CycleStatus> = new Set(['success', 'canceled', 'failed', 'skipped']);

export class CycleLifecycle {
  private row: CycleRow | undefined;
  private writes: Promise<void> = Promise.resolve();
  private readonly store: CrawlStore;
  private readonly name: string;
  private readonly now: () => number;
  private readonly onChange: ((c: CycleRow) => void) | undefined;

  constructor(store: CrawlStore, name: string, now: () => number, onChange?: (c: CycleRow) => void) {
    this.store = store;
    this.name = name;
    this.now = now;
    this.onChange = onChange;
  }

  /** The cycle this object runs or last ran: its ID, epoch and status; undefined before `open`. */
  get current(): CycleRow | undefined {
    return this.row;
  }

  /**
   * The cycle `epoch` is pending: a new one gets a new ID; a resumed one
   * keeps the ID the store holds for it (a cycle begun by a version that
   * kept no IDs gets one now).
   */
  async open(epoch: number, resumed: boolean, startedMs: number): Promise<CycleRow> {
    let id: string | undefined;
    // Not a skipped one: that records an automatic start that did not happen (crawler-service.ts).
    if (resumed) id = (await this.store.listCycles(this.name, 20)).find((c) => c.epoch === epoch && c.status !== 'skipped')?.id;
    this.row = { id: id ?? newCycleId(startedMs), epoch, status: 'pending', statusMs: this.now(), startedMs, endedMs: undefined, stoppedBy: undefined };
    await this.write();
    return this.row;
  }

  /**
   * Moves the cycle to `status` (no change once it is final, and none back
   * to work once `canceling`); `stoppedBy` says what ended it.
   */
  set(status: CycleStatus, stoppedBy?: string): Promise<void> {
    const r = this.row;
    if (!r || r.status === status) return this.writes;
    if (FINAL.has(r.status)) return this.writes;
    // A stop asked for: the cycle does not go back to work; it ends canceled (or as it ended anyway).
    if (r.status === 'canceling' && (status === 'pending' || status === 'starting' || status === 'running')) return this.writes;
    const now = this.now();
    this.row = { ...r, status, statusMs: now, endedMs: FINAL.has(status) ? now : undefined, stoppedBy: stoppedBy ?? r.stoppedBy };
    return this.write();
  }

  /** The writes so far are in the store (or failed: the status is still right in memory). */
  settled(): Promise<void> {
    return this.writes;
  }

  private write(): Promise<void> {
    const row = this.row!;
    this.onChange?.(row);
    const next = this.writes.then(() => this.store.putCycle(this.name, row));
    this.writes = next.catch(() => undefined);
    return next;
  }
}

/** The status a cycle ends with, from what ended its loop. */
export function finalStatus(stoppedBy: string): CycleStatus {
  return stoppedBy === 'signal' || stoppedBy === 'max-pages' ? 'canceled' : 'success';
}
