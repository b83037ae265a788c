/**
 * The crawler service behind `trawl serve`: the persisted collections, one
 * runner each that crawls refresh cycle after refresh cycle, and the
 * operations of MS-FSCADM on them. Everything it knows is in the crawl store
 * (configurations, state, queues, records, statistics), so a restart, even
 * after kill -9, resumes where it stopped (MS-FSCADM 3.3.1).
 *
 *   CollectionAdd ──► store.putCollection ──► Runner.loop:
 *        ┌──────────────────────────────────────────────────────────┐
 *        │ state crawling? ── no ──► wait (resume, delete, refetch) │
 *        │ cycle due? (refresh, refresh_when_idle, refetch, AddURIs) │
 *        │ CollectionCrawl.runCycle() ─► statistics merged, saved    │
 *        └──────────────────────────────────────────────────────────┘
 */

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { isDiskFull } from '../core/disk-full.ts';
import { TrawlError } from '../core/errors.ts';
import { siteOf } from '../core/url.ts';
import { hasErrors, type Diagnostic } from '../config/diagnostics.ts';
import { resolveSettings } from '../config/effective.ts';
import { mergeCollections } from '../config/merge.ts';
import type { CollectionConfig } from '../config/model.ts';
import { checkRules } from '../config/rules.ts';
import { redactCollection, restoreMasked } from '../config/secrets.ts';
import { writeConfigXml } from '../config/writer.ts';
import { readConfigXml } from '../config/xml-reader.ts';
import { CollectionCrawl, queueSentLinks } from '../engine/crawler.ts';
import type { EgressPolicy } from '../fetch/egress.ts';
import type { ContentStore } from '../store/content-store.ts';
import type { CrawlStore, QueuedUri } from '../store/crawl-store.ts';
import { openContentStore } from '../store/open-content-store.ts';
import { collectionFeeder } from '../sinks/collection-feeder.ts';
import type { Feeder } from '../sinks/feeder.ts';
import { destinationsOf, pausedByConfig, resolveContentdest } from '../sinks/feeding.ts';
import { checkSinks } from '../sinks/sink.ts';
import { SiteStats } from '../stats/site-stats.ts';
import { dnsErrorOutcome, GlobalStatistics, Statistics, type StatusCode } from '../stats/statistics.ts';

export interface ServiceOptions {
  readonly dataDir: string;
  readonly store: CrawlStore;
  readonly log: Logger;
  readonly nodeName?: string;
  /** host and port this node answers on (CollectionGetSiteRoutingAddress). */
  readonly address: { host: string; port: number };
  readonly egress?: Partial<EgressPolicy>;
  readonly maxConcurrency?: number;
  /** Statistics cycles kept besides cOmPIEtE (MS-FSCADM 2.2.4.5). */
  readonly statsCycles?: number;
  /** The only folder AddURIFile and CollectionDeleteURIFile read from (default `<dataDir>/uri-files`). */
  readonly uriFileDir?: string;
  readonly now?: () => number;
}

interface Extra {
  refreshOnly?: boolean;
  feedingPaused?: Record<string, boolean>;
  held?: Record<string, number>;
  quarantine?: Record<string, number>;
  stats?: unknown;
  refetch?: boolean;
}

const ZOMBIE = 'zombie';
/** How long a runner waits before it tries a cycle again that a full disk stopped before it could run. */
const DISK_FULL_RETRY_MS = 5000;

/** `host:port` (MS-FSCADM hostport) → the site keys it can mean. */
export function sitesOfHostport(hostport: string): string[] {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:\s/]+):(\d{1,5})$/.exec(hostport.trim());
  if (!m) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `"${hostport}" is not a hostport <hostname>:<port> (MS-FSCADM 2.2.2.2)`);
  const host = m[1]!.toLowerCase();
  return [`http://${host}:${m[2]}`, `https://${host}:${m[2]}`];
}

class Runner {
  config: CollectionConfig;
  crawl: CollectionCrawl | undefined;
  content: ContentStore;
  stats: Statistics<'collectionschema'>;
  /** Content destination → content collection (MS-FSCCFG feeding). */
  destinations = new Map<string, string>();
  /** Drains the feed outbox into the sinks; undefined when the collection has no sinks. */
  feeder: Feeder | undefined;
  private wakeFn: (() => void) | undefined;
  private stopped = false;
  loop: Promise<void> | undefined;

  constructor(config: CollectionConfig, content: ContentStore, stats: Statistics<'collectionschema'>) {
    this.config = config;
    this.content = content;
    this.stats = stats;
  }

  wake(): void {
    const w = this.wakeFn;
    this.wakeFn = undefined;
    w?.();
    this.crawl?.poke();
  }

  /**
   * Waits for `wake()` (a stop, resume, refetch, AddURIs) or `ms`, whichever
   * comes first. The timer is cleared on wake: a refresh wait of hours would
   * otherwise keep a stopped daemon's event loop alive until it fired.
   */
  waitFor(ms: number | undefined): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        if (this.wakeFn === done) this.wakeFn = undefined;
        resolve();
      };
      this.wakeFn = done;
      if (ms !== undefined) timer = setTimeout(done, Math.max(10, Math.min(ms, 2_147_000_000)));
    });
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Stops the running cycle (in-flight URIs go back to the queue) and the loop. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.crawl?.stop();
    this.wake();
    await this.loop?.catch(() => undefined);
    await this.feeder?.stop();
  }
}

export class CrawlerService {
  private readonly runners = new Map<string, Runner>();
  private readonly deleting = new Set<string>();
  readonly global: GlobalStatistics;
  private readonly o: ServiceOptions;
  private readonly now: () => number;
  private statsTimer: NodeJS.Timeout | undefined;
  private logMask = 0x04 | 0x10 | 0x20 | 0x40;

  constructor(o: ServiceOptions) {
    this.o = o;
    this.now = o.now ?? Date.now;
    this.global = new GlobalStatistics({ nowS: this.now() / 1000 });
  }

  // ------------------------------------------------------------ lifecycle

  /** Loads the persisted collections and resumes crawling them. */
  async start(): Promise<void> {
    const saved = await this.o.store.getCollection('\u0000global');
    if (saved && saved.extra.stats) {
      try {
        Object.assign(this, { global: GlobalStatistics.fromJSON(saved.extra.stats) });
      } catch {
        this.o.log.warn('global statistics could not be read back; starting them again');
      }
    }
    for (const row of await this.o.store.listCollections()) {
      if (row.name.startsWith('\u0000')) continue;
      if (row.state === ZOMBIE) {
        // A delete that a crash interrupted: finish it.
        await this.finishDelete(row.name);
        continue;
      }
      const r = readConfigXml(row.configXml, `collection ${row.name}`);
      const c = r.document.collections[0];
      if (!c || hasErrors(r.diagnostics)) {
        this.o.log.error({ collection: row.name }, 'stored configuration does not read back; the collection is not started');
        continue;
      }
      this.startRunner(c, row.extra as Extra);
    }
    // Caught: a rejection here (a full disk above all) would end the daemon as an unhandled rejection.
    this.statsTimer = setInterval(() => void this.flushStatistics().catch((err: unknown) => this.o.log.warn({ err }, 'statistics not saved; tried again in 30 s')), 30_000);
    this.statsTimer.unref();
    this.o.log.info({ collections: this.runners.size }, 'crawler service started');
  }

  /** Graceful stop: every running cycle returns its in-flight URIs; statistics are saved. */
  async stop(): Promise<void> {
    if (this.statsTimer) clearInterval(this.statsTimer);
    for (const t of this.quarantineTimers) clearTimeout(t);
    await Promise.all([...this.runners.values()].map((r) => r.stop()));
    await this.flushStatistics();
    for (const r of this.runners.values()) await r.content.close();
    this.o.log.info('crawler service stopped');
  }

  private startRunner(config: CollectionConfig, extra: Extra): Runner {
    const s = resolveSettings(config, this.nodeOpt());
    const content = openContentStore(join(this.o.dataDir, 'content', config.name), { ...s.storage });
    let stats: Statistics<'collectionschema'>;
    try {
      stats = extra.stats ? (Statistics.fromJSON(extra.stats) as Statistics<'collectionschema'>) : new Statistics({ schema: 'collectionschema', name: config.name, nowS: this.now() / 1000, keep: this.o.statsCycles ?? 2 });
    } catch {
      stats = new Statistics({ schema: 'collectionschema', name: config.name, nowS: this.now() / 1000, keep: this.o.statsCycles ?? 2 });
    }
    const runner = new Runner(config, content, stats);
    this.runners.set(config.name, runner);
    this.cachedExtra.set(config.name, extra);
    runner.destinations = destinationsOf(s, config.name);
    try {
      runner.feeder = collectionFeeder({
        name: config.name, settings: s, destinations: runner.destinations, store: this.o.store, content, dataDir: this.o.dataDir,
        paused: (d) => this.isPaused(config.name, d), counters: stats.lastPP ?? {}, warn: (fields, message) => this.o.log.warn(fields, message),
      });
    } catch (err) {
      this.o.log.error({ collection: config.name, err }, 'the collection\'s sinks cannot be opened; nothing is fed');
    }
    this.heldSites.set(config.name, new Map(Object.entries(extra.held ?? {})));
    const quarantined = new Map(Object.entries(extra.quarantine ?? {}));
    this.quarantines.set(config.name, quarantined);
    // A quarantine that ended while the service was down ends now; the others end on time.
    for (const [site, until] of quarantined) this.scheduleQuarantineEnd(config.name, site, until);
    void this.o.store.getCollection(config.name).then(
      (row) => this.stateOf.set(config.name, row?.state ?? 'crawling'),
      (err: unknown) => this.o.log.warn({ collection: config.name, err }, 'the collection\'s state could not be read'),
    );
    runner.loop = this.run(runner).catch((err: unknown) => {
      this.o.log.error({ collection: config.name, err }, 'collection runner failed');
    });
    return runner;
  }

  private nodeOpt(): { node?: string } {
    return this.o.nodeName !== undefined ? { node: this.o.nodeName } : {};
  }

  private async extra(name: string): Promise<Extra> {
    return ((await this.o.store.getCollection(name))?.extra ?? {}) as Extra;
  }

  /**
   * Read-modify-write of a collection's persisted `extra`, one at a time per
   * collection. Two overlapping updates (the statistics flush and a
   * CollectionSuspendFeeding, say) would otherwise both read the old value
   * and the later write would undo the earlier one.
   */
  private updateExtra(name: string, change: (current: Extra) => Partial<Extra>): Promise<Extra> {
    const run = async (): Promise<Extra> => {
      const extra = { ...(await this.extra(name)) };
      Object.assign(extra, change(extra));
      await this.o.store.updateCollection(name, { extra });
      return extra;
    };
    const next = (this.extraWrites.get(name) ?? Promise.resolve()).then(run, run);
    this.extraWrites.set(name, next.catch(() => undefined));
    return next;
  }

  private readonly extraWrites = new Map<string, Promise<unknown>>();

  private async patchExtra(name: string, patch: Partial<Extra>): Promise<void> {
    await this.updateExtra(name, () => patch);
  }

  /** Crawls refresh cycle after refresh cycle while the collection is in the crawling state. */
  private async run(r: Runner): Promise<void> {
    const name = r.config.name;
    while (!r.isStopped) {
      const row = await this.o.store.getCollection(name);
      if (!row || row.state === ZOMBIE) return;
      const extra = row.extra as Extra;
      if (row.state !== 'crawling') {
        await r.waitFor(undefined);
        continue;
      }
      const s = resolveSettings(r.config, this.nodeOpt());
      const unfinished = row.epoch > 0 && (row.cycleEndedMs ?? 0) < (row.cycleStartedMs ?? 0);
      if (!unfinished && row.epoch > 0 && !extra.refetch) {
        // MS-FSCCFG refresh: the next cycle starts `refresh` minutes after the last one started.
        const due = (row.cycleStartedMs ?? 0) + s.refreshMin * 60_000;
        if (!s.refreshWhenIdle && this.now() < due) {
          await r.waitFor(due - this.now());
          continue;
        }
      }
      if (extra.refetch) await this.patchExtra(name, { refetch: false });
      const held = new Map(Object.entries(extra.held ?? {}));
      r.crawl = new CollectionCrawl(r.config, {
        store: this.o.store,
        content: r.content,
        ...(this.o.nodeName !== undefined ? { node: this.o.nodeName } : {}),
        ...(this.o.egress ? { egress: this.o.egress } : {}),
        maxConcurrency: this.o.maxConcurrency ?? 64,
        dataDir: this.o.dataDir,
        refreshOnly: () => (this.cachedExtra.get(name)?.refreshOnly ?? extra.refreshOnly) === true,
        heldSites: () => this.heldSites.get(name) ?? held,
        quarantinedSites: () => this.quarantines.get(name) ?? new Map(),
        sendLinks: async (target, links) => this.sendLinks(target, links),
        ...(r.feeder ? { feedTo: [...r.destinations.keys()], onFeed: () => r.feeder?.poke() } : {}),
        onDnsLookup: (ok, code) => this.global.recordDnsLookup({ ok, ...dnsErrorOutcome(ok ? undefined : code), bytesOut: 0, bytesIn: 0 }),
        onEvent: (e) => this.o.log[e.type === 'disk' ? 'warn' : 'debug']({ collection: name, event: e.type, url: e.url, status: e.status, code: e.code }, e.message),
      });
      this.o.log.info({ collection: name }, 'refresh cycle starting');
      let summary: Awaited<ReturnType<CollectionCrawl['runCycle']>>;
      try {
        summary = await r.crawl.runCycle();
        this.absorb(r, summary.complete);
        r.crawl = undefined;
        await this.saveStats(r);
      } catch (err) {
        r.crawl = undefined;
        if (!isDiskFull(err)) throw err;
        // A cycle that could not even begin (or end) for lack of space is tried again; the crawl store kept what it committed.
        this.o.log.warn({ collection: name, err }, `disk full (data directory ${this.o.dataDir}); the cycle is tried again in ${DISK_FULL_RETRY_MS / 1000} s`);
        await r.waitFor(DISK_FULL_RETRY_MS);
        continue;
      }
      this.o.log.info({ collection: name, epoch: summary.epoch, complete: summary.complete, requests: summary.requests, stored: summary.stored }, 'refresh cycle ended');
    }
  }

  /** Per-collection settings changed by operators, read by running crawls without a store round trip. */
  private readonly cachedExtra = new Map<string, Extra>();
  private readonly heldSites = new Map<string, Map<string, number>>();
  private readonly quarantines = new Map<string, Map<string, number>>();
  private readonly quarantineTimers = new Set<NodeJS.Timeout>();

  private async sendLinks(target: string, links: readonly QueuedUri[]): Promise<void> {
    const running = this.runners.get(target)?.crawl;
    if (running) await running.addUris(links.map((l) => l.url), false);
    else if (await queueSentLinks(this.o.store, target, links)) this.runners.get(target)?.wake();
  }

  // ------------------------------------------------------------ statistics

  private absorb(r: Runner, cycleEnded: boolean): void {
    const totals = r.crawl?.counterTotals();
    const name = r.config.name;
    const feeding = this.feedingNow(r);
    const state = {
      activeSites: r.crawl?.progress().activeSites ?? 0,
      status: this.statusCode(name),
      feeding: Object.values(feeding).some((on) => on),
      // 2.2.4.10: empty when the only destination is the default one.
      feedingDestinations: Object.keys(this.runnerSettings(r).feeding).length > 0 ? feeding : {},
      crawlLimit: r.crawl?.diskLimit() ?? (this.cachedExtra.get(name)?.refreshOnly ? 'user' as const : 'none' as const),
    };
    const pp = r.feeder ? { ...r.feeder.counters } : undefined;
    if (totals) r.stats.absorbCounters({ totals, ...(pp ? { pp } : {}) }, state);
    else r.stats.absorbFeeding(pp, state);
    const nowS = this.now() / 1000;
    if (cycleEnded) r.stats.newCycle(nowS);
    else r.stats.mergeDelta(nowS);
  }

  private async saveStats(r: Runner): Promise<void> {
    if (!(await this.o.store.getCollection(r.config.name))) return;
    await this.patchExtra(r.config.name, { stats: r.stats.toJSON() });
  }

  /** Merges what the running crawls counted since the last flush and saves it (every 30 s, and on stop). */
  async flushStatistics(): Promise<void> {
    for (const r of this.runners.values()) {
      this.absorb(r, false);
      await this.saveStats(r);
    }
    this.global.mergeDelta(this.now() / 1000);
    const g = '\u0000global';
    if (!(await this.o.store.getCollection(g))) await this.o.store.putCollection(g, '', this.now());
    await this.o.store.updateCollection(g, { extra: { stats: this.global.toJSON() } });
  }

  // ------------------------------------------------------------ operations

  private runner(name: string): Runner {
    if (this.deleting.has(name)) throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `collection ${JSON.stringify(name)} is being deleted`);
    const r = this.runners.get(name);
    if (!r) throw new TrawlError('TRAWL_ERR_CONFIG_NOT_FOUND', `no collection named ${JSON.stringify(name)}`);
    return r;
  }

  list(): string[] {
    return [...this.runners.keys(), ...this.deleting].filter((n, i, a) => a.indexOf(n) === i).sort();
  }

  has(name: string): boolean {
    return this.runners.has(name);
  }

  /**
   * CollectionAdd (MS-FSCADM 2.2.9.3): a partial configuration is merged into
   * the existing collection; a new one gets the MS-FSCCFG defaults. The
   * merged result must pass every rule before anything changes.
   */
  async addCollection(xml: string): Promise<string[]> {
    const r = readConfigXml(xml, 'ConfigData', { partial: true });
    if (hasErrors(r.diagnostics)) throw new TrawlError(r.diagnostics.find((d) => d.severity === 'error')!.code, r.diagnostics.filter((d) => d.severity === 'error').map(describe).join('; '));
    if (r.document.collections.length === 0) throw new TrawlError('TRAWL_ERR_CONFIG_STRUCTURE', 'the configuration has no DomainSpecification');
    const names: string[] = [];
    for (const partial of r.document.collections) {
      if (this.deleting.has(partial.name)) throw new TrawlError('TRAWL_ERR_CONFIG_DUPLICATE', `collection ${JSON.stringify(partial.name)} is being deleted; add it again once it is gone`);
      if (partial.name.startsWith('\u0000') || partial.name === 'dspec' || partial.name === 'global') throw new TrawlError('TRAWL_ERR_CONFIG_VALUE', `"${partial.name}" cannot be a collection name (it is a key of the statistics structure)`);
      const existing = this.runners.get(partial.name);
      // A configuration got with CollectionGetConfigurationXML has its secrets
      // masked: each mask is the stored secret at the same path again.
      const restored = restoreMasked(partial, existing?.config);
      const merged = existing ? mergeCollections(existing.config, restored) : restored;
      const problems: Diagnostic[] = [];
      checkRules(merged, problems);
      if (hasErrors(problems)) throw new TrawlError('TRAWL_ERR_CONFIG_RULE', problems.filter((d) => d.severity === 'error').map(describe).join('; '));
      checkSinks(resolveSettings(merged, this.nodeOpt()).sinks);
      await this.o.store.putCollection(merged.name, writeConfigXml(merged), this.now());
      if (existing) {
        await existing.stop();
        await existing.content.close();
        this.runners.delete(merged.name);
      }
      this.startRunner(merged, await this.extra(merged.name));
      names.push(merged.name);
      this.o.log.info({ collection: merged.name, updated: existing !== undefined }, existing ? 'collection updated' : 'collection added');
    }
    return names;
  }

  /** CollectionDelete: the collection is a zombie until all its data is gone; then the name is free again. */
  async deleteCollection(name: string): Promise<void> {
    const r = this.runner(name);
    this.deleting.add(name);
    this.runners.delete(name);
    await this.o.store.updateCollection(name, { state: ZOMBIE });
    void (async () => {
      await r.stop();
      await r.content.close();
      await this.finishDelete(name);
    })().catch((err: unknown) => this.o.log.error({ collection: name, err }, 'the collection could not be deleted; it is finished at the next start'));
  }

  private async finishDelete(name: string): Promise<void> {
    this.deleting.add(name);
    try {
      await rm(join(this.o.dataDir, 'content', name), { recursive: true, force: true });
      await this.o.store.deleteCollection(name);
      this.o.log.info({ collection: name }, 'collection deleted');
    } finally {
      this.deleting.delete(name);
    }
  }

  configXml(name: string): string {
    // Secrets stay as they were written when encrypted (!ENC!), masked when in
    // clear (secrets.ts); CollectionAdd puts the stored ones back for the masks.
    return writeConfigXml(redactCollection(this.runner(name).config), { mode: 'complete' });
  }

  statusCode(name: string): StatusCode {
    if (this.deleting.has(name)) return 3;
    const r = this.runners.get(name);
    if (!r) return 1;
    const state = this.stateOf.get(name);
    return state === 'suspended' ? 4 : 1;
  }

  private readonly stateOf = new Map<string, string>();

  async status(name: string): Promise<string> {
    if (this.deleting.has(name)) return ZOMBIE;
    this.runner(name);
    const row = await this.o.store.getCollection(name);
    return row?.state ?? 'crawling';
  }

  async suspend(name: string): Promise<void> {
    const r = this.runner(name);
    const row = await this.o.store.getCollection(name);
    if (row?.state === 'suspended') throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `collection ${JSON.stringify(name)} is already suspended`);
    await this.o.store.updateCollection(name, { state: 'suspended' });
    this.stateOf.set(name, 'suspended');
    r.crawl?.stop();
  }

  async resume(name: string): Promise<void> {
    const r = this.runner(name);
    const row = await this.o.store.getCollection(name);
    if (row?.state !== 'suspended') throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `collection ${JSON.stringify(name)} is not suspended`);
    await this.o.store.updateCollection(name, { state: 'crawling' });
    this.stateOf.set(name, 'crawling');
    r.wake();
  }

  /** AddURIs / AddURIFile: into the running cycle, or reopening the last one so they are fetched now. */
  async addUris(name: string, urls: readonly string[], urgent: boolean): Promise<{ added: number; refused: Array<{ url: string; reason: string }> }> {
    const r = this.runner(name);
    if (r.crawl) return r.crawl.addUris(urls, urgent);
    // Not crawling right now: a scratch crawl object checks scope and queues; the runner then resumes the cycle.
    const row = await this.o.store.getCollection(name);
    const result = await this.probe(r).prepareAndAdd(urls, urgent);
    if (row && row.epoch > 0 && result.added > 0) await this.o.store.updateCollection(name, { cycleEndedMs: undefined });
    r.wake();
    return result;
  }

  async refetch(name: string, sub: string | undefined): Promise<number> {
    const r = this.runner(name);
    if (sub !== undefined && sub !== '') {
      resolveSettings(r.config, { ...this.nodeOpt(), subcollection: sub }); // throws when there is no such sub-collection
      const probe = this.probe(r);
      const n = await probe.requeueKnown((u) => probe.subOf(u) === sub);
      await this.o.store.updateCollection(name, { cycleEndedMs: undefined });
      r.wake();
      return n;
    }
    await this.patchExtra(name, { refetch: true });
    r.crawl?.stop();
    r.wake();
    return 0;
  }

  async refetchUri(name: string, uri: string, refeed: boolean, site: boolean, immediately: boolean): Promise<number> {
    const r = this.runner(name);
    const probe = r.crawl ?? this.probe(r);
    const target = siteOf(new URL(uri));
    const n = site ? await probe.requeueKnown((u) => siteOf(u) === target, immediately) : await probe.requeueUrls([uri], immediately, refeed && r.feeder !== undefined);
    if (!r.crawl) await this.o.store.updateCollection(name, { cycleEndedMs: undefined });
    r.wake();
    return n;
  }

  /** Deletes URIs (and their documents) from the store, and from the destinations through the feed outbox. */
  async deleteUris(name: string, urls: readonly string[]): Promise<number> {
    const r = this.runner(name);
    const refs = await this.o.store.deleteUris(name, urls, this.feedTo(r));
    for (const ref of refs) await r.content.delete(ref);
    r.feeder?.poke();
    return refs.length;
  }

  async deleteSite(name: string, hostport: string): Promise<number> {
    const r = this.runner(name);
    let n = 0;
    for (const site of sitesOfHostport(hostport)) {
      const refs = await this.o.store.deleteSite(name, site, this.feedTo(r));
      for (const ref of refs) await r.content.delete(ref);
      n += refs.length;
    }
    r.feeder?.poke();
    return n;
  }

  /** A crawl object for queueing while no cycle runs: it checks scope and writes the queue; the runner then resumes. */
  private probe(r: Runner): CollectionCrawl {
    return new CollectionCrawl(r.config, { store: this.o.store, content: r.content });
  }

  private feedTo(r: Runner): string[] {
    return r.feeder ? [...r.destinations.keys()] : [];
  }

  /**
   * CollectionReprocessSite / …SitePrefix / …URI: the stored documents
   * selected are queued to the destinations `contentdest` names, and sent
   * from the crawl store and the content store (no refetch). Returns how
   * many documents were queued.
   */
  async reprocess(name: string, contentdest: string, which: { hostport?: string; prefix?: string; urls?: readonly string[] }): Promise<number> {
    const r = this.runner(name);
    const destinations = resolveContentdest(r.destinations, contentdest, name);
    if (!r.feeder) {
      throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `collection ${JSON.stringify(name)} has no sinks (trawl_sinks) to send documents to`);
    }
    let n = 0;
    if (which.urls) n = await this.o.store.queueFeedFromRecords(name, destinations, { urls: which.urls });
    else {
      for (const site of sitesOfHostport(which.hostport!)) {
        n += await this.o.store.queueFeedFromRecords(name, destinations, { site, ...(which.prefix !== undefined ? { prefix: which.prefix } : {}) });
      }
    }
    r.feeder.poke();
    return n;
  }

  /**
   * CollectionPreemptSite / CollectionQuarantineSite: the site is held until a
   * time (persisted). With `quarantine`, the URIs found for it meanwhile go to
   * its separate quarantine queue, released into its ordinary queue when the
   * quarantine ends.
   */
  async holdSite(name: string, hostport: string, seconds: number, quarantine = false): Promise<void> {
    const r = this.runner(name);
    const until = this.now() + seconds * 1000;
    const extra = await this.updateExtra(name, (current) => {
      const held = { ...(current.held ?? {}) };
      const quarantined = { ...(current.quarantine ?? {}) };
      for (const site of sitesOfHostport(hostport)) {
        held[site] = until;
        if (quarantine) quarantined[site] = until;
      }
      return { held, quarantine: quarantined };
    });
    this.heldSites.set(name, new Map(Object.entries(extra.held ?? {})));
    this.quarantines.set(name, new Map(Object.entries(extra.quarantine ?? {})));
    if (quarantine) for (const site of sitesOfHostport(hostport)) this.scheduleQuarantineEnd(name, site, until);
    r.crawl?.poke();
  }

  private scheduleQuarantineEnd(name: string, site: string, until: number): void {
    const t = setTimeout(() => {
      this.quarantineTimers.delete(t);
      void this.endQuarantine(name, site, until).catch((err: unknown) => {
        // A store that cannot be written (a full disk): the quarantine ends at the next try instead.
        const retryAt = Math.max(until, this.now() + 30_000);
        this.o.log.warn({ collection: name, site, err }, 'the quarantine could not be ended; tried again in 30 s');
        if (this.runners.has(name)) {
          this.quarantines.get(name)?.set(site, retryAt);
          this.scheduleQuarantineEnd(name, site, retryAt);
        }
      });
    }, Math.max(0, Math.min(until - this.now(), 2_147_000_000)));
    t.unref();
    this.quarantineTimers.add(t);
  }

  private async endQuarantine(name: string, site: string, until: number): Promise<void> {
    const q = this.quarantines.get(name);
    if (!q || q.get(site) !== until) return; // deleted, or quarantined again since
    q.delete(site);
    const r = this.runners.get(name);
    if (!r) return;
    await this.patchExtra(name, { quarantine: Object.fromEntries(q) });
    const n = await this.o.store.releaseQuarantine(name, site);
    this.o.log.info({ collection: name, site, released: n }, 'quarantine ended');
    if (r.crawl) r.crawl.noteWork(site, n);
    else if (n > 0) {
      await this.o.store.updateCollection(name, { cycleEndedMs: undefined });
      r.wake();
    }
  }

  async setRefreshOnly(name: string, on: boolean): Promise<void> {
    this.runner(name);
    await this.patchExtra(name, { refreshOnly: on });
    this.cachedExtra.set(name, { ...(this.cachedExtra.get(name) ?? {}), refreshOnly: on });
  }

  /** MS-FSCADM 2.2.3.6; limits.disk_free (or a full disk) is told before the operator's refresh-only mode, as the news. */
  async crawlMode(name: string): Promise<string> {
    const r = this.runner(name);
    if (r.crawl?.diskLimit()) return 'Refreshing(limit=disk_free)';
    return (await this.extra(name)).refreshOnly ? 'Refreshing(limit=user)' : '';
  }

  /**
   * CollectionSuspendFeeding / CollectionResumeFeeding: the destinations the
   * contentdest names stop (or start again) receiving documents; what is fed
   * meanwhile waits in the feed outbox. Persisted. A fault when they all are
   * already in that state (2.2.9.21: MUST NOT already be suspended).
   */
  async setFeedingPaused(name: string, contentdest: string, paused: boolean): Promise<string[]> {
    const r = this.runner(name);
    const destinations = resolveContentdest(r.destinations, contentdest, name);
    let changing: string[] = [];
    // Decided inside the serialized update, so that of two identical calls at once the second faults.
    const { feedingPaused } = await this.updateExtra(name, (current) => {
      changing = destinations.filter((d) => this.isPaused(name, d, current.feedingPaused) !== paused);
      if (changing.length === 0) {
        throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `feeding of ${JSON.stringify(name)} to ${destinations.join(', ')} is already ${paused ? 'suspended' : 'running'}`);
      }
      const state = { ...(current.feedingPaused ?? {}) };
      for (const d of changing) state[d] = paused;
      return { feedingPaused: state };
    });
    this.cachedExtra.set(name, { ...(this.cachedExtra.get(name) ?? {}), feedingPaused: feedingPaused ?? {} });
    if (!paused) r.feeder?.poke();
    return changing;
  }

  /** Paused by CollectionSuspendFeeding (`state`, the persisted choices), else by the configuration. */
  private isPaused(name: string, destination: string, state = this.cachedExtra.get(name)?.feedingPaused): boolean {
    const r = this.runners.get(name);
    const set = state?.[destination];
    if (set !== undefined) return set;
    return r ? pausedByConfig(this.runnerSettings(r), destination) : false;
  }

  private runnerSettings(r: Runner): ReturnType<typeof resolveSettings> {
    return resolveSettings(r.config, this.nodeOpt());
  }

  /** Content destination → feeding (true) or paused (false). */
  private feedingNow(r: Runner): Record<string, boolean> {
    return Object.fromEntries([...r.destinations.keys()].map((d) => [d, !this.isPaused(r.config.name, d)]));
  }

  /** The collection's statistics, merged up to now. */
  collectionStatistics(name: string): { stats: Statistics<'collectionschema'>; refreshMin: number; refreshMode: 'append' | 'prepend' | 'scratch' | 'soft' | 'adaptive' } {
    const r = this.runner(name);
    this.absorb(r, false);
    const s = resolveSettings(r.config, this.nodeOpt());
    return { stats: r.stats, refreshMin: s.refreshMin, refreshMode: s.refreshMode as 'scratch' };
  }

  /** One site's statistics, from the counters the crawl store keeps for it. */
  async siteStatistics(name: string, site: string): Promise<{ stats: Statistics<'siteschema'>; refreshMin: number; refreshMode: 'scratch' }> {
    const r = this.runner(name);
    const key = /^https?:\/\//.test(site) ? siteOf(new URL(site)) : sitesOfHostport(site)[0]!;
    const live = r.crawl?.siteCounters().get(key);
    const json = live ? JSON.stringify(live) : await this.o.store.getSiteStats(name, key);
    if (json === undefined) throw new TrawlError('TRAWL_ERR_CONFIG_NOT_FOUND', `collection ${JSON.stringify(name)} has not crawled site ${site}`);
    const stats = new Statistics({ schema: 'siteschema', name: key, nowS: this.now() / 1000 });
    stats.absorbCounters({ totals: SiteStats.parse(json).data });
    stats.mergeDelta(this.now() / 1000);
    const s = resolveSettings(r.config, this.nodeOpt());
    return { stats, refreshMin: s.refreshMin, refreshMode: 'scratch' };
  }

  get logLevelMask(): number {
    return this.logMask;
  }

  /** MS-FSCADM 2.2.3.5 bitmask → the logger's level: the most verbose bit set decides. */
  setLogLevel(mask: number): void {
    const level = mask & 0x80 ? 'trace' : mask & 0x08 ? 'debug' : mask & 0x04 ? 'info' : mask & 0x10 ? 'warn' : mask & 0x20 ? 'error' : mask & 0x40 ? 'fatal' : 'silent';
    this.o.log.level = level;
    this.logMask = mask;
  }

  get address(): { host: string; port: number } {
    return this.o.address;
  }

  /** The folder URI files are read from (MS-FSCADM 2.2.9.2 paths must lie inside it). */
  get uriFileDir(): string {
    return this.o.uriFileDir ?? join(this.o.dataDir, 'uri-files');
  }
}

function describe(d: Diagnostic): string {
  return `${d.location?.line !== undefined ? `line ${d.location.line}: ` : ''}${d.param ? `${d.param}: ` : ''}${d.message}`;
}
