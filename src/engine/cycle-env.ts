/**
 * What the parts of a running cycle share: the run-time settings, the
 * stores, the scheduler, the screening, the counters, the events and the
 * cycle number. Made when a cycle is set up (CollectionCrawl.setup), and
 * handed to the page stages, the outcome writer, seeding and the fetch task.
 */

import { normalizeUrl } from '../core/url.ts';
import type { ExtractPool } from '../extract/extract-pool.ts';
import type { BloomFilter } from '../frontier/bloom.ts';
import { LevelPop, type PopScheme } from '../frontier/level-pop.ts';
import type { SiteScheduler } from '../frontier/site-scheduler.ts';
import type { ContentStore } from '../store/content-store.ts';
import type { CrawlStore } from '../store/crawl-store.ts';
import type { CrawlEvents } from './crawl-events.ts';
import type { CrawlerOptions } from './crawl-types.ts';
import type { AdaptiveRefresh } from './adaptive-refresh.ts';
import type { CycleStats } from './cycle-stats.ts';
import type { CycleLimits } from './cycle-limits.ts';
import type { DiskGuard } from './disk-guard.ts';
import type { DuplicateDetector } from './duplicates.ts';
import type { LinkScreening } from './link-screening.ts';
import type { Runtime } from './runtime.ts';

export interface CycleParts {
  readonly rt: Runtime;
  readonly opts: CrawlerOptions;
  readonly events: CrawlEvents;
  readonly stats: CycleStats;
  readonly sched: SiteScheduler;
  readonly screening: LinkScreening;
  readonly duplicates: DuplicateDetector;
  readonly disk: DiskGuard;
  /** The bounds on the cycle as a whole: max_crawl_duration, max_unique_urls, limits.max_doc. */
  readonly limits: CycleLimits;
  /** smfilter: URLs queued in this run, in front of the store's seen set. */
  readonly bloom: BloomFilter | undefined;
  readonly pool: ExtractPool;
  readonly now: () => number;
}

export class CycleEnv implements CycleParts {
  readonly rt: Runtime;
  readonly opts: CrawlerOptions;
  readonly events: CrawlEvents;
  readonly stats: CycleStats;
  readonly sched: SiteScheduler;
  readonly screening: LinkScreening;
  readonly duplicates: DuplicateDetector;
  readonly disk: DiskGuard;
  readonly limits: CycleLimits;
  readonly bloom: BloomFilter | undefined;
  readonly pool: ExtractPool;
  readonly now: () => number;
  readonly store: CrawlStore;
  readonly content: ContentStore;
  /** The collection's name. */
  readonly name: string;
  /** The refresh cycle being crawled (set when it begins or is resumed). */
  epoch = 0;
  /**
   * refresh_mode soft: the sites this cycle does not refresh, each with the
   * cycle it is still crawling; a link to one of their URIs already queued
   * or fetched since then is not followed (outcome-writer.ts). Undefined in
   * other modes, and when every site was refreshed.
   */
  softSites: ReadonlyMap<string, number> | undefined = undefined;
  /** pop_scheme rr/wrr over more than one priority level: the order a site's lease prefers its levels in; undefined: priority order. */
  readonly levelPop: LevelPop | undefined;
  /** trawl_purge with refresh_mode scratch: a cycle crawls from its seeds, then the purge phase checks the rest (purge.ts). */
  readonly purges: boolean;
  /** refresh_mode adaptive: the minor cycles' scheduler (adaptive-refresh.ts); undefined in other modes. */
  adaptive: AdaptiveRefresh | undefined = undefined;

  constructor(p: CycleParts) {
    this.rt = p.rt;
    this.opts = p.opts;
    this.events = p.events;
    this.stats = p.stats;
    this.sched = p.sched;
    this.screening = p.screening;
    this.duplicates = p.duplicates;
    this.disk = p.disk;
    this.limits = p.limits;
    this.bloom = p.bloom;
    this.pool = p.pool;
    this.now = p.now;
    this.store = p.opts.store;
    this.content = p.opts.content;
    this.name = p.rt.name;
    const wq = p.rt.settings.workqueuePriority;
    const shares = new Map<number, number>();
    for (const [level, def] of Object.entries(wq.priorityLevels)) if (def.share !== undefined) shares.set(Number(level), def.share);
    this.levelPop = LevelPop.of(wq.levels, wq.popScheme as PopScheme, shares);
    this.purges = p.rt.settings.purge.enabled && p.rt.settings.refreshMode === 'scratch';
  }

  /** Resolves, then canonicalizes (rewrite_rules, named rules): the form used for the seen check. */
  normalize(raw: string, base?: string): string | undefined {
    const abs = normalizeUrl(raw, base);
    return abs === undefined ? undefined : this.rt.canon.canonicalize(abs);
  }

  /** Refresh-only (an operator's, below limits.disk_free, or at limits.max_doc): links are not followed to anything new. */
  refreshOnly(): boolean {
    return this.opts.refreshOnly?.() === true || this.disk.refreshOnly || this.limits.refreshOnly;
  }
}
