/**
 * robots.txt per site: fetched once, cached in the crawl store for
 * `robots_ttl` and in memory for the sites seen last, and turned into rules
 * by the response-code table (2xx obey, 3xx follow, 4xx allow all, 5xx
 * disallow all; MS-FSCCFG robots_auth_ignore and robots_tout_ignore).
 *
 * The memory cache is bounded (ROBOTS_MEMO_MAX sites) and keeps only the
 * rules for the crawler's own product token: kilobytes a site for every
 * site met would add up to gigabytes in a crawl of a million hosts
 * (bench/README.md, *Memory per site*, 8754bc7). A site that drops out of it is
 * read back from the crawl store (`cached`), or fetched again once its
 * stored copy is older than robots_ttl.
 */

import { BoundedMap } from '../core/bounded-map.ts';
import type { CrawlStore, RobotsRow } from '../store/crawl-store.ts';
import type { FetchOutcome, HttpFetcher, ProxySet } from '../fetch/http-fetcher.ts';
import { ALLOW_ALL, robotsFromOutcome, type AgentRules, type ParsedRobots, type RobotsFetchOutcome } from '../scope/robots.ts';

/** RFC 9309 2.3.1.2: follow at least five redirects for robots.txt. */
const MAX_ROBOTS_REDIRECTS = 5;

export interface RobotsSettings {
  readonly obey: boolean;
  readonly ttlS: number;
  readonly timeoutS: number;
  readonly authIgnore: boolean;
  readonly toutIgnore: boolean;
  readonly productToken: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly maxBytes: number;
  /** The proxies a robots.txt URL is fetched through (proxy); absent: none. */
  readonly proxyFor?: (url: URL) => ProxySet | undefined;
}

/** Sites whose robots rules stay in memory (the most recently fetched or read back). */
export const ROBOTS_MEMO_MAX = 10_000;

/** What is kept in memory of a site's robots.txt. */
export interface KnownRobots {
  /** robots.txt could not be fetched because no connection could be made: the site is unreachable. */
  readonly unreachable?: string;
  /** The rules for the crawler's product token. */
  readonly rules: AgentRules;
  readonly reason: string;
}

/** A robots.txt just fetched or read from the crawl store, with the whole parsed file (its Sitemap: lines). */
export interface SiteRobots extends KnownRobots {
  readonly parsed: ParsedRobots;
  readonly fromCache: boolean;
}

export interface RobotsFetchStats {
  bytesIn: number;
  bytesOut: number;
  requests: number;
}

function rowToOutcome(row: RobotsRow): RobotsFetchOutcome {
  if (row.status > 0) return { kind: 'response', status: row.status, body: row.body };
  if (row.status === 0) return { kind: 'timeout' };
  if (row.status === -2) return { kind: 'too-many-redirects' };
  return { kind: 'network-error' };
}

export class RobotsManager {
  private readonly memo: BoundedMap<string, KnownRobots>;
  private readonly store: CrawlStore;
  private readonly collection: string;
  private readonly fetcher: HttpFetcher;
  private readonly settings: RobotsSettings;
  private readonly now: () => number;

  constructor(store: CrawlStore, collection: string, fetcher: HttpFetcher, settings: RobotsSettings, now: () => number = Date.now, memoMax = ROBOTS_MEMO_MAX) {
    this.memo = new BoundedMap(memoMax);
    this.store = store;
    this.collection = collection;
    this.fetcher = fetcher;
    this.settings = settings;
    this.now = now;
  }

  /** The rules already known for a site (memory), without fetching or reading the store. */
  known(site: string): KnownRobots | undefined {
    if (!this.settings.obey) return this.allowAll();
    return this.memo.get(site);
  }

  /** Rules from the crawl store's cache when still fresh; undefined when robots.txt must be fetched. */
  async cached(site: string): Promise<SiteRobots | undefined> {
    if (!this.settings.obey) return this.allowAll();
    const row = await this.store.getRobots(this.collection, site);
    if (!row || this.now() - row.fetchedMs > this.settings.ttlS * 1000) return undefined;
    const r = robotsFromOutcome(rowToOutcome(row), { authIgnore: this.settings.authIgnore, toutIgnore: this.settings.toutIgnore });
    const out = { rules: r.robots.forAgent(this.settings.productToken), parsed: r.robots, reason: `${r.reason} (cached)`, fromCache: true };
    this.remember(site, out);
    return out;
  }

  /** Fetches robots.txt for the site (one request, plus redirects), stores and returns the rules. */
  async fetch(site: string, stats: RobotsFetchStats, signal?: AbortSignal, onSent?: () => void): Promise<SiteRobots> {
    let url = new URL('/robots.txt', site);
    let outcome: RobotsFetchOutcome | undefined;
    let row: RobotsRow | undefined;
    let unreachable: string | undefined;
    for (let hop = 0; hop <= MAX_ROBOTS_REDIRECTS && !outcome; hop++) {
      const res: FetchOutcome = await this.fetcher.fetch({
        url,
        headers: this.settings.headers,
        acceptCompression: true,
        http10: false,
        limits: {
          fetchTimeoutMs: this.settings.timeoutS * 1000, connectTimeoutMs: Math.min(this.settings.timeoutS * 1000, 10_000),
          cutOffBytes: this.settings.maxBytes, truncate: true, maxDecompressedBytes: this.settings.maxBytes * 4,
        },
        ...(signal ? { signal } : {}),
        ...(onSent ? { onSent } : {}),
        ...(this.settings.proxyFor ? { proxy: this.settings.proxyFor(url) } : {}),
      });
      stats.requests++;
      stats.bytesIn += res.bytesIn;
      stats.bytesOut += res.bytesOut;
      if (res.kind === 'failure') {
        if (res.connectFailure || res.blocked) unreachable = res.reason;
        const timeout = res.errorKey === 'ttl';
        outcome = timeout ? { kind: 'timeout' } : { kind: 'network-error' };
        row = { fetchedMs: this.now(), status: timeout ? 0 : -1, body: new Uint8Array() };
        break;
      }
      const location = res.headers.location;
      if (res.status >= 300 && res.status < 400 && location) {
        try {
          url = new URL(location, url);
          continue;
        } catch {
          // an unusable Location: treated as unavailable below
        }
      }
      if (res.status >= 300 && res.status < 400) {
        outcome = { kind: 'too-many-redirects' };
        row = { fetchedMs: this.now(), status: -2, body: new Uint8Array() };
      } else {
        outcome = { kind: 'response', status: res.status, body: res.body };
        row = { fetchedMs: this.now(), status: res.status, body: res.body };
      }
    }
    if (!outcome) {
      outcome = { kind: 'too-many-redirects' };
      row = { fetchedMs: this.now(), status: -2, body: new Uint8Array() };
    }
    const r = robotsFromOutcome(outcome, { authIgnore: this.settings.authIgnore, toutIgnore: this.settings.toutIgnore });
    const out: SiteRobots = { rules: r.robots.forAgent(this.settings.productToken), parsed: r.robots, reason: r.reason, fromCache: false, ...(unreachable ? { unreachable } : {}) };
    // A fetch cut short by a stop says nothing about the site: neither kept nor cached.
    if (signal?.aborted) return out;
    // An unreachable site is not cached in the store: the next cycle tries again.
    if (!unreachable) await this.store.putRobots(this.collection, site, row!);
    this.remember(site, out);
    return out;
  }

  /** robots: no: every site's rules allow everything. */
  private allowAll(): SiteRobots {
    return { rules: ALLOW_ALL.forAgent(this.settings.productToken), parsed: ALLOW_ALL, reason: 'robots is no', fromCache: true };
  }

  private remember(site: string, r: SiteRobots): void {
    this.memo.refresh(site, { rules: r.rules, reason: r.reason, ...(r.unreachable !== undefined ? { unreachable: r.unreachable } : {}) });
  }
}
