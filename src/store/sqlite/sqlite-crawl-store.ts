/**
 * The embedded crawl store: SQLite through Node's built-in `node:sqlite`,
 * in WAL mode, one database file in the data directory.
 *
 *   connection.ts   opening (file mode, pragmas, EXCLUSIVE lock), transactions
 *   schema.ts       the tables and SCHEMA_VERSION
 *   migrations.ts   an earlier version brought to the current one when opened
 *   statements.ts   every prepared statement, as a typed table
 *   this file       the CrawlStore contract on top of them, role by role
 *
 * A fetch's completion is written by `completeMany`, a batch in one
 * transaction; `complete` hands it to the group commit (../group-commit.ts),
 * which decides which completions share a batch and when it is written.
 *
 * node:sqlite is synchronous; the async methods only wrap it so that the
 * PostgreSQL dialect can implement the same interface.
 */

import type { DatabaseSync } from 'node:sqlite';
import { isDiskFull } from '../../core/disk-full.ts';
import type { CollectionPatch, CollectionRow, CycleRow, CycleStatus } from '../catalog-store.ts';
import type { Completion, CrawlStore } from '../crawl-store.ts';
import type { FeedOp, FeedSelection, PendingFeedOp } from '../feed-outbox.ts';
import type { DropSubs, FrontierCounts, FrontierEntry, LeasedUri, QueuedUri, SiteWork } from '../frontier-store.ts';
import { GroupCommit, type BatchedCompletion, type CompletionBatchWriter } from '../group-commit.ts';
import type { CycleRecordCounts, RecordFilter, RecordPage, RecordPageRequest, UriRecord } from '../record-store.ts';
import type { ChangeHistory, RobotsRow, SitemapMeta, SiteStatsRow } from '../site-store.ts';
import { openConnection, transaction } from './connection.ts';
import { migrateToLatest } from './migrations.ts';
import { prepareStatements, type Statements } from './statements.ts';
import { num, recordOfRow, recordPageOf, str, type Row } from '../row-values.ts';



function toCycle(r: Row): CycleRow {
  return {
    id: String(r.id), epoch: Number(r.epoch), status: String(r.status) as CycleStatus, statusMs: Number(r.status_ms), startedMs: Number(r.started_ms),
    endedMs: num(r.ended_ms), stoppedBy: str(r.stopped_by),
  };
}

function toLeased(r: Row): LeasedUri {
  return {
    id: Number(r.id), url: String(r.url), site: String(r.site), depth: Number(r.depth), hops: Number(r.hops), redirects: Number(r.redirects),
    parent: str(r.parent), priority: Number(r.priority), sub: str(r.sub), retries: Number(r.retries), flags: Number(r.flags ?? 0),
    crawled: r.record_id !== null && r.record_id !== undefined,
  };
}

function toCollection(r: Row): CollectionRow {
  return {
    name: String(r.name), configXml: String(r.config_xml), state: String(r.state), epoch: Number(r.epoch), cycleStartedMs: num(r.cycle_started_ms),
    cycleEndedMs: num(r.cycle_ended_ms), createdMs: Number(r.created_ms), extra: JSON.parse(String(r.extra)) as Record<string, unknown>,
  };
}

export class SqliteCrawlStore implements CrawlStore, CompletionBatchWriter {
  readonly path: string;
  private readonly db: DatabaseSync;
  private readonly st: Statements;
  /** FIFO positions: appended URIs take nextSeq upwards, front-inserted ones frontSeq downwards. */
  private nextSeq: number;
  private frontSeq: number;
  private readonly commits: GroupCommit;

  /**
   * `commitWindowMs`: how long a completion may wait for others to share
   * its transaction (default 3 ms; 0: until the end of the event-loop turn).
   * `busyTimeoutMs`: how long opening waits for another process that holds
   * the store (default 5 s; connection.ts on why one process per store).
   */
  constructor(path: string, opts: { commitWindowMs?: number; busyTimeoutMs?: number } = {}) {
    this.path = path;
    this.db = openConnection(path, opts.busyTimeoutMs ?? 5000, (db) => migrateToLatest(db, path));
    this.st = prepareStatements(this.db);
    const seq = this.st.seqRange.get() as Row;
    this.nextSeq = Number(seq.hi) + 1;
    this.frontSeq = Math.min(0, Number(seq.lo)) - 1;
    this.commits = new GroupCommit(this, { windowMs: opts.commitWindowMs ?? 3 });
  }

  private tx<T>(fn: () => T): T {
    return transaction(this.db, fn);
  }

  // ------------------------------------------------------------- catalog

  async putCollection(name: string, configXml: string, nowMs: number): Promise<void> {
    this.st.putCollection.run(name, configXml, nowMs);
  }

  async getCollection(name: string): Promise<CollectionRow | undefined> {
    const r = this.st.getCollection.get(name) as Row | undefined;
    return r ? toCollection(r) : undefined;
  }

  async listCollections(): Promise<CollectionRow[]> {
    return (this.st.listCollections.all() as Row[]).map(toCollection);
  }

  async updateCollection(name: string, patch: CollectionPatch): Promise<void> {
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
    // The columns vary with the patch: the one statement not in the table.
    this.db.prepare(`UPDATE collections SET ${cols.join(', ')} WHERE name = ?`).run(...vals, name);
  }

  async getCookieJar(name: string): Promise<string | undefined> {
    const r = this.st.getCookieJar.get(name) as { jar: string } | undefined;
    return r?.jar;
  }

  async putCookieJar(name: string, jar: string, nowMs: number): Promise<void> {
    this.st.putCookieJar.run(name, jar, nowMs);
  }

  async putCycle(name: string, c: CycleRow): Promise<void> {
    this.st.putCycle.run(name, c.id, c.epoch, c.status, c.statusMs, c.startedMs, c.endedMs ?? null, c.stoppedBy ?? null);
  }

  async listCycles(name: string, limit: number): Promise<CycleRow[]> {
    return (this.st.listCycles.all(name, limit) as Row[]).map(toCycle);
  }

  async deleteCollection(name: string): Promise<void> {
    this.tx(() => {
      for (const st of this.st.deleteCollectionRows) st.run(name);
      this.st.deleteCollection.run(name);
    });
  }

  // ------------------------------------------------------------ frontier

  private enqueueOne(collection: string, epoch: number, u: QueuedUri, front: boolean): boolean {
    const seq = front ? this.frontSeq-- : this.nextSeq++;
    const r = this.st.enqueue.run(collection, u.url, u.site, u.priority, seq, epoch, u.depth, u.hops, u.redirects, u.parent ?? null, u.sub ?? null, u.flags ?? 0);
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
        n += Number(this.st.requeue.run(collection, u.url, u.site, u.priority, seq, epoch, u.depth, u.hops, u.redirects, u.parent ?? null, u.sub ?? null, u.flags ?? 0).changes);
      }
      return n;
    });
  }

  async releaseQuarantine(collection: string, site: string): Promise<number> {
    return Number(this.st.releaseQuarantine.run(collection, site).changes);
  }

  async deleteUris(collection: string, urls: readonly string[], feedTo: readonly string[] = []): Promise<string[]> {
    return this.tx(() => {
      const refs: string[] = [];
      for (const u of urls) {
        for (const r of this.st.refsOfUrl.all(collection, u) as Row[]) {
          refs.push(String(r.content_ref));
          for (const d of feedTo) this.st.queueFeed.run(collection, d, u, 'delete');
        }
        this.st.delRecord.run(collection, u, u);
        this.st.unlinkRecord.run(collection, u);
        this.st.delFrontier.run(collection, u);
      }
      return refs;
    });
  }

  async deleteSite(collection: string, site: string, feedTo: readonly string[] = []): Promise<string[]> {
    return this.tx(() => {
      const rows = this.st.refsOfSite.all(collection, site) as Row[];
      const refs = rows.map((r) => String(r.content_ref));
      for (const r of rows) for (const d of feedTo) this.st.queueFeed.run(collection, d, String(r.url), 'delete');
      this.st.delSiteRecords.run(collection, site);
      this.st.unlinkSiteRecords.run(collection, site);
      this.st.delSiteFrontier.run(collection, site);
      return refs;
    });
  }

  async seen(collection: string, epoch: number, url: string): Promise<boolean> {
    return this.st.seen.get(collection, url, epoch) !== undefined;
  }

  async sitesWithWork(collection: string): Promise<SiteWork[]> {
    return (this.st.sitesWithWork.all(collection) as Row[]).map((r) => ({ site: String(r.site), queued: Number(r.n), oldestEpoch: Number(r.e) }));
  }

  async levelCounts(collection: string, site: string, epoch: number): Promise<Map<number, number>> {
    return new Map((this.st.levelCounts.all(collection, site, epoch) as Row[]).map((r) => [Number(r.priority), Number(r.n)]));
  }

  async lease(collection: string, site: string, n: number, levels?: readonly number[]): Promise<LeasedUri[]> {
    return this.tx(() => {
      const order = levels === undefined ? undefined : `,${levels.join(',')},`;
      const rows = ((order === undefined ? this.st.leaseSelect.all(collection, site, n) : this.st.leaseSelectByLevels.all(collection, site, order, order, n)) as Row[]).map(toLeased);
      for (const r of rows) this.st.leaseMark.run(r.id);
      return rows;
    });
  }

  async release(collection: string, ids: readonly number[]): Promise<void> {
    this.tx(() => {
      for (const id of ids) this.st.release.run(id, collection);
    });
  }

  async retry(collection: string, id: number): Promise<void> {
    this.st.retry.run(this.nextSeq++, id, collection);
  }

  async recoverLeases(collection: string): Promise<{ recovered: number; crashedTwice: LeasedUri[] }> {
    return this.tx(() => {
      const crashedTwice = (this.st.crashedTwice.all(collection) as Row[]).map(toLeased);
      return { recovered: Number(this.st.recover.run(collection).changes), crashedTwice };
    });
  }

  async armSuspect(collection: string, id: number): Promise<void> {
    this.st.arm.run(id, collection);
  }

  async dropQueued(collection: string, site?: string, beforeEpoch = Number.MAX_SAFE_INTEGER, subs?: DropSubs): Promise<number> {
    if (subs !== undefined) return Number(this.st.dropQueuedSubs.run(collection, beforeEpoch, site ?? null, JSON.stringify(subs.names), subs.except ? 1 : 0).changes);
    const r = site === undefined ? this.st.dropQueued.run(collection, beforeEpoch) : this.st.dropQueuedSite.run(collection, site, beforeEpoch);
    return Number(r.changes);
  }

  async frontierEntry(collection: string, url: string): Promise<FrontierEntry | undefined> {
    const r = this.st.frontierEntry.get(collection, url) as Row | undefined;
    if (!r) return undefined;
    const state = Number(r.state);
    return {
      state: state === 0 ? 'queued' : state === 1 ? 'leased' : 'done', epoch: Number(r.epoch), depth: Number(r.depth), hops: Number(r.hops),
      redirects: Number(r.redirects), retries: Number(r.retries), priority: Number(r.priority), parent: str(r.parent), sub: str(r.sub), flags: Number(r.flags ?? 0),
    };
  }

  async counts(collection: string): Promise<FrontierCounts> {
    const r = this.st.counts.get(collection, collection, collection) as Row;
    const queued = Number(r.queued);
    const leased = Number(r.leased);
    return { queued, leased, done: Number(r.total) - queued - leased };
  }

  // ---------------------------------------------------------- completion

  complete(collection: string, epoch: number, c: Completion): Promise<QueuedUri[]> {
    return this.commits.complete(collection, epoch, c);
  }

  /** The group commit's primitive: the whole batch in one transaction (CompletionBatchWriter). */
  completeMany(batch: readonly BatchedCompletion[]): QueuedUri[][] {
    return this.tx(() => {
      const answers: QueuedUri[][] = [];
      for (const b of batch) answers.push(this.completeOne(b.collection, b.epoch, b.completion, b.writeSiteStats));
      return answers;
    });
  }

  /** One completion, inside the batch's transaction: frontier, record, links, statistics, feed. */
  private completeOne(collection: string, epoch: number, c: Completion, writeSiteStats: boolean): QueuedUri[] {
    const recordId = c.record ? this.writeRecord(collection, c.record, c.leaseId) : undefined;
    this.st.done.run(epoch, recordId ?? null, c.leaseId, collection);
    const added = c.discovered.filter((u) => this.enqueueOne(collection, epoch, u, false));
    if (c.siteStats !== undefined && writeSiteStats) this.st.putStats.run(collection, c.site, c.siteStats);
    for (const f of c.feed ?? []) this.st.queueFeed.run(collection, f.destination, f.url, f.op);
    return added;
  }

  // ------------------------------------------------------------- records

  /**
   * Writes a record over the URL's earlier one, or as a new one linked from
   * the URL's frontier row. `leaseId`: the frontier row of the URI being
   * completed, whose `done` update makes the link itself; the returned id
   * is then for that update to write. Returns undefined when no link is
   * left to make.
   */
  private writeRecord(collection: string, r: UriRecord, leaseId?: number): number | undefined {
    let owner = leaseId === undefined ? undefined : (this.st.ownerById.get(leaseId, collection) as Row | undefined);
    if (owner === undefined || owner.url !== r.url) owner = this.st.ownerByUrl.get(collection, r.url) as Row | undefined;
    const fields = [
      collection, r.url, r.site, r.status, r.httpStatus ?? null, r.checksum ?? null, r.lastCrawledMs, r.etag ?? null, r.lastModified ?? null,
      r.errorCount, r.skipCode ?? null, r.mime ?? null, r.size ?? null, r.contentRef ?? null, r.duplicateOf ?? null, r.redirectTo ?? null,
      r.depth, r.parent ?? null, r.epoch,
    ] as const;
    const known = owner?.record_id;
    if (known !== null && known !== undefined && Number(this.st.updateRecord.run(...fields, Number(known), collection, r.url).changes) > 0) return undefined;
    const ownerId = owner ? Number(owner.id) : Number(this.st.addOwner.run(collection, r.url, r.site, r.depth, r.depth, r.parent ?? null).lastInsertRowid);
    const id = Number(this.st.insertRecord.run(...fields).lastInsertRowid);
    if (ownerId === leaseId) return id;
    this.st.linkRecord.run(id, ownerId);
    return undefined;
  }

  async getRecord(collection: string, url: string): Promise<UriRecord | undefined> {
    const r = this.st.getRecord.get(collection, url) as Row | undefined;
    return r ? recordOfRow(r) : undefined;
  }

  async findByChecksum(collection: string, checksum: string, exceptUrl: string): Promise<string | undefined> {
    return str((this.st.byChecksum.get(collection, checksum, exceptUrl) as Row | undefined)?.url);
  }

  async duplicatesOf(collection: string, url: string, limit: number): Promise<string[]> {
    return (this.st.duplicatesOf.all(collection, url, limit) as Row[]).map((r) => String(r.url));
  }

  async putRecord(collection: string, record: UriRecord): Promise<void> {
    this.writeRecord(collection, record);
  }

  async listRecords(collection: string): Promise<UriRecord[]> {
    return (this.st.listRecords.all(collection) as Row[]).map(recordOfRow);
  }

  async listRecordPage(collection: string, page: RecordPageRequest): Promise<RecordPage> {
    const limit = Math.max(0, Math.floor(page.limit));
    const rows = page.backwards
      ? (this.st.recordsBefore.all(collection, page.from ?? Number.MAX_SAFE_INTEGER, limit) as Row[]).reverse()
      : (this.st.recordsAfter.all(collection, page.from ?? 0, limit) as Row[]);
    return recordPageOf(rows, page.positions);
  }

  async countRecords(collection: string, filter: RecordFilter = {}): Promise<number> {
    const { site, status } = filter;
    const r = site !== undefined
      ? (status !== undefined ? this.st.countRecordsOfSiteStatus.get(collection, site, status) : this.st.countRecordsOfSite.get(collection, site))
      : (status !== undefined ? this.st.countRecordsOfStatus.get(collection, status) : this.st.countRecords.get(collection));
    return Number((r as Row).n);
  }

  async cycleRecordCounts(collection: string, epoch: number): Promise<CycleRecordCounts> {
    const r = this.st.cycleRecordCounts.get(epoch, collection) as Row;
    return { documents: Number(r.documents), inCycle: Number(r.in_cycle) };
  }

  // --------------------------------------------------------- feed outbox

  async queueFeed(collection: string, ops: readonly FeedOp[]): Promise<void> {
    if (ops.length === 0) return;
    this.tx(() => {
      for (const f of ops) this.st.queueFeed.run(collection, f.destination, f.url, f.op);
    });
  }

  async queueFeedFromRecords(collection: string, destinations: readonly string[], which: FeedSelection): Promise<number> {
    return this.tx(() => {
      let documents = 0;
      destinations.forEach((d, i) => {
        let n = 0;
        if (which.urls) for (const u of which.urls) n += Number(this.st.feedUrl.run(d, collection, u).changes);
        else if (which.site !== undefined) n = Number(this.st.feedSite.run(d, collection, which.site, which.prefix ?? '', which.prefix ?? '').changes);
        else n = Number(this.st.feedAll.run(d, collection).changes);
        if (i === 0) documents = n;
      });
      return documents;
    });
  }

  async pendingFeed(collection: string, destination: string, afterId: number, limit: number): Promise<PendingFeedOp[]> {
    return (this.st.pendingFeed.all(collection, destination, afterId, limit) as Row[]).map((r) => ({
      id: Number(r.id), ver: Number(r.ver), destination: String(r.destination), url: String(r.url), op: String(r.op) as FeedOp['op'],
    }));
  }

  async ackFeed(collection: string, sent: ReadonlyArray<Pick<PendingFeedOp, 'id' | 'ver'>>): Promise<void> {
    if (sent.length === 0) return;
    this.tx(() => {
      for (const s of sent) this.st.ackFeed.run(s.id, collection, s.ver);
    });
  }

  async feedBacklog(collection: string): Promise<Record<string, number>> {
    return Object.fromEntries((this.st.feedBacklog.all(collection) as Row[]).map((r) => [String(r.destination), Number(r.n)]));
  }

  // --------------------------------------------------------------- sites

  async getRobots(collection: string, site: string): Promise<RobotsRow | undefined> {
    const r = this.st.getRobots.get(collection, site) as Row | undefined;
    if (!r) return undefined;
    return { fetchedMs: Number(r.robots_fetched_ms), status: Number(r.robots_status), body: new Uint8Array((r.robots_body as Uint8Array | null) ?? new Uint8Array()) };
  }

  async putRobots(collection: string, site: string, row: RobotsRow): Promise<void> {
    this.st.putRobots.run(collection, site, row.fetchedMs, row.status, row.body);
  }

  async getSiteStats(collection: string, site: string): Promise<string | undefined> {
    return str((this.st.getStats.get(collection, site) as Row | undefined)?.stats);
  }

  async putSiteStats(collection: string, site: string, json: string): Promise<void> {
    this.st.putStats.run(collection, site, json);
  }

  async putSiteStatsMany(collection: string, rows: ReadonlyArray<SiteStatsRow>): Promise<void> {
    if (rows.length === 0) return;
    this.tx(() => {
      for (const r of rows) this.st.putStats.run(collection, r.site, r.json);
    });
  }

  async listSiteStats(collection: string, page?: { readonly after?: string; readonly limit: number }): Promise<Array<{ site: string; json: string }>> {
    const rows = page ? this.st.listStatsPage.all(collection, page.after ?? '', page.limit) : this.st.listStats.all(collection);
    return (rows as Row[]).map((r) => ({ site: String(r.site), json: String(r.stats) }));
  }

  async putSitemapMeta(collection: string, entries: readonly SitemapMeta[]): Promise<void> {
    if (entries.length === 0) return;
    this.tx(() => {
      for (const e of entries) this.st.putSitemapMeta.run(collection, e.url, e.lastmod ?? null, e.changefreq ?? null, e.priority ?? null);
    });
  }

  async getSitemapMeta(collection: string, url: string): Promise<SitemapMeta | undefined> {
    const r = this.st.getSitemapMeta.get(collection, url) as Row | undefined;
    return r ? { url: String(r.url), lastmod: str(r.lastmod), changefreq: str(r.changefreq), priority: num(r.priority) } : undefined;
  }

  async listSitemapMeta(collection: string): Promise<SitemapMeta[]> {
    return (this.st.listSitemapMeta.all(collection) as Row[]).map((r) => ({ url: String(r.url), lastmod: str(r.lastmod), changefreq: str(r.changefreq), priority: num(r.priority) }));
  }

  async putChangeHistory(collection: string, entries: readonly ChangeHistory[]): Promise<void> {
    if (entries.length === 0) return;
    this.tx(() => {
      for (const e of entries) this.st.putChangeHistory.run(collection, e.url, e.checks, e.changes, e.sinceMs, e.lastChangeMs ?? null);
    });
  }

  async listChangeHistory(collection: string): Promise<ChangeHistory[]> {
    return (this.st.listChangeHistory.all(collection) as Row[]).map((r) => ({
      url: String(r.url), checks: Number(r.checks), changes: Number(r.changes), sinceMs: Number(r.since_ms), lastChangeMs: num(r.last_change_ms),
    }));
  }

  async noteFeedLinks(collection: string, feed: string, urls: readonly string[], nowMs: number, maxCount: number, maxAgeMs: number): Promise<string[]> {
    return this.tx(() => {
      // Insertion order breaks ties in first-seen time: a later link in the same batch is younger.
      urls.forEach((u, i) => this.st.noteFeedLink.run(collection, feed, u, nowMs + i * 1e-3));
      const rows = this.st.feedLinks.all(collection, feed) as Row[];
      const expired = rows.filter((r, i) => i >= maxCount || (maxAgeMs > 0 && nowMs - Number(r.first_seen_ms) > maxAgeMs)).map((r) => String(r.url));
      for (const u of expired) this.st.dropFeedLink.run(collection, feed, u);
      return expired;
    });
  }

  // ---------------------------------------------------------------------

  /** SQLite's plan for one of the prepared statements (diagnostics and regression tests). */
  queryPlan(statement: string): string {
    const st = Object.hasOwn(this.st, statement) ? this.st[statement as keyof Statements] : undefined;
    if (st === undefined || Array.isArray(st)) throw new Error(`no statement ${statement}`);
    const sql = st.sourceSQL;
    const params = (sql.match(/\?/g) ?? []).map(() => null);
    return (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Row[]).map((r) => String(r.detail)).join('; ');
  }

  async close(): Promise<void> {
    const writing = this.commits.flush();
    if (writing) await writing;
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
