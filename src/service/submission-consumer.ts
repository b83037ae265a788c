/**
 * `trawl serve` consuming CiteSeerX URL Submission Messages (newSubmissions,
 * docs/citeseerx.md "Submitted jobs").
 *
 *   SubmissionConsumers.sync(sources) ── one SubmissionConsumer per (endpoint, client ID, queue)
 *   SubmissionConsumer: connect (the shared StompConnection of the endpoint) ─► SUBSCRIBE
 *       ack client-individual (JMS CLIENT_ACKNOWLEDGE), jms-map-xml, prefetch 1
 *     each MESSAGE, one at a time:
 *       parseSubmission ─► a problem: NACK (ActiveMQ moves it to its dead-letter queue), logged
 *       createJob(submission, profile) ─► stored ─► ACK
 *                                     └─ refused for good (a rule, a name taken) ─► NACK, logged
 *                                     └─ failed (the store, a disk) ─► tried again every 5 s; no ACK
 *     the connection lost ─► connect again after 1 s, 2 s, … 60 s; unacknowledged
 *       messages are redelivered by the broker, and a JID already a job is acknowledged
 *       without a second job (createJob is idempotent)
 *
 * The ACK is sent only after the job's collection is in the crawl store, so
 * a crash (kill -9) before it leaves the message with the broker, which
 * delivers it again to the next connection.
 */

import type { IMessage } from '@stomp/stompjs';
import type { Logger } from 'pino';
import { StompConnection, type StompEndpoint } from '../sinks/stomp-producer.ts';
import { parseSubmission, type Submission } from './submission-job.ts';

export interface SubmissionSource {
  /** Where the source comes from, for the log: the csx-heritrix.xml file, or trawl_sinks.<sink> of a collection. */
  readonly label: string;
  readonly endpoint: StompEndpoint;
  readonly queue: string;
  /** The profile's name: a collection of the daemon, else the built-in User Submission profile. */
  readonly profile: string;
}

/** What creating a job answered. */
export type JobResult = { readonly name: string; readonly created: boolean };

/** A job that can never be made from this message (a rule of the configuration, a name that is another collection's). */
export class SubmissionRefused extends Error {}

export interface ConsumerOptions {
  readonly log: Logger;
  /** Makes the job and stores it; resolves once it is stored. Throws SubmissionRefused for good, anything else to be tried again. */
  readonly createJob: (s: Submission, profile: string) => Promise<JobResult>;
  /** Between attempts at a job whose creation failed (default 5 s). */
  readonly retryMs?: number;
}

const MAX_BACKOFF_MS = 60_000;

function sourceKey(s: SubmissionSource): string {
  return JSON.stringify([s.endpoint.host, s.endpoint.port, s.endpoint.login ?? null, s.endpoint.clientId ?? null, s.queue]);
}

export class SubmissionConsumer {
  readonly source: SubmissionSource;
  private readonly o: ConsumerOptions;
  private readonly conn: StompConnection;
  private stopped = false;
  private readonly stopping: Promise<void>;
  private resolveStop: () => void = () => {};
  private loop: Promise<void> | undefined;
  /** Messages are handled one at a time, in the order they came. */
  private chain: Promise<void> = Promise.resolve();
  /** Counts each connection: a message of an earlier one is not acknowledged on a later one. */
  private generation = 0;

  constructor(source: SubmissionSource, o: ConsumerOptions) {
    this.source = source;
    this.o = o;
    this.conn = StompConnection.acquire(source.endpoint);
    this.stopping = new Promise((resolve) => {
      this.resolveStop = resolve;
    });
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.resolveStop();
    await this.loop;
    await this.chain;
    await this.conn.release();
  }

  /** Waits `ms`, or less when the consumer stops. */
  private async sleep(ms: number): Promise<void> {
    let t: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((resolve) => (t = setTimeout(resolve, ms))), this.stopping]);
    clearTimeout(t);
  }

  private async run(): Promise<void> {
    const { log } = this.o;
    const where = { source: this.source.label, queue: this.source.queue, endpoint: this.conn.endpoint };
    let backoff = 0;
    while (!this.stopped) {
      let unlisten: (() => void) | undefined;
      try {
        const client = await this.conn.connect();
        const generation = ++this.generation;
        const lost = new Promise<string>((resolve) => {
          unlisten = this.conn.onDown(resolve);
        });
        const stopped = this.stopping.then(() => 'stopping');
        const sub = this.conn.subscribe(client, this.source.queue, (m) => {
          this.chain = this.chain.then(() => this.handle(m, generation)).catch((err: unknown) => log.error({ ...where, err }, 'URL Submission Message not handled'));
        });
        log.info(where, 'consuming URL Submission Messages');
        backoff = 0;
        const why = await Promise.race([lost, stopped]);
        if (why === 'stopping') {
          try {
            sub.unsubscribe();
          } catch {
            // the connection went meanwhile
          }
          break;
        }
        log.warn({ ...where, reason: why }, 'the broker connection for URL Submission Messages was lost; connecting again');
      } catch (err) {
        backoff = Math.min(MAX_BACKOFF_MS, Math.max(1000, backoff * 2));
        log.warn({ ...where, err: (err as Error).message }, `cannot consume URL Submission Messages; trying again in ${backoff / 1000} s`);
        await this.sleep(backoff);
        continue;
      } finally {
        unlisten?.();
      }
      backoff = 1000;
      await this.sleep(backoff);
    }
  }

  /** One message: its job stored, then ACK; a message that can never be a job: NACK. */
  private async handle(m: IMessage, generation: number): Promise<void> {
    const { log } = this.o;
    const current = (): boolean => generation === this.generation && this.conn.connected && !this.stopped;
    const where = { source: this.source.label, queue: this.source.queue, messageId: m.headers['message-id'] };
    const parsed = parseSubmission(m.binaryBody.length > 0 ? new TextDecoder().decode(m.binaryBody) : m.body);
    if ('problem' in parsed) {
      log.error(where, `URL Submission Message refused: ${parsed.problem}; it goes to the broker's dead-letter queue`);
      if (current()) m.nack();
      return;
    }
    for (;;) {
      if (!current()) return; // the broker delivers it again on the next connection
      try {
        const r = await this.o.createJob(parsed, this.source.profile);
        if (!current()) return;
        m.ack();
        log.info({ ...where, jid: parsed.jid, collection: r.name, urls: parsed.urls.length }, r.created ? 'submitted job created' : 'submitted job already exists; the message is acknowledged again');
        return;
      } catch (err) {
        if (err instanceof SubmissionRefused) {
          log.error({ ...where, jid: parsed.jid }, `URL Submission Message refused: ${err.message}; it goes to the broker's dead-letter queue`);
          if (current()) m.nack();
          return;
        }
        const retryMs = this.o.retryMs ?? 5000;
        log.warn({ ...where, jid: parsed.jid, err: (err as Error).message }, `submitted job not stored; trying again in ${retryMs / 1000} s (the message is not acknowledged)`);
        await this.sleep(retryMs);
        if (this.stopped) return;
      }
    }
  }
}

/** The daemon's consumers, kept equal to the sources its configuration names. */
export class SubmissionConsumers {
  private readonly o: ConsumerOptions;
  private readonly running = new Map<string, SubmissionConsumer>();

  constructor(o: ConsumerOptions) {
    this.o = o;
  }

  /** Starts the sources not consumed yet and stops those no longer named. Two sources on one queue: the first is consumed, the other logged. */
  async sync(sources: readonly SubmissionSource[]): Promise<void> {
    const wanted = new Map<string, SubmissionSource>();
    for (const s of sources) {
      const k = sourceKey(s);
      const first = wanted.get(k);
      if (first) {
        if (first.profile !== s.profile) this.o.log.warn({ queue: s.queue, source: s.label, kept: first.label }, 'two sources consume the same submissions queue; the first one\'s profile is used');
        continue;
      }
      wanted.set(k, s);
    }
    for (const [k, c] of [...this.running]) {
      const w = wanted.get(k);
      if (w && w.profile === c.source.profile) continue;
      this.running.delete(k);
      await c.stop();
    }
    for (const [k, s] of wanted) {
      if (this.running.has(k)) continue;
      const c = new SubmissionConsumer(s, this.o);
      this.running.set(k, c);
      c.start();
    }
  }

  async stop(): Promise<void> {
    const all = [...this.running.values()];
    this.running.clear();
    await Promise.all(all.map((c) => c.stop()));
  }
}
