/**
 * The fetcher's extension point: interceptors composed around the bounded
 * exchange at the core, each a function from the next handler to a handler,
 * as undici's `Dispatcher.compose()` composes dispatch functions.
 *
 *   HttpFetcher.fetch(request) ─► new FetchCall
 *     ─► requestHeaders ─► conditionalGet ─► egressCheck ─► boundedExchange (undici)
 *     ◄─────────────────────── FetchOutcome ◄──────────────────────────────┘
 *
 * Why a chain of our own (call → outcome) and not undici interceptors
 * (dispatch → dispatch): an undici interceptor sees the response as handler
 * callbacks, before the body is bounded and decoded, and wraps the handler
 * in a handler of its own for every request (undici's retry interceptor
 * also spreads the options into a new object each time). Here an
 * interceptor sees the outcome as a value, after every limit: an
 * authentication interceptor reads a 401 and calls `next` again with
 * credentials, a cookie interceptor reads every response's `Set-Cookie`
 * values (`headerValues(o.rawHeaders, 'set-cookie')`), a proxy interceptor
 * sets `call.dispatcher`. Interceptors are composed once, when the fetcher
 * is made; a fetch allocates one `FetchCall`, and an interceptor with
 * nothing to do after its `next` returns `next`'s promise as it is (no
 * `async`, no extra promise or await per page).
 *
 * Contract for an interceptor: never throw and never reject (failures are
 * `FailureOutcome`s); write to the call only before calling `next`, and
 * when it calls `next` more than once, add up the byte counts of the
 * outcomes it drops.
 */

import type { Dispatcher } from 'undici';
import type { FetchOutcome, FetchRequest } from './fetch-types.ts';

/**
 * One fetch on its way through the interceptors: the caller's request, and
 * what the interceptors make of it before the core sends it. The core only
 * reads it, so an interceptor may hand the same call to `next` again.
 */
export class FetchCall {
  readonly request: FetchRequest;
  /** performance.now() when the fetch began: every outcome's durationMs counts from here. */
  readonly startedMs: number;
  /** The request target (path and query) as the request line carries it. */
  readonly path: string;
  method: 'GET' | 'POST' = 'GET';
  /** The request headers by lower-case name: a copy of the request's, which interceptors add to. */
  readonly headers: Record<string, string>;
  /** The request body (with method POST). */
  body: string | Uint8Array | undefined = undefined;
  /** The checked address the connection goes to (the egress interceptor's), reported with the response. */
  address: string | undefined = undefined;
  /** Where the request is dispatched: the fetcher's agent, unless an interceptor (a proxy) puts another. */
  dispatcher: Dispatcher;

  constructor(request: FetchRequest, dispatcher: Dispatcher) {
    this.request = request;
    this.startedMs = performance.now();
    this.path = request.url.pathname + request.url.search;
    this.headers = { ...request.headers };
    this.dispatcher = dispatcher;
  }
}

/** Sends a call on and answers with its outcome; never rejects. */
export type FetchHandler = (call: FetchCall) => Promise<FetchOutcome>;

/** Wraps the next handler (made once per fetcher, not per fetch). */
export type FetchInterceptor = (next: FetchHandler) => FetchHandler;

/** The handler that runs `interceptors` in order, the first outermost, around `core`. */
export function composeFetch(core: FetchHandler, interceptors: readonly FetchInterceptor[]): FetchHandler {
  let handler = core;
  for (let i = interceptors.length - 1; i >= 0; i--) handler = interceptors[i]!(handler);
  return handler;
}
