/**
 * The SQLite dialect's prepared statements, as one typed table:
 * `prepareStatements(db)` prepares every statement once when the store is
 * opened, and `Statements` (its result's type) names each one, so that a
 * statement is used as `st.lease.all(…)`: a misspelt name does not compile.
 * The few statements whose text depends on the call (updateCollection's
 * columns) are prepared where they are used.
 *
 * Grouped by the role they serve (crawl-store.ts). Parameters are bound by
 * position, in the order of the `?` in each text.
 */

import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { CRASH_STRIKE, CRASH_STRIKES_MASK, URI_FLAGS } from '../frontier-store.ts';
import { COLLECTION_TABLES, RECORD_COLUMNS } from './schema.ts';

/** A pending `add` stays an `add` when an `update` replaces it (the destination has still not had the document). */
const FEED_UPSERT = `ON CONFLICT (collection, destination, url) DO UPDATE SET
  op = CASE WHEN feed_outbox.op = 'add' AND excluded.op = 'update' THEN 'add' ELSE excluded.op END, ver = feed_outbox.ver + 1`;
const FEEDABLE = "status IN ('stored', 'unchanged') AND content_ref IS NOT NULL";
/** A URL's record, through the frontier row that owns it (schema version 3); binds collection and url. */
const RECORD_OF_URL = 'frontier f JOIN records r ON r.id = f.record_id AND r.url = f.url WHERE f.collection = ? AND f.url = ?';
/** Quarantined URIs wait in their own queue until the quarantine ends. */
const QUARANTINED = URI_FLAGS.QUARANTINED;

/** Prepares every statement of the table on `db` (see the file comment); the result's type is `Statements`. */
export function prepareStatements(db: DatabaseSync) {
  const p = (sql: string): StatementSync => db.prepare(sql);
  return {
    // ------------------------------------------------------------ catalog
    putCollection: p(`INSERT INTO collections (name, config_xml, created_ms) VALUES (?, ?, ?)
                      ON CONFLICT (name) DO UPDATE SET config_xml = excluded.config_xml`),
    getCollection: p('SELECT * FROM collections WHERE name = ?'),
    listCollections: p('SELECT * FROM collections ORDER BY name'),
    /** One per table of COLLECTION_TABLES, then the collection's own row. */
    deleteCollectionRows: COLLECTION_TABLES.map((t) => p(`DELETE FROM ${t} WHERE collection = ?`)),
    deleteCollection: p('DELETE FROM collections WHERE name = ?'),
    getCookieJar: p('SELECT jar FROM cookie_jars WHERE collection = ?'),
    putCycle: p(`INSERT INTO cycles (collection, id, epoch, status, status_ms, started_ms, ended_ms, stopped_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                 ON CONFLICT (collection, id) DO UPDATE SET epoch = excluded.epoch, status = excluded.status, status_ms = excluded.status_ms,
                 started_ms = excluded.started_ms, ended_ms = excluded.ended_ms, stopped_by = excluded.stopped_by`),
    listCycles: p('SELECT * FROM cycles WHERE collection = ? ORDER BY epoch DESC, started_ms DESC, status_ms DESC LIMIT ?'),
    putCookieJar: p(`INSERT INTO cookie_jars (collection, jar, saved_ms) VALUES (?, ?, ?)
                     ON CONFLICT (collection) DO UPDATE SET jar = excluded.jar, saved_ms = excluded.saved_ms`),

    // ----------------------------------------------------------- frontier
    enqueue: p(`INSERT INTO frontier (collection, url, site, state, priority, seq, epoch, depth, hops, redirects, retries, parent, sub, flags)
                VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)
                ON CONFLICT (collection, url) DO UPDATE SET state = 0, priority = excluded.priority, seq = excluded.seq, epoch = excluded.epoch,
                  depth = excluded.depth, hops = excluded.hops, redirects = excluded.redirects, retries = 0, parent = excluded.parent, sub = excluded.sub,
                  flags = excluded.flags
                WHERE frontier.epoch < excluded.epoch AND frontier.state <> 1`),
    requeue: p(`INSERT INTO frontier (collection, url, site, state, priority, seq, epoch, depth, hops, redirects, retries, parent, sub, flags)
                VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)
                ON CONFLICT (collection, url) DO UPDATE SET state = 0, priority = excluded.priority, seq = excluded.seq, epoch = excluded.epoch, retries = 0,
                  flags = frontier.flags | excluded.flags
                WHERE frontier.state <> 1`),
    /** The FIFO positions already taken: appended URIs go above the highest, front-inserted ones below the lowest. */
    seqRange: p('SELECT coalesce(max(seq), 0) AS hi, coalesce(min(seq), 0) AS lo FROM frontier'),
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
    frontierEntry: p('SELECT state, epoch, depth, hops, redirects, retries, priority, parent, sub, flags FROM frontier WHERE collection = ? AND url = ?'),
    seen: p('SELECT 1 FROM frontier WHERE collection = ? AND url = ? AND epoch >= ?'),
    sitesWithWork: p(`SELECT site, count(*) AS n, min(epoch) AS e FROM frontier WHERE collection = ? AND state = 0 AND (flags & ${QUARANTINED}) = 0 GROUP BY site ORDER BY min(seq)`),
    leaseSelect: p(`SELECT * FROM frontier WHERE collection = ? AND site = ? AND state = 0 AND (flags & ${QUARANTINED}) = 0 ORDER BY priority, seq LIMIT ?`),
    levelCounts: p('SELECT priority, count(*) AS n FROM frontier WHERE collection = ? AND site = ? AND epoch = ? AND state <> 0 GROUP BY priority'),
    // pop_scheme rr/wrr: the levels in the order given as ",2,1,3," (level-pop.ts); a level not in it goes last.
    leaseSelectByLevels: p(`SELECT * FROM frontier WHERE collection = ? AND site = ? AND state = 0 AND (flags & ${QUARANTINED}) = 0
                            ORDER BY CASE instr(?, ',' || priority || ',') WHEN 0 THEN 1000000 + priority ELSE instr(?, ',' || priority || ',') END, seq LIMIT ?`),
    releaseQuarantine: p(`UPDATE frontier SET flags = flags & ~${QUARANTINED} WHERE collection = ? AND site = ? AND state = 0 AND (flags & ${QUARANTINED}) <> 0`),
    // Crash strikes (CRASH_STRIKE in frontier-store.ts): a lease clears them, armSuspect sets one, a crash adds one.
    leaseMark: p(`UPDATE frontier SET state = 1, flags = flags & ~${CRASH_STRIKES_MASK} WHERE id = ?`),
    arm: p(`UPDATE frontier SET flags = (flags & ~${CRASH_STRIKES_MASK}) | ${CRASH_STRIKE} WHERE id = ? AND collection = ? AND state = 1`),
    crashedTwice: p(`SELECT * FROM frontier WHERE collection = ? AND state = 1 AND (flags & ${CRASH_STRIKES_MASK}) <> 0`),
    release: p('UPDATE frontier SET state = 0 WHERE id = ? AND collection = ? AND state = 1'),
    retry: p('UPDATE frontier SET state = 0, retries = retries + 1, seq = ? WHERE id = ? AND collection = ?'),
    recover: p(`UPDATE frontier SET state = 0, flags = flags | ${CRASH_STRIKE} WHERE collection = ? AND state = 1 AND (flags & ${CRASH_STRIKES_MASK}) = 0`),
    dropQueued: p('UPDATE frontier SET state = 2 WHERE collection = ? AND state = 0 AND epoch < ?'),
    dropQueuedSite: p('UPDATE frontier SET state = 2 WHERE collection = ? AND site = ? AND state = 0 AND epoch < ?'),
    // A sub-collection's own refresh_mode: the rows queued as the named sub-collections' (except 0), or all the others (except 1).
    dropQueuedSubs: p(`UPDATE frontier SET state = 2 WHERE collection = ? AND state = 0 AND epoch < ? AND site = coalesce(?, site)
      AND coalesce(sub IN (SELECT value FROM json_each(?)), 0) <> ?`),
    // Each count on its own index: the queued and the leased have partial ones, done is what remains.
    counts: p(`SELECT (SELECT count(*) FROM frontier WHERE collection = ? AND state = 0) AS queued,
                 (SELECT count(*) FROM frontier WHERE collection = ? AND state = 1) AS leased,
                 (SELECT count(*) FROM frontier WHERE collection = ?) AS total`),
    done: p(`UPDATE frontier SET state = 2, epoch = max(epoch, ?), record_id = coalesce(?, record_id), flags = flags & ~${CRASH_STRIKES_MASK} WHERE id = ? AND collection = ?`),

    // ------------------------------------------------------------ records
    getRecord: p(`SELECT r.* FROM ${RECORD_OF_URL}`),
    ownerById: p('SELECT id, url, record_id FROM frontier WHERE id = ? AND collection = ?'),
    ownerByUrl: p('SELECT id, url, record_id FROM frontier WHERE collection = ? AND url = ?'),
    // A record written for a URL the frontier does not hold (putRecord): a row of its own, done, queued for no cycle.
    addOwner: p('INSERT INTO frontier (collection, url, site, state, priority, seq, epoch, depth, hops, redirects, parent) VALUES (?, ?, ?, 2, 0, 0, 0, ?, ?, 0, ?)'),
    linkRecord: p('UPDATE frontier SET record_id = ? WHERE id = ?'),
    // INDEXED BY: without statistics the planner walks the primary key (every record of the collection) instead.
    byChecksum: p("SELECT url FROM records INDEXED BY records_checksum WHERE collection = ? AND checksum = ? AND url <> ? AND status IN ('stored', 'unchanged') LIMIT 1"),
    duplicatesOf: p("SELECT url FROM records INDEXED BY records_duplicate_of WHERE collection = ? AND duplicate_of = ? AND duplicate_of IS NOT NULL AND status = 'duplicate' ORDER BY url LIMIT ?"),
    insertRecord: p(`INSERT INTO records (${RECORD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // The URL is checked too: the id came from a frontier row, and a deleted record's id can be given again.
    updateRecord: p(`UPDATE records SET collection = ?, url = ?, site = ?, status = ?, http_status = ?, checksum = ?, last_crawled_ms = ?, etag = ?,
                       last_modified = ?, error_count = ?, skip_code = ?, mime = ?, size = ?, content_ref = ?, duplicate_of = ?, redirect_to = ?,
                       depth = ?, parent = ?, epoch = ?
                     WHERE id = ? AND collection = ? AND url = ?`),
    listRecords: p('SELECT * FROM records WHERE collection = ? ORDER BY url'),
    // A record's position is its rowid: pages are ranges of the table's own b-tree, with no index or sort.
    // NOT INDEXED: the planner otherwise takes the checksum index for collection = ? and sorts the whole
    // collection for every page (bench/README.md, *A refresh at scale*).
    recordsAfter: p('SELECT * FROM records NOT INDEXED WHERE collection = ? AND id > ? ORDER BY id LIMIT ?'),
    recordsBefore: p('SELECT * FROM records NOT INDEXED WHERE collection = ? AND id < ? ORDER BY id DESC LIMIT ?'),
    countRecords: p('SELECT count(*) AS n FROM records WHERE collection = ?'),
    countRecordsOfSite: p('SELECT count(*) AS n FROM records WHERE collection = ? AND site = ?'),
    countRecordsOfStatus: p('SELECT count(*) AS n FROM records WHERE collection = ? AND status = ?'),
    countRecordsOfSiteStatus: p('SELECT count(*) AS n FROM records WHERE collection = ? AND site = ? AND status = ?'),
    cycleRecordCounts: p(`SELECT count(*) FILTER (WHERE content_ref IS NOT NULL AND status IN ('stored', 'unchanged')) AS documents,
                                 count(*) FILTER (WHERE epoch = ?) AS in_cycle
                          FROM records WHERE collection = ?`),

    // ------------------------------------------------------- feed outbox
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

    // -------------------------------------------------------------- sites
    getRobots: p('SELECT robots_fetched_ms, robots_status, robots_body FROM sites WHERE collection = ? AND site = ? AND robots_fetched_ms IS NOT NULL'),
    putRobots: p(`INSERT INTO sites (collection, site, robots_fetched_ms, robots_status, robots_body) VALUES (?, ?, ?, ?, ?)
                  ON CONFLICT (collection, site) DO UPDATE SET robots_fetched_ms = excluded.robots_fetched_ms,
                    robots_status = excluded.robots_status, robots_body = excluded.robots_body`),
    getStats: p('SELECT stats FROM sites WHERE collection = ? AND site = ?'),
    putStats: p(`INSERT INTO sites (collection, site, stats) VALUES (?, ?, ?)
                 ON CONFLICT (collection, site) DO UPDATE SET stats = excluded.stats`),
    listStats: p('SELECT site, stats FROM sites WHERE collection = ? AND stats IS NOT NULL ORDER BY site'),
    listStatsPage: p('SELECT site, stats FROM sites WHERE collection = ? AND site > ? AND stats IS NOT NULL ORDER BY site LIMIT ?'),
    putSitemapMeta: p(`INSERT INTO sitemap_meta (collection, url, lastmod, changefreq, priority) VALUES (?, ?, ?, ?, ?)
                       ON CONFLICT (collection, url) DO UPDATE SET lastmod = excluded.lastmod, changefreq = excluded.changefreq, priority = excluded.priority`),
    getSitemapMeta: p('SELECT * FROM sitemap_meta WHERE collection = ? AND url = ?'),
    listSitemapMeta: p('SELECT * FROM sitemap_meta WHERE collection = ?'),
    putChangeHistory: p(`INSERT INTO change_history (collection, url, checks, changes, since_ms, last_change_ms) VALUES (?, ?, ?, ?, ?, ?)
                         ON CONFLICT (collection, url) DO UPDATE SET checks = excluded.checks, changes = excluded.changes, since_ms = excluded.since_ms, last_change_ms = excluded.last_change_ms`),
    listChangeHistory: p('SELECT * FROM change_history WHERE collection = ?'),
    noteFeedLink: p('INSERT INTO feed_links (collection, feed, url, first_seen_ms) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING'),
    feedLinks: p('SELECT url, first_seen_ms FROM feed_links WHERE collection = ? AND feed = ? ORDER BY first_seen_ms DESC'),
    dropFeedLink: p('DELETE FROM feed_links WHERE collection = ? AND feed = ? AND url = ?'),
  };
}

/** Every prepared statement of the dialect, by name. */
export type Statements = ReturnType<typeof prepareStatements>;
