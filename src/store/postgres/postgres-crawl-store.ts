/**
 * The crawl store on PostgreSQL (`--store postgres://…`): the same
 * contract as the SQLite dialect, on a database server several processes
 * may share.
 *
 *   connection.ts   the pool, connection errors (URL masked), transactions
 *   schema.ts       the tables and SCHEMA_VERSION
 *   migrations.ts   the schema created (or an earlier version migrated) when opened
 *   statements.ts   every statement, as a typed table of named queries
 *   this file       the CrawlStore contract on top of them, role by role
 *
 * It runs on the calling thread: pg is asynchronous, so the statements
 * wait on the server's socket, not on the event loop (the SQLite dialect
 * has a thread of its own because node:sqlite blocks). Its calls that
 * write or answer what is queued run one at a time in call order, as on
 * that thread (`inOrder`); reads run beside them.
 *
 * A fetch's completion is written by `completeMany`, a batch in one
 * statement whatever its size (records, leases done, discovered links,
 * statistics, feed operations: each a WITH clause over arrays);
 * `complete` hands it to the group commit (../group-commit.ts).
 *
 * Leases, safe across processes. `lease` picks its rows with
 * `SELECT … FOR UPDATE SKIP LOCKED` and marks them leased in the same
 * statement: two processes leasing from one site at the same moment each
 * get rows the other did not lock, and a row another transaction changed
 * meanwhile is checked again against `state = 0` before it is taken, so a
 * URI is never leased twice. Each leased row records its holder,
 * `lease_owner` (the `owner` option: a node's name, by default host:pid),
 * and `lease_expires` (the server's clock plus `leaseTtlMs`), so that a
 * node that dies leaves leases that can be told apart from live ones:
 * `renewLeases` moves a holder's expiry on, and `recoverExpiredLeases`
 * puts the expired ones back in the queue with a crash strike. Neither is
 * called by the single-node crawler (it recovers every lease of its
 * collection when a cycle resumes, `recoverLeases`, as with SQLite);
 * they are what the multinode installation builds on.
 */

import { hostname } from 'node:os';
import type { CollectionPatch, CollectionRow, CycleRow, CycleStatus } from '../catalog-store.ts';
import type { Completion, CrawlStore } from '../crawl-store.ts';
import type { FeedOp, FeedSelection, PendingFeedOp } from '../feed-outbox.ts';
import type { DropSubs, FrontierCounts, FrontierEntry, LeasedUri, QueuedUri, SiteWork } from '../frontier-store.ts';
import { GroupCommit, type BatchedCompletion, type CompletionBatchWriter } from '../group-commit.ts';
import type { CycleRecordCounts, RecordFilter, RecordPage, RecordPageRequest, UriRecord } from '../record-store.ts';
import type { ChangeHistory, RobotsRow, SitemapMeta, SiteStatsRow } from '../site-store.ts';
import { holdExclusive, openPool, transaction, type Client, type Pool, type Row } from './connection.ts';
import { migrateToLatest } from './migrations.ts';
import { SEQ_BLOCK } from './schema.ts';
import { DELETE_COLLECTION_ROWS, NAMED, type StatementName } from './statements.ts';
import { num, recordOfRow, recordPageOf, str } from '../row-values.ts';


/**
 * PostgreSQL's text cannot hold U+0000, which the service's own rows use
 * in their collection names (a name no configuration can give). Strings
 * bound to a statement are written with U+0000 as U+0001 U+0001 and U+0001
 * as U+0001 U+0002, and collection names are read back the other way.
 */
const toDb = (s: string): string =>
  (s.includes('\u0000') || s.includes('\u0001') ? s.replaceAll('\u0001', '\u0001\u0002').replaceAll('\u0000', '\u0001\u0001') : s);
function fromDb(s: string): string {
  if (!s.includes('\u0001')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] as string;
    if (ch === '\u0001' && i + 1 < s.length) out += s[++i] === '\u0001' ? '\u0000' : '\u0001';
    else out += ch;
  }
  return out;
}
const dbValue = (v: unknown): unknown => (typeof v === 'string' ? toDb(v) : v);

/** How long a lease lasts unless renewed (recorded in `lease_expires`). */
const DEFAULT_LEASE_TTL_MS = 10 * 60_000;

function toLeased(r: Row): LeasedUri {
  return {
    id: Number(r.id), url: String(r.url), site: String(r.site), depth: Number(r.depth), hops: Number(r.hops), redirects: Number(r.redirects),
    parent: str(r.parent), priority: Number(r.priority), sub: str(r.sub), retries: Number(r.retries), flags: Number(r.flags ?? 0),
    crawled: r.crawled === true,
  };
}

function toCollection(r: Row): CollectionRow {
  return {
    name: fromDb(String(r.name)), configXml: String(r.config_xml), state: String(r.state), epoch: Number(r.epoch), cycleStartedMs: num(r.cycle_started_ms),
    cycleEndedMs: num(r.cycle_ended_ms), createdMs: Number(r.created_ms), extra: JSON.parse(String(r.extra)) as Record<string, unknown>,
  };
}

/** Records as the arrays putRecords binds (collection, then one array per column). */
function recordArrays(rows: ReadonlyArray<{ collection: string; record: UriRecord }>): unknown[][] {
  const cols: unknown[][] = Array.from({ length: 19 }, () => []);
  for (const { collection, record: r } of rows) {
    const v = [
      toDb(collection), r.url, r.site, r.status, r.httpStatus ?? null, r.checksum ?? null, r.lastCrawledMs, r.etag ?? null, r.lastModified ?? null,
      r.errorCount, r.skipCode ?? null, r.mime ?? null, r.size ?? null, r.contentRef ?? null, r.duplicateOf ?? null, r.redirectTo ?? null,
      r.depth, r.parent ?? null, r.epoch,
    ];
    v.forEach((x, i) => (cols[i] as unknown[]).push(x));
  }
  return cols;
}

/** URIs entering the frontier as the arrays the enqueue statements bind ($1–$12), with their positions `ords`. */
function uriArrays(rows: readonly Entering[], ords: readonly number[]): unknown[][] {
  const cols: unknown[][] = Array.from({ length: 12 }, () => []);
  rows.forEach(({ collection, epoch, uri: u }, i) => {
    const v = [toDb(collection), u.url, u.site, u.priority, u.depth, u.hops, u.redirects, u.parent ?? null, u.sub ?? null, u.flags ?? 0, epoch, ords[i]];
    v.forEach((x, j) => (cols[j] as unknown[]).push(x));
  });
  return cols;
}

/** The last of each key wins (a later write supersedes an earlier one of the same call), in the order of the first. */
function lastByKey<T>(items: readonly T[], key: (t: T) => string): T[] {
  const at = new Map<string, number>();
  const out: T[] = [];
  for (const t of items) {
    const k = key(t);
    const i = at.get(k);
    if (i === undefined) {
      at.set(k, out.length);
      out.push(t);
    } else out[i] = t;
  }
  return out;
}

/** A URI entering the frontier, with where it goes. */
interface Entering {
  readonly collection: string;
  readonly epoch: number;
  readonly uri: QueuedUri;
}

/**
 * Statements that only read, and whose answer no other answer can
 * contradict (a record, a cached robots.txt, a page of the outbox): they
 * run on the pool beside the rest (see `inOrder`). The frontier's
 * "what is queued" answers (sitesWithWork, counts, lease) are not here.
 */
const READS: ReadonlySet<StatementName> = new Set<StatementName>([
  'getCollection', 'listCollections', 'seen', 'getRecord', 'byChecksum', 'listRecords', 'recordsAfter', 'recordsBefore',
  'frontierEntry', 'getCookieJar', 'listCycles', 'countRecords', 'countRecordsOfSite', 'countRecordsOfStatus', 'countRecordsOfSiteStatus', 'cycleRecordCounts',
  'pendingFeed', 'feedBacklog', 'getRobots', 'getStats', 'listStats', 'listStatsPage', 'getSitemapMeta', 'listSitemapMeta', 'listChangeHistory', 'feedLinks',
]);

export interface PostgresStoreOptions {
  /** How long a completion may wait for others to share its transaction (default 3 ms). */
  readonly commitWindowMs?: number;
  /** The lease holder's name written on each leased row (default host:pid). */
  readonly owner?: string;
  /** How long a lease lasts unless renewed (default 10 minutes). */
  readonly leaseTtlMs?: number;
  /** Connections in the pool (default 8). */
  readonly poolSize?: number;
  /**
   * Refuse to share the store with another process that opened it
   * exclusive (TRAWL_ERR_IO), as a SQLite store does; what `trawl crawl`
   * and `trawl serve` open. Default false (tests open several at once).
   */
  readonly exclusive?: boolean;
  /**
   * A node of a multinode installation (installation.ts): `lease` takes
   * URIs only of the sites routed to `owner`, and `recoverLeases` puts back
   * only this node's own leases and expired ones (other nodes' fetches
   * under way are theirs).
   */
  readonly routed?: boolean;
}

export class PostgresCrawlStore implements CrawlStore, CompletionBatchWriter {
  /** The store's URL, as given (it may hold a password: show it with maskStoreUrl). */
  readonly url: string;
  /** The name this store's leases are held under. */
  readonly owner: string;
  private readonly pool: Pool;
  private readonly leaseTtlMs: number;
  private readonly routed: boolean;
  private readonly commits: GroupCommit;
  private closed = false;
  /** The last call of `inOrder`: the next one starts when it has ended. */
  private tail: Promise<void> = Promise.resolve();
  /** The exclusive hold, when opened exclusive. */
  private hold: { release(): Promise<void> } | undefined;

  private constructor(url: string, pool: Pool, opts: PostgresStoreOptions) {
    this.url = url;
    this.pool = pool;
    this.owner = opts.owner ?? `${hostname()}:${process.pid}`;
    this.leaseTtlMs = opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    this.routed = opts.routed === true;
    this.commits = new GroupCommit(this, { windowMs: opts.commitWindowMs ?? 3 });
  }

  /**
   * Opens the store at `url` (postgres://user:password@host:port/database),
   * creating its tables in a new database. Rejects with
   * TRAWL_ERR_STORE_UNAVAILABLE (the URL's password masked) when the
   * server cannot be reached or refuses the login.
   */
  static async open(url: string, opts: PostgresStoreOptions = {}): Promise<PostgresCrawlStore> {
    const hold = opts.exclusive ? await holdExclusive(url) : undefined;
    try {
      const pool = await openPool(url, (c) => migrateToLatest(c, url), opts.poolSize !== undefined ? { max: opts.poolSize } : {});
      const store = new PostgresCrawlStore(url, pool, opts);
      store.hold = hold;
      return store;
    } catch (err) {
      await hold?.release();
      throw err;
    }
  }

  /** Runs a named statement on `on` (a transaction's connection) or on the pool. */
  /**
   * Runs a named statement: on `on` (a transaction's connection) as it
   * comes; else a read of READS on the pool, beside anything else; else
   * in call order (`inOrder`).
   */
  private async run(name: StatementName, values: readonly unknown[], on?: Client): Promise<{ rows: Row[]; rowCount: number }> {
    const query = { name, text: NAMED[name], values: values.map(dbValue) };
    const r = on ? await on.query<Row>(query) : READS.has(name) ? await this.pool.query<Row>(query) : await this.inOrder(() => this.pool.query<Row>(query));
    return { rows: r.rows, rowCount: r.rowCount ?? 0 };
  }

  private tx<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    return this.inOrder(() => transaction(this.pool, fn));
  }

  /**
   * Runs `fn` once everything called before it through here has ended:
   * writes and frontier answers take effect, and answer, in the order they
   * were called, as on SQLite's one thread. The crawler relies on it: a
   * lease that comes back short means the site has nothing queued NOW, so
   * it must not answer after a completion that queued more for the site
   * and answered first (run side by side on two connections, the lease
   * could read the frontier before that completion committed and answer
   * after it: the crawler would take the site for drained with URIs
   * queued). Across processes the database's row locks order things; in
   * one process, this does.
   */
  private inOrder<T>(fn: () => Promise<T>): Promise<T> {
    const out = this.tail.then(fn);
    this.tail = out.then(() => {}, () => {});
    return out;
  }

  // ------------------------------------------------------------- catalog

  async putCollection(name: string, configXml: string, nowMs: number): Promise<void> {
    await this.run('putCollection', [name, configXml, nowMs]);
  }

  async getCollection(name: string): Promise<CollectionRow | undefined> {
    const r = (await this.run('getCollection', [name])).rows[0];
    return r ? toCollection(r) : undefined;
  }

  async listCollections(): Promise<CollectionRow[]> {
    return (await this.run('listCollections', [])).rows.map(toCollection);
  }

  async updateCollection(name: string, patch: CollectionPatch): Promise<void> {
    const cols: string[] = [];
    const vals: (string | number | null)[] = [];
    const set = (col: string, v: string | number | null | undefined): void => {
      vals.push(v === undefined ? null : v);
      cols.push(`${col} = $${vals.length}`);
    };
    if ('state' in patch) set('state', patch.state);
    if ('epoch' in patch) set('epoch', patch.epoch);
    if ('cycleStartedMs' in patch) set('cycle_started_ms', patch.cycleStartedMs);
    if ('cycleEndedMs' in patch) set('cycle_ended_ms', patch.cycleEndedMs);
    if ('extra' in patch) set('extra', JSON.stringify(patch.extra ?? {}));
    if (cols.length === 0) return;
    // The columns vary with the patch: the one statement not in the table.
    await this.inOrder(() => this.pool.query(`UPDATE collections SET ${cols.join(', ')} WHERE name = $${vals.length + 1}`, [...vals, toDb(name)]));
  }

  async getCookieJar(name: string): Promise<string | undefined> {
    const r = (await this.run('getCookieJar', [name])).rows[0];
    return r ? String(r.jar) : undefined;
  }

  async putCookieJar(name: string, jar: string, nowMs: number): Promise<void> {
    await this.run('putCookieJar', [name, jar, nowMs]);
  }

  async putCycle(name: string, c: CycleRow): Promise<void> {
    await this.run('putCycle', [name, c.id, c.epoch, c.status, c.statusMs, c.startedMs, c.endedMs ?? null, c.stoppedBy ?? null]);
  }

  async listCycles(name: string, limit: number): Promise<CycleRow[]> {
    return (await this.run('listCycles', [name, limit])).rows.map((r) => ({
      id: String(r.id), epoch: Number(r.epoch), status: String(r.status) as CycleStatus, statusMs: Number(r.status_ms), startedMs: Number(r.started_ms),
      endedMs: num(r.ended_ms), stoppedBy: str(r.stopped_by),
    }));
  }

  async deleteCollection(name: string): Promise<void> {
    await this.tx(async (c) => {
      for (const sql of DELETE_COLLECTION_ROWS) await c.query(sql, [toDb(name)]);
      await this.run('deleteCollection', [name], c);
    });
  }

  // ------------------------------------------------------------ frontier

  /**
   * Writes URIs into the frontier with `statement` (enqueue or requeue, at
   * the back or the front), in blocks of at most SEQ_BLOCK, each numbered
   * from the block its sequence gives. At the front, the later block is
   * written first so that the call's first URI ends up first. An enqueue
   * adds the new URLs, then queues again those last queued in an earlier
   * cycle (statements.ts, ENQUEUE_NEW and ENQUEUE_AGAIN). Returns the
   * (collection, url) keys queued (enqueue) and the count.
   */
  private async writeFrontier(c: Client, statement: 'enqueueBack' | 'enqueueFront' | 'requeueBack' | 'requeueFront', rows: readonly Entering[]): Promise<{ keys: Set<string>; count: number }> {
    const keys = new Set<string>();
    let count = 0;
    const blocks: Entering[][] = [];
    for (let i = 0; i < rows.length; i += SEQ_BLOCK) blocks.push(rows.slice(i, i + SEQ_BLOCK));
    if (statement.endsWith('Front')) blocks.reverse();
    const arrays = uriArrays;
    const keyOf = (collection: string, url: string): string => `${collection}\u0000${url}`;
    for (const block of blocks) {
      const ords = block.map((_, i) => i);
      const r = await this.run(statement, arrays(block, ords), c);
      if (statement.startsWith('requeue')) {
        count += r.rowCount;
        continue;
      }
      const base = Number(r.rows[0]?.base);
      for (const row of r.rows) if (row.url !== null) keys.add(keyOf(fromDb(String(row.collection)), String(row.url)));
      const known = block.flatMap((e, i) => (keys.has(keyOf(e.collection, e.uri.url)) ? [] : [i]));
      if (known.length > 0) {
        const again = await this.run('enqueueAgain', [...arrays(known.map((i) => block[i] as Entering), known), base], c);
        for (const row of again.rows) keys.add(keyOf(fromDb(String(row.collection)), String(row.url)));
      }
      count = keys.size;
    }
    return { keys, count };
  }

  async enqueue(collection: string, epoch: number, uris: readonly QueuedUri[], front = false): Promise<QueuedUri[]> {
    if (uris.length === 0) return [];
    // A repeat within the batch is not queued twice: the first one counts.
    const seen = new Set<string>();
    const rows = uris.filter((u) => !seen.has(u.url) && seen.add(u.url) !== undefined).map((uri) => ({ collection, epoch, uri }));
    const { keys } = await this.tx((c) => this.writeFrontier(c, front ? 'enqueueFront' : 'enqueueBack', rows));
    return rows.filter((r) => keys.has(`${collection}\u0000${r.uri.url}`)).map((r) => r.uri);
  }

  async requeue(collection: string, epoch: number, uris: readonly QueuedUri[], front = false): Promise<number> {
    if (uris.length === 0) return 0;
    const rows = lastByKey(uris, (u) => u.url).map((uri) => ({ collection, epoch, uri }));
    return (await this.tx((c) => this.writeFrontier(c, front ? 'requeueFront' : 'requeueBack', rows))).count;
  }

  async releaseQuarantine(collection: string, site: string): Promise<number> {
    return (await this.run('releaseQuarantine', [collection, site])).rowCount;
  }

  /** Feed deletions of forgotten documents, to each destination of `feedTo`. */
  private async feedDeletes(c: Client, collection: string, urls: readonly string[], feedTo: readonly string[]): Promise<void> {
    if (urls.length === 0 || feedTo.length === 0) return;
    await this.queueFeedOps(c, feedTo.flatMap((destination) => urls.map((url) => ({ collection, destination, url, op: 'delete' as const }))));
  }

  async deleteUris(collection: string, urls: readonly string[], feedTo: readonly string[] = []): Promise<string[]> {
    if (urls.length === 0) return [];
    return this.tx(async (c) => {
      const gone = new Map((await this.run('delRecords', [collection, urls], c)).rows.map((r) => [String(r.url), str(r.content_ref)]));
      const withContent = [...new Set(urls)].filter((u) => gone.get(u) !== undefined);
      // Destination by destination, each in the order the URLs were given.
      await this.feedDeletes(c, collection, withContent, feedTo);
      await this.run('delFrontier', [collection, urls], c);
      return withContent.map((u) => gone.get(u) as string);
    });
  }

  async deleteSite(collection: string, site: string, feedTo: readonly string[] = []): Promise<string[]> {
    return this.tx(async (c) => {
      const rows = (await this.run('delSiteRecords', [collection, site], c)).rows
        .filter((r) => r.content_ref !== null)
        .map((r) => ({ url: String(r.url), ref: String(r.content_ref) }))
        .sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
      await this.feedDeletes(c, collection, rows.map((r) => r.url), feedTo);
      await this.run('delSiteFrontier', [collection, site], c);
      return rows.map((r) => r.ref);
    });
  }

  async seen(collection: string, epoch: number, url: string): Promise<boolean> {
    return (await this.run('seen', [collection, url, epoch])).rows.length > 0;
  }

  async sitesWithWork(collection: string): Promise<SiteWork[]> {
    return (await this.run('sitesWithWork', [collection])).rows.map((r) => ({ site: String(r.site), queued: Number(r.n), oldestEpoch: Number(r.e) }));
  }

  async levelCounts(collection: string, site: string, epoch: number): Promise<Map<number, number>> {
    return new Map((await this.run('levelCounts', [collection, site, epoch])).rows.map((r) => [Number(r.priority), Number(r.n)]));
  }

  async lease(collection: string, site: string, n: number, levels?: readonly number[]): Promise<LeasedUri[]> {
    if (n <= 0) return [];
    const rows = (levels === undefined
      ? await this.run(this.routed ? 'leaseRouted' : 'lease', [collection, site, n, this.owner, this.leaseTtlMs])
      : await this.run(this.routed ? 'leaseRoutedByLevels' : 'leaseByLevels', [collection, site, n, this.owner, this.leaseTtlMs, [...levels]])).rows;
    // RETURNING has no order of its own: the lease's order is priority (or the levels' order given), then FIFO position.
    const rank = (p: number): number => {
      const i = levels === undefined ? -1 : levels.indexOf(p);
      return i < 0 ? (levels === undefined ? p : 1_000_000 + p) : i;
    };
    rows.sort((a, b) => rank(Number(a.priority)) - rank(Number(b.priority)) || Number(a.seq) - Number(b.seq));
    return rows.map(toLeased);
  }

  async release(collection: string, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.run('release', [ids, collection]);
  }

  async retry(collection: string, id: number): Promise<void> {
    await this.run('retry', [id, collection]);
  }

  async recoverLeases(collection: string): Promise<{ recovered: number; crashedTwice: LeasedUri[] }> {
    if (this.routed) return { recovered: (await this.run('recoverOwn', [collection, this.owner])).rowCount, crashedTwice: [] };
    return this.tx(async (c) => {
      const crashedTwice = (await this.run('crashedTwice', [collection], c)).rows.map(toLeased);
      return { recovered: (await this.run('recover', [collection], c)).rowCount, crashedTwice };
    });
  }

  /**
   * Puts the collection's expired leases (whose holder stopped renewing
   * them: a node that died) back in the queue, each with a crash strike.
   * Returns how many. Not part of the CrawlStore contract: for the
   * multinode installation.
   */
  async recoverExpiredLeases(collection: string): Promise<number> {
    return (await this.run('recoverExpired', [collection])).rowCount;
  }

  /** Moves the expiry of this store's leases in the collection `leaseTtlMs` on from now; returns how many. */
  async renewLeases(collection: string): Promise<number> {
    return (await this.run('renew', [collection, this.owner, this.leaseTtlMs])).rowCount;
  }

  async armSuspect(collection: string, id: number): Promise<void> {
    await this.run('arm', [id, collection]);
  }

  async dropQueued(collection: string, site?: string, beforeEpoch = 2 ** 31 - 1, subs?: DropSubs): Promise<number> {
    if (subs !== undefined) return (await this.run('dropQueuedSubs', [collection, beforeEpoch, site ?? null, [...subs.names], subs.except])).rowCount;
    const r = site === undefined ? await this.run('dropQueued', [collection, beforeEpoch]) : await this.run('dropQueuedSite', [collection, site, beforeEpoch]);
    return r.rowCount;
  }

  async frontierEntry(collection: string, url: string): Promise<FrontierEntry | undefined> {
    const r = (await this.run('frontierEntry', [collection, url])).rows[0];
    if (!r) return undefined;
    const state = Number(r.state);
    return {
      state: state === 0 ? 'queued' : state === 1 ? 'leased' : 'done', epoch: Number(r.epoch), depth: Number(r.depth), hops: Number(r.hops),
      redirects: Number(r.redirects), retries: Number(r.retries), priority: Number(r.priority), parent: str(r.parent), sub: str(r.sub), flags: Number(r.flags ?? 0),
    };
  }

  async counts(collection: string): Promise<FrontierCounts> {
    const r = (await this.run('counts', [collection])).rows[0] as Row;
    const queued = Number(r.queued);
    const leased = Number(r.leased);
    return { queued, leased, done: Number(r.total) - queued - leased };
  }

  // ---------------------------------------------------------- completion

  complete(collection: string, epoch: number, c: Completion): Promise<QueuedUri[]> {
    return this.commits.complete(collection, epoch, c);
  }

  /**
   * The group commit's primitive: the whole batch in one transaction
   * (CompletionBatchWriter): usually ONE statement, a round trip, for all
   * of it (statements.ts, COMPLETE_BATCH); a batch that writes one feed key
   * twice runs a statement per kind of row in a transaction. What the
   * completions of a batch write does not depend on their order, except
   * where one key is written twice, and there the later one wins as if
   * they were written one after the other: a record or site statistics
   * written twice keep the later; a link discovered twice is queued by
   * the first completion that found it.
   */
  async completeMany(batch: readonly BatchedCompletion[]): Promise<QueuedUri[][]> {
    const records = lastByKey(
      batch.flatMap((b) => (b.completion.record ? [{ collection: b.collection, record: b.completion.record }] : [])),
      (r) => `${r.collection}\u0000${r.record.url}`,
    );
    const done = [batch.map((b) => b.completion.leaseId), batch.map((b) => toDb(b.collection)), batch.map((b) => b.epoch)];
    // Discovered links: each (collection, url) once, for the first completion that found it.
    const owner = new Map<string, number>();
    const entering: Entering[] = [];
    batch.forEach((b, i) => {
      for (const uri of b.completion.discovered) {
        const key = `${b.collection}\u0000${uri?.url}`;
        if (owner.has(key)) continue;
        owner.set(key, i);
        entering.push({ collection: b.collection, epoch: b.epoch, uri });
      }
    });
    const stats = lastByKey(
      batch.filter((b) => b.completion.siteStats !== undefined && b.writeSiteStats),
      (b) => `${b.collection}\u0000${b.completion.site}`,
    );
    const statsArrays = [stats.map((b) => toDb(b.collection)), stats.map((b) => b.completion.site), stats.map((b) => b.completion.siteStats)];
    const feed = batch.flatMap((b) => (b.completion.feed ?? []).map((f) => ({ collection: b.collection, ...f })));
    const answer = (keys: ReadonlySet<string>): QueuedUri[][] => {
      const answers: QueuedUri[][] = batch.map(() => []);
      for (const e of entering) {
        const key = `${e.collection}\u0000${e.uri.url}`;
        if (keys.has(key)) (answers[owner.get(key) as number] as QueuedUri[]).push(e.uri);
      }
      return answers;
    };
    const feedKeys = new Set(feed.map((f) => `${f.collection}\u0000${f.destination}\u0000${f.url}`));
    if (feedKeys.size === feed.length && entering.length <= SEQ_BLOCK) {
      // The usual batch: one statement (statements.ts, COMPLETE_BATCH).
      const r = await this.run('completeBatch', [
        ...recordArrays(records), ...done, ...uriArrays(entering, entering.map((_, i) => i)), ...statsArrays,
        feed.map((f) => toDb(f.collection)), feed.map((f) => f.destination), feed.map((f) => f.url), feed.map((f) => f.op),
      ]);
      return answer(new Set(r.rows.map((row) => `${fromDb(String(row.collection))}\u0000${String(row.url)}`)));
    }
    // A batch that writes one feed key twice, or queues more than a block of URIs: statement by statement.
    return this.tx(async (c) => {
      if (records.length > 0) await this.run('putRecords', recordArrays(records), c);
      await this.run('done', done, c);
      const { keys } = entering.length > 0 ? await this.writeFrontier(c, 'enqueueBack', entering) : { keys: new Set<string>() };
      if (stats.length > 0) await this.run('putStats', statsArrays, c);
      if (feed.length > 0) await this.queueFeedOps(c, feed);
      return answer(keys);
    });
  }

  // ------------------------------------------------------------- records

  async getRecord(collection: string, url: string): Promise<UriRecord | undefined> {
    const r = (await this.run('getRecord', [collection, url])).rows[0];
    return r ? recordOfRow(r) : undefined;
  }

  async findByChecksum(collection: string, checksum: string, exceptUrl: string): Promise<string | undefined> {
    return str((await this.run('byChecksum', [collection, checksum, exceptUrl])).rows[0]?.url);
  }

  async duplicatesOf(collection: string, url: string, limit: number): Promise<string[]> {
    return (await this.run('duplicatesOf', [collection, url, limit])).rows.map((r) => String(r.url));
  }

  async putRecord(collection: string, record: UriRecord): Promise<void> {
    await this.run('putRecords', recordArrays([{ collection, record }]));
  }

  async listRecords(collection: string): Promise<UriRecord[]> {
    return (await this.run('listRecords', [collection])).rows.map(recordOfRow);
  }

  async listRecordPage(collection: string, page: RecordPageRequest): Promise<RecordPage> {
    const limit = Math.max(0, Math.floor(page.limit));
    const rows = page.backwards
      ? (await this.run('recordsBefore', [collection, page.from ?? Number.MAX_SAFE_INTEGER, limit])).rows.reverse()
      : (await this.run('recordsAfter', [collection, page.from ?? 0, limit])).rows;
    return recordPageOf(rows, page.positions);
  }

  async countRecords(collection: string, filter: RecordFilter = {}): Promise<number> {
    const { site, status } = filter;
    const r = site !== undefined
      ? (status !== undefined ? await this.run('countRecordsOfSiteStatus', [collection, site, status]) : await this.run('countRecordsOfSite', [collection, site]))
      : (status !== undefined ? await this.run('countRecordsOfStatus', [collection, status]) : await this.run('countRecords', [collection]));
    return Number(r.rows[0]?.n ?? 0);
  }

  async cycleRecordCounts(collection: string, epoch: number): Promise<CycleRecordCounts> {
    const r = (await this.run('cycleRecordCounts', [collection, epoch])).rows[0] as Row;
    return { documents: Number(r.documents), inCycle: Number(r.in_cycle) };
  }

  // --------------------------------------------------------- feed outbox

  /**
   * Writes feed operations in order. One statement takes no key twice, so
   * the operations go in runs without a repeated (collection, destination,
   * url): a later operation on a URL replaces the earlier one as queueFeed says.
   */
  private async queueFeedOps(c: Client, ops: ReadonlyArray<FeedOp & { collection: string }>): Promise<void> {
    let run: Array<FeedOp & { collection: string }> = [];
    let keys = new Set<string>();
    const flush = async (): Promise<void> => {
      if (run.length === 0) return;
      await this.run('queueFeed', [run.map((o) => toDb(o.collection)), run.map((o) => o.destination), run.map((o) => o.url), run.map((o) => o.op)], c);
      run = [];
      keys = new Set();
    };
    for (const o of ops) {
      const key = `${o.collection}\u0000${o.destination}\u0000${o.url}`;
      if (keys.has(key)) await flush();
      keys.add(key);
      run.push(o);
    }
    await flush();
  }

  async queueFeed(collection: string, ops: readonly FeedOp[]): Promise<void> {
    if (ops.length === 0) return;
    await this.tx((c) => this.queueFeedOps(c, ops.map((o) => ({ ...o, collection }))));
  }

  async queueFeedFromRecords(collection: string, destinations: readonly string[], which: FeedSelection): Promise<number> {
    return this.tx(async (c) => {
      let documents = 0;
      for (const [i, d] of destinations.entries()) {
        const r = which.urls
          ? await this.run('feedUrls', [d, collection, which.urls], c)
          : which.site !== undefined
            ? await this.run('feedSite', [d, collection, which.site, which.prefix ?? ''], c)
            : await this.run('feedAll', [d, collection], c);
        if (i === 0) documents = r.rowCount;
      }
      return documents;
    });
  }

  async pendingFeed(collection: string, destination: string, afterId: number, limit: number): Promise<PendingFeedOp[]> {
    return (await this.run('pendingFeed', [collection, destination, afterId, limit])).rows.map((r) => ({
      id: Number(r.id), ver: Number(r.ver), destination: String(r.destination), url: String(r.url), op: String(r.op) as FeedOp['op'],
    }));
  }

  async ackFeed(collection: string, sent: ReadonlyArray<Pick<PendingFeedOp, 'id' | 'ver'>>): Promise<void> {
    if (sent.length === 0) return;
    await this.run('ackFeed', [collection, sent.map((s) => s.id), sent.map((s) => s.ver)]);
  }

  async feedBacklog(collection: string): Promise<Record<string, number>> {
    return Object.fromEntries((await this.run('feedBacklog', [collection])).rows.map((r) => [String(r.destination), Number(r.n)]));
  }

  // --------------------------------------------------------------- sites

  async getRobots(collection: string, site: string): Promise<RobotsRow | undefined> {
    const r = (await this.run('getRobots', [collection, site])).rows[0];
    if (!r) return undefined;
    const body = r.robots_body as Uint8Array | null;
    return { fetchedMs: Number(r.robots_fetched_ms), status: Number(r.robots_status), body: body ? new Uint8Array(body) : new Uint8Array() };
  }

  async putRobots(collection: string, site: string, row: RobotsRow): Promise<void> {
    await this.run('putRobots', [collection, site, row.fetchedMs, row.status, Buffer.from(row.body.buffer, row.body.byteOffset, row.body.byteLength)]);
  }

  async getSiteStats(collection: string, site: string): Promise<string | undefined> {
    return str((await this.run('getStats', [collection, site])).rows[0]?.stats);
  }

  async putSiteStats(collection: string, site: string, json: string): Promise<void> {
    await this.run('putStats', [[collection], [site], [json]]);
  }

  async putSiteStatsMany(collection: string, rows: ReadonlyArray<SiteStatsRow>): Promise<void> {
    if (rows.length === 0) return;
    const last = lastByKey(rows, (r) => r.site);
    await this.run('putStats', [last.map(() => toDb(collection)), last.map((r) => r.site), last.map((r) => r.json)]);
  }

  async listSiteStats(collection: string, page?: { readonly after?: string; readonly limit: number }): Promise<Array<{ site: string; json: string }>> {
    const r = page ? await this.run('listStatsPage', [collection, page.after ?? '', page.limit]) : await this.run('listStats', [collection]);
    return r.rows.map((x) => ({ site: String(x.site), json: String(x.stats) }));
  }

  async putSitemapMeta(collection: string, entries: readonly SitemapMeta[]): Promise<void> {
    if (entries.length === 0) return;
    const last = lastByKey(entries, (e) => e.url);
    await this.run('putSitemapMeta', [collection, last.map((e) => e.url), last.map((e) => e.lastmod ?? null), last.map((e) => e.changefreq ?? null), last.map((e) => e.priority ?? null)]);
  }

  async getSitemapMeta(collection: string, url: string): Promise<SitemapMeta | undefined> {
    const r = (await this.run('getSitemapMeta', [collection, url])).rows[0];
    return r ? { url: String(r.url), lastmod: str(r.lastmod), changefreq: str(r.changefreq), priority: num(r.priority) } : undefined;
  }

  async listSitemapMeta(collection: string): Promise<SitemapMeta[]> {
    return (await this.run('listSitemapMeta', [collection])).rows.map((r) => ({ url: String(r.url), lastmod: str(r.lastmod), changefreq: str(r.changefreq), priority: num(r.priority) }));
  }

  async putChangeHistory(collection: string, entries: readonly ChangeHistory[]): Promise<void> {
    if (entries.length === 0) return;
    const last = lastByKey(entries, (e) => e.url);
    await this.run('putChangeHistory', [collection, last.map((e) => e.url), last.map((e) => e.checks), last.map((e) => e.changes), last.map((e) => e.sinceMs), last.map((e) => e.lastChangeMs ?? null)]);
  }

  async listChangeHistory(collection: string): Promise<ChangeHistory[]> {
    return (await this.run('listChangeHistory', [collection])).rows.map((r) => ({
      url: String(r.url), checks: Number(r.checks), changes: Number(r.changes), sinceMs: Number(r.since_ms), lastChangeMs: num(r.last_change_ms),
    }));
  }

  async noteFeedLinks(collection: string, feed: string, urls: readonly string[], nowMs: number, maxCount: number, maxAgeMs: number): Promise<string[]> {
    return this.tx(async (c) => {
      // Insertion order breaks ties in first-seen time: a later link in the same batch is younger.
      if (urls.length > 0) await this.run('noteFeedLinks', [collection, feed, urls, urls.map((_, i) => nowMs + i * 1e-3)], c);
      const rows = (await this.run('feedLinks', [collection, feed], c)).rows;
      const expired = rows.filter((r, i) => i >= maxCount || (maxAgeMs > 0 && nowMs - Number(r.first_seen_ms) > maxAgeMs)).map((r) => String(r.url));
      if (expired.length > 0) await this.run('dropFeedLinks', [collection, feed, expired], c);
      return expired;
    });
  }

  // ---------------------------------------------------------------------

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const writing = this.commits.flush();
    try {
      if (writing) await writing;
      await this.tail;
      await this.pool.end();
    } finally {
      await this.hold?.release();
    }
  }
}
