/**
 * The core of the fetcher: one request through undici's dispatcher, bounded
 * in every dimension, turned into a value. This is the one place where
 * transport exceptions become results (`FetchOutcome`); nothing above it
 * catches network errors.
 *
 *   FetchCall ─► undici (connect timeout; fetch_timeout over the whole document;
 *                trawl_limits.socket_timeout, when set, for the headers and between body parts)
 *            ─► onRequestStart: the request is being written: request.onSent()
 *            ─► body: raw bytes counted ─► decompress (gzip/deflate/br, capped)
 *                                       ─► cut_off: truncate or fail ("tl")
 *                                       ─► max_document_bytes: always fail ("tl")
 *            ─► FetchOutcome: response | failure (skip code + http_errors key)
 *
 * What the request carries (method, headers, body, the checked address) the
 * interceptors around it decided (`interceptor.ts`); this file only reads
 * the call.
 */

import { errors as undiciErrors, type Dispatcher } from 'undici';
import { createBrotliDecompress, createGunzip, createInflate, type Gunzip } from 'node:zlib';
import type { DocSkipCode } from '../core/skip-codes.ts';
import type { ErrorKey, FailureOutcome, FetchLimits, FetchOutcome, ResponseHeaders } from './fetch-types.ts';
import type { FetchCall } from './interceptor.ts';

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

/** A header's value, a repeated one's values joined with ", " (RFC 9110 5.3). */
function joinValues(v: string | readonly string[] | undefined): string | undefined {
  return typeof v === 'object' ? v.join(', ') : v;
}

/** The headers by lower-case name (repeated ones joined), and the raw header block as store_http_header keeps it. */
function readHeaders(status: number, raw: ResponseHeaders): { record: Record<string, string>; block: string } {
  const record: Record<string, string> = {};
  let block = `HTTP/1.1 ${status}\r\n`;
  for (const k in raw) {
    const v = raw[k];
    const joined = joinValues(v);
    block += `${k}: ${joined}\r\n`;
    if (joined !== undefined) record[k.toLowerCase()] = joined;
  }
  return { record, block };
}

/**
 * Bytes of the request as sent: the request line, the Host line, the header
 * lines ("name: value\r\n"), the blank line after them and the body
 * (undici's own Connection line is not counted).
 */
function requestBytes(call: FetchCall): number {
  // "GET /path HTTP/1.1\r\nhost: example.com\r\n" is 20 bytes besides the method, target and host.
  let n = call.method.length + call.path.length + call.request.url.host.length + 20 + 2;
  const headers = call.headers;
  for (const k in headers) n += k.length + headers[k]!.length + 4;
  return call.body !== undefined ? n + Buffer.byteLength(call.body) : n;
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

/**
 * One request through undici's dispatcher with a handler of trawl's own:
 * the body's chunks are taken as the parser hands them over, with every
 * limit applied on the way, and the request's own timer and stop listener
 * abort it (no Readable body stream, async iterator or AbortSignal per
 * request: bench/README.md, *What changed*, 6d4d483). It settles once, with the
 * outcome, response or failure; it never rejects.
 *
 * Decompression runs as a stream so a gzip bomb is stopped at
 * `maxDecompressedBytes` without inflating it; while the decoder is full,
 * the socket is paused. An abandoned body (cut_off, an error) aborts the
 * request, which closes its connection: the server stops sending.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private readonly call: FetchCall;
  private readonly limits: FetchLimits;
  private readonly resolve: (outcome: FetchOutcome) => void;
  private readonly parent: AbortSignal | undefined;
  private readonly timer: NodeJS.Timeout;
  private controller: Dispatcher.DispatchController | undefined;
  /** Why the request was given up before undici handed over its controller. */
  private reason: Error | undefined;
  private settled = false;
  /** The whole response is in: nothing is left to abort. */
  private complete = false;
  private timedOut = false;

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

  /** Answered already (the crawl was stopping before the request was made): nothing to dispatch. */
  get done(): boolean {
    return this.settled;
  }

  constructor(call: FetchCall, resolve: (outcome: FetchOutcome) => void) {
    const limits = call.request.limits;
    const parent = call.request.signal;
    this.call = call;
    this.limits = limits;
    this.maxBytes = limits.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
    this.resolve = resolve;
    this.parent = parent;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.fail(new DOMException(`the request took longer than ${limits.fetchTimeoutMs} ms`, 'TimeoutError'));
    }, limits.fetchTimeoutMs);
    if (parent?.aborted) this.fail(parent.reason as Error);
    else parent?.addEventListener('abort', this.onStop);
  }

  private readonly onStop = (): void => this.fail(this.parent!.reason as Error);

  /**
   * undici calls this when the request is on a connection and about to be
   * written, in the same synchronous run that writes its headers (client-h1
   * `writeH1`): the moment the request leaves, from which the scheduler
   * spaces the next one. A request already given up is aborted here instead
   * and never sent.
   */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.reason) controller.abort(this.reason);
    else this.call.request.onSent?.();
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
    this.encoding = joinValues(enc);
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
    // An Error only for a body given up part way: capturing a stack trace
    // for every page is a cost the main thread cannot afford (bench/README.md, *What changed*, 5f2ed51).
    this.end(this.complete ? undefined : new Error('the rest of the body is not read'));
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    const { record, block } = readHeaders(this.status, this.headers);
    const call = this.call;
    this.resolve({
      kind: 'response', status: this.status, headers: record, rawHeaders: this.headers, headerBlock: block, body, truncated: this.truncated,
      bytesIn: block.length + this.rawBytes, bytesOut: requestBytes(call), durationMs: performance.now() - call.startedMs, address: call.address,
    });
  }

  /** Gives the exchange up with `err`, which becomes its failure outcome. */
  fail(err: Error): void {
    if (this.settled) return;
    this.end(err);
    this.resolve(this.failure(err));
  }

  private failure(err: Error): FailureOutcome {
    const bytesIn = this.rawBytes;
    const durationMs = performance.now() - this.call.startedMs;
    // The connect-time lookup refused the address (pinnedLookup): nothing was sent.
    if ((err as { code?: string }).code === 'EGRESS_REFUSED' || ((err as { cause?: { code?: string } }).cause?.code === 'EGRESS_REFUSED')) {
      return { kind: 'failure', code: 'ot', errorKey: 'net', reason: err.message, blocked: true, connectFailure: false, bytesIn, bytesOut: 0, durationMs };
    }
    const bytesOut = requestBytes(this.call);
    if (this.parent?.aborted) return { kind: 'failure', code: 'ot', errorKey: 'int', reason: 'aborted: the crawl is stopping', blocked: false, connectFailure: false, bytesIn, bytesOut, durationMs };
    const c = classifyError(err, this.timedOut);
    return { kind: 'failure', ...c, blocked: false, bytesIn, bytesOut: c.connectFailure ? 0 : bytesOut, durationMs };
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

/**
 * The core handler: sends the call through `call.dispatcher` and answers
 * with its outcome once the body is read under every limit, or with the
 * failure it came to. Never rejects.
 */
export function boundedExchange(call: FetchCall): Promise<FetchOutcome> {
  return new Promise<FetchOutcome>((resolve) => {
    const exchange = new Exchange(call, resolve);
    // Answered already: the crawl was stopping before the request was made.
    if (exchange.done) return;
    const limits = call.request.limits;
    const timeoutMs = limits.socketTimeoutMs !== undefined ? Math.min(limits.socketTimeoutMs, limits.fetchTimeoutMs) : limits.fetchTimeoutMs;
    try {
      call.dispatcher.dispatch({
        origin: call.request.url.origin, path: call.path, method: call.method, headers: call.headers, body: call.body,
        headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
      }, exchange);
    } catch (err) {
      exchange.fail(err as Error);
    }
  });
}
