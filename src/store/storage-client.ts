/**
 * The crawl store on a thread of its own. A crawl's main thread fetches,
 * checks scope and schedules, and is the crawl's critical path; the SQLite
 * statements and group commits run here instead. `trawl crawl` and `trawl
 * serve` open their crawl store here: one storage thread per process holds
 * the SQLite connections, and the main thread talks to it by message
 * (bench/README.md, *The thread layout, measured*).
 *
 * The content stores stay on the main thread: moved here as well they took
 * compression and fdatasync off it but the crawl got no faster (it waits on
 * the round trips as much as on the CPU), and the copies of every document
 * held in a second heap raised the peak memory (bench/README.md, *Tried*).
 *
 *   main thread                                     storage thread
 *   store.complete(c) ─{id, call, handle, method, args}─► SqliteCrawlStore.complete
 *        ◄─────────────── {id, result | error} ──────────  (after its group commit)
 *
 * Every method of the CrawlStore contract is forwarded as it is (the
 * contract suite runs against this proxy too); errors keep their
 * TrawlError code. Calls are answered in the order the store finishes
 * them. The thread dies with the process: a kill -9 loses exactly what it
 * loses for a store on the main thread, since a completion resolves only
 * once it is committed.
 */

import { Worker } from 'node:worker_threads';
import { BatchedPost } from '../core/batched-post.ts';
import { TrawlError, type ErrorCode } from '../core/errors.ts';
import type { CrawlStore } from './crawl-store.ts';
import { SUBSET_ANSWERS } from './storage-answers.ts';
import type { StorageMessage, StorageReply } from './storage-thread.ts';

const CRAWL_STORE_METHODS = [
  'putCollection', 'getCollection', 'listCollections', 'updateCollection', 'getCookieJar', 'putCookieJar', 'putCycle', 'listCycles', 'deleteCollection',
  'enqueue', 'requeue', 'releaseQuarantine', 'deleteUris', 'deleteSite', 'seen', 'sitesWithWork', 'levelCounts', 'lease', 'release', 'retry',
  'recoverLeases', 'armSuspect', 'dropQueued', 'frontierEntry', 'counts',
  'getRecord', 'findByChecksum', 'duplicatesOf', 'complete', 'putRecord', 'listRecords', 'listRecordPage', 'countRecords', 'cycleRecordCounts',
  'queueFeed', 'queueFeedFromRecords', 'pendingFeed', 'ackFeed', 'feedBacklog',
  'putSitemapMeta', 'getSitemapMeta', 'listSitemapMeta', 'putChangeHistory', 'listChangeHistory', 'noteFeedLinks',
  'getRobots', 'putRobots', 'getSiteStats', 'putSiteStats', 'putSiteStatsMany', 'listSiteStats',
  'close',
] as const satisfies ReadonlyArray<keyof CrawlStore>;

// Every method of the contract is forwarded: adding one without listing it here does not compile.
type Unlisted = Exclude<keyof CrawlStore, (typeof CRAWL_STORE_METHODS)[number]>;
const everyMethodListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyMethodListed;

const THREAD_URL = new URL(import.meta.url.endsWith('.ts') ? './storage-thread.ts' : './storage-thread.js', import.meta.url);

type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void };
/** A message as a caller writes it; send() numbers it. */
type Message = StorageMessage extends infer M ? (M extends unknown ? Omit<M, 'id'> & { id?: number } : never) : never;

class StorageThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private readonly outbox: BatchedPost<StorageMessage>;
  private nextId = 1;
  private nextHandle = 1;
  private open = 0;
  dead: Error | undefined;

  constructor() {
    this.worker = new Worker(THREAD_URL);
    this.outbox = new BatchedPost<StorageMessage>(
      (batch) => this.worker.postMessage(batch),
      (m, err) => this.settle({ id: m.id, error: { message: `cannot send ${m.op === 'call' ? m.method : m.op} to the storage thread: ${(err as Error).message}` } }),
    );
    this.worker.on('message', (replies: StorageReply[]) => {
      for (const r of replies) this.settle(r);
    });
    const fail = (err: Error): void => {
      this.dead ??= new TrawlError('TRAWL_ERR_IO', `the storage thread stopped: ${err.message}`, { cause: err });
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        p.reject(this.dead);
      }
      if (thread === this) thread = undefined;
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
    this.worker.unref();
  }

  private settle(m: StorageReply): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.error) p.reject(m.error.code ? new TrawlError(m.error.code as ErrorCode, m.error.message) : new Error(m.error.message));
    else p.resolve(m.result);
  }

  /**
   * Calls go to the thread in batches, one per turn of the event loop
   * (batched-post.ts). `m` is the caller's own new object, and is sent with
   * its id added rather than copied: a call waits for its answer across a
   * group commit, so whatever it allocates outlives a scavenge and is
   * copied (bench/README.md, *Allocations*).
   */
  send(m: Message): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    const call = Promise.withResolvers<unknown>();
    this.pending.set(id, call);
    m.id = id;
    this.outbox.send(m as StorageMessage);
    return call.promise;
  }

  /** Opens a store on the thread and returns its proxy; the thread keeps the process alive while any is open. */
  async proxy<T>(open: (handle: number) => Message, methods: readonly string[]): Promise<T> {
    const handle = this.nextHandle++;
    if (this.open++ === 0) this.worker.ref();
    try {
      await this.send(open(handle));
    } catch (err) {
      this.release();
      throw err;
    }
    let closed: Error | undefined;
    const obj: Record<string, unknown> = {};
    for (const method of methods) {
      const subsetOf = SUBSET_ANSWERS[method];
      obj[method] = subsetOf
        ? async (...args: unknown[]) => {
          if (closed) throw closed;
          const given = subsetOf(args);
          return ((await this.send({ op: 'call', handle, method, args })) as number[]).map((i) => given[i]);
        }
        : (...args: unknown[]) => (closed ? Promise.reject(closed) : this.send({ op: 'call', handle, method, args }));
    }
    obj.close = async () => {
      if (closed) return;
      closed = new TrawlError('TRAWL_ERR_IO', 'the store is closed');
      try {
        if (!this.dead) await this.send({ op: 'call', handle, method: 'close', args: [] });
      } finally {
        this.release();
      }
    };
    return obj as T;
  }

  private release(): void {
    if (--this.open === 0) this.worker.unref();
  }
}

let thread: StorageThread | undefined;

function storageThread(): StorageThread {
  thread ??= new StorageThread();
  return thread;
}

/** The SQLite crawl store at `path`, on the storage thread; rejects with the store's own error when it cannot be opened. */
export async function openThreadedCrawlStore(path: string, opts: { commitWindowMs?: number } = {}): Promise<CrawlStore & { readonly path: string }> {
  const store = await storageThread().proxy<CrawlStore>((handle) => ({ op: 'open', handle, args: [path, opts] }), CRAWL_STORE_METHODS);
  return Object.assign(store, { path });
}
