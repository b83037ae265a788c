/**
 * One refresh cycle of one collection, to completion. Reads like a table
 * of contents; each step is a module of its own:
 *
 *   set up        settings ─► run-time values (runtime.ts), fetcher, robots.txt,
 *                 scheduler, link screening, the page pipeline (pipeline/)
 *   begin cycle   resume an unfinished cycle (leased URIs back to queued),
 *                 or start the next one (refresh_mode); seed (seeding.ts)
 *   loop          ready sites ─► a task each (crawl-loop.ts, site-task.ts):
 *                 robots.txt, or lease ─► fetch ─► page pipeline ─► commit
 *   end cycle     leases back, mark the cycle finished, save statistics (cycle-stats.ts)
 *
 * Crash safety: every fetch is committed in one store transaction (record,
 * discovered links, feed operations). A kill loses only what was in flight;
 * those URIs are still leased in the store and go back to the queue when
 * the cycle resumes.
 */

import { isDiskFull } from '../core/disk-full.ts';
import type { CollectionConfig } from '../config/model.ts';
import { writeCollectionXml } from '../config/writer.ts';
import type { FtpFetching } from '../fetch/ftp-lazy.ts';
import type { HttpFetcher } from '../fetch/http-fetcher.ts';
import type { HttpAuth } from '../fetch/interceptors/http-auth.ts';
import type { CrawlStore, CycleRow, LeasedUri, UriRecord } from '../store/crawl-store.ts';
import type { SiteStats, StatsData } from '../stats/site-stats.ts';
import { CollectionCookies } from './collection-cookies.ts';
import { CrawlEvents } from './crawl-events.ts';
import { crawlEnd, crawlStart } from './elastic-events.ts';
import { ElasticCrawlStats, ElasticStatusTimer } from './elastic-status.ts';
import { CrawlLoop } from './crawl-loop.ts';
import type { CrawlerOptions, CycleSummary, Progress } from './crawl-types.ts';
import type { CycleEnv } from './cycle-env.ts';
import { setUpCycle } from './cycle-setup.ts';
import { ScreenedCaches } from './link-screening.ts';
import { CycleLifecycle, finalStatus } from './cycle-lifecycle.ts';
import type { Rendering } from './rendering.ts';
import { LIMIT_PARAMETER } from './cycle-limits.ts';
import { CycleStats, STATS_SAVE_INTERVAL_MS, type Counters } from './cycle-stats.ts';
import { DuplicateDetector } from './duplicates.ts';
import { queuePurge } from './purge.ts';
import { RefreshModes } from './refresh-modes.ts';
import type { AddedUris, Seeder } from './seeding.ts';
import type { SiteTasks } from './site-task.ts';

export type { CrawlEvent, CrawlerOptions, CycleSummary, Progress } from './crawl-types.ts';
export { queueSentLinks } from './seeding.ts';
export { retryAfterMs } from './pipeline/classify.ts';

export class CollectionCrawl {
  readonly config: CollectionConfig;
  private readonly opts: CrawlerOptions;
  private readonly store: CrawlStore;
  private readonly now: () => number;
  private readonly events: CrawlEvents;
  /** Counters and site statistics: kept across the cycles this object runs. */
  private readonly stats: CycleStats;
  private readonly duplicates: DuplicateDetector;
  private readonly crawlLoop = new CrawlLoop();
  /** The cycle's ID and Elastic status (cycle-lifecycle.ts). */
  private readonly lifecycle: CycleLifecycle;
  private readonly abort = new AbortController();
  /** Sites refused by ipmask / ip6mask domain rules once their address was known. */
  private readonly addressRefused = new Map<string, string>();
  private readonly screenedCaches: ScreenedCaches;
  private readonly wake = (): void => this.crawlLoop.notify();
  /** use_cookies: the collection's jar, made by the first cycle that wants it and kept across cycles. */
  private cookies: CollectionCookies | undefined;
  private readonly cookiesFor = (sessionTtlMs: number): CollectionCookies => {
    if (this.cookies) this.cookies.setSessionTtl(sessionTtlMs);
    else this.cookies = new CollectionCookies(this.store, this.config.name, sessionTtlMs, this.now);
    return this.cookies;
  };
  // Set by setup(); `prepared` tells whether it ran.
  private prepared = false;
  private env!: CycleEnv;
  private fetcher!: HttpFetcher;
  private ftp!: FtpFetching;
  private auth: HttpAuth | undefined;
  private rendering: Rendering | undefined;
  private seeder!: Seeder;
  private siteTasks!: SiteTasks;
  private started = 0;

  constructor(config: CollectionConfig, opts: CrawlerOptions) {
    this.config = config;
    this.opts = opts;
    this.store = opts.store;
    this.now = opts.now ?? Date.now;
    this.events = new CrawlEvents(opts.onEvent);
    this.stats = new CycleStats(opts.store, config.name, this.events, this.now, opts.routing !== undefined);
    this.duplicates = new DuplicateDetector(opts.store, config.name);
    this.screenedCaches = opts.screenedCaches ?? new ScreenedCaches();
    this.lifecycle = new CycleLifecycle(opts.store, config.name, this.now, (c) => {
      this.events.cycle = c;
      // The Elastic event log's crawl id is the cycle's ID (cycle-lifecycle.ts), as Elastic's crawl ids are.
      if (this.events.elastic !== undefined && this.events.elastic.id !== c.id) this.events.elastic = { id: c.id };
      opts.onCycle?.(c);
    });
  }

  /** The cycle running or last run by this object: its ID, epoch and status; undefined before one begins. */
  cycle(): CycleRow | undefined {
    return this.lifecycle.current;
  }

  /** Stops starting fetches, aborts the ones in flight; `runCycle` then returns them to the queue. */
  stop(): void {
    if (!this.abort.signal.aborted) void this.lifecycle.set('canceling').catch(() => undefined);
    this.abort.abort();
    this.wake();
  }

  /** The per-site statistics counters of this cycle so far (MS-FSCADM site schema). */
  siteCounters(): Map<string, SiteStats> {
    return this.stats.sites;
  }

  /** The collection's counters, as SiteStats.merge of every site would give them; undefined before any site has statistics. */
  counterTotals(): StatsData | undefined {
    return this.stats.totalsData();
  }

  /** The totals this object counted so far (the cycle summary's counters); live, not a copy. */
  counters(): Readonly<Counters> {
    return this.stats.c;
  }

  /**
   * MS-FSCADM 2.2.3.6: the crawl limit in force, if any: `disk_free` while
   * the data directory's disk is below limits.disk_free or full (told
   * first: it is the news), `max_doc` while the collection holds
   * limits.max_doc documents.
   */
  crawlLimit(): 'disk_free' | 'max_doc' | undefined {
    if (!this.prepared) return undefined;
    if (this.env.disk.refreshOnly) return 'disk_free';
    return this.env.limits.refreshOnly ? 'max_doc' : undefined;
  }

  /**
   * Why the cycle fetches nothing now, if it is held as a whole (MS-FSCADM
   * 2.2.3.3): `disk-full`, a write failed for lack of space (status 5);
   * `variable-delay`, the collection's variable_delay slot is `suspend`
   * (status 8). A sub-collection's suspend slot holds only its URIs.
   */
  heldBy(): 'disk-full' | 'variable-delay' | undefined {
    if (!this.prepared) return undefined;
    if (this.env.disk.paused) return 'disk-full';
    return this.env.rt.delayNow(undefined, this.now()) === 'suspend' ? 'variable-delay' : undefined;
  }

  /** Wakes the loop (new work arrived from outside). */
  poke(): void {
    this.wake();
  }

  /** True when the running cycle knows of URIs to fetch from `site` (queued, or leased and not started). */
  hasWork(site: string): boolean {
    return this.prepared && (this.env.sched.peek(site)?.hasWork ?? false);
  }

  /** The running cycle's state of a site, for a node that may give it away (multinode): idle, and when its next request may start. */
  siteIdle(site: string): { idle: boolean; hasWork: boolean; nextStartMs: number } {
    const s = this.prepared ? this.env.sched.peek(site) : undefined;
    if (!s) return { idle: true, hasWork: false, nextStartMs: 0 };
    return { idle: s.inFlight === 0 && s.committing === 0 && !s.busy && s.buffer.length === 0, hasWork: s.hasWork, nextStartMs: s.gate.nextStartMs };
  }

  /** Tells the running cycle that `n` URIs of a site became leasable (a quarantine ended). */
  noteWork(site: string, n: number): void {
    if (n > 0 && this.prepared) this.env.sched.addWork(site, n);
    this.wake();
  }

  progress(): Progress {
    const sched = this.prepared ? this.env.sched : undefined;
    const c = this.stats.c;
    const inFlight = this.prepared ? this.siteTasks.inFlight : 0;
    return { requests: c.requests, stored: c.stored, errors: c.errors, queued: sched?.queuedTotal() ?? 0, inFlight, activeSites: sched?.activeCount() ?? 0, elapsedMs: this.now() - this.started };
  }

  // ------------------------------------------------------------ the cycle

  async runCycle(): Promise<CycleSummary> {
    try {
      return await this.runCycleSteps();
    } catch (err) {
      await this.lifecycle.set('failed', (err as Error).message?.slice(0, 500) ?? String(err)).catch(() => undefined);
      throw err;
    }
  }

  private async runCycleSteps(): Promise<CycleSummary> {
    this.started = this.now();
    this.setup();
    const env = this.env;
    // The jar is used with use_cookies, and for the login sessions of a collection with logins.
    const cookies = env.rt.settings.useCookies || Object.keys(env.rt.settings.logins).length > 0 ? this.cookies : undefined;
    await cookies?.load();
    const resumed = await this.beginCycle();
    let stoppedBy: CycleSummary['stoppedBy'] = 'done';
    env.screening.lend();
    const statsTimer = setInterval(() => {
      void this.stats.saveChanged();
      if (cookies) void this.saveCookies(cookies);
    }, STATS_SAVE_INTERVAL_MS);
    statsTimer.unref();
    env.disk.start();
    await this.lifecycle.set('running');
    // The Elastic log's periodic crawl-status (elastic-status.ts): only with that log.
    const status = this.events.elasticStats && this.elasticStatusTimer(env);
    status?.start();
    try {
      stoppedBy = await this.crawlLoop.run(env, this.siteTasks, this.opts, this.abort.signal);
      if (stoppedBy === 'done' && env.purges) stoppedBy = await this.purge();
    } finally {
      env.disk.stop();
      clearInterval(statsTimer);
      status?.stop();
      env.screening.takeBack();
      // On a full disk the leases stay as they are: the next run puts them back in the queue (recoverLeases).
      await this.returnLeases().catch((err: unknown) => this.unlessDiskFull(err, 'the URIs leased and not fetched stay leased until the next run'));
      await Promise.all([this.fetcher.close(), this.ftp.close(), this.closeRendering()]);
      await this.auth?.close();
      if (cookies) await this.saveCookies(cookies);
      await this.stats.settled();
    }
    // A trawl_limits bound ends the cycle as a success: what it left queued is abandoned (the Elastic crawler's rule).
    const limitStop = stoppedBy === 'max-duration' || stoppedBy === 'max-unique-urls' ? stoppedBy : undefined;
    let abandoned = 0;
    if (stoppedBy === 'refresh') {
      const left = (await this.store.counts(env.name)).queued;
      const fate = RefreshModes.of(env.rt).mixed ? 'dropped or kept when the next cycle starts, as the refresh_mode of the collection or of their sub-collection says'
        : env.rt.settings.refreshMode === 'scratch' || env.rt.settings.refreshMode === 'adaptive' ? 'dropped when the next cycle starts (refresh_mode scratch)' : `crawled in the next cycle (refresh_mode ${env.rt.settings.refreshMode})`;
      this.events.emit({ type: 'cycle', message: `cycle ${env.epoch} of ${env.name} ends: its refresh period (${env.rt.settings.refreshMin} min) is over; the ${left} URIs left queued are ${fate}` });
    }
    if (limitStop) {
      abandoned = await this.store.dropQueued(env.name).catch((err: unknown) => {
        this.unlessDiskFull(err, 'the URIs left queued stay queued until the next run');
        return 0;
      });
      this.events.emit({ type: 'cycle', message: `cycle ${env.epoch} of ${env.name} ends: ${LIMIT_PARAMETER[limitStop]} reached; ${abandoned} queued URIs are abandoned` });
    }
    const counts = await this.store.counts(env.name);
    // The end of the refresh period ends the cycle with what it left queued: the next cycle's, per refresh_mode.
    const complete = stoppedBy === 'refresh' ? counts.leased === 0 : (stoppedBy === 'done' || limitStop !== undefined) && counts.queued === 0 && counts.leased === 0;
    if (complete) await this.store.updateCollection(env.name, { cycleEndedMs: this.now() });
    // refresh_mode adaptive: change histories written; a complete cycle hands its deferred new URIs to the next.
    if (env.adaptive) await (complete ? env.adaptive.finish() : env.adaptive.flush());
    if (this.events.elastic) {
      const failed = stoppedBy !== 'done' && limitStop === undefined && stoppedBy !== 'refresh';
      this.events.emitElastic(crawlEnd(this.events.elastic, failed ? 'failure' : 'success', `cycle ${env.epoch} ${complete ? 'complete' : 'not complete'}: ${stoppedBy}`, !complete));
      status?.dump(); // the final crawl-status, as the Open Crawler writes one after the crawl
    }
    // peek, not get: a site known only from an earlier cycle's statistics gets no scheduler state here.
    const queueLength = (site: string): number => env.sched.peek(site)?.queued ?? 0;
    await this.stats.saveAll(complete, queueLength).catch((err: unknown) => this.unlessDiskFull(err, 'the site statistics of this run are not saved'));
    await this.lifecycle.set(complete ? 'success' : this.lifecycle.current?.status === 'canceling' ? 'canceled' : finalStatus(stoppedBy), stoppedBy);
    const cycle = this.lifecycle.current!;
    return { collection: env.name, epoch: env.epoch, resumed, complete, stoppedBy, cycleId: cycle.id, cycleStatus: cycle.status, abandoned, ...this.stats.c, queued: counts.queued, durationMs: this.now() - this.started };
  }

  /** trawl_purge: the documents the cycle did not reach are fetched again, and deleted if they answer 3xx or 4xx (purge.ts). */
  private async purge(): Promise<CycleSummary['stoppedBy']> {
    const env = this.env;
    const n = await queuePurge(env);
    env.events.emit({ type: 'cycle', message: `cycle ${env.epoch} of ${env.name}: purge phase: ${n} documents the cycle did not reach are fetched to check that they still exist` });
    return n === 0 ? 'done' : this.crawlLoop.run(env, this.siteTasks, this.opts, this.abort.signal);
  }

  /** Saves the cookie jar if it changed; a failure is reported (the jar is saved again at the next change), never thrown. */
  private async saveCookies(cookies: CollectionCookies): Promise<void> {
    try {
      await cookies.save();
    } catch (err) {
      this.events.emit({ type: isDiskFull(err) ? 'disk' : 'error', code: 'TRAWL_ERR_IO', message: `the cookie jar of ${this.config.name} is not saved: ${(err as Error).message}` });
    }
  }

  /** Rethrows `err` unless the disk is full, which is reported (the crawl store keeps what it committed). */
  private unlessDiskFull(err: unknown, consequence: string): void {
    if (!isDiskFull(err)) throw err;
    this.events.emit({ type: 'disk', message: `disk full: ${consequence} (${(err as Error).message})` });
  }

  private elasticStatusTimer(env: CycleEnv): ElasticStatusTimer {
    return new ElasticStatusTimer({
      crawl: () => this.events.elastic, stats: this.events.elasticStats!, queueSize: () => env.sched.queuedTotal(), activeTasks: () => this.siteTasks.inFlight,
      maxConnections: this.opts.maxConcurrency ?? 64, emit: (ecs) => this.events.emitElastic(ecs),
    }, env.rt.settings.elastic.statsInterval * 1000);
  }

  /** The Elastic event log's crawl id of the current cycle; undefined when that log is off. */
  get elasticCrawlId(): string | undefined {
    return this.events.elastic?.id;
  }

  private setEpoch(epoch: number): void {
    this.env.epoch = epoch;
    this.stats.epoch = epoch;
    // The Elastic event log's crawl id: the cycle's ID once the cycle is opened (lifecycle callback above); until then the collection and its refresh cycle.
    this.events.elastic = this.env.rt.settings.elastic.events ? { id: this.lifecycle.current?.epoch === epoch ? this.lifecycle.current.id : `${this.env.name}-${epoch}` } : undefined;
    this.events.elasticStats = this.events.elastic ? new ElasticCrawlStats(this.now) : undefined;
  }

  /** use_javascript: the browser closed, and what rendering did in this run told (crawl.log). */
  private async closeRendering(): Promise<void> {
    const r = this.rendering;
    if (!r) return;
    await r.close();
    const c = r.counters;
    const b = r.renderer.counters;
    if (c.rendered + c.skipped + c.retried > 0) {
      this.events.emit({ type: 'cycle', message: `rendering: ${c.rendered} pages rendered, ${c.retried} tried again, ${c.skipped} skipped (js); ${c.dependencies} dependencies fetched (${c.outOfScope} outside the scope, never crawled as pages), ${c.refused} refused, ${b.webSockets} WebSockets refused; Chromium started ${b.launches} times (${b.restarts} restarts)` });
    }
  }

  private setup(): void {
    this.prepared = true;
    const parts = setUpCycle(this.config, this.opts, {
      events: this.events, stats: this.stats, duplicates: this.duplicates, signal: this.abort.signal, wake: this.wake, addressRefused: this.addressRefused, now: this.now,
      cookies: this.cookiesFor, screenedCaches: this.screenedCaches,
    });
    this.env = parts.env;
    this.fetcher = parts.fetcher;
    this.ftp = parts.ftp;
    this.auth = parts.auth;
    this.rendering = parts.rendering;
    this.seeder = parts.seeder;
    this.siteTasks = parts.siteTasks;
  }

  /** Resumes the unfinished cycle, or starts the next one. Seeding is idempotent, so it runs in both cases. */
  private async beginCycle(): Promise<boolean> {
    const { name, rt } = this.env;
    const xml = ['<?xml version="1.0" encoding="utf-8"?>', '<CrawlerConfig>', ...writeCollectionXml(this.config), '</CrawlerConfig>', ''].join('\n');
    await this.store.putCollection(name, xml, this.now());
    const row = (await this.store.getCollection(name))!;
    const unfinished = row.epoch > 0 && (row.cycleEndedMs ?? 0) < (row.cycleStartedMs ?? 0);
    let crashed: LeasedUri[] = [];
    let cycleStartedMs = this.now();
    /** refresh_mode soft: the sites still crawling what an earlier cycle queued, which this one does not refresh, with that cycle. */
    let unrefreshed: ReadonlyMap<string, number> | undefined;
    if (unfinished) {
      cycleStartedMs = row.cycleStartedMs ?? cycleStartedMs;
      this.setEpoch(row.epoch);
      await this.lifecycle.open(row.epoch, true, cycleStartedMs);
      const { recovered, crashedTwice } = await this.store.recoverLeases(name);
      if (this.events.elastic) this.events.emitElastic(crawlStart(this.events.elastic, true));
      this.events.emit({ type: 'cycle', message: `resuming cycle ${row.epoch} of ${name}; ${recovered} URIs that were in flight go back to the queue` });
      crashed = crashedTwice;
    } else {
      this.setEpoch(row.epoch + 1);
      await this.lifecycle.open(this.env.epoch, false, cycleStartedMs);
      await this.store.updateCollection(name, { epoch: this.env.epoch, cycleStartedMs });
      // MS-FSCCFG 2.2.3 refresh_mode, the collection's and each sub-collection's own (refresh-modes.ts):
      // scratch truncates what the last cycle left queued (URIs sent by another collection for this new cycle stay).
      const modes = RefreshModes.of(rt);
      await modes.dropStale(this.store, name, this.env.epoch);
      // soft: "a site is not refreshed until the crawl queue is empty" (MS-FSCCFG 2.2.3 refresh_mode).
      if (modes.uses('soft')) unrefreshed = new Map((await this.store.sitesWithWork(name)).map((w) => [w.site, w.oldestEpoch]));
      if (this.events.elastic) this.events.emitElastic(crawlStart(this.events.elastic, false));
      this.events.emit({ type: 'cycle', message: `starting cycle ${this.env.epoch} of ${name}` });
    }
    // Filled by seed() with the checksums of the records already stored, and by each commit with the one it writes.
    this.duplicates.beginCycle();
    await this.stats.load();
    const { limits } = this.env;
    limits.begin(cycleStartedMs, limits.needsCounts ? await this.store.cycleRecordCounts(name, this.env.epoch) : undefined);
    for (const uri of crashed) await this.setAside(uri);
    const held = unrefreshed !== undefined && unrefreshed.size > 0 ? unrefreshed : undefined;
    // Links to a held site that an earlier cycle saw are not queued again: only when the collection's own mode is soft.
    this.env.softSites = rt.settings.refreshMode === 'soft' ? held : undefined;
    await this.lifecycle.set('starting');
    await this.env.adaptive?.begin(cycleStartedMs, this.now);
    await this.seeder.seed(held);
    for (const w of await this.store.sitesWithWork(name)) this.env.sched.addWork(w.site, w.queued);
    // refresh_mode adaptive: the first minor cycle takes its URIs (adaptive-refresh.ts).
    await this.env.adaptive?.beginMinor();
    return unfinished;
  }

  /**
   * A URI that was being fetched as the one suspect under way when the
   * process died, after it was in flight at the crash before too
   * (CRASH_STRIKE): it is recorded as skipped with `cr` and not fetched
   * again in this cycle, so that one poisoned page cannot crash-loop a
   * daemon. Other URIs are fetched beside a suspect, so a crash they cause
   * can set an innocent suspect aside: at most one per crash, and the next
   * cycle tries it again.
   */
  private async setAside(uri: LeasedUri): Promise<void> {
    const { name, epoch } = this.env;
    const p = await this.store.getRecord(name, uri.url);
    const record: UriRecord = {
      url: uri.url, site: uri.site, status: 'skipped', httpStatus: undefined, checksum: p?.checksum, lastCrawledMs: this.now(),
      etag: p?.etag, lastModified: p?.lastModified, errorCount: 0, skipCode: 'cr', mime: p?.mime, size: p?.size,
      contentRef: p?.contentRef, duplicateOf: undefined, redirectTo: undefined, depth: uri.depth, parent: uri.parent, epoch,
    };
    this.stats.docSkip(this.stats.statsFor(uri.site), 'cr');
    await this.store.complete(name, epoch, { leaseId: uri.id, site: uri.site, record, discovered: [] });
    this.events.emit({ type: 'error', url: uri.url, code: 'cr', message: `set aside: ${uri.url} was being fetched when the crawler stopped unexpectedly, twice in a row; it is not fetched again in this cycle` });
  }

  /** On stop: leased URIs that were never fetched go back to the queue. */
  private async returnLeases(): Promise<void> {
    const ids: number[] = [];
    for (const s of this.env.sched.all()) {
      ids.push(...(s.drain() as LeasedUri[]).map((u) => u.id));
    }
    if (ids.length > 0) await this.store.release(this.env.name, ids);
  }

  // ------------------------------------------------------------ operators

  /**
   * Makes this object usable outside `runCycle` (an operator's request while
   * the collection is idle): builds the run-time settings and reads the
   * current cycle number. Idempotent.
   */
  async prepare(): Promise<void> {
    if (this.prepared) return;
    this.setup();
    const epoch = (await this.store.getCollection(this.config.name))?.epoch ?? 0;
    this.setEpoch(epoch === 0 ? 1 : epoch);
  }

  /** `addUris` on an idle collection. */
  async prepareAndAdd(urls: readonly string[], urgent: boolean): Promise<AddedUris> {
    await this.prepare();
    return this.addUris(urls, urgent);
  }

  /** The sub-collection a URL belongs to. */
  subOf(url: URL): string | undefined {
    return this.env.rt.subOf(url);
  }

  /** Queues again the known URIs (crawl store records) that `pick` selects (CollectionRefetch, CollectionRefetchURI Site). */
  async requeueKnown(pick: (url: URL) => boolean, front = false): Promise<number> {
    await this.prepare();
    return this.seeder.requeueKnown(pick, front);
  }

  /** A sub-collection's own refresh (trawl serve): its known URIs queued again as its refresh_mode says (Seeder.refreshSub). */
  async refreshSub(sub: string): Promise<number> {
    await this.prepare();
    return this.seeder.refreshSub(sub);
  }

  /**
   * Queues these URLs again, even if already fetched in this cycle
   * (CollectionRefetchURI); with `refeed`, the document is fed again after
   * the fetch even when it did not change (its Refeed parameter).
   */
  async requeueUrls(urls: readonly string[], front: boolean, refeed = false): Promise<number> {
    await this.prepare();
    return this.seeder.requeueUrls(urls, front, refeed);
  }

  /**
   * Adds URIs while the cycle runs (MS-FSCADM AddURIs): they are checked
   * like start URIs and queued, `urgent` ones before everything else.
   * Returns how many were queued (the others were out of scope or seen).
   */
  addUris(urls: readonly string[], urgent: boolean): Promise<AddedUris> {
    return this.seeder.addUris(urls, urgent);
  }
}
