/**
 * The sites role of the crawl store: what the crawl keeps per site and
 * per channel besides its URIs: the robots.txt cache, the site statistics
 * (opaque JSON the engine writes), sitemap metadata and the links each
 * channel (RSS/Atom/RDF feed) has listed.
 */

export interface RobotsRow {
  readonly fetchedMs: number;
  /** HTTP status, or 0 for timeout, -1 for a network error. */
  readonly status: number;
  readonly body: Uint8Array;
}

/** What a sitemap said of a URL, kept for later scheduling. */
export interface SitemapMeta {
  readonly url: string;
  readonly lastmod: string | undefined;
  readonly changefreq: string | undefined;
  readonly priority: number | undefined;
}

/**
 * What trawl observed of a URI's changes (refresh_mode adaptive, its
 * change_history rule): written only by adaptive collections.
 */
export interface ChangeHistory {
  readonly url: string;
  /** Fetches that compared the page with the stored copy (a 200 or a 304 with a record before it). */
  readonly checks: number;
  /** Of those, the ones that found it changed (another checksum, or a later Last-Modified). */
  readonly changes: number;
  /** Where the observation window starts (ms): the first Last-Modified seen, else the first fetch. */
  readonly sinceMs: number;
  /** The last change seen (ms): its Last-Modified when the server sent one, else the fetch that found it; undefined: none yet. */
  readonly lastChangeMs: number | undefined;
}

/** One site's statistics as saved (opaque JSON). */
export interface SiteStatsRow {
  readonly site: string;
  readonly json: string;
}

/** Per-site and per-channel state. Each method is atomic on its own; every put replaces and is idempotent. */
export interface SiteStore {
  /** The site's cached robots.txt; undefined when none was saved (its age is the caller's to judge). */
  getRobots(collection: string, site: string): Promise<RobotsRow | undefined>;
  putRobots(collection: string, site: string, row: RobotsRow): Promise<void>;
  /** The site's last saved statistics (opaque JSON), or undefined. */
  getSiteStats(collection: string, site: string): Promise<string | undefined>;
  putSiteStats(collection: string, site: string, json: string): Promise<void>;
  /** putSiteStats for many sites in one transaction (a cycle's end saves every site's). */
  putSiteStatsMany(collection: string, rows: ReadonlyArray<SiteStatsRow>): Promise<void>;
  /**
   * The collection's sites' statistics in site order: all of them, or a page
   * of at most `limit` sites after the site `after` (a broad crawl reads them
   * page by page instead of in one answer). A page shorter than `limit` is the last.
   */
  listSiteStats(collection: string, page?: { readonly after?: string; readonly limit: number }): Promise<Array<{ site: string; json: string }>>;

  /** Records sitemap metadata (lastmod, changefreq, priority); a later entry for a URL replaces the earlier one. */
  putSitemapMeta(collection: string, entries: readonly SitemapMeta[]): Promise<void>;
  /** What the last sitemap said of the URL; undefined when none listed it. */
  getSitemapMeta(collection: string, url: string): Promise<SitemapMeta | undefined>;
  /** Every URL's sitemap metadata of the collection (refresh_mode adaptive reads them once per refresh cycle). */
  listSitemapMeta(collection: string): Promise<SitemapMeta[]>;
  /** Records change histories (refresh_mode adaptive); a later entry for a URL replaces the earlier one. */
  putChangeHistory(collection: string, entries: readonly ChangeHistory[]): Promise<void>;
  /** Every change history of the collection. */
  listChangeHistory(collection: string): Promise<ChangeHistory[]>;
  /**
   * Notes links of a channel (first-seen time is kept for links already
   * known), then expires the oldest beyond `maxCount` and those older than
   * `maxAgeMs` (0 = no age limit). Returns the expired links, which are
   * forgotten (MS-FSCCFG 2.2.4.30 max_link_count, max_link_age).
   */
  noteFeedLinks(collection: string, feed: string, urls: readonly string[], nowMs: number, maxCount: number, maxAgeMs: number): Promise<string[]>;
}
