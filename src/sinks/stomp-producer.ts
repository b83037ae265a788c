/**
 * JMS MapMessages to ActiveMQ over STOMP (@stomp/stompjs over a TCP socket).
 *
 *   sendMaps(queue, maps) ──► connect once (CONNECT login/passcode/client-id)
 *                         ──► one SEND per map: persistent, a receipt each,
 *                             `transformation: jms-map-xml`, no content-length
 *                         ──► resolves when the broker has receipted every SEND
 *
 * ActiveMQ turns a SEND with `transformation: jms-map-xml` into a
 * `javax.jms.MapMessage` (its body is XStream's XML form of a map), which is what
 * the CiteSeerX ingestion system reads. Without the receipts a connection lost
 * after the write would lose messages silently; with them, a batch the broker
 * did not confirm is an error, and the caller sends it again.
 *
 * One connection per broker, login and client ID in the process
 * (`StompConnection`), shared by every producer and consumer that names
 * them: ActiveMQ lets one connection at a time hold a JMS client ID, and a
 * daemon with many collections (submitted jobs) has a sink each.
 *
 * Broker URLs (docs/citeseerx.md "The broker URL"): `stomp://host:port`
 * (`stomp+nio://` too; default port 61613) is used as it is. The OpenWire
 * URL CiteSeerX's csx-heritrix.xml holds, `tcp://host:port` (`nio://` too),
 * is mapped to `stomp://host:61613`, ActiveMQ's STOMP connector on its
 * conventional port, whatever the OpenWire port, with a warning.
 */

import type { Client, IFrame, IMessage, StompSubscription } from '@stomp/stompjs';
import { trawlError } from '../core/errors.ts';

export { brokerAddress, STOMP_DEFAULT_PORT } from '../core/broker-url.ts';

/** A producer's connection (`timeoutMs` bounds each batch's receipts too) and the sink it sends for. */
export interface StompProducerOptions extends StompEndpoint {
  /** The sink's name, for messages. */
  readonly sink: string;
}

function xmlText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * A JMS MapMessage body in ActiveMQ's jms-map-xml form (XStream's map): a
 * string value as a String, a whole number as an Integer (URL Status
 * Messages' TYPE and STATUS). The form trawl sends: with jms-map-json (the
 * same map as JSON), Jettison reads a value that is the word `null` as JSON
 * null, and the field arrives empty.
 */
export function mapMessageXml(map: Readonly<Record<string, string | number>>): string {
  return `<map>${Object.entries(map).map(([k, v]) => `<entry><string>${xmlText(k)}</string>${typeof v === 'number' ? `<int>${Math.trunc(v)}</int>` : `<string>${xmlText(v)}</string>`}</entry>`).join('')}</map>`;
}

/** Where a connection goes and who it says it is. */
export interface StompEndpoint {
  readonly host: string;
  readonly port: number;
  readonly login?: string | undefined;
  readonly passcode?: string | undefined;
  readonly clientId?: string | undefined;
  /** How long connecting may take. */
  readonly timeoutMs?: number;
}

const POOL = new Map<string, StompConnection>();
let receiptSeq = 0;

/**
 * One STOMP connection, shared (`StompConnection.acquire`) by the producers
 * and consumers of one endpoint, login and client ID, and released by each
 * when it closes; the last release disconnects. A lost connection is made
 * again by the next send or `connect`; `onDown` tells who waits.
 */
export class StompConnection {
  private readonly o: StompEndpoint;
  private readonly key: string;
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private readonly downListeners = new Set<(reason: string) => void>();
  private users = 0;
  /** SENDs are waiting for their receipts (what a closed connection most likely means). */
  private sending = 0;

  private constructor(o: StompEndpoint, key: string) {
    this.o = o;
    this.key = key;
  }

  static acquire(o: StompEndpoint): StompConnection {
    const key = JSON.stringify([o.host, o.port, o.login ?? null, o.passcode ?? null, o.clientId ?? null]);
    let c = POOL.get(key);
    if (!c) {
      c = new StompConnection(o, key);
      POOL.set(key, c);
    }
    c.users++;
    return c;
  }

  get endpoint(): string {
    return `stomp://${this.o.host.includes(':') ? `[${this.o.host}]` : this.o.host}:${this.o.port}`;
  }

  get connected(): boolean {
    return this.client?.connected === true;
  }

  /** Calls `listener` with the reason each time the connection in use is lost; returns the unsubscribe. */
  onDown(listener: (reason: string) => void): () => void {
    this.downListeners.add(listener);
    return () => this.downListeners.delete(listener);
  }

  /** The connected client: the one in use, or a new connection (one attempt at a time). */
  connect(): Promise<Client> {
    if (this.client?.connected) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<Client> {
    const old = this.client;
    this.client = undefined;
    void old?.deactivate({ force: true });
    const timeoutMs = this.o.timeoutMs ?? 10_000;
    // Loaded on first use: every `trawl crawl` loads the sink registry, few send to a broker (29 ms of start-up otherwise).
    const [{ Client }, { TCPWrapper }] = await Promise.all([import('@stomp/stompjs'), import('@stomp/tcp-wrapper')]);
    return new Promise<Client>((resolve, reject) => {
      let settled = false;
      const headers: Record<string, string> = { host: 'localhost', 'accept-version': '1.2' };
      if (this.o.login !== undefined) headers.login = this.o.login;
      if (this.o.passcode !== undefined) headers.passcode = this.o.passcode;
      if (this.o.clientId !== undefined) headers['client-id'] = this.o.clientId;
      const down = (reason: string): void => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          void client.deactivate({ force: true });
          reject(new Error(reason));
          return;
        }
        if (this.client !== client) return;
        this.client = undefined;
        void client.deactivate({ force: true });
        for (const l of [...this.downListeners]) l(reason);
      };
      const client = new Client({
        webSocketFactory: () => new TCPWrapper(this.o.host, this.o.port),
        connectHeaders: headers,
        reconnectDelay: 0,
        heartbeatIncoming: 0,
        heartbeatOutgoing: 0,
        debug: () => {},
        onConnect: () => {
          if (settled) return;
          if (this.users <= 0) {
            // Released while it connected: nobody is left to close it.
            down('the connection was released while it was made');
            return;
          }
          settled = true;
          clearTimeout(timer);
          this.client = client;
          resolve(client);
        },
        onStompError: (f: IFrame) => down(`the broker answered ERROR: ${f.headers.message ?? ''} ${f.body}`.trim()),
        onWebSocketError: (ev: { message?: unknown }) => down(ev.message instanceof Error ? ev.message.message : 'connection error'),
        onWebSocketClose: () => down(this.sending > 0
          ? 'the broker closed the connection on a MapMessage (transformation jms-map-xml needs XStream on the broker\'s class path: docs/citeseerx.md "New Content Messages")'
          : 'the connection closed'),
      });
      const timer = setTimeout(() => down(`no CONNECTED within ${timeoutMs} ms`), timeoutMs);
      client.activate();
    });
  }

  /**
   * Sends one persistent MapMessage per map to the queue; resolves when the
   * broker has receipted them all, rejects with the reason otherwise (the
   * connection is then dropped: the next call connects again).
   */
  async sendMaps(queue: string, maps: ReadonlyArray<Readonly<Record<string, string | number>>>, timeoutMs: number): Promise<void> {
    if (maps.length === 0) return;
    const client = await this.connect();
    let timer: NodeJS.Timeout | undefined;
    let unlisten: (() => void) | undefined;
    const failed = new Promise<never>((_, reject) => {
      unlisten = this.onDown((reason) => reject(new Error(reason)));
      timer = setTimeout(() => reject(new Error(`${maps.length} messages not receipted within ${timeoutMs} ms`)), timeoutMs);
    });
    failed.catch(() => {});
    this.sending++;
    try {
      const receipts = maps.map((map) => {
        const receipt = `trawl-${process.pid}-${++receiptSeq}`;
        const done = new Promise<void>((resolve) => client.watchForReceipt(receipt, () => resolve()));
        client.publish({
          destination: `/queue/${queue}`,
          headers: { receipt, persistent: 'true', transformation: 'jms-map-xml' },
          body: mapMessageXml(map),
          skipContentLengthHeader: true,
        });
        return done;
      });
      await Promise.race([Promise.all(receipts), failed]);
    } catch (err) {
      // The connection is in doubt: the next call connects again.
      if (this.client === client) {
        this.client = undefined;
        void client.deactivate({ force: true });
        for (const l of [...this.downListeners]) l((err as Error).message);
      }
      throw err;
    } finally {
      this.sending--;
      clearTimeout(timer);
      unlisten?.();
    }
  }

  /**
   * Subscribes to a queue with STOMP ack mode client-individual (JMS
   * CLIENT_ACKNOWLEDGE, one message at a time): MapMessages arrive as
   * jms-map-xml. The subscription ends with the connection.
   */
  subscribe(client: Client, queue: string, onMessage: (m: IMessage) => void): StompSubscription {
    return client.subscribe(`/queue/${queue}`, onMessage, { ack: 'client-individual', transformation: 'jms-map-xml', 'activemq.prefetchSize': '1' });
  }

  /** Gives up this user's share; the last one disconnects. */
  async release(): Promise<void> {
    if (--this.users > 0) return;
    POOL.delete(this.key);
    const c = this.client;
    this.client = undefined;
    if (c) await c.deactivate();
  }
}

/** A jms sink's sender: MapMessages to queues, over the shared connection of its endpoint. */
export class StompProducer {
  private readonly o: StompProducerOptions;
  private conn: StompConnection | undefined;

  constructor(o: StompProducerOptions) {
    this.o = o;
  }

  private connection(): StompConnection {
    this.conn ??= StompConnection.acquire(this.o);
    return this.conn;
  }

  /** Sends one MapMessage per map to the queue; resolves when the broker has receipted them all. */
  async sendMaps(queue: string, maps: ReadonlyArray<Readonly<Record<string, string | number>>>): Promise<void> {
    if (maps.length === 0) return;
    const conn = this.connection();
    try {
      await conn.sendMaps(queue, maps, this.o.timeoutMs ?? 10_000);
    } catch (err) {
      throw trawlError('SINK_JMS_TRANSPORT', { sink: this.o.sink, endpoint: conn.endpoint, reason: (err as Error).message });
    }
  }

  async close(): Promise<void> {
    const c = this.conn;
    this.conn = undefined;
    await c?.release();
  }
}
