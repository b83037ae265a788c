/**
 * The egress policy at both ends of a request (the policy and the pinned
 * resolver are `../egress.ts`):
 *
 *   egressCheck   before the request: the host's pinned, checked address,
 *                 or a "blocked" (or DNS "co") failure and no request at all
 *   pinnedLookup  at undici's connect: the same pinned answer, so the
 *                 connection goes to the address that was checked and never
 *                 to a fresh, unchecked DNS answer (DNS rebinding)
 */

import type { LookupFunction } from 'node:net';
import type { ResolveResult, SiteResolver } from '../egress.ts';
import type { FetchOutcome } from '../fetch-types.ts';
import type { FetchCall, FetchHandler, FetchInterceptor } from '../interceptor.ts';

/**
 * Refuses a request whose host the policy refuses (or that does not
 * resolve), and notes the checked address in the call. A host pinned and
 * still valid is answered without a promise or a lookup.
 */
export function egressCheck(resolver: SiteResolver): FetchInterceptor {
  return (next) => (call) => {
    const host = call.request.url.hostname;
    const pinned = resolver.current(host);
    if (pinned !== undefined) return admit(call, pinned, next);
    return resolver.resolve(host).then((resolved) => admit(call, resolved, next));
  };
}

function admit(call: FetchCall, resolved: ResolveResult, next: FetchHandler): Promise<FetchOutcome> {
  if (resolved.ok) {
    call.address = resolved.address;
    return next(call);
  }
  return Promise.resolve({
    kind: 'failure', code: resolved.dnsError ? 'co' : 'ot', errorKey: 'net', reason: resolved.reason, blocked: !resolved.dnsError,
    connectFailure: resolved.dnsError, bytesIn: 0, bytesOut: 0, durationMs: performance.now() - call.startedMs,
  });
}

/**
 * undici's `connect.lookup`: the pinned, checked answer for every new
 * connection. The answer was pinned when the fetch began; if the resolver
 * has dropped it since (it expired while the request waited for a
 * connection), the host is resolved and checked again. A refused address
 * fails the connect with code EGRESS_REFUSED (the core's "blocked").
 */
export function pinnedLookup(resolver: SiteResolver): LookupFunction {
  return (hostname, options, callback) => {
    const answer = (pinned: ResolveResult): void => {
      if (!pinned.ok) {
        const err = Object.assign(new Error(pinned.reason), { code: 'EGRESS_REFUSED' });
        callback(err as NodeJS.ErrnoException, '', 4);
      } else if ((options as { all?: boolean }).all) {
        (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: pinned.address, family: pinned.family }]);
      } else {
        callback(null, pinned.address, pinned.family);
      }
    };
    const pinned = resolver.pinned(hostname);
    if (pinned) answer(pinned);
    else resolver.resolve(hostname).then(answer, (err: unknown) => callback(err as NodeJS.ErrnoException, '', 4));
  };
}
