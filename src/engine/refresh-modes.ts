/**
 * refresh_mode per sub-collection (MS-FSCCFG 2.2.3 refresh_mode, 2.2.4.33):
 * a sub-collection that sets its own mode has it applied to its URIs, the
 * collection's mode to the others.
 *
 *   new cycle ─► dropStale: scratch (and adaptive) groups lose what the last cycle left queued
 *            ─► soft groups: the sites with URIs still queued are not refreshed (seeding.ts)
 *            ─► seed: append groups' URIs queued at the back, prepend groups' in front
 *
 * A URI's group is its frontier row's sub-collection (`sub`, set when it
 * was queued) for the drop, and the sub-collection its URL matches now for
 * seeding. `adaptive` is the collection's alone: when either the
 * collection or a sub-collection uses it and the other differs, the
 * collection's mode decides (the minor cycles of adaptive-refresh.ts plan
 * a site's URIs together), and the configuration warnings say so.
 */

import type { CollectionSettings } from '../config/registry.ts';
import type { CrawlStore } from '../store/crawl-store.ts';
import type { Runtime } from './runtime.ts';

export type RefreshMode = CollectionSettings['refreshMode'];

/** Modes that drop what the last cycle left queued. */
const DROPS: ReadonlySet<RefreshMode> = new Set(['scratch', 'adaptive']);

export class RefreshModes {
  readonly main: RefreshMode;
  /** The sub-collections whose mode is not the collection's, with theirs. */
  readonly own: ReadonlyMap<string, RefreshMode>;

  constructor(main: RefreshMode, subs: ReadonlyArray<{ readonly name: string; readonly mode: RefreshMode }>) {
    this.main = main;
    this.own = new Map(subs.filter((s) => s.mode !== main && s.mode !== 'adaptive' && main !== 'adaptive').map((s) => [s.name, s.mode]));
  }

  static of(rt: Runtime): RefreshModes {
    return new RefreshModes(rt.settings.refreshMode, rt.subs.map((s) => ({ name: s.name, mode: s.settings.refreshMode })));
  }

  /** True when some sub-collection's own mode applies. */
  get mixed(): boolean {
    return this.own.size > 0;
  }

  /** The mode for the URIs of `sub` (undefined: the collection's own URIs). */
  modeOf(sub: string | undefined): RefreshMode {
    return sub === undefined ? this.main : (this.own.get(sub) ?? this.main);
  }

  /** True when some group uses `mode`. */
  uses(mode: RefreshMode): boolean {
    return this.main === mode || [...this.own.values()].includes(mode);
  }

  /**
   * At a new cycle's start: drops what the last cycle left queued for the
   * groups whose mode says so (URIs queued for cycle `epoch` already, sent
   * by another collection, stay). Returns how many.
   */
  async dropStale(store: CrawlStore, name: string, epoch: number): Promise<number> {
    if (!this.mixed) return DROPS.has(this.main) ? store.dropQueued(name, undefined, epoch) : 0;
    const keeping = [...this.own].filter(([, m]) => !DROPS.has(m)).map(([n]) => n);
    const dropping = [...this.own].filter(([, m]) => DROPS.has(m)).map(([n]) => n);
    if (DROPS.has(this.main)) return store.dropQueued(name, undefined, epoch, { names: keeping, except: true });
    return dropping.length === 0 ? 0 : store.dropQueued(name, undefined, epoch, { names: dropping, except: false });
  }
}
