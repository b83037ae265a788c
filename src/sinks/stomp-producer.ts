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
 * Broker URLs (docs/citeseerx.md "The broker URL"): `stomp://host:port`
 * (`stomp+nio://` too; default port 61613) is used as it is. The OpenWire
 * URL CiteSeerX's csx-heritrix.xml holds, `tcp://host:port` (`nio://` too),
 * is mapped to `stomp://host:61613`, ActiveMQ's STOMP connector on its
 * conventional port, whatever the OpenWire port, with a warning.
 */

import type { Client, IFrame } from '@stomp/stompjs';
import { trawlError } from '../core/errors.ts';

export { brokerAddress, STOMP_DEFAULT_PORT } from '../core/broker-url.ts';

export interface StompProducerOptions {
  /** The sink's name, for messages. */
  readonly sink: string;
  readonly host: string;
  readonly port: number;
  readonly login?: string | undefined;
  readonly passcode?: string | undefined;
  readonly clientId?: string | undefined;
  /** How long connecting and each batch's receipts may take. */
  readonly timeoutMs?: number;
}

function xmlText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * A JMS MapMessage body in ActiveMQ's jms-map-xml form (XStream's map). The
 * form trawl sends: with jms-map-json (the same map as JSON), Jettison reads
 * a value that is the word `null` as JSON null, and the field arrives empty.
 */
export function mapMessageXml(map: Readonly<Record<string, string>>): string {
  return `<map>${Object.entries(map).map(([k, v]) => `<entry><string>${xmlText(k)}</string><string>${xmlText(v)}</string></entry>`).join('')}</map>`;
}

export class StompProducer {
  private readonly o: StompProducerOptions;
  private client: Client | undefined;
  /** Rejects the receipts waited for when the connection in use fails. */
  private failWaiting: ((err: Error) => void) | undefined;
  private seq = 0;
  /** SENDs are waiting for their receipts. */
  private sending = false;

  constructor(o: StompProducerOptions) {
    this.o = o;
  }

  private get endpoint(): string {
    return `stomp://${this.o.host.includes(':') ? `[${this.o.host}]` : this.o.host}:${this.o.port}`;
  }

  private fail(reason: string): Error {
    return trawlError('SINK_JMS_TRANSPORT', { sink: this.o.sink, endpoint: this.endpoint, reason });
  }

  private async connect(): Promise<Client> {
    if (this.client?.connected) return this.client;
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
        const err = this.fail(reason);
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          void client.deactivate({ force: true });
          reject(err);
        }
        if (this.client === client) this.client = undefined;
        this.failWaiting?.(err);
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
          settled = true;
          clearTimeout(timer);
          this.client = client;
          resolve(client);
        },
        onStompError: (f: IFrame) => down(`the broker answered ERROR: ${f.headers.message ?? ''} ${f.body}`.trim()),
        onWebSocketError: (ev: { message?: unknown }) => down(ev.message instanceof Error ? ev.message.message : 'connection error'),
        onWebSocketClose: () => down(this.sending
          ? 'the broker closed the connection on a MapMessage (transformation jms-map-xml needs XStream on the broker\'s class path: docs/citeseerx.md "New Content Messages")'
          : 'the connection closed'),
      });
      const timer = setTimeout(() => down(`no CONNECTED within ${timeoutMs} ms`), timeoutMs);
      client.activate();
    });
  }

  /** Sends one MapMessage per map to the queue; resolves when the broker has receipted them all. */
  async sendMaps(queue: string, maps: ReadonlyArray<Readonly<Record<string, string>>>): Promise<void> {
    if (maps.length === 0) return;
    const client = await this.connect();
    const timeoutMs = this.o.timeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const failed = new Promise<never>((_, reject) => {
      this.failWaiting = reject;
      timer = setTimeout(() => reject(this.fail(`${maps.length} messages not receipted within ${timeoutMs} ms`)), timeoutMs);
    });
    failed.catch(() => {});
    this.sending = true;
    try {
      const receipts = maps.map((map) => {
        const receipt = `trawl-${process.pid}-${++this.seq}`;
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
      // The connection is in doubt: the next batch connects again.
      const c = this.client;
      this.client = undefined;
      void c?.deactivate({ force: true });
      throw err;
    } finally {
      this.sending = false;
      clearTimeout(timer);
      this.failWaiting = undefined;
    }
  }

  async close(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c) await c.deactivate();
  }
}
