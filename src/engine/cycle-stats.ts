/**
 * A crawl's counters: the cycle summary's totals (Counters) and every
 * site's statistics (SiteStats, MS-FSCADM's site schema), with the running
 * sum of all sites and the saving of the sites that changed.
 *
 *   statsFor(site) ──► SiteStats ──attach──► totals (the sum, kept as they count)
 *        └─ marks the site changed ──► saveChanged() every STATS_SAVE_INTERVAL_MS
 *                                      saveAll() when a cycle stops or ends
 *
 * A kill -9 loses at most STATS_SAVE_INTERVAL_MS of a site's counters; the
 * records and the queue, which are what a resumed crawl goes by, are
 * committed with each fetch.
 */

import type { DocSkipCode, UriSkipCode } from '../core/skip-codes.ts';
import type { CrawlStore } from '../store/crawl-store.ts';
import { emptyStats, mergeDiscrete, SiteStats, type StatsData } from '../stats/site-stats.ts';
import type { CrawlEvents } from './crawl-events.ts';

/** The totals a cycle summary reports (CycleSummary). */
export interface Counters {
  requests: number;
  stored: number;
  unchanged: number;
  duplicates: number;
  errors: number;
  deleted: number;
  retries: number;
  robotsRequests: number;
  bytesIn: number;
  uriSkips: Record<string, number>;
  docSkips: Record<string, number>;
  httpStatus: Record<string, number>;
}

/** Sites whose statistics share one transaction when a cycle ends, or one answer when it starts (about 0.7 MB of JSON). */
export const SAVE_STATS_BATCH = 1000;
/**
 * How often the sites whose statistics changed are saved while a cycle
 * runs (saveChanged), rather than with every completion in its
 * transaction (bench/README.md, *What changed*, ec06da1).
 */
export const STATS_SAVE_INTERVAL_MS = 1000;

export function bump(h: Record<string, number>, k: string, n = 1): void {
  h[k] = (h[k] ?? 0) + n;
}

export class CycleStats {
  readonly c: Counters = { requests: 0, stored: 0, unchanged: 0, duplicates: 0, errors: 0, deleted: 0, retries: 0, robotsRequests: 0, bytesIn: 0, uriSkips: {}, docSkips: {}, httpStatus: {} };
  /** Every site's statistics (this cycle's, or an earlier cycle's read back). */
  readonly sites = new Map<string, SiteStats>();
  /** The cycle the statistics count for: a site's first count in a new cycle starts its cycle times. */
  epoch = 0;
  /** Sites whose statistics may have changed since they were last saved (statsFor marks them). */
  private readonly changed = new Set<string>();
  private saving: Promise<void> | undefined;
  /**
   * The sum of every site's counters, histograms and maxima, kept up to date
   * by the sites' SiteStats as they count (SiteStats.attach): summing every
   * site at each look stops the event loop for a time that grows with the
   * sites (bench/README.md, *Memory per site*, 9cc8079).
   */
  private totals = new SiteStats();

  private readonly store: CrawlStore;
  private readonly collection: string;
  private readonly events: CrawlEvents;
  private readonly now: () => number;

  /**
   * A node of a multinode installation (CrawlerOptions.routing): the crawl
   * store's site statistics are every node's. This node counts only what
   * it does itself (its totals are its share, which the multinode scheduler
   * sums), reads none back at a cycle's start, and saves only the sites it
   * counted for: each one's saved statistics (`bases`: another node's, or
   * an earlier run's) with its own on top.
   */
  private readonly shared: boolean;
  /** Shared: each site's statistics as the crawl store held them when this node first counted for it. */
  private readonly bases = new Map<string, StatsData>();
  /** Shared: sites whose base is being read; not saved until it is in (a save would lose it). */
  private readonly basePending = new Set<string>();

  constructor(store: CrawlStore, collection: string, events: CrawlEvents, now: () => number, shared = false) {
    this.store = store;
    this.collection = collection;
    this.events = events;
    this.now = now;
    this.shared = shared;
  }

  /** A site's statistics, about to change: saved by the next saveChanged. */
  statsFor(site: string): SiteStats {
    this.changed.add(site);
    let st = this.sites.get(site);
    if (!st) {
      st = new SiteStats(undefined, this.totals);
      this.sites.set(site, st);
      if (this.shared) this.readBase(site);
    }
    if (st.data.discrete.Epoch !== this.epoch) {
      const t = Math.floor(this.now() / 1000);
      st.data.discrete.Epoch = this.epoch;
      st.data.discrete.CrawlStarted = t;
      st.data.discrete.LastRefresh = t;
    }
    return st;
  }

  /** Counts `n` URIs found on a page of the site whose statistics are `st` and not queued, for `code`. */
  uriSkips(st: SiteStats, code: UriSkipCode, n: number): void {
    bump(this.c.uriSkips, code, n);
    st.count('URISkip', code, n);
  }

  /** Counts a document not stored, for `code`. */
  docSkip(st: SiteStats, code: DocSkipCode): void {
    bump(this.c.docSkips, code);
    st.count('DocSkip', code);
  }

  /**
   * The collection's counters: what SiteStats.merge of every site gives, from
   * the running totals. Only the discrete values (queue length, cycle
   * times, last URI) are folded site by site, which is cheap. Undefined
   * before any site has statistics.
   */
  totalsData(): StatsData | undefined {
    if (this.sites.size === 0) return undefined;
    const discrete = emptyStats().discrete;
    for (const st of this.sites.values()) mergeDiscrete(discrete, st.data.discrete);
    const t = this.totals.data;
    return { continuous: t.continuous, histograms: t.histograms, maxima: t.maxima, discrete };
  }

  /** Shared: reads the site's saved statistics, the base its own counts are saved on. */
  private readBase(site: string): void {
    this.basePending.add(site);
    void this.store.getSiteStats(this.collection, site).then((json) => {
      if (json !== undefined) this.bases.set(site, SiteStats.parse(json).data);
    }, () => undefined).finally(() => this.basePending.delete(site));
  }

  /** Reads the sites' statistics back from the crawl store, a page at a time, and sums them afresh (shared: this node's own, from memory). */
  async load(): Promise<void> {
    if (this.shared) {
      this.totals = new SiteStats();
      for (const st of this.sites.values()) {
        this.totals.merge(st.data);
        st.attach(this.totals);
      }
      return;
    }
    // A page at a time: the JSON in flight stays bounded however many sites there are
    // (bench/README.md, *Memory per site*, 50bf122).
    for (let after: string | undefined; ;) {
      const page = await this.store.listSiteStats(this.collection, { ...(after !== undefined ? { after } : {}), limit: SAVE_STATS_BATCH });
      for (const { site, json } of page) this.sites.set(site, SiteStats.parse(json));
      if (page.length < SAVE_STATS_BATCH) break;
      after = page[page.length - 1]!.site;
    }
    this.totals = new SiteStats();
    for (const st of this.sites.values()) {
      this.totals.merge(st.data);
      st.attach(this.totals);
    }
  }

  /**
   * The statistics of the sites that changed since the last call, every
   * STATS_SAVE_INTERVAL_MS while a cycle runs. One save at a time: a call
   * while one is being written returns that one.
   */
  saveChanged(): Promise<void> {
    if (this.saving || this.changed.size === 0) return this.saving ?? Promise.resolve();
    const sites = [...this.changed];
    this.changed.clear();
    this.saving = this.put(sites)
      .catch((err: unknown) => {
        // Saved again at the next interval, and all of them when the cycle stops.
        for (const site of sites) this.changed.add(site);
        this.events.emit({ type: 'error', code: 'TRAWL_ERR_IO', message: `cannot save site statistics: ${(err as Error).message}` });
      })
      .finally(() => {
        this.saving = undefined;
      });
    return this.saving;
  }

  /** The save under way, if any. */
  settled(): Promise<void> | undefined {
    return this.saving;
  }

  /** Every site's statistics, when a cycle stops or ends; `queueLength` gives a site's queue length. */
  async saveAll(ended: boolean, queueLength: (site: string) => number): Promise<void> {
    const endedS = Math.floor(this.now() / 1000);
    for (const [site, st] of this.sites) {
      st.data.discrete.QueueLength = queueLength(site);
      if (ended) st.data.discrete.CrawlEnded = endedS;
    }
    await this.put(this.sites.keys());
    this.changed.clear();
  }

  /**
   * The statistics of `sites`, SAVE_STATS_BATCH sites per transaction and
   * serialised a batch at a time: one autocommit per site made a crawl of
   * a million hosts spend minutes on this at each cycle end and each stop.
   */
  /** A site's statistics to save: its base with this node's own counts on top. */
  private onBase(base: StatsData, own: SiteStats): SiteStats {
    const out = SiteStats.parse(JSON.stringify(base));
    out.merge(own.data);
    return out;
  }

  private async put(sites: Iterable<string>): Promise<void> {
    let rows: Array<{ site: string; json: string }> = [];
    for (const site of sites) {
      const st = this.sites.get(site);
      if (!st) continue;
      if (this.shared && this.basePending.has(site)) {
        this.changed.add(site);
        continue;
      }
      const base = this.shared ? this.bases.get(site) : undefined;
      rows.push({ site, json: JSON.stringify(base ? this.onBase(base, st) : st) });
      if (rows.length >= SAVE_STATS_BATCH) {
        await this.store.putSiteStatsMany(this.collection, rows);
        rows = [];
      }
    }
    if (rows.length > 0) await this.store.putSiteStatsMany(this.collection, rows);
  }
}
