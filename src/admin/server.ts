/**
 * The admin server: XML-RPC over HTTP POST /RPC2 (MS-FSCADM 2.2), on
 * fastify. Every failure inside a call becomes an XML-RPC fault with
 * faultCode 1 (2.2.7). A malformed request never takes the server down.
 * Beside it, GET /metrics (Prometheus text format, metrics.ts) and
 * GET /healthz (a liveness and readiness probe).
 *
 * What the HTTP layer accepts, checked in this order before any body byte
 * is read (`onRequest`):
 *
 *   Host      one of the names the server answers to (loopback names, the
 *             bind address, --allow-host), with its port ........ else 421
 *   Origin    absent, or the server's own origin (http://<Host>) . else 403
 *   peer      not locked out after repeated bad tokens ........... else 429
 *   token     Authorization: Bearer <token>, when one is set ..... else 401
 *             (not on /healthz: probes cannot send one, and it tells only
 *             ok or not, the number of collections and the uptime)
 *   method    GET or HEAD on /metrics and /healthz ............... else 405
 *   type      POST /RPC2: Content-Type text/xml or application/xml  else 415
 *   body      at most maxRequestBytes, counted while it streams .. else 413
 *
 * The Host and Origin checks stop a web page in a browser from reaching
 * the server: a cross-site POST carries the page's Origin, and a DNS
 * rebinding attack carries the attacker's host name. XML-only bodies stop
 * the "simple" cross-site form and text/plain POSTs that need no preflight.
 *
 * Slow clients: headers must arrive within headersTimeoutMs and the whole
 * request within requestTimeoutMs (Node answers 408 and closes), an idle
 * keep-alive connection closes after keepAliveTimeoutMs, and connections
 * beyond maxConnections are closed as soon as they are accepted.
 */

import { timingSafeEqual, createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { isTrawlError } from '../core/errors.ts';
import type { CrawlerService } from '../service/crawler-service.ts';
import { METRICS_CONTENT_TYPE, renderMetrics } from './metrics.ts';
import { dispatch } from './methods.ts';
import { encodeFault, encodeMethodResponse, parseMethodCall } from './xmlrpc.ts';

/** Limits of the admin server; every one has a safe default. */
export interface AdminLimits {
  /** Largest request body, bytes (default 8 MiB). */
  readonly maxRequestBytes?: number;
  /** Time to receive the request headers, ms (default 10 s). */
  readonly headersTimeoutMs?: number;
  /** Time to receive the whole request, headers and body, ms (default 30 s). */
  readonly requestTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this, ms (default 5 s). */
  readonly keepAliveTimeoutMs?: number;
  /** Open connections at most; one more is closed at once (default 256). */
  readonly maxConnections?: number;
  /** Failed token checks from one address within a minute before it is locked out (default 10). */
  readonly maxAuthFailures?: number;
  /** How long a locked-out address is answered 429, ms (default 60 s). */
  readonly authLockoutMs?: number;
}

export interface AdminServerOptions extends AdminLimits {
  readonly service: CrawlerService;
  readonly log: Logger;
  /** Bearer token required on every request, when set. */
  readonly token?: string;
  /** The address the server binds to (default 127.0.0.1); its name is an accepted Host. */
  readonly host?: string;
  /** Further host names clients may use in Host (a DNS name of this machine, say). */
  readonly allowedHosts?: readonly string[];
}

export const ADMIN_DEFAULTS = {
  maxRequestBytes: 8 * 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 256,
  maxAuthFailures: 10,
  authLockoutMs: 60_000,
} as const satisfies Required<AdminLimits>;

/** MS-FSCADM 2.2.7: the fault code is always 1. */
export const FAULT_CODE = 1;

const AUTH_WINDOW_MS = 60_000;
/** Addresses whose failures are remembered at most; the oldest is forgotten first. */
const AUTH_TRACKED_MAX = 10_000;

function sameToken(given: string, expected: string): boolean {
  // Compare digests, so the comparison takes the same time whatever the lengths.
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** `text/xml` or `application/xml`, with parameters (charset) or not. */
function isXmlMediaType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const type = header.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'text/xml' || type === 'application/xml';
}

/** `name` as it appears in a Host header: IPv6 literals in brackets, lower case. */
function hostName(name: string): string {
  const n = name.toLowerCase();
  return isIP(n) === 6 ? `[${n}]` : n;
}

/**
 * The Host values the server answers to. A wildcard bind (0.0.0.0, ::)
 * answers to the addresses of every interface of this machine.
 */
function acceptedHosts(bind: string, port: () => number, extra: readonly string[]): (host: string | undefined) => boolean {
  const names = new Set(['localhost', '127.0.0.1', '[::1]', hostName(bind), ...extra.map(hostName)]);
  if (bind === '0.0.0.0' || bind === '::') {
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(hostName(a.address.replace(/%.*$/, '')));
  }
  return (host) => {
    if (host === undefined) return false;
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host.trim());
    if (!m) return false;
    const p = port();
    const given = m[2] === undefined ? 80 : Number(m[2]);
    return names.has(m[1]!.toLowerCase()) && given === p;
  };
}

/**
 * Failed token checks per peer address: after `max` within a minute the
 * address is answered 429 for `lockoutMs`. Other addresses are not affected.
 */
class AuthFailures {
  private readonly byPeer = new Map<string, { failures: number[]; lockedUntil: number }>();
  private readonly max: number;
  private readonly lockoutMs: number;

  constructor(max: number, lockoutMs: number) {
    this.max = max;
    this.lockoutMs = lockoutMs;
  }

  /** Ms until the peer may try again, or 0. */
  lockedFor(peer: string, now: number): number {
    const e = this.byPeer.get(peer);
    return e && e.lockedUntil > now ? e.lockedUntil - now : 0;
  }

  /** Records a failure; true when it locks the peer out. */
  fail(peer: string, now: number): boolean {
    let e = this.byPeer.get(peer);
    if (e) this.byPeer.delete(peer); // re-inserted last: the Map's order is the least recently failed first
    else e = { failures: [], lockedUntil: 0 };
    e.failures = e.failures.filter((t) => t > now - AUTH_WINDOW_MS);
    e.failures.push(now);
    let locked = false;
    if (e.failures.length >= this.max) {
      e.lockedUntil = now + this.lockoutMs;
      e.failures = [];
      locked = true;
    }
    this.byPeer.set(peer, e);
    if (this.byPeer.size > AUTH_TRACKED_MAX) this.byPeer.delete(this.byPeer.keys().next().value!);
    return locked;
  }
}

/** The paths read with GET (HEAD too) alone. */
const GET_PATHS = new Set(['/metrics', '/healthz']);

function refuse(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).header('connection', 'close').type('text/plain; charset=utf-8').send(`${text}\n`);
}

export function buildAdminServer(o: AdminServerOptions): FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger> {
  const lim = { ...ADMIN_DEFAULTS, ...Object.fromEntries(Object.entries(o).filter(([k, v]) => k in ADMIN_DEFAULTS && v !== undefined)) } as Required<AdminLimits>;
  const httpLog = o.log.child({ component: 'http' }, { level: 'warn' });
  // fastify's own per-request lines only at warn and above; the calls are logged below.
  const app = Fastify({
    loggerInstance: httpLog,
    bodyLimit: lim.maxRequestBytes,
    keepAliveTimeout: lim.keepAliveTimeoutMs,
    requestTimeout: lim.requestTimeoutMs,
    // A stop closes every connection, a slow client's too, instead of waiting for it.
    forceCloseConnections: true,
    // Node checks the headers and request timers every connectionsCheckingInterval
    // (30 s by default), which would let a stalled request live twice its limit.
    http: { headersTimeout: lim.headersTimeoutMs, requestTimeout: lim.requestTimeoutMs, connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(lim.headersTimeoutMs / 4))) },
  });
  app.server.maxConnections = lim.maxConnections;
  app.server.headersTimeout = lim.headersTimeoutMs;
  const hostOk = acceptedHosts(o.host ?? '127.0.0.1', () => {
    const a = app.server.address();
    return typeof a === 'object' && a !== null ? a.port : 0;
  }, o.allowedHosts ?? []);
  const failures = new AuthFailures(lim.maxAuthFailures, lim.authLockoutMs);

  // Bodies are taken raw, and only as XML; the onRequest hook already refused other types.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['text/xml', 'application/xml'], { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.addHook('onRequest', async (req: FastifyRequest, reply) => {
    const peer = req.socket.remoteAddress ?? 'unknown';
    if (!hostOk(req.headers.host)) {
      o.log.warn({ peer, host: req.headers.host }, 'admin request refused: Host is not a name this server answers to');
      return refuse(reply, 421, 'misdirected request: the Host header does not name this server');
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin.toLowerCase() !== `http://${req.headers.host!.toLowerCase()}`) {
      o.log.warn({ peer, origin }, 'admin request refused: cross-origin');
      return refuse(reply, 403, 'cross-origin requests are refused');
    }
    // The matched route's path (no query); undefined for a path no route has.
    const route = req.routeOptions.url;
    if (o.token !== undefined && route !== '/healthz') {
      const now = Date.now();
      const wait = failures.lockedFor(peer, now);
      if (wait > 0) return refuse(reply.header('retry-after', String(Math.ceil(wait / 1000))), 429, 'too many failed token checks from this address; try again later');
      const auth = req.headers.authorization ?? '';
      const given = auth.startsWith('Bearer ') ? auth.slice(7) : '';
      if (!sameToken(given, o.token)) {
        const locked = failures.fail(peer, now);
        // Never the token given: it may be a near miss of the real one.
        o.log.warn({ peer, locked, presented: given !== '' }, locked ? 'admin token check failed; address locked out' : 'admin token check failed');
        return refuse(reply.header('www-authenticate', 'Bearer realm="trawl"'), 401, 'a bearer token is required');
      }
    }
    if (route !== undefined && GET_PATHS.has(route) && req.method !== 'GET' && req.method !== 'HEAD') {
      return refuse(reply.header('allow', 'GET, HEAD'), 405, `${route} takes GET only`);
    }
    if (req.method === 'POST' && route === '/RPC2' && !isXmlMediaType(req.headers['content-type'])) {
      return refuse(reply, 415, 'XML-RPC bodies must be sent as Content-Type: text/xml or application/xml');
    }
    return undefined;
  });

  app.post('/RPC2', async (req, reply) => {
    reply.type('text/xml; charset=utf-8');
    const body = req.body instanceof Buffer ? req.body : Buffer.alloc(0);
    let name = '(unparsed)';
    try {
      const call = parseMethodCall(body, { maxBytes: lim.maxRequestBytes });
      name = call.methodName;
      const value = await dispatch(o.service, call.methodName, call.params);
      o.log.debug({ method: name }, 'xml-rpc call');
      return encodeMethodResponse(value);
    } catch (err) {
      const message = isTrawlError(err) ? `${err.code}: ${err.message}` : `TRAWL_ERR_INTERNAL: ${(err as Error).message}`;
      if (isTrawlError(err)) o.log.info({ method: name, code: err.code }, err.message);
      else o.log.error({ method: name, err }, 'xml-rpc method failed');
      return encodeFault(FAULT_CODE, message);
    }
  });
  app.route({
    method: ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'],
    url: '/RPC2',
    handler: async (_req, reply) => reply.code(405).header('allow', 'POST').type('text/plain').send('XML-RPC takes POST only\n'),
  });
  // Every method is routed here so that the hook above answers 405 (and,
  // for /metrics, checks the token first); only GET and HEAD reach the handlers.
  const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];
  app.route({
    method: ALL_METHODS,
    url: '/metrics',
    handler: async (_req, reply) => reply.header('cache-control', 'no-store').type(METRICS_CONTENT_TYPE).send(await renderMetrics(o.service)),
  });
  app.route({
    method: ALL_METHODS,
    url: '/healthz',
    handler: async (_req, reply) => {
      const h = await o.service.health();
      return reply.code(h.ok ? 200 : 503).header('cache-control', 'no-store').type('application/json; charset=utf-8')
        .send(`${JSON.stringify({ status: h.status, collections: h.collections, uptime_s: h.uptimeS })}\n`);
    },
  });
  app.setErrorHandler(async (e, _req, reply) => {
    const err = e as Error & { statusCode?: number };
    const status = err.statusCode ?? 500;
    if (status === 413) return refuse(reply, 413, `request body too large: at most ${lim.maxRequestBytes} bytes`);
    if (status === 415) return refuse(reply, 415, 'XML-RPC bodies must be sent as Content-Type: text/xml or application/xml');
    if (status < 500) return refuse(reply, status, err.message);
    o.log.error({ err }, 'admin server error');
    return reply.code(status).type('text/plain').send(`${err.message}\n`);
  });
  return app;
}
