/**
 * The SQLite dialect's tables, as a store of the current version creates them.
 *
 *   collections (name PK)            configuration XML, state, epoch
 *   frontier (id PK; collection+url unique)
 *        state 0 queued │ 1 leased │ 2 done; epoch = last cycle it was queued or fetched in
 *        record_id ──► records.id: the URI's record (NULL: never crawled)
 *        index (collection, site, priority, seq) of the queued only ◄── lease() walks this
 *        index (collection) of the leased only                      ◄── recoverLeases()
 *   records (id PK, in the order they were first written)  the crawl store;
 *        found by URL through the frontier row that owns it
 *        index (collection, checksum)                    ◄── duplicate detection
 *        index (collection, site, status)                ◄── site deletes and feeds
 *   sites (collection, site PK)      robots.txt cache, statistics JSON
 *   cookie_jars (collection PK)      the collection's cookies (use_cookies), as the jar serialized them
 *   cycles (collection, id PK)       each refresh cycle's ID and Elastic crawl status
 *   sitemap_meta, feed_links         sitemap metadata, each channel's links
 *   change_history (collection, url PK)  refresh_mode adaptive: changes seen per URI
 *   feed_outbox (id PK; collection+destination+url unique)
 *                                    content submissions waiting to be sent
 *
 * A store of an earlier version is brought to this one by migrations.ts.
 */

/**
 * 5: the cycles table (each cycle's ID and status survive a restart) and
 * the change_history table (refresh_mode adaptive), which SCHEMA creates.
 *
 * 4: the cookie_jars table (use_cookies: the jar survives a restart).
 *
 * 3: a record is found by URL through its frontier row (`record_id`), so
 * the records table has no index over the URL of its own, and a
 * completion writes one random index page fewer. A record written outside
 * a crawl for a URL the frontier does not hold (putRecord) gets a frontier
 * row of its own, done, and queued for no cycle (epoch 0).
 *
 * 2: the frontier's indexes hold only the rows that need them (queued for
 * leasing, leased for recovery), and records have a rowid. Version 1
 * indexed every frontier row by site and state, so each lease and each
 * completion moved two index entries, and its records table was keyed by
 * (collection, url), which every records index repeated.
 *
 * What each version saved: bench/README.md, *What changed*.
 */
export const SCHEMA_VERSION = 5;

export const RECORD_FIELDS = `collection TEXT NOT NULL,
  url TEXT NOT NULL,
  site TEXT NOT NULL,
  status TEXT NOT NULL,
  http_status INTEGER,
  checksum TEXT,
  last_crawled_ms INTEGER NOT NULL,
  etag TEXT,
  last_modified TEXT,
  error_count INTEGER NOT NULL,
  skip_code TEXT,
  mime TEXT,
  size INTEGER,
  content_ref TEXT,
  duplicate_of TEXT,
  redirect_to TEXT,
  depth INTEGER NOT NULL,
  parent TEXT,
  epoch INTEGER NOT NULL`;

/** The records table (version 3: no index over the URL; see SCHEMA_VERSION). */
export const RECORDS_TABLE = `CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  ${RECORD_FIELDS}
);`;

/** The columns of a record, in the order insertRecord binds them. */
export const RECORD_COLUMNS = `collection, url, site, status, http_status, checksum, last_crawled_ms, etag, last_modified, error_count,
  skip_code, mime, size, content_ref, duplicate_of, redirect_to, depth, parent, epoch`;

/** Every table of the collection's rows: deleteCollection empties each of them. */
export const COLLECTION_TABLES = ['frontier', 'records', 'sites', 'sitemap_meta', 'feed_links', 'feed_outbox', 'cookie_jars', 'cycles', 'change_history'] as const;

/** Creates what is missing; harmless on a store of the current version. */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS collections (
  name TEXT PRIMARY KEY,
  config_xml TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'crawling',
  epoch INTEGER NOT NULL DEFAULT 0,
  cycle_started_ms INTEGER,
  cycle_ended_ms INTEGER,
  created_ms INTEGER NOT NULL,
  extra TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS frontier (
  id INTEGER PRIMARY KEY,
  collection TEXT NOT NULL,
  url TEXT NOT NULL,
  site TEXT NOT NULL,
  state INTEGER NOT NULL,
  priority INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  depth INTEGER NOT NULL,
  hops INTEGER NOT NULL,
  redirects INTEGER NOT NULL,
  retries INTEGER NOT NULL DEFAULT 0,
  parent TEXT,
  sub TEXT,
  flags INTEGER NOT NULL DEFAULT 0,
  record_id INTEGER,
  UNIQUE (collection, url)
);
CREATE INDEX IF NOT EXISTS frontier_queue ON frontier (collection, site, priority, seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS frontier_leased ON frontier (collection) WHERE state = 1;
${RECORDS_TABLE}
CREATE INDEX IF NOT EXISTS records_checksum ON records (collection, checksum);
CREATE INDEX IF NOT EXISTS records_site ON records (collection, site, status);
CREATE INDEX IF NOT EXISTS records_duplicate_of ON records (collection, duplicate_of, url) WHERE duplicate_of IS NOT NULL;
CREATE TABLE IF NOT EXISTS sitemap_meta (
  collection TEXT NOT NULL,
  url TEXT NOT NULL,
  lastmod TEXT,
  changefreq TEXT,
  priority REAL,
  PRIMARY KEY (collection, url)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS change_history (
  collection TEXT NOT NULL,
  url TEXT NOT NULL,
  checks INTEGER NOT NULL,
  changes INTEGER NOT NULL,
  since_ms INTEGER NOT NULL,
  last_change_ms INTEGER,
  PRIMARY KEY (collection, url)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS feed_links (
  collection TEXT NOT NULL,
  feed TEXT NOT NULL,
  url TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  PRIMARY KEY (collection, feed, url)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS feed_outbox (
  id INTEGER PRIMARY KEY,
  collection TEXT NOT NULL,
  destination TEXT NOT NULL,
  url TEXT NOT NULL,
  op TEXT NOT NULL,
  ver INTEGER NOT NULL DEFAULT 0,
  UNIQUE (collection, destination, url)
);
CREATE INDEX IF NOT EXISTS feed_outbox_order ON feed_outbox (collection, destination, id);
CREATE TABLE IF NOT EXISTS sites (
  collection TEXT NOT NULL,
  site TEXT NOT NULL,
  robots_fetched_ms INTEGER,
  robots_status INTEGER,
  robots_body BLOB,
  stats TEXT,
  PRIMARY KEY (collection, site)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cookie_jars (
  collection TEXT PRIMARY KEY,
  jar TEXT NOT NULL,
  saved_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS cycles (
  collection TEXT NOT NULL,
  id TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  status TEXT NOT NULL,
  status_ms INTEGER NOT NULL,
  started_ms INTEGER NOT NULL,
  ended_ms INTEGER,
  stopped_by TEXT,
  PRIMARY KEY (collection, id)
) WITHOUT ROWID;
`;
