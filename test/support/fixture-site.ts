/**
 * A fixture web site made of real HTTP servers on loopback, for crawl tests.
 * Tests start it, crawl it, then assert on what the SERVER saw.
 *
 *   startFixtureSite([HostSpec, …])
 *     │
 *     ├─ Host 127.0.0.2:41233 ── http.Server bound to that address only
 *     │    routes: Map<path, RouteSpec | Handler>    (mutable: setRoute)
 *     │    requests: RequestRecord[]                 (this host, start order)
 *     │    inFlight ── concurrentAtStart of each new record
 *     ├─ Host 127.0.0.3:39017 …
 *     │
 *     └─ FixtureSite.requests: every host's records, in start order
 *
 * Every address in 127.0.0.0/8 is loopback on Linux, so 127.0.0.2 and
 * 127.0.1.5 act as different hosts while no packet leaves the machine.
 *
 * Route lookup for a request target `/p?q`:
 *   1. the route `/p?q` exactly, 2. the route `/p` (any query),
 *   3. the longest prefix route: a key ending in `*` (`/files/*`), or a
 *      `trap` route, which owns its whole subtree (`/trap/` → `/trap/a/b/`),
 *   4. the host's `notFound` (default: a 404 HTML page).
 *
 * Because ports are ephemeral, bodies, redirect targets and header values may
 * name another host through placeholders expanded when the response is sent:
 *   {{origin}} {{origin:IP}}  → http://ip:port
 *   {{host}}   {{host:IP}}    → ip:port
 *   {{port}}   {{port:IP}}    → port
 * (IP may also be `ip:port` when several hosts share an address.)
 */

import http from 'node:http';
import type { Socket } from 'node:net';
import { isIPv6 } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGzip, gzipSync } from 'node:zlib';
import { prng } from './prng.ts';

// ─── Public types ───────────────────────────────────────────────────────────

export interface RequestRecord {
  /** `ip:port` of the server that received the request. */
  host: string;
  method: string;
  /** The request target as sent: path plus query. */
  path: string;
  /** Request headers, lower-cased names (as node:http gives them). */
  headers: Record<string, string | string[] | undefined>;
  /** Epoch milliseconds (performance.timeOrigin + performance.now()), comparable across hosts. */
  startMs: number;
  /** When the response finished or the connection closed; undefined while in flight. */
  endMs: number | undefined;
  /** The status sent; 0 while in flight or when no response head was sent (hang, aborted). */
  status: number;
  /** Body bytes handed to the socket (headers excluded; 0 for HEAD). */
  bytesOut: number;
  /** Requests in flight on this host when this one started, itself included. */
  concurrentAtStart: number;
}

export type Handler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  ctx: { host: HostHandle; site: FixtureSite },
) => void | Promise<void>;

export type RouteSpec =
  /** HTML; answers 304 to a matching If-None-Match (etag) or, without it, If-Modified-Since (lastModified). */
  | { kind: 'html'; body: string; status?: number; headers?: Record<string, string>; delayMs?: number; lastModified?: string; etag?: string }
  /** Plain text; `robots` is the same thing, named for readability. Default text/plain; charset=utf-8. */
  | { kind: 'text' | 'robots'; body: string; contentType?: string; status?: number; delayMs?: number }
  | { kind: 'binary'; bytes: Uint8Array; contentType: string }
  /** `to` may be relative or absolute, and may use placeholders. Default status 302. */
  | { kind: 'redirect'; to: string; status?: 301 | 302 | 303 | 307 | 308 }
  /** Any status with optional headers (Retry-After …) and body (text/html unless headers say otherwise). */
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: string }
  /** Content-Encoding: gzip; default text/html; charset=utf-8. */
  | { kind: 'gzip'; body: string; contentType?: string }
  /** A small gzip body inflating to `decompressedBytes` zeros, as text/html. Generated once per size and cached. */
  | { kind: 'gzip-bomb'; decompressedBytes: number }
  /** Sends the body in small pieces at about `bytesPerSecond` (Content-Length is announced). */
  | { kind: 'slow'; body: string; bytesPerSecond: number }
  /** Reads the request and never answers, until the client goes away or the site closes. */
  | { kind: 'hang' }
  /**
   * `bytes` bytes streamed in 64 KiB chunks with backpressure, never buffered.
   * Content-Length is announced unless `chunked` is true.
   */
  | { kind: 'oversize'; bytes: number; contentType?: string; chunked?: boolean }
  /** Raw bytes served as text/html. */
  | { kind: 'garbage'; bytes: Uint8Array }
  /**
   * A URL-recursion trap owning its whole subtree. The page at `<root>S/`
   * (S = segments below the root) links to `<root>S/a/` and to
   * `<root>S/b/S/b/` (the root itself links to `a/` and `a/b/a/b/`), so
   * /trap/a/ → /trap/a/a/ and /trap/a/b/a/b/, forever. `depth` is only a
   * safety net for broken crawlers: pages more than `depth` segments below
   * the root still answer 200 but carry no links.
   */
  | { kind: 'trap'; depth: number };

export interface HostSpec {
  /** A loopback address such as 127.0.0.2. */
  ip: string;
  /** Fixed port; ephemeral when absent. */
  port?: number;
  /** Keys are request targets (`/a.html`, `/search?q=x`), prefixes (`/files/*`) or trap roots. */
  routes: Record<string, RouteSpec | Handler>;
  notFound?: RouteSpec;
}

export interface HostHandle {
  readonly ip: string;
  readonly port: number;
  /** http://ip:port (IPv6 addresses bracketed). */
  readonly origin: string;
  /** origin + path; a path without a leading slash gets one. */
  url(path: string): string;
  /** This host's records, in start order. Cleared by FixtureSite.reset(). */
  readonly requests: RequestRecord[];
}

/** Narrows the log to requests whose Host header names `hostHeader` (port ignored, case-insensitive). */
export interface LogFilter {
  hostHeader?: string;
}

export interface FixtureSite {
  readonly hosts: HostHandle[];
  /** By `ip` (the first host on it) or by `ip:port`; throws when unknown. */
  host(ip: string): HostHandle;
  /** All hosts, in start order. */
  readonly requests: RequestRecord[];
  /** Paths of GET requests, in order (all hosts when hostIp is absent). */
  fetchedPaths(hostIp?: string, filter?: LogFilter): string[];
  /** Paths GET-requested more than once, each listed once, in order of their second request. */
  duplicates(hostIp?: string, filter?: LogFilter): string[];
  /** Most requests ever in flight at once on that host. */
  maxConcurrency(hostIp: string): number;
  /** Smallest gap between consecutive request starts on that host (Infinity with fewer than two). */
  minStartGapMs(hostIp: string, excludePaths?: (p: string) => boolean): number;
  /** Clears the logs (requests still in flight are no longer listed, but still counted as in flight). */
  reset(): void;
  /** Adds or replaces a route, e.g. to change content between crawl cycles. */
  setRoute(ip: string, path: string, spec: RouteSpec | Handler): void;
  /** Closes the servers and destroys every open socket (hang routes included). Idempotent. */
  close(): Promise<void>;
}

// ─── Helpers ────────────────────────────────────────────────────────────────

const nowMs = (): number => performance.timeOrigin + performance.now();

const CHUNK_BYTES = 64 * 1024;

const DEFAULT_NOT_FOUND: RouteSpec = {
  kind: 'html',
  status: 404,
  body: '<!doctype html><html><head><title>Not Found</title></head><body><h1>404 Not Found</h1></body></html>\n',
};

/** Gzip bodies of N zeros, generated once per size (per process). */
const bombCache = new Map<number, Promise<Buffer>>();

/** The gzip stream of `decompressedBytes` zeros, built by streaming zeros through zlib. */
export function gzipBomb(decompressedBytes: number): Promise<Buffer> {
  let p = bombCache.get(decompressedBytes);
  if (!p) {
    p = new Promise<Buffer>((resolve, reject) => {
      const gz = createGzip({ level: 9 });
      const out: Buffer[] = [];
      gz.on('data', (c: Buffer) => out.push(c));
      gz.on('end', () => resolve(Buffer.concat(out)));
      gz.on('error', reject);
      const zeros = Buffer.alloc(1024 * 1024);
      let left = decompressedBytes;
      const pump = (): void => {
        while (left > 0) {
          const n = Math.min(left, zeros.length);
          left -= n;
          if (!gz.write(n === zeros.length ? zeros : zeros.subarray(0, n))) {
            gz.once('drain', pump);
            return;
          }
        }
        gz.end();
      };
      pump();
    });
    bombCache.set(decompressedBytes, p);
  }
  return p;
}

function normalizeEtag(etag: string): string {
  return etag.startsWith('"') || etag.startsWith('W/"') ? etag : `"${etag}"`;
}

function httpDate(s: string): string {
  const t = Date.parse(s);
  if (Number.isNaN(t)) throw new Error(`fixture-site: not a date: ${s}`);
  return new Date(t).toUTCString();
}

/** RFC 9110 13.1.2/13.1.3: If-None-Match (weak comparison) wins over If-Modified-Since. */
function notModified(req: http.IncomingMessage, etag: string | undefined, lastModified: string | undefined): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    if (etag === undefined) return false;
    const opaque = (t: string): string => t.trim().replace(/^W\//, '');
    const mine = opaque(etag);
    return inm.split(',').some((t) => t.trim() === '*' || opaque(t) === mine);
  }
  const ims = req.headers['if-modified-since'];
  if (ims !== undefined && lastModified !== undefined) {
    const since = Date.parse(ims);
    const modified = Math.floor(Date.parse(lastModified) / 1000) * 1000;
    return !Number.isNaN(since) && modified <= since;
  }
  return false;
}

function splitTarget(target: string): { path: string; query: string | undefined } {
  const q = target.indexOf('?');
  return q < 0 ? { path: target, query: undefined } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

function hostnameOf(hostHeader: string | string[] | undefined): string {
  const h = (Array.isArray(hostHeader) ? hostHeader[0] : hostHeader) ?? '';
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1).toLowerCase();
  const colon = h.lastIndexOf(':');
  return (colon < 0 ? h : h.slice(0, colon)).toLowerCase();
}

function isRouteSpec(r: RouteSpec | Handler): r is RouteSpec {
  return typeof r !== 'function';
}

/** Resolves after `drain`, or when the response closes (client gone), whichever comes first. */
function drained(res: http.ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

// ─── The site ───────────────────────────────────────────────────────────────

class Host implements HostHandle {
  readonly ip: string;
  port = 0;
  readonly requests: RequestRecord[] = [];
  readonly routes: Map<string, RouteSpec | Handler>;
  readonly notFound: RouteSpec;
  readonly server: http.Server;
  readonly sockets = new Set<Socket>();
  inFlight = 0;

  constructor(spec: HostSpec, server: http.Server) {
    this.ip = spec.ip;
    this.routes = new Map(Object.entries(spec.routes));
    this.notFound = spec.notFound ?? DEFAULT_NOT_FOUND;
    this.server = server;
  }

  get origin(): string {
    return `http://${isIPv6(this.ip) ? `[${this.ip}]` : this.ip}:${this.port}`;
  }

  get key(): string {
    return `${this.ip}:${this.port}`;
  }

  url(path: string): string {
    return this.origin + (path.startsWith('/') ? path : `/${path}`);
  }

  findRoute(target: string): RouteSpec | Handler {
    const exact = this.routes.get(target);
    if (exact) return exact;
    const { path, query } = splitTarget(target);
    if (query !== undefined) {
      const byPath = this.routes.get(path);
      if (byPath) return byPath;
    }
    let best: RouteSpec | Handler | undefined;
    let bestLen = -1;
    for (const [key, route] of this.routes) {
      let prefix: string | undefined;
      if (key.endsWith('*')) prefix = key.slice(0, -1);
      else if (isRouteSpec(route) && route.kind === 'trap') prefix = key.endsWith('/') ? key : `${key}/`;
      if (prefix !== undefined && path.startsWith(prefix) && prefix.length > bestLen) {
        best = route;
        bestLen = prefix.length;
      }
    }
    return best ?? this.notFound;
  }

  /** The key under which a trap or prefix route matched, to compute the path below it. */
  routeKeyOf(route: RouteSpec | Handler): string | undefined {
    for (const [key, r] of this.routes) if (r === route) return key;
    return undefined;
  }
}

class Site implements FixtureSite {
  readonly hostList: Host[] = [];
  readonly requests: RequestRecord[] = [];
  private readonly abort = new AbortController();
  private closing: Promise<void> | undefined;

  get hosts(): HostHandle[] {
    return [...this.hostList];
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  host(ip: string): HostHandle {
    return this.lookup(ip);
  }

  lookup(key: string): Host {
    const h = this.hostList.find((x) => x.key === key) ?? this.hostList.find((x) => x.ip === key);
    if (!h) throw new Error(`fixture-site: no host ${key} (have ${this.hostList.map((x) => x.key).join(', ')})`);
    return h;
  }

  private log(hostIp: string | undefined, filter: LogFilter | undefined): RequestRecord[] {
    let recs = this.requests;
    if (hostIp !== undefined) {
      const keys = new Set(this.lookupAll(hostIp).map((h) => h.key));
      recs = recs.filter((r) => keys.has(r.host));
    }
    if (filter?.hostHeader !== undefined) {
      const want = filter.hostHeader.toLowerCase();
      recs = recs.filter((r) => hostnameOf(r.headers.host) === want);
    }
    return recs;
  }

  /** `ip:port` names one host; a bare ip names every host on that address. */
  private lookupAll(key: string): Host[] {
    const exact = this.hostList.filter((x) => x.key === key);
    if (exact.length > 0) return exact;
    const byIp = this.hostList.filter((x) => x.ip === key);
    if (byIp.length === 0) this.lookup(key); // throws with the list of hosts
    return byIp;
  }

  fetchedPaths(hostIp?: string, filter?: LogFilter): string[] {
    return this.log(hostIp, filter).filter((r) => r.method === 'GET').map((r) => r.path);
  }

  duplicates(hostIp?: string, filter?: LogFilter): string[] {
    const seen = new Set<string>();
    const dup = new Set<string>();
    for (const p of this.fetchedPaths(hostIp, filter)) {
      if (seen.has(p)) dup.add(p);
      else seen.add(p);
    }
    return [...dup];
  }

  maxConcurrency(hostIp: string): number {
    let max = 0;
    for (const r of this.log(hostIp, undefined)) max = Math.max(max, r.concurrentAtStart);
    return max;
  }

  minStartGapMs(hostIp: string, excludePaths?: (p: string) => boolean): number {
    const starts = this.log(hostIp, undefined)
      .filter((r) => !excludePaths?.(r.path))
      .map((r) => r.startMs);
    let min = Infinity;
    for (let i = 1; i < starts.length; i++) min = Math.min(min, starts[i]! - starts[i - 1]!);
    return min;
  }

  reset(): void {
    this.requests.length = 0;
    for (const h of this.hostList) h.requests.length = 0;
  }

  setRoute(ip: string, path: string, spec: RouteSpec | Handler): void {
    const h = this.lookup(ip);
    h.routes.set(path, spec);
    if (isRouteSpec(spec) && spec.kind === 'gzip-bomb') void gzipBomb(spec.decompressedBytes);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.abort.abort();
      await Promise.all(
        this.hostList.map(
          (h) =>
            new Promise<void>((resolve) => {
              h.server.close(() => resolve());
              h.server.closeAllConnections();
              for (const s of h.sockets) s.destroy();
            }),
        ),
      );
    })();
    return this.closing;
  }

  // ─── Serving ──────────────────────────────────────────────────────────────

  async handle(host: Host, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const rec: RequestRecord = {
      host: host.key,
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: { ...req.headers },
      startMs: nowMs(),
      endMs: undefined,
      status: 0,
      bytesOut: 0,
      concurrentAtStart: ++host.inFlight,
    };
    host.requests.push(rec);
    this.requests.push(rec);

    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      rec.endMs = nowMs();
      rec.status = res.headersSent ? res.statusCode : 0;
      host.inFlight--;
    };
    res.on('finish', end);
    res.on('close', end);
    countBodyBytes(res, rec);

    const route = host.findRoute(rec.path);
    try {
      if (isRouteSpec(route)) await this.serve(host, route, req, res);
      else await route(req, res, { host, site: this });
    } catch (err) {
      if (this.signal.aborted) return; // closing: sleeps and writes are cut short on purpose
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`fixture-site: ${(err as Error).stack ?? String(err)}\n`);
      } else {
        res.destroy();
      }
    }
  }

  /** Replaces {{origin}}, {{origin:IP}}, {{host…}}, {{port…}} (see the file header). */
  expand(text: string, self: Host): string {
    return text.replace(/\{\{(origin|host|port)(?::([^}]+))?\}\}/g, (_m, what: string, key: string | undefined) => {
      const h = key === undefined ? self : this.lookup(key);
      return what === 'origin' ? h.origin : what === 'host' ? h.key : String(h.port);
    });
  }

  private async serve(host: Host, spec: RouteSpec, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const head = req.method === 'HEAD';
    const send = (status: number, headers: Record<string, string | number>, body: string | Uint8Array): void => {
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      res.writeHead(status, { 'content-length': bytes.length, ...headers });
      res.end(head ? undefined : bytes);
    };
    switch (spec.kind) {
      case 'html': {
        if (spec.delayMs) await sleep(spec.delayMs, undefined, { signal: this.signal });
        const status = spec.status ?? 200;
        const validators: Record<string, string> = {};
        if (spec.etag !== undefined) validators.etag = normalizeEtag(spec.etag);
        if (spec.lastModified !== undefined) validators['last-modified'] = httpDate(spec.lastModified);
        if (status === 200 && notModified(req, validators.etag, validators['last-modified'])) {
          res.writeHead(304, validators);
          res.end();
          return;
        }
        const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8', ...validators };
        for (const [k, v] of Object.entries(spec.headers ?? {})) headers[k.toLowerCase()] = this.expand(v, host);
        send(status, headers, this.expand(spec.body, host));
        return;
      }
      case 'text':
      case 'robots':
        if (spec.delayMs) await sleep(spec.delayMs, undefined, { signal: this.signal });
        send(spec.status ?? 200, { 'content-type': spec.contentType ?? 'text/plain; charset=utf-8' }, this.expand(spec.body, host));
        return;
      case 'binary':
        send(200, { 'content-type': spec.contentType }, spec.bytes);
        return;
      case 'redirect': {
        const to = this.expand(spec.to, host);
        send(spec.status ?? 302, { location: to, 'content-type': 'text/html; charset=utf-8' }, `<!doctype html><html><body><a href="${to}">moved</a></body></html>\n`);
        return;
      }
      case 'status': {
        const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8' };
        for (const [k, v] of Object.entries(spec.headers ?? {})) headers[k.toLowerCase()] = this.expand(v, host);
        const body = spec.body ?? `<!doctype html><html><body><h1>${spec.status} ${http.STATUS_CODES[spec.status] ?? ''}</h1></body></html>\n`;
        send(spec.status, headers, this.expand(body, host));
        return;
      }
      case 'gzip':
        send(200, { 'content-type': spec.contentType ?? 'text/html; charset=utf-8', 'content-encoding': 'gzip' }, gzipSync(this.expand(spec.body, host)));
        return;
      case 'gzip-bomb':
        send(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' }, await gzipBomb(spec.decompressedBytes));
        return;
      case 'slow': {
        const body = Buffer.from(this.expand(spec.body, host), 'utf8');
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length });
        if (head) {
          res.end();
          return;
        }
        const tickMs = 50;
        const piece = Math.max(1, Math.floor((spec.bytesPerSecond * tickMs) / 1000));
        const pieceMs = (piece * 1000) / spec.bytesPerSecond;
        for (let off = 0; off < body.length; off += piece) {
          if (res.destroyed) return;
          if (off > 0) await sleep(pieceMs, undefined, { signal: this.signal });
          if (res.destroyed) return;
          res.write(body.subarray(off, off + piece));
        }
        res.end();
        return;
      }
      case 'hang':
        req.resume(); // read the request so the client's upload completes, then say nothing
        return;
      case 'oversize': {
        const headers: Record<string, string | number> = { 'content-type': spec.contentType ?? 'text/html; charset=utf-8' };
        if (!spec.chunked) headers['content-length'] = spec.bytes;
        res.writeHead(200, headers);
        if (head) {
          res.end();
          return;
        }
        const chunk = oversizeChunk();
        for (let left = spec.bytes; left > 0; left -= chunk.length) {
          if (res.destroyed || this.signal.aborted) return;
          const ok = res.write(left >= chunk.length ? chunk : chunk.subarray(0, left));
          if (!ok) await drained(res);
        }
        res.end();
        return;
      }
      case 'garbage':
        send(200, { 'content-type': 'text/html' }, spec.bytes);
        return;
      case 'trap': {
        const key = host.routeKeyOf(spec) ?? '/';
        const root = key.endsWith('/') ? key : `${key}/`;
        const { path } = splitTarget(req.url ?? '/');
        const below = path.length > root.length ? path.slice(root.length).split('/').filter(Boolean) : [];
        send(200, { 'content-type': 'text/html; charset=utf-8' }, trapPage(root, below, spec.depth));
        return;
      }
    }
  }
}

/** Counts body bytes written through res.write/res.end into rec.bytesOut. */
function countBodyBytes(res: http.ServerResponse, rec: RequestRecord): void {
  if (res.req.method === 'HEAD') return;
  const size = (chunk: unknown, enc: unknown): number => {
    if (typeof chunk === 'string') return Buffer.byteLength(chunk, typeof enc === 'string' ? (enc as BufferEncoding) : 'utf8');
    if (chunk instanceof Uint8Array) return chunk.length;
    return 0;
  };
  const write = res.write;
  const end = res.end;
  res.write = function (this: http.ServerResponse, chunk: unknown, ...rest: unknown[]) {
    if (!this.destroyed) rec.bytesOut += size(chunk, rest[0]);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof res.write;
  res.end = function (this: http.ServerResponse, ...args: unknown[]) {
    if (typeof args[0] !== 'function' && !this.destroyed) rec.bytesOut += size(args[0], args[1]);
    return (end as (...a: unknown[]) => http.ServerResponse).call(this, ...args);
  } as typeof res.end;
}

let oversizeChunkBuf: Buffer | undefined;
function oversizeChunk(): Buffer {
  if (!oversizeChunkBuf) {
    const line = '<p>oversize filler line, padding the body well past any sane limit.</p>\n';
    oversizeChunkBuf = Buffer.from(line.repeat(Math.ceil(CHUNK_BYTES / line.length))).subarray(0, CHUNK_BYTES);
  }
  return oversizeChunkBuf;
}

function trapPage(root: string, below: string[], depth: number): string {
  const at = root + below.map((s) => `${s}/`).join('');
  const links: string[] = [];
  if (below.length < depth) {
    links.push(`${at}a/`);
    const repeat = below.length === 0 ? ['a', 'b', 'a', 'b'] : [...below, 'b', ...below, 'b'];
    links.push(root + repeat.map((s) => `${s}/`).join(''));
  }
  return (
    `<!doctype html><html><head><title>Trap ${at}</title></head><body><h1>Trap ${at}</h1>\n` +
    links.map((l) => `<a href="${l}">${l}</a>\n`).join('') +
    '</body></html>\n'
  );
}

export async function startFixtureSite(hosts: HostSpec[]): Promise<FixtureSite> {
  const site = new Site();
  for (const spec of hosts) {
    const server = http.createServer();
    const host = new Host(spec, server);
    server.on('connection', (s: Socket) => {
      host.sockets.add(s);
      s.on('close', () => host.sockets.delete(s));
    });
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      site.handle(host, req, res).catch(() => res.destroy());
    });
    site.hostList.push(host);
  }
  // Bombs are compressed before the first request so they cannot skew timing.
  const bombs = hosts.flatMap((h) => Object.values(h.routes)).filter((r): r is Extract<RouteSpec, { kind: 'gzip-bomb' }> => isRouteSpec(r) && r.kind === 'gzip-bomb');
  await Promise.all(bombs.map((b) => gzipBomb(b.decompressedBytes)));
  try {
    await Promise.all(
      site.hostList.map(
        (h, i) =>
          new Promise<void>((resolve, reject) => {
            h.server.once('error', reject);
            h.server.listen({ host: h.ip, port: hosts[i]!.port ?? 0 }, () => {
              h.server.off('error', reject);
              h.port = (h.server.address() as { port: number }).port;
              resolve();
            });
          }),
      ),
    );
  } catch (err) {
    await site.close();
    throw err;
  }
  return site;
}

// ─── Content helpers ────────────────────────────────────────────────────────

function page(title: string, body: string, head = ''): string {
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>${title}</title>${head}</head>\n<body>\n<h1>${title}</h1>\n${body}\n</body></html>\n`;
}

function links(hrefs: string[]): string {
  return '<ul>\n' + hrefs.map((h) => `<li><a href="${h}">${h}</a></li>`).join('\n') + '\n</ul>';
}

/** A one-page PDF with a line of text, with a correct xref table. */
function minimalPdf(text: string): Uint8Array {
  const stream = `BT /F1 18 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A 1×1 transparent PNG. */
const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');


/** An HTML-looking start followed by NULs, invalid UTF-8 and control bytes. */
function garbageBytes(n: number): Uint8Array {
  const rnd = prng(0xbad);
  const head = Buffer.from('<html><body>\u0000');
  const out = Buffer.alloc(n);
  head.copy(out);
  for (let i = head.length; i < n; i++) {
    // Avoid '<' and '>' so no tag (and so no link) can form by chance.
    let b = Math.floor(rnd() * 256);
    if (b === 0x3c || b === 0x3e) b = 0xff;
    out[i] = b;
  }
  return out;
}

// ─── The standard site ──────────────────────────────────────────────────────

export const STANDARD_IPS = { main: '127.0.0.2', other: '127.0.0.3' } as const;

/** Segments below /trap/ after which trap pages stop linking (a safety net only). */
export const STANDARD_TRAP_DEPTH = 24;
/** Size /bomb.html inflates to. */
export const STANDARD_BOMB_BYTES = 64 * 1024 * 1024;

const DUP_BODY = page('Duplicate', '<p>These two pages, /dup-a.html and /dup-b.html, have the same bytes.</p>\n<a href="/">home</a>');

/**
 * The multi-host site the engine tests crawl. Seeds: `main`'s `/` (the
 * other host is reached through a link, and links back).
 *
 * When `sameIpAlias` is given (a host NAME the test's resolver maps to the
 * main IP, e.g. `alias.test`), the main index also links to
 * `http://<alias>:<main port>/alias/one.html`: a second site on the same IP
 * and port, served by the main server (its log entries carry that Host
 * header — filter with `fetchedPaths(main, { hostHeader: alias })`).
 */
export function standardSite(ips: { main: string; other: string; sameIpAlias?: string } = STANDARD_IPS): HostSpec[] {
  const other = `{{origin:${ips.other}}}`;
  const main = `{{origin:${ips.main}}}`;
  const alias = ips.sameIpAlias === undefined ? undefined : `http://${ips.sameIpAlias}:{{port}}`;

  const indexLinks = [
    '/a.html',
    '/b.html',
    'dir/d.html', // relative
    '/notes.txt',
    '/private/secret.html',
    '/r1',
    '/loop-a',
    '/gone',
    '/missing',
    '/error',
    '/busy',
    '/dup-a.html',
    '/dup-b.html',
    '/trap/',
    '/doc.pdf',
    '/logo.png',
    '/zipped.html',
    '/bomb.html',
    '/garbage.html',
    '/nofollow.html',
    '/a.html#section', // the same URL as /a.html once the fragment is dropped
    `${other}/`,
    ...(alias ? [`${alias}/alias/one.html`] : []),
  ];

  const mainRoutes: Record<string, RouteSpec> = {
    '/robots.txt': { kind: 'robots', body: '# Fixture robots.txt (no Crawl-delay on purpose).\nUser-agent: *\nDisallow: /private/\n' },
    '/': { kind: 'html', body: page('Fixture main', links(indexLinks)) },
    '/a.html': {
      kind: 'html',
      body: page('Page A', links(['/', '/b.html', 'b.html', './c.html'])),
      etag: 'a-v1',
      lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT',
    },
    '/b.html': { kind: 'html', body: page('Page B', links(['/a.html', '/c.html', `${main}/c.html`])) },
    '/c.html': { kind: 'html', body: page('Page C', links(['/', '/b.html#top'])) },
    '/dir/d.html': { kind: 'html', body: page('Page D', links(['../a.html', 'e.html'])) },
    '/dir/e.html': { kind: 'html', body: page('Page E', links(['/dir/d.html'])) },
    '/notes.txt': { kind: 'text', body: 'Plain-text notes. http://example.invalid/ is not a link.\n' },
    '/private/secret.html': { kind: 'html', body: page('Secret', '<p>robots.txt forbids this page.</p>') },
    '/r1': { kind: 'redirect', to: '/r2', status: 301 },
    '/r2': { kind: 'redirect', to: `${main}/final.html`, status: 302 },
    '/final.html': { kind: 'html', body: page('Final', '<p>End of the redirect chain.</p>\n<a href="/">home</a>') },
    '/loop-a': { kind: 'redirect', to: '/loop-b', status: 302 },
    '/loop-b': { kind: 'redirect', to: '/loop-a', status: 302 },
    '/gone': { kind: 'status', status: 410 },
    // '/missing' has no route: the default notFound answers 404.
    '/error': { kind: 'status', status: 500 },
    '/busy': { kind: 'status', status: 503, headers: { 'Retry-After': '1' } },
    '/dup-a.html': { kind: 'html', body: DUP_BODY },
    '/dup-b.html': { kind: 'html', body: DUP_BODY },
    '/trap/': { kind: 'trap', depth: STANDARD_TRAP_DEPTH },
    '/doc.pdf': { kind: 'binary', bytes: minimalPdf('Fixture PDF'), contentType: 'application/pdf' },
    '/logo.png': { kind: 'binary', bytes: PNG_1X1, contentType: 'image/png' },
    '/zipped.html': { kind: 'gzip', body: page('Zipped', '<p>Served with Content-Encoding: gzip.</p>\n<a href="/">home</a>') },
    '/bomb.html': { kind: 'gzip-bomb', decompressedBytes: STANDARD_BOMB_BYTES },
    '/garbage.html': { kind: 'garbage', bytes: garbageBytes(4096) },
    '/nofollow.html': {
      kind: 'html',
      body: page('No follow', links(['/only-via-nofollow.html']), '<meta name="robots" content="nofollow">'),
    },
    '/only-via-nofollow.html': { kind: 'html', body: page('Hidden', '<p>Linked only from a nofollow page.</p>') },
  };
  if (alias) {
    mainRoutes['/alias/one.html'] = { kind: 'html', body: page('Alias one', links(['two.html', '/private/alias-secret.html'])) };
    mainRoutes['/alias/two.html'] = { kind: 'html', body: page('Alias two', links(['one.html'])) };
    mainRoutes['/private/alias-secret.html'] = { kind: 'html', body: page('Alias secret', '<p>robots.txt forbids this page.</p>') };
  }

  const otherRoutes: Record<string, RouteSpec> = {
    '/robots.txt': { kind: 'robots', body: 'User-agent: *\nDisallow: /admin/\n' },
    '/': { kind: 'html', body: page('Fixture other', links(['/o1.html', '/o2.html', '/admin/panel.html', `${main}/`])) },
    '/o1.html': { kind: 'html', body: page('Other 1', links(['/o2.html', `${main}/a.html`])) },
    '/o2.html': { kind: 'html', body: page('Other 2', links(['/o1.html', '/feed.txt'])) },
    '/feed.txt': { kind: 'text', body: 'A plain-text page on the other host.\n' },
    '/admin/panel.html': { kind: 'html', body: page('Admin', '<p>robots.txt forbids this page.</p>') },
  };

  return [
    { ip: ips.main, routes: mainRoutes },
    { ip: ips.other, routes: otherRoutes },
  ];
}

/** What a correct crawl of one site should show in the server log. */
export interface ExpectedHost {
  /** Requested (GET) at least once. */
  readonly fetched: readonly string[];
  /** Never requested. */
  readonly never: readonly string[];
  /** May be requested more than once (retries, loop detection after a hop). */
  readonly mayRepeat: readonly string[];
  /** Subtrees a correct crawler enters but must leave: at most `max` requests below `prefix`. */
  readonly bounded: readonly { readonly prefix: string; readonly max: number }[];
}

/**
 * What a correct crawler requests from `standardSite()`, seeded with the main
 * host's `/`, both hosts in scope, robots.txt obeyed, max_redirects 10,
 * check_meta_robots on, default allowed_types (text/html, text/plain,
 * application/pdf, …) and exclude_exts (which contains .png).
 * The content type is only known after the request, so pages the crawler
 * will discard are still fetched; only URL-level rules prevent a request.
 */
export const STANDARD_SITE_EXPECTED: { readonly main: ExpectedHost; readonly other: ExpectedHost; readonly alias: ExpectedHost } = {
  main: {
    fetched: [
      '/robots.txt', //          read before any page of the site
      '/', //                    the seed
      '/a.html', //              linked from the index (also as /a.html#section: one URL)
      '/b.html', //              linked from the index and from /a.html
      '/c.html', //              linked from /a.html and /b.html (./c.html, absolute, #top)
      '/dir/d.html', //          relative link dir/d.html from the index
      '/dir/e.html', //          relative link from /dir/d.html
      '/notes.txt', //           text/plain is an allowed type
      '/r1', //                  redirect chain, hop 1 (301)
      '/r2', //                  hop 2 (302, absolute Location)
      '/final.html', //          end of the chain: 2 hops < max_redirects 10
      '/loop-a', //              redirect loop: both ends are requested…
      '/loop-b', //              …then the loop is noticed (or max_redirects stops it)
      '/gone', //                410: requested, then dropped
      '/missing', //             404 (no route): requested, then dropped
      '/error', //               500: requested (may be retried)
      '/busy', //                503 with Retry-After: 1 (may be retried)
      '/dup-a.html', //          identical bytes to /dup-b.html: only known after fetching both
      '/dup-b.html',
      '/trap/', //               the trap's root is an ordinary link (see bounded)
      '/doc.pdf', //             application/pdf is an allowed type; .pdf not in exclude_exts
      '/zipped.html', //         Content-Encoding: gzip
      '/bomb.html', //           requested; the decompression limit stops it, not the URL
      '/garbage.html', //        text/html with binary junk
      '/nofollow.html', //       linked from the index; its own links are not followed
    ],
    never: [
      '/private/secret.html', // Disallow: /private/
      '/logo.png', //            .png is in exclude_exts: no request at all
      '/only-via-nofollow.html', // only linked from a <meta name="robots" content="nofollow"> page
    ],
    mayRepeat: [
      '/error', //               5xx may be retried
      '/busy', //                503 + Retry-After invites a retry
      '/loop-a', //              a crawler may re-request the first hop before noticing the loop
      '/loop-b',
    ],
    bounded: [
      // Without a trap guard, only max_url_segments (16) stops the crawler: 72
      // pages. max_uri_recursion 5 stops it much earlier.
      { prefix: '/trap/', max: 40 },
    ],
  },
  other: {
    fetched: [
      '/robots.txt', //          each site has its own robots.txt
      '/', //                    linked from the main index
      '/o1.html', //             linked from the other index
      '/o2.html',
      '/feed.txt', //            text/plain, linked from /o2.html
    ],
    never: [
      '/admin/panel.html', //    Disallow: /admin/ on this host
    ],
    mayRepeat: [],
    bounded: [],
  },
  // Only with standardSite({ …, sameIpAlias }); logged by the main server with that Host header.
  alias: {
    fetched: [
      '/robots.txt', //          the alias is its own site, so it gets its own robots.txt fetch
      '/alias/one.html', //      linked from the main index through the alias name
      '/alias/two.html', //      relative link from /alias/one.html
    ],
    never: [
      '/private/alias-secret.html', // Disallow: /private/ (same robots.txt content)
      '/', //                    nothing links to the alias's root
    ],
    mayRepeat: [],
    bounded: [],
  },
};

export interface ExpectedDiff {
  /** Expected but never requested. */
  readonly missing: string[];
  /** Requested although listed in `never`. */
  readonly forbidden: string[];
  /** Requested, but neither expected nor under a bounded prefix. */
  readonly unexpected: string[];
  /** Requested more than once without being listed in `mayRepeat` (bounded subtrees excluded). */
  readonly repeated: string[];
  /** Bounded subtrees requested more often than allowed, with the count. */
  readonly overBound: { prefix: string; count: number; max: number }[];
}

/** Compares a server log (`site.fetchedPaths(ip)`) with an expectation; all empty = a correct crawl. */
export function diffAgainstExpected(paths: readonly string[], expected: ExpectedHost): ExpectedDiff {
  const got = new Set(paths);
  const inBound = (p: string): boolean => expected.bounded.some((b) => p.startsWith(b.prefix));
  const counts = new Map<string, number>();
  for (const p of paths) counts.set(p, (counts.get(p) ?? 0) + 1);
  return {
    missing: expected.fetched.filter((p) => !got.has(p)),
    forbidden: expected.never.filter((p) => got.has(p)),
    unexpected: [...got].filter((p) => !expected.fetched.includes(p) && !expected.never.includes(p) && !inBound(p)),
    repeated: [...counts].filter(([p, n]) => n > 1 && !expected.mayRepeat.includes(p) && !inBound(p)).map(([p]) => p),
    overBound: expected.bounded
      .map((b) => ({ prefix: b.prefix, count: paths.filter((p) => p.startsWith(b.prefix)).length, max: b.max }))
      .filter((b) => b.count > b.max),
  };
}

// ─── Generated sites ────────────────────────────────────────────────────────

/**
 * A deterministic pseudo-random link graph over several hosts. Each host
 * has `/robots.txt` (allows everything), `/` linking to `/p/0.html` and to
 * every other host's `/`, and pages `/p/0.html` … `/p/<n-1>.html`. A page's
 * first link is its successor, so every page is reachable from `/`; the
 * other `linksPerPage - 1` links point at random pages, about one in five on
 * another host. The same options always give the same site.
 */
export function generatedSite(opts: { hosts: string[]; pagesPerHost: number; linksPerPage: number; seed?: number }): HostSpec[] {
  const rnd = prng(opts.seed ?? 1);
  const pick = (n: number): number => Math.floor(rnd() * n);
  return opts.hosts.map((ip) => {
    const routes: Record<string, RouteSpec> = {
      '/robots.txt': { kind: 'robots', body: 'User-agent: *\nDisallow:\n' },
      '/': {
        kind: 'html',
        body: page(`Generated ${ip}`, links([...(opts.pagesPerHost > 0 ? ['/p/0.html'] : []), ...opts.hosts.filter((h) => h !== ip).map((h) => `{{origin:${h}}}/`)])),
      },
    };
    for (let i = 0; i < opts.pagesPerHost; i++) {
      const hrefs: string[] = [];
      if (i + 1 < opts.pagesPerHost && opts.linksPerPage > 0) hrefs.push(`/p/${i + 1}.html`);
      while (hrefs.length < opts.linksPerPage) {
        const target = opts.hosts.length > 1 && rnd() < 0.2 ? opts.hosts[pick(opts.hosts.length)]! : ip;
        const p = `/p/${pick(opts.pagesPerHost)}.html`;
        hrefs.push(target === ip ? p : `{{origin:${target}}}${p}`);
      }
      const words = Array.from({ length: 20 }, () => (pick(1e6) + 1e6).toString(36)).join(' ');
      routes[`/p/${i}.html`] = { kind: 'html', body: page(`Page ${i} of ${ip}`, `<p>${words}</p>\n${links(hrefs)}`) };
    }
    return { ip, routes };
  });
}

/** The paths a complete crawl of `generatedSite(opts)` requests, per host IP (each once). */
export function generatedSiteExpected(opts: { hosts: string[]; pagesPerHost: number }): Record<string, string[]> {
  const paths = ['/robots.txt', '/', ...Array.from({ length: opts.pagesPerHost }, (_, i) => `/p/${i}.html`)];
  return Object.fromEntries(opts.hosts.map((ip) => [ip, [...paths]]));
}
