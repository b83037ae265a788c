/**
 * The HTTP fetcher: one request, bounded in every dimension, turned into a
 * value (`FetchOutcome`), through interceptors composed around a bounded
 * core (`interceptor.ts` says how they compose and why).
 *
 *   fetch(request) ─► (measureFetch   interceptors/measure.ts          duration and body bytes, when an observer is given)
 *                  ─► requestHeaders   interceptors/request-headers.ts  method, POST body, Accept-Encoding, HTTP/1.0
 *                  ─► httpAuth         interceptors/http-auth.ts        passwd: Basic, Digest, NTLMv2 (only with passwd entries)
 *                  ─► cookies          interceptors/cookies.ts          use_cookies: the collection's jar (only when on)
 *                  ─► conditionalGet   interceptors/conditional.ts      If-None-Match, If-Modified-Since
 *                  ─► egressCheck      interceptors/egress.ts           pinned DNS, address policy
 *                  ─► proxyRoute       interceptors/proxy.ts            only with proxies: the URI's proxy, proxy_max_pending
 *                  ─► boundedExchange  bounded-exchange.ts              undici; limits, decoding, body budget, timers;
 *                                                                       the one place transport errors become values
 *
 * Redirects are not followed here: the engine queues the target as a new
 * URI so it is scoped, checked against robots.txt and paced like any other.
 */

import { Agent } from 'undici';
import type { SiteResolver } from './egress.ts';
import type { FetchOutcome, FetchRequest } from './fetch-types.ts';
import { boundedExchange } from './bounded-exchange.ts';
import { composeFetch, FetchCall, type FetchHandler } from './interceptor.ts';
import { conditionalGet } from './interceptors/conditional.ts';
import { egressCheck, pinnedLookup } from './interceptors/egress.ts';
import { measureFetch, type FetchObserver } from './interceptors/measure.ts';
import { requestHeaders } from './interceptors/request-headers.ts';
import type { CookieJar } from './cookies.ts';
import { cookieInterceptor } from './interceptors/cookies.ts';
import type { HttpAuth } from './interceptors/http-auth.ts';
import { proxyRoute } from './interceptors/proxy.ts';
import { ProxyPool, tlsConnectOptions, type ClientTls, type ProxySet, type ProxyTarget } from './proxy.ts';

export type { FetchObserver } from './interceptors/measure.ts';
export type { ErrorKey, FailureOutcome, FetchLimits, FetchOutcome, FetchRequest, ResponseHeaders, ResponseOutcome } from './fetch-types.ts';
export { headerPairs, headerValues } from './fetch-types.ts';
export type { ClientTls, ProxySet, ProxyTarget } from './proxy.ts';
export { BODY_MEMORY_BUDGET_BYTES, classifyError, DEFAULT_MAX_DOCUMENT_BYTES, setBodyMemoryBudget } from './bounded-exchange.ts';

export class HttpFetcher {
  private readonly agent: Agent;
  private readonly send: FetchHandler;
  private readonly proxies: ProxyPool | undefined;

  /**
   * `tls`: the client certificate (key_file, cert_file) offered to every
   * TLS site, directly or through a proxy's tunnel. `proxyMaxPending`: set
   * when the collection names proxies (proxy_max_pending); a fetcher made
   * without it sends every request straight to its site. `observer`: told
   * every fetch's duration and bytes (the daemon's /metrics). `auth`,
   * `cookies`: passwd and use_cookies, when the collection has them.
   */
  constructor(resolver: SiteResolver, opts: { connections?: number; connectTimeoutMs?: number; tls?: ClientTls; proxyMaxPending?: number; observer?: FetchObserver | undefined; auth?: HttpAuth | undefined; cookies?: CookieJar | undefined } = {}) {
    const connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
    this.agent = new Agent({
      connections: opts.connections ?? 8,
      pipelining: 1,
      keepAliveTimeout: 10_000,
      connect: { lookup: pinnedLookup(resolver), timeout: connectTimeoutMs, ...tlsConnectOptions(opts.tls) },
    });
    this.proxies = opts.proxyMaxPending !== undefined ? new ProxyPool({ maxPending: opts.proxyMaxPending, connectTimeoutMs, tls: opts.tls }) : undefined;
    // The one place the interceptors are composed, outermost first. The
    // egress check guards the connection the core makes, and what wraps it
    // sees its refusals as outcomes like any other; the proxy route is
    // inside it, so a refused request never takes a place at the proxy.
    // The measuring one (the daemon's /metrics) is outermost, and only
    // there when asked for; authentication and cookies only when configured.
    this.send = composeFetch(boundedExchange, [
      ...(opts.observer ? [measureFetch(opts.observer)] : []),
      requestHeaders,
      ...(opts.auth ? [opts.auth.interceptor] : []),
      ...(opts.cookies ? [cookieInterceptor(opts.cookies)] : []),
      conditionalGet, egressCheck(resolver),
      ...(this.proxies ? [proxyRoute] : []),
    ]);
  }

  /** The proxy set for these proxies (a request names it as `proxy`); only on a fetcher made with proxyMaxPending. */
  proxySet(targets: readonly ProxyTarget[]): ProxySet {
    if (!this.proxies) throw new Error('this fetcher was made without proxies');
    return this.proxies.set(targets);
  }

  /** Fetches once; never rejects (every failure is a FailureOutcome). */
  fetch(req: FetchRequest): Promise<FetchOutcome> {
    return this.send(new FetchCall(req, this.agent));
  }

  async close(): Promise<void> {
    await Promise.all([this.agent.close().catch(() => this.agent.destroy()), this.proxies?.close()]);
  }
}
