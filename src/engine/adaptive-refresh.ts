/**
 * refresh_mode adaptive (MS-FSCCFG 2.2.3, 2.2.4.24–26): a refresh cycle is
 * divided into `refresh_count` minor cycles, and each minor cycle re-crawls
 * only the best-scored known URIs of each site, within a budget, beside a
 * share of new URIs.
 *
 *   cycle start   the seeding walk hands every record here (noteRecord) instead of
 *                 queueing it; the change histories and sitemap hints are read once
 *   minor cycle   per site: budget = max(coverage_min, ⌈known × coverage_max_pct %⌉);
 *                 re-crawl share = round(budget × refresh_quota %), new share = the rest
 *                 (the new share the site cannot use at the minor cycle's start goes to
 *                 re-crawls); the best-scored known URIs fill the re-crawl share and are
 *                 queued in front (requeue); the new URIs deferred earlier are queued again
 *   each lease    admit: a URI the minor cycle took, a sitemap, a retry → fetched; another
 *                 known URI (reached by a link) → not fetched now (`pass`); a new URI →
 *                 fetched while the site's new share lasts, else deferred to the next minor
 *                 cycle (`defer`); a site with no known URI when the refresh cycle began
 *                 (a new site) is crawled without a budget, and without re-crawls, until
 *                 the cycle ends: its discovery
 *   each page     observe: the change history (checks, changes, when) kept in memory,
 *                 written to the crawl store at each minor cycle's start and at the end
 *   next minor    at cycle start + k × refresh / refresh_count (refresh 0: as soon as the
 *                 minor cycle before has nothing left to fetch); the cycle ends after the
 *                 last one's work is done
 *
 * The score of a URI (docs/crawling.md, *Adaptive refresh*, gives the reasoning):
 *
 *   score = inverse_length × (10 − slashes of the path) / 9         (0 from 10 slashes)
 *         + inverse_depth × (10 − hops) / 10                        (0 from 10 hops)
 *         + is_landing_page × [path ends in / or index.html, no query]
 *         + is_mime_markup × [MIME type in uri_search_mime]
 *         + change_history × u
 *         + sitemap × sitemap_weights[changefreq] × (0.5 + priority) × u
 *
 *   u = J / (J + L²/2), the age index J(t) = t·EA(t) − ∫₀ᵗ EA (ageIndex) of the
 *   copy, t the time since the last fetch, EA(t) = t − (1 − e^(−λt))/λ its
 *   expected age, L one minor cycle (1 s with refresh 0), and λ the change rate
 *   estimated from the checks and the changes trawl saw (another checksum) over
 *   the window from the first Last-Modified (or the first fetch) to the last
 *   fetch (changeRate: Cho and Garcia-Molina's estimator, the prior, one minor
 *   cycle or 1 s with refresh 0, counted as one more check without a change).
 *   Taking the highest J first is the age-optimal schedule (a page is re-fetched
 *   about every λ^(−1/3)): pages that change often come often, those that rarely
 *   change still come in time. u is 0 right after a fetch, so neither rule keeps
 *   a page just fetched at the top. A sitemap `lastmod` later than the last
 *   fetch makes u 1.
 *
 * Records that dbswitch expires (not fetched for dbswitch cycles) are taken
 * first, whatever their score: no known URI goes unfetched longer than that.
 *
 * Nothing here runs for a collection that is not adaptive: `CycleEnv.adaptive`
 * is undefined, and each hook is one optional call.
 */

import { mimeMatches } from '../fetch/mime.ts';
import { URI_FLAGS, type ChangeHistory, type CrawlStore, type LeasedUri, type QueuedUri, type SitemapMeta, type UriRecord } from '../store/crawl-store.ts';
import type { CollectionSettings } from '../config/registry.ts';
import type { CrawlEvents } from './crawl-events.ts';
import type { CycleEnv } from './cycle-env.ts';

export interface AdaptiveWeights {
  readonly inverseLength: number;
  readonly inverseDepth: number;
  readonly isLandingPage: number;
  readonly isMimeMarkup: number;
  readonly changeHistory: number;
  readonly sitemap: number;
}

export interface AdaptiveParams {
  /** adaptive.refresh_count: minor cycles per refresh cycle. */
  readonly refreshCount: number;
  /** adaptive.refresh_quota, %: the re-crawls' share of a minor cycle's budget. */
  readonly refreshQuotaPct: number;
  /** adaptive.coverage_min: URIs of a site crawled in a minor cycle at least (when it has them). */
  readonly coverageMin: number;
  /** adaptive.coverage_max_pct, %: of a site's known URIs, re-crawled in a minor cycle at most (unless coverage_min asks more). */
  readonly coverageMaxPct: number;
  readonly weights: AdaptiveWeights;
  /** sitemap_weights: changefreq value → weight; `default` for URIs without one. */
  readonly sitemapWeights: Readonly<Record<string, number>>;
  /** uri_search_mime: the markup MIME types (is_mime_markup). */
  readonly markupMime: readonly string[];
  /** refresh, ms: the refresh cycle's length; 0: no time boundary. */
  readonly refreshMs: number;
}

export interface AdaptiveHooks {
  readonly store: CrawlStore;
  readonly name: string;
  readonly events: CrawlEvents;
  /** The cycle being crawled. */
  readonly epoch: () => number;
  /** A known URI as queued again: priority and sub-collection as of the configuration now. */
  readonly queuedOf: (url: string, site: string, depth: number, parent: string | undefined) => QueuedUri;
  /** `n` URIs of `site` were queued. */
  readonly addWork: (site: string, n: number) => void;
}

/** What `admit` decides for a leased URI. */
export type Admission = 'fetch' | 'pass' | 'defer';

/** One rule's contribution to a score, for the scheduler log. */
export interface ScoreParts {
  readonly length: number;
  readonly depth: number;
  readonly landing: number;
  readonly markup: number;
  readonly change: number;
  readonly sitemap: number;
  /** P(changed since the last fetch), before its weight. */
  readonly pChanged: number;
  /** The expected age of the copy now (ms). */
  readonly ageMs: number;
  /** The age index as a 0-to-1 score (ageScore): the change_history rule before its weight, and the sitemap rule's factor. */
  readonly urgency: number;
  readonly total: number;
}

/** A known URI: what scoring needs of it. */
interface Candidate {
  readonly url: string;
  readonly site: string;
  depth: number;
  parent: string | undefined;
  mime: string | undefined;
  lastCrawledMs: number;
  /** The record's Last-Modified (ms), when it had one. */
  lastModifiedMs: number | undefined;
  /** dbswitch: not fetched for dbswitch cycles; taken first. */
  expired: boolean;
  /** Its record is from a cycle before this one: its site was known when this cycle began. */
  knownBefore: boolean;
}

interface MutableHistory {
  url: string;
  checks: number;
  changes: number;
  sinceMs: number;
  lastChangeMs: number | undefined;
}

interface SiteBudget {
  /** Known URIs when the minor cycle began. */
  readonly known: number;
  readonly total: number;
  readonly recrawls: number;
  readonly newShare: number;
  newTaken: number;
  recrawlsFetched: number;
  passed: number;
  deferred: number;
}

/** The inverse length rule: 1 for the root path, falling by 1/9 a slash, 0 from 10 slashes. */
export function inverseLengthScore(url: URL): number {
  let n = 0;
  for (const ch of url.pathname) if (ch === '/') n++;
  return n >= 10 ? 0 : Math.min(1, (10 - n) / 9);
}

/** The inverse depth rule: 1 for a start URI, 0 from 10 hops. */
export function inverseDepthScore(hops: number): number {
  return hops >= 10 ? 0 : (10 - Math.max(0, hops)) / 10;
}

/** The landing page rule: a path ending in / or index.html, without a query. */
export function landingPageScore(url: URL): number {
  if (url.search !== '') return 0;
  return url.pathname.endsWith('/') || url.pathname.endsWith('/index.html') ? 1 : 0;
}

/**
 * The estimated change rate (per ms) of a page found changed at `changes` of
 * `checks` fetches over `windowMs`, after Cho and Garcia-Molina's estimator
 * for regular checks, −ln((n − X + 0.5) / (n + 0.5)) / I: the prior counts
 * as one more check (n = checks + 1, I = (window + prior) / n), and n + 1
 * above the line keeps a small rate, ≈ 0.5 / (window + prior), for a page
 * never seen changing, so that it is checked again in time.
 */
export function changeRate(changes: number, checks: number, windowMs: number, priorMs: number): number {
  const n = Math.max(0, checks) + 1;
  const x = Math.min(Math.max(0, changes), n - 1);
  const interval = (Math.max(0, windowMs) + Math.max(1, priorMs)) / n;
  return Math.log((n + 1) / (n - x + 0.5)) / interval;
}

/** P(at least one change in `elapsedMs`) for a Poisson process of rate `rate`. */
export function changedProbability(rate: number, elapsedMs: number): number {
  return 1 - Math.exp(-rate * Math.max(0, elapsedMs));
}

/**
 * The expected age (ms) of a copy fetched `elapsedMs` ago, for a Poisson
 * process of rate `rate`: E[time since the first change after the fetch]
 * = t − (1 − e^(−λt)) / λ (0 while it is fresh; Cho and Garcia-Molina).
 */
export function expectedAge(rate: number, elapsedMs: number): number {
  const t = Math.max(0, elapsedMs);
  if (rate <= 0) return 0;
  const x = rate * t;
  // Small λt: t − (1 − e^(−x))/λ = t (x/2 − x²/6 + x³/24 …), without the cancellation.
  if (x < 1e-3) return t * (x / 2 - (x * x) / 6 + (x * x * x) / 24);
  return t - (1 - Math.exp(-x)) / rate;
}

/**
 * The age index (ms²) of a copy fetched `elapsedMs` ago: t × EA(t) − ∫₀ᵗ EA(s) ds.
 * Re-fetching each page when its index reaches one common threshold is the
 * refresh schedule that minimises the mean age for a given number of fetches
 * (the Lagrange condition of min Σ (1/Iᵢ) ∫₀^Iᵢ EAᵢ subject to Σ 1/Iᵢ = budget):
 * λt³/3 for a page that rarely changes, so its interval goes as λ^(−1/3) — a
 * page changing 1,000 times less often waits 10 times longer, not 1,000 — and
 * t²/2 − 1/λ² for one that changes far faster than it is fetched, whose index
 * then no longer grows with λ.
 *
 *   J(t) = (x²/2 + x e^(−x) − 1 + e^(−x)) / λ²,  x = λt
 */
export function ageIndex(rate: number, elapsedMs: number): number {
  const t = Math.max(0, elapsedMs);
  if (rate <= 0 || t === 0) return 0;
  const x = rate * t;
  // Small x: x³/3 − x⁴/8 + x⁵/30 (the closed form cancels to nothing in floating point).
  const g = x < 1e-2 ? (x * x * x) / 3 - (x ** 4) / 8 + (x ** 5) / 30 : (x * x) / 2 + x * Math.exp(-x) - 1 + Math.exp(-x);
  return g / (rate * rate);
}

/**
 * The age index as a 0-to-1 score: J / (J + J₀), J₀ = L²/2 with L one minor
 * cycle (the index of a page that changed right after its fetch, one minor
 * cycle later). It is 0 right after a fetch and rises, without a ceiling that
 * would tie the pages left longest, towards 1.
 */
export function ageScore(index: number, minorMs: number): number {
  const j0 = (minorMs * minorMs) / 2;
  return index <= 0 ? 0 : index / (index + j0);
}

const parseMs = (v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : undefined;
};

/**
 * The change_history row that keeps the minor cycle under way (checks: the
 * cycle, changes: the minor cycle, 0-based), so that a cycle resumed after a
 * crash goes on with it. Not a URL, so no page's row can be it.
 */
export const MINOR_CYCLE_KEY = 'trawl:adaptive-minor-cycle';

/** Above this many URIs deferred per site, the oldest are dropped (found again through the links to them). */
const MAX_DEFERRED_PER_SITE = 100_000;
/** Selected URIs named one by one in the scheduler log per site and minor cycle; the rest are counted. */
const LOGGED_PER_SITE = 200;

export class AdaptiveRefresh {
  private readonly p: AdaptiveParams;
  private readonly h: AdaptiveHooks;
  /** Known URIs by site, and by URL. */
  private readonly bySite = new Map<string, Candidate[]>();
  private readonly byUrl = new Map<string, Candidate>();
  private readonly history = new Map<string, MutableHistory>();
  private readonly dirty = new Set<string>();
  private readonly sitemap = new Map<string, SitemapMeta>();
  /** URIs the current and earlier minor cycles took and which are not fetched yet. */
  private readonly selected = new Set<string>();
  private readonly budgets = new Map<string, SiteBudget>();
  /** New URIs deferred to the next minor cycle, by site. */
  private readonly deferred = new Map<string, QueuedUri[]>();
  /** Sites with known URIs when the refresh cycle began; the others are crawled without a budget until it ends (their discovery). */
  private readonly knownAtStart = new Set<string>();
  private cycleStartMs = 0;
  /** The minor cycle under way (0-based); -1 before the first. */
  private minor = -1;
  /** The minor cycle (0-based) a crashed run of this cycle was in, when this run resumes it. */
  private resumedMinor: number | undefined;
  private nowFn: () => number = Date.now;

  constructor(p: AdaptiveParams, h: AdaptiveHooks) {
    this.p = p;
    this.h = h;
  }

  /** How long a minor cycle lasts (ms); 0: minor cycles follow one another as the one before ends. */
  get minorLengthMs(): number {
    return this.p.refreshMs > 0 ? this.p.refreshMs / Math.max(1, this.p.refreshCount) : 0;
  }

  /** The change rate's prior window: one minor cycle, 1 s without refresh. */
  private get priorMs(): number {
    return this.minorLengthMs > 0 ? this.minorLengthMs : 1000;
  }

  /** The cycle begins (or resumes): the change histories and sitemap hints are read. */
  async begin(cycleStartedMs: number, now: () => number): Promise<void> {
    this.cycleStartMs = cycleStartedMs;
    this.nowFn = now;
    for (const r of await this.h.store.listChangeHistory(this.h.name)) {
      if (r.url === MINOR_CYCLE_KEY) {
        if (r.checks === this.h.epoch()) this.resumedMinor = Math.min(r.changes, this.p.refreshCount - 1);
      } else this.history.set(r.url, { ...r });
    }
    for (const m of await this.h.store.listSitemapMeta(this.h.name)) this.sitemap.set(m.url, m);
  }

  /** A sitemap was read in this cycle: what it says of its URLs counts from the next minor cycle on. */
  noteSitemap(entries: readonly SitemapMeta[]): void {
    for (const m of entries) this.sitemap.set(m.url, m);
  }

  /** A record the seeding walk found: a candidate for re-crawling; `expired` by dbswitch. */
  noteRecord(r: UriRecord, expired: boolean): void {
    const c = this.candidate(r.url, r.site, r.depth, r.parent, r.mime, r.lastCrawledMs, parseMs(r.lastModified), expired);
    if (r.epoch < this.h.epoch()) c.knownBefore = true;
  }

  private candidate(url: string, site: string, depth: number, parent: string | undefined, mime: string | undefined, lastCrawledMs: number, lastModifiedMs: number | undefined, expired: boolean): Candidate {
    let c = this.byUrl.get(url);
    if (c) {
      c.depth = depth;
      c.parent = parent;
      c.mime = mime;
      c.lastCrawledMs = lastCrawledMs;
      c.lastModifiedMs = lastModifiedMs ?? c.lastModifiedMs;
      c.expired = c.expired && expired;
      return c;
    }
    c = { url, site, depth, parent, mime, lastCrawledMs, lastModifiedMs, expired, knownBefore: false };
    this.byUrl.set(url, c);
    let list = this.bySite.get(site);
    if (!list) this.bySite.set(site, (list = []));
    list.push(c);
    return c;
  }

  /** The score of a known URI now, with each rule's part. */
  score(c: Candidate, now: number): ScoreParts {
    const w = this.p.weights;
    const u = new URL(c.url);
    const length = w.inverseLength * inverseLengthScore(u);
    const depth = w.inverseDepth * inverseDepthScore(c.depth);
    const landing = w.isLandingPage * landingPageScore(u);
    const markup = c.mime !== undefined && mimeMatches(c.mime, this.p.markupMime) ? w.isMimeMarkup : 0;
    const h = this.history.get(c.url);
    const since = h?.sinceMs ?? c.lastModifiedMs ?? c.lastCrawledMs;
    const rate = changeRate(h?.changes ?? 0, h?.checks ?? 0, c.lastCrawledMs - since, this.priorMs);
    const elapsed = now - c.lastCrawledMs;
    let pChanged = changedProbability(rate, elapsed);
    let ageMs = expectedAge(rate, elapsed);
    let urgency = ageScore(ageIndex(rate, elapsed), this.priorMs);
    const sm = this.sitemap.get(c.url);
    const lastmod = parseMs(sm?.lastmod);
    if (lastmod !== undefined && lastmod > c.lastCrawledMs) {
      // The sitemap says it changed, and when: stale for certain, as old as that.
      pChanged = 1;
      ageMs = Math.max(0, now - lastmod);
      urgency = 1;
    }
    const change = w.changeHistory * urgency;
    const freqWeight = this.p.sitemapWeights[sm?.changefreq ?? 'default'] ?? this.p.sitemapWeights.default ?? 0;
    // The changefreq weight scales how urgent the page is: 0 right after a fetch, the full weight when long overdue.
    const sitemap = w.sitemap * freqWeight * (0.5 + (sm?.priority ?? 0.5)) * urgency;
    return { length, depth, landing, markup, change, sitemap, pChanged, ageMs, urgency, total: length + depth + landing + markup + change + sitemap };
  }

  /** The score of a known URI now; undefined when it is not known. */
  scoreOf(url: string, now: number): ScoreParts | undefined {
    const c = this.byUrl.get(url);
    return c ? this.score(c, now) : undefined;
  }

  /** When the next minor cycle begins (ms; 0: now, when `idle`), or undefined after the last one. */
  nextMinorAt(idle: boolean): number | undefined {
    if (this.minor + 1 >= this.p.refreshCount) return undefined;
    const len = this.minorLengthMs;
    if (len === 0) return idle ? 0 : Number.POSITIVE_INFINITY;
    return this.cycleStartMs + (this.minor + 1) * len;
  }

  /** Whether a minor cycle of this refresh cycle is still to begin. */
  get moreMinorCycles(): boolean {
    return this.minor + 1 < this.p.refreshCount;
  }

  /**
   * The next minor cycle begins: the change histories observed so far are
   * written, each site's budget is set and its best-scored known URIs queued
   * in front, and the new URIs deferred earlier queued again. A resumed
   * cycle begins with the minor cycle its time falls in.
   */
  async beginMinor(): Promise<void> {
    const now = this.nowFn();
    // The sites with a record from an earlier cycle: the same set when a cycle begins and when a crashed
    // one resumes (its own discovery's records are of this cycle), so a site in its discovery stays in it.
    if (this.minor < 0) for (const [site, cands] of this.bySite) if (cands.some((c) => c.knownBefore)) this.knownAtStart.add(site);
    let next = this.minor + 1;
    const len = this.minorLengthMs;
    if (len > 0) next = Math.max(next, Math.min(this.p.refreshCount - 1, Math.floor((now - this.cycleStartMs) / len)));
    const resumed = this.resumedMinor;
    this.resumedMinor = undefined;
    if (resumed !== undefined && this.minor < 0 && resumed >= next) {
      await this.resumeMinor(resumed);
      return;
    }
    this.minor = Math.min(next, this.p.refreshCount - 1);
    this.dirtyMinor = true;
    await this.flush();
    const label = `minor cycle ${this.minor + 1}/${this.p.refreshCount} of cycle ${this.h.epoch()}`;
    this.summarizeMinor();
    this.budgets.clear();
    const sites = new Set<string>([...this.bySite.keys(), ...this.deferred.keys()]);
    const log = this.h.events.logScheduler;
    if (log) this.h.events.emit({ type: 'scheduler', message: `${label} begins: ${this.knownAtStart.size} sites with known URIs when the cycle began (${this.byUrl.size} URIs known now), ${this.deferred.size} with new URIs deferred; ${this.bySite.size - this.knownAtStart.size} sites in their discovery, without a budget` });
    for (const site of sites) {
      // A site in its discovery takes no budget: its first crawl is this cycle's refresh of it.
      if (!this.knownAtStart.has(site)) continue;
      const cands = this.bySite.get(site) ?? [];
      const known = cands.length;
      const waitingNew = this.deferred.get(site) ?? [];
      const total = Math.max(this.p.coverageMin, Math.ceil((known * this.p.coverageMaxPct) / 100));
      let recrawlShare = Math.round((total * this.p.refreshQuotaPct) / 100);
      const newShareAtStart = total - recrawlShare;
      // The new share the site cannot use now goes to re-crawls.
      if (waitingNew.length < newShareAtStart) recrawlShare += newShareAtStart - waitingNew.length;
      const scored = cands.filter((c) => !this.selected.has(c.url)).map((c) => ({ c, s: this.score(c, now) }));
      scored.sort((a, b) => (a.c.expired === b.c.expired ? b.s.total - a.s.total || (a.c.url < b.c.url ? -1 : 1) : a.c.expired ? -1 : 1));
      const take: typeof scored = [];
      for (const x of scored) {
        if (take.length >= recrawlShare && !x.c.expired) break;
        take.push(x);
      }
      const newShare = Math.max(0, total - take.length);
      const budget: SiteBudget = { known, total, recrawls: take.length, newShare, newTaken: 0, recrawlsFetched: 0, passed: 0, deferred: 0 };
      this.budgets.set(site, budget);
      // Flagged in the queue, so that a restart that loses `selected` still fetches them (admit).
      const batch: QueuedUri[] = take.map(({ c }) => {
        this.selected.add(c.url);
        const q = this.h.queuedOf(c.url, c.site, c.depth, c.parent);
        return { ...q, flags: (q.flags ?? 0) | URI_FLAGS.RECRAWL };
      });
      // Deferred new URIs come back within the new share; they take their place when leased (admit).
      const back = waitingNew.splice(0, newShare);
      if (waitingNew.length === 0) this.deferred.delete(site);
      if (batch.length > 0) await this.h.store.requeue(this.h.name, this.h.epoch(), batch, true);
      if (back.length > 0) await this.h.store.requeue(this.h.name, this.h.epoch(), back, false);
      if (batch.length + back.length > 0) this.h.addWork(site, batch.length + back.length);
      if (log) {
        const pct = this.p.coverageMaxPct;
        this.h.events.emit({
          type: 'scheduler', url: site,
          message: `${label}: ${site}: ${known} known URIs; budget ${total} (coverage_min ${this.p.coverageMin}, coverage_max_pct ${pct} % of ${known} = ${Math.ceil((known * pct) / 100)}); ` +
            `re-crawls ${take.length} (refresh_quota ${this.p.refreshQuotaPct} %), new share ${newShare}; ${back.length} deferred new URIs queued again, ${waitingNew.length} still deferred`,
        });
        take.slice(0, LOGGED_PER_SITE).forEach(({ c, s }, i) => this.h.events.emit({ type: 'scheduler', url: c.url, message: `${label}: re-crawl #${i + 1} ${c.expired ? '(dbswitch: expired, taken first) ' : ''}${describe(s)}` }));
        if (take.length > LOGGED_PER_SITE) this.h.events.emit({ type: 'scheduler', url: site, message: `${label}: ${take.length - LOGGED_PER_SITE} more re-crawls not listed` });
        const left = scored.length - take.length;
        if (left > 0) {
          const best = scored[take.length]!;
          this.h.events.emit({ type: 'scheduler', url: site, message: `${label}: ${left} known URIs of ${site} not taken; the best of them: ${best.c.url} ${describe(best.s)}` });
        }
      }
    }
  }

  /**
   * A crashed run of this cycle was in minor cycle `minor`: this run goes on
   * with it rather than beginning the cycle's minor cycles again. What it took
   * and did not fetch is still queued, flagged (RECRAWL), so nothing is taken
   * again; each site's new share starts afresh (what the crashed run used of
   * it is not kept).
   */
  private async resumeMinor(minor: number): Promise<void> {
    this.minor = minor;
    const label = `minor cycle ${minor + 1}/${this.p.refreshCount} of cycle ${this.h.epoch()}`;
    const log = this.h.events.logScheduler;
    if (log) this.h.events.emit({ type: 'scheduler', message: `${label} resumes after a restart: the re-crawls it took and had not fetched are still queued; ${this.knownAtStart.size} sites with known URIs when the cycle began, ${this.bySite.size - this.knownAtStart.size} in their discovery` });
    this.budgets.clear();
    for (const site of this.knownAtStart) {
      const known = this.bySite.get(site)?.length ?? 0;
      const total = Math.max(this.p.coverageMin, Math.ceil((known * this.p.coverageMaxPct) / 100));
      const newShare = total - Math.round((total * this.p.refreshQuotaPct) / 100);
      this.budgets.set(site, { known, total, recrawls: 0, newShare, newTaken: 0, recrawlsFetched: 0, passed: 0, deferred: 0 });
      if (log) this.h.events.emit({ type: 'scheduler', url: site, message: `${label}: ${site}: ${known} known URIs; resumed with a new share of ${newShare}` });
    }
  }

  /** The minor cycle that ends, per site: what it fetched (scheduler log). */
  private summarizeMinor(): void {
    if (!this.h.events.logScheduler || this.minor <= 0 && this.budgets.size === 0) return;
    for (const [site, b] of this.budgets) {
      this.h.events.emit({ type: 'scheduler', url: site, message: `minor cycle summary: ${site}: ${b.recrawlsFetched} of ${b.recrawls} re-crawls fetched, ${b.newTaken} new URIs of a share of ${b.newShare}, ${b.deferred} new URIs deferred, ${b.passed} known URIs reached by links and not fetched` });
    }
  }

  /**
   * Whether a leased URI is fetched now. `known`: the store holds a record of it.
   * See the file comment.
   */
  admit(uri: LeasedUri, known: boolean): Admission {
    if (uri.retries > 0 || ((uri.flags ?? 0) & (URI_FLAGS.SITEMAP | URI_FLAGS.FEED)) !== 0) return 'fetch';
    const b = this.budgets.get(uri.site);
    // A URI a minor cycle took: named in `selected`, and flagged in the queue (which survives a restart).
    if (this.selected.delete(uri.url) || ((uri.flags ?? 0) & URI_FLAGS.RECRAWL) !== 0) {
      if (b) b.recrawlsFetched++;
      return 'fetch';
    }
    if (known) {
      if (b) b.passed++;
      if (this.h.events.logScheduler) this.h.events.emit({ type: 'scheduler', url: uri.url, message: `minor cycle ${this.minor + 1}/${this.p.refreshCount}: known URI reached by a link, not taken by this minor cycle: not fetched` });
      return 'pass';
    }
    // A site with no known URI when the refresh cycle began is crawled without a budget: its discovery.
    if (!b || !this.knownAtStart.has(uri.site)) return 'fetch';
    if (b.newTaken < b.newShare) {
      b.newTaken++;
      return 'fetch';
    }
    b.deferred++;
    let list = this.deferred.get(uri.site);
    if (!list) this.deferred.set(uri.site, (list = []));
    if (list.length >= MAX_DEFERRED_PER_SITE) list.shift();
    list.push({ url: uri.url, site: uri.site, depth: uri.depth, hops: uri.hops, redirects: uri.redirects, parent: uri.parent, priority: uri.priority, sub: uri.sub, ...(uri.flags !== undefined ? { flags: uri.flags } : {}) });
    if (this.h.events.logScheduler) this.h.events.emit({ type: 'scheduler', url: uri.url, message: `minor cycle ${this.minor + 1}/${this.p.refreshCount}: new URI deferred to the next minor cycle: the new share of ${uri.site} (${b.newShare}) is used` });
    return 'defer';
  }

  /**
   * A page was fetched and compared with its stored copy (stored or
   * unchanged): its change history and its candidate are brought up to date.
   * `changed`: its checksum differs from the record's (undefined: no record before).
   */
  observe(url: string, site: string, previous: UriRecord | undefined, changed: boolean, lastModified: string | undefined, mime: string | undefined, depth: number, parent: string | undefined, fetchedMs: number): void {
    const lm = parseMs(lastModified);
    let h = this.history.get(url);
    if (!h) {
      const since = previous ? (parseMs(previous.lastModified) ?? previous.lastCrawledMs) : (lm ?? fetchedMs);
      h = { url, checks: 0, changes: 0, sinceMs: Math.min(since, fetchedMs), lastChangeMs: previous ? undefined : lm };
      this.history.set(url, h);
    }
    if (previous?.checksum !== undefined) {
      h.checks++;
      if (changed) {
        h.changes++;
        // Last-Modified says when; without it, the middle of the interval it changed in.
        h.lastChangeMs = lm !== undefined && lm > previous.lastCrawledMs ? Math.min(lm, fetchedMs) : Math.round((previous.lastCrawledMs + fetchedMs) / 2);
      }
    }
    this.dirty.add(url);
    this.candidate(url, site, depth, parent, mime, fetchedMs, lm, false);
  }

  /** The minor cycle under way changed since it was last written. */
  private dirtyMinor = false;

  /** Writes the change histories observed since the last write, and the minor cycle under way. */
  async flush(): Promise<void> {
    if (this.dirty.size === 0 && !this.dirtyMinor) return;
    const rows: ChangeHistory[] = [];
    if (this.dirtyMinor) rows.push({ url: MINOR_CYCLE_KEY, checks: this.h.epoch(), changes: this.minor, sinceMs: this.cycleStartMs, lastChangeMs: undefined });
    this.dirtyMinor = false;
    for (const url of this.dirty) {
      const h = this.history.get(url);
      if (h) rows.push({ ...h });
    }
    this.dirty.clear();
    await this.h.store.putChangeHistory(this.h.name, rows);
  }

  /**
   * The cycle ends: the histories are written, the last minor cycle is
   * summed up, and the new URIs still deferred are queued for the next
   * cycle (they would otherwise wait until a link finds them again).
   */
  async finish(): Promise<void> {
    this.summarizeMinor();
    this.budgets.clear();
    await this.flush();
    const carried: QueuedUri[] = [];
    for (const list of this.deferred.values()) carried.push(...list);
    this.deferred.clear();
    if (carried.length > 0) {
      await this.h.store.enqueue(this.h.name, this.h.epoch() + 1, carried, false);
      if (this.h.events.logScheduler) this.h.events.emit({ type: 'scheduler', message: `cycle ${this.h.epoch()} ends: ${carried.length} deferred new URIs are queued for the next cycle` });
    }
  }
}

function describe(s: ScoreParts): string {
  const f = (n: number): string => n.toFixed(2);
  return `(score ${f(s.total)}: change_history ${f(s.change)} [age index ${f(s.urgency)}, expected age ${(s.ageMs / 1000).toFixed(1)} s, P(changed) ${f(s.pChanged)}], sitemap ${f(s.sitemap)}, inverse_length ${f(s.length)}, inverse_depth ${f(s.depth)}, is_landing_page ${f(s.landing)}, is_mime_markup ${f(s.markup)})`;
}

/** The scheduler of an adaptive collection's cycle, from its settings. */
export function adaptiveRefreshFor(env: CycleEnv, s: CollectionSettings): AdaptiveRefresh {
  return new AdaptiveRefresh({
    refreshCount: s.adaptive.refreshCount, refreshQuotaPct: s.adaptive.refreshQuotaPct, coverageMin: s.adaptive.coverageMin, coverageMaxPct: s.adaptive.coverageMaxPct,
    weights: s.weights, sitemapWeights: s.sitemapWeights, markupMime: s.uriSearchMime, refreshMs: s.refreshMin * 60_000,
  }, {
    store: env.store, name: env.name, events: env.events, epoch: () => env.epoch, addWork: (site, n) => env.sched.addWork(site, n),
    queuedOf: (url, site, depth, parent) => {
      const u = new URL(url);
      return { url, site, depth, hops: depth, redirects: 0, parent, priority: env.rt.priorityOf(u, false), sub: env.rt.subOf(u) };
    },
  });
}
