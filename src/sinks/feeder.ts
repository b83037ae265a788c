/**
 * The feeder: drains a collection's feed outbox into its sinks.
 *
 *   loop: for each content destination that is not paused
 *           pendingFeed (oldest first, a batch)
 *           ─► record + stored content ─► SearchDocument  (add, update)
 *              or a delete                                 (delete; the document is gone)
 *           ─► every sink.submit(batch)
 *           ─► ackFeed  (only now: a crash before this sends the batch again)
 *         nothing to do ─► sleep until poked (a commit, a reprocess, a resume)
 *         a sink failed ─► back off 1 s, 2 s, … 60 s and try the same batch again
 *
 * A submitted job's URL Status Messages (CiteSeerX statusUpdates) wait in the
 * same outbox under STATUS_DESTINATION: with a sink that sends them
 * (`Sink.sendStatuses`), each loop also sends those and acks them after the
 * broker took them, with the same back-off; never read without one.
 *
 * MS-FSCCFG 2.2.4.9 `paused` / pp `ds_paused` and MS-FSCADM
 * CollectionSuspendFeeding leave a destination's operations in the outbox,
 * persisted, until feeding resumes.
 */

import type { ContentStore } from '../store/content-store.ts';
import type { CrawlStore, PendingFeedOp, UriRecord } from '../store/crawl-store.ts';
import { STATUS_DESTINATION } from '../store/feed-outbox.ts';
import type { PPCounter } from '../stats/statistics.ts';
import { buildDocument, charsetOfHeader, documentId, markInaccessible, type DocumentOptions } from './document.ts';
import type { DocumentSourceData, Sink, SinkOp } from './sink.ts';

export interface FeederOptions {
  readonly store: CrawlStore;
  readonly content: ContentStore;
  /** The crawl collection. */
  readonly collection: string;
  /** Content destination name → the content collection its documents are submitted to. */
  readonly destinations: ReadonlyMap<string, string>;
  readonly sinks: readonly Sink[];
  /** Whether a destination is paused right now. */
  readonly paused: (destination: string) => boolean;
  readonly documents?: Omit<DocumentOptions, 'collection' | 'crawlCollection'>;
  readonly batchSize?: number;
  /** Counters to continue from (after a restart). */
  readonly counters?: Readonly<Partial<Record<PPCounter, number>>>;
  readonly onError?: (message: string) => void;
  readonly onRejected?: (url: string, sink: string, reason: string) => void;
  /** A submitted job: its failed URIs' statuses are sent by the sink that has `sendStatuses`. */
  readonly reportsFailures?: boolean;
  /** Told each document a sink took or refused (the Elastic event log's url-output); absent: nothing is timed or told. */
  readonly onDelivered?: (url: string, sink: string, ok: boolean, message: string, startMs: number, endMs: number) => void;
}

const MAX_BACKOFF_MS = 60_000;
/** additional_urls listed in one document at most. */
const MAX_ADDITIONAL_URLS = 100;

export class Feeder {
  private readonly o: FeederOptions;
  /** Cumulative content-submission counters (MS-FSCADM 2.2.4.10 PP*). */
  readonly counters: Record<'PPFed' | 'PPSucceeded' | 'PPFailed' | 'PPDeleted' | 'PPAdded' | 'PPModified', number>;
  private stopped = false;
  private wakeFn: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private backoffMs = 0;
  /** The last sink failure, until a batch goes through. */
  lastError: string | undefined;
  /** Failed attempts in a row (0 once a batch goes through): the retries a progress line shows. */
  failures = 0;
  /** When the feeder tries the failed batch again (epoch ms); meaningful while `failures` > 0. */
  retryAtMs = 0;

  /** The sink that sends URL Status Messages (a jms sink with status_queue), for a submitted job. */
  private readonly statusSink: Sink | undefined;

  /** Whether a sink writes the open_crawler schema (then documents are built in that form too). */
  private readonly openCrawler: boolean;

  constructor(o: FeederOptions) {
    this.o = o;
    this.statusSink = o.reportsFailures ? o.sinks.find((k) => k.sendStatuses !== undefined) : undefined;
    this.openCrawler = o.sinks.some((s) => s.schema === 'open_crawler');
    const c = o.counters ?? {};
    this.counters = { PPFed: c.PPFed ?? 0, PPSucceeded: c.PPSucceeded ?? 0, PPFailed: c.PPFailed ?? 0, PPDeleted: c.PPDeleted ?? 0, PPAdded: c.PPAdded ?? 0, PPModified: c.PPModified ?? 0 };
  }

  /** Whether the crawl should queue failed URIs' statuses: a submitted job with a sink that sends them. */
  get reportsFailures(): boolean {
    return this.statusSink !== undefined;
  }

  get destinations(): readonly string[] {
    return [...this.o.destinations.keys()];
  }

  start(): void {
    this.loopDone ??= this.loop();
  }

  /** New operations may be waiting (or a destination was resumed). */
  poke(): void {
    const w = this.wakeFn;
    this.wakeFn = undefined;
    w?.();
  }

  /** Stops after the batch in hand; what is left stays in the outbox. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.poke();
    await this.loopDone;
    await Promise.all(this.o.sinks.map((s) => s.close()));
  }

  /**
   * Feeds until the outbox of every destination that is not paused is empty,
   * or `timeoutMs` passes. Returns the operations still waiting there.
   */
  async drain(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    this.start();
    for (;;) {
      const waiting = await this.waiting();
      if (waiting === 0 || Date.now() >= deadline || this.stopped) return waiting;
      this.poke();
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private async waiting(): Promise<number> {
    const backlog = await this.o.store.feedBacklog(this.o.collection);
    return Object.entries(backlog).filter(([d]) => (this.o.destinations.has(d) && !this.o.paused(d)) || (d === STATUS_DESTINATION && this.statusSink)).reduce((n, [, k]) => n + k, 0);
  }

  private sleep(ms: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      this.wakeFn = resolve;
      // A safety net: operations queued by something that did not poke are found within a second.
      setTimeout(resolve, ms ?? 1000).unref();
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let busy = false;
      try {
        for (const [destination, collection] of this.o.destinations) {
          if (this.stopped || this.o.paused(destination)) continue;
          const ops = await this.o.store.pendingFeed(this.o.collection, destination, 0, this.o.batchSize ?? 100);
          if (ops.length === 0) continue;
          busy = true;
          await this.send(collection, ops);
        }
        if (this.statusSink && !this.stopped && (await this.sendStatuses(this.statusSink))) busy = true;
        this.backoffMs = 0;
        this.lastError = undefined;
        this.failures = 0;
      } catch (err) {
        this.backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(1000, this.backoffMs * 2));
        this.lastError = (err as Error).message;
        this.failures++;
        this.retryAtMs = Date.now() + this.backoffMs;
        this.o.onError?.(`${(err as Error).message}; trying again in ${this.backoffMs / 1000} s`);
        await this.sleepUnpoked(this.backoffMs);
        continue;
      }
      if (!busy) await this.sleep(undefined);
    }
  }

  /** A back-off that a poke does not cut short (only stop does). */
  private async sleepUnpoked(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.stopped && Date.now() < until) await this.sleep(until - Date.now());
  }

  private async send(collection: string, ops: readonly PendingFeedOp[]): Promise<void> {
    const batch: SinkOp[] = [];
    const kinds: Array<PendingFeedOp['op']> = [];
    for (const op of ops) {
      // inaccessible: the document as stored, from the error record that kept it, marked (a 5xx under trawl_purge).
      const built = op.op === 'delete' ? undefined : await this.documentOf(op.url, collection, op.op === 'inaccessible');
      batch.push(built ? { op: 'index', doc: built.doc, source: built.source } : { op: 'delete', id: documentId(op.url), url: op.url, collection });
      kinds.push(built ? op.op : 'delete');
    }
    const refused = new Set<number>();
    const delivered = this.o.onDelivered;
    for (const sink of this.o.sinks) {
      const startMs = delivered ? Date.now() : 0;
      const r = await sink.submit(batch); // throws: the batch stays in the outbox
      const reasons = new Map<number, string>();
      for (const { index, reason } of r.rejected) {
        refused.add(index);
        reasons.set(index, reason);
        this.o.onRejected?.(ops[index]!.url, sink.name, reason);
      }
      if (delivered) {
        const endMs = Date.now();
        batch.forEach((b, i) => {
          if (b.op !== 'index') return;
          const reason = reasons.get(i);
          delivered(b.doc.url, sink.name, reason === undefined, reason ?? `the ${sink.type} sink took the document`, startMs, endMs);
        });
      }
    }
    await this.o.store.ackFeed(this.o.collection, ops);
    kinds.forEach((k, i) => {
      if (refused.has(i)) {
        this.counters.PPFailed++;
        return;
      }
      if (k === 'delete') {
        this.counters.PPDeleted++;
        return;
      }
      this.counters.PPFed++;
      this.counters.PPSucceeded++;
      if (k === 'add') this.counters.PPAdded++;
      else this.counters.PPModified++;
    });
  }

  /** Sends a batch of waiting URL Status Messages; false when none waits. */
  private async sendStatuses(sink: Sink): Promise<boolean> {
    const ops = await this.o.store.pendingFeed(this.o.collection, STATUS_DESTINATION, 0, this.o.batchSize ?? 100);
    if (ops.length === 0) return false;
    const updates = ops.flatMap((op) => {
      const status = /^status:(-?\d+)$/.exec(op.op)?.[1];
      return status === undefined ? [] : [{ url: op.url, status: Number(status) }];
    });
    await sink.sendStatuses!(this.o.collection, updates); // throws: they stay in the outbox
    await this.o.store.ackFeed(this.o.collection, ops);
    return true;
  }

  /** The document as stored now; undefined when it is gone (then the destination is told to delete it). */
  private async documentOf(url: string, collection: string, inaccessible = false): Promise<{ doc: ReturnType<typeof buildDocument>; source: DocumentSourceData } | undefined> {
    // The engine may replace the content between the two reads; read the record again when it did.
    for (let attempt = 0; attempt < 3; attempt++) {
      const record: UriRecord | undefined = await this.o.store.getRecord(this.o.collection, url);
      if (!record || !record.contentRef) return undefined;
      // An inaccessible document is one whose record is an error that kept its content; fetched again since, it is sent as it is now.
      const marked = inaccessible && record.status === 'error';
      if (record.status !== 'stored' && record.status !== 'unchanged' && !marked) return undefined;
      const stored = await this.o.content.get(record.contentRef);
      if (stored) {
        const additionalUrls = await this.o.store.duplicatesOf(this.o.collection, url, MAX_ADDITIONAL_URLS);
        const built = buildDocument({ record, body: stored.body, mime: stored.mime, charset: charsetOfHeader(stored.header), additionalUrls }, { ...this.o.documents, collection, crawlCollection: this.o.collection, openCrawler: this.openCrawler });
        const doc = marked ? markInaccessible(built, record.errorCount) : built;
        return { doc, source: { record, body: stored.body, header: stored.header, mime: stored.mime } };
      }
    }
    return undefined;
  }
}
