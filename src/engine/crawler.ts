/**
 * One refresh cycle of one collection, to completion. Reads like a table
 * of contents; each step is a method below or a module of its own:
 *
 *   begin cycle   resume an unfinished cycle (leased URIs back to queued),
 *                 or start the next one (refresh_mode; start URIs; known URIs)
 *   loop          scheduler picks a ready site ─► robots.txt (once per site)
 *                 ─► lease a URI ─► robots check ─► fetch ─► process ─► commit
 *   end cycle     mark the cycle finished, save statistics
 *
 * Crash safety: every fetch is committed in one store transaction (record,
 * discovered links, site statistics). A kill loses only what was in flight;
 * those URIs are still leased in the store and go back to the queue when
 * the cycle resumes.
 */

import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { BoundedMap } from '../core/bounded-map.ts';
import { ChecksumFilter } from '../core/checksum-filter.ts';
import { isDiskFull } from '../core/disk-full.ts';
import { FingerprintCache, reservedNumber, reservedTag, stringTag } from '../core/fingerprint-cache.ts';
import { domainOf, normalizeUrl, pathAndQuery, siteOf } from '../core/url.ts';
import { URI_SKIP_CODE_LIST, type DocSkipCode, type UriSkipCode } from '../core/skip-codes.ts';
import type { CollectionConfig } from '../config/model.ts';
import type { CollectionSettings } from '../config/registry.ts';
import { writeCollectionXml } from '../config/writer.ts';
import { EgressChecker, SiteResolver, type EgressPolicy, type LookupFn } from '../fetch/egress.ts';
import { HttpFetcher, type FetchLimits, type FetchOutcome, type ResponseOutcome } from '../fetch/http-fetcher.ts';
import { detectMime, mimeMatches } from '../fetch/mime.ts';
import { sharedExtractPool, type ExtractPool } from '../extract/extract-pool.ts';
import { parseRobotsDirectives, type LinkFlags } from '../extract/html.ts';
import { DEFAULT_MAX_BYTES as FEED_MAX_BYTES, looksLikeFeed, parseFeed } from '../extract/feed.ts';
import { inSitemapScope, parseSitemap } from '../extract/sitemap.ts';
import { compileRules, includeExcludeRule, type ScopeRule } from '../scope/scope.ts';
import { BloomFilter } from '../frontier/bloom.ts';
import { SiteScheduler, type SiteState } from '../frontier/site-scheduler.ts';
import type { ContentStore } from '../store/content-store.ts';
import { focusHopsOf, isSuspect, sitemapDepthOf, URI_FLAGS, withFocusHops, withSitemapDepth, type CrawlStore, type FeedOp, type LeasedUri, type QueuedUri, type UriRecord } from '../store/crawl-store.ts';
import { emptyStats, mergeDiscrete, SiteStats, type StatsData } from '../stats/site-stats.ts';
import { DiskGuard, limitsNotHonoured } from './disk-guard.ts';
import { RobotsManager, type KnownRobots } from './robots-manager.ts';
import { buildRuntime, type Runtime } from './runtime.ts';

/** The most entries the screened-URI cache keeps, whatever cachesize.screened says. */
const SCREENED_MAX = 1 << 24;
/**
 * cachesize.screened unset: the screened URI cache starts at SCREENED_START
 * entries and doubles whenever it is full, up to SCREENED_GROW_MAX (about
 * 20 MB). A cycle that meets more URLs than the cache holds forgets URLs
 * its pages still link, and each then costs a trip to the crawl store
 * again: at a fixed 100,000 the bench crawl's 101,300 URLs sent 2.45 links
 * a page back from the extract worker, at 262,144 1.09 (bench/README.md).
 * 2^17 entries take the same table as 100,000 did (2^18 slots, half of
 * them used when full), and 8 MiB more per doubling.
 */
const SCREENED_START = 1 << 17;
const SCREENED_GROW_MAX = 1 << 19;

export interface CrawlEvent {
  /** `disk`: the data directory's disk filled up, went below limits.disk_free, or has space again; or a part of `limits` is not honoured (disk-guard.ts). */
  readonly type: 'fetch' | 'skip' | 'robots' | 'cycle' | 'error' | 'disk';
  readonly url?: string;
  readonly status?: number;
  readonly code?: string;
  readonly message: string;
}

export interface CrawlerOptions {
  readonly store: CrawlStore;
  readonly content: ContentStore;
  /** Overrides of the collection's trawl_egress settings (CLI flags). */
  readonly egress?: Partial<EgressPolicy>;
  /** Requests in flight at once over all sites. */
  readonly maxConcurrency?: number;
  /** Stop starting new fetches after this many in this run (the cycle stays unfinished). */
  readonly maxPages?: number;
  readonly node?: string;
  /** Base directory for relative start_uri_files. */
  readonly baseDir?: string;
  /** The data directory: its free space is watched (limits.disk_free) and reported when a write fails for lack of it. */
  readonly dataDir?: string;
  /** How often the data directory's free space is checked (default DISK_POLL_MS). */
  readonly diskPollMs?: number;
  readonly lookup?: LookupFn;
  readonly now?: () => number;
  readonly onEvent?: (e: CrawlEvent) => void;
  /**
   * send_links_to: hands every link this collection extracts to another
   * collection. Absent: such links are dropped with an error event.
   */
  readonly sendLinks?: (target: string, links: readonly QueuedUri[]) => Promise<void>;
  /** Refresh-only mode (MS-FSCADM CollectionEnableRefreshOnly): no new URIs are queued from links. */
  readonly refreshOnly?: () => boolean;
  /** Each DNS lookup the crawl makes (global DNS statistics). */
  readonly onDnsLookup?: (ok: boolean, code: string | undefined) => void;
  /** Sites paused until a time (ms): quarantined or preempted by an operator. */
  readonly heldSites?: () => ReadonlyMap<string, number>;
  /** Quarantined sites (until when, ms): URIs found for them go to their separate quarantine queue. */
  readonly quarantinedSites?: () => ReadonlyMap<string, number>;
  /**
   * The content destinations documents are fed to (src/sinks/feeding.ts):
   * each stored, changed or deleted document queues an operation for each,
   * in the feed outbox, with its fetch's transaction. Absent or empty: no
   * feeding (the collection has no sinks).
   */
  readonly feedTo?: readonly string[];
  /** Operations were queued in the feed outbox (wakes the feeder). */
  readonly onFeed?: () => void;
  /** Where pages are parsed; default: the process's worker thread (src/extract/extract-pool.ts). */
  readonly extractPool?: ExtractPool;
  /** How many sites' robots rules stay in memory (default ROBOTS_MEMO_MAX; the rest are read back from the crawl store). */
  readonly robotsMemo?: number;
  /** Entries the screened URI cache starts with when cachesize.screened is unset (default SCREENED_START; tests make it small to see it grow). */
  readonly screenedStart?: number;
}

/**
 * The default route for send_links_to when both collections share a store
 * (trawl crawl): the links are queued in the target collection, marked SENT,
 * for its running cycle or, when it has none, its next one; the target
 * checks them against its own scope when it leases them.
 */
export async function queueSentLinks(store: CrawlStore, target: string, links: readonly QueuedUri[]): Promise<boolean> {
  const row = await store.getCollection(target);
  if (!row) return false;
  const running = row.epoch > 0 && (row.cycleEndedMs ?? 0) < (row.cycleStartedMs ?? 0);
  await store.enqueue(target, running ? row.epoch : row.epoch + 1, links.map((l) => ({ ...l, sub: undefined, priority: 1, flags: (l.flags ?? 0) | URI_FLAGS.SENT })));
  return true;
}

export interface CycleSummary {
  readonly collection: string;
  readonly epoch: number;
  readonly resumed: boolean;
  /** The cycle ran to completion (nothing left queued). */
  readonly complete: boolean;
  readonly stoppedBy: 'done' | 'max-pages' | 'signal';
  readonly requests: number;
  readonly stored: number;
  readonly unchanged: number;
  readonly duplicates: number;
  readonly errors: number;
  readonly deleted: number;
  readonly retries: number;
  readonly robotsRequests: number;
  readonly bytesIn: number;
  readonly uriSkips: Readonly<Record<string, number>>;
  readonly docSkips: Readonly<Record<string, number>>;
  readonly httpStatus: Readonly<Record<string, number>>;
  readonly queued: number;
  readonly durationMs: number;
}

export interface Progress {
  readonly requests: number;
  readonly stored: number;
  readonly errors: number;
  readonly queued: number;
  readonly inFlight: number;
  readonly activeSites: number;
  readonly elapsedMs: number;
}

interface Counters {
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

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Sites whose statistics share one transaction when a cycle ends, or one answer when it starts (about 0.7 MB of JSON). */
const SAVE_STATS_BATCH = 1000;
/**
 * How often the sites whose statistics changed are saved while a cycle
 * runs (saveChangedStats). They used to go with every completion, in its
 * transaction: 8 µs of JSON.stringify and 680 bytes more to clone per page
 * on the main thread, and a row rewritten per site per group commit on the
 * storage thread (bench/README.md, *What changed*). A kill -9 now loses at
 * most this long of a site's counters; the records and the queue, which
 * are what a resumed crawl goes by, are committed with each fetch as before.
 */
const STATS_SAVE_INTERVAL_MS = 1000;
/** Records read at once when a refresh or an operator's refetch walks the crawl store (recordPages). */
const RECORD_PAGE = 5000;
/** Links remembered as refused by their URL alone (refusedByUrl). */
const REFUSED_BY_URL_MAX = 10_000;
/** How long a site whose next URI is a suspect waits while another suspect is fetched. */
const SUSPECT_WAIT_MS = 100;

/** The records findByChecksum can answer with, and so the checksums the duplicate check's filter must hold (storedChecksums). */
function holdsChecksum(r: UriRecord): r is UriRecord & { checksum: string } {
  return r.checksum !== undefined && (r.status === 'stored' || r.status === 'unchanged');
}

/** Whether the destinations have (had) the document: it was stored with content. */
function wasFed(r: UriRecord | undefined): boolean {
  return r !== undefined && r.contentRef !== undefined && (r.status === 'stored' || r.status === 'unchanged');
}

function bump(h: Record<string, number>, k: string, n = 1): void {
  h[k] = (h[k] ?? 0) + n;
}

/** Retry-After: seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** A checksum one page is looking up or storing: `original` is what an equal page is a duplicate of (that page, unless the store knew an older one). */
interface Claim {
  readonly url: string;
  readonly original: Promise<string>;
}

export class CollectionCrawl {
  readonly config: CollectionConfig;
  private readonly opts: CrawlerOptions;
  private readonly store: CrawlStore;
  private readonly now: () => number;
  // Set by setup(); `prepared` tells whether it ran.
  private rt!: Runtime;
  private prepared = false;
  private epoch = 0;
  private resolver!: SiteResolver;
  private fetcher!: HttpFetcher;
  private robots!: RobotsManager;
  private sched!: SiteScheduler;
  private readonly stats = new Map<string, SiteStats>();
  /** Sites whose statistics may have changed since they were last saved (statsFor marks them). */
  private readonly statsChanged = new Set<string>();
  private statsSaving: Promise<void> | undefined;
  /**
   * The sum of every site's counters, histograms and maxima, kept up to date
   * by the sites' SiteStats as they count (SiteStats.attach). Summing a
   * million sites' statistics took 2–5 s with the event loop stopped, and
   * the service does it every 30 s (bench/README.md, *Memory per site*).
   */
  private totals = new SiteStats();
  private readonly c: Counters = { requests: 0, stored: 0, unchanged: 0, duplicates: 0, errors: 0, deleted: 0, retries: 0, robotsRequests: 0, bytesIn: 0, uriSkips: {}, docSkips: {}, httpStatus: {} };
  private inFlight = 0;
  /** A suspect URI is being fetched (fetchOne): suspects go one at a time. */
  private suspectUnderWay = false;
  private started = 0;
  private wakeUp: (() => void) | undefined;
  private readonly abort = new AbortController();
  private linkFlags!: LinkFlags;
  /** A full disk pauses the loop; limits.disk_free makes the cycle refresh-only (disk-guard.ts). */
  private disk!: DiskGuard;
  /** Checksums of documents being looked up or stored right now, so two concurrent fetches of equal content are seen as duplicates. */
  private readonly claimed = new Map<string, Claim>();
  /**
   * The checksums the collection's records hold: those already stored when
   * the cycle began (seed() walks every record to queue it again, and adds
   * them), then each one a commit writes. A checksum not in it is in no
   * record of the store, so diffcheck need not ask the store
   * (core/checksum-filter.ts). Undefined before the first cycle begins.
   */
  private storedChecksums: ChecksumFilter | undefined;
  /** focused.exclude_domains: domains outside the focused scheduling. */
  private focusExempt: ScopeRule | undefined;
  /** Sites refused by ipmask / ip6mask domain rules once their address was known. */
  private readonly addressRefused = new Map<string, string>();
  /** smfilter: URLs queued in this run, in front of the store's seen set. */
  private bloom: BloomFilter | undefined;
  /**
   * The screened-URI cache (MS-FSCCFG cachesize.screened): URLs known to be
   * queued or crawled in this cycle, most recent last, bounded. Most links a
   * page has (navigation) were seen moments ago; they are counted as `ic`
   * here without a store round trip. The store still decides for the rest.
   * It keeps 64-bit fingerprints of the URLs, each tagged with its site's
   * stringTag (so that a hit counts as Local or LocalFwd): a lookup costs a
   * third of one in a Map of the strings, and the strings are not held
   * (core/fingerprint-cache.ts says what a collision would cost).
   */
  private screened = new FingerprintCache(SCREENED_START);
  private screenedMax = SCREENED_START;
  /** Whether the screened cache may grow (cachesize.screened unset): up to SCREENED_GROW_MAX. */
  private screenedGrows = true;
  /** The screened cache's id in the extract pool, which reads it on the worker's thread, while a cycle runs. */
  private screenShare: number | undefined;
  /**
   * Links the scope refused by their URL alone (ScopeDecision.byUrlAlone:
   * exclude_exts, the URL limits, domain and URI rules), with the refusal.
   * The bench site's pages link 2.3 static assets each, the same ones on
   * every page of a site, and each was parsed and judged again on every
   * page. Forgotten when a cycle starts, since the rules may have changed.
   */
  private refusedByUrl = new BoundedMap<string, { code: UriSkipCode; reason: string }>(REFUSED_BY_URL_MAX);
  /**
   * MS-FSCCFG 2.2.4.5 `log`: `screened` (default none) logs every URI the
   * scope, robots.txt or the seen check turned away; `fetch` (default text)
   * logs every downloaded document, including why one was not stored. The
   * skip codes are counted in the statistics either way.
   */
  private logScreened = false;
  private logFetch = true;

  constructor(config: CollectionConfig, opts: CrawlerOptions) {
    this.config = config;
    this.opts = opts;
    this.store = opts.store;
    this.now = opts.now ?? Date.now;
  }

  /** Resolves, then canonicalizes (rewrite_rules, named rules): the form used for the seen check. */
  private normalize(raw: string, base?: string): string | undefined {
    const abs = normalizeUrl(raw, base);
    return abs === undefined ? undefined : this.rt.canon.canonicalize(abs);
  }

  private emit(e: CrawlEvent): void {
    if (e.type === 'fetch' && !this.logFetch) return;
    this.opts.onEvent?.(e);
  }

  /** Stops starting fetches, aborts the ones in flight; `runCycle` then returns them to the queue. */
  stop(): void {
    this.abort.abort();
    this.notify();
  }

  private notify(): void {
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  /** The per-site statistics counters of this cycle so far (MS-FSCADM site schema). */
  siteCounters(): Map<string, SiteStats> {
    return this.stats;
  }

  /**
   * The collection's counters: what SiteStats.merge of every site gives, from
   * the running totals. Only the discrete values (queue length, cycle
   * times, last URI) are folded site by site, which is cheap. Undefined
   * before any site has statistics.
   */
  counterTotals(): StatsData | undefined {
    if (this.stats.size === 0) return undefined;
    const discrete = emptyStats().discrete;
    for (const st of this.stats.values()) mergeDiscrete(discrete, st.data.discrete);
    const t = this.totals.data;
    return { continuous: t.continuous, histograms: t.histograms, maxima: t.maxima, discrete };
  }

  /** MS-FSCADM 2.2.3.6: `disk_free` while the data directory's disk is below limits.disk_free or full. */
  diskLimit(): 'disk_free' | undefined {
    return this.prepared && this.disk.refreshOnly ? 'disk_free' : undefined;
  }

  /** Wakes the loop (new work arrived from outside). */
  poke(): void {
    this.notify();
  }

  /** Tells the running cycle that `n` URIs of a site became leasable (a quarantine ended). */
  noteWork(site: string, n: number): void {
    if (n > 0 && this.prepared) this.sched.addWork(site, n);
    this.notify();
  }

  progress(): Progress {
    const queued = this.sched?.queuedTotal() ?? 0;
    return { requests: this.c.requests, stored: this.c.stored, errors: this.c.errors, queued, inFlight: this.inFlight, activeSites: this.sched?.activeCount() ?? 0, elapsedMs: this.now() - this.started };
  }

  // ------------------------------------------------------------ the cycle

  async runCycle(): Promise<CycleSummary> {
    this.started = this.now();
    this.setup();
    const resumed = await this.beginCycle();
    let stoppedBy: CycleSummary['stoppedBy'] = 'done';
    this.screenShare = this.extractPool().share(this.screened);
    const statsTimer = setInterval(() => void this.saveChangedStats(), STATS_SAVE_INTERVAL_MS);
    statsTimer.unref();
    for (const message of limitsNotHonoured(this.rt.settings.limits)) this.emit({ type: 'disk', message });
    this.disk.start();
    try {
      stoppedBy = await this.loop();
    } finally {
      this.disk.stop();
      clearInterval(statsTimer);
      if (this.screenShare !== undefined) this.extractPool().unshare(this.screenShare);
      this.screenShare = undefined;
      // On a full disk the leases stay as they are: the next run puts them back in the queue (recoverLeases).
      await this.returnLeases().catch((err: unknown) => this.unlessDiskFull(err, 'the URIs leased and not fetched stay leased until the next run'));
      await this.fetcher.close();
      await this.statsSaving;
    }
    const counts = await this.store.counts(this.rt.name);
    const complete = stoppedBy === 'done' && counts.queued === 0 && counts.leased === 0;
    if (complete) await this.store.updateCollection(this.rt.name, { cycleEndedMs: this.now() });
    await this.saveStats(complete).catch((err: unknown) => this.unlessDiskFull(err, 'the site statistics of this run are not saved'));
    return { collection: this.rt.name, epoch: this.epoch, resumed, complete, stoppedBy, ...this.c, queued: counts.queued, durationMs: this.now() - this.started };
  }

  /** Rethrows `err` unless the disk is full, which is reported (the crawl store keeps what it committed). */
  private unlessDiskFull(err: unknown, consequence: string): void {
    if (!isDiskFull(err)) throw err;
    this.emit({ type: 'disk', message: `disk full: ${consequence} (${(err as Error).message})` });
  }

  private extractPool(): ExtractPool {
    return this.opts.extractPool ?? sharedExtractPool();
  }

  private setup(): void {
    this.prepared = true;
    this.rt = buildRuntime(this.config, { ...(this.opts.node !== undefined ? { node: this.opts.node } : {}), ...(this.opts.baseDir !== undefined ? { baseDir: this.opts.baseDir } : {}) });
    const s = this.rt.settings;
    const egress: EgressPolicy = { ...s.egress, ...this.opts.egress };
    this.resolver = new SiteResolver(new EgressChecker(egress), s.egress.dnsTtlS * 1000, this.opts.lookup, this.now);
    if (this.opts.onDnsLookup) this.resolver.onLookup = this.opts.onDnsLookup;
    this.fetcher = new HttpFetcher(this.resolver, { connections: Math.max(2, s.maxPending), connectTimeoutMs: s.trawlLimits.connectTimeoutS * 1000 });
    this.robots = new RobotsManager(this.store, this.rt.name, this.fetcher, {
      obey: s.robots, ttlS: s.robotsTtlS, timeoutS: s.robotsTimeoutS, authIgnore: s.robotsAuthIgnore, toutIgnore: s.robotsToutIgnore,
      productToken: this.rt.productToken, headers: this.rt.headers, maxBytes: 512 * 1024,
    }, this.now, this.opts.robotsMemo);
    const rt = this.rt;
    this.sched = new SiteScheduler({
      maxPending: s.maxPending,
      maxSites: s.maxSites,
      maxInterDocs: s.maxInterDocs,
      maxBackoffDelayMs: s.maxBackoffDelayS * 1000,
      // MS-FSCCFG 2.2.4.33: the delay is the sub-collection's for its URIs.
      delayMs: (site: SiteState) => {
        const d = rt.delayNow(site.sub, this.now());
        const base = d === 'suspend' ? 0 : d;
        const crawlDelay = s.obeyRobotsDelay ? site.crawlDelayMs : 0;
        return Math.max(base, crawlDelay);
      },
    });
    this.bloom = s.smfilterBits > 0 ? new BloomFilter(s.smfilterBits) : undefined;
    this.screenedGrows = s.cachesize.screened === undefined;
    this.screenedMax = s.cachesize.screened ?? Math.max(1, this.opts.screenedStart ?? SCREENED_START);
    // The cache's arrays are sized for cachesize.screened (or SCREENED_START) when the cycle
    // starts (the memory is only touched as it fills): 41–73 bytes an entry, about 5 MB for
    // SCREENED_START, 660 MB at most for 2^24.
    this.screened = new FingerprintCache(Math.min(Math.max(1, this.screenedMax), SCREENED_MAX), { shared: true });
    this.refusedByUrl = new BoundedMap(REFUSED_BY_URL_MAX);
    this.disk = new DiskGuard({
      dir: this.opts.dataDir, minFreePct: s.limits.diskFreePct, slackPct: s.limits.diskFreeSlackPct,
      ...(this.opts.diskPollMs !== undefined ? { pollMs: this.opts.diskPollMs } : {}),
      onChange: (_state, message) => this.emit({ type: 'disk', message }),
    });
    this.logScreened = s.log.screened === 'text';
    this.logFetch = s.log.fetch === 'text';
    const exempt = compileRules(s.focused.excludeDomains, true);
    this.focusExempt = exempt ? includeExcludeRule('focused.exclude_domains', 'fo', (u) => u.hostname.toLowerCase(), undefined, exempt) : undefined;
    const f = s.linkExtraction;
    this.linkFlags = { a: f.a, action: f.action, area: f.area, card: f.card, comment: f.comment, embed: f.embed, frame: f.frame, go: f.go, img: f.img, layer: f.layer, link: f.link, meta: f.meta, metaRefresh: f.metaRefresh, object: f.object, script: f.script, scriptJava: f.scriptJava, style: f.style };
  }

  /** Resumes the unfinished cycle, or starts the next one. Seeding is idempotent, so it runs in both cases. */
  private async beginCycle(): Promise<boolean> {
    const name = this.rt.name;
    const xml = ['<?xml version="1.0" encoding="utf-8"?>', '<CrawlerConfig>', ...writeCollectionXml(this.config), '</CrawlerConfig>', ''].join('\n');
    await this.store.putCollection(name, xml, this.now());
    const row = (await this.store.getCollection(name))!;
    const unfinished = row.epoch > 0 && (row.cycleEndedMs ?? 0) < (row.cycleStartedMs ?? 0);
    let resumed = false;
    let crashed: LeasedUri[] = [];
    if (unfinished) {
      this.epoch = row.epoch;
      const { recovered, crashedTwice } = await this.store.recoverLeases(name);
      resumed = true;
      this.emit({ type: 'cycle', message: `resuming cycle ${this.epoch} of ${name}; ${recovered} URIs that were in flight go back to the queue` });
      crashed = crashedTwice;
    } else {
      this.epoch = row.epoch + 1;
      await this.store.updateCollection(name, { epoch: this.epoch, cycleStartedMs: this.now() });
      // MS-FSCCFG 2.2.3 refresh_mode: scratch truncates what the last cycle left queued.
      // (URIs sent by another collection for this new cycle stay.)
      if (this.rt.settings.refreshMode === 'scratch' || this.rt.settings.refreshMode === 'adaptive') await this.store.dropQueued(name, undefined, this.epoch);
      this.emit({ type: 'cycle', message: `starting cycle ${this.epoch} of ${name}` });
    }
    // Filled by seed() with the checksums of the records already stored, and by commit() with each one this cycle writes.
    this.storedChecksums = new ChecksumFilter();
    await this.loadSiteStats();
    for (const uri of crashed) await this.setAside(uri);
    await this.seed();
    for (const w of await this.store.sitesWithWork(name)) this.sched.addWork(w.site, w.queued);
    return resumed;
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
    const previous = await this.store.getRecord(this.rt.name, uri.url);
    const record: UriRecord = { ...this.baseRecord(uri, previous), status: 'skipped', skipCode: 'cr' };
    const st = this.statsFor(uri.site);
    bump(this.c.docSkips, 'cr');
    st.count('DocSkip', 'cr');
    await this.store.complete(this.rt.name, this.epoch, { leaseId: uri.id, site: uri.site, record, discovered: [] });
    this.emit({ type: 'error', url: uri.url, code: 'cr', message: `set aside: ${uri.url} was being fetched when the crawler stopped unexpectedly, twice in a row; it is not fetched again in this cycle` });
  }

  private async loadSiteStats(): Promise<void> {
    // A page at a time: a million sites' statistics in one answer was about 700 MB of JSON in flight.
    for (let after: string | undefined; ;) {
      const page = await this.store.listSiteStats(this.rt.name, { ...(after !== undefined ? { after } : {}), limit: SAVE_STATS_BATCH });
      for (const { site, json } of page) this.stats.set(site, SiteStats.parse(json));
      if (page.length < SAVE_STATS_BATCH) break;
      after = page[page.length - 1]!.site;
    }
    this.totals = new SiteStats();
    for (const st of this.stats.values()) {
      this.totals.merge(st.data);
      st.attach(this.totals);
    }
  }

  /** A site's statistics, about to change: saved by the next saveChangedStats. */
  private statsFor(site: string): SiteStats {
    this.statsChanged.add(site);
    let st = this.stats.get(site);
    if (!st) {
      st = new SiteStats(undefined, this.totals);
      this.stats.set(site, st);
    }
    if (st.data.discrete.Epoch !== this.epoch) {
      const t = Math.floor(this.now() / 1000);
      st.data.discrete.Epoch = this.epoch;
      st.data.discrete.CrawlStarted = t;
      st.data.discrete.LastRefresh = t;
    }
    return st;
  }

  /** Start URIs (start_uris, start_uri_files, per sub-collection too), then the URIs the crawl store knows. */
  private async seed(): Promise<void> {
    const seeds: Array<{ url: string; sub: string | undefined; flags: number }> = [];
    const fromFiles = (files: readonly string[] | undefined, sub: string | undefined, flags: number): void => {
      for (const f of files ?? []) {
        const path = resolvePath(this.opts.baseDir ?? '.', f);
        let text: string;
        try {
          text = readFileSync(path, 'utf8');
        } catch (err) {
          this.emit({ type: 'error', message: `cannot read start URI file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` });
          continue;
        }
        for (const line of text.split(/\r?\n/)) {
          const t = line.trim();
          if (t && !t.startsWith('#')) seeds.push({ url: t, sub, flags });
        }
      }
    };
    const fromSettings = (s: CollectionSettings, sub: string | undefined): void => {
      for (const u of s.startUris ?? []) seeds.push({ url: u, sub, flags: 0 });
      fromFiles(s.startUriFiles, sub, 0);
      // MS-FSCCFG 2.2.4.30: RSS channel start URIs.
      for (const u of s.rss.startUris ?? []) seeds.push({ url: u, sub, flags: URI_FLAGS.FEED });
      fromFiles(s.rss.startUriFiles, sub, URI_FLAGS.FEED);
    };
    fromSettings(this.rt.settings, undefined);
    for (const sub of this.rt.subs) if (sub.settings.startUris !== this.rt.settings.startUris) fromSettings(sub.settings, sub.name);
    if (this.rt.settings.useSitemaps) for (const u of this.rt.settings.sitemaps.urls ?? []) seeds.push({ url: u, sub: undefined, flags: URI_FLAGS.SITEMAP });
    const batch: QueuedUri[] = [];
    for (const s of seeds) {
      const url = this.normalize(s.url);
      if (!url) {
        this.emit({ type: 'error', url: s.url, message: `start URI ${JSON.stringify(s.url)} is not a valid absolute URL` });
        continue;
      }
      const u = new URL(url);
      const d = this.rt.scope.decide({ url: u, parent: undefined, hops: 0, viaRedirect: false, seed: true });
      if (!d.allowed) {
        this.skipUri(siteOf(u), d.code!, url, `start URI refused: ${d.reason}`);
        continue;
      }
      batch.push({ url, site: siteOf(u), depth: 0, hops: 0, redirects: 0, parent: undefined, priority: this.rt.priorityOf(u, true), sub: s.sub ?? this.rt.subOf(u), flags: s.flags });
    }
    // A refresh re-queues every URI the crawl store knows, so unchanged
    // pages (304s, which carry no links) are still refetched; a page of
    // records at a time (recordPages). The start URIs go first either way:
    // prepended, they are put in front last.
    const prepend = this.rt.settings.refreshMode === 'prepend';
    if (!prepend) await this.store.enqueue(this.rt.name, this.epoch, batch, false);
    // The same walk fills the checksum filter before any page is fetched (storedChecksums).
    for await (const records of this.recordPages(prepend)) {
      const known: QueuedUri[] = [];
      for (const r of records) {
        if (r.status !== 'deleted') known.push(this.requeueOf(r));
        if (holdsChecksum(r)) this.storedChecksums?.add(r.checksum);
      }
      await this.store.enqueue(this.rt.name, this.epoch, known, prepend);
    }
    if (prepend) await this.store.enqueue(this.rt.name, this.epoch, batch, true);
  }

  /**
   * The crawl store's records a page at a time, so that a refresh of a
   * store of millions holds one page rather than all of them. In the order
   * the records were written; with `backwards`, last page first, for a
   * caller that puts each page in front of the queue: front insertion
   * keeps a batch's own order, and each page goes before the one after it.
   * A crash half-way is safe: seed runs again when the cycle resumes, and
   * enqueue leaves out what this cycle already queued.
   */
  private async *recordPages(backwards: boolean): AsyncGenerator<UriRecord[]> {
    for (let from: number | undefined; ;) {
      const page = await this.store.listRecordPage(this.rt.name, { ...(from !== undefined ? { from } : {}), backwards, limit: RECORD_PAGE });
      if (page.records.length > 0) yield page.records;
      if (page.records.length < RECORD_PAGE) return;
      from = backwards ? page.first : page.last;
    }
  }

  /** What a known URI is queued again as: from its record, a priority and sub-collection as of the configuration now. */
  private requeueOf(r: UriRecord, u = new URL(r.url)): QueuedUri {
    return { url: r.url, site: r.site, depth: r.depth, hops: r.depth, redirects: 0, parent: r.parent, priority: this.rt.priorityOf(u, false), sub: this.rt.subOf(u) };
  }

  /**
   * Makes this object usable outside `runCycle` (an operator's request while
   * the collection is idle): builds the run-time settings and reads the
   * current cycle number. Idempotent.
   */
  async prepare(): Promise<void> {
    if (this.prepared) return;
    this.setup();
    this.epoch = (await this.store.getCollection(this.config.name))?.epoch ?? 0;
    if (this.epoch === 0) this.epoch = 1;
  }

  /** `addUris` on an idle collection. */
  async prepareAndAdd(urls: readonly string[], urgent: boolean): Promise<{ added: number; refused: Array<{ url: string; reason: string }> }> {
    await this.prepare();
    return this.addUris(urls, urgent);
  }

  /** The sub-collection a URL belongs to. */
  subOf(url: URL): string | undefined {
    return this.rt.subOf(url);
  }

  /** Queues again the known URIs (crawl store records) that `pick` selects (CollectionRefetch, CollectionRefetchURI Site). */
  async requeueKnown(pick: (url: URL) => boolean, front = false): Promise<number> {
    await this.prepare();
    let n = 0;
    for await (const records of this.recordPages(front)) {
      const batch: QueuedUri[] = [];
      for (const r of records) {
        if (r.status === 'deleted') continue;
        const u = new URL(r.url);
        if (pick(u)) batch.push(this.requeueOf(r, u));
      }
      if (batch.length > 0) n += await this.requeue(batch, front);
    }
    return n;
  }

  /**
   * Queues these URLs again, even if already fetched in this cycle
   * (CollectionRefetchURI); with `refeed`, the document is fed again after
   * the fetch even when it did not change (its Refeed parameter).
   */
  async requeueUrls(urls: readonly string[], front: boolean, refeed = false): Promise<number> {
    await this.prepare();
    const batch: QueuedUri[] = [];
    for (const raw of urls) {
      const url = this.normalize(raw);
      if (!url) continue;
      const u = new URL(url);
      batch.push({ url, site: siteOf(u), depth: 0, hops: 0, redirects: 0, parent: undefined, priority: this.rt.priorityOf(u, true), sub: this.rt.subOf(u), flags: refeed ? URI_FLAGS.REFEED : 0 });
    }
    return this.requeue(batch, front);
  }

  private async requeue(batch: QueuedUri[], front: boolean): Promise<number> {
    const n = await this.store.requeue(this.rt.name, this.epoch, batch, front);
    for (const q of batch) this.sched.addWork(q.site, 1);
    this.notify();
    return n;
  }

  /**
   * Adds URIs while the cycle runs (MS-FSCADM AddURIs): they are checked
   * like start URIs and queued, `urgent` ones before everything else.
   * Returns how many were queued (the others were out of scope or seen).
   */
  async addUris(urls: readonly string[], urgent: boolean): Promise<{ added: number; refused: Array<{ url: string; reason: string }> }> {
    const refused: Array<{ url: string; reason: string }> = [];
    const batch: QueuedUri[] = [];
    for (const raw of urls) {
      const url = this.normalize(raw);
      if (!url) {
        refused.push({ url: raw, reason: 'not a valid absolute URL' });
        continue;
      }
      const u = new URL(url);
      const d = this.rt.scope.decide({ url: u, parent: undefined, hops: 0, viaRedirect: false, seed: true });
      if (!d.allowed) {
        refused.push({ url, reason: `${d.code}: ${d.reason}` });
        continue;
      }
      batch.push({ url, site: siteOf(u), depth: 0, hops: 0, redirects: 0, parent: undefined, priority: this.rt.priorityOf(u, true), sub: this.rt.subOf(u) });
    }
    const added = await this.store.enqueue(this.rt.name, this.epoch, batch, urgent);
    for (const a of added) {
      this.bloom?.add(a.url);
      this.sched.addWork(a.site, 1);
    }
    this.notify();
    return { added: added.length, refused };
  }

  // ------------------------------------------------------------ the loop

  private async loop(): Promise<CycleSummary['stoppedBy']> {
    const maxConcurrency = this.opts.maxConcurrency ?? 64;
    // A task holds one of the maxConcurrency request slots until its
    // response is in (releaseSlot), then extracts, stores and commits the
    // page without it: the content store's and the crawl store's group
    // commits make that take tens of ms, and holding the slot meanwhile kept
    // the crawl below its concurrency (bench/README.md). At most seven times
    // as many pages may be in that second half, so that the documents held
    // in memory stay bounded. Three times (4 × in all) left the bench crawl
    // 5% slower: 30.7 / 31.2 / 28.7 s against 29.3 / 29.5 / 27.5 at 8 ×,
    // for 4% more CPU and 20 MiB more at the peak (bench/README.md).
    const maxTasks = 8 * maxConcurrency;
    const tasks = new Set<Promise<void>>();
    let requesting = 0;
    for (;;) {
      if (this.abort.signal.aborted) {
        // In-flight fetches are aborted; wait for them to put their URIs back.
        await Promise.allSettled(tasks);
        return 'signal';
      }
      if (this.opts.maxPages !== undefined && this.c.requests >= this.opts.maxPages) {
        await Promise.allSettled(tasks);
        return 'max-pages';
      }
      if (this.disk.paused) {
        // A write failed for lack of space: no fetch starts until there is some again.
        await this.disk.waitForSpace(this.abort.signal);
        continue;
      }
      const now = this.now();
      let nextMs: number | undefined;
      const slot = this.rt.delayNow(undefined, now);
      if (slot === 'suspend') {
        // MS-FSCCFG 2.2.4.23: crawling is suspended during this slot.
        nextMs = now + 30_000;
      } else {
        const held = this.opts.heldSites?.();
        if (held) for (const [siteKey, until] of held) if (until > now) this.sched.hold(this.sched.get(siteKey), until);
        // At most the free slots' worth of sites: tasks only grow within this turn.
        const ready = this.sched.ready(now, Math.min(maxConcurrency - requesting, maxTasks - tasks.size));
        nextMs = ready.nextMs;
        for (const site of ready.sites) {
          if (this.opts.maxPages !== undefined && this.c.requests + this.inFlight >= this.opts.maxPages) break;
          requesting++;
          let holding = true;
          const releaseSlot = (): void => {
            if (!holding) return;
            holding = false;
            requesting--;
            this.notify();
          };
          const t = this.task(site, releaseSlot).catch((err: unknown) => {
            if (!this.disk.noteFailure(err, `while crawling ${site.site}`)) this.emit({ type: 'error', message: `internal error on ${site.site}: ${(err as Error).stack ?? String(err)}` });
          });
          tasks.add(t);
          void t.finally(() => {
            releaseSlot();
            tasks.delete(t);
            this.notify();
          });
        }
      }
      if (tasks.size === 0 && this.sched.idle()) return 'done';
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        // Not unref'd: this timer is what keeps the process alive while every site waits for its delay.
        if (nextMs !== undefined) timer = setTimeout(resolve, Math.max(1, nextMs - this.now()));
      });
      // Cleared when woken early (a stop above all): left running, a site's
      // delay (60 s by default) kept a stopped daemon alive that long.
      clearTimeout(timer);
      this.wakeUp = undefined;
    }
  }

  /** One unit of work on a site: its robots.txt, or its next URI. `releaseSlot` gives up its request slot. */
  private async task(site: SiteState, releaseSlot: () => void): Promise<void> {
    site.busy = true;
    try {
      const resolved = await this.resolver.resolve(site.host);
      if (resolved.ok && this.rt.settings.enforceDelayPerIp) this.sched.bindGate(site, resolved.address);
      // ipmask / ip6mask domain rules depend on host and address only: judged once per site, before any request.
      const refusedByAddress = resolved.ok && this.rt.addressScope ? this.rt.addressScope(new URL(site.site), resolved.address) : undefined;
      if (refusedByAddress && !refusedByAddress.allowed) this.addressRefused.set(site.site, refusedByAddress.reason);
      // The rules this task judges its URI by: held here, because the robots memory cache
      // may forget the site while the task awaits (it keeps the sites seen last).
      let robots = this.robots.known(site.site);
      let needRobots = this.rt.settings.robots && !this.addressRefused.has(site.site) && !robots;
      if (needRobots) {
        const cached = await this.robots.cached(site.site);
        if (cached) {
          needRobots = false;
          robots = cached;
          // Queued once per cycle: the store ignores sitemaps already seen when the site is read back.
          await this.queueRobotsSitemaps(site, cached.parsed.sitemaps);
        }
      }
      if (robots) site.crawlDelayMs = (robots.rules.crawlDelayS ?? 0) * 1000;
      if (needRobots) {
        if (!resolved.ok) {
          // Nothing can be fetched from this site; its URIs fail one by one below without a request.
        } else {
          if (this.sched.readyAt(site) > this.now()) return; // the gate moved (shared IP): try again when ready
          site.sub = undefined;
          this.sched.started(site, this.now());
          this.inFlight++;
          const stats = { bytesIn: 0, bytesOut: 0, requests: 0 };
          try {
            const r = await this.robots.fetch(site.site, stats, this.abort.signal, () => this.sched.sent(site, this.now()));
            site.crawlDelayMs = (r.rules.crawlDelayS ?? 0) * 1000;
            this.c.robotsRequests += stats.requests;
            this.c.bytesIn += stats.bytesIn;
            const st = this.statsFor(site.site);
            st.add('ReadNet', stats.bytesIn);
            st.add('WriteNet', stats.bytesOut);
            if (r.parsed.sitemaps.length > 0) st.add('HasSitemap');
            this.emit({ type: 'robots', url: `${site.site}/robots.txt`, message: r.reason });
            await this.queueRobotsSitemaps(site, r.parsed.sitemaps);
          } finally {
            this.inFlight--;
            this.sched.finished(site, false);
          }
          return;
        }
      }
      if (site.buffer.length === 0) {
        const leased = await this.store.lease(this.rt.name, site.site, Math.max(1, this.rt.settings.maxPending));
        site.queued = Math.max(0, site.queued - leased.length);
        if (leased.length === 0) site.queued = 0;
        site.hold(leased);
      }
      const uri = site.next() as LeasedUri | undefined;
      if (!uri) return;
      try {
        await this.fetchOne(site, uri, robots, releaseSlot);
      } catch (err) {
        // A full disk: nothing of this page was committed and it is still
        // leased; it goes back in front of its site, to be fetched again
        // once there is space (the loop's catch pauses the crawl).
        if (isDiskFull(err)) {
          site.putBack(uri);
          this.sched.addWork(site.site, 0);
        }
        throw err;
      }
    } finally {
      site.busy = false;
    }
  }

  /** use_sitemaps: the Sitemap: lines of a site's robots.txt (trawl_sitemaps robots_discovery). */
  private async queueRobotsSitemaps(site: SiteState, sitemaps: readonly string[]): Promise<void> {
    const sm = this.rt.settings.sitemaps;
    if (!this.rt.settings.useSitemaps || !sm.robotsDiscovery || sitemaps.length === 0) return;
    const batch: QueuedUri[] = [];
    for (const raw of sitemaps) {
      const url = this.normalize(raw, site.site);
      if (!url) continue;
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
      batch.push({ url, site: siteOf(u), depth: 0, hops: 0, redirects: 0, parent: `${site.site}/robots.txt`, priority: this.rt.priorityOf(u, true), sub: undefined, flags: URI_FLAGS.SITEMAP });
    }
    const added = await this.store.enqueue(this.rt.name, this.epoch, batch, true);
    for (const a of added) this.sched.addWork(a.site, 1);
  }

  private skipUri(site: string, code: UriSkipCode, url: string, reason: string): void {
    this.skipUris(this.statsFor(site), code, 1);
    if (this.logScreened) this.emit({ type: 'skip', url, code, message: reason });
  }

  /**
   * Marks a URL the scope refused by its URL alone in the screened cache,
   * where the extract worker finds it and counts it under its code without
   * sending it back (extract-wire.ts): the bench site's pages each link two
   * such assets. Not while each refusal is to be logged with its reason
   * (log.screened).
   */
  private markRefused(url: string, code: UriSkipCode): void {
    if (this.logScreened || this.screenedMax <= 0) return;
    this.growScreened();
    this.screened.refresh(url, reservedTag(URI_SKIP_CODE_LIST.indexOf(code)));
  }

  /** Counts `n` URIs found on a page of the site whose statistics are `st` and not queued, for `code`. */
  private skipUris(st: SiteStats, code: UriSkipCode, n: number): void {
    bump(this.c.uriSkips, code, n);
    st.count('URISkip', code, n);
  }

  /**
   * A suspect (a URI in flight when the process last died: isSuspect) is
   * fetched one at a time: while one is under way, another waits with its site. It
   * is armed in the store before its request, and disarmed by its
   * completion, so that if the process dies again the store names this URI
   * and no other (CRASH_STRIKE in crawl-store.ts).
   */
  private async fetchOne(site: SiteState, uri: LeasedUri, robots: KnownRobots | undefined, releaseSlot: () => void): Promise<void> {
    if (!isSuspect(uri.flags)) return this.fetchLeased(site, uri, robots, releaseSlot);
    if (this.suspectUnderWay) {
      site.notBeforeMs = this.now() + SUSPECT_WAIT_MS;
      site.putBack(uri);
      return;
    }
    this.suspectUnderWay = true;
    try {
      await this.store.armSuspect(this.rt.name, uri.id);
      this.emit({ type: 'fetch', url: uri.url, message: 'fetched as the one suspect under way: it was in flight when the crawler stopped unexpectedly' });
      await this.fetchLeased(site, uri, robots, releaseSlot);
    } finally {
      this.suspectUnderWay = false;
      this.notify();
    }
  }

  private async fetchLeased(site: SiteState, uri: LeasedUri, robots: KnownRobots | undefined, releaseSlot: () => void): Promise<void> {
    const url = new URL(uri.url);
    const settings = this.rt.settingsFor(uri.sub);
    const st = this.statsFor(site.site);
    // robots.txt is consulted when the URI is about to be fetched (its rules may be newer than the link).
    if (robots?.unreachable) {
      // robots.txt could not even be requested: every URI of the site fails the same way, without a request.
      const st2 = this.statsFor(site.site);
      await this.process(site, uri, await this.store.getRecord(this.rt.name, uri.url), {
        kind: 'failure', code: 'co', errorKey: 'net', reason: `site unreachable (robots.txt: ${robots.unreachable})`, blocked: false, connectFailure: true, bytesIn: 0, bytesOut: 0, durationMs: 0,
      }, settings, st2);
      return;
    }
    if (robots && !robots.rules.isAllowed(pathAndQuery(url))) {
      this.skipUri(site.site, 'ro', uri.url, 'disallowed by robots.txt');
      await this.commit(site, uri, undefined, [], st);
      return;
    }
    if ((uri.flags ?? 0) & URI_FLAGS.SENT) {
      // Sent by another collection (send_links_to): this collection's scope decides.
      const d = this.rt.scope.decide({ url, parent: undefined, hops: uri.hops, viaRedirect: false, seed: false });
      if (!d.allowed) {
        this.skipUri(site.site, d.code!, uri.url, `sent by another collection: ${d.reason}`);
        await this.commit(site, uri, undefined, [], this.statsFor(site.site));
        return;
      }
    }
    const refused = this.addressRefused.get(site.site);
    if (refused !== undefined) {
      this.skipUri(site.site, 'do', uri.url, refused);
      await this.commit(site, uri, undefined, [], this.statsFor(site.site));
      return;
    }
    // max_doc: documents downloaded from one site at most.
    if (site.fetched >= settings.maxDoc) {
      site.closed = true;
      await this.store.release(this.rt.name, [uri.id, ...(site.drain() as LeasedUri[]).map((b) => b.id)]);
      const dropped = await this.store.dropQueued(this.rt.name, site.site);
      this.emit({ type: 'skip', url: uri.url, message: `max_doc ${settings.maxDoc} reached for ${site.site}; ${dropped + 1} queued URIs are not fetched in this cycle` });
      return;
    }
    // A URI the store has no record of (told with its lease) needs no round trip to the storage thread to learn it.
    const previous = uri.crawled === false ? undefined : await this.store.getRecord(this.rt.name, uri.url);
    const postBody = this.postPayloadFor(uri.url);
    site.sub = uri.sub;
    const earliest = this.sched.earliestStart(site, this.sched.policy.delayMs(site));
    if (earliest > this.now()) {
      // The gate moved while this task was preparing (a shared IP), or this
      // URI's sub-collection asks for a longer delay: put it back in front.
      site.notBeforeMs = earliest;
      site.putBack(uri);
      return;
    }
    this.sched.started(site, this.now());
    this.inFlight++;
    site.busy = false;
    // The loop may start another request to this site now (max_pending).
    this.notify();
    let outcome: FetchOutcome;
    try {
      outcome = await this.fetcher.fetch({
        url,
        headers: this.rt.headers,
        acceptCompression: settings.acceptCompression && settings.useHttp11,
        http10: !settings.useHttp11,
        ...(settings.ifModifiedSince && previous?.etag ? { ifNoneMatch: previous.etag } : {}),
        ...(settings.ifModifiedSince && previous?.lastModified ? { ifModifiedSince: previous.lastModified } : {}),
        ...(postBody !== undefined ? { postBody } : {}),
        limits: this.limitsFor(uri, settings),
        signal: this.abort.signal,
        onSent: () => this.sched.sent(site, this.now()),
      });
    } finally {
      this.inFlight--;
      // The response is in: extracting, storing and committing it need no request slot.
      releaseSlot();
    }
    if (this.abort.signal.aborted) {
      // Stopping: the URI stays leased and goes back to the queue.
      this.sched.finished(site, false);
      site.putBack(uri);
      return;
    }
    this.c.requests++;
    st.add('Processed');
    st.data.discrete.LastUri = uri.url;
    // The site is free for its next request once process() has made its
    // decisions about it (failures, a Retry-After pause, closing it), which
    // it does before its first await: storing and committing the page take
    // tens of ms (the group commits) and need not hold max_pending back;
    // COMMIT_BACKLOG bounds how many of the site's pages may wait for that.
    site.committing++;
    try {
      const processing = this.process(site, uri, previous, outcome, settings, st);
      this.sched.finished(site, true);
      await processing;
    } finally {
      site.committing--;
    }
  }

  /**
   * The bounds of one fetch. Every body is bounded by max_document_bytes.
   * A sitemap stops at trawl_sitemaps max_bytes as it streams in, and its
   * entries within those bytes are read (as parseSitemap reads a larger
   * body): a 1 GB sitemap costs max_bytes, not a gigabyte. A channel queued
   * as one (rss.start_uris) past the feed reader's limit is refused there.
   */
  private limitsFor(uri: LeasedUri, settings: CollectionSettings): FetchLimits {
    const maxDocumentBytes = settings.trawlLimits.maxDocumentBytes;
    const flags = uri.flags ?? 0;
    const own = flags & URI_FLAGS.SITEMAP ? this.rt.settings.sitemaps.maxBytes : flags & URI_FLAGS.FEED ? FEED_MAX_BYTES : undefined;
    return {
      fetchTimeoutMs: settings.fetchTimeoutS * 1000,
      connectTimeoutMs: settings.trawlLimits.connectTimeoutS * 1000,
      cutOffBytes: own !== undefined ? Math.min(own, maxDocumentBytes) : settings.cutOffBytes,
      truncate: own !== undefined ? (flags & URI_FLAGS.SITEMAP) !== 0 : settings.truncate,
      ...(own !== undefined && !(flags & URI_FLAGS.SITEMAP) ? { cutOffName: 'the channel size limit' } : {}),
      maxDecompressedBytes: settings.trawlLimits.maxDecompressedBytes,
      maxDocumentBytes,
    };
  }

  private postPayloadFor(url: string): string | undefined {
    for (const [k, v] of Object.entries(this.rt.settings.postPayload)) {
      if (k.startsWith('prefix:') ? url.startsWith(k.slice(7)) : url === k) return v;
    }
    return undefined;
  }

  // ------------------------------------------------------------ processing

  private baseRecord(uri: LeasedUri, previous: UriRecord | undefined): UriRecord {
    return {
      url: uri.url, site: uri.site, status: 'error', httpStatus: undefined, checksum: previous?.checksum, lastCrawledMs: this.now(),
      etag: previous?.etag, lastModified: previous?.lastModified, errorCount: 0, skipCode: undefined, mime: previous?.mime, size: previous?.size,
      contentRef: previous?.contentRef, duplicateOf: undefined, redirectTo: undefined, depth: uri.depth, parent: uri.parent, epoch: this.epoch,
    };
  }

  private docSkip(st: SiteStats, code: DocSkipCode, url: string, reason: string): void {
    bump(this.c.docSkips, code);
    st.count('DocSkip', code);
    if (this.logFetch) this.emit({ type: 'skip', url, code, message: reason });
  }

  private async process(site: SiteState, uri: LeasedUri, previous: UriRecord | undefined, o: FetchOutcome, settings: CollectionSettings, st: SiteStats): Promise<void> {
    st.add('ReadNet', o.bytesIn);
    st.add('WriteNet', o.bytesOut);
    this.c.bytesIn += o.bytesIn;
    if (o.kind === 'failure') {
      if (o.blocked) {
        this.docSkip(st, o.code, uri.url, `refused by the egress policy: ${o.reason}`);
        await this.commit(site, uri, { ...this.baseRecord(uri, previous), status: 'skipped', skipCode: o.code }, [], st);
        return;
      }
      if (o.connectFailure) {
        site.failures++;
        if (site.failures > settings.maxBackoffCounter) {
          site.closed = true;
          this.emit({ type: 'error', url: uri.url, message: `${site.site}: ${site.failures} connection failures in a row (max_backoff_counter ${settings.maxBackoffCounter}); the site is left for this cycle` });
        }
      }
      this.docSkip(st, o.code, uri.url, o.reason);
      await this.applyErrorPolicy(site, uri, previous, o.errorKey, undefined, o.code, st);
      if (site.closed) await this.store.dropQueued(this.rt.name, site.site);
      return;
    }
    site.failures = 0;
    st.add('Downloaded');
    st.count('HTTPResponse', String(o.status));
    bump(this.c.httpStatus, String(o.status));
    st.download(o.durationMs / 1000, o.body.length);
    if (o.headers['last-modified']) st.add('HasLastMod');
    if (o.headers.etag) st.add('HasETag');
    this.emit({ type: 'fetch', url: uri.url, status: o.status, message: `${o.status} ${o.body.length} bytes in ${Math.round(o.durationMs)} ms` });

    if (REDIRECT_STATUSES.has(o.status)) return this.redirect(site, uri, previous, o, st, o.headers.location);
    if (o.status === 304) {
      this.c.unchanged++;
      st.add('Unchanged');
      await this.commit(site, uri, { ...this.baseRecord(uri, previous), status: 'unchanged', httpStatus: 304 }, [], st, this.refeedOps(uri, previous));
      return;
    }
    if (o.status >= 200 && o.status < 300) return this.success(site, uri, previous, o, settings, st);
    // 4xx / 5xx: Retry-After pauses the site (429, 503).
    if (o.status === 429 || o.status === 503) {
      const wait = retryAfterMs(o.headers['retry-after'], this.now());
      if (wait !== undefined) this.sched.pause(site, this.now() + wait, this.now());
    }
    await this.applyErrorPolicy(site, uri, previous, o.status, o.status, undefined, st);
  }

  /** MS-FSCCFG 2.2.4.11: KEEP, DELETE[:X] after X consecutive failures, RETRY[:X] within the cycle. */
  private async applyErrorPolicy(site: SiteState, uri: LeasedUri, previous: UriRecord | undefined, key: number | 'net' | 'ttl' | 'int', httpStatus: number | undefined, skip: DocSkipCode | undefined, st: SiteStats): Promise<void> {
    const policy = this.rt.httpPolicy(key);
    if (uri.retries < policy.retries) {
      this.c.retries++;
      st.add('Retries');
      await this.store.retry(this.rt.name, uri.id);
      // Through addWork: the site may have left the active set while the retry was written.
      this.sched.addWork(site.site, 1);
      return;
    }
    this.c.errors++;
    const errorCount = (previous?.errorCount ?? 0) + 1;
    const base = { ...this.baseRecord(uri, previous), httpStatus, errorCount, skipCode: skip };
    const deleteNow = policy.action === 'delete' && errorCount >= Math.max(1, policy.afterFailures);
    if (deleteNow && previous?.contentRef) {
      this.c.deleted++;
      st.add('Deleted');
      await this.commit(site, uri, { ...base, status: 'deleted', contentRef: undefined, checksum: undefined }, [], st, this.feedOps(uri.url, 'delete'));
      await this.opts.content.delete(previous.contentRef);
      return;
    }
    await this.commit(site, uri, { ...base, status: deleteNow ? 'deleted' : 'error', ...(deleteNow ? { contentRef: undefined, checksum: undefined } : {}) }, [], st);
  }

  private async redirect(site: SiteState, uri: LeasedUri, previous: UriRecord | undefined, o: ResponseOutcome, st: SiteStats, location: string | undefined): Promise<void> {
    const target = location ? this.normalize(location, uri.url) : undefined;
    const record: UriRecord = { ...this.baseRecord(uri, previous), status: 'redirect', httpStatus: o.status, redirectTo: target, errorCount: 0 };
    if (!target) {
      this.docSkip(st, 'nr', uri.url, `redirect ${o.status} without a usable Location`);
      await this.commit(site, uri, { ...record, skipCode: 'nr' }, [], st);
      return;
    }
    if (uri.redirects + 1 > this.rt.settings.maxRedirects) {
      this.docSkip(st, 'nr', uri.url, `more than max_redirects (${this.rt.settings.maxRedirects}) redirects`);
      await this.commit(site, uri, { ...record, skipCode: 'nr' }, [], st);
      return;
    }
    const next = this.admit(uri, target, true, site.site);
    await this.commit(site, uri, record, next ? [next] : [], st);
  }

  /** The last parent URL parsed by admit(): a page's links share it (a hot path). */
  private parentCache: { href: string; url: URL; domain: string } | undefined;

  /** Scope check of a discovered URL; the QueuedUri when it may be queued. */
  private admit(from: LeasedUri, target: string, viaRedirect: boolean, fromSite: string): QueuedUri | undefined {
    const refused = this.refusedByUrl.get(target);
    if (refused) {
      // Marked again: the screened cache forgets its oldest entries sooner than refusedByUrl does.
      this.markRefused(target, refused.code);
      this.skipUri(fromSite, refused.code, target, refused.reason);
      return undefined;
    }
    const url = new URL(target);
    if (this.parentCache?.href !== from.url) {
      const p = new URL(from.url);
      this.parentCache = { href: from.url, url: p, domain: domainOf(p) };
    }
    const parent = this.parentCache.url;
    const otherDomain = domainOf(url) !== this.parentCache.domain;
    const hops = viaRedirect ? from.hops : otherDomain && this.rt.settings.crawlmode.resetLevel ? 0 : from.hops + 1;
    const d = this.rt.scope.decide({ url, parent, hops, viaRedirect, seed: false });
    if (!d.allowed) {
      if (d.byUrlAlone && this.screenedMax > 0) {
        this.refusedByUrl.set(target, { code: d.code!, reason: d.reason });
        this.markRefused(target, d.code!);
      }
      this.skipUri(fromSite, d.code!, target, d.reason);
      return undefined;
    }
    return {
      url: target, site: siteOf(url), depth: viaRedirect ? from.depth : from.depth + 1, hops, redirects: viaRedirect ? from.redirects + 1 : 0,
      parent: from.url, priority: this.rt.priorityOf(url, false), sub: this.rt.subOf(url),
    };
  }

  private async success(site: SiteState, uri: LeasedUri, previous: UriRecord | undefined, o: ResponseOutcome, settings: CollectionSettings, st: SiteStats): Promise<void> {
    const mime = detectMime(o.headers['content-type'], o.body, settings.forceMimetypeDetection);
    st.count('MimeType', mime);
    const base: UriRecord = { ...this.baseRecord(uri, previous), httpStatus: o.status, mime, size: o.body.length, etag: o.headers.etag, lastModified: o.headers['last-modified'], errorCount: 0 };
    const skip = async (code: DocSkipCode, reason: string, links: QueuedUri[] = []): Promise<void> => {
      this.docSkip(st, code, uri.url, reason);
      await this.commit(site, uri, { ...base, status: 'skipped', skipCode: code, contentRef: previous?.contentRef, checksum: previous?.checksum }, links, st);
    };
    const flags = uri.flags ?? 0;
    if (flags & URI_FLAGS.SITEMAP) return this.sitemap(site, uri, o, st);
    const rss = settings.rss;
    const rssOn = (rss.startUris?.length ?? 0) > 0 || (rss.startUriFiles?.length ?? 0) > 0 || rss.autoDiscover;
    if (flags & URI_FLAGS.FEED || (rssOn && looksLikeFeed(mime, o.body))) return this.feed(site, uri, previous, o, settings, st, base);
    // exclude_headers (MS-FSCCFG 2.2.4.22)
    for (const [name, patterns] of this.rt.excludeHeaders) {
      const v = o.headers[name];
      if (v !== undefined && patterns.some((p) => p.test(v))) return skip('hx', `header ${name}: ${v} is excluded`);
    }
    if (!mimeMatches(mime, settings.allowedTypes)) return skip('mi', `MIME type ${mime} is not in allowed_types`);
    if (o.body.length === 0) return skip('em', 'empty document');

    // Links, meta robots, meta refresh (HTML only, uri_search_mime).
    let links: QueuedUri[] = [];
    let noindex = false;
    const xRobots = o.headers['x-robots-tag'] ? parseRobotsDirectives(o.headers['x-robots-tag'], this.rt.productToken) : {};
    let nofollow = settings.checkMetaRobots && xRobots.nofollow === true;
    noindex = settings.checkMetaRobots && xRobots.noindex === true;
    let refreshTarget: string | undefined;
    let canonical: string | undefined;
    let declaredLang: string | undefined;
    const isHtml = mimeMatches(mime, settings.uriSearchMime);
    if (isHtml) {
      // A link queued earlier in this cycle (the screened URI cache) is not judged again: commit would drop it.
      const screenFirst = this.screenedMax > 0 && settings.sendLinksTo === undefined && !this.opts.refreshOnly?.();
      // Every URL in the screened cache is a normal form, and with no
      // rewrite_rules normalizing is idempotent, so a link found there as
      // it is needs no normalizing: one lookup instead of a normalization
      // and a lookup for the nine in ten links that were seen before.
      // Those were a tenth of the main thread's CPU on the bench crawl
      // (perf record -e task-clock; bench/README.md). The extract worker
      // makes that lookup itself when it has the cache, and those links do
      // not come back (extract-wire.ts).
      const rawFirst = screenFirst && this.rt.canon.idempotent;
      const ownTag = stringTag(site.site);
      const screen = rawFirst && this.screenShare !== undefined ? { id: this.screenShare, ownTag } : undefined;
      const x = await this.extractPool().extract(o.body, uri.url, { flags: this.linkFlags, maxLinks: settings.trawlLimits.maxLinksPerPage, productToken: this.rt.productToken, allowedSchemes: settings.allowedSchemes }, screen);
      if (settings.checkMetaRobots) {
        noindex ||= x.robots.noindex;
        nofollow ||= x.robots.nofollow;
      }
      if (x.metaRefresh && settings.htmlRedirIsRedir && x.metaRefresh.delayS <= settings.htmlRedirThreshS) {
        // Canonicalized like every other URL the crawl queues (the extractor only resolves it).
        const target = this.normalize(x.metaRefresh.url);
        if (target !== undefined && target !== uri.url) refreshTarget = target;
      }
      // rss.follow_links: a document found in a channel has its links followed only when it is on.
      if ((uri.flags ?? 0) & URI_FLAGS.FROM_FEED && !settings.rss.followLinks) nofollow = true;
      if (settings.rss.autoDiscover) {
        for (const f of x.feeds) {
          const target = this.normalize(f);
          const q = target ? this.admit(uri, target, false, site.site) : undefined;
          if (q) links.push({ ...q, flags: URI_FLAGS.FEED });
        }
      }
      canonical = x.canonical ? this.normalize(x.canonical) : undefined;
      declaredLang = x.lang;
      // The links the worker left out, already known: counted as the loop below would count them.
      const known = x.screened;
      if (!nofollow) {
        if (known && known.links > 0) {
          const n = known.local + known.fwd;
          st.add('Local', known.local);
          st.add('LocalFwd', known.fwd);
          this.skipUris(st, 'ic', n);
          known.refused?.forEach((count, i) => {
            const code = URI_SKIP_CODE_LIST[i];
            if (count > 0 && code !== undefined) this.skipUris(st, code, count);
          });
        }
        const seen = new Set<string>();
        for (const l of x.links) {
          if (l.kind === 'redirect' || l.kind === 'canonical' || l.kind === 'feed') continue;
          if (l.nofollow && settings.checkMetaRobots) {
            this.skipUri(site.site, 'nf', l.url, 'rel=nofollow');
            continue;
          }
          let knownSite = rawFirst ? this.screened.get(l.url) : undefined;
          // Normalized each time: a map from links as extracted to their normal form cost more than it
          // saved once the extract worker kept the links already known (those reaching this thread are
          // mostly new), and held 22–24 MiB of the bench crawl's peak (bench/README.md, *What changed*).
          const target = knownSite !== undefined ? l.url : this.normalize(l.url);
          if (!target || seen.has(target) || target === uri.url) continue;
          seen.add(target);
          // Another spelling of a link the worker left out (and counted), as if that one had been seen first.
          if (known && known.fingerprints.length > 0 && this.screened.listed(target, known.fingerprints)) continue;
          if (knownSite === undefined && screenFirst && (!rawFirst || target !== l.url)) knownSite = this.screened.get(target);
          if (knownSite !== undefined) {
            const refused = URI_SKIP_CODE_LIST[reservedNumber(knownSite)];
            if (refused !== undefined) {
              // Refused by its URL alone earlier in this cycle (admit; marked only while log.screened is off).
              this.skipUris(st, refused, 1);
              continue;
            }
            st.add(knownSite === ownTag ? 'Local' : 'LocalFwd');
            this.skipUris(st, 'ic', 1);
            continue;
          }
          const q = this.admit(uri, target, false, site.site);
          if (q) {
            links.push(q);
            st.add(q.site === site.site ? 'Local' : 'LocalFwd');
          }
        }
      } else {
        const all = x.links.length + (known?.links ?? 0);
        if (all > 0) this.skipUri(site.site, 'nf', uri.url, `nofollow: ${all} links not followed`);
      }
    }
    const sendTo = settings.sendLinksTo;
    if (sendTo !== undefined && links.length > 0) {
      // MS-FSCCFG send_links_to: every extracted link goes to that collection instead.
      const sent = this.opts.sendLinks ? (await this.opts.sendLinks(sendTo, links), true) : await queueSentLinks(this.store, sendTo, links);
      if (!sent) this.emit({ type: 'error', url: uri.url, message: `send_links_to names collection ${JSON.stringify(sendTo)}, which this crawler does not know; ${links.length} links dropped` });
      links = [];
    }
    if (refreshTarget) {
      // MS-FSCCFG html_redir_is_redir: a quick meta refresh is a redirect.
      const next = this.admit(uri, refreshTarget, true, site.site);
      if (next) links = [next, ...links];
      if (noindex || settings.htmlRedirIsRedir) {
        await this.commit(site, uri, { ...base, status: 'redirect', redirectTo: refreshTarget, contentRef: previous?.contentRef }, links, st);
        return;
      }
    }
    if (noindex) return skip('ni', 'noindex (robots META tag or X-Robots-Tag)', links);
    // rel=canonical: a page that names another URL as canonical is collapsed
    // onto it (recorded as its duplicate, not stored) when that URL may be crawled.
    if (canonical && canonical !== uri.url) {
      const target = this.admit(uri, canonical, true, site.site);
      if (target) {
        this.c.duplicates++;
        this.docSkip(st, 'cs', uri.url, `rel=canonical names ${canonical}`);
        await this.commit(site, uri, { ...base, status: 'duplicate', duplicateOf: canonical, skipCode: 'cs', contentRef: undefined, checksum: undefined }, [{ ...target, redirects: 0 }, ...links], st, this.unfeedOps(uri.url, previous));
        if (previous?.contentRef) await this.opts.content.delete(previous.contentRef);
        return;
      }
    }

    // MS-FSCCFG 2.2.4.19 focused: a document in another language is not
    // stored, and only `depth` such documents are passed through.
    const languages = settings.focused.languages ?? [];
    if (languages.length > 0 && mime.startsWith('text/')) {
      const exempt = this.focusExempt?.decide({ url: new URL(uri.url), parent: undefined, hops: 0, viaRedirect: false, seed: true });
      if (!exempt || exempt.allowed) {
        const text = new TextDecoder().decode(o.body.subarray(0, 80_000));
        // Loaded on first use: franc's trigram profiles and the ISO 639-3 table are 0.9 MB of source.
        const { detectLanguage, htmlText } = await import('../extract/language.ts');
        const lang = detectLanguage({ lang: declaredLang, contentLanguage: o.headers['content-language'], text: isHtml ? htmlText(text) : text });
        if (lang !== undefined && !languages.includes(lang)) {
          const hops = focusHopsOf(uri.flags) + 1;
          const kept: QueuedUri[] = [];
          for (const l of links) {
            if (hops > (settings.focused.depth ?? 0)) this.skipUri(site.site, 'fo', l.url, `reached through ${hops} documents outside the focus languages (focused depth ${settings.focused.depth ?? 0})`);
            else kept.push({ ...l, flags: withFocusHops(l.flags ?? 0, hops) });
          }
          return skip('fs', `language ${lang} is not in focused.languages (${languages.join(', ')})`, kept);
        }
      }
    }

    const csumBytes = settings.csumCutOffBytes > 0 ? o.body.subarray(0, settings.csumCutOffBytes) : o.body;
    const checksum = hash('sha1', csumBytes, 'hex');
    if (previous?.checksum === checksum && previous.contentRef && previous.status !== 'deleted') {
      this.c.unchanged++;
      st.add('Unchanged');
      await this.commit(site, uri, { ...base, status: 'unchanged', checksum, contentRef: previous.contentRef }, links, st, this.refeedOps(uri, previous));
      return;
    }
    let claim: Claim | undefined;
    if (settings.diffcheck) {
      const other = this.claimed.get(checksum);
      let original: string | undefined;
      if (other !== undefined && other.url !== uri.url) {
        original = await other.original;
      } else if (this.storedChecksums && !this.storedChecksums.mightContain(checksum)) {
        // No record holds this checksum: nothing to ask the store. Claimed
        // all the same, so that an equal document arriving before this one
        // is committed is recorded as its duplicate.
        claim = { url: uri.url, original: Promise.resolve(uri.url) };
        this.claimed.set(checksum, claim);
      } else {
        // Claimed before the store is asked: an equal document that arrives
        // while this one is looked up or stored waits for this answer
        // instead of asking the store too, and both being stored.
        const lookup = this.store.findByChecksum(this.rt.name, checksum, uri.url);
        const mine: Claim = { url: uri.url, original: lookup.then((o) => o ?? uri.url) };
        mine.original.catch(() => undefined); // a failed lookup fails this page, below; those waiting get the same error
        this.claimed.set(checksum, mine);
        try {
          original = await lookup;
        } catch (err) {
          this.claimed.delete(checksum);
          throw err;
        }
        // A duplicate stores nothing: its claim ends here.
        if (original !== undefined) this.claimed.delete(checksum);
        else claim = mine;
      }
      if (original) {
        this.c.duplicates++;
        this.docSkip(st, 'cs', uri.url, `duplicate of ${original}`);
        const keepLinks = settings.extractLinksFromDupes ? links : [];
        let contentRef: string | undefined;
        if (settings.storage.storeDupes) contentRef = await this.opts.content.put(uri.url, { body: o.body, header: settings.storage.storeHttpHeader ? o.headerBlock : undefined, mime });
        await this.commit(site, uri, { ...base, status: 'duplicate', checksum, duplicateOf: original, skipCode: 'cs', contentRef }, keepLinks, st, this.unfeedOps(uri.url, previous));
        return;
      }
    }
    try {
      const contentRef = await this.opts.content.put(uri.url, { body: o.body, header: settings.storage.storeHttpHeader ? o.headerBlock : undefined, mime });
      this.c.stored++;
      st.add('Stored');
      if (previous?.checksum && previous.checksum !== checksum) st.add('Modified');
      await this.commit(site, uri, { ...base, status: 'stored', checksum, contentRef }, links, st, this.feedOps(uri.url, wasFed(previous) ? 'update' : 'add'));
      if (previous?.contentRef && previous.contentRef !== contentRef) await this.opts.content.delete(previous.contentRef);
    } finally {
      // Committed (or failed): from now on the crawl store answers for this checksum.
      if (claim && this.claimed.get(checksum) === claim) this.claimed.delete(checksum);
    }
  }

  /**
   * A sitemap (use_sitemaps): its URLs are queued as entry points, an index's
   * sitemaps as more sitemaps (up to trawl_sitemaps max_index_depth); no
   * document is stored and no record written, so the next cycle finds the
   * sitemaps again through robots.txt and the configuration.
   */
  private async sitemap(site: SiteState, uri: LeasedUri, o: ResponseOutcome, st: SiteStats): Promise<void> {
    const sm = this.rt.settings.sitemaps;
    const parsed = parseSitemap(o.body, { url: uri.url, ...(o.headers['content-type'] ? { contentType: o.headers['content-type'] } : {}), maxUrls: sm.maxUrls, maxBytes: sm.maxBytes });
    const links: QueuedUri[] = [];
    if (parsed.kind === 'invalid') {
      this.emit({ type: 'skip', url: uri.url, message: `not a usable sitemap: ${parsed.reason}` });
    } else if (parsed.kind === 'index') {
      const depth = sitemapDepthOf(uri.flags) + 1;
      if (depth > sm.maxIndexDepth) this.emit({ type: 'skip', url: uri.url, message: `sitemap index nested deeper than max_index_depth ${sm.maxIndexDepth}` });
      else {
        for (const child of parsed.sitemaps) {
          const url = this.normalize(child.loc);
          if (!url || !inSitemapScope(uri.url, url, true)) continue;
          const u = new URL(url);
          links.push({ url, site: siteOf(u), depth: uri.depth, hops: uri.hops, redirects: 0, parent: uri.url, priority: this.rt.priorityOf(u, true), sub: undefined, flags: withSitemapDepth(URI_FLAGS.SITEMAP, depth) });
        }
      }
      this.emit({ type: 'fetch', url: uri.url, message: `sitemap index: ${links.length} sitemaps${parsed.truncated ? ' (truncated)' : ''}` });
    } else {
      const meta = [];
      for (const entry of parsed.urls) {
        const url = this.normalize(entry.loc);
        // The sitemaps protocol's location rule: a sitemap lists URLs of its own host.
        if (!url || !inSitemapScope(uri.url, url, true)) continue;
        const q = this.admit(uri, url, false, site.site);
        if (!q) continue;
        links.push({ ...q, depth: uri.depth, hops: 0, parent: uri.url });
        meta.push({ url, lastmod: entry.lastmod, changefreq: entry.changefreq, priority: entry.priority });
      }
      await this.store.putSitemapMeta(this.rt.name, meta);
      this.emit({ type: 'fetch', url: uri.url, message: `sitemap: ${parsed.urls.length} URLs, ${links.length} in scope${parsed.truncated ? ' (truncated)' : ''}` });
    }
    await this.commit(site, uri, undefined, links, st);
  }

  /**
   * An RSS/Atom/RDF channel (MS-FSCCFG 2.2.4.30): its entries' links are
   * queued (past the include/exclude rules with ignore_rules), the channel's
   * links are kept FIFO (max_link_count) and by age (max_link_age), expired
   * documents are deleted with del_expired_links, and the channel itself is
   * stored only with index_feed (otherwise skip code rs).
   */
  private async feed(site: SiteState, uri: LeasedUri, previous: UriRecord | undefined, o: ResponseOutcome, settings: CollectionSettings, st: SiteStats, base: UriRecord): Promise<void> {
    const rss = settings.rss;
    const parsed = parseFeed(o.body, { url: uri.url, ...(o.headers['content-location'] ? { contentLocation: o.headers['content-location'] } : {}) });
    const links: QueuedUri[] = [];
    const entryUrls: string[] = [];
    if ('invalid' in parsed) {
      this.emit({ type: 'skip', url: uri.url, message: `not a usable channel: ${parsed.invalid}` });
    } else {
      for (const e of parsed.entries) {
        const raw = e.link ?? e.links.find((l) => l.rel === 'alternate')?.href;
        const url = raw ? this.normalize(raw, uri.url) : undefined;
        if (!url) continue;
        entryUrls.push(url);
        const u = new URL(url);
        const hops = domainOf(u) !== domainOf(new URL(uri.url)) && settings.crawlmode.resetLevel ? 0 : uri.hops + 1;
        if (!rss.ignoreRules) {
          const q = this.admit(uri, url, false, site.site);
          if (q) links.push({ ...q, flags: URI_FLAGS.FROM_FEED });
          continue;
        }
        // ignore_rules: every document the channel names, whatever the include/exclude rules (schemes still apply).
        if (!settings.allowedSchemes.includes(u.protocol.slice(0, -1))) continue;
        links.push({ url, site: siteOf(u), depth: uri.depth + 1, hops, redirects: 0, parent: uri.url, priority: this.rt.priorityOf(u, false), sub: this.rt.subOf(u), flags: URI_FLAGS.FROM_FEED });
      }
      const expired = await this.store.noteFeedLinks(this.rt.name, uri.url, entryUrls, this.now(), rss.maxLinkCount, rss.maxLinkAgeMin * 60_000);
      if (expired.length > 0 && rss.delExpiredLinks) await this.deleteDocuments(expired, st, 'expired from its channel');
      this.emit({ type: 'fetch', url: uri.url, message: `channel: ${entryUrls.length} entries, ${links.length} queued, ${expired.length} expired` });
    }
    if (!rss.indexFeed) {
      this.docSkip(st, 'rs', uri.url, 'RSS channel: index_feed is no');
      await this.commit(site, uri, { ...base, status: 'skipped', skipCode: 'rs', contentRef: previous?.contentRef, checksum: previous?.checksum }, links, st);
      return;
    }
    const contentRef = await this.opts.content.put(uri.url, { body: o.body, header: settings.storage.storeHttpHeader ? o.headerBlock : undefined, mime: base.mime ?? 'application/rss+xml' });
    this.c.stored++;
    st.add('Stored');
    await this.commit(site, uri, { ...base, status: 'stored', checksum: hash('sha1', o.body, 'hex'), contentRef }, links, st, this.feedOps(uri.url, wasFed(previous) ? 'update' : 'add'));
    if (previous?.contentRef && previous.contentRef !== contentRef) await this.opts.content.delete(previous.contentRef);
  }

  /** Deletes stored documents (their content and the record's content reference). */
  private async deleteDocuments(urls: readonly string[], st: SiteStats, why: string): Promise<void> {
    for (const url of urls) {
      const rec = await this.store.getRecord(this.rt.name, url);
      if (!rec || rec.status === 'deleted') continue;
      await this.store.putRecord(this.rt.name, { ...rec, status: 'deleted', contentRef: undefined, checksum: undefined, lastCrawledMs: this.now() });
      if (rec.contentRef) await this.opts.content.delete(rec.contentRef);
      await this.store.queueFeed(this.rt.name, this.unfeedOps(url, rec));
      this.c.deleted++;
      st.add('Deleted');
      this.emit({ type: 'skip', url, message: `deleted: ${why}` });
    }
  }

  /** One feed operation per content destination (none when the collection does not feed). */
  private feedOps(url: string, op: FeedOp['op']): FeedOp[] {
    return (this.opts.feedTo ?? []).map((destination) => ({ destination, url, op }));
  }

  /** CollectionRefetchURI Refeed: an unchanged document is fed again all the same. */
  private refeedOps(uri: LeasedUri, previous: UriRecord | undefined): FeedOp[] {
    return (uri.flags ?? 0) & URI_FLAGS.REFEED && previous?.contentRef ? this.feedOps(uri.url, 'update') : [];
  }

  /** A document that was fed and is no longer (now a duplicate, deleted): the destinations drop it. */
  private unfeedOps(url: string, previous: UriRecord | undefined): FeedOp[] {
    return wasFed(previous) ? this.feedOps(url, 'delete') : [];
  }

  /** Writes the fetch's outcome in one transaction and tells the scheduler about the new work. */
  private async commit(site: SiteState, uri: LeasedUri, record: UriRecord | undefined, discoveredIn: QueuedUri[], st: SiteStats, feed: FeedOp[] = []): Promise<void> {
    st.add('DBUpdates');
    // Before the store is written and the document's claim ends.
    if (record && holdsChecksum(record)) this.storedChecksums?.add(record.checksum);
    // Refresh-only: links are not followed to anything new (known URIs are re-queued at each cycle start).
    let discovered = this.opts.refreshOnly?.() || this.disk.refreshOnly ? discoveredIn.filter((q) => q.redirects > 0) : discoveredIn;
    let cached = 0;
    if (this.screenedMax > 0 && discovered.length > 0) {
      const fresh = discovered.filter((q) => !this.screened.has(q.url));
      cached = discovered.length - fresh.length;
      discovered = fresh;
    }
    if (cached > 0) {
      this.skipUris(st, 'ic', cached);
    }
    if (this.bloom) {
      // smfilter: links the filter has seen are checked against the store here, outside the write transaction.
      const fresh: QueuedUri[] = [];
      for (const q of discovered) {
        if (this.bloom.mightContain(q.url) && (await this.store.seen(this.rt.name, this.epoch, q.url))) {
          this.skipUris(st, 'ic', 1);
          continue;
        }
        fresh.push(q);
      }
      discovered = fresh;
    }
    // MS-FSCADM CollectionQuarantineSite: URIs found for a quarantined site wait in a separate queue.
    const quarantined = this.opts.quarantinedSites?.();
    if (quarantined && quarantined.size > 0) {
      const now = this.now();
      discovered = discovered.map((q) => ((quarantined.get(q.site) ?? 0) > now ? { ...q, flags: (q.flags ?? 0) | URI_FLAGS.QUARANTINED } : q));
    }
    const added = await this.store.complete(this.rt.name, this.epoch, {
      leaseId: uri.id,
      site: site.site,
      ...(record ? { record } : {}),
      discovered,
      ...(feed.length > 0 ? { feed } : {}),
    });
    if (feed.length > 0) this.opts.onFeed?.();
    const dup = discovered.length - added.length;
    if (dup > 0) {
      this.skipUris(st, 'ic', dup);
    }
    for (const a of added) {
      this.bloom?.add(a.url);
      if (!((a.flags ?? 0) & URI_FLAGS.QUARANTINED)) this.sched.addWork(a.site, 1);
    }
    for (const q of discovered) this.screen(q.url, q.site);
  }

  /** Remembers a URL as seen in this cycle (bounded: the oldest is forgotten first). */
  private screen(url: string, site: string): void {
    if (this.screenedMax <= 0) return;
    this.growScreened();
    this.screened.refresh(url, stringTag(site));
  }

  /**
   * cachesize.screened unset: a full screened cache is replaced by one
   * twice its size holding the same URLs, and lent to the extract worker
   * in place of the old one. Pages already sent with the old one's id are
   * parsed before the worker gives it back (the messages keep their order).
   */
  private growScreened(): void {
    if (!this.screenedGrows || !this.screened.full || this.screened.max >= SCREENED_GROW_MAX) return;
    this.screened = this.screened.grown(Math.min(this.screened.max * 2, SCREENED_GROW_MAX));
    const old = this.screenShare;
    if (old !== undefined) {
      const pool = this.extractPool();
      this.screenShare = pool.share(this.screened);
      pool.unshare(old);
    }
    this.emit({ type: 'cycle', message: `screened URI cache grown to ${this.screened.max} entries (cachesize.screened is not set)` });
  }

  /** On stop: leased URIs that were never fetched go back to the queue. */
  private async returnLeases(): Promise<void> {
    const ids: number[] = [];
    for (const s of this.sched.all()) {
      ids.push(...(s.drain() as LeasedUri[]).map((u) => u.id));
    }
    if (ids.length > 0) await this.store.release(this.rt.name, ids);
  }

  /**
   * The statistics of the sites that changed since the last call, every
   * STATS_SAVE_INTERVAL_MS while a cycle runs. One save at a time: a call
   * while one is being written returns that one.
   */
  private saveChangedStats(): Promise<void> {
    if (this.statsSaving || this.statsChanged.size === 0) return this.statsSaving ?? Promise.resolve();
    const sites = [...this.statsChanged];
    this.statsChanged.clear();
    this.statsSaving = this.putStats(sites)
      .catch((err: unknown) => {
        // Saved again at the next interval, and all of them when the cycle stops.
        for (const site of sites) this.statsChanged.add(site);
        this.emit({ type: 'error', message: `cannot save site statistics: ${(err as Error).message}` });
      })
      .finally(() => {
        this.statsSaving = undefined;
      });
    return this.statsSaving;
  }

  /** Every site's statistics, when a cycle stops or ends. */
  private async saveStats(ended: boolean): Promise<void> {
    const endedS = Math.floor(this.now() / 1000);
    for (const [site, st] of this.stats) {
      // peek, not get: a site known only from an earlier cycle's statistics gets no scheduler state here.
      st.data.discrete.QueueLength = this.sched.peek(site)?.queued ?? 0;
      if (ended) st.data.discrete.CrawlEnded = endedS;
    }
    await this.putStats(this.stats.keys());
    this.statsChanged.clear();
  }

  /**
   * The statistics of `sites`, SAVE_STATS_BATCH sites per transaction and
   * serialised a batch at a time: one autocommit per site took 158 µs, so a
   * crawl of a million hosts spent minutes on this at each cycle end and on
   * each stop.
   */
  private async putStats(sites: Iterable<string>): Promise<void> {
    let rows: Array<{ site: string; json: string }> = [];
    for (const site of sites) {
      const st = this.stats.get(site);
      if (!st) continue;
      rows.push({ site, json: JSON.stringify(st) });
      if (rows.length >= SAVE_STATS_BATCH) {
        await this.store.putSiteStatsMany(this.rt.name, rows);
        rows = [];
      }
    }
    if (rows.length > 0) await this.store.putSiteStatsMany(this.rt.name, rows);
  }
}
