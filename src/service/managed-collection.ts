/**
 * One collection of the crawler service: its configuration and runtime, the
 * state operators set on it (MS-FSCADM), its statistics, and the cycle it is
 * running. `CrawlerService` keeps one per collection, by name.
 *
 *   status (crawl store `state` column)         operator state (`extra`, collection-state.ts)
 *
 *     crawling ◄── resume ── suspended            refreshOnly, refetch
 *        │ └────── suspend ───►┘                  feedingPaused: destination → paused
 *        └── delete ──► zombie (until its data    held: site → until ms       (preempt, quarantine)
 *                        is gone; then no row)    quarantine: site → until ms (quarantine; its timer
 *                                                                              releases the site's URIs)
 *
 * The service is the only writer of both (the crawl store is one process's),
 * so the memory here is the truth and the store its copy: every change of
 * the operator state is written whole, one at a time and in call order
 * (`update`), and takes effect in memory only once it is stored. A running
 * crawl reads the maps through callbacks, so a change reaches it at once.
 */

import type { Logger } from 'pino';
import { trawlError } from '../core/errors.ts';
import type { CollectionSettings } from '../config/registry.ts';
import type { CollectionConfig } from '../config/model.ts';
import type { CollectionCrawl } from '../engine/crawler.ts';
import { pausedByConfig } from '../sinks/feeding.ts';
import { Statistics } from '../stats/statistics.ts';
import type { CrawlStore, CycleRow } from '../store/crawl-store.ts';
import type { CollectionRuntime } from './collection-runtime.ts';
import { copyOperatorState, encodeOperatorState, type OperatorState } from './collection-state.ts';

/** MS-FSCADM 2.2.3.4 collection states this service uses. */
export type CollectionStatus = 'crawling' | 'suspended' | 'zombie';

export const ZOMBIE: CollectionStatus = 'zombie';

/** How long a quarantine whose end could not be stored waits before it tries again. */
const QUARANTINE_RETRY_MS = 30_000;
/** setTimeout's longest delay that does not overflow (about 24.8 days). */
const MAX_TIMER_MS = 2_147_000_000;

/**
 * What the runner waits for between cycles (the status detail of
 * `trawl admin status`): the next refresh cycle, disk space, or an
 * operator's resume. `untilMs` is when the wait ends by itself.
 */
export interface RunnerWait {
  readonly reason: 'refresh' | 'disk-full' | 'suspended';
  readonly sinceMs: number;
  readonly untilMs?: number;
}

export interface ManagedCollectionOptions {
  readonly config: CollectionConfig;
  /** The configuration's settings for this node. */
  readonly settings: CollectionSettings;
  readonly store: CrawlStore;
  readonly log: Logger;
  /** The crawl store's `state` column; anything but `suspended` or `zombie` reads as crawling. */
  readonly status: string;
  readonly state: OperatorState;
  /** Statistics cycles kept besides the lifetime total (MS-FSCADM 2.2.4.5). */
  readonly statsCycles: number;
  readonly now: () => number;
}

export class ManagedCollection {
  readonly name: string;
  readonly config: CollectionConfig;
  readonly settings: CollectionSettings;
  status: CollectionStatus;
  readonly stats: Statistics<'collectionschema'>;
  /** The cycle running now, if any. */
  crawl: CollectionCrawl | undefined;
  /** The running or last refresh cycle's ID and Elastic status (cycle-lifecycle.ts); undefined before the first. */
  cycle: CycleRow | undefined;
  /** The last automatic start skipped because a cycle was running (status `skipped`, crawler-service.ts); undefined if none since the daemon started. */
  skipped: CycleRow | undefined = undefined;
  /**
   * While the running cycle is an ended one reopened (its statistics cycle
   * already closed): its epoch. Its counts are merged into that statistics
   * cycle, not into the next one.
   */
  reopenedEpoch: number | undefined;
  /** The runner's loop (CrawlerService.run), once started. */
  loop: Promise<void> | undefined;
  private operator: OperatorState;
  private runtimeOf: CollectionRuntime | undefined;
  private readonly o: ManagedCollectionOptions;
  private writes: Promise<unknown> = Promise.resolve();
  private wakeFn: (() => void) | undefined;
  private waitingFor: RunnerWait | undefined;
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(o: ManagedCollectionOptions) {
    this.o = o;
    this.name = o.config.name;
    this.config = o.config;
    this.settings = o.settings;
    this.status = o.status === 'suspended' || o.status === ZOMBIE ? o.status : 'crawling';
    this.operator = o.state;
    this.stats = this.readStats(o.state.stats);
  }

  private readStats(json: unknown): Statistics<'collectionschema'> {
    const fresh = (): Statistics<'collectionschema'> => new Statistics({ schema: 'collectionschema', name: this.name, nowS: this.o.now() / 1000, keep: this.o.statsCycles });
    if (json === undefined) return fresh();
    try {
      return Statistics.fromJSON(json) as Statistics<'collectionschema'>;
    } catch {
      return fresh();
    }
  }

  /** The operator state as last stored. Read-only: change it with `update`. */
  get state(): Readonly<OperatorState> {
    return this.operator;
  }

  /** Set once, right after construction (the runtime's feeder asks `isPaused`). */
  attach(runtime: CollectionRuntime): void {
    this.runtimeOf = runtime;
    // A quarantine that ended while the service was down ends now; the others end on time.
    for (const [site, until] of this.operator.quarantine) this.scheduleQuarantineEnd(site, until);
  }

  get runtime(): CollectionRuntime {
    if (!this.runtimeOf) throw new Error(`collection ${this.name} has no runtime attached`);
    return this.runtimeOf;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  // ------------------------------------------------------------ operator state

  /**
   * Applies `change` to a copy of the operator state, stores the copy, then
   * makes it the state; one change at a time, in call order. A change that
   * throws (a refused operation) or a store that fails changes nothing.
   */
  update<T>(change: (draft: OperatorState) => T): Promise<T> {
    const run = async (): Promise<T> => {
      const draft = copyOperatorState(this.operator);
      const result = change(draft);
      await this.o.store.updateCollection(this.name, { extra: encodeOperatorState(draft) });
      this.operator = draft;
      return result;
    };
    const next = this.writes.then(run, run);
    this.writes = next.catch(() => undefined);
    return next;
  }

  /** Paused by CollectionSuspendFeeding, else by the configuration (`ds_paused`, the destination's `paused`). */
  isPaused(destination: string, state: Readonly<OperatorState> = this.operator): boolean {
    return state.feedingPaused.get(destination) ?? pausedByConfig(this.settings, destination);
  }

  /** Content destination → feeding (true) or paused (false). */
  feedingNow(): Record<string, boolean> {
    const out: Record<string, boolean> = {};
    for (const d of this.runtime.destinations.keys()) out[d] = !this.isPaused(d);
    return out;
  }

  /**
   * Pauses (or resumes) feeding to `destinations`; returns those that
   * changed. Refused when none would (MS-FSCADM 2.2.9.21: MUST NOT already
   * be suspended); decided in the serialized update, so of two identical
   * calls at once the second is refused.
   */
  setFeedingPaused(destinations: readonly string[], paused: boolean): Promise<string[]> {
    return this.update((draft) => {
      const changing = destinations.filter((d) => this.isPaused(d, draft) !== paused);
      if (changing.length === 0) throw trawlError('FEEDING_ALREADY', { name: this.name, destinations: destinations.join(', '), state: paused ? 'suspended' : 'running' });
      for (const d of changing) draft.feedingPaused.set(d, paused);
      return changing;
    });
  }

  setRefreshOnly(on: boolean): Promise<void> {
    return this.update((draft) => {
      draft.refreshOnly = on;
    });
  }

  /** CollectionRefetch: the next cycle starts at once. */
  requestRefetch(): Promise<void> {
    return this.update((draft) => {
      draft.refetch = true;
    });
  }

  /** A cycle starts: a refetch asked for is done by it. */
  async takeRefetch(): Promise<void> {
    if (this.operator.refetch) {
      await this.update((draft) => {
        draft.refetch = false;
      });
    }
  }

  /**
   * CollectionPreemptSite / CollectionQuarantineSite: the sites are held
   * until `untilMs`; quarantined ones also keep the URIs found for them in
   * their quarantine queue, released when the quarantine ends.
   */
  async hold(sites: readonly string[], untilMs: number, quarantine: boolean): Promise<void> {
    await this.update((draft) => {
      for (const site of sites) {
        draft.held.set(site, untilMs);
        if (quarantine) draft.quarantine.set(site, untilMs);
      }
    });
    if (quarantine) for (const site of sites) this.scheduleQuarantineEnd(site, untilMs);
    this.crawl?.poke();
  }

  private scheduleQuarantineEnd(site: string, untilMs: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      void this.endQuarantine(site, untilMs).catch((err: unknown) => {
        // A store that cannot be written (a full disk): the quarantine ends at the next try instead.
        const retryAt = Math.max(untilMs, this.o.now() + QUARANTINE_RETRY_MS);
        this.o.log.warn({ collection: this.name, site, err }, 'the quarantine could not be ended; tried again in 30 s');
        if (this.stopped) return;
        this.operator.quarantine.set(site, retryAt);
        this.scheduleQuarantineEnd(site, retryAt);
      });
    }, Math.max(0, Math.min(untilMs - this.o.now(), MAX_TIMER_MS)));
    t.unref();
    this.timers.add(t);
  }

  private async endQuarantine(site: string, untilMs: number): Promise<void> {
    if (this.stopped || this.operator.quarantine.get(site) !== untilMs) return; // stopped, or quarantined again since
    await this.update((draft) => {
      draft.quarantine.delete(site);
    });
    const n = await this.o.store.releaseQuarantine(this.name, site);
    this.o.log.info({ collection: this.name, site, released: n }, 'quarantine ended');
    if (this.crawl) this.crawl.noteWork(site, n);
    else if (n > 0) await this.reopenCycle();
  }

  // ------------------------------------------------------------ status

  async suspend(): Promise<void> {
    if (this.status === 'suspended') throw trawlError('COLLECTION_ALREADY_SUSPENDED', { name: this.name });
    await this.o.store.updateCollection(this.name, { state: 'suspended' });
    this.status = 'suspended';
    this.crawl?.stop();
  }

  async resume(): Promise<void> {
    if (this.status !== 'suspended') throw trawlError('COLLECTION_NOT_SUSPENDED', { name: this.name });
    await this.o.store.updateCollection(this.name, { state: 'crawling' });
    this.status = 'crawling';
    this.wake();
  }

  /** CollectionDelete: from now on the collection is a zombie, in the store too, until its data is gone. */
  async markZombie(): Promise<void> {
    this.status = ZOMBIE;
    await this.o.store.updateCollection(this.name, { state: ZOMBIE });
  }

  /** URIs were queued while no cycle runs: the last cycle is reopened so the runner fetches them now. */
  async reopenCycle(): Promise<void> {
    await this.o.store.updateCollection(this.name, { cycleEndedMs: undefined });
    this.wake();
  }

  // ------------------------------------------------------------ statistics

  /** Stores the statistics, unless the collection's row is gone (deleted meanwhile). */
  async saveStats(): Promise<void> {
    if (!(await this.o.store.getCollection(this.name))) return;
    const json = this.stats.toJSON();
    await this.update((draft) => {
      draft.stats = json;
    });
  }

  // ------------------------------------------------------------ the runner's waits

  wake(): void {
    const w = this.wakeFn;
    this.wakeFn = undefined;
    w?.();
    this.crawl?.poke();
  }

  /** What the runner waits for now, if it waits (not while a cycle runs). */
  get waiting(): RunnerWait | undefined {
    return this.waitingFor;
  }

  /**
   * Waits for `wake()` (a stop, resume, refetch, AddURIs) or `ms`, whichever
   * comes first. The timer is cleared on wake: a refresh wait of hours would
   * otherwise keep a stopped daemon's event loop alive until it fired.
   * `reason` is what `waiting` tells meanwhile.
   */
  waitFor(ms: number | undefined, reason: RunnerWait['reason'] = 'refresh'): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const now = this.o.now();
      const wait: RunnerWait = { reason, sinceMs: now, ...(ms !== undefined ? { untilMs: now + Math.max(10, ms) } : {}) };
      const done = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        if (this.wakeFn === done) this.wakeFn = undefined;
        if (this.waitingFor === wait) this.waitingFor = undefined;
        resolve();
      };
      this.wakeFn = done;
      this.waitingFor = wait;
      if (ms !== undefined) timer = setTimeout(done, Math.max(10, Math.min(ms, MAX_TIMER_MS)));
    });
  }

  /** Stops the running cycle (in-flight URIs go back to the queue), the loop, the quarantine timers and the feeder. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.crawl?.stop();
    this.wake();
    await this.loop?.catch(() => undefined);
    await this.runtimeOf?.feeder?.stop();
  }
}
