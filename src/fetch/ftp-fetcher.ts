/**
 * The FTP fetcher: one `ftp://` URI, fetched with basic-ftp (the FTP
 * client; this file drives it and bounds it) and turned into the same
 * `FetchOutcome` values the HTTP fetcher gives, so that the page pipeline
 * handles both alike.
 *
 *   fetch(request) ─► the site's session (one control connection per site at a time; reused, closed when idle)
 *                  ─► connect to the pinned, checked address ─► log in (ftp_acct, else anonymous)
 *                  ─► path ends with "/": CWD + LIST ─► an HTML page of links (ftp-listing.ts)
 *                     else SIZE (limits before a byte) + MDTM (Last-Modified, 304) ─► RETR, bounded
 *                  ─► ResponseOutcome (status from the table below, ftpCode = the FTP reply) | FailureOutcome
 *
 * FTP replies → status (ResponseOutcome.status; ftp_errors is applied to `ftpCode`, the FTP reply itself):
 *
 *   | FTP                                | status | why                                             |
 *   |------------------------------------|--------|-------------------------------------------------|
 *   | 226 file or listing transferred    | 200    | the document                                    |
 *   | CWD succeeds on a path without "/" | 301    | a directory: Location is the path with "/"      |
 *   | MDTM equals the stored date        | 304    | unchanged (if_modified_since)                   |
 *   | 530 at login, anonymous            | 401    | the site needs an account (ftp_acct)            |
 *   | 530 at login, ftp_acct's account   | 403    | the account was refused                         |
 *   | 530 after login                    | 403    | not allowed for this account                    |
 *   | 550 (and 551)                      | 404    | no such file, or not accessible                 |
 *   | 501, 553 (a name not allowed)      | 400    |                                                 |
 *   | other 4yz (421, 425, 426, 450–452) | 503    | transient                                       |
 *   | other 5yz                          | 500    |                                                 |
 *
 * Data connections: passive (ftp_passive, the default) sends PASV (EPSV on
 * IPv6) and connects only to the address of the control connection, which
 * the egress policy has already allowed: a PASV reply that names another
 * address (an FTP bounce, or a server pointing the crawler elsewhere) is
 * refused (a "blocked" failure). Active mode listens on the control
 * connection's local address, sends PORT (EPRT on IPv6) and accepts a data
 * connection only from the server's address.
 *
 * Limits, as for HTTP: a SIZE past max_document_bytes (or past cut_off
 * without truncate) fails before a byte is read; the body stops at
 * cut_off (truncate) or fails past it, and fails past max_document_bytes;
 * fetch_timeout bounds the whole fetch (the wait for the site's
 * connection included); a transfer cut short closes the control
 * connection, and the site's next fetch logs in again.
 */

import { createServer, isIPv6, Socket, type Server } from 'node:net';
import { Writable } from 'node:stream';
import { Client, FTPError, type FTPContext, type FTPResponse } from 'basic-ftp';
import { connectForPassiveTransfer, parseEpsvResponse, parsePasvResponse } from 'basic-ftp/dist/transfer.js';
import { DEFAULT_MAX_DOCUMENT_BYTES } from './bounded-exchange.ts';
import type { EgressChecker, SiteResolver } from './egress.ts';
import type { FailureOutcome, FetchLimits, FetchOutcome, ResponseOutcome } from './fetch-types.ts';
import { listingHtml, mimeFromExtension } from './ftp-listing.ts';
import { bodyBytesIn, type FetchObserver } from './interceptors/measure.ts';

/** The most body bytes of one document when the limits name none: the HTTP fetcher's. */
const DEFAULT_MAX_BYTES = DEFAULT_MAX_DOCUMENT_BYTES;
/** How long a site's control connection stays open with nothing to fetch. */
export const FTP_IDLE_MS = 5000;
/** The password sent when logging in as anonymous. */
const ANONYMOUS_PASSWORD = 'trawl@';

export interface FtpFetchRequest {
  readonly url: URL;
  readonly limits: FetchLimits;
  /** ftp_passive: PASV (or EPSV); otherwise PORT (or EPRT). */
  readonly passive: boolean;
  /** The stored Last-Modified (from MDTM): the same date again is answered 304 without a transfer. */
  readonly ifModifiedSince?: string;
  readonly signal?: AbortSignal;
  /** Called as the fetch's first command is sent on the control connection (politeness counts from there). */
  readonly onSent?: () => void;
}

export interface FtpAccount {
  readonly user: string;
  readonly password: string;
}

export interface FtpFetcherOptions {
  /**
   * The account for a host (ftp_acct, by site name), the password revealed
   * (!ENC! decrypted) only when it is used; undefined: anonymous. May throw
   * (a password that does not decrypt): the fetch fails with the message.
   */
  readonly account: (host: string) => FtpAccount | undefined;
  readonly connectTimeoutMs?: number;
  readonly idleMs?: number;
  /** The most bytes of a raw directory listing read (trawl_limits.max_document_bytes); more fails with "tl". */
  readonly maxListingBytes?: number;
  /** Each fetch's duration and body bytes (the daemon's /metrics), as the HTTP fetcher's measureFetch tells them. */
  readonly observer?: FetchObserver | undefined;
}

/** A refused data address (PASV elsewhere, or one the egress policy refuses). */
class DataAddressRefused extends Error {}

/** A body past its bound: the transfer is stopped. */
class BodyTooLarge extends Error {}

interface Session {
  client: Client | undefined;
  /** The fetches of this site, one after another. */
  tail: Promise<unknown>;
  idle: NodeJS.Timeout | undefined;
  /** The account the client logged in with (undefined: anonymous). */
  account: FtpAccount | undefined;
  /** An active-mode listener waiting for the server's data connection. */
  listener: Server | undefined;
}

/** The status a reply code stands for (the table above). */
export function statusOfReply(code: number, phase: 'login' | 'command', account: boolean): number {
  if (code === 530) return phase === 'login' && !account ? 401 : 403;
  if (code === 550 || code === 551) return 404;
  if (code === 501 || code === 553) return 400;
  if (code >= 400 && code < 500) return 503;
  return 500;
}

const normalizeAddress = (a: string | undefined): string => (a ?? '').replace(/^::ffff:/i, '');

/** A collecting stream with the fetch's bounds. */
class BoundedBody extends Writable {
  readonly chunks: Buffer[] = [];
  size = 0;
  truncated = false;
  tooLarge: string | undefined;
  private readonly cap: number | undefined;
  private readonly truncate: boolean;
  private readonly maxBytes: number;
  private readonly cutOffName: string;
  private readonly stop: () => void;

  constructor(limits: FetchLimits, stop: () => void) {
    super();
    this.cap = limits.cutOffBytes;
    this.truncate = limits.truncate;
    this.maxBytes = limits.maxDocumentBytes ?? DEFAULT_MAX_BYTES;
    this.cutOffName = limits.cutOffName ?? 'cut_off';
    this.stop = stop;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.truncated || this.tooLarge !== undefined) return done();
    const { cap } = this;
    if (cap !== undefined && this.size + chunk.length > cap && (this.truncate || cap < this.maxBytes)) {
      if (!this.truncate) {
        this.tooLarge = `the document is larger than ${this.cutOffName} (${cap} bytes)`;
      } else {
        this.chunks.push(chunk.subarray(0, cap - this.size));
        this.size = cap;
        this.truncated = true;
      }
      done();
      this.stop();
      return;
    }
    if (this.size + chunk.length > this.maxBytes) {
      this.tooLarge = `the body is larger than ${this.maxBytes} bytes (trawl_limits.max_document_bytes); the rest is not read`;
      done();
      this.stop();
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    done();
  }

  body(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
  }
}

export class FtpFetcher {
  private readonly sessions = new Map<string, Session>();
  private readonly resolver: SiteResolver;
  private readonly checker: EgressChecker;
  private readonly opts: FtpFetcherOptions;
  private closed = false;

  constructor(resolver: SiteResolver, checker: EgressChecker, opts: FtpFetcherOptions) {
    this.resolver = resolver;
    this.checker = checker;
    this.opts = opts;
  }

  /** Sessions open now (control connections, or sites with a fetch under way). */
  get openSessions(): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.client && !s.client.closed) n++;
    return n;
  }

  /** Fetches once; never rejects. The fetches of one site wait for each other: one control connection per site. */
  fetch(req: FtpFetchRequest): Promise<FetchOutcome> {
    const startedMs = performance.now();
    const key = `${req.url.hostname}:${req.url.port || '21'}`;
    let s = this.sessions.get(key);
    if (!s) this.sessions.set(key, (s = { client: undefined, tail: Promise.resolve(), idle: undefined, account: undefined, listener: undefined }));
    const session = s;
    if (session.idle) clearTimeout(session.idle);
    session.idle = undefined;
    const run = session.tail.then(() => this.fetchIn(session, key, req, startedMs));
    session.tail = run.then(() => this.idleLater(session, key), () => this.idleLater(session, key));
    const outcome = run.catch((err: unknown) => failure('ot', 'int', `internal error: ${(err as Error).message}`, startedMs));
    const observer = this.opts.observer;
    if (!observer) return outcome;
    return outcome.then((o) => {
      observer.addBytes(bodyBytesIn(o));
      if (req.signal?.aborted !== true) observer.observe(o.durationMs / 1000);
      return o;
    });
  }

  /** Closes every control connection. */
  async close(): Promise<void> {
    this.closed = true;
    const tails = [...this.sessions.values()].map((s) => s.tail);
    await Promise.allSettled(tails);
    for (const s of this.sessions.values()) this.end(s);
    this.sessions.clear();
  }

  private idleLater(session: Session, key: string): void {
    if (this.closed) return this.end(session);
    if (session.idle) clearTimeout(session.idle);
    session.idle = setTimeout(() => {
      if (this.sessions.get(key) !== session) return;
      this.end(session);
      this.sessions.delete(key);
    }, this.opts.idleMs ?? FTP_IDLE_MS);
    session.idle.unref();
  }

  private end(session: Session): void {
    if (session.idle) clearTimeout(session.idle);
    session.idle = undefined;
    session.listener?.close();
    session.listener = undefined;
    if (session.client && !session.client.closed) {
      // QUIT politely; the socket is closed either way.
      const c = session.client;
      c.send('QUIT').catch(() => undefined).finally(() => c.close());
    }
    session.client = undefined;
  }

  private async fetchIn(session: Session, key: string, req: FtpFetchRequest, startedMs: number): Promise<FetchOutcome> {
    const { url, limits } = req;
    if (req.signal?.aborted) return failure('ot', 'int', 'aborted: the crawl is stopping', startedMs);
    let path: string;
    try {
      path = decodeURIComponent(url.pathname || '/');
    } catch {
      return failure('ot', 'int', `the path of ${url.href} is not valid percent-encoded UTF-8`, startedMs);
    }
    // A line break or NUL would end the FTP command and start another.
    if (/[\r\n\0]/.test(path)) return failure('ot', 'int', 'the path holds a line break or NUL, which FTP commands cannot carry', startedMs);
    let account: FtpAccount | undefined;
    try {
      account = this.opts.account(url.hostname);
    } catch (err) {
      return failure('ot', 'int', `ftp_acct for ${url.hostname}: ${(err as Error).message}`, startedMs);
    }

    // fetch_timeout counts from the call: the wait for the site's connection is part of it.
    const leftMs = limits.fetchTimeoutMs - (performance.now() - startedMs);
    if (leftMs <= 0) return failure('ti', 'ttl', `the download took longer than fetch_timeout (${limits.fetchTimeoutMs} ms), waiting for the site's connection`, startedMs);
    let timedOut = false;
    let stopped = false;
    let phase: 'connect' | 'login' | 'command' = 'command';
    const timer = setTimeout(() => {
      timedOut = true;
      session.client?.close();
    }, leftMs);
    const onStop = (): void => {
      stopped = true;
      session.client?.close();
    };
    req.signal?.addEventListener('abort', onStop);
    let sent = false;
    const markSent = (): void => {
      if (sent) return;
      sent = true;
      req.onSent?.();
    };
    try {
      // A new account for the host (the configuration changed) or a closed connection: log in again.
      if (session.client && (session.client.closed || session.account !== account)) this.end(session);
      if (!session.client) {
        const resolved = this.resolver.current(url.hostname) ?? (await this.resolver.resolve(url.hostname));
        if (!resolved.ok) {
          return { kind: 'failure', code: resolved.dnsError ? 'co' : 'ot', errorKey: 'net', reason: resolved.reason, blocked: !resolved.dnsError, connectFailure: resolved.dnsError, bytesIn: 0, bytesOut: 0, durationMs: performance.now() - startedMs };
        }
        const client = new Client(this.opts.connectTimeoutMs ?? 10_000, { maxListingBytes: this.opts.maxListingBytes ?? DEFAULT_MAX_BYTES });
        session.client = client;
        session.account = account;
        phase = 'connect';
        markSent();
        await client.connect(resolved.address, Number(url.port || 21));
        phase = 'login';
        // A refused login ends the session below: the next fetch of the site tries again.
        await client.login(account?.user ?? 'anonymous', account?.password ?? ANONYMOUS_PASSWORD);
        await client.useDefaultSettings();
      }
      const client = session.client;
      phase = 'command';
      markSent();
      client.prepareTransfer = req.passive ? (ftp) => this.passive(ftp) : (ftp) => this.active(ftp, session);
      const address = normalizeAddress(client.ftp.socket.remoteAddress);
      if (path.endsWith('/')) return await this.listing(client, path, req, address, startedMs, session);
      return await this.file(client, path, req, address, startedMs, session, () => session.client?.close());
    } catch (err) {
      session.listener?.close();
      session.listener = undefined;
      if (err instanceof FTPError) {
        // A reply the server gave: the connection is still good for the next fetch, unless the
        // reply came before the session was ready (a refused greeting or login): then it is ended.
        const address = session.client ? normalizeAddress(session.client.ftp.socket.remoteAddress) : undefined;
        if (phase !== 'command') this.end(session);
        return response(statusOfReply(err.code, phase === 'command' ? 'command' : 'login', account !== undefined), err.code, `${err.code} ${err.message.replace(/^\d{3}[ -]/, '')}`, {}, Buffer.alloc(0), false, startedMs, address);
      }
      this.end(session);
      if (stopped) return failure('ot', 'int', 'aborted: the crawl is stopping', startedMs);
      if (timedOut) return failure('ti', 'ttl', `the download took longer than fetch_timeout (${limits.fetchTimeoutMs} ms)`, startedMs);
      if (err instanceof DataAddressRefused) return { ...failure('ot', 'net', err.message, startedMs), blocked: true };
      if (err instanceof BodyTooLarge) return failure('tl', 'int', err.message, startedMs);
      const code = (err as NodeJS.ErrnoException).code ?? '';
      const message = (err as Error).message;
      if (phase === 'connect') {
        if (/timeout/i.test(message)) return { ...failure('ct', 'ttl', message, startedMs), connectFailure: true };
        return { ...failure('co', 'net', message, startedMs), connectFailure: true };
      }
      if (/Maximum bytes exceeded/.test(message)) return failure('tl', 'int', `the listing is larger than ${this.opts.maxListingBytes ?? DEFAULT_MAX_BYTES} bytes (trawl_limits.max_document_bytes)`, startedMs);
      if (/timeout/i.test(message)) return failure('ti', 'ttl', message, startedMs);
      if (['ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code) || /closed|FIN/i.test(message)) return failure('ne', 'net', message, startedMs);
      return failure('ot', 'int', message, startedMs);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onStop);
    }
  }

  private async listing(client: Client, path: string, req: FtpFetchRequest, address: string, startedMs: number, session: Session): Promise<FetchOutcome> {
    await client.cd(path);
    let entries;
    try {
      entries = await client.list();
    } finally {
      session.listener?.close();
      session.listener = undefined;
    }
    const html = Buffer.from(listingHtml(path, entries), 'utf8');
    const limits = req.limits;
    const max = limits.maxDocumentBytes ?? DEFAULT_MAX_BYTES;
    if (html.length > max) throw new BodyTooLarge(`the listing is larger than ${max} bytes (trawl_limits.max_document_bytes)`);
    let body = html;
    let truncated = false;
    if (limits.cutOffBytes !== undefined && html.length > limits.cutOffBytes) {
      if (!limits.truncate) throw new BodyTooLarge(`the listing is larger than ${limits.cutOffName ?? 'cut_off'} (${limits.cutOffBytes} bytes)`);
      body = html.subarray(0, limits.cutOffBytes);
      truncated = true;
    }
    return response(200, 226, `226 listing of ${entries.length} entries`, { 'content-type': 'text/html; charset=utf-8' }, body, truncated, startedMs, address);
  }

  private async file(client: Client, path: string, req: FtpFetchRequest, address: string, startedMs: number, session: Session, stop: () => void): Promise<FetchOutcome> {
    const limits = req.limits;
    let size: number | undefined;
    try {
      size = await client.size(path);
    } catch (err) {
      if (!(err instanceof FTPError)) throw err;
      if (err.code === 550) {
        // Not a file: a directory answers CWD, and is its "/" form. Otherwise RETR decides
        // (some servers refuse SIZE for files they would send): a missing file is its 550.
        const isDir = await client.cd(path).then(() => true, (e: unknown) => {
          if (e instanceof FTPError) return false;
          throw e;
        });
        if (isDir) {
          const location = new URL(req.url.href);
          location.pathname += '/';
          return response(301, 250, `250 ${path} is a directory`, { location: location.href }, Buffer.alloc(0), false, startedMs, address);
        }
      }
      // A server without SIZE (reply 502) or that refuses it in this mode: the limits apply as the body comes.
    }
    const max = limits.maxDocumentBytes ?? DEFAULT_MAX_BYTES;
    if (size !== undefined) {
      const keepsPrefix = limits.truncate && limits.cutOffBytes !== undefined && limits.cutOffBytes <= max;
      if (size > max && !keepsPrefix) throw new BodyTooLarge(`the file is ${size} bytes, larger than ${max} bytes (trawl_limits.max_document_bytes)`);
      if (limits.cutOffBytes !== undefined && size > limits.cutOffBytes && !limits.truncate) throw new BodyTooLarge(`the document is larger than ${limits.cutOffName ?? 'cut_off'} (${limits.cutOffBytes} bytes)`);
    }
    let lastModified: string | undefined;
    try {
      lastModified = (await client.lastMod(path)).toUTCString();
    } catch (err) {
      if (!(err instanceof FTPError)) throw err;
    }
    const headers: Record<string, string> = {};
    const mime = mimeFromExtension(path);
    if (mime) headers['content-type'] = mime;
    if (lastModified) headers['last-modified'] = lastModified;
    if (lastModified !== undefined && req.ifModifiedSince !== undefined && Date.parse(req.ifModifiedSince) === Date.parse(lastModified)) {
      return response(304, 213, '213 unchanged since the last fetch (MDTM)', headers, Buffer.alloc(0), false, startedMs, address);
    }
    const sink = new BoundedBody(limits, stop);
    let reply: FTPResponse | undefined;
    try {
      reply = await client.downloadTo(sink, path);
    } catch (err) {
      // A body stopped at its bound closed the connection: what it holds decides.
      if (sink.tooLarge !== undefined) throw new BodyTooLarge(sink.tooLarge);
      if (!sink.truncated) throw err;
      this.end(session);
    } finally {
      session.listener?.close();
      session.listener = undefined;
    }
    if (sink.tooLarge !== undefined) {
      this.end(session);
      throw new BodyTooLarge(sink.tooLarge);
    }
    const body = sink.body();
    headers['content-length'] = String(body.length);
    return response(200, reply?.code ?? 226, reply ? `${reply.code} ${reply.message.replace(/^\d{3}[ -]/, '')}` : '226 transfer cut at cut_off', headers, body, sink.truncated, startedMs, address);
  }

  /**
   * Passive mode: EPSV on IPv6 (the control connection's address, by
   * definition), PASV on IPv4, whose reply names an address: only the
   * control connection's is accepted, and only if the egress policy allows it.
   */
  private async passive(ftp: FTPContext): Promise<FTPResponse> {
    const control = normalizeAddress(ftp.socket.remoteAddress);
    let host = control;
    let port: number;
    let res: FTPResponse;
    if (isIPv6(control)) {
      res = await ftp.request('EPSV');
      port = parseEpsvResponse(res.message);
    } else {
      res = await ftp.request('PASV');
      const target = parsePasvResponse(res.message);
      if (target.host !== control) {
        throw new DataAddressRefused(`the PASV reply names ${target.host}:${target.port} for the data connection, not ${control}, the address of the control connection: refused`);
      }
      host = target.host;
      port = target.port;
    }
    const verdict = this.checker.check(host);
    if (!verdict.allowed) throw new DataAddressRefused(`the data connection to ${host}:${port}: ${verdict.reason ?? 'refused by the egress policy'}`);
    await connectForPassiveTransfer(host, port, ftp);
    return res;
  }

  /**
   * Active mode: a listener on the control connection's local address; the
   * server connects to it (servers connect on PORT or before their 150
   * reply). A connection from any other address is dropped.
   */
  private async active(ftp: FTPContext, session: Session): Promise<FTPResponse> {
    const local = normalizeAddress(ftp.socket.localAddress);
    const remote = normalizeAddress(ftp.socket.remoteAddress);
    session.listener?.close();
    const server = createServer({ pauseOnConnect: true });
    session.listener = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, local, () => resolve());
    });
    server.unref();
    // Until the server connects, the data socket is a placeholder: basic-ftp
    // reads ftp.dataSocket again when the transfer starts.
    ftp.dataSocket = new Socket();
    server.on('connection', (conn: Socket) => {
      if (normalizeAddress(conn.remoteAddress) !== remote) {
        conn.destroy();
        return;
      }
      // Left paused (pauseOnConnect) until basic-ftp pipes it, so that no byte is lost.
      ftp.dataSocket = conn;
      server.close();
    });
    const port = (server.address() as { port: number }).port;
    const command = isIPv6(local) ? `EPRT |2|${local}|${port}|` : `PORT ${local.split('.').join(',')},${port >> 8},${port & 255}`;
    return ftp.request(command);
  }
}

function failure(code: FailureOutcome['code'], errorKey: FailureOutcome['errorKey'], reason: string, startedMs: number): FailureOutcome {
  return { kind: 'failure', code, errorKey, reason, blocked: false, connectFailure: false, bytesIn: 0, bytesOut: 0, durationMs: performance.now() - startedMs };
}

function response(status: number, ftpCode: number, replyLine: string, headers: Record<string, string>, body: Buffer, truncated: boolean, startedMs: number, address: string | undefined): ResponseOutcome {
  let block = `FTP ${replyLine}\r\n`;
  for (const [k, v] of Object.entries(headers)) block += `${k}: ${v}\r\n`;
  return {
    kind: 'response', status, ftpCode, headers, rawHeaders: headers, headerBlock: block, body, truncated,
    bytesIn: block.length + body.length, bytesOut: 0, durationMs: performance.now() - startedMs, address,
  };
}
