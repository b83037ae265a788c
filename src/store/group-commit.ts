/**
 * Group commit, above the dialects: completions that arrive close together
 * share one transaction, written by the dialect's `completeMany`.
 *
 *   complete(a) ─┐
 *   complete(b) ─┼─► waiting [a, b, c] ── windowMs after the first, or maxBatch waiting ──►
 *   complete(c) ─┘        writer.completeMany([a, b, c])   one transaction, in this order
 *        ◄── a, b, c resolve in this order, each with its own answer, once it is committed
 *
 *   the transaction fails ──► each completion written again alone, in order:
 *                             one bad completion fails alone, and a batch that
 *                             keeps failing rejects every completion in it
 *
 * A completion resolves only once its transaction is committed, so nothing
 * is acknowledged before it is durable. A COMMIT writes every page the
 * batch dirtied and its cost hardly grows with the batch, which is why
 * sharing one pays (bench/README.md, *The storage thread alone*).
 *
 * Site statistics are cumulative: of the completions of one batch that
 * carry the same collection's and site's statistics, only the last one's
 * are written (`writeSiteStats`); alone, each writes its own.
 *
 * Batches are written one at a time: while a writer's asynchronous
 * `completeMany` is under way, completions wait, and the next batch is
 * written as soon as it ends. A synchronous writer (SQLite) is called from
 * the timer or from the `complete` that fills the batch, with no await in
 * between.
 */

import type { Completion } from './crawl-store.ts';
import type { QueuedUri } from './frontier-store.ts';

/** One completion of a batch, as the dialect's `completeMany` receives it. */
export interface BatchedCompletion {
  readonly collection: string;
  readonly epoch: number;
  readonly completion: Completion;
  /**
   * False when a later completion of the same batch carries statistics of
   * the same collection and site, which supersede these: the dialect then
   * does not write `completion.siteStats`.
   */
  readonly writeSiteStats: boolean;
}

/** What a dialect provides for group commit. */
export interface CompletionBatchWriter {
  /**
   * Writes every completion of `batch`, in order, in ONE transaction (each
   * as `CrawlStore.complete` describes): all of them or, when it throws or
   * rejects, none. Answers with each completion's queued discovered URIs,
   * in batch order (`answer[i]` for `batch[i]`). A completion sees what
   * the ones before it in the batch wrote.
   */
  completeMany(batch: readonly BatchedCompletion[]): QueuedUri[][] | Promise<QueuedUri[][]>;
}

export interface GroupCommitOptions {
  /** How long the first completion of a batch waits for others (ms); 0: until the end of the event-loop turn. Default 3. */
  readonly windowMs?: number;
  /** A batch is written at once when this many completions wait. Default 256. */
  readonly maxBatch?: number;
}

/** A completion waiting for its batch. One object per completion, handed to the writer as it is. */
class Waiting implements BatchedCompletion {
  readonly collection: string;
  readonly epoch: number;
  readonly completion: Completion;
  writeSiteStats = true;
  readonly resolve: (queued: QueuedUri[]) => void;
  readonly reject: (err: unknown) => void;

  constructor(collection: string, epoch: number, completion: Completion, resolve: (queued: QueuedUri[]) => void, reject: (err: unknown) => void) {
    this.collection = collection;
    this.epoch = epoch;
    this.completion = completion;
    this.resolve = resolve;
    this.reject = reject;
  }
}

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as { then?: unknown } | null)?.then === 'function';

/** Of the completions carrying one collection's and site's statistics, only the last writes them. */
function markSupersededStats(batch: readonly Waiting[]): void {
  if (batch.length === 1) return;
  const later = new Set<string>();
  for (let i = batch.length - 1; i >= 0; i--) {
    const w = batch[i] as Waiting;
    if (w.completion.siteStats === undefined) continue;
    const key = `${w.collection}\u0000${w.completion.site}`;
    w.writeSiteStats = !later.has(key);
    later.add(key);
  }
}

export class GroupCommit {
  private readonly writer: CompletionBatchWriter;
  private readonly windowMs: number;
  private readonly maxBatch: number;
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The asynchronous write under way, if any. */
  private writing: Promise<void> | undefined;

  constructor(writer: CompletionBatchWriter, opts: GroupCommitOptions = {}) {
    this.writer = writer;
    this.windowMs = opts.windowMs ?? 3;
    this.maxBatch = opts.maxBatch ?? 256;
  }

  /** Queues one completion for the next batch; settles as `CrawlStore.complete` does. */
  complete(collection: string, epoch: number, c: Completion): Promise<QueuedUri[]> {
    return new Promise((resolve, reject) => {
      const n = this.waiting.push(new Waiting(collection, epoch, c, resolve, reject));
      if (this.writing) return; // written when the write under way ends
      if (n === 1) {
        if (this.windowMs > 0) this.timer = setTimeout(() => this.flush(), this.windowMs);
        else setImmediate(() => this.flush());
      } else if (n >= this.maxBatch) void this.flush();
    });
  }

  /** How many completions wait for their batch (not counting one being written). */
  get pending(): number {
    return this.waiting.length;
  }

  /**
   * Writes the waiting completions now. Returns a promise when the writer
   * is asynchronous (settled once every completion waiting now is), else
   * undefined: they are settled when it returns.
   */
  flush(): Promise<void> | undefined {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.writing) return this.writing.then(() => this.flush());
    const batch = this.waiting;
    if (batch.length === 0) return undefined;
    this.waiting = [];
    markSupersededStats(batch);
    let answers: QueuedUri[][] | Promise<QueuedUri[][]>;
    try {
      answers = this.writer.completeMany(batch);
    } catch {
      return this.track(this.oneByOne(batch, 0));
    }
    if (!isPromise(answers)) {
      settle(batch, answers);
      return undefined;
    }
    return this.track(answers.then((a) => settle(batch, a), () => this.oneByOne(batch, 0)));
  }

  /** Marks an asynchronous write as under way; when it ends, what waited meanwhile is written. */
  private track(write: Promise<void> | undefined): Promise<void> | undefined {
    if (write === undefined) return undefined;
    const done = write.then(() => {
      this.writing = undefined;
      return this.waiting.length > 0 ? this.flush() : undefined;
    });
    this.writing = done;
    return done;
  }

  /** After a failed batch: each completion from `from` on in a transaction of its own, in order. */
  private oneByOne(batch: readonly Waiting[], from: number): Promise<void> | undefined {
    for (let i = from; i < batch.length; i++) {
      const w = batch[i] as Waiting;
      w.writeSiteStats = true;
      let answers: QueuedUri[][] | Promise<QueuedUri[][]>;
      try {
        answers = this.writer.completeMany([w]);
      } catch (err) {
        w.reject(err);
        continue;
      }
      if (isPromise(answers)) {
        return answers.then((a) => settle([w], a), (err: unknown) => w.reject(err)).then(() => this.oneByOne(batch, i + 1));
      }
      settle([w], answers);
    }
    return undefined;
  }
}

function settle(batch: readonly Waiting[], answers: readonly QueuedUri[][]): void {
  if (answers.length !== batch.length) {
    const err = new Error(`completeMany answered ${answers.length} times for ${batch.length} completions`);
    for (const w of batch) w.reject(err);
    return;
  }
  for (let i = 0; i < batch.length; i++) (batch[i] as Waiting).resolve(answers[i] as QueuedUri[]);
}
