/**
 * Sends a call through its proxy (`FetchRequest.proxy`, the proxies of the
 * URI's collection or sub-collection; `../proxy.ts`):
 *
 *   the site's proxy (by host name) ─► a place among its proxy_max_pending requests
 *     ─► call.dispatcher = its ProxyAgent ─► next
 *     ─► the proxy could not be connected to? the set's next proxy, each at most once
 *
 * Composed (innermost, after the egress check) only by a fetcher that has
 * proxies: a crawl without them pays nothing for it.
 *
 * What the proxy refuses becomes a connection failure ("co") of the site
 * that names the proxy and why: a CONNECT answered 502 or 504 (the proxy
 * could not reach the site), 407 or 401 (its authentication failed) or
 * any other status, and a 407 to a plain http request. A plain request the
 * proxy could not forward comes back as the proxy's response (often 502),
 * recorded as that HTTP status.
 */

import type { FailureOutcome, FetchOutcome } from '../fetch-types.ts';
import type { FetchCall, FetchHandler, FetchInterceptor } from '../interceptor.ts';
import type { ProxyEndpoint } from '../proxy.ts';

export const proxyRoute: FetchInterceptor = (next) => (call) => {
  const set = call.request.proxy;
  if (set === undefined) return next(call);
  const first = set.first(call.request.url.hostname);
  return through(call, next, set.endpoints, first, 0, 0, 0);
};

async function through(call: FetchCall, next: FetchHandler, endpoints: readonly ProxyEndpoint[], first: number, tried: number, bytesIn: number, bytesOut: number): Promise<FetchOutcome> {
  const e = endpoints[(first + tried) % endpoints.length]!;
  const got = e.acquire(call.request.signal);
  if (got !== true && !(await got)) {
    return { kind: 'failure', code: 'ot', errorKey: 'int', reason: 'aborted: the crawl is stopping', blocked: false, connectFailure: false, bytesIn, bytesOut, durationMs: performance.now() - call.startedMs };
  }
  let o: FetchOutcome;
  try {
    call.dispatcher = e.agent;
    o = await next(call);
  } finally {
    e.release();
  }
  if (o.kind === 'response') return bytesIn === 0 ? o : { ...o, bytesIn: o.bytesIn + bytesIn, bytesOut: o.bytesOut + bytesOut };
  // trawl connects to no one but the proxy: a connection failure is the proxy's, and the next proxy may do.
  if (o.connectFailure && !call.request.signal?.aborted && tried + 1 < endpoints.length) {
    return through(call, next, endpoints, first, tried + 1, bytesIn + o.bytesIn, bytesOut + o.bytesOut);
  }
  return proxyFailure(o, e, bytesIn, bytesOut);
}

const TUNNEL_REFUSED = /Proxy response \((\d{3})\) !== 200/;
const AUTH_FAILED = 'proxy authentication failed: check the user name and password in proxy';

/**
 * A failure as the proxy made it, named with the proxy. What the proxy
 * refuses makes the site unreachable through it: a connection failure
 * ("co"), so that robots.txt reports the site unreachable with this reason
 * and its URIs fail with it, without a request each.
 */
function proxyFailure(o: FailureOutcome, e: ProxyEndpoint, bytesIn: number, bytesOut: number): FailureOutcome {
  const counted = { bytesIn: o.bytesIn + bytesIn, bytesOut: o.bytesOut + bytesOut };
  const unreachable = (reason: string): FailureOutcome => ({ ...o, ...counted, code: 'co', errorKey: 'net', connectFailure: true, reason });
  const tunnel = TUNNEL_REFUSED.exec(o.reason);
  if (tunnel) {
    const status = Number(tunnel[1]);
    if (status === 502 || status === 504) return unreachable(`the proxy ${e.label} could not connect to the site (CONNECT answered ${status})`);
    // 401: tinyproxy answers wrong credentials so.
    if (status === 407 || status === 401) return unreachable(`${AUTH_FAILED} (${e.label} answered CONNECT with ${status})`);
    return unreachable(`the proxy ${e.label} refused the tunnel (CONNECT answered ${status})`);
  }
  if (o.reason.includes('Proxy Authentication Required (407)')) return unreachable(`${AUTH_FAILED} (${e.label} answered 407)`);
  if (o.connectFailure) return { ...o, ...counted, reason: `cannot connect to the proxy ${e.label}: ${o.reason}` };
  return bytesIn === 0 ? o : { ...o, ...counted };
}
