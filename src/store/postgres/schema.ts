/**
 * The PostgreSQL dialect's tables, as a store of the current version creates them.
 *
 *   trawl_meta (key PK)              schema version
 *   collections (name PK)            configuration XML, state, epoch
 *   frontier (id PK; collection+url unique)
 *        state 0 queued │ 1 leased │ 2 done; epoch = last cycle it was queued or fetched in
 *        lease_owner, lease_expires: who holds a leased row, and until when
 *        index (collection, site, priority, seq) of the queued only ◄── lease() walks this
 *        index (collection, lease_expires) of the leased only       ◄── recoverLeases(), expired leases
 *   records (id PK, in the order they were first written; collection+url unique)
 *        index (collection, checksum)                    ◄── duplicate detection
 *        index (collection, site, status)                ◄── site deletes and feeds
 *   sites (collection, site PK)      robots.txt cache, statistics JSON
 *   sitemap_meta, feed_links         sitemap metadata, each channel's links
 *   change_history (collection, url PK)  refresh_mode adaptive: changes seen per URI
 *   cookie_jars (collection PK)      the collection's cookies (use_cookies), as the jar serialized them
 *   cycles (collection, id PK)       each refresh cycle's ID and Elastic crawl status
 *   feed_outbox (id PK; collection+destination+url unique)
 *                                    content submissions waiting to be sent
 *   frontier_seq_back, frontier_seq_front   FIFO positions (see below)
 *
 * How it differs from the SQLite dialect, and why:
 *
 * - Records have a (collection, url) index of their own instead of being
 *   found through their frontier row (SQLite's schema version 3). In
 *   PostgreSQL a row's id never comes back after a delete, a record is
 *   written with one `INSERT … ON CONFLICT` that keeps its id (its position
 *   in listRecordPage), and a node can read a record without the frontier.
 * - FIFO positions come from two sequences shared by every process on the
 *   store, instead of counters in one process's memory: a call takes one
 *   value and numbers its URIs from it. `frontier_seq_back` counts up by
 *   SEQ_BLOCK (appended URIs: value + their position in the batch);
 *   `frontier_seq_front` counts down by SEQ_BLOCK (front-inserted URIs: the
 *   later call goes first, its batch in its own order).
 * - Leases have an owner and an expiry (see postgres-crawl-store.ts).
 * - Text keys compare byte by byte (COLLATE "C"), as SQLite's do, so that
 *   "in URL order" and "in site order" do not depend on the database's locale.
 */

/**
 * 2: the cycles table (each cycle's ID and status survive a restart) and
 * the change_history table (refresh_mode adaptive), which SCHEMA creates:
 * nothing to move.
 *
 * 1: the first version (the tables above).
 */
export const SCHEMA_VERSION = 2;

/** The URIs of one call take consecutive positions within a block of this size (larger calls are split). */
export const SEQ_BLOCK = 1 << 20;

/** The columns of a record, in the order the record statements bind them ($2 … $20, after the collection). */
export const RECORD_COLUMNS = [
  'url', 'site', 'status', 'http_status', 'checksum', 'last_crawled_ms', 'etag', 'last_modified', 'error_count',
  'skip_code', 'mime', 'size', 'content_ref', 'duplicate_of', 'redirect_to', 'depth', 'parent', 'epoch',
] as const;

/** Every table of the collection's rows: deleteCollection empties each of them. */
export const COLLECTION_TABLES = ['frontier', 'records', 'sites', 'sitemap_meta', 'feed_links', 'feed_outbox', 'cookie_jars', 'cycles', 'change_history'] as const;

/** Creates what is missing; harmless on a store of the current version. */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS trawl_meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS collections (
  name text COLLATE "C" PRIMARY KEY,
  config_xml text NOT NULL,
  state text NOT NULL DEFAULT 'crawling',
  epoch integer NOT NULL DEFAULT 0,
  cycle_started_ms bigint,
  cycle_ended_ms bigint,
  created_ms bigint NOT NULL,
  extra text NOT NULL DEFAULT '{}'
);
CREATE SEQUENCE IF NOT EXISTS frontier_seq_back INCREMENT BY ${SEQ_BLOCK} MINVALUE ${SEQ_BLOCK} START WITH ${SEQ_BLOCK};
CREATE SEQUENCE IF NOT EXISTS frontier_seq_front INCREMENT BY -${SEQ_BLOCK} MAXVALUE -${SEQ_BLOCK} START WITH -${SEQ_BLOCK};
CREATE TABLE IF NOT EXISTS frontier (
  id bigserial PRIMARY KEY,
  collection text COLLATE "C" NOT NULL,
  url text COLLATE "C" NOT NULL,
  site text COLLATE "C" NOT NULL,
  state smallint NOT NULL,
  priority integer NOT NULL,
  seq bigint NOT NULL,
  epoch integer NOT NULL,
  depth integer NOT NULL,
  hops integer NOT NULL,
  redirects integer NOT NULL,
  retries integer NOT NULL DEFAULT 0,
  parent text,
  sub text,
  flags integer NOT NULL DEFAULT 0,
  lease_owner text,
  lease_expires timestamptz,
  UNIQUE (collection, url)
);
CREATE INDEX IF NOT EXISTS frontier_queue ON frontier (collection, site, priority, seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS frontier_leased ON frontier (collection, lease_expires) WHERE state = 1;
CREATE TABLE IF NOT EXISTS records (
  id bigserial PRIMARY KEY,
  collection text COLLATE "C" NOT NULL,
  url text COLLATE "C" NOT NULL,
  site text COLLATE "C" NOT NULL,
  status text NOT NULL,
  http_status integer,
  checksum text COLLATE "C",
  last_crawled_ms bigint NOT NULL,
  etag text,
  last_modified text,
  error_count integer NOT NULL,
  skip_code text,
  mime text,
  size bigint,
  content_ref text,
  duplicate_of text,
  redirect_to text,
  depth integer NOT NULL,
  parent text,
  epoch integer NOT NULL,
  UNIQUE (collection, url)
);
CREATE INDEX IF NOT EXISTS records_checksum ON records (collection, checksum);
CREATE INDEX IF NOT EXISTS records_site ON records (collection, site, status);
CREATE INDEX IF NOT EXISTS records_duplicate_of ON records (collection, duplicate_of, url) WHERE duplicate_of IS NOT NULL;
CREATE TABLE IF NOT EXISTS sitemap_meta (
  collection text COLLATE "C" NOT NULL,
  url text COLLATE "C" NOT NULL,
  lastmod text,
  changefreq text,
  priority double precision,
  PRIMARY KEY (collection, url)
);
CREATE TABLE IF NOT EXISTS change_history (
  collection text COLLATE "C" NOT NULL,
  url text COLLATE "C" NOT NULL,
  checks integer NOT NULL,
  changes integer NOT NULL,
  since_ms double precision NOT NULL,
  last_change_ms double precision,
  PRIMARY KEY (collection, url)
);
CREATE TABLE IF NOT EXISTS feed_links (
  collection text COLLATE "C" NOT NULL,
  feed text COLLATE "C" NOT NULL,
  url text COLLATE "C" NOT NULL,
  first_seen_ms double precision NOT NULL,
  PRIMARY KEY (collection, feed, url)
);
CREATE TABLE IF NOT EXISTS feed_outbox (
  id bigserial PRIMARY KEY,
  collection text COLLATE "C" NOT NULL,
  destination text COLLATE "C" NOT NULL,
  url text COLLATE "C" NOT NULL,
  op text NOT NULL,
  ver integer NOT NULL DEFAULT 0,
  UNIQUE (collection, destination, url)
);
CREATE INDEX IF NOT EXISTS feed_outbox_order ON feed_outbox (collection, destination, id);
CREATE TABLE IF NOT EXISTS sites (
  collection text COLLATE "C" NOT NULL,
  site text COLLATE "C" NOT NULL,
  robots_fetched_ms bigint,
  robots_status integer,
  robots_body bytea,
  stats text,
  PRIMARY KEY (collection, site)
);
CREATE TABLE IF NOT EXISTS cookie_jars (
  collection text COLLATE "C" PRIMARY KEY,
  jar text NOT NULL,
  saved_ms bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS cycles (
  collection text COLLATE "C" NOT NULL,
  id text NOT NULL,
  epoch bigint NOT NULL,
  status text NOT NULL,
  status_ms bigint NOT NULL,
  started_ms bigint NOT NULL,
  ended_ms bigint,
  stopped_by text,
  PRIMARY KEY (collection, id)
);
`;
