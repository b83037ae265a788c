/**
 * The HTTP fetcher: one GET, bounded in every dimension, turned into a
 * value. This file is the one boundary where transport exceptions become
 * results (`FetchOutcome`); nothing above it catches network errors.
 *
 *   request ─► egress (pinned DNS, address policy)
 *           ─► undici (connect timeout; fetch_timeout over the whole document)
 *           ─► body: raw bytes counted ─► decompress (gzip/deflate/br, capped)
 *                                      ─► cut_off: truncate or fail ("tl")
 *                                      ─► max_document_bytes: always fail ("tl")
 *           ─► FetchOutcome: response | failure (skip code + http_errors key)
 *
 * Redirects are not followed here: the engine queues the target as a new
 * URI so it is scoped, checked against robots.txt and paced like any other.
 */

import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
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

/** The bound on every body when the caller names none (trawl_limits.max_document_bytes' default). */
export const DEFAULT_MAX_DOCUMENT_BYTES = 100 * 1024 * 1024;

/**
 * The bytes every body in flight in this process holds together, at most
 * (bodies held whole until their response ends). Each body is bounded by
 * its own max_document_bytes; this bounds their sum, whatever many servers
 * send at once. Over it, the body holding the most is abandoned ("tl"):
 * the small pages beside a hostile one go on.
 */
export const BODY_MEMORY_BUDGET_BYTES = 256 * 1024 * 1024;
let bodyBudgetBytes = BODY_MEMORY_BUDGET_BYTES;

/** Sets the process-wide body budget (tests, embedders); returns the one it replaces. */
export function setBodyMemoryBudget(bytes: number): number {
  const before = bodyBudgetBytes;
  bodyBudgetBytes = bytes;
  return before;
}

/** Bodies in flight and the bytes they hold (process-wide: one crawl or many collections of a daemon). */
const holding = new Set<Exchange>();
let heldBytes = 0;

class BodyLimit extends Error {
  readonly code: DocSkipCode;
  constructor(code: DocSkipCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Response headers as undici parses them: lower-case names, repeated ones as arrays. */
type ResponseHeaders = Record<string, string | string[] | undefined>;

/** The headers by lower-case name (repeated ones joined), and the raw header block as store_http_header keeps it. */
function readHeaders(status: number, raw: ResponseHeaders): { record: Record<string, string>; block: string } {
  const record: Record<string, string> = {};
  let block = `HTTP/1.1 ${status}\r\n`;
  for (const k in raw) {
    const v = raw[k];
    const joined = Array.isArray(v) ? v.join(', ') : v;
    block += `${k}: ${joined}\r\n`;
    if (joined !== undefined) record[k.toLowerCase()] = joined;
  }
  return { record, block };
}

/** Bytes of the request's header lines ("name: value\r\n") and the blank line after them. */
function headerBytes(headers: Record<string, string>): number {
  let n = 2;
  for (const k in headers) n += k.length + headers[k]!.length + 4;
  return n;
}

type Decoder = Gunzip | ReturnType<typeof createInflate> | ReturnType<typeof createBrotliDecompress>;

function decoderFor(encoding: string | undefined): Decoder | undefined | 'unsupported' {
  const e = (encoding ?? '').trim().toLowerCase();
  if (e === '' || e === 'identity') return undefined;
  if (e === 'gzip' || e === 'x-gzip') return createGunzip();
  if (e === 'deflate') return createInflate();
  if (e === 'br') return createBrotliDecompress();
  return 'unsupported';
}

/** What a response came to: its status and headers, and its body read under every limit. */
interface Exchanged {
  readonly status: number;
  readonly headers: ResponseHeaders;
  readonly bytes: Uint8Array;
  /** Bytes of body on the wire (before decoding). */
  readonly rawBytes: number;
  readonly truncated: boolean;
}

/**
 * One request through undici's dispatcher with a handler of trawl's own:
 * the body's chunks are taken as the parser hands them over, with every
 * limit applied on the way, and the request's own timer and stop listener
 * abort it. `request()` did the same through a Readable body stream, its
 * async iterator and an AbortSignal per request: 0.066 → 0.038 CPU ms per
 * page in `bench/fetch-floor.ts` (bench/README.md, *What changed*).
 *
 * Decompression runs as a stream so a gzip bomb is stopped at
 * `maxDecompressedBytes` without inflating it; while the decoder is full,
 * the socket is paused. An abandoned body (cut_off, an error) aborts the
 * request, which closes its connection: the server stops sending.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private readonly limits: FetchLimits;
  private readonly resolve: (x: Exchanged) => void;
  private readonly reject: (err: unknown) => void;
  private readonly parent: AbortSignal | undefined;
  private readonly timer: NodeJS.Timeout;
  private controller: Dispatcher.DispatchController | undefined;
  /** Why the request was given up before undici handed over its controller. */
  private reason: Error | undefined;
  private settled = false;
  /** The whole response is in: nothing is left to abort. */
  private complete = false;
  timedOut = false;

  private status = 0;
  private headers: ResponseHeaders = {};
  private decoder: Decoder | undefined;
  private encoding: string | undefined;
  /** Largest body kept: cut_off for a 2xx answer, maxErrorBodyBytes for the rest. */
  private cap: number | undefined;
  /** max_document_bytes: past it the body is given up, truncate or not. */
  private readonly maxBytes: number;
  private readAll = false;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  /** Bytes of this body in heldBytes (a truncated last piece is not counted: it ends the read). */
  private counted = 0;
  private rawBytes = 0;
  private truncated = false;

  /** Body bytes received so far, on the wire. */
  get bytesRead(): number {
    return this.rawBytes;
  }

  /** Answered already (the crawl was stopping before the request was made): nothing to dispatch. */
  get done(): boolean {
    return this.settled;
  }

  constructor(limits: FetchLimits, parent: AbortSignal | undefined, resolve: (x: Exchanged) => void, reject: (err: unknown) => void) {
    this.limits = limits;
    this.maxBytes = limits.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
    this.resolve = resolve;
    this.reject = reject;
    this.parent = parent;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.fail(new DOMException(`the request took longer than ${limits.fetchTimeoutMs} ms`, 'TimeoutError'));
    }, limits.fetchTimeoutMs);
    if (parent?.aborted) this.fail(parent.reason as Error);
    else parent?.addEventListener('abort', this.onStop);
  }

  private readonly onStop = (): void => this.fail(this.parent!.reason as Error);

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.reason) controller.abort(this.reason);
  }

  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: ResponseHeaders): void {
    if (this.settled) return;
    this.status = status;
    this.headers = headers;
    this.readAll = status >= 200 && status < 300;
    this.cap = this.readAll ? this.limits.cutOffBytes : (this.limits.maxErrorBodyBytes ?? 65536);
    if (!this.readAll) return;
    // A declared length past the bound fails before a byte of the body is read,
    // unless cut_off with truncate keeps a prefix below it.
    const declared = Number(headers['content-length']);
    const keepsPrefix = this.limits.truncate && this.cap !== undefined && this.cap <= this.maxBytes;
    if (declared > this.maxBytes && !keepsPrefix) return this.fail(this.tooLarge());
    const enc = headers['content-encoding'];
    this.encoding = Array.isArray(enc) ? enc.join(', ') : enc;
    const decoder = decoderFor(this.encoding);
    if (decoder === 'unsupported') return this.fail(new BodyLimit('en', `unsupported Content-Encoding "${this.encoding}"`));
    if (!decoder) return;
    this.decoder = decoder;
    decoder.on('data', (chunk: Buffer) => {
      try {
        if (!this.take(chunk)) this.finish();
      } catch (err) {
        this.fail(err as Error);
      }
    });
    decoder.on('end', () => this.finish());
    decoder.on('error', (err) => this.fail(new BodyLimit('en', `cannot decode the ${this.encoding} body: ${err.message}`)));
    decoder.on('drain', () => this.controller?.resume());
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.rawBytes += chunk.length;
    if (this.decoder) {
      // A body that decodes to little (brotli metadata blocks) is still bounded on the wire.
      if (this.rawBytes > this.maxBytes) return this.fail(this.tooLarge());
      // A full decoder pauses the socket until it drains.
      if (!this.decoder.write(chunk)) controller.pause();
      return;
    }
    try {
      if (!this.take(chunk)) this.finish();
    } catch (err) {
      this.fail(err as Error);
    }
  }

  onResponseEnd(): void {
    this.complete = true;
    if (this.decoder && !this.settled) this.decoder.end();
    else this.finish();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }

  /** Keeps a decoded chunk; false once enough has been read. */
  private take(chunk: Buffer): boolean {
    const { limits, cap } = this;
    if (this.decoder && this.size + chunk.length > limits.maxDecompressedBytes) {
      throw new BodyLimit('tl', `the body inflates past ${limits.maxDecompressedBytes} bytes (trawl_limits.max_decompressed_bytes)`);
    }
    if (cap !== undefined && this.size + chunk.length > cap) {
      if (this.readAll && !limits.truncate) throw new BodyLimit('tl', `the document is larger than ${limits.cutOffName ?? 'cut_off'} (${cap} bytes)`);
      this.chunks.push(chunk.subarray(0, cap - this.size));
      this.size = cap;
      this.truncated = this.readAll;
      return false;
    }
    if (this.size + chunk.length > this.maxBytes) throw this.tooLarge();
    this.chunks.push(chunk);
    this.size += chunk.length;
    this.counted += chunk.length;
    if (this.counted === chunk.length) holding.add(this);
    heldBytes += chunk.length;
    if (heldBytes > Math.max(bodyBudgetBytes, this.maxBytes)) this.overBudget();
    return true;
  }

  /** The bodies in flight hold more than the budget: the largest is given up (perhaps this one, which then throws). */
  private overBudget(): void {
    // This exchange is in `holding`: the loop finds it if it holds the most.
    let largest: Exchange | undefined;
    for (const x of holding) if (largest === undefined || x.counted > largest.counted) largest = x;
    if (largest === undefined) return;
    const err = new BodyLimit('tl', `the bodies in flight hold more than ${Math.max(bodyBudgetBytes, this.maxBytes)} bytes together; this one, the largest at ${largest.counted} bytes, is not read further`);
    if (largest === this) throw err;
    largest.fail(err);
  }

  /** Gives back what this body held to the process-wide count. */
  private releaseHeld(): void {
    if (!holding.delete(this)) return;
    heldBytes -= this.counted;
  }

  private tooLarge(): BodyLimit {
    return new BodyLimit('tl', `the body is larger than ${this.maxBytes} bytes (trawl_limits.max_document_bytes); the rest is not read`);
  }

  /** The body is complete, or enough of it was read: the rest of the response is dropped with its connection. */
  private finish(): void {
    if (this.settled) return;
    // An Error only for a body given up part way: made for every page, its
    // stack trace was 5% of the main thread's CPU (perf, bench/README.md).
    this.end(this.complete ? undefined : new Error('the rest of the body is not read'));
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    this.resolve({ status: this.status, headers: this.headers, bytes, rawBytes: this.rawBytes, truncated: this.truncated });
  }

  private fail(err: Error): void {
    if (this.settled) return;
    this.end(err);
    this.reject(err);
  }

  /** Settles the exchange; with a reason, a request still running is aborted. */
  private end(reason: Error | undefined): void {
    this.settled = true;
    // Resolved bodies are handed over (no longer this exchange's to count); failed ones are dropped.
    this.releaseHeld();
    clearTimeout(this.timer);
    this.parent?.removeEventListener('abort', this.onStop);
    this.decoder?.destroy();
    if (reason === undefined) return;
    // A request still receiving loses its connection; one not yet started never starts.
    if (this.controller) this.controller.abort(reason);
    else this.reason = reason;
  }
}

/** Maps a transport error to a skip code and an http_errors key. */
export function classifyError(err: unknown, timedOut: boolean): { code: DocSkipCode; errorKey: ErrorKey; connectFailure: boolean; reason: string } {
  const e = err as NodeJS.ErrnoException & { code?: string };
  const code = e?.code ?? '';
  const reason = `${code ? `${code}: ` : ''}${e?.message ?? String(err)}`;
  if (err instanceof BodyLimit) return { code: err.code, errorKey: 'int', connectFailure: false, reason: err.message };
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
      headerBytes(headers) + (req.postBody !== undefined ? Buffer.byteLength(req.postBody) : 0);
    let bytesIn = 0;
    const sentKey = onSentKey(req.url.origin, path);
    if (req.onSent) {
      subscribeSent();
      sentWaiters.set(sentKey, req.onSent);
    }
    let exchange: Exchange | undefined;
    try {
      const res = await new Promise<Exchanged>((resolve, reject) => {
        exchange = new Exchange(req.limits, req.signal, resolve, reject);
        if (exchange.done) return;
        this.agent.dispatch({
          origin: req.url.origin,
          path,
          method: req.postBody !== undefined ? 'POST' : 'GET',
          headers,
          ...(req.postBody !== undefined ? { body: req.postBody } : {}),
          headersTimeout: req.limits.fetchTimeoutMs,
          bodyTimeout: req.limits.fetchTimeoutMs,
        }, exchange);
      });
      const { record: h, block: headerBlock } = readHeaders(res.status, res.headers);
      bytesIn += headerBlock.length + res.rawBytes;
      return {
        kind: 'response', status: res.status, headers: h, headerBlock, body: res.bytes, truncated: res.truncated, bytesIn, bytesOut,
        durationMs: elapsed(), address: resolved.address,
      };
    } catch (err) {
      bytesIn += exchange?.bytesRead ?? 0;
      if ((err as { code?: string }).code === 'EGRESS_REFUSED' || ((err as { cause?: { code?: string } }).cause?.code === 'EGRESS_REFUSED')) {
        return { kind: 'failure', code: 'ot', errorKey: 'net', reason: (err as Error).message, blocked: true, connectFailure: false, bytesIn, bytesOut: 0, durationMs: elapsed() };
      }
      if (req.signal?.aborted) return { kind: 'failure', code: 'ot', errorKey: 'int', reason: 'aborted: the crawl is stopping', blocked: false, connectFailure: false, bytesIn, bytesOut, durationMs: elapsed() };
      const c = classifyError(err, exchange?.timedOut ?? false);
      return { kind: 'failure', ...c, blocked: false, bytesIn, bytesOut: c.connectFailure ? 0 : bytesOut, durationMs: elapsed() };
    } finally {
      sentWaiters.delete(sentKey);
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => this.agent.destroy());
  }
}
