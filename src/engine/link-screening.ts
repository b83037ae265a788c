/**
 * Link screening: whether a URL found on a page (a link, a redirect, a
 * sitemap or channel entry) may be queued, and the screened-URI cache that
 * spares most links that question.
 *
 *   link ─► refusedByUrl? ──yes──► URISkip (its code), marked in the cache
 *        ─► scope.decide ──no───► URISkip; refused by its URL alone: remembered in refusedByUrl
 *        ─► QueuedUri (depth, hops, priority, sub-collection)
 *   commit ─► dropScreened: links the cache holds are counted `ic`, not sent to the store
 *          ─► screen(): the links sent are remembered (tagged with their site)
 *
 * The screened-URI cache (MS-FSCCFG cachesize.screened): URLs known to be
 * queued or crawled in this cycle, most recent last, bounded. It keeps
 * 64-bit fingerprints tagged with their site's stringTag, so a hit counts as
 * Local or LocalFwd (core/fingerprint-cache.ts says what a collision would
 * cost). While a cycle runs, its table is lent to the extract worker (lend),
 * which looks a page's links up there itself and sends back only the others
 * (extract-wire.ts). Links the scope refused by their URL alone are marked
 * with a reserved tag, the skip code's number, so the worker counts them by
 * code too; not while log.screened logs each refusal with its reason.
 */

import { BoundedMap } from '../core/bounded-map.ts';
import { domainOf, siteOf } from '../core/url.ts';
import { FingerprintCache, reservedTag, stringTag } from '../core/fingerprint-cache.ts';
import { URI_SKIP_CODE_LIST, type UriSkipCode } from '../core/skip-codes.ts';
import type { ExtractPool } from '../extract/extract-pool.ts';
import type { LeasedUri, QueuedUri } from '../store/crawl-store.ts';
import type { SiteStats } from '../stats/site-stats.ts';
import type { CrawlEvents } from './crawl-events.ts';
import type { CycleStats } from './cycle-stats.ts';
import type { Runtime } from './runtime.ts';

/** The most entries the screened-URI cache keeps, whatever cachesize.screened says. */
export const SCREENED_MAX = 1 << 24;
/**
 * cachesize.screened unset: the screened URI cache starts at SCREENED_START
 * entries and doubles whenever it is full, up to SCREENED_GROW_MAX (about
 * 20 MB). A cycle that meets more URLs than the cache holds forgets URLs
 * its pages still link, and each then costs a trip to the crawl store
 * again (bench/README.md, *What changed*, 97bdb24). 2^17 entries take a table of
 * 2^18 slots, half of them used when full, and 8 MiB more per doubling.
 */
export const SCREENED_START = 1 << 17;
export const SCREENED_GROW_MAX = 1 << 19;
/** Links remembered as refused by their URL alone (refusedByUrl). */
const REFUSED_BY_URL_MAX = 10_000;

/**
 * The screened-URI cache kept from one cycle for the next (one per crawl
 * object, CrawlShared), cleared instead of made again. A new cache each
 * cycle allocated its table (a 4 MiB SharedArrayBuffer at SCREENED_START)
 * and its rings afresh, while the extract worker held the last cycles'
 * tables until its own rare garbage collections: tens of cycles' tables
 * alive at once, and glibc, its mmap threshold raised by the first ones
 * freed, served the next ones from its heap and kept that memory. The
 * daemon's RSS rose a little with every cycle (bench/README.md, *JavaScript
 * rendering*, the soak).
 */
export class ScreenedCaches {
  private kept: FingerprintCache | undefined;

  /** A cache of `max` entries, empty: the last one given back when its size fits, else a new one. */
  take(max: number, grows: boolean): FingerprintCache {
    const k = this.kept;
    this.kept = undefined;
    // A grown cache serves a cycle that may grow: it would grow as large again.
    if (k && (k.max === max || (grows && k.max > max))) {
      k.clear();
      return k;
    }
    return new FingerprintCache(max, { shared: true });
  }

  /** The cycle is over and the worker no longer reads the cache (takeBack went before any page of the next cycle). */
  giveBack(cache: FingerprintCache): void {
    this.kept = cache;
  }
}

export class LinkScreening {
  /** The screened-URI cache; replaced by a larger one when it grows. */
  cache: FingerprintCache;
  /** The most entries the cache may hold (cachesize.screened); 0 turns screening by cache off. */
  readonly max: number;
  /** The cache's id in the extract pool while it is lent to the worker (lend). */
  shareId: number | undefined;
  /** Whether the cache may grow (cachesize.screened unset): up to SCREENED_GROW_MAX. */
  private readonly grows: boolean;
  /**
   * Links the scope refused by their URL alone (ScopeDecision.byUrlAlone:
   * exclude_exts, the URL limits, domain and URI rules), with the refusal:
   * the static assets every page of a site links are judged once. Made
   * afresh with each cycle's set-up, since the rules may have changed.
   */
  private readonly refusedByUrl = new BoundedMap<string, { code: UriSkipCode; reason: string }>(REFUSED_BY_URL_MAX);
  /** The last parent URL parsed by admit(): a page's links share it (a hot path). */
  private parentCache: { href: string; url: URL; domain: string } | undefined;

  private readonly rt: Runtime;
  private readonly stats: CycleStats;
  private readonly events: CrawlEvents;
  private readonly pool: ExtractPool;

  /** Where the cache goes back at the end of the cycle, for the next one (undefined: dropped). */
  private readonly caches: ScreenedCaches | undefined;

  constructor(rt: Runtime, stats: CycleStats, events: CrawlEvents, pool: ExtractPool, screenedStart: number | undefined, caches?: ScreenedCaches) {
    this.rt = rt;
    this.caches = caches;
    this.stats = stats;
    this.events = events;
    this.pool = pool;
    const screened = rt.settings.cachesize.screened;
    this.grows = screened === undefined;
    this.max = screened ?? Math.max(1, screenedStart ?? SCREENED_START);
    // Sized for cachesize.screened (or SCREENED_START) when the cycle starts (the memory is only
    // touched as it fills): 41–73 bytes an entry, about 5 MB for SCREENED_START, 660 MB at most for 2^24.
    const size = Math.min(Math.max(1, this.max), SCREENED_MAX);
    this.cache = caches ? caches.take(size, this.grows) : new FingerprintCache(size, { shared: true });
  }

  /** Whether the cache is in use (cachesize.screened is not 0). */
  get enabled(): boolean {
    return this.max > 0;
  }

  /** Lends the cache's table to the extract worker for the length of a cycle. */
  lend(): void {
    this.shareId = this.pool.share(this.cache);
  }

  /** Takes the cache's table back from the extract worker, and keeps it for the next cycle (ScreenedCaches). */
  takeBack(): void {
    if (this.shareId !== undefined) this.pool.unshare(this.shareId);
    this.shareId = undefined;
    this.caches?.giveBack(this.cache);
  }

  /** Scope check of a URL found on `from` (a page of `fromSite`); the QueuedUri when it may be queued. */
  admit(from: LeasedUri, target: string, viaRedirect: boolean, fromSite: string): QueuedUri | undefined {
    const refused = this.refusedByUrl.get(target);
    if (refused) {
      // Marked again: the screened cache forgets its oldest entries sooner than refusedByUrl does.
      this.markRefused(target, refused.code);
      this.skipUri(fromSite, refused.code, target, refused.reason, from.url);
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
      if (d.byUrlAlone && this.max > 0) {
        this.refusedByUrl.set(target, { code: d.code!, reason: d.reason });
        this.markRefused(target, d.code!);
      }
      this.skipUri(fromSite, d.code!, target, d.reason, from.url);
      return undefined;
    }
    return {
      url: target, site: siteOf(url), depth: viaRedirect ? from.depth : from.depth + 1, hops, redirects: viaRedirect ? from.redirects + 1 : 0,
      // A redirect's (or a canonical's) target keeps the page whose link led to it: the parent
      // (CrawlData parentUrl, the Referer) is a page that links, never the URL that redirected.
      parent: viaRedirect ? from.parent : from.url, priority: this.rt.priorityOf(url, false), sub: this.rt.subOf(url),
    };
  }

  /** Counts one URI of `site` not queued, for `code`; logged with its reason (and the page it was found on) under log.screened. */
  skipUri(site: string, code: UriSkipCode, url: string, reason: string, from?: string): void {
    this.stats.uriSkips(this.stats.statsFor(site), code, 1);
    if (this.events.logScreened) this.events.emit({ type: 'skip', url, code, message: reason, ...(from !== undefined ? { from } : {}) });
  }

  /**
   * The links of a commit the cache does not hold; those it holds are
   * counted `ic` for the site whose statistics are `st`. Returns
   * `discovered` itself when screening is off or there are none.
   */
  dropScreened(discovered: QueuedUri[], st: SiteStats): QueuedUri[] {
    if (this.max <= 0 || discovered.length === 0) return discovered;
    const fresh = discovered.filter((q) => !this.cache.has(q.url));
    const cached = discovered.length - fresh.length;
    if (cached > 0) this.stats.uriSkips(st, 'ic', cached);
    return fresh;
  }

  /** Remembers a URL as seen in this cycle (bounded: the oldest is forgotten first). */
  screen(url: string, site: string): void {
    if (this.max <= 0) return;
    this.grow();
    this.cache.refresh(url, stringTag(site));
  }

  /**
   * Marks a URL the scope refused by its URL alone, where the extract
   * worker finds it and counts it under its code without sending it back.
   * Not while each refusal is to be logged with its reason (log.screened).
   */
  private markRefused(url: string, code: UriSkipCode): void {
    if (this.events.logScreened || this.max <= 0) return;
    this.grow();
    this.cache.refresh(url, reservedTag(URI_SKIP_CODE_LIST.indexOf(code)));
  }

  /**
   * cachesize.screened unset: a full cache is replaced by one twice its
   * size holding the same URLs, and lent to the extract worker in place of
   * the old one. Pages already sent with the old one's id are parsed
   * before the worker gives it back (the messages keep their order).
   */
  private grow(): void {
    if (!this.grows || !this.cache.full || this.cache.max >= SCREENED_GROW_MAX) return;
    this.cache = this.cache.grown(Math.min(this.cache.max * 2, SCREENED_GROW_MAX));
    const old = this.shareId;
    if (old !== undefined) {
      this.shareId = this.pool.share(this.cache);
      this.pool.unshare(old);
    }
    this.events.emit({ type: 'cycle', message: `screened URI cache grown to ${this.cache.max} entries (cachesize.screened is not set)` });
  }
}
