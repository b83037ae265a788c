/**
 * The crawler service behind `trawl serve`: the persisted collections, one
 * `ManagedCollection` each whose runner crawls refresh cycle after refresh
 * cycle, and the operations of MS-FSCADM on them. Everything it knows is in
 * the crawl store (configurations, state, queues, records, statistics), so
 * a restart, even after kill -9, resumes where it stopped (MS-FSCADM 3.3.1).
 *
 *   CollectionAdd ──► store.putCollection ──► ManagedCollection ──► run():
 *        ┌──────────────────────────────────────────────────────────┐
 *        │ state crawling? ── no ──► wait (resume, delete, refetch) │
 *        │ cycle due? (refresh, refresh_when_idle, refetch, AddURIs) │
 *        │ CollectionCrawl.runCycle() ─► statistics merged, saved    │
 *        └──────────────────────────────────────────────────────────┘
 *
 * A collection's runtime (content store, sinks and feeder, crawls) is opened
 * by `openCollectionRuntime`, as `trawl crawl` opens it.
 */

import { rm } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import type { Logger } from 'pino';
import { isDiskFull } from '../core/disk-full.ts';
import { TrawlError, trawlError } from '../core/errors.ts';
import { siteOf } from '../core/url.ts';
import { clientCertDiagnostics } from '../config/client-cert.ts';
import { hasErrors, type Diagnostic } from '../config/diagnostics.ts';
import { resolveSettings } from '../config/effective.ts';
import type { CollectionSettings } from '../config/registry.ts';
import { mergeCollections } from '../config/merge.ts';
import type { CollectionConfig } from '../config/model.ts';
import { checkRules } from '../config/rules.ts';
import { honouredWarnings } from '../config/honoured.ts';
import { redactCollection, restoreMasked } from '../config/secrets.ts';
import { writeConfigXml } from '../config/writer.ts';
import { readConfigXml } from '../config/xml-reader.ts';
import { queueSentLinks, type CollectionCrawl, type CrawlEvent, type CycleSummary } from '../engine/crawler.ts';
import { newCycleId } from '../engine/cycle-lifecycle.ts';
import { crawlSkipped } from '../engine/elastic-events.ts';
import type { AddedUris } from '../engine/seeding.ts';

export type { AddedUris, NotAdded } from '../engine/seeding.ts';
import type { EgressPolicy } from '../fetch/egress.ts';
import type { CrawlStore, CycleRow, QueuedUri } from '../store/crawl-store.ts';
import { SubRefresh } from './sub-refresh.ts';
import { resolveContentdest } from '../sinks/feeding.ts';
import { checkSinks } from '../sinks/open-sinks.ts';
import { SiteStats } from '../stats/site-stats.ts';
import { cycleNumberOfEpoch, dnsErrorOutcome, GlobalStatistics, Statistics, type StatusCode } from '../stats/statistics.ts';
import type { LatencySnapshot } from '../stats/fetch-metrics.ts';
import type { Counters } from '../engine/cycle-stats.ts';
import { CollectionMetrics } from './collection-metrics.ts';
import { openCollectionRuntime } from './collection-runtime.ts';
import { collectionLogPath, logFilesOf, readLogLines, type EventLog, type LogLine } from './crawl-log.ts';
import { exportPage, inspectUri, normalizeFor, type CollectionView, type ExportOptions, type ExportPage, type ExportSelection, type InspectReport } from './inspect.ts';
import { decodeOperatorState } from './collection-state.ts';
import { brokerAddress } from '../core/broker-url.ts';
import { keyFilePath, loadKeyFile, revealSecret } from '../config/secrets.ts';
import { SubmissionConsumers, SubmissionRefused, type JobResult, type SubmissionSource } from './submission-consumer.ts';
import { jobCollectionName, jobConfig, userSubmissionProfile, type Submission } from './submission-job.ts';
import { ManagedCollection, ZOMBIE, type CollectionStatus } from './managed-collection.ts';
import { clusterOf, heldWithRoutes, routingOf } from './node-membership.ts';
import type { Installation } from '../store/postgres/installation.ts';

/** The crawl store's calls a node of a multinode installation makes on its ticks (PostgresCrawlStore). */
interface SharedLeases {
  renewLeases(collection: string): Promise<number>;
  recoverExpiredLeases(collection: string): Promise<number>;
}

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
  /**
   * Opens a collection's event log (`<data>/logs/collections/<name>.log`,
   * crawl-log.ts): the crawl's events its `log` section lets through go
   * there. Absent: they go to `log` at debug level.
   */
  readonly openEventLog?: (path: string, collection: string) => EventLog;
  /** Applied to every collection's settings as it is added or loaded (`trawl serve --citeseerx`: one more sink). */
  readonly adjustSettings?: (settings: CollectionSettings, collection: string) => CollectionSettings;
  /** Applied to the configuration a collection's crawls run with, not to the one stored (`trawl serve --citeseerx`: the User Submission profile). */
  readonly adjustConfig?: (config: CollectionConfig) => CollectionConfig;
  /**
   * `trawl serve --citeseerx` with a newSubmissionsChannel: the queue URL
   * Submission Messages are consumed from, besides those collections name
   * in a jms sink's submission_queue (docs/citeseerx.md "Submitted jobs").
   */
  readonly submissions?: SubmissionSource;
  /**
   * This process is a member of a multinode installation (docs/multinode.md):
   * a node scheduler crawls the sites routed to it; the multinode scheduler
   * crawls nothing and answers for the installation. Absent: a single node.
   */
  readonly installation?: Installation;
}

/** One collection as `GET /metrics` reports it (src/admin/metrics.ts writes it out). */
export interface CollectionMetricsSnapshot {
  readonly name: string;
  readonly status: CollectionStatus;
  /** A refresh cycle is running now. */
  readonly cycleRunning: boolean;
  /** Every crawl's counters in this process. */
  readonly counters: Counters;
  /** Body bytes received by every fetch (pages and robots.txt). */
  readonly bodyBytes: number;
  readonly latency: LatencySnapshot;
  /** URIs queued; absent for a collection being deleted. */
  readonly queued?: number;
  /** Sites with work or a request in flight in the running cycle. */
  readonly activeSites?: number;
  /** Requests in flight now. */
  readonly inFlight?: number;
  /** Content destination → documents waiting in the feed outbox; absent without sinks or while being deleted. */
  readonly feedBacklog?: Readonly<Record<string, number>>;
}

/** What `GET /healthz` answers: ok while the service runs and its crawl store answers. */
export interface Health {
  readonly ok: boolean;
  /** `ok`, `starting`, `stopping`, or `store unavailable`. */
  readonly status: string;
  readonly collections: number;
  readonly uptimeS: number;
}

/** How long /healthz waits for the crawl store. */
export const HEALTH_STORE_TIMEOUT_MS = 2_000;

/** CrawlerService.statusDetail: CollectionGetStatus's value and what the collection does now. */
export interface StatusDetail {
  readonly status: string;
  readonly activity: 'crawling' | 'idle' | 'suspended' | 'deleting';
  /** Idle: what the runner waits for. */
  readonly waitingFor?: 'refresh' | 'disk-full';
  /** Idle: when the next cycle starts (or the disk is checked again), unless an operator starts it first. */
  readonly nextCycleMs?: number;
  /** The running or last refresh cycle: its ID, refresh cycle number and Elastic status. */
  readonly cycle?: CycleRow;
  /** The last automatic start skipped because a cycle was running (status `skipped`). */
  readonly skipped?: CycleRow;
}

/** What CollectionAdd refuses a submitted job's configuration with for good (its message goes to the dead-letter queue). */
const JOB_REFUSALS: ReadonlySet<string> = new Set(['TRAWL_ERR_CONFIG_RULE', 'TRAWL_ERR_CONFIG_VALUE', 'TRAWL_ERR_CONFIG_STRUCTURE', 'TRAWL_ERR_CONFIG_UNSUPPORTED', 'TRAWL_ERR_CONFIG_RANGE', 'TRAWL_ERR_CONFIG_TYPE', 'TRAWL_ERR_CONFIG_PLACE', 'TRAWL_ERR_CONFIG_UNKNOWN', 'TRAWL_ERR_CLIENT_CERT']);

/** The crawl store row that holds the global statistics (a name no collection can have). */
const GLOBAL_ROW = '\u0000global';
/** A member of an installation keeps its global statistics in a row of its own (the members share the store). */
const globalRowOf = (inst: Installation | undefined): string => (inst ? `${GLOBAL_ROW}:${inst.name}` : GLOBAL_ROW);
/** How long a runner waits before it tries a cycle again that a full disk stopped before it could run. */
const DISK_FULL_RETRY_MS = 5000;

/** `host:port` (MS-FSCADM hostport) → the site keys it can mean. */
export function sitesOfHostport(hostport: string): string[] {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:\s/]+):(\d{1,5})$/.exec(hostport.trim());
  if (!m) throw trawlError('HOSTPORT_INVALID', { hostport });
  const host = m[1]!.toLowerCase();
  return [`http://${host}:${m[2]}`, `https://${host}:${m[2]}`];
}

export class CrawlerService {
  /** Every collection by name, zombies (being deleted) included until their data is gone. */
  private readonly collections = new Map<string, ManagedCollection>();
  /** /metrics: each collection's counters and fetch measurements, by name, for the life of the process. */
  private readonly metricsByName = new Map<string, CollectionMetrics>();
  private phase: 'new' | 'running' | 'stopping' = 'new';
  private readonly createdMs: number;
  readonly global: GlobalStatistics;
  private readonly o: ServiceOptions;
  private readonly now: () => number;
  private statsTimer: NodeJS.Timeout | undefined;
  private logMask = 0x04 | 0x10 | 0x20 | 0x40;
  /** Each collection's event log, opened with it, kept across updates, closed at stop and delete. */
  private readonly eventLogs = new Map<string, EventLog>();
  /** The URL Submission Message consumers; made when a source is first named. */
  private submissionConsumers: SubmissionConsumers | undefined;
  private submissionSync: Promise<void> = Promise.resolve();

  constructor(o: ServiceOptions) {
    this.o = o;
    this.now = o.now ?? Date.now;
    this.createdMs = this.now();
    this.global = new GlobalStatistics({ nowS: this.now() / 1000 });
  }

  // ------------------------------------------------------------ lifecycle

  /** Loads the persisted collections and resumes crawling them. */
  async start(): Promise<void> {
    const saved = await this.o.store.getCollection(globalRowOf(this.o.installation));
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
      this.startCollection(c, row.state, row.extra);
    }
    // Caught: a rejection here (a full disk above all) would end the daemon as an unhandled rejection.
    this.statsTimer = setInterval(() => void this.flushStatistics().catch((err: unknown) => this.o.log.warn({ err }, 'statistics not saved; tried again in 30 s')), 30_000);
    this.statsTimer.unref();
    this.phase = 'running';
    this.startMembership();
    this.o.log.info({ collections: this.collections.size }, 'crawler service started');
    await this.syncSubmissions();
  }

  /** This member's role: a single node, or a node scheduler or the multinode scheduler of an installation. */
  get role(): 'single' | 'node' | 'scheduler' {
    return this.o.installation?.role ?? 'single';
  }

  /** The installation this process is a member of, if any. */
  get installation(): Installation | undefined {
    return this.o.installation;
  }

  /** A member's ticks (installation.ts): the collections the database holds, routes, leases, work for this node's sites. */
  private startMembership(): void {
    const inst = this.o.installation;
    if (!inst) return;
    const store = this.o.store as unknown as SharedLeases;
    inst.start({
      collections: () => (this.phase === 'running' ? this.live().map((c) => c.name) : []),
      clusterOf: (collection, site) => clusterOf(this.collections.get(collection)?.settings, site),
      idleSite: (collection, site) => this.collections.get(collection)?.crawl?.siteIdle(site) ?? { idle: true, hasWork: false, nextStartMs: 0 },
      work: (collection, sites) => {
        const crawl = this.collections.get(collection)?.crawl;
        if (!crawl) return;
        for (const w of sites) if (!crawl.hasWork(w.site)) crawl.noteWork(w.site, w.queued);
      },
      renew: (collection) => store.renewLeases(collection),
      recoverExpired: (collection) => store.recoverExpiredLeases(collection),
      logLevel: (mask) => this.setLogLevel(mask),
      sync: () => this.syncCollections(),
      error: (err) => this.o.log.warn({ err }, `multinode: this member's tick failed (heartbeat, routing); tried again in ${inst.beatMs} ms`),
    });
  }

  /**
   * A member's view of the collections follows the database's: one added
   * by another member (CollectionAdd on the scheduler) is started here, one
   * deleted is stopped here (its rows are gone; its content here is removed).
   */
  private async syncCollections(): Promise<void> {
    if (this.phase !== 'running') return;
    const rows = await this.o.store.listCollections();
    const names = new Set<string>();
    for (const row of rows) {
      if (row.name.startsWith('\u0000')) continue;
      // A collection being deleted is gone for this member: the member deleting it removes its rows.
      if (row.state === ZOMBIE) continue;
      names.add(row.name);
      if (this.collections.has(row.name)) continue;
      const r = readConfigXml(row.configXml, `collection ${row.name}`);
      const c = r.document.collections[0];
      if (!c || hasErrors(r.diagnostics)) continue;
      this.startCollection(c, row.state, row.extra);
      this.o.log.info({ collection: row.name }, 'collection added by another member of the installation');
    }
    for (const mc of this.live()) {
      if (names.has(mc.name)) continue;
      this.collections.delete(mc.name);
      await mc.stop();
      await mc.runtime.content.close();
      await rm(join(this.o.dataDir, 'content', mc.name), { recursive: true, force: true });
      this.o.log.info({ collection: mc.name }, 'collection deleted by another member of the installation');
    }
  }

  /** Graceful stop: every running cycle returns its in-flight URIs; statistics are saved. */
  async stop(): Promise<void> {
    this.phase = 'stopping';
    if (this.statsTimer) clearInterval(this.statsTimer);
    // No job is made while the collections stop: an unacknowledged message waits at the broker.
    await this.submissionSync;
    await this.submissionConsumers?.stop();
    const live = this.live();
    await Promise.all(live.map((c) => c.stop()));
    await this.flushStatistics();
    for (const c of live) await c.runtime.content.close();
    for (const l of this.eventLogs.values()) await l.close();
    this.eventLogs.clear();
    this.o.log.info('crawler service stopped');
  }

  /** The collections that are not being deleted. */
  private live(): ManagedCollection[] {
    return [...this.collections.values()].filter((c) => c.status !== ZOMBIE);
  }

  /** Opens a collection's runtime from its stored state (`status`, `extra` as the crawl store holds them) and starts its runner. */
  private startCollection(config: CollectionConfig, status: string, extra: unknown): ManagedCollection {
    const resolved = resolveSettings(config, this.nodeOpt());
    const settings = this.o.adjustSettings?.(resolved, config.name) ?? resolved;
    // Added or loaded: what the configuration asks for that this version ignores (issue 29).
    for (const d of honouredWarnings(config, this.o.nodeName ?? null)) this.o.log.warn({ collection: config.name, param: d.param, code: d.code }, d.message);
    const mc = new ManagedCollection({
      config, settings, status, state: decodeOperatorState(extra), store: this.o.store, log: this.o.log, statsCycles: this.o.statsCycles ?? 2, now: this.now,
    });
    mc.attach(openCollectionRuntime({
      config: this.o.adjustConfig?.(config) ?? config, settings, store: this.o.store, dataDir: this.o.dataDir, node: this.o.nodeName, egress: this.o.egress, maxConcurrency: this.o.maxConcurrency ?? 64,
      paused: (d) => mc.isPaused(d), counters: mc.stats.lastPP ?? {}, warn: (fields, message) => this.o.log.warn(fields, message),
      onSinkError: (err) => this.o.log.error({ collection: config.name, err }, 'the collection\'s sinks cannot be opened; nothing is fed'),
    }));
    this.collections.set(config.name, mc);
    if (this.o.openEventLog && !this.eventLogs.has(config.name)) {
      try {
        this.eventLogs.set(config.name, this.o.openEventLog(collectionLogPath(this.o.dataDir, config.name), config.name));
      } catch (err) {
        this.o.log.error({ collection: config.name, err }, 'the collection\'s event log cannot be opened; its events go to this log at debug level');
      }
    }
    mc.loop = this.run(mc).catch((err: unknown) => {
      this.o.log.error({ collection: config.name, err }, 'collection runner failed');
    });
    return mc;
  }

  private nodeOpt(): { node?: string } {
    return this.o.nodeName !== undefined ? { node: this.o.nodeName } : {};
  }

  /** Crawls refresh cycle after refresh cycle while the collection is in the crawling state. */
  private async run(mc: ManagedCollection): Promise<void> {
    const name = mc.name;
    const s = mc.settings;
    // The multinode scheduler crawls nothing: its nodes do (GetSiteManagerNum 0).
    if (this.role === 'scheduler') return;
    const inst = this.role === 'node' ? this.o.installation : undefined;
    const routing = inst ? routingOf(inst, name) : undefined;
    // The last cycle's ID and status, for the status before this run's first cycle begins (unknown if the store cannot say).
    const recent = await this.o.store.listCycles(name, 20).catch(() => []);
    mc.cycle ??= recent.find((c) => c.status !== 'skipped');
    mc.skipped ??= recent.find((c) => c.status === 'skipped');
    const subRefresh = new SubRefresh(mc.config, this.o.nodeName, s.refreshMin);
    while (!mc.isStopped) {
      const row = await this.o.store.getCollection(name);
      if (!row || mc.status === ZOMBIE) return;
      if (mc.status !== 'crawling') {
        await mc.waitFor(undefined, 'suspended');
        continue;
      }
      const unfinished = row.epoch > 0 && (row.cycleEndedMs ?? 0) < (row.cycleStartedMs ?? 0);
      if (!unfinished && row.epoch > 0 && !mc.state.refetch) {
        // MS-FSCCFG refresh: the next cycle starts `refresh` minutes after the last one started.
        const due = (row.cycleStartedMs ?? 0) + s.refreshMin * 60_000;
        if (!s.refreshWhenIdle && this.now() < due) {
          // A sub-collection's own, shorter refresh (sub-refresh.ts): its URIs again, before the collection's next cycle.
          const sub = subRefresh.any ? subRefresh.next(row.cycleStartedMs ?? 0) : undefined;
          if (sub !== undefined && sub.atMs < due) {
            if (this.now() < sub.atMs) await mc.waitFor(sub.atMs - this.now(), 'refresh');
            else {
              subRefresh.done(sub.name, this.now());
              const n = await this.refreshSub(name, sub.name);
              this.o.log.info({ collection: name, subcollection: sub.name, queued: n }, 'sub-collection refresh');
            }
            continue;
          }
          await mc.waitFor(due - this.now(), 'refresh');
          continue;
        }
      }
      await mc.takeRefetch();
      // An ended cycle reopened (AddURIs, a quarantine's end, sent links): its statistics cycle was closed already.
      mc.reopenedEpoch = unfinished && mc.stats.current === cycleNumberOfEpoch(row.epoch) + 1 ? row.epoch : undefined;
      const metrics = this.metricsOf(name);
      const crawl = mc.runtime.newCrawl({
        fetchObserver: metrics.fetch,
        refreshOnly: () => mc.state.refreshOnly,
        heldSites: inst ? () => heldWithRoutes(mc.state.held, inst.heldUntil(name)) : () => mc.state.held,
        ...(routing ? { routing } : {}),
        quarantinedSites: () => mc.state.quarantine,
        sendLinks: async (target, links) => this.sendLinks(target, links),
        onDnsLookup: (ok, code) => this.global.recordDnsLookup({ ok, ...dnsErrorOutcome(ok ? undefined : code), bytesOut: 0, bytesIn: 0 }),
        onEvent: this.eventSink(name),
        onCycle: (c) => {
          mc.cycle = c;
        },
      });
      mc.crawl = crawl;
      this.o.log.info({ collection: name }, 'refresh cycle starting');
      let summary: CycleSummary;
      // A sub-collection's own refresh that falls due while this cycle runs is skipped (the Elastic crawl status).
      const stopSkips = subRefresh.any ? this.watchSkips(mc, crawl, subRefresh, unfinished ? (row.cycleStartedMs ?? this.now()) : this.now()) : undefined;
      try {
        summary = await crawl.runCycle().finally(() => stopSkips?.());
        this.absorb(mc, summary.complete, summary.epoch);
        // In the step that detaches the crawl: a scrape counts it running or ended, once (collection-metrics.ts).
        metrics.crawlEnded(crawl.counters(), summary.queued);
        mc.crawl = undefined;
        mc.reopenedEpoch = undefined;
        await mc.saveStats();
      } catch (err) {
        if (mc.crawl === crawl) {
          metrics.crawlEnded(crawl.counters(), undefined);
          mc.crawl = undefined;
        }
        mc.reopenedEpoch = undefined;
        if (!isDiskFull(err)) throw err;
        // A cycle that could not even begin (or end) for lack of space is tried again; the crawl store kept what it committed.
        this.o.log.warn({ collection: name, err }, `disk full (data directory ${this.o.dataDir}); the cycle is tried again in ${DISK_FULL_RETRY_MS / 1000} s`);
        await mc.waitFor(DISK_FULL_RETRY_MS, 'disk-full');
        continue;
      }
      this.o.log.info({ collection: name, epoch: summary.epoch, complete: summary.complete, requests: summary.requests, stored: summary.stored }, 'refresh cycle ended');
    }
  }

  /**
   * While `crawl` runs: each sub-collection whose own refresh falls due is
   * not refreshed (its URIs are not queued again into the running cycle);
   * a cycle with status `skipped` is recorded in the cycles table instead,
   * as the Elastic crawler records an automatic crawl that fell due while
   * another was active, and the sub-collection is due again one period
   * later. Returns the function that stops watching.
   */
  private watchSkips(mc: ManagedCollection, crawl: CollectionCrawl, subRefresh: SubRefresh, cycleStartedMs: number): () => void {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const arm = (): void => {
      const next = subRefresh.next(cycleStartedMs);
      if (stopped || next === undefined) return;
      timer = setTimeout(() => void fire(next.name), Math.max(0, next.atMs - this.now()));
    };
    const fire = async (sub: string): Promise<void> => {
      if (stopped || mc.crawl !== crawl) return;
      const now = this.now();
      subRefresh.done(sub, now);
      const active = crawl.cycle();
      const reason = `sub-collection ${sub}'s refresh fell due while cycle ${active === undefined ? 'of the collection' : `${active.epoch} (${active.id})`} was running`;
      const row: CycleRow = { id: newCycleId(now), epoch: active?.epoch ?? 0, status: 'skipped', statusMs: now, startedMs: now, endedMs: now, stoppedBy: reason };
      mc.skipped = row;
      try {
        await this.o.store.putCycle(mc.name, row);
      } catch (err) {
        this.o.log.warn({ collection: mc.name, err }, 'the skipped cycle is not recorded in the crawl store');
      }
      this.o.log.info({ collection: mc.name, subcollection: sub, cycleId: row.id }, `automatic crawl skipped: ${reason}`);
      // The event log: trawl's line, or with trawl_elastic.events the Elastic crawler's record (its crawl id the skipped cycle's).
      const message = `automatic crawl skipped (cycle ${row.id}, status skipped): ${reason}`;
      this.eventSink(mc.name)({ type: 'cycle', message, ...(mc.settings.elastic.events ? { ecs: crawlSkipped({ id: row.id }, reason) } : {}) });
      arm();
    };
    arm();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }

  /**
   * Where a crawl of `name` sends its events: the collection's event log
   * (what its `log` section lets through, CrawlEvents), and a full disk to
   * the daemon's log as well.
   */
  private eventSink(name: string): (e: CrawlEvent) => void {
    const events = this.eventLogs.get(name);
    const log = this.o.log;
    if (!events) return (e) => log[e.type === 'disk' ? 'warn' : 'debug']({ collection: name, event: e.type, url: e.url, status: e.status, code: e.code }, e.message);
    return (e) => {
      events.write(e);
      if (e.type === 'disk') log.warn({ collection: name, event: e.type }, e.message);
    };
  }

  private async sendLinks(target: string, links: readonly QueuedUri[]): Promise<void> {
    const mc = this.collections.get(target);
    const running = mc?.status === ZOMBIE ? undefined : mc?.crawl;
    if (running) await running.addUris(links.map((l) => l.url), false);
    else if (await queueSentLinks(this.o.store, target, links)) mc?.wake();
  }

  // ------------------------------------------------------------ metrics and health

  private metricsOf(name: string): CollectionMetrics {
    let m = this.metricsByName.get(name);
    if (!m) {
      m = new CollectionMetrics();
      this.metricsByName.set(name, m);
    }
    return m;
  }

  /** The queue of `name` changed while no cycle may run: /metrics reads it from the crawl store again. */
  private queueChanged(name: string): void {
    this.metricsByName.get(name)?.forgetQueue();
  }

  /**
   * Every collection as `GET /metrics` reports it, in name order. Counters
   * and the running cycle's gauges are read from memory; the feed backlog
   * (one grouped count of the outbox) and, for a collection with no cycle
   * running whose queue is not known, the queue length are read from the
   * crawl store.
   */
  async metricsSnapshot(): Promise<CollectionMetricsSnapshot[]> {
    const out: CollectionMetricsSnapshot[] = [];
    for (const name of this.list()) {
      const mc = this.collections.get(name);
      if (!mc) continue;
      // A zombie's are read, not made: its entry goes when its deletion ends.
      const m = mc.status === ZOMBIE ? this.metricsByName.get(name) ?? new CollectionMetrics() : this.metricsOf(name);
      const crawl = mc.crawl;
      const base = { name, status: mc.status, cycleRunning: crawl !== undefined, counters: m.counters(crawl?.counters()), bodyBytes: m.fetch.bodyBytes, latency: m.fetch.latency() };
      if (mc.status === ZOMBIE) {
        out.push(base);
        continue;
      }
      let queued: number;
      let activeSites = 0;
      let inFlight = 0;
      if (crawl) {
        const p = crawl.progress();
        ({ queued, activeSites, inFlight } = p);
      } else {
        m.queuedIdle ??= (await this.o.store.counts(name)).queued;
        queued = m.queuedIdle;
      }
      let feedBacklog: Record<string, number> | undefined;
      if (mc.runtime.feeder) {
        feedBacklog = Object.fromEntries([...mc.runtime.destinations.keys()].map((d) => [d, 0]));
        Object.assign(feedBacklog, await this.o.store.feedBacklog(name));
      }
      out.push({ ...base, queued, activeSites, inFlight, ...(feedBacklog ? { feedBacklog } : {}) });
    }
    return out;
  }

  /**
   * `GET /healthz`: ok while the service runs (started, not stopping) and
   * the crawl store answers a read within `timeoutMs`.
   */
  async health(timeoutMs = HEALTH_STORE_TIMEOUT_MS): Promise<Health> {
    const base = { collections: this.live().length, uptimeS: Math.max(0, Math.round((this.now() - this.createdMs) / 1000)) };
    if (this.phase !== 'running') return { ok: false, status: this.phase === 'new' ? 'starting' : 'stopping', ...base };
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      this.o.store.getCollection(globalRowOf(this.o.installation)).then(() => true, () => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return answered ? { ok: true, status: 'ok', ...base } : { ok: false, status: 'store unavailable', ...base };
  }

  // ------------------------------------------------------------ statistics

  private absorb(mc: ManagedCollection, cycleEnded: boolean, epoch?: number): void {
    const totals = mc.crawl?.counterTotals();
    const feeding = mc.feedingNow();
    const state = {
      activeSites: mc.crawl?.progress().activeSites ?? 0,
      status: this.statusCode(mc.name),
      feeding: Object.values(feeding).some((on) => on),
      // 2.2.4.10: empty when the only destination is the default one.
      feedingDestinations: Object.keys(mc.settings.feeding).length > 0 ? feeding : {},
      crawlLimit: mc.crawl?.crawlLimit() ?? (mc.state.refreshOnly ? 'user' as const : 'none' as const),
    };
    const feeder = mc.runtime.feeder;
    const pp = feeder ? { ...feeder.counters } : undefined;
    if (totals) mc.stats.absorbCounters({ totals, ...(pp ? { pp } : {}) }, state);
    else mc.stats.absorbFeeding(pp, state);
    const nowS = this.now() / 1000;
    // A reopened cycle's statistics cycle was closed when it first ended: what it fetches now is merged into it.
    const reopened = mc.crawl !== undefined && mc.reopenedEpoch !== undefined;
    if (reopened || !cycleEnded) {
      mc.stats.mergeDelta(nowS, reopened ? 'previous' : 'current');
      return;
    }
    // The statistics cycle that follows the engine's epoch E is numbered E (2.2.4.5 numbers from 0, epochs from 1).
    const next = epoch !== undefined ? cycleNumberOfEpoch(epoch) + 1 : undefined;
    if (next !== undefined && next > mc.stats.current) mc.stats.newCycle(nowS, next);
    else mc.stats.newCycle(nowS);
  }

  /** Merges what the running crawls counted since the last flush and saves it (every 30 s, and on stop). */
  async flushStatistics(): Promise<void> {
    for (const mc of this.live()) {
      this.absorb(mc, false);
      await mc.saveStats();
    }
    this.global.mergeDelta(this.now() / 1000);
    if (!(await this.o.store.getCollection(globalRowOf(this.o.installation)))) await this.o.store.putCollection(globalRowOf(this.o.installation), '', this.now());
    await this.o.store.updateCollection(globalRowOf(this.o.installation), { extra: { stats: this.global.toJSON() } });
  }

  // ------------------------------------------------------------ operations

  /** The collection `name`; refused when there is none, or it is being deleted. */
  private collection(name: string): ManagedCollection {
    const mc = this.collections.get(name);
    if (!mc) throw trawlError('COLLECTION_NOT_FOUND', { name });
    if (mc.status === ZOMBIE) throw trawlError('COLLECTION_DELETING', { name });
    return mc;
  }

  list(): string[] {
    return [...this.collections.keys()].sort();
  }

  has(name: string): boolean {
    const mc = this.collections.get(name);
    return mc !== undefined && mc.status !== ZOMBIE;
  }

  /**
   * CollectionAdd (MS-FSCADM 2.2.9.3): a partial configuration is merged into
   * the existing collection; a new one gets the MS-FSCCFG defaults. The
   * merged result must pass every rule before anything changes.
   */
  async addCollection(xml: string): Promise<string[]> {
    const r = readConfigXml(xml, 'ConfigData', { partial: true });
    if (hasErrors(r.diagnostics)) throw new TrawlError(r.diagnostics.find((d) => d.severity === 'error')!.code, r.diagnostics.filter((d) => d.severity === 'error').map(describe).join('; '));
    if (r.document.collections.length === 0) throw trawlError('COLLECTION_NONE_GIVEN', {});
    const names: string[] = [];
    for (const partial of r.document.collections) {
      const present = this.collections.get(partial.name);
      if (present?.status === ZOMBIE) throw trawlError('COLLECTION_ADD_WHILE_DELETING', { name: partial.name });
      if (partial.name.startsWith('\u0000') || partial.name === 'dspec' || partial.name === 'global') throw trawlError('COLLECTION_NAME_RESERVED', { name: partial.name });
      // A configuration got with CollectionGetConfigurationXML has its secrets
      // masked: each mask is the stored secret at the same path again.
      const restored = restoreMasked(partial, present?.config);
      const merged = present ? mergeCollections(present.config, restored) : restored;
      const problems: Diagnostic[] = [];
      checkRules(merged, problems);
      if (hasErrors(problems)) throw new TrawlError('TRAWL_ERR_CONFIG_RULE', problems.filter((d) => d.severity === 'error').map(describe).join('; '));
      checkSinks(resolveSettings(merged, this.nodeOpt()).sinks);
      // The client certificate is read now, so that a wrong file is the operator's answer, not a failed cycle later.
      const cert = clientCertDiagnostics(merged, process.cwd()).filter((d) => d.severity === 'error');
      if (cert.length > 0) throw new TrawlError('TRAWL_ERR_CLIENT_CERT', cert.map(describe).join('; '));
      await this.o.store.putCollection(merged.name, writeConfigXml(merged), this.now());
      // A member of an installation may have started it meanwhile from the database (syncCollections): that one is replaced.
      const started = this.collections.get(merged.name);
      if (started && started !== present && started.status !== ZOMBIE) {
        this.collections.delete(merged.name);
        await started.stop();
        await started.runtime.content.close();
      }
      if (present) {
        await present.stop();
        await present.runtime.content.close();
        this.collections.delete(merged.name);
      }
      const row = await this.o.store.getCollection(merged.name);
      this.startCollection(merged, row?.state ?? 'crawling', row?.extra ?? {});
      names.push(merged.name);
      this.o.log.info({ collection: merged.name, updated: present !== undefined }, present ? 'collection updated' : 'collection added');
    }
    if (this.phase === 'running') void this.syncSubmissions();
    return names;
  }

  // ------------------------------------------------------------ CiteSeerX submitted jobs

  /** The queues URL Submission Messages are consumed from: --citeseerx's, and each live collection's jms sinks with submission_queue (jobs excepted). */
  private submissionSources(): SubmissionSource[] {
    const out: SubmissionSource[] = this.o.submissions ? [this.o.submissions] : [];
    for (const mc of this.live()) {
      const s = mc.settings;
      if (s.submission.jobId !== undefined) continue;
      for (const [sink, k] of Object.entries(s.sinks)) {
        if (k.type !== 'jms' || k.submissionQueue === undefined || k.brokerUrl === undefined) continue;
        try {
          const reveal = (v: string): string => revealSecret(v, () => loadKeyFile(keyFilePath(this.o.dataDir, s.secrets.keyFile)));
          const a = brokerAddress(reveal(k.brokerUrl));
          if ('problem' in a) continue; // refused by the rules when the collection was added
          out.push({
            label: `collection ${mc.name} trawl_sinks.${sink}`, queue: k.submissionQueue, profile: mc.name,
            endpoint: { host: a.host, port: a.port, login: k.username, passcode: k.password === undefined ? undefined : reveal(k.password), clientId: k.clientId },
          });
        } catch (err) {
          this.o.log.error({ collection: mc.name, sink, err }, 'the submissions queue of this sink cannot be consumed');
        }
      }
    }
    return out;
  }

  /**
   * Starts and stops the submission consumers as the configuration names
   * them, one change after another; never waited for by a change of the
   * collections (a consumer that is making a job may be the one stopped).
   */
  private syncSubmissions(): Promise<void> {
    this.submissionSync = this.submissionSync.then(async () => {
      if (this.phase === 'stopping') return;
      const sources = this.submissionSources();
      if (sources.length === 0 && !this.submissionConsumers) return;
      this.submissionConsumers ??= new SubmissionConsumers({ log: this.o.log, createJob: (sub, profile) => this.createJob(sub, profile) });
      await this.submissionConsumers.sync(sources);
    }).catch((err: unknown) => this.o.log.error({ err }, 'the submission consumers could not be updated'));
    return this.submissionSync;
  }

  /**
   * A submitted job (docs/citeseerx.md "Submitted jobs"): a collection named
   * from the JID, made from the profile (the daemon's collection of that
   * name, else the built-in User Submission profile) and added as
   * CollectionAdd adds one. Resolves once it is stored; a JID that already
   * has its job resolves with `created: false`.
   */
  async createJob(sub: Submission, profileName: string): Promise<JobResult> {
    const name = jobCollectionName(sub.jid);
    const existing = this.collections.get(name);
    if (existing) {
      if (existing.status === ZOMBIE) throw new Error(`the collection ${name} is being deleted`);
      if (existing.settings.submission.jobId === sub.jid) return { name, created: false };
      throw new SubmissionRefused(`the collection ${name} exists and is not job ${JSON.stringify(sub.jid)}`);
    }
    const template = this.collections.get(profileName);
    const profile = template && template.status !== ZOMBIE && template.settings.submission.jobId === undefined ? template.config : userSubmissionProfile();
    try {
      await this.addCollection(writeConfigXml(jobConfig(profile, name, sub)));
    } catch (err) {
      if (err instanceof TrawlError && JOB_REFUSALS.has(err.code)) throw new SubmissionRefused(err.message);
      throw err;
    }
    return { name, created: true };
  }

  /** CollectionDelete: the collection is a zombie until all its data is gone; then the name is free again. */
  async deleteCollection(name: string): Promise<void> {
    const mc = this.collection(name);
    await mc.markZombie();
    void this.syncSubmissions();
    void (async () => {
      await mc.stop();
      await mc.runtime.content.close();
      await this.eventLogs.get(name)?.close();
      this.eventLogs.delete(name);
      await this.finishDelete(name);
    })().catch((err: unknown) => this.o.log.error({ collection: name, err }, 'the collection could not be deleted; it is finished at the next start'));
  }

  private async finishDelete(name: string): Promise<void> {
    try {
      await rm(join(this.o.dataDir, 'content', name), { recursive: true, force: true });
      await this.o.store.deleteCollection(name);
      this.metricsByName.delete(name);
      this.o.log.info({ collection: name }, 'collection deleted');
    } finally {
      if (this.collections.get(name)?.status === ZOMBIE) this.collections.delete(name);
    }
  }

  configXml(name: string): string {
    // Secrets stay as they were written when encrypted (!ENC!), masked when in
    // clear (secrets.ts); CollectionAdd puts the stored ones back for the masks.
    return writeConfigXml(redactCollection(this.collection(name).config), { mode: 'complete' });
  }

  statusCode(name: string): StatusCode {
    const mc = this.collections.get(name);
    if (mc?.status === ZOMBIE) return 3;
    if (mc?.status === 'suspended') return 4;
    // 2.2.3.3: 5, suspended for lack of disk space; 8, by a variable_delay suspend slot (only while a cycle runs).
    const held = mc?.crawl?.heldBy();
    return held === 'disk-full' ? 5 : held === 'variable-delay' ? 8 : 1;
  }

  async status(name: string): Promise<string> {
    const mc = this.collections.get(name);
    if (mc?.status === ZOMBIE) return ZOMBIE;
    return this.collection(name).status;
  }

  /**
   * The status with what the collection does now (the trawl extension
   * trawl.CollectionGetStatus): `status` is CollectionGetStatus's value;
   * `activity` says whether a cycle runs (`crawling`) or the runner waits
   * (`idle`: for the next refresh at `nextCycleMs`, or for disk space).
   */
  statusDetail(name: string): StatusDetail {
    const mc = this.collections.get(name);
    if (mc?.status === ZOMBIE) return { status: ZOMBIE, activity: 'deleting' };
    const c = this.collection(name);
    const cycle = { ...(c.cycle !== undefined ? { cycle: c.cycle } : {}), ...(c.skipped !== undefined ? { skipped: c.skipped } : {}) };
    if (c.status === 'suspended') return { status: c.status, activity: 'suspended', ...cycle };
    const w = c.waiting;
    if (c.crawl || !w || w.reason === 'suspended') return { status: c.status, activity: 'crawling', ...cycle };
    return { status: c.status, activity: 'idle', waitingFor: w.reason, ...(w.untilMs !== undefined ? { nextCycleMs: w.untilMs } : {}), ...cycle };
  }

  async suspend(name: string): Promise<void> {
    await this.collection(name).suspend();
  }

  async resume(name: string): Promise<void> {
    await this.collection(name).resume();
  }

  /** AddURIs / AddURIFile: into the running cycle, or reopening the last one so they are fetched now. */
  async addUris(name: string, urls: readonly string[], urgent: boolean): Promise<AddedUris> {
    const mc = this.collection(name);
    if (mc.crawl) return mc.crawl.addUris(urls, urgent);
    // Not crawling right now: a scratch crawl object checks scope and queues; the runner then resumes the cycle.
    const row = await this.o.store.getCollection(name);
    const result = await mc.runtime.probe().prepareAndAdd(urls, urgent);
    this.queueChanged(name);
    if (row && row.epoch > 0 && result.added > 0) await this.o.store.updateCollection(name, { cycleEndedMs: undefined });
    mc.wake();
    return result;
  }

  async refetch(name: string, sub: string | undefined): Promise<number> {
    const mc = this.collection(name);
    if (sub !== undefined && sub !== '') {
      resolveSettings(mc.config, { ...this.nodeOpt(), subcollection: sub }); // throws when there is no such sub-collection
      const probe = mc.runtime.probe();
      const n = await probe.requeueKnown((u) => probe.subOf(u) === sub);
      this.queueChanged(name);
      await mc.reopenCycle();
      return n;
    }
    await mc.requestRefetch();
    mc.crawl?.stop();
    mc.wake();
    return 0;
  }

  /** A sub-collection's own refresh is due: its URIs queued again as its refresh_mode says, and the cycle reopened. */
  private async refreshSub(name: string, sub: string): Promise<number> {
    const mc = this.collection(name);
    const n = await mc.runtime.probe().refreshSub(sub);
    this.queueChanged(name);
    await mc.reopenCycle();
    return n;
  }

  async refetchUri(name: string, uri: string, refeed: boolean, site: boolean, immediately: boolean): Promise<number> {
    const mc = this.collection(name);
    const probe = mc.crawl ?? mc.runtime.probe();
    const target = siteOf(new URL(uri));
    const n = site ? await probe.requeueKnown((u) => siteOf(u) === target, immediately) : await probe.requeueUrls([uri], immediately, refeed && mc.runtime.feeder !== undefined);
    if (!mc.crawl) await this.o.store.updateCollection(name, { cycleEndedMs: undefined });
    this.queueChanged(name);
    mc.wake();
    return n;
  }

  /** Deletes URIs (and their documents) from the store, and from the destinations through the feed outbox. */
  async deleteUris(name: string, urls: readonly string[]): Promise<number> {
    const { runtime } = this.collection(name);
    const refs = await this.o.store.deleteUris(name, urls, runtime.feedTo);
    this.queueChanged(name);
    for (const ref of refs) await runtime.content.delete(ref);
    runtime.feeder?.poke();
    return refs.length;
  }

  async deleteSite(name: string, hostport: string): Promise<number> {
    const { runtime } = this.collection(name);
    let n = 0;
    for (const site of sitesOfHostport(hostport)) {
      const refs = await this.o.store.deleteSite(name, site, runtime.feedTo);
      this.queueChanged(name);
      for (const ref of refs) await runtime.content.delete(ref);
      n += refs.length;
    }
    runtime.feeder?.poke();
    return n;
  }

  /**
   * CollectionReprocessSite / …SitePrefix / …URI: the stored documents
   * selected are queued to the destinations `contentdest` names, and sent
   * from the crawl store and the content store (no refetch). Returns how
   * many documents were queued.
   */
  async reprocess(name: string, contentdest: string, which: { hostport?: string; prefix?: string; urls?: readonly string[] }): Promise<number> {
    const { runtime } = this.collection(name);
    const destinations = resolveContentdest(runtime.destinations, contentdest, name);
    if (!runtime.feeder) throw trawlError('COLLECTION_NO_SINKS', { name });
    let n = 0;
    if (which.urls) n = await this.o.store.queueFeedFromRecords(name, destinations, { urls: which.urls });
    else {
      for (const site of sitesOfHostport(which.hostport!)) {
        n += await this.o.store.queueFeedFromRecords(name, destinations, { site, ...(which.prefix !== undefined ? { prefix: which.prefix } : {}) });
      }
    }
    runtime.feeder.poke();
    return n;
  }

  /**
   * CollectionPreemptSite / CollectionQuarantineSite: the site is held until a
   * time (persisted). With `quarantine`, the URIs found for it meanwhile go to
   * its separate quarantine queue, released into its ordinary queue when the
   * quarantine ends.
   */
  async holdSite(name: string, hostport: string, seconds: number, quarantine = false): Promise<void> {
    const mc = this.collection(name);
    await mc.hold(sitesOfHostport(hostport), this.now() + seconds * 1000, quarantine);
  }

  async setRefreshOnly(name: string, on: boolean): Promise<void> {
    await this.collection(name).setRefreshOnly(on);
  }

  /** MS-FSCADM 2.2.3.6; limits.disk_free (or a full disk) and limits.max_doc are told before the operator's refresh-only mode, as the news. */
  async crawlMode(name: string): Promise<string> {
    const mc = this.collection(name);
    const limit = mc.crawl?.crawlLimit();
    if (limit !== undefined) return `Refreshing(limit=${limit})`;
    return mc.state.refreshOnly ? 'Refreshing(limit=user)' : '';
  }

  /**
   * CollectionSuspendFeeding / CollectionResumeFeeding: the destinations the
   * contentdest names stop (or start again) receiving documents; what is fed
   * meanwhile waits in the feed outbox. Persisted. A fault when they all are
   * already in that state (2.2.9.21: MUST NOT already be suspended).
   */
  async setFeedingPaused(name: string, contentdest: string, paused: boolean): Promise<string[]> {
    const mc = this.collection(name);
    const changing = await mc.setFeedingPaused(resolveContentdest(mc.runtime.destinations, contentdest, name), paused);
    if (!paused) mc.runtime.feeder?.poke();
    return changing;
  }

  /** The collection's statistics, merged up to now. */
  collectionStatistics(name: string): { stats: Statistics<'collectionschema'>; refreshMin: number; refreshMode: 'append' | 'prepend' | 'scratch' | 'soft' | 'adaptive' } {
    const mc = this.collection(name);
    this.absorb(mc, false);
    return { stats: mc.stats, refreshMin: mc.settings.refreshMin, refreshMode: mc.settings.refreshMode as 'scratch' };
  }

  /** One site's statistics, from the counters the crawl store keeps for it. */
  async siteStatistics(name: string, site: string): Promise<{ stats: Statistics<'siteschema'>; refreshMin: number; refreshMode: 'scratch' }> {
    const mc = this.collection(name);
    const key = /^https?:\/\//.test(site) ? siteOf(new URL(site)) : sitesOfHostport(site)[0]!;
    const live = mc.crawl?.siteCounters().get(key);
    const json = live ? JSON.stringify(live) : await this.o.store.getSiteStats(name, key);
    if (json === undefined) throw trawlError('SITE_NOT_CRAWLED', { name, site });
    const stats = new Statistics({ schema: 'siteschema', name: key, nowS: this.now() / 1000 });
    stats.absorbCounters({ totals: SiteStats.parse(json).data });
    stats.mergeDelta(this.now() / 1000);
    return { stats, refreshMin: mc.settings.refreshMin, refreshMode: 'scratch' };
  }

  // ------------------------------------------------------------ reading (trawl.* extensions)

  /** A collection as `trawl inspect` / `trawl export` read it, through the daemon's own store and content store. */
  private view(name: string): CollectionView {
    const mc = this.collection(name);
    const events = this.eventLogs.get(name);
    return {
      name, store: this.o.store, content: mc.runtime.content, settings: mc.settings,
      logFiles: () => logFilesOf(this.o.dataDir, name),
      ...(events ? { flushLog: () => events.flush() } : {}),
    };
  }

  /** trawl.GetDataDirectory: the data directory, its real path (a reader checks it holds the store it could not open). */
  dataDirectory(): string {
    try {
      return realpathSync(this.o.dataDir);
    } catch {
      return resolvePath(this.o.dataDir);
    }
  }

  /** trawl.InspectURI: everything known of one URL (inspect.ts). */
  async inspectUri(name: string, url: string, body: boolean): Promise<InspectReport> {
    return inspectUri(this.view(name), url, { body });
  }

  /** trawl.ExportDocuments: one page of the collection's documents after `from` (0: the start). */
  async exportDocuments(name: string, sel: ExportSelection, from: number, o: ExportOptions): Promise<ExportPage> {
    return exportPage(this.view(name), sel, from, o);
  }

  /** trawl.GetLog: the last lines of the collection's event log, or those about one URL. */
  async eventLog(name: string, lines: number, url: string | undefined): Promise<LogLine[]> {
    const v = this.view(name);
    await v.flushLog?.();
    return readLogLines(v.logFiles(), { collection: name, lines, ...(url !== undefined ? { url: normalizeFor(v.settings, url) ?? url } : {}) });
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
