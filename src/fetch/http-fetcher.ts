/**
 * The HTTP fetcher: one GET, bounded in every dimension, turned into a
 * value. This file is the one boundary where transport exceptions become
 * results (`FetchOutcome`); nothing above it catches network errors.
 *
 *   request ─► egress (pinned DNS, address policy)
 *           ─► undici (connect timeout; fetch_timeout over the whole document)
 *           ─► body: raw bytes counted ─► decompress (gzip/deflate/br, capped)
 *                                      ─► cut_off: truncate or fail ("tl")
 *           ─► FetchOutcome: response | failure (skip code + http_errors key)
 *
 * Redirects are not followed here: the engine queues the target as a new
 * URI so it is scoped, checked against robots.txt and paced like any other.
 */

import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';
import { createBrotliDecompress, createGunzip, createInflate, type Gunzip } from 'node:zlib';
import type { LookupFunction } from 'node:net';
import { subscribe } from 'node:diagnostics_channel';
import type { DocSkipCode } from '../core/skip-codes.ts';
import type { ResolveResult, SiteResolver } from './egress.ts';

export interface FetchLimits {
  /** fetch_timeout: the whole document, from connect to the last byte. */
  readonly fetchTimeoutMs: number;
  /** trawl_limits.connect_timeout */
  readonly connectTimeoutMs: number;
  /** cut_off: largest (decompressed) document; undefined = no limit. */
  readonly cutOffBytes: number | undefined;
  /** truncate: keep the first cut_off bytes instead of failing. */
  readonly truncate: boolean;
  /** trawl_limits.max_decompressed_bytes: a larger decompressed body is refused ("tl"). */
  readonly maxDecompressedBytes: number;
  /** Bytes of an error or redirect body that are read before the connection is dropped. */
  readonly maxErrorBodyBytes?: number;
}

export interface FetchRequest {
  readonly url: URL;
  /** Header lines already parsed from `headers` ("User-Agent: …"). */
  readonly headers: Readonly<Record<string, string>>;
  /** accept_compression (and use_http_1_1). */
  readonly acceptCompression: boolean;
  /** use_http_1_1 off: no keep-alive and no compression (undici always speaks HTTP/1.1 on the wire). */
  readonly http10: boolean;
  readonly ifNoneMatch?: string;
  readonly ifModifiedSince?: string;
  readonly limits: FetchLimits;
  /** A POST body (post_payload), sent as application/x-www-form-urlencoded. */
  readonly postBody?: string;
  readonly signal?: AbortSignal;
  /** Called when the request's headers are written to the socket (politeness counts from there). */
  readonly onSent?: () => void;
}

/**
 * "Request sent" notifications, from undici's diagnostics channel. The
 * scheduler spaces requests from the moment they really leave, not from the
 * moment they were queued: a first request that waits for a new connection
 * must not let the next one reach the server early.
 */
const sentWaiters = new Map<string, () => void>();
let subscribed = false;
function onSentKey(origin: string, path: string): string {
  return `${origin}\u0000${path}`;
}
function subscribeSent(): void {
  if (subscribed) return;
  subscribed = true;
  subscribe('undici:client:sendHeaders', (message) => {
    const { request } = message as { request: { origin: string; path: string } };
    const key = onSentKey(String(request.origin), request.path);
    const w = sentWaiters.get(key);
    if (w) {
      sentWaiters.delete(key);
      w();
    }
  });
}

export type ErrorKey = 'net' | 'ttl' | 'int';

export interface ResponseOutcome {
  readonly kind: 'response';
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
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

class BodyLimit extends Error {
  readonly code: DocSkipCode;
  constructor(code: DocSkipCode, message: string) {
    super(message);
    this.code = code;
  }
}

function headerRecord(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function decoderFor(encoding: string | undefined): Gunzip | ReturnType<typeof createInflate> | ReturnType<typeof createBrotliDecompress> | undefined | 'unsupported' {
  const e = (encoding ?? '').trim().toLowerCase();
  if (e === '' || e === 'identity') return undefined;
  if (e === 'gzip' || e === 'x-gzip') return createGunzip();
  if (e === 'deflate') return createInflate();
  if (e === 'br') return createBrotliDecompress();
  return 'unsupported';
}

/**
 * Reads a body with every limit applied. Decompression runs as a stream so
 * a gzip bomb is stopped at `maxDecompressedBytes` without inflating it.
 */
async function readBody(body: Dispatcher.ResponseData['body'], encoding: string | undefined, limits: FetchLimits, readAll: boolean): Promise<{ bytes: Uint8Array; rawBytes: number; truncated: boolean }> {
  const cap = readAll ? limits.cutOffBytes : (limits.maxErrorBodyBytes ?? 65536);
  const decoder = readAll ? decoderFor(encoding) : undefined;
  if (decoder === 'unsupported') {
    body.destroy();
    throw new BodyLimit('en', `unsupported Content-Encoding "${encoding}"`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let rawBytes = 0;
  let truncated = false;
  const take = (chunk: Buffer): boolean => {
    // Returns false once enough has been read.
    if (size + chunk.length > limits.maxDecompressedBytes && decoder) {
      throw new BodyLimit('tl', `the body inflates past ${limits.maxDecompressedBytes} bytes (trawl_limits.max_decompressed_bytes)`);
    }
    if (cap !== undefined && size + chunk.length > cap) {
      if (readAll && !limits.truncate) throw new BodyLimit('tl', `the document is larger than cut_off (${cap} bytes)`);
      chunks.push(chunk.subarray(0, cap - size));
      size = cap;
      truncated = readAll;
      return false;
    }
    chunks.push(chunk);
    size += chunk.length;
    return true;
  };
  if (!decoder) {
    for await (const chunk of body) {
      rawBytes += (chunk as Buffer).length;
      if (!take(chunk as Buffer)) {
        body.destroy();
        break;
      }
    }
    return { bytes: Buffer.concat(chunks), rawBytes, truncated };
  }
  await new Promise<void>((resolve, reject) => {
    let done = false;
    const finish = (err?: unknown): void => {
      if (done) return;
      done = true;
      body.destroy();
      decoder.destroy();
      if (err) reject(err);
      else resolve();
    };
    decoder.on('data', (chunk: Buffer) => {
      try {
        if (!take(chunk)) finish();
      } catch (err) {
        finish(err);
      }
    });
    decoder.on('end', () => finish());
    decoder.on('error', (err) => finish(new BodyLimit('en', `cannot decode the ${encoding} body: ${err.message}`)));
    body.on('data', (chunk: Buffer) => {
      rawBytes += chunk.length;
      if (!decoder.write(chunk)) {
        body.pause();
        decoder.once('drain', () => body.resume());
      }
    });
    body.on('end', () => decoder.end());
    body.on('error', (err) => finish(err));
  });
  return { bytes: Buffer.concat(chunks), rawBytes, truncated };
}

/** Maps a transport error to a skip code and an http_errors key. */
export function classifyError(err: unknown, timedOut: boolean): { code: DocSkipCode; errorKey: ErrorKey; connectFailure: boolean; reason: string } {
  const e = err as NodeJS.ErrnoException & { code?: string };
  const code = e?.code ?? '';
  const reason = `${code ? `${code}: ` : ''}${e?.message ?? String(err)}`;
  if (err instanceof BodyLimit) return { code: err.code, errorKey: err.code === 'en' ? 'int' : 'int', connectFailure: false, reason: err.message };
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return { code: 'ct', errorKey: 'ttl', connectFailure: true, reason };
  if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || e?.name === 'TimeoutError') {
    return { code: 'ti', errorKey: 'ttl', connectFailure: false, reason: timedOut ? 'the download took longer than fetch_timeout' : reason };
  }
  if (['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL'].includes(code)) return { code: 'co', errorKey: 'net', connectFailure: true, reason };
  if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' || code === 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH') return { code: 'in', errorKey: 'net', connectFailure: false, reason };
  if (code.startsWith('HPE_') || code === 'UND_ERR_INVALID_ARG' || err instanceof undiciErrors.HTTPParserError) return { code: 'he', errorKey: 'net', connectFailure: false, reason };
  if (['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ETIMEDOUT'].includes(code)) return { code: 'ne', errorKey: 'net', connectFailure: false, reason };
  return { code: 'ot', errorKey: 'int', connectFailure: false, reason };
}

/**
 * One request's abort signal: fires at the fetch timeout or when `parent`
 * (the crawl stopping) does, and lets go of both once the request is over.
 * `AbortSignal.timeout` + `AbortSignal.any` did the same but kept a timer,
 * a signal and the parent's weak reference to it alive for the whole
 * fetch_timeout after each request ended: 41,000 of each in the heap
 * 45 s into the bench crawl (bench/README.md, "What changed").
 */
export function requestSignal(timeoutMs: number, parent: AbortSignal | undefined): { signal: AbortSignal; timedOut: () => boolean; dispose: () => void } {
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort(new DOMException(`the request took longer than ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  const onParentAbort = (): void => ac.abort(parent!.reason);
  if (parent?.aborted) ac.abort(parent.reason);
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: ac.signal,
    timedOut: () => timedOut,
    dispose: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}

export class HttpFetcher {
  private readonly agent: Agent;
  private readonly resolver: SiteResolver;

  constructor(resolver: SiteResolver, opts: { connections?: number; connectTimeoutMs?: number } = {}) {
    this.resolver = resolver;
    // undici asks this for the address of every new connection: it gets the
    // pinned, checked answer, never an unchecked DNS lookup. The answer was
    // pinned when the fetch began; if the resolver has dropped it since (it
    // expired while the request waited for a connection), the host is
    // resolved and checked again.
    const lookup: LookupFunction = (hostname, options, callback) => {
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
      const pinned = this.resolver.pinned(hostname);
      if (pinned) answer(pinned);
      else this.resolver.resolve(hostname).then(answer, (err: unknown) => callback(err as NodeJS.ErrnoException, '', 4));
    };
    this.agent = new Agent({
      connections: opts.connections ?? 8,
      pipelining: 1,
      keepAliveTimeout: 10_000,
      connect: { lookup, timeout: opts.connectTimeoutMs ?? 10_000 },
    });
  }

  async fetch(req: FetchRequest): Promise<FetchOutcome> {
    const started = performance.now();
    const host = req.url.hostname;
    const resolved = await this.resolver.resolve(host);
    const elapsed = (): number => performance.now() - started;
    if (!resolved.ok) {
      return {
        kind: 'failure', code: resolved.dnsError ? 'co' : 'ot', errorKey: 'net', reason: resolved.reason, blocked: !resolved.dnsError,
        connectFailure: resolved.dnsError, bytesIn: 0, bytesOut: 0, durationMs: elapsed(),
      };
    }
    const headers: Record<string, string> = { ...req.headers };
    if (req.acceptCompression && !req.http10) headers['accept-encoding'] = 'gzip, deflate, br';
    else headers['accept-encoding'] = 'identity';
    if (req.http10) headers.connection = 'close';
    if (req.ifNoneMatch) headers['if-none-match'] = req.ifNoneMatch;
    if (req.ifModifiedSince) headers['if-modified-since'] = req.ifModifiedSince;
    if (req.postBody !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const path = req.url.pathname + req.url.search;
    const bytesOut = `${req.postBody !== undefined ? 'POST' : 'GET'} ${path} HTTP/1.1\r\nhost: ${req.url.host}\r\n`.length +
      Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 2) + (req.postBody !== undefined ? Buffer.byteLength(req.postBody) : 0);
    const deadline = requestSignal(req.limits.fetchTimeoutMs, req.signal);
    const signal = deadline.signal;
    let bytesIn = 0;
    const sentKey = onSentKey(req.url.origin, path);
    if (req.onSent) {
      subscribeSent();
      sentWaiters.set(sentKey, req.onSent);
    }
    try {
      const res = await request(req.url, {
        method: req.postBody !== undefined ? 'POST' : 'GET',
        headers,
        ...(req.postBody !== undefined ? { body: req.postBody } : {}),
        dispatcher: this.agent,
        signal,
        headersTimeout: req.limits.fetchTimeoutMs,
        bodyTimeout: req.limits.fetchTimeoutMs,
        maxRedirections: 0,
      } as Parameters<typeof request>[1]);
      const h = headerRecord(res.headers);
      const headerBlock = `HTTP/1.1 ${res.statusCode}\r\n${Object.entries(res.headers).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : v}`).join('\r\n')}\r\n`;
      bytesIn += headerBlock.length;
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      const body = await readBody(res.body, h['content-encoding'], req.limits, ok);
      bytesIn += body.rawBytes;
      return {
        kind: 'response', status: res.statusCode, headers: h, headerBlock, body: body.bytes, truncated: body.truncated, bytesIn, bytesOut,
        durationMs: elapsed(), address: resolved.address,
      };
    } catch (err) {
      if ((err as { code?: string }).code === 'EGRESS_REFUSED' || ((err as { cause?: { code?: string } }).cause?.code === 'EGRESS_REFUSED')) {
        return { kind: 'failure', code: 'ot', errorKey: 'net', reason: (err as Error).message, blocked: true, connectFailure: false, bytesIn, bytesOut: 0, durationMs: elapsed() };
      }
      if (req.signal?.aborted) return { kind: 'failure', code: 'ot', errorKey: 'int', reason: 'aborted: the crawl is stopping', blocked: false, connectFailure: false, bytesIn, bytesOut, durationMs: elapsed() };
      const c = classifyError(err, deadline.timedOut());
      return { kind: 'failure', ...c, blocked: false, bytesIn, bytesOut: c.connectFailure ? 0 : bytesOut, durationMs: elapsed() };
    } finally {
      deadline.dispose();
      sentWaiters.delete(sentKey);
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => this.agent.destroy());
  }
}
