/**
 * What a fetch is asked (`FetchRequest`, `FetchLimits`) and what it comes
 * to (`FetchOutcome`): a response, or a failure carrying its skip code.
 * `http-fetcher.ts` re-exports all of it; the interceptors and the core
 * import it from here.
 */

import type { DocSkipCode } from '../core/skip-codes.ts';
import type { ProxySet } from './proxy.ts';

export interface FetchLimits {
  /** fetch_timeout: the whole document, from connect to the last byte. */
  readonly fetchTimeoutMs: number;
  /** trawl_limits.connect_timeout */
  readonly connectTimeoutMs: number;
  /** trawl_limits.read_timeout: longest wait for the response's headers, then between two parts of its body (at most fetch_timeout). */
  readonly readTimeoutMs?: number | undefined;
  /** cut_off: largest (decompressed) document; undefined = no limit. */
  readonly cutOffBytes: number | undefined;
  /** What the cut-off is called in messages: "cut_off" unless a reader's own limit stands in for it. */
  readonly cutOffName?: string;
  /** truncate: keep the first cut_off bytes instead of failing. */
  readonly truncate: boolean;
  /** trawl_limits.max_decompressed_bytes: a larger decompressed body is refused ("tl"). */
  readonly maxDecompressedBytes: number;
  /**
   * trawl_limits.max_document_bytes: the most body bytes held for one
   * response, on the wire or decoded, whatever cut_off says; a larger body
   * is abandoned as it streams in ("tl"). Absent: DEFAULT_MAX_DOCUMENT_BYTES,
   * so that no caller can read an unbounded body into memory.
   */
  readonly maxDocumentBytes?: number;
  /** Bytes of an error or redirect body that are read before the connection is dropped. */
  readonly maxErrorBodyBytes?: number;
}

export interface FetchRequest {
  readonly url: URL;
  /** Header lines already parsed from `headers` ("User-Agent: …"), by lower-case name. */
  readonly headers: Readonly<Record<string, string>>;
  /** accept_compression (and use_http_1_1). */
  readonly acceptCompression: boolean;
  /** use_http_1_1 off: no keep-alive and no compression (undici always speaks HTTP/1.1 on the wire). */
  readonly http10: boolean;
  readonly ifNoneMatch?: string;
  readonly ifModifiedSince?: string;
  readonly limits: FetchLimits;
  /** A POST body (post_payload, a rendered page's request), sent as `postContentType`. */
  readonly postBody?: string | Uint8Array;
  /** The POST body's Content-Type; application/x-www-form-urlencoded when absent (post_payload). */
  readonly postContentType?: string | undefined;
  /** The proxies to send it through (proxy, per collection or sub-collection); absent: straight to the site. */
  readonly proxy?: ProxySet | undefined;
  /** The page the URI was found on, sent as Referer (trawl_http send_referer). */
  readonly referer?: string | undefined;
  readonly signal?: AbortSignal;
  /**
   * Called when the request's headers are written to the socket (politeness
   * counts from there), once for each request the fetch sends: an
   * interceptor that sends the request again calls it again.
   */
  readonly onSent?: () => void;
}

export type ErrorKey = 'net' | 'ttl' | 'int';

/**
 * Response headers as undici parses them: lower-case names, in the order
 * each name first came; a header that came more than once is an array of
 * its values in the order they came (Set-Cookie, WWW-Authenticate).
 */
export type ResponseHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface ResponseOutcome {
  readonly kind: 'response';
  readonly status: number;
  /** Every header by lower-case name, a repeated one's values joined with ", " (what the engine reads). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Every header as it came, repeated ones kept apart: undici's own parsed
   * object, held as it is (nothing is copied for a page whose headers nobody
   * reads this way). Read it with `headerValues` or `headerPairs`. The
   * fetcher always sets it; it is optional only so that outcomes made by
   * hand (tests of the engine's stages) need not carry it.
   */
  readonly rawHeaders?: ResponseHeaders;
  /** The raw header block, for store_http_header. */
  readonly headerBlock: string;
  /** The decoded (decompressed) body; only read in full for 2xx answers. */
  readonly body: Uint8Array;
  /** True when cut_off cut the body (truncate on). */
  readonly truncated: boolean;
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly durationMs: number;
  readonly address: string | undefined;
  /**
   * The FTP reply an `ftp://` fetch came to (ftp-fetcher.ts): ftp_errors
   * is applied to it, while `status` is the HTTP status it stands for.
   */
  readonly ftpCode?: number;
  /**
   * Set by the authentication interceptor on a 401 its credentials could
   * not get past (refused, or none fits the challenge): why, naming the
   * passwd entry and realm, never a secret. The page is skipped with it.
   */
  readonly authFailure?: string;
}

export interface FailureOutcome {
  readonly kind: 'failure';
  readonly code: DocSkipCode;
  /** Which http_errors entry applies: net, ttl or int. */
  readonly errorKey: ErrorKey;
  readonly reason: string;
  /** Refused by the egress policy (never retried, never counted as a site failure). */
  readonly blocked: boolean;
  /** A connection could not be made (site backoff applies). */
  readonly connectFailure: boolean;
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly durationMs: number;
}

export type FetchOutcome = ResponseOutcome | FailureOutcome;

const NONE: readonly string[] = [];

/** Every value of one header, in the order they came; none when it is absent. `name` is lower-case. */
export function headerValues(headers: ResponseHeaders | undefined, name: string): readonly string[] {
  const v = headers?.[name];
  if (v === undefined) return NONE;
  return typeof v === 'string' ? [v] : v;
}

/** The headers as [name, value] pairs: one pair per value, each name's values together, in the order they came. */
export function headerPairs(headers: ResponseHeaders | undefined): Array<[name: string, value: string]> {
  const pairs: Array<[string, string]> = [];
  if (headers === undefined) return pairs;
  for (const name in headers) {
    const v = headers[name];
    if (typeof v === 'string') pairs.push([name, v]);
    else if (v !== undefined) for (const one of v) pairs.push([name, one]);
  }
  return pairs;
}
