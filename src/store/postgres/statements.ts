/**
 * The PostgreSQL dialect's statements, as one typed table: `STATEMENTS`
 * names each text, and the store runs one as `this.run('lease', [...])`,
 * a named query that each pooled connection prepares once, the first time
 * it runs it: a misspelt name does not compile. The few statements whose
 * text depends on the call (updateCollection's columns) are built where
 * they are used.
 *
 * Grouped by the role they serve (crawl-store.ts). Parameters are bound by
 * number ($1, $2, …). Statements that take many rows take them as arrays,
 * one per column, read with `unnest`: a batch is one round trip.
 */

import { CRASH_STRIKE, CRASH_STRIKES_MASK, URI_FLAGS } from '../frontier-store.ts';
import { COLLECTION_TABLES } from './schema.ts';

/** A pending `add` stays an `add` when an `update` replaces it (the destination has still not had the document). */
const FEED_UPSERT = `ON CONFLICT (collection, destination, url) DO UPDATE SET
  op = CASE WHEN feed_outbox.op = 'add' AND excluded.op = 'update' THEN 'add' ELSE excluded.op END, ver = feed_outbox.ver + 1`;
const FEEDABLE = "status IN ('stored', 'unchanged') AND content_ref IS NOT NULL";
/** Quarantined URIs wait in their own queue until the quarantine ends. */
const QUARANTINED = URI_FLAGS.QUARANTINED;
/** A lease given up: its owner and expiry cleared. */
const UNLEASED = 'lease_owner = NULL, lease_expires = NULL';

/** The arrays a call's URIs are bound as ($1 … $12), and each one's position in the call. */
const URI_ARRAYS = `unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::int[], $6::int[], $7::int[], $8::text[], $9::text[], $10::int[], $11::int[], $12::int[])
    AS u(collection, url, site, priority, depth, hops, redirects, parent, sub, flags, epoch, ord)`;

/**
 * URIs entering the frontier, as arrays: collection, url, site, priority,
 * depth, hops, redirects, parent, sub, flags, epoch, and each one's
 * position in the call (its FIFO position is the block the sequence gives
 * plus that). Rows are written in URL order, so that two transactions
 * queueing the same URLs take their locks in the same order.
 */
const ENQUEUE_ROWS = (sequence: string): string => `WITH b AS (SELECT nextval('${sequence}') AS base)
  INSERT INTO frontier (collection, url, site, state, priority, seq, epoch, depth, hops, redirects, retries, parent, sub, flags)
  SELECT u.collection, u.url, u.site, 0, u.priority, b.base + u.ord, u.epoch, u.depth, u.hops, u.redirects, 0, u.parent, u.sub, u.flags
  FROM ${URI_ARRAYS}, b
  ORDER BY u.collection, u.url`;

/**
 * The seen set, first step: the URLs the frontier does not hold are
 * added; answers with the block's base (one row at least) and the URLs
 * added. A URL it holds is left alone and NOT LOCKED (DO NOTHING takes no
 * row lock): a lease running beside this transaction must not skip a
 * queued URI only because a page being completed linked to it again
 * (SKIP LOCKED would make the lease come back short, which says the site
 * has nothing more queued).
 */
const ENQUEUE_NEW = (sequence: string): string => `WITH b AS (SELECT nextval('${sequence}') AS base),
  ins AS (
    INSERT INTO frontier (collection, url, site, state, priority, seq, epoch, depth, hops, redirects, retries, parent, sub, flags)
    SELECT u.collection, u.url, u.site, 0, u.priority, b.base + u.ord, u.epoch, u.depth, u.hops, u.redirects, 0, u.parent, u.sub, u.flags
    FROM ${URI_ARRAYS}, b
    ORDER BY u.collection, u.url
    ON CONFLICT (collection, url) DO NOTHING
    RETURNING collection, url)
  SELECT b.base, ins.collection, ins.url FROM b LEFT JOIN ins ON true`;

/**
 * The seen set, second step, for the URLs the first found: queued again
 * only when last queued in an earlier cycle (only those rows are locked);
 * $13 is the first step's base.
 */
const ENQUEUE_AGAIN = `UPDATE frontier f SET state = 0, priority = u.priority, seq = $13::bigint + u.ord, epoch = u.epoch,
    depth = u.depth, hops = u.hops, redirects = u.redirects, retries = 0, parent = u.parent, sub = u.sub, flags = u.flags, ${UNLEASED}
  FROM ${URI_ARRAYS}
  WHERE f.collection = u.collection AND f.url = u.url AND f.epoch < u.epoch AND f.state <> 1
  RETURNING f.collection, f.url`;

/** An operator's refetch: queued again even if seen, unless it is being fetched right now. */
const REQUEUE = (sequence: string): string => `${ENQUEUE_ROWS(sequence)}
  ON CONFLICT (collection, url) DO UPDATE SET state = 0, priority = excluded.priority, seq = excluded.seq, epoch = excluded.epoch, retries = 0,
    flags = frontier.flags | excluded.flags
  WHERE frontier.state <> 1`;

/** The columns a leased URI is read from (frontier `f`, the lease's own pick `p` for the flags before the lease cleared the strikes). */
const LEASED_COLUMNS = `f.id, f.url, f.site, f.depth, f.hops, f.redirects, f.parent, f.priority, f.sub, f.retries, f.seq,
  EXISTS (SELECT 1 FROM records r WHERE r.collection = f.collection AND r.url = f.url) AS crawled`;

/**
 * The lease's one statement shape: up to $3 queued URIs of site $2 in
 * `order`, leased to $4 for $5 ms; `routed`: only while the site is routed
 * to node $4 (installation.ts). Rows another transaction holds are skipped,
 * not waited for.
 */
const LEASE = (routed: boolean, order: string): string => `WITH p AS (
            SELECT id, flags FROM frontier
            WHERE collection = $1 AND site = $2 AND state = 0 AND (flags & ${QUARANTINED}) = 0${routed ? `
              AND EXISTS (SELECT 1 FROM trawl_site_routes r WHERE r.collection = $1 AND r.site = $2 AND r.node = $4)` : ''}
            ORDER BY ${order} LIMIT $3 FOR UPDATE SKIP LOCKED)
          UPDATE frontier f SET state = 1, flags = f.flags & ~${CRASH_STRIKES_MASK}, lease_owner = $4,
            lease_expires = now() + $5::float8 * interval '1 millisecond'
          FROM p WHERE f.id = p.id
          RETURNING ${LEASED_COLUMNS}, p.flags`;
/** Priority, then first in. */
const BY_PRIORITY = 'priority, seq';
/** The levels in the order $6 gives first (pop_scheme rr/wrr: level-pop.ts), a level not in it last; then first in. */
const BY_LEVELS = 'coalesce(array_position($6::int[], priority), 1000000 + priority), seq';

/** `sql` with each parameter $n numbered $(n + by): a statement's text used as part of a larger one. */
const shift = (sql: string, by: number): string => sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + by}`);

/** One per table of COLLECTION_TABLES; then the collection's own row goes (deleteCollection). */
export const DELETE_COLLECTION_ROWS = COLLECTION_TABLES.map((t) => `DELETE FROM ${t} WHERE collection = $1`);

export const STATEMENTS = {
  // ------------------------------------------------------------ catalog
  putCollection: `INSERT INTO collections (name, config_xml, created_ms) VALUES ($1, $2, $3)
                  ON CONFLICT (name) DO UPDATE SET config_xml = excluded.config_xml`,
  getCollection: 'SELECT * FROM collections WHERE name = $1',
  listCollections: 'SELECT * FROM collections ORDER BY name',
  deleteCollection: 'DELETE FROM collections WHERE name = $1',

  // ----------------------------------------------------------- frontier
  enqueueBack: ENQUEUE_NEW('frontier_seq_back'),
  enqueueFront: ENQUEUE_NEW('frontier_seq_front'),
  enqueueAgain: ENQUEUE_AGAIN,
  requeueBack: REQUEUE('frontier_seq_back'),
  requeueFront: REQUEUE('frontier_seq_front'),
  seen: 'SELECT 1 FROM frontier WHERE collection = $1 AND url = $2 AND epoch >= $3',
  sitesWithWork: `SELECT site, count(*) AS n, min(epoch) AS e FROM frontier
                  WHERE collection = $1 AND state = 0 AND (flags & ${QUARANTINED}) = 0 GROUP BY site ORDER BY min(seq)`,
  /**
   * The lease: up to $3 queued URIs of one site, highest priority first,
   * then first in; rows another transaction holds are skipped, not waited
   * for, so two nodes leasing from one site at once get different URIs.
   * The lease clears the crash strikes; the URI is answered with the flags
   * it had (a suspect says so).
   */
  lease: LEASE(false, BY_PRIORITY),
  levelCounts: 'SELECT priority, count(*) AS n FROM frontier WHERE collection = $1 AND site = $2 AND epoch = $3 AND state <> 0 GROUP BY priority',
  /** The lease with the levels preferred in the order $6 gives (pop_scheme rr/wrr: level-pop.ts); a level not in it goes last. */
  leaseByLevels: LEASE(false, BY_LEVELS),
  /**
   * A node's lease in a multinode installation: the same, and only while
   * the site is routed to the node ($4, installation.ts), so that two
   * nodes never hold URIs of one site at once.
   */
  leaseRouted: LEASE(true, BY_PRIORITY),
  /** leaseRouted with the levels preferred in the order $6 gives (leaseByLevels). */
  leaseRoutedByLevels: LEASE(true, BY_LEVELS),
  /** A node resuming a cycle: its own leases (of a life before this one) and expired ones back to the queue, never another live node's. */
  recoverOwn: `UPDATE frontier SET state = 0, flags = flags | ${CRASH_STRIKE}, ${UNLEASED}
               WHERE collection = $1 AND state = 1 AND (lease_owner = $2 OR lease_expires < now())`,
  releaseQuarantine: `UPDATE frontier SET flags = flags & ~${QUARANTINED}
                      WHERE collection = $1 AND site = $2 AND state = 0 AND (flags & ${QUARANTINED}) <> 0`,
  // Crash strikes (CRASH_STRIKE in frontier-store.ts): a lease clears them, armSuspect sets one, a crash adds one.
  arm: `UPDATE frontier SET flags = (flags & ~${CRASH_STRIKES_MASK}) | ${CRASH_STRIKE} WHERE id = $1 AND collection = $2 AND state = 1`,
  crashedTwice: `SELECT ${LEASED_COLUMNS}, f.flags FROM frontier f WHERE f.collection = $1 AND f.state = 1 AND (f.flags & ${CRASH_STRIKES_MASK}) <> 0 ORDER BY f.seq`,
  release: `UPDATE frontier SET state = 0, ${UNLEASED} WHERE id = ANY($1::bigint[]) AND collection = $2 AND state = 1`,
  retry: `UPDATE frontier SET state = 0, retries = retries + 1, seq = nextval('frontier_seq_back'), ${UNLEASED} WHERE id = $1 AND collection = $2`,
  recover: `UPDATE frontier SET state = 0, flags = flags | ${CRASH_STRIKE}, ${UNLEASED}
            WHERE collection = $1 AND state = 1 AND (flags & ${CRASH_STRIKES_MASK}) = 0`,
  /** Expired leases back to the queue (their holder stopped renewing them), with a crash strike each. */
  recoverExpired: `UPDATE frontier SET state = 0, flags = flags | ${CRASH_STRIKE}, ${UNLEASED}
                   WHERE collection = $1 AND state = 1 AND lease_expires < now()`,
  renew: `UPDATE frontier SET lease_expires = now() + $3::float8 * interval '1 millisecond' WHERE collection = $1 AND state = 1 AND lease_owner = $2`,
  dropQueued: 'UPDATE frontier SET state = 2 WHERE collection = $1 AND state = 0 AND epoch < $2',
  dropQueuedSite: 'UPDATE frontier SET state = 2 WHERE collection = $1 AND site = $2 AND state = 0 AND epoch < $3',
  // A sub-collection's own refresh_mode: the rows queued as the named sub-collections' ($5 false), or all the others ($5 true).
  dropQueuedSubs: `UPDATE frontier SET state = 2 WHERE collection = $1 AND state = 0 AND epoch < $2 AND site = coalesce($3::text, site)
    AND coalesce(sub = ANY($4::text[]), false) <> $5`,
  frontierEntry: 'SELECT state, epoch, depth, hops, redirects, retries, priority, parent, sub, flags FROM frontier WHERE collection = $1 AND url = $2',
  getCookieJar: 'SELECT jar FROM cookie_jars WHERE collection = $1',
  putCycle: `INSERT INTO cycles (collection, id, epoch, status, status_ms, started_ms, ended_ms, stopped_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (collection, id) DO UPDATE SET epoch = excluded.epoch, status = excluded.status, status_ms = excluded.status_ms,
             started_ms = excluded.started_ms, ended_ms = excluded.ended_ms, stopped_by = excluded.stopped_by`,
  listCycles: 'SELECT * FROM cycles WHERE collection = $1 ORDER BY epoch DESC, started_ms DESC, status_ms DESC LIMIT $2',
  putCookieJar: `INSERT INTO cookie_jars (collection, jar, saved_ms) VALUES ($1, $2, $3)
    ON CONFLICT (collection) DO UPDATE SET jar = excluded.jar, saved_ms = excluded.saved_ms`,
  counts: `SELECT (SELECT count(*) FROM frontier WHERE collection = $1 AND state = 0) AS queued,
             (SELECT count(*) FROM frontier WHERE collection = $1 AND state = 1) AS leased,
             (SELECT count(*) FROM frontier WHERE collection = $1) AS total`,
  /** Leases done: arrays of lease id, collection, and the cycle that fetched it (the entry is then seen in that cycle). */
  done: `UPDATE frontier f SET state = 2, epoch = greatest(f.epoch, d.epoch), flags = f.flags & ~${CRASH_STRIKES_MASK}, ${UNLEASED}
         FROM unnest($1::bigint[], $2::text[], $3::int[]) AS d(id, collection, epoch) WHERE f.id = d.id AND f.collection = d.collection`,
  delRecords: 'DELETE FROM records WHERE collection = $1 AND url = ANY($2::text[]) RETURNING url, content_ref',
  // A leased row stays (its fetch is under way) without its record.
  delFrontier: 'DELETE FROM frontier WHERE collection = $1 AND url = ANY($2::text[]) AND state <> 1',
  delSiteRecords: 'DELETE FROM records WHERE collection = $1 AND site = $2 RETURNING url, content_ref',
  delSiteFrontier: 'DELETE FROM frontier WHERE collection = $1 AND site = $2 AND state <> 1',

  // ------------------------------------------------------------ records
  getRecord: 'SELECT * FROM records WHERE collection = $1 AND url = $2',
  byChecksum: "SELECT url FROM records WHERE collection = $1 AND checksum = $2 AND url <> $3 AND status IN ('stored', 'unchanged') LIMIT 1",
  duplicatesOf: "SELECT url FROM records WHERE collection = $1 AND duplicate_of = $2 AND duplicate_of IS NOT NULL AND status = 'duplicate' ORDER BY url LIMIT $3",
  /**
   * Records written, as arrays (collection, then RECORD_COLUMNS): a URL's
   * record is rewritten in place and keeps its id, its position in
   * listRecordPage.
   */
  putRecords: `INSERT INTO records (collection, url, site, status, http_status, checksum, last_crawled_ms, etag, last_modified, error_count,
                 skip_code, mime, size, content_ref, duplicate_of, redirect_to, depth, parent, epoch)
               SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::bigint[], $8::text[], $9::text[],
                 $10::int[], $11::text[], $12::text[], $13::bigint[], $14::text[], $15::text[], $16::text[], $17::int[], $18::text[], $19::int[])
               ON CONFLICT (collection, url) DO UPDATE SET site = excluded.site, status = excluded.status, http_status = excluded.http_status,
                 checksum = excluded.checksum, last_crawled_ms = excluded.last_crawled_ms, etag = excluded.etag, last_modified = excluded.last_modified,
                 error_count = excluded.error_count, skip_code = excluded.skip_code, mime = excluded.mime, size = excluded.size,
                 content_ref = excluded.content_ref, duplicate_of = excluded.duplicate_of, redirect_to = excluded.redirect_to,
                 depth = excluded.depth, parent = excluded.parent, epoch = excluded.epoch`,
  listRecords: 'SELECT * FROM records WHERE collection = $1 ORDER BY url',
  recordsAfter: 'SELECT * FROM records WHERE collection = $1 AND id > $2 ORDER BY id LIMIT $3',
  recordsBefore: 'SELECT * FROM records WHERE collection = $1 AND id < $2 ORDER BY id DESC LIMIT $3',
  countRecords: 'SELECT count(*) AS n FROM records WHERE collection = $1',
  countRecordsOfSite: 'SELECT count(*) AS n FROM records WHERE collection = $1 AND site = $2',
  countRecordsOfStatus: 'SELECT count(*) AS n FROM records WHERE collection = $1 AND status = $2',
  countRecordsOfSiteStatus: 'SELECT count(*) AS n FROM records WHERE collection = $1 AND site = $2 AND status = $3',
  cycleRecordCounts: `SELECT count(*) FILTER (WHERE content_ref IS NOT NULL AND status IN ('stored', 'unchanged')) AS documents,
                             count(*) FILTER (WHERE epoch = $2) AS in_cycle
                      FROM records WHERE collection = $1`,

  // ------------------------------------------------------- feed outbox
  /** Operations as arrays: collection, destination, url, op; no (collection, destination, url) twice in one call. */
  queueFeed: `INSERT INTO feed_outbox (collection, destination, url, op)
              SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) ${FEED_UPSERT}`,
  feedAll: `INSERT INTO feed_outbox (collection, destination, url, op)
            SELECT collection, $1::text, url, 'update' FROM records WHERE collection = $2 AND ${FEEDABLE} ORDER BY id ${FEED_UPSERT}`,
  feedSite: `INSERT INTO feed_outbox (collection, destination, url, op)
             SELECT collection, $1::text, url, 'update' FROM records WHERE collection = $2 AND site = $3 AND starts_with(url, $4) AND ${FEEDABLE}
             ORDER BY id ${FEED_UPSERT}`,
  feedUrls: `INSERT INTO feed_outbox (collection, destination, url, op)
             SELECT collection, $1::text, url, 'update' FROM records WHERE collection = $2 AND url = ANY($3::text[]) AND ${FEEDABLE}
             ORDER BY id ${FEED_UPSERT}`,
  pendingFeed: 'SELECT id, destination, url, op, ver FROM feed_outbox WHERE collection = $1 AND destination = $2 AND id > $3 ORDER BY id LIMIT $4',
  ackFeed: `DELETE FROM feed_outbox f USING unnest($2::bigint[], $3::int[]) AS s(id, ver)
            WHERE f.id = s.id AND f.ver = s.ver AND f.collection = $1`,
  feedBacklog: 'SELECT destination, count(*) AS n FROM feed_outbox WHERE collection = $1 GROUP BY destination',

  // -------------------------------------------------------------- sites
  getRobots: 'SELECT robots_fetched_ms, robots_status, robots_body FROM sites WHERE collection = $1 AND site = $2 AND robots_fetched_ms IS NOT NULL',
  putRobots: `INSERT INTO sites (collection, site, robots_fetched_ms, robots_status, robots_body) VALUES ($1, $2, $3, $4, $5)
              ON CONFLICT (collection, site) DO UPDATE SET robots_fetched_ms = excluded.robots_fetched_ms,
                robots_status = excluded.robots_status, robots_body = excluded.robots_body`,
  getStats: 'SELECT stats FROM sites WHERE collection = $1 AND site = $2',
  /** Statistics as arrays: collection, site, JSON; no (collection, site) twice in one call. */
  putStats: `INSERT INTO sites (collection, site, stats) SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ORDER BY 1, 2
             ON CONFLICT (collection, site) DO UPDATE SET stats = excluded.stats`,
  listStats: 'SELECT site, stats FROM sites WHERE collection = $1 AND stats IS NOT NULL ORDER BY site',
  listStatsPage: 'SELECT site, stats FROM sites WHERE collection = $1 AND site > $2 AND stats IS NOT NULL ORDER BY site LIMIT $3',
  /** Entries as arrays: url, lastmod, changefreq, priority; no URL twice in one call. */
  putSitemapMeta: `INSERT INTO sitemap_meta (collection, url, lastmod, changefreq, priority)
                   SELECT $1::text, * FROM unnest($2::text[], $3::text[], $4::text[], $5::float8[])
                   ON CONFLICT (collection, url) DO UPDATE SET lastmod = excluded.lastmod, changefreq = excluded.changefreq, priority = excluded.priority`,
  getSitemapMeta: 'SELECT * FROM sitemap_meta WHERE collection = $1 AND url = $2',
  listSitemapMeta: 'SELECT * FROM sitemap_meta WHERE collection = $1',
  /** Entries as arrays: url, checks, changes, since_ms, last_change_ms; no URL twice in one call. */
  putChangeHistory: `INSERT INTO change_history (collection, url, checks, changes, since_ms, last_change_ms)
                     SELECT $1::text, * FROM unnest($2::text[], $3::int[], $4::int[], $5::float8[], $6::float8[])
                     ON CONFLICT (collection, url) DO UPDATE SET checks = excluded.checks, changes = excluded.changes, since_ms = excluded.since_ms, last_change_ms = excluded.last_change_ms`,
  listChangeHistory: 'SELECT * FROM change_history WHERE collection = $1',
  noteFeedLinks: `INSERT INTO feed_links (collection, feed, url, first_seen_ms)
                  SELECT $1::text, $2::text, * FROM unnest($3::text[], $4::float8[]) ON CONFLICT DO NOTHING`,
  feedLinks: 'SELECT url, first_seen_ms FROM feed_links WHERE collection = $1 AND feed = $2 ORDER BY first_seen_ms DESC',
  dropFeedLinks: 'DELETE FROM feed_links WHERE collection = $1 AND feed = $2 AND url = ANY($3::text[])',
} as const;

/**
 * A whole group-commit batch as ONE statement (one round trip, atomic
 * without BEGIN and COMMIT): records ($1–$19, as putRecords), leases done
 * ($20–$22, as done), discovered URIs ($23–$34, as enqueue: the new ones
 * added, those last queued in an earlier cycle queued again, except a
 * lease, of this batch or under way), site statistics ($35–$37, as
 * putStats) and feed operations ($38–$41, as queueFeed; no key twice). Answers with the
 * (collection, url) of the URIs queued. Data-modifying WITH clauses all
 * run, once, whether or not the final SELECT reads them.
 */
const COMPLETE_BATCH = `WITH b AS (SELECT nextval('frontier_seq_back') AS base),
  rec AS (${STATEMENTS.putRecords} RETURNING 1),
  done AS (${shift(STATEMENTS.done, 19)} RETURNING 1),
  new AS (
    INSERT INTO frontier (collection, url, site, state, priority, seq, epoch, depth, hops, redirects, retries, parent, sub, flags)
    SELECT u.collection, u.url, u.site, 0, u.priority, b.base + u.ord, u.epoch, u.depth, u.hops, u.redirects, 0, u.parent, u.sub, u.flags
    FROM ${shift(URI_ARRAYS, 22)}, b
    ORDER BY u.collection, u.url
    ON CONFLICT (collection, url) DO NOTHING
    RETURNING collection, url),
  again AS (
    UPDATE frontier f SET state = 0, priority = u.priority, seq = b.base + u.ord, epoch = u.epoch,
      depth = u.depth, hops = u.hops, redirects = u.redirects, retries = 0, parent = u.parent, sub = u.sub, flags = u.flags, ${UNLEASED}
    FROM ${shift(URI_ARRAYS, 22)}, b
    WHERE f.collection = u.collection AND f.url = u.url AND f.epoch < u.epoch AND f.state <> 1 AND f.id <> ALL($20::bigint[])
    RETURNING f.collection, f.url),
  stats AS (${shift(STATEMENTS.putStats, 34)} RETURNING 1),
  feed AS (${shift(STATEMENTS.queueFeed, 37)} RETURNING 1)
  SELECT collection, url FROM new UNION ALL SELECT collection, url FROM again`;

/** The statements run by name, the batch's included. */
export const NAMED = { ...STATEMENTS, completeBatch: COMPLETE_BATCH } as const;

/** Every statement of the dialect, by name. */
export type StatementName = keyof typeof NAMED;
