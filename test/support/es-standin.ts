// A stand-in for Elasticsearch's _bulk API: a real HTTP (or HTTPS) server on
// loopback that parses the NDJSON it receives and answers the way
// Elasticsearch documents it (an `errors` flag and one item per action, each
// with its own status). Elasticsearch itself is not in Debian's archive nor
// on npm, so it cannot run here; the sink tests assert on the bytes that
// reached it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly lines: unknown[];
  /** The body as sent: gzip-compressed when the request says Content-Encoding: gzip (then `raw` is it decompressed). */
  readonly bytes: Buffer;
  readonly raw: string;
}

export type Answer = (r: Received) => { status: number; body: string };

/** Every action succeeds, as Elasticsearch answers a clean bulk request. */
export const allOk: Answer = (r) => ({ status: 200, body: JSON.stringify({ errors: false, items: actions(r).map((a) => ({ [a]: { status: a === 'delete' ? 200 : 201 } })) }) });

export function actions(r: Received): string[] {
  const out: string[] = [];
  for (let i = 0; i < r.lines.length; i++) {
    const a = Object.keys(r.lines[i] as object)[0]!;
    out.push(a);
    if (a === 'index') i++; // the document line
  }
  return out;
}

export class StandIn {
  readonly received: Received[] = [];
  answer: Answer = allOk;
  private server: Server | undefined;
  url = '';

  /** With `tls` (a key and certificate in PEM), an HTTPS server. */
  async start(host = '127.0.0.1', tls?: { key: string; cert: string }): Promise<void> {
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const raw = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8');
        const r: Received = {
          method: req.method ?? '', path: req.url ?? '', headers: req.headers, bytes, raw,
          lines: raw.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown),
        };
        this.received.push(r);
        const a = this.answer(r);
        res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
      });
    };
    this.server = tls ? createHttpsServer(tls, handler) : createServer(handler);
    await new Promise<void>((resolve) => this.server!.listen(0, host, resolve));
    this.url = `${tls ? 'https' : 'http'}://${host}:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
