/**
 * HTTP authentication (MS-FSCCFG `passwd`, 2.2.4.20): Basic (RFC 7617) and
 * Digest (RFC 7616, RFC 2617) with the credentials `PasswdTable` chooses.
 *
 *   a URL no passwd entry covers ──► next(call), nothing else (no promise added)
 *   a known protection space       ──► Authorization sent at once (Basic, or
 *                                      Digest with the space's nonce and the next nc)
 *   401 ──► parse WWW-Authenticate ──► choose entry + challenge ──► send again (once)
 *           Digest stale=true       ──► the new nonce, send again (once more)
 *           still 401, or nothing fits ──► the 401 with `authFailure` (the page is
 *                                      skipped with that reason, not counted as an
 *                                      error of the page and never deleted)
 *
 * A protection space is remembered per origin and directory (RFC 7617 2.2:
 * the path up to its last "/", and everything under it) after a challenge
 * was answered with success, so that later pages there cost one request
 * instead of two. Credentials are chosen by the URL of each request and an
 * entry covers only its own origin: the engine queues a redirect's target
 * as a URL of its own, so nothing is sent to another origin after a
 * redirect.
 *
 * NTLMv2 (MS-NLMP) authenticates a connection, not a request: its
 * NEGOTIATE and AUTHENTICATE must go on the connection that got the
 * CHALLENGE. So each NTLM page is fetched through a dispatcher of its own
 * with one connection per origin (`ntlmDispatcher`, made once, when first
 * needed), one exchange at a time per origin: 401, NEGOTIATE, CHALLENGE,
 * AUTHENTICATE and the page. A directory that wanted NTLM is remembered:
 * its next pages go to that connection at once, which, authenticated,
 * answers them without a handshake (a new connection gets one again).
 * ntlmv1 is not spoken.
 */

import type { Dispatcher } from 'undici';
import { BoundedMap } from '../../core/bounded-map.ts';
import { basicAuthorization, DigestSession, parseChallenges } from '../digest.ts';
import { authenticateMessage, negotiateMessage, parseChallengeMessage } from '../ntlm.ts';
import { headerValues, type FetchOutcome, type ResponseOutcome } from '../fetch-types.ts';
import type { FetchCall, FetchHandler, FetchInterceptor } from '../interceptor.ts';
import type { AuthChoice, PasswdEntry, PasswdTable } from '../passwd.ts';

/** A protection space answered before: where it is, and how to answer it again. */
interface Space {
  readonly dir: string;
  readonly entry: PasswdEntry;
  readonly realm: string;
  readonly scheme: 'basic' | 'digest' | 'ntlm';
  readonly digest: DigestSession | undefined;
}

/** Spaces remembered per origin (at most 8 each, newest first) and origins remembered. */
const SPACES_PER_ORIGIN = 8;
const ORIGINS_REMEMBERED = 10_000;

/** Where a space was met: the URL's directory (RFC 7617 2.2). */
function directoryOf(url: URL): string {
  const p = url.pathname;
  return p.slice(0, p.lastIndexOf('/') + 1);
}

function withAuthFailure(o: ResponseOutcome, reason: string, dropped: { bytesIn: number; bytesOut: number }): ResponseOutcome {
  return { ...o, bytesIn: o.bytesIn + dropped.bytesIn, bytesOut: o.bytesOut + dropped.bytesOut, authFailure: reason };
}

function added(o: FetchOutcome, dropped: { bytesIn: number; bytesOut: number }): FetchOutcome {
  if (dropped.bytesIn === 0 && dropped.bytesOut === 0) return o;
  return { ...o, bytesIn: o.bytesIn + dropped.bytesIn, bytesOut: o.bytesOut + dropped.bytesOut };
}

export interface HttpAuthOptions {
  /**
   * Makes the dispatcher NTLM handshakes go through: one connection per
   * origin, and the egress policy's pinned lookup (cycle-setup.ts). Without
   * it, an NTLM challenge is answered with an authFailure.
   */
  readonly ntlmDispatcher?: () => Dispatcher;
}

export class HttpAuth {
  private readonly table: PasswdTable;
  private readonly spaces = new BoundedMap<string, Space[]>(ORIGINS_REMEMBERED);
  private readonly makeNtlmDispatcher: (() => Dispatcher) | undefined;
  private ntlmDispatcher: Dispatcher | undefined;
  /** The NTLM handshake under way per origin: the next one waits for it. */
  private readonly ntlmTurns = new Map<string, Promise<unknown>>();

  constructor(table: PasswdTable, opts: HttpAuthOptions = {}) {
    this.table = table;
    this.makeNtlmDispatcher = opts.ntlmDispatcher;
  }

  /** Closes the NTLM dispatcher, if one was made. */
  async close(): Promise<void> {
    const d = this.ntlmDispatcher;
    this.ntlmDispatcher = undefined;
    if (d) await d.close().catch(() => d.destroy());
  }

  /** The interceptor (one per fetcher; the spaces it learns are this object's, shared by every fetcher made with it). */
  readonly interceptor: FetchInterceptor = (next) => (call) => {
    const url = call.request.url;
    if (!this.table.covers(url)) return next(call);
    const space = this.spaceFor(url);
    if (space?.scheme === 'ntlm') return this.ntlm(call, next, space.entry, undefined, { bytesIn: 0, bytesOut: 0 });
    if (space !== undefined && !this.authorize(call, space)) return this.afterward(call, next, undefined);
    return this.afterward(call, next, space);
  };

  /** The remembered space that covers the URL, if any. */
  spaceFor(url: URL): Space | undefined {
    const list = this.spaces.get(url.origin);
    if (list === undefined) return undefined;
    const path = url.pathname;
    for (const s of list) if (path.startsWith(s.dir)) return s;
    return undefined;
  }

  /** What a URL would be sent with (names and realms only, never a secret): for `urltest --explain`. */
  describe(url: URL): string | undefined {
    if (!this.table.covers(url)) return undefined;
    return this.table.candidates(url).map((e) => `${e.name} as ${e.credentials.username} (${e.credentials.scheme}${e.realm !== undefined ? `, realm "${e.realm}"` : ''})`).join('; ');
  }

  private remember(url: URL, space: Space): void {
    const origin = url.origin;
    const list = (this.spaces.get(origin) ?? []).filter((s) => s.dir !== space.dir);
    list.unshift(space);
    if (list.length > SPACES_PER_ORIGIN) list.length = SPACES_PER_ORIGIN;
    this.spaces.set(origin, list);
  }

  private forget(url: URL, space: Space): void {
    const list = this.spaces.get(url.origin);
    if (list === undefined) return;
    const i = list.indexOf(space);
    if (i >= 0) list.splice(i, 1);
  }

  /** Sets the Authorization header for the space; false when the password cannot be revealed. */
  private authorize(call: FetchCall, space: Space): boolean {
    let password: string;
    try {
      password = this.table.password(space.entry);
    } catch {
      return false;
    }
    const user = space.entry.credentials.username;
    call.headers.authorization = space.digest ? space.digest.authorization(call.method, call.path, user, password) : basicAuthorization(user, password);
    return true;
  }

  private async afterward(call: FetchCall, next: FetchHandler, sentWith: Space | undefined): Promise<FetchOutcome> {
    const url = call.request.url;
    const dropped = { bytesIn: 0, bytesOut: 0 };
    let o = await next(call);
    let space = sentWith;
    // Whether the last request answered a challenge of this exchange (not a remembered space).
    let answered = false;
    // At most two more requests: the answer to a challenge, and one more for a
    // stale nonce or for a remembered space the server no longer takes.
    for (let resent = 0; resent < 2; resent++) {
      if (o.kind !== 'response' || o.status !== 401) break;
      const choice = this.table.choose(url, parseChallenges(headerValues(o.rawHeaders, 'www-authenticate')));
      if ('reason' in choice) {
        if (space) this.forget(url, space);
        return withAuthFailure(o, choice.reason, dropped);
      }
      if (choice.scheme === 'ntlm') {
        if (space) this.forget(url, space);
        return this.ntlm(call, next, choice.entry, o, dropped);
      }
      const stale = choice.scheme === 'digest' && /^true$/i.test(choice.challenge.params.get('stale') ?? '');
      if (answered && !stale) break; // answered, and refused
      if (space) this.forget(url, space);
      space = this.spaceOf(url, choice);
      if (!this.authorize(call, space)) {
        return withAuthFailure(o, `HTTP 401: the password of passwd entry ${choice.entry.name} cannot be decrypted (check trawl_secrets.key_file or $TRAWL_KEY_FILE)`, dropped);
      }
      answered = true;
      dropped.bytesIn += o.bytesIn;
      dropped.bytesOut += o.bytesOut;
      o = await next(call);
    }
    if (o.kind === 'response' && o.status === 401) {
      if (space) this.forget(url, space);
      const e = space?.entry;
      const what = e ? `passwd entry ${e.name} (user ${e.credentials.username}, ${space!.scheme}, realm "${space!.realm}")` : 'the credentials';
      return withAuthFailure(o, `HTTP 401: the server refused ${what}`, dropped);
    }
    if (space !== undefined && o.kind === 'response' && o.status !== 401) this.remember(url, space);
    return added(o, dropped);
  }

  /** One NTLM handshake and the page, on the NTLM dispatcher, after the origin's handshake before it. */
  /**
   * A page through the NTLM dispatcher, after the origin's NTLM exchange
   * before it (one at a time per origin: the handshake's messages must not
   * be interleaved on the connection). `first`: the 401 that asked for
   * NTLM; absent when the origin's directory is known to want NTLM, and the
   * page is first asked for on the NTLM connection as it is (an
   * authenticated connection answers it at once).
   */
  private ntlm(call: FetchCall, next: FetchHandler, entry: PasswdEntry, first: ResponseOutcome | undefined, dropped: { bytesIn: number; bytesOut: number }): Promise<FetchOutcome> {
    const origin = call.request.url.origin;
    const before = this.ntlmTurns.get(origin) ?? Promise.resolve();
    const turn = before.then(() => this.ntlmExchange(call, next, entry, first, dropped));
    const settled = turn.then(() => undefined, () => undefined);
    this.ntlmTurns.set(origin, settled);
    void settled.then(() => {
      if (this.ntlmTurns.get(origin) === settled) this.ntlmTurns.delete(origin);
    });
    return turn;
  }

  private async ntlmExchange(call: FetchCall, next: FetchHandler, e: PasswdEntry, first: ResponseOutcome | undefined, dropped: { bytesIn: number; bytesOut: number }): Promise<FetchOutcome> {
    const url = call.request.url;
    const what = `passwd entry ${e.name} (user ${e.credentials.username}, ntlmv2)`;
    const refused = (o: FetchOutcome, why: string): FetchOutcome => (o.kind === 'response' ? withAuthFailure(o, `HTTP 401: ${why}`, dropped) : added(o, dropped));
    const done = (o: FetchOutcome): FetchOutcome => {
      if (o.kind === 'response' && o.status !== 401) this.remember(url, { dir: directoryOf(url), entry: e, realm: '', scheme: 'ntlm', digest: undefined });
      return added(o, dropped);
    };
    if (first && !this.makeNtlmDispatcher) return refused(first, `${what}: NTLM needs a connection of its own, which this fetcher cannot make`);
    this.ntlmDispatcher ??= this.makeNtlmDispatcher!();
    call.dispatcher = this.ntlmDispatcher;
    delete call.headers.authorization;
    if (first === undefined) {
      const o = await next(call);
      if (o.kind !== 'response' || o.status !== 401) return done(o);
      first = o;
    }
    let password: string;
    try {
      password = this.table.password(e);
    } catch {
      return refused(first, `the password of passwd entry ${e.name} cannot be decrypted (check trawl_secrets.key_file or $TRAWL_KEY_FILE)`);
    }
    dropped.bytesIn += first.bytesIn;
    dropped.bytesOut += first.bytesOut;
    call.headers.authorization = `NTLM ${negotiateMessage()}`;
    const o = await next(call);
    // Not a 401: the connection was authenticated already, and this is the page.
    if (o.kind !== 'response' || o.status !== 401) return done(o);
    const blob = parseChallenges(headerValues(o.rawHeaders, 'www-authenticate')).find((c) => c.scheme === 'ntlm' && c.token68 !== undefined)?.token68;
    const challenge = blob === undefined ? undefined : parseChallengeMessage(blob);
    if (!challenge) return refused(o, `${what}: the server did not answer NTLM's NEGOTIATE with a challenge`);
    dropped.bytesIn += o.bytesIn;
    dropped.bytesOut += o.bytesOut;
    const user = e.credentials.username.includes('\\') || e.realm === undefined || e.prefix === undefined ? e.credentials.username : `${e.realm}\\${e.credentials.username}`;
    call.headers.authorization = `NTLM ${authenticateMessage(challenge, user, password)}`;
    const last = await next(call);
    if (last.kind === 'response' && last.status === 401) {
      this.forgetDir(url);
      return refused(last, `the server refused ${what}`);
    }
    return done(last);
  }

  private forgetDir(url: URL): void {
    const s = this.spaceFor(url);
    if (s) this.forget(url, s);
  }

  private spaceOf(url: URL, choice: AuthChoice): Space {
    const realm = choice.challenge.params.get('realm') ?? '';
    return { dir: directoryOf(url), entry: choice.entry, realm, scheme: choice.scheme, digest: choice.scheme === 'digest' ? new DigestSession(choice.challenge) : undefined };
  }
}
