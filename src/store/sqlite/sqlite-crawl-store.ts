/**
 * The embedded crawl store: SQLite through Node's built-in `node:sqlite`,
 * in WAL mode, one database file in the data directory.
 *
 *   collections (name PK)            configuration XML, state, epoch
 *   frontier (id PK; collection+url unique)
 *        state 0 queued │ 1 leased │ 2 done; epoch = last cycle it was queued in
 *        record_id ──► records.id: the URI's record (NULL: never crawled)
 *        index (collection, site, priority, seq) of the queued only ◄── lease() walks this
 *        index (collection) of the leased only                      ◄── recoverLeases()
 *   records (id PK, in the order they were first written)  the crawl store;
 *        found by URL through the frontier row that owns it
 *        index (collection, checksum)                    ◄── duplicate detection
 *        index (collection, site, status)                ◄── site deletes and feeds
 *   sites (collection, site PK)      robots.txt cache, statistics JSON
 *   feed_outbox (id PK; collection+destination+url unique)
 *                                    content submissions waiting to be sent
 *
 * Durability: WAL with synchronous=NORMAL. A committed transaction survives
 * the process being killed (kill -9); only a power loss can take the last
 * transactions, and then the URIs involved are simply fetched again.
 *
 * node:sqlite is synchronous; the async methods only wrap it so that the
 * PostgreSQL dialect can implement the same interface.
 */

import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { isDiskFull } from '../../core/disk-full.ts';
import { isTrawlError, TrawlError } from '../../core/errors.ts';
import type { DocSkipCode } from '../../core/skip-codes.ts';
import type {
  CollectionRow, Completion, CrawlStore, FeedOp, FeedSelection, FrontierCounts, LeasedUri, PendingFeedOp, QueuedUri, RecordStatus, RobotsRow,
  RecordPage, RecordPageRequest, SitemapMeta, SiteWork, UriRecord,
} from '../crawl-store.ts';
import { CRASH_STRIKE, CRASH_STRIKES_MASK } from '../crawl-store.ts';

/** A pending `add` stays an `add` when an `update` replaces it (the destination has still not had the document). */
const FEED_UPSERT = `ON CONFLICT (collection, destination, url) DO UPDATE SET
  op = CASE WHEN feed_outbox.op = 'add' AND excluded.op = 'update' THEN 'add' ELSE excluded.op END, ver = feed_outbox.ver + 1`;
const FEEDABLE = "status IN ('stored', 'unchanged') AND content_ref IS NOT NULL";
/** A URL's record, through the frontier row that owns it (schema version 3); binds collection and url. */
const RECORD_OF_URL = 'frontier f JOIN records r ON r.id = f.record_id AND r.url = f.url WHERE f.collection = ? AND f.url = ?';

/**
 * 3: a record is found by URL through its frontier row (`record_id`), so
 * the records table has no index over the URL of its own. Every crawled URI
 * had its URL in two unique indexes, the frontier's and the records', each
 * entry written at a random page when the URI was first queued and first
 * crawled; now records are appended and only the frontier's index holds
 * URLs. Replaying the bench crawl's store calls (bench/store-replay.ts):
 * 28.8 → 21.6 KB written and 49 → 35 KB read per completed URI, 79 → 67 µs
 * of CPU, a database 8% smaller. A record written outside a crawl for a
 * URL the frontier does not hold (putRecord) gets a frontier row of its own,
 * done, and queued for no cycle (epoch 0).
 *
 * 2: the frontier's indexes hold only the rows that need them (queued for
 * leasing, leased for recovery), and records have a rowid. Version 1
 * indexed every frontier row by site and state, so each lease and each
 * completion moved two index entries, and its records table was keyed by
 * (collection, url), which every records index repeated. Replaying the
 * bench crawl's store calls (bench/store-replay.ts) wrote 37.7 KB per
 * completed URI instead of 62.5 KB, read 32 KB instead of 72 KB, and took
 * about a quarter less CPU. Stores of version 1 are migrated when opened.
 */
const SCHEMA_VERSION = 3;

/**
 * WAL pages between automatic checkpoints (SQLite's default is 1,000). A
 * checkpoint copies every page the WAL holds into the database file and
 * syncs it; the pages a crawl dirties most (the frontier's queue ends, the
 * site rows) are copied once per checkpoint however often they were
 * rewritten, so fewer, larger checkpoints write less. On the bench crawl's
 * replayed store calls 10,000 (a WAL of about 40 MiB) wrote 62 KB per URI
 * instead of 79 KB and took 10-20% less CPU; 30,000 saved a few percent more
 * for a WAL three times the size.
 */
const WAL_AUTOCHECKPOINT = 10_000;

/**
 * SQLite's page cache for this connection, in KiB (a negative cache_size).
 * At SQLite's default of 2 MiB a completion read 7.7 B-tree pages back
 * from the operating system's page cache, one pread() each, because the
 * indexes it touches at random outgrow the cache within seconds; the
 * storage thread spent an eighth of its CPU in those reads. On the bench
 * crawl's replayed store calls (`npm run bench:store`, bench/README.md):
 * 2 MiB 60–64 µs of CPU per URI, 4 MiB 57, 8 MiB 54 (2.2 reads a URI),
 * 16 and 32 MiB 55–57 (SQLite's own lookups grow). In the crawl itself
 * the storage thread went from about 0.092 to 0.086 ms a page, for 8–10
 * MiB more at the peak. The cache is filled only as the store grows, so a
 * small crawl does not pay for it.
 */
const PAGE_CACHE_KIB = 8192;

/** SQLite's result code for a database file locked by another connection. */
const SQLITE_BUSY = 5;

/** A group commit is written at once when this many completions wait. */
const COMMIT_BATCH_MAX = 256;

const RECORD_FIELDS = `collection TEXT NOT NULL,
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
const RECORDS_TABLE = `CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  ${RECORD_FIELDS}
);`;

/** Version 2's records table, which the migration from version 1 creates on the way to version 3. */
const RECORDS_TABLE_V2 = `CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  ${RECORD_FIELDS},
  UNIQUE (collection, url)
);`;

const RECORD_COLUMNS = `collection, url, site, status, http_status, checksum, last_crawled_ms, etag, last_modified, error_count,
  skip_code, mime, size, content_ref, duplicate_of, redirect_to, depth, parent, epoch`;

/**
 * Version 1 to 2: the frontier's full indexes give way to the partial ones
 * SCHEMA creates, and the records move into the rowid table (its indexes
 * are created again by SCHEMA).
 */
const MIGRATE_FROM_1 = `
DROP INDEX IF EXISTS frontier_site;
DROP INDEX IF EXISTS frontier_state;
DROP INDEX IF EXISTS records_checksum;
DROP INDEX IF EXISTS records_site;
ALTER TABLE records RENAME TO records_v1;
${RECORDS_TABLE_V2}
INSERT INTO records (${RECORD_COLUMNS}) SELECT ${RECORD_COLUMNS} FROM records_v1 ORDER BY collection, url;
DROP TABLE records_v1;
`;

/**
 * Version 2 to 3: each frontier row names its record, a record without a
 * frontier row gets one (done, epoch 0), and the records move into a table
 * without the (collection, url) index, keeping their ids. The links are
 * made while version 2's indexes still answer both lookups.
 */
const MIGRATE_FROM_2 = `
DROP INDEX IF EXISTS records_checksum;
DROP INDEX IF EXISTS records_site;
ALTER TABLE frontier ADD COLUMN record_id INTEGER;
INSERT INTO frontier (collection, url, site, state, priority, seq, epoch, depth, hops, redirects, parent)
  SELECT r.collection, r.url, r.site, 2, 0, 0, 0, r.depth, r.depth, 0, r.parent FROM records r
  WHERE NOT EXISTS (SELECT 1 FROM frontier f WHERE f.collection = r.collection AND f.url = r.url);
UPDATE frontier SET record_id = (SELECT r.id FROM records r WHERE r.collection = frontier.collection AND r.url = frontier.url);
ALTER TABLE records RENAME TO records_v2;
${RECORDS_TABLE}
INSERT INTO records (id, ${RECORD_COLUMNS}) SELECT id, ${RECORD_COLUMNS} FROM records_v2;
DROP TABLE records_v2;
`;

const SCHEMA = `
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
CREATE TABLE IF NOT EXISTS sitemap_meta (
  collection TEXT NOT NULL,
  url TEXT NOT NULL,
  lastmod TEXT,
  changefreq TEXT,
  priority REAL,
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
`;

type Row = Record<string, unknown>;

const str = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v));
const num = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));

function toLeased(r: Row): LeasedUri {
  return {
    id: Number(r.id), url: String(r.url), site: String(r.site), depth: Number(r.depth), hops: Number(r.hops), redirects: Number(r.redirects),
    parent: str(r.parent), priority: Number(r.priority), sub: str(r.sub), retries: Number(r.retries), flags: Number(r.flags ?? 0),
    crawled: r.record_id !== null && r.record_id !== undefined,
  };
}

function toRecord(r: Row): UriRecord {
  return {
    url: String(r.url), site: String(r.site), status: String(r.status) as RecordStatus, httpStatus: num(r.http_status), checksum: str(r.checksum),
    lastCrawledMs: Number(r.last_crawled_ms), etag: str(r.etag), lastModified: str(r.last_modified), errorCount: Number(r.error_count),
    skipCode: str(r.skip_code) as DocSkipCode | undefined, mime: str(r.mime), size: num(r.size), contentRef: str(r.content_ref),
    duplicateOf: str(r.duplicate_of), redirectTo: str(r.redirect_to), depth: Number(r.depth), parent: str(r.parent), epoch: Number(r.epoch),
  };
}

function toCollection(r: Row): CollectionRow {
  return {
    name: String(r.name), configXml: String(r.config_xml), state: String(r.state), epoch: Number(r.epoch), cycleStartedMs: num(r.cycle_started_ms),
    cycleEndedMs: num(r.cycle_ended_ms), createdMs: Number(r.created_ms), extra: JSON.parse(String(r.extra)) as Record<string, unknown>,
  };
}

/**
 * The crawl store holds the stored configurations, secrets included, so the
 * file is created readable by its owner only (0600), and an existing one is
 * narrowed to that. SQLite gives the -wal and -journal files it creates the
 * database file's mode; existing ones are narrowed here too.
 */
function ownerOnly(path: string): void {
  try {
    closeSync(openSync(path, 'a', 0o600));
    for (const p of [path, `${path}-wal`, `${path}-journal`]) {
      if (existsSync(p) && (statSync(p).mode & 0o077) !== 0) chmodSync(p, 0o600);
    }
  } catch {
    // Opening the database reports what is wrong with the path, with the store's own message.
  }
}

export class SqliteCrawlStore implements CrawlStore {
  readonly path: string;
  private readonly db: DatabaseSync;
  private readonly q: Record<string, StatementSync>;
  /** FIFO positions: appended URIs take nextSeq upwards, front-inserted ones frontSeq downwards. */
  private nextSeq: number;
  private frontSeq: number;

  /** How long a completion may wait for others to share its commit (ms); 0: the end of the event-loop turn. */
  private readonly commitWindowMs: number;

  /**
   * `busyTimeoutMs`: how long opening waits for another process that holds
   * the store (default 5 s).
   *
   * The store is opened in EXCLUSIVE locking mode: this connection holds the
   * file from its first read until close, and SQLite keeps the WAL index in
   * its own memory instead of the -shm file. Each transaction otherwise
   * took and dropped shared-memory locks with fcntl(), about 5.5 system
   * calls per crawled page (counted with `strace -c` on the 5 × 200 bench
   * site). It also means one process per data directory: a second `trawl
   * crawl` or `trawl serve` on it stops with a clear error instead of
   * sharing the frontier. A crash releases the lock with the process.
   */
  constructor(path: string, opts: { commitWindowMs?: number; busyTimeoutMs?: number } = {}) {
    this.path = path;
    this.commitWindowMs = opts.commitWindowMs ?? 3;
    if (path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      ownerOnly(path);
    }
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(path);
      db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}; PRAGMA locking_mode = EXCLUSIVE;`);
      db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT}; PRAGMA cache_size = -${PAGE_CACHE_KIB};`);
      this.db = db;
      this.prepareSchema(path);
    } catch (err) {
      if (db?.isOpen) db.close();
      if ((err as { errcode?: number }).errcode === SQLITE_BUSY) {
        throw new TrawlError('TRAWL_ERR_IO', `the crawl store ${path} is in use by another process (another trawl crawl or trawl serve on the same data directory?)`, { cause: err });
      }
      if (isTrawlError(err)) throw err;
      throw new TrawlError('TRAWL_ERR_IO', `cannot open the crawl store ${path}: ${(err as Error).message}`, { cause: err });
    }
    const p = (sql: string): StatementSync => this.db.prepare(sql);
    this.q = {
      putCollection: p(`INSERT INTO collections (name, config_xml, created_ms) VALUES (?, ?, ?)
                        ON CONFLICT (name) DO UPDATE SET config_xml = excluded.config_xml`),
      getCollection: p('SELECT * FROM collections WHERE name = ?'),
      listCollections: p('SELECT * FROM collections ORDER BY name'),
      enqueue: p(`INSERT INTO frontier (collection, url, site, state, priority, seq, epoch, depth, hops, redirects, retries, parent, sub, flags)
                  VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)
                  ON CONFLICT (collection, url) DO UPDATE SET state = 0, priority = excluded.priority, seq = excluded.seq, epoch = excluded.epoch,
                    depth = excluded.depth, hops = excluded.hops, redirects = excluded.redirects, retries = 0, parent = excluded.parent, sub = excluded.sub,
                    flags = excluded.flags
                  WHERE frontier.epoch < excluded.epoch`),
      requeue: p(`INSERT INTO frontier (collection, url, site, state, priority, seq, epoch, depth, hops, redirects, retries, parent, sub, flags)
                  VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)
                  ON CONFLICT (collection, url) DO UPDATE SET state = 0, priority = excluded.priority, seq = excluded.seq, epoch = excluded.epoch, retries = 0,
                    flags = frontier.flags | excluded.flags
                  WHERE frontier.state <> 1`),
      refsOfUrl: p(`SELECT r.content_ref FROM ${RECORD_OF_URL} AND r.content_ref IS NOT NULL`),
      refsOfSite: p('SELECT url, content_ref FROM records WHERE collection = ? AND site = ? AND content_ref IS NOT NULL ORDER BY url'),
      delRecord: p('DELETE FROM records WHERE id = (SELECT record_id FROM frontier WHERE collection = ? AND url = ?) AND url = ?'),
      // A leased row stays (its fetch is under way) without its record; delFrontier deletes the others.
      unlinkRecord: p('UPDATE frontier SET record_id = NULL WHERE collection = ? AND url = ? AND state = 1 AND record_id IS NOT NULL'),
      unlinkSiteRecords: p('UPDATE frontier SET record_id = NULL WHERE collection = ? AND site = ? AND state = 1 AND record_id IS NOT NULL'),
      delFrontier: p('DELETE FROM frontier WHERE collection = ? AND url = ? AND state <> 1'),
      delSiteRecords: p('DELETE FROM records WHERE collection = ? AND site = ?'),
      // No index holds the done URIs by site: forgetting a site reads the collection's frontier once.
      delSiteFrontier: p('DELETE FROM frontier WHERE collection = ? AND site = ? AND state <> 1'),
      putSitemapMeta: p(`INSERT INTO sitemap_meta (collection, url, lastmod, changefreq, priority) VALUES (?, ?, ?, ?, ?)
                         ON CONFLICT (collection, url) DO UPDATE SET lastmod = excluded.lastmod, changefreq = excluded.changefreq, priority = excluded.priority`),
      getSitemapMeta: p('SELECT * FROM sitemap_meta WHERE collection = ? AND url = ?'),
      noteFeedLink: p('INSERT INTO feed_links (collection, feed, url, first_seen_ms) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING'),
      feedLinks: p('SELECT url, first_seen_ms FROM feed_links WHERE collection = ? AND feed = ? ORDER BY first_seen_ms DESC'),
      dropFeedLink: p('DELETE FROM feed_links WHERE collection = ? AND feed = ? AND url = ?'),
      seen: p('SELECT 1 FROM frontier WHERE collection = ? AND url = ? AND epoch >= ?'),
      sitesWithWork: p('SELECT site, count(*) AS n FROM frontier WHERE collection = ? AND state = 0 AND (flags & 16) = 0 GROUP BY site ORDER BY min(seq)'),
      // Quarantined URIs (flag 16) wait in their own queue until the quarantine ends.
      leaseSelect: p('SELECT * FROM frontier WHERE collection = ? AND site = ? AND state = 0 AND (flags & 16) = 0 ORDER BY priority, seq LIMIT ?'),
      releaseQuarantine: p('UPDATE frontier SET flags = flags & ~16 WHERE collection = ? AND site = ? AND state = 0 AND (flags & 16) <> 0'),
      // Crash strikes (CRASH_STRIKE in crawl-store.ts): a lease clears them, armSuspect sets one, a crash adds one.
      leaseMark: p(`UPDATE frontier SET state = 1, flags = flags & ~${CRASH_STRIKES_MASK} WHERE id = ?`),
      arm: p(`UPDATE frontier SET flags = (flags & ~${CRASH_STRIKES_MASK}) | ${CRASH_STRIKE} WHERE id = ? AND collection = ? AND state = 1`),
      crashedTwice: p(`SELECT * FROM frontier WHERE collection = ? AND state = 1 AND (flags & ${CRASH_STRIKES_MASK}) <> 0`),
      release: p('UPDATE frontier SET state = 0 WHERE id = ? AND collection = ? AND state = 1'),
      retry: p('UPDATE frontier SET state = 0, retries = retries + 1, seq = ? WHERE id = ? AND collection = ?'),
      recover: p(`UPDATE frontier SET state = 0, flags = flags | ${CRASH_STRIKE} WHERE collection = ? AND state = 1 AND (flags & ${CRASH_STRIKES_MASK}) = 0`),
      dropQueued: p('UPDATE frontier SET state = 2 WHERE collection = ? AND state = 0 AND epoch < ?'),
      dropQueuedSite: p('UPDATE frontier SET state = 2 WHERE collection = ? AND site = ? AND state = 0 AND epoch < ?'),
      // Each count on its own index: the queued and the leased have partial ones, done is what remains.
      counts: p(`SELECT (SELECT count(*) FROM frontier WHERE collection = ? AND state = 0) AS queued,
                   (SELECT count(*) FROM frontier WHERE collection = ? AND state = 1) AS leased,
                   (SELECT count(*) FROM frontier WHERE collection = ?) AS total`),
      done: p(`UPDATE frontier SET state = 2, record_id = coalesce(?, record_id), flags = flags & ~${CRASH_STRIKES_MASK} WHERE id = ? AND collection = ?`),
      getRecord: p(`SELECT r.* FROM ${RECORD_OF_URL}`),
      ownerById: p('SELECT id, url, record_id FROM frontier WHERE id = ? AND collection = ?'),
      ownerByUrl: p('SELECT id, url, record_id FROM frontier WHERE collection = ? AND url = ?'),
      // A record written for a URL the frontier does not hold (putRecord): a row of its own, done, queued for no cycle.
      addOwner: p('INSERT INTO frontier (collection, url, site, state, priority, seq, epoch, depth, hops, redirects, parent) VALUES (?, ?, ?, 2, 0, 0, 0, ?, ?, 0, ?)'),
      linkRecord: p('UPDATE frontier SET record_id = ? WHERE id = ?'),
      // INDEXED BY: without statistics the planner walks the primary key (every record of the collection) instead.
      byChecksum: p("SELECT url FROM records INDEXED BY records_checksum WHERE collection = ? AND checksum = ? AND url <> ? AND status IN ('stored', 'unchanged') LIMIT 1"),
      insertRecord: p(`INSERT INTO records (${RECORD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      // The URL is checked too: the id came from a frontier row, and a deleted record's id can be given again.
      updateRecord: p(`UPDATE records SET collection = ?, url = ?, site = ?, status = ?, http_status = ?, checksum = ?, last_crawled_ms = ?, etag = ?,
                         last_modified = ?, error_count = ?, skip_code = ?, mime = ?, size = ?, content_ref = ?, duplicate_of = ?, redirect_to = ?,
                         depth = ?, parent = ?, epoch = ?
                       WHERE id = ? AND collection = ? AND url = ?`),
      listRecords: p('SELECT * FROM records WHERE collection = ? ORDER BY url'),
      // A record's position is its rowid: pages are ranges of the table's own b-tree, with no index or sort.
      // NOT INDEXED: the planner otherwise takes the checksum index for collection = ? and sorts the whole
      // collection for every page (a refresh of a million records: 25 s against 11 by rowid, bench:refresh).
      recordsAfter: p('SELECT * FROM records NOT INDEXED WHERE collection = ? AND id > ? ORDER BY id LIMIT ?'),
      recordsBefore: p('SELECT * FROM records NOT INDEXED WHERE collection = ? AND id < ? ORDER BY id DESC LIMIT ?'),
      getRobots: p('SELECT robots_fetched_ms, robots_status, robots_body FROM sites WHERE collection = ? AND site = ? AND robots_fetched_ms IS NOT NULL'),
      putRobots: p(`INSERT INTO sites (collection, site, robots_fetched_ms, robots_status, robots_body) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (collection, site) DO UPDATE SET robots_fetched_ms = excluded.robots_fetched_ms,
                      robots_status = excluded.robots_status, robots_body = excluded.robots_body`),
      getStats: p('SELECT stats FROM sites WHERE collection = ? AND site = ?'),
      putStats: p(`INSERT INTO sites (collection, site, stats) VALUES (?, ?, ?)
                   ON CONFLICT (collection, site) DO UPDATE SET stats = excluded.stats`),
      listStats: p('SELECT site, stats FROM sites WHERE collection = ? AND stats IS NOT NULL ORDER BY site'),
      listStatsPage: p('SELECT site, stats FROM sites WHERE collection = ? AND site > ? AND stats IS NOT NULL ORDER BY site LIMIT ?'),
      queueFeed: p(`INSERT INTO feed_outbox (collection, destination, url, op) VALUES (?, ?, ?, ?) ${FEED_UPSERT}`),
      feedAll: p(`INSERT INTO feed_outbox (collection, destination, url, op)
                  SELECT collection, ?, url, 'update' FROM records WHERE collection = ? AND ${FEEDABLE} ${FEED_UPSERT}`),
      feedSite: p(`INSERT INTO feed_outbox (collection, destination, url, op)
                   SELECT collection, ?, url, 'update' FROM records WHERE collection = ? AND site = ? AND substr(url, 1, length(?)) = ? AND ${FEEDABLE} ${FEED_UPSERT}`),
      feedUrl: p(`INSERT INTO feed_outbox (collection, destination, url, op)
                  SELECT r.collection, ?, r.url, 'update' FROM ${RECORD_OF_URL} AND ${FEEDABLE} ${FEED_UPSERT}`),
      pendingFeed: p('SELECT id, destination, url, op, ver FROM feed_outbox WHERE collection = ? AND destination = ? AND id > ? ORDER BY id LIMIT ?'),
      ackFeed: p('DELETE FROM feed_outbox WHERE id = ? AND collection = ? AND ver = ?'),
      feedBacklog: p('SELECT destination, count(*) AS n FROM feed_outbox WHERE collection = ? GROUP BY destination'),
    };
    const seq = this.db.prepare('SELECT coalesce(max(seq), 0) AS hi, coalesce(min(seq), 0) AS lo FROM frontier').get() as Row;
    this.nextSeq = Number(seq.hi) + 1;
    this.frontSeq = Math.min(0, Number(seq.lo)) - 1;
  }

  /** Creates the tables of a new store, or migrates one of an earlier version, in one transaction. */
  private prepareSchema(path: string): void {
    const hasMeta = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
    const row = hasMeta ? (this.db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as Row | undefined) : undefined;
    const version = row ? Number(row.value) : SCHEMA_VERSION;
    if (!(version >= 1 && version <= SCHEMA_VERSION)) {
      // The constructor closes the database on the way out.
      throw new TrawlError('TRAWL_ERR_IO', `the crawl store ${path} has schema version ${String(row?.value)}; this trawl reads versions 1 to ${SCHEMA_VERSION}`);
    }
    this.tx(() => {
      if (version === 1) this.db.exec(MIGRATE_FROM_1);
      if (version <= 2) this.db.exec(MIGRATE_FROM_2);
      this.db.exec(SCHEMA);
      this.db.prepare("INSERT INTO meta (key, value) VALUES ('schema', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(String(SCHEMA_VERSION));
    });
  }

  private tx<T>(fn: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const out = fn();
      this.db.exec('COMMIT');
      return out;
    } catch (err) {
      // SQLite may have rolled the transaction back itself (SQLITE_FULL can
      // do that): a ROLLBACK then fails with "no transaction is active",
      // which would hide the error that matters.
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      throw err;
    }
  }

  async putCollection(name: string, configXml: string, nowMs: number): Promise<void> {
    this.q.putCollection!.run(name, configXml, nowMs);
  }

  async getCollection(name: string): Promise<CollectionRow | undefined> {
    const r = this.q.getCollection!.get(name) as Row | undefined;
    return r ? toCollection(r) : undefined;
  }

  async listCollections(): Promise<CollectionRow[]> {
    return (this.q.listCollections!.all() as Row[]).map(toCollection);
  }

  async updateCollection(name: string, patch: Partial<Pick<CollectionRow, 'state' | 'epoch' | 'cycleStartedMs' | 'cycleEndedMs' | 'extra'>>): Promise<void> {
    const cols: string[] = [];
    const vals: (string | number | null)[] = [];
    const set = (col: string, v: string | number | null | undefined): void => {
      cols.push(`${col} = ?`);
      vals.push(v === undefined ? null : v);
    };
    if ('state' in patch) set('state', patch.state);
    if ('epoch' in patch) set('epoch', patch.epoch);
    if ('cycleStartedMs' in patch) set('cycle_started_ms', patch.cycleStartedMs);
    if ('cycleEndedMs' in patch) set('cycle_ended_ms', patch.cycleEndedMs);
    if ('extra' in patch) set('extra', JSON.stringify(patch.extra ?? {}));
    if (cols.length === 0) return;
    this.db.prepare(`UPDATE collections SET ${cols.join(', ')} WHERE name = ?`).run(...vals, name);
  }

  async deleteCollection(name: string): Promise<void> {
    this.tx(() => {
      for (const t of ['frontier', 'records', 'sites', 'sitemap_meta', 'feed_links', 'feed_outbox']) this.db.prepare(`DELETE FROM ${t} WHERE collection = ?`).run(name);
      this.db.prepare('DELETE FROM collections WHERE name = ?').run(name);
    });
  }

  private enqueueOne(collection: string, epoch: number, u: QueuedUri, front: boolean): boolean {
    const seq = front ? this.frontSeq-- : this.nextSeq++;
    const r = this.q.enqueue!.run(collection, u.url, u.site, u.priority, seq, epoch, u.depth, u.hops, u.redirects, u.parent ?? null, u.sub ?? null, u.flags ?? 0);
    return Number(r.changes) > 0;
  }

  async enqueue(collection: string, epoch: number, uris: readonly QueuedUri[], front = false): Promise<QueuedUri[]> {
    if (uris.length === 0) return [];
    // Front insertion keeps the batch's own order: the first URI ends up first.
    const ordered = front ? [...uris].reverse() : uris;
    const added = this.tx(() => ordered.filter((u) => this.enqueueOne(collection, epoch, u, front)));
    return front ? added.reverse() : added;
  }

  async requeue(collection: string, epoch: number, uris: readonly QueuedUri[], front = false): Promise<number> {
    const ordered = front ? [...uris].reverse() : uris;
    return this.tx(() => {
      let n = 0;
      for (const u of ordered) {
        const seq = front ? this.frontSeq-- : this.nextSeq++;
        n += Number(this.q.requeue!.run(collection, u.url, u.site, u.priority, seq, epoch, u.depth, u.hops, u.redirects, u.parent ?? null, u.sub ?? null, u.flags ?? 0).changes);
      }
      return n;
    });
  }

  async releaseQuarantine(collection: string, site: string): Promise<number> {
    return Number(this.q.releaseQuarantine!.run(collection, site).changes);
  }

  async deleteUris(collection: string, urls: readonly string[], feedTo: readonly string[] = []): Promise<string[]> {
    return this.tx(() => {
      const refs: string[] = [];
      for (const u of urls) {
        for (const r of this.q.refsOfUrl!.all(collection, u) as Row[]) {
          refs.push(String(r.content_ref));
          for (const d of feedTo) this.q.queueFeed!.run(collection, d, u, 'delete');
        }
        this.q.delRecord!.run(collection, u, u);
        this.q.unlinkRecord!.run(collection, u);
        this.q.delFrontier!.run(collection, u);
      }
      return refs;
    });
  }

  async deleteSite(collection: string, site: string, feedTo: readonly string[] = []): Promise<string[]> {
    return this.tx(() => {
      const rows = this.q.refsOfSite!.all(collection, site) as Row[];
      const refs = rows.map((r) => String(r.content_ref));
      for (const r of rows) for (const d of feedTo) this.q.queueFeed!.run(collection, d, String(r.url), 'delete');
      this.q.delSiteRecords!.run(collection, site);
      this.q.unlinkSiteRecords!.run(collection, site);
      this.q.delSiteFrontier!.run(collection, site);
      return refs;
    });
  }

  async seen(collection: string, epoch: number, url: string): Promise<boolean> {
    return this.q.seen!.get(collection, url, epoch) !== undefined;
  }

  async sitesWithWork(collection: string): Promise<SiteWork[]> {
    return (this.q.sitesWithWork!.all(collection) as Row[]).map((r) => ({ site: String(r.site), queued: Number(r.n) }));
  }

  async lease(collection: string, site: string, n: number): Promise<LeasedUri[]> {
    return this.tx(() => {
      const rows = (this.q.leaseSelect!.all(collection, site, n) as Row[]).map(toLeased);
      for (const r of rows) this.q.leaseMark!.run(r.id);
      return rows;
    });
  }

  async release(collection: string, ids: readonly number[]): Promise<void> {
    this.tx(() => {
      for (const id of ids) this.q.release!.run(id, collection);
    });
  }

  async retry(collection: string, id: number): Promise<void> {
    this.q.retry!.run(this.nextSeq++, id, collection);
  }

  async recoverLeases(collection: string): Promise<{ recovered: number; crashedTwice: LeasedUri[] }> {
    return this.tx(() => {
      const crashedTwice = (this.q.crashedTwice!.all(collection) as Row[]).map(toLeased);
      return { recovered: Number(this.q.recover!.run(collection).changes), crashedTwice };
    });
  }

  async armSuspect(collection: string, id: number): Promise<void> {
    this.q.arm!.run(id, collection);
  }

  async dropQueued(collection: string, site?: string, beforeEpoch = Number.MAX_SAFE_INTEGER): Promise<number> {
    const r = site === undefined ? this.q.dropQueued!.run(collection, beforeEpoch) : this.q.dropQueuedSite!.run(collection, site, beforeEpoch);
    return Number(r.changes);
  }

  async counts(collection: string): Promise<FrontierCounts> {
    const r = this.q.counts!.get(collection, collection, collection) as Row;
    const queued = Number(r.queued);
    const leased = Number(r.leased);
    return { queued, leased, done: Number(r.total) - queued - leased };
  }

  async getRecord(collection: string, url: string): Promise<UriRecord | undefined> {
    const r = this.q.getRecord!.get(collection, url) as Row | undefined;
    return r ? toRecord(r) : undefined;
  }

  async findByChecksum(collection: string, checksum: string, exceptUrl: string): Promise<string | undefined> {
    return str((this.q.byChecksum!.get(collection, checksum, exceptUrl) as Row | undefined)?.url);
  }

  /**
   * Writes a record over the URL's earlier one, or as a new one linked from
   * the URL's frontier row. `leaseId`: the frontier row of the URI being
   * completed, whose `done` update makes the link itself; the returned id
   * is then for that update to write. Returns undefined when no link is
   * left to make.
   */
  private writeRecord(collection: string, r: UriRecord, leaseId?: number): number | undefined {
    let owner = leaseId === undefined ? undefined : (this.q.ownerById!.get(leaseId, collection) as Row | undefined);
    if (owner === undefined || owner.url !== r.url) owner = this.q.ownerByUrl!.get(collection, r.url) as Row | undefined;
    const fields = [
      collection, r.url, r.site, r.status, r.httpStatus ?? null, r.checksum ?? null, r.lastCrawledMs, r.etag ?? null, r.lastModified ?? null,
      r.errorCount, r.skipCode ?? null, r.mime ?? null, r.size ?? null, r.contentRef ?? null, r.duplicateOf ?? null, r.redirectTo ?? null,
      r.depth, r.parent ?? null, r.epoch,
    ] as const;
    const known = owner?.record_id;
    if (known !== null && known !== undefined && Number(this.q.updateRecord!.run(...fields, Number(known), collection, r.url).changes) > 0) return undefined;
    const ownerId = owner ? Number(owner.id) : Number(this.q.addOwner!.run(collection, r.url, r.site, r.depth, r.depth, r.parent ?? null).lastInsertRowid);
    const id = Number(this.q.insertRecord!.run(...fields).lastInsertRowid);
    if (ownerId === leaseId) return id;
    this.q.linkRecord!.run(id, ownerId);
    return undefined;
  }

  /** `statsSuperseded`: a later completion of the same batch saves this site's statistics. */
  private completeOne(collection: string, epoch: number, c: Completion, statsSuperseded = false): QueuedUri[] {
    const recordId = c.record ? this.writeRecord(collection, c.record, c.leaseId) : undefined;
    this.q.done!.run(recordId ?? null, c.leaseId, collection);
    const added = c.discovered.filter((u) => this.enqueueOne(collection, epoch, u, false));
    if (c.siteStats !== undefined && !statsSuperseded) this.q.putStats!.run(collection, c.site, c.siteStats);
    for (const f of c.feed ?? []) this.q.queueFeed!.run(collection, f.destination, f.url, f.op);
    return added;
  }

  /**
   * Group commit: completions that arrive within `commitWindowMs` of the
   * first share one transaction (each still resolves only once it is
   * committed, so nothing is acknowledged before it is durable). A COMMIT
   * writes every page the batch dirtied, and links and records land on
   * random B-tree pages, so its cost hardly grows with the batch: on the
   * 10×2000 bench site, batches one event-loop turn wide (about 9
   * completions) spent 3.4 s in COMMIT, batches 10 ms wide (about 30)
   * 2.4 s, and the crawl took 12% less CPU. Wider windows add latency to
   * every fetch and lowered throughput (25 ms: about 37 a batch, 20% slower).
   * Since the store runs on its own thread (storage-client.ts) commits no
   * longer cost the crawl's main thread, and 3 ms was as fast as 10 ms. At COMMIT_BATCH_MAX waiting completions the batch is
   * written at once. If the shared transaction fails, each is retried alone,
   * so one bad completion cannot take the others with it.
   */
  private pending: Array<{ collection: string; epoch: number; c: Completion; resolve: (a: QueuedUri[]) => void; reject: (e: unknown) => void }> = [];

  async complete(collection: string, epoch: number, c: Completion): Promise<QueuedUri[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ collection, epoch, c, resolve, reject });
      if (this.pending.length === 1) {
        if (this.commitWindowMs > 0) this.flushTimer = setTimeout(() => this.flushCompletions(), this.commitWindowMs);
        else setImmediate(() => this.flushCompletions());
      } else if (this.pending.length >= COMMIT_BATCH_MAX) this.flushCompletions();
    });
  }

  private flushTimer: NodeJS.Timeout | undefined;

  private flushCompletions(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    let results: QueuedUri[][] | undefined;
    try {
      // Site statistics are cumulative: in one transaction only each site's last copy needs writing.
      const lastStats = new Map<string, number>();
      batch.forEach((b, i) => {
        if (b.c.siteStats !== undefined) lastStats.set(`${b.collection}\u0000${b.c.site}`, i);
      });
      results = this.tx(() => batch.map((b, i) => this.completeOne(b.collection, b.epoch, b.c, lastStats.get(`${b.collection}\u0000${b.c.site}`) !== i)));
    } catch {
      results = undefined;
    }
    if (results) {
      batch.forEach((b, i) => b.resolve(results![i]!));
      return;
    }
    for (const b of batch) {
      try {
        b.resolve(this.tx(() => this.completeOne(b.collection, b.epoch, b.c)));
      } catch (err) {
        b.reject(err);
      }
    }
  }

  async putRecord(collection: string, record: UriRecord): Promise<void> {
    this.writeRecord(collection, record);
  }

  async listRecords(collection: string): Promise<UriRecord[]> {
    return (this.q.listRecords!.all(collection) as Row[]).map(toRecord);
  }

  async listRecordPage(collection: string, page: RecordPageRequest): Promise<RecordPage> {
    const limit = Math.max(0, Math.floor(page.limit));
    const rows = page.backwards
      ? (this.q.recordsBefore!.all(collection, page.from ?? Number.MAX_SAFE_INTEGER, limit) as Row[]).reverse()
      : (this.q.recordsAfter!.all(collection, page.from ?? 0, limit) as Row[]);
    return { records: rows.map(toRecord), first: rows.length > 0 ? Number(rows[0]!.id) : 0, last: rows.length > 0 ? Number(rows[rows.length - 1]!.id) : 0 };
  }

  async countRecords(collection: string, filter: { site?: string; status?: RecordStatus } = {}): Promise<number> {
    const where = ['collection = ?'];
    const args: string[] = [collection];
    if (filter.site !== undefined) {
      where.push('site = ?');
      args.push(filter.site);
    }
    if (filter.status !== undefined) {
      where.push('status = ?');
      args.push(filter.status);
    }
    return Number((this.db.prepare(`SELECT count(*) AS n FROM records WHERE ${where.join(' AND ')}`).get(...args) as Row).n);
  }

  async queueFeed(collection: string, ops: readonly FeedOp[]): Promise<void> {
    if (ops.length === 0) return;
    this.tx(() => {
      for (const f of ops) this.q.queueFeed!.run(collection, f.destination, f.url, f.op);
    });
  }

  async queueFeedFromRecords(collection: string, destinations: readonly string[], which: FeedSelection): Promise<number> {
    return this.tx(() => {
      let documents = 0;
      destinations.forEach((d, i) => {
        let n = 0;
        if (which.urls) for (const u of which.urls) n += Number(this.q.feedUrl!.run(d, collection, u).changes);
        else if (which.site !== undefined) n = Number(this.q.feedSite!.run(d, collection, which.site, which.prefix ?? '', which.prefix ?? '').changes);
        else n = Number(this.q.feedAll!.run(d, collection).changes);
        if (i === 0) documents = n;
      });
      return documents;
    });
  }

  async pendingFeed(collection: string, destination: string, afterId: number, limit: number): Promise<PendingFeedOp[]> {
    return (this.q.pendingFeed!.all(collection, destination, afterId, limit) as Row[]).map((r) => ({
      id: Number(r.id), ver: Number(r.ver), destination: String(r.destination), url: String(r.url), op: String(r.op) as FeedOp['op'],
    }));
  }

  async ackFeed(collection: string, sent: ReadonlyArray<Pick<PendingFeedOp, 'id' | 'ver'>>): Promise<void> {
    if (sent.length === 0) return;
    this.tx(() => {
      for (const s of sent) this.q.ackFeed!.run(s.id, collection, s.ver);
    });
  }

  async feedBacklog(collection: string): Promise<Record<string, number>> {
    return Object.fromEntries((this.q.feedBacklog!.all(collection) as Row[]).map((r) => [String(r.destination), Number(r.n)]));
  }

  async putSitemapMeta(collection: string, entries: readonly SitemapMeta[]): Promise<void> {
    if (entries.length === 0) return;
    this.tx(() => {
      for (const e of entries) this.q.putSitemapMeta!.run(collection, e.url, e.lastmod ?? null, e.changefreq ?? null, e.priority ?? null);
    });
  }

  async getSitemapMeta(collection: string, url: string): Promise<SitemapMeta | undefined> {
    const r = this.q.getSitemapMeta!.get(collection, url) as Row | undefined;
    return r ? { url: String(r.url), lastmod: str(r.lastmod), changefreq: str(r.changefreq), priority: num(r.priority) } : undefined;
  }

  async noteFeedLinks(collection: string, feed: string, urls: readonly string[], nowMs: number, maxCount: number, maxAgeMs: number): Promise<string[]> {
    return this.tx(() => {
      // Insertion order breaks ties in first-seen time: a later link in the same batch is younger.
      urls.forEach((u, i) => this.q.noteFeedLink!.run(collection, feed, u, nowMs + i * 1e-3));
      const rows = this.q.feedLinks!.all(collection, feed) as Row[];
      const expired = rows.filter((r, i) => i >= maxCount || (maxAgeMs > 0 && nowMs - Number(r.first_seen_ms) > maxAgeMs)).map((r) => String(r.url));
      for (const u of expired) this.q.dropFeedLink!.run(collection, feed, u);
      return expired;
    });
  }

  async getRobots(collection: string, site: string): Promise<RobotsRow | undefined> {
    const r = this.q.getRobots!.get(collection, site) as Row | undefined;
    if (!r) return undefined;
    return { fetchedMs: Number(r.robots_fetched_ms), status: Number(r.robots_status), body: new Uint8Array((r.robots_body as Uint8Array | null) ?? new Uint8Array()) };
  }

  async putRobots(collection: string, site: string, row: RobotsRow): Promise<void> {
    this.q.putRobots!.run(collection, site, row.fetchedMs, row.status, row.body);
  }

  async getSiteStats(collection: string, site: string): Promise<string | undefined> {
    return str((this.q.getStats!.get(collection, site) as Row | undefined)?.stats);
  }

  async putSiteStats(collection: string, site: string, json: string): Promise<void> {
    this.q.putStats!.run(collection, site, json);
  }

  async putSiteStatsMany(collection: string, rows: ReadonlyArray<{ readonly site: string; readonly json: string }>): Promise<void> {
    if (rows.length === 0) return;
    this.tx(() => {
      for (const r of rows) this.q.putStats!.run(collection, r.site, r.json);
    });
  }

  async listSiteStats(collection: string, page?: { readonly after?: string; readonly limit: number }): Promise<Array<{ site: string; json: string }>> {
    const rows = page ? this.q.listStatsPage!.all(collection, page.after ?? '', page.limit) : this.q.listStats!.all(collection);
    return (rows as Row[]).map((r) => ({ site: String(r.site), json: String(r.stats) }));
  }

  /** SQLite's plan for one of the prepared statements (diagnostics and regression tests). */
  queryPlan(statement: string): string {
    const st = this.q[statement];
    if (!st) throw new Error(`no statement ${statement}`);
    const params = (st.sourceSQL.match(/\?/g) ?? []).map(() => null);
    return (this.db.prepare(`EXPLAIN QUERY PLAN ${st.sourceSQL}`).all(...params) as Row[]).map((r) => String(r.detail)).join('; ');
  }

  async close(): Promise<void> {
    this.flushCompletions();
    if (this.db.isOpen) {
      try {
        this.db.exec('PRAGMA wal_checkpoint(PASSIVE)');
      } catch (err) {
        // A checkpoint that cannot grow the database file (a full disk) is
        // only postponed: the WAL holds every committed transaction and the
        // next open replays it. The file is closed either way.
        if (!isDiskFull(err)) {
          this.db.close();
          throw err;
        }
      }
      this.db.close();
    }
  }
}
