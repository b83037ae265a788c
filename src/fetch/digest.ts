/**
 * HTTP authentication schemes on the client side: the challenges of a
 * `WWW-Authenticate` header (RFC 9110 11.6.1), Basic credentials (RFC 7617)
 * and Digest (RFC 7616: qop=auth, MD5, SHA-256 and SHA-512-256 with their
 * -sess variants, nc counting; RFC 2617's form without qop for old servers).
 *
 * Why written here and not taken from npm: the Digest clients on npm
 * (digest-fetch, request-digest, http-digest-client, …) each wrap a whole
 * HTTP client (fetch, request, http.request) and send the request
 * themselves; none exposes "challenge + request line → Authorization
 * value", which is all an interceptor around undici needs, and the
 * maintained one (digest-fetch, last release December 2024) pulls in its
 * own fetch. The computation is a few hashes from node:crypto, checked
 * against the RFC 7616 3.9.1 and RFC 2617 3.5 examples
 * (test/fetch/digest.test.ts). Not done: qop=auth-int (the body is not
 * known to the challenge's answer before it is sent; a server that offers
 * only auth-int is answered with nothing), `userhash`, and `username*`.
 */

import { createHash, randomBytes } from 'node:crypto';

export interface Challenge {
  /** The scheme, lower-case: basic, digest, ntlm, negotiate, bearer, … */
  readonly scheme: string;
  /** auth-params by lower-case name, quoted strings unquoted. */
  readonly params: ReadonlyMap<string, string>;
  /** A token68 value (NTLM's and Negotiate's blobs), when the challenge carries one instead of params. */
  readonly token68: string | undefined;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*/;
/** `name =` followed by a value (a token68 may end in "=" and then nothing, or a comma). */
const PARAM = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*(?=[^=\s,])/;

/**
 * Every challenge in the `WWW-Authenticate` values, in the order they came
 * (a value may hold several, separated by commas). Unreadable text ends the
 * value it is in; what was read before it is kept.
 */
export function parseChallenges(values: readonly string[]): Challenge[] {
  const out: Challenge[] = [];
  for (const value of values) {
    let s = value;
    let cur: { scheme: string; params: Map<string, string>; token68: string | undefined } | undefined;
    for (let guard = 0; guard < 200; guard++) {
      s = s.replace(/^[\s,]+/, '');
      if (s === '') break;
      const pm = cur ? PARAM.exec(s) : null;
      if (cur && pm) {
        s = s.slice(pm[0].length);
        let v = '';
        if (s.startsWith('"')) {
          let i = 1;
          while (i < s.length && s[i] !== '"') {
            if (s[i] === '\\' && i + 1 < s.length) i++;
            v += s[i];
            i++;
          }
          s = s.slice(i + 1);
        } else {
          v = TOKEN.exec(s)?.[0] ?? '';
          if (v === '') break;
          s = s.slice(v.length);
        }
        cur.params.set(pm[1]!.toLowerCase(), v);
        continue;
      }
      const tok = TOKEN.exec(s);
      if (!tok) break;
      cur = { scheme: tok[0].toLowerCase(), params: new Map(), token68: undefined };
      out.push(cur);
      s = s.slice(tok[0].length);
      const ws = /^\s+/.exec(s);
      if (!ws) continue;
      s = s.slice(ws[0].length);
      if (PARAM.test(s)) continue;
      const t68 = TOKEN68.exec(s);
      if (t68 && /^\s*(?:,|$)/.test(s.slice(t68[0].length))) {
        cur.token68 = t68[0];
        s = s.slice(t68[0].length);
      }
    }
  }
  return out;
}

/** `Basic base64(user:password)`, the UTF-8 bytes (RFC 7617 2.1). */
export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

const HASHES: Readonly<Record<string, string>> = { 'md5': 'md5', 'sha-256': 'sha256', 'sha-512-256': 'sha512-256' };

/** The Digest algorithms this client answers, strongest first (for choosing among several challenges). */
export const DIGEST_ALGORITHMS = ['sha-512-256', 'sha-512-256-sess', 'sha-256', 'sha-256-sess', 'md5', 'md5-sess'] as const;

/** 0 for the strongest algorithm; undefined for one this client cannot answer (or auth-int only). */
export function digestStrength(c: Challenge): number | undefined {
  const alg = (c.params.get('algorithm') ?? 'MD5').toLowerCase();
  const i = (DIGEST_ALGORITHMS as readonly string[]).indexOf(alg);
  if (i < 0 || !c.params.has('nonce')) return undefined;
  const qop = c.params.get('qop');
  if (qop !== undefined && !qop.split(',').some((q) => q.trim().toLowerCase() === 'auth')) return undefined;
  return i;
}

/**
 * What one Digest protection space remembers between requests: the
 * server's nonce and options, and the count of requests made with it
 * (RFC 7616 3.4: nc is incremented for each request with the same nonce).
 */
export class DigestSession {
  readonly realm: string;
  private nonce: string;
  private readonly opaque: string | undefined;
  private readonly algorithm: string;
  private readonly hash: string;
  private readonly sess: boolean;
  private readonly qop: boolean;
  private nc = 0;
  /** HA1 of the -sess algorithms is fixed by the first cnonce used with a nonce. */
  private sessHa1: string | undefined;
  private readonly cnonce: () => string;

  constructor(challenge: Challenge, cnonce: () => string = () => randomBytes(16).toString('hex')) {
    const p = challenge.params;
    this.realm = p.get('realm') ?? '';
    this.nonce = p.get('nonce') ?? '';
    this.opaque = p.get('opaque');
    this.algorithm = p.get('algorithm') ?? 'MD5';
    const alg = this.algorithm.toLowerCase();
    this.sess = alg.endsWith('-sess');
    this.hash = HASHES[this.sess ? alg.slice(0, -5) : alg] ?? 'md5';
    this.qop = p.get('qop') !== undefined;
    this.cnonce = cnonce;
  }

  private h(text: string): string {
    return createHash(this.hash).update(text, 'utf8').digest('hex');
  }

  /** The Authorization value for one request (`uri`: the request target as sent). Counts it. */
  authorization(method: string, uri: string, username: string, password: string): string {
    this.nc++;
    const nc = this.nc.toString(16).padStart(8, '0');
    const cnonce = this.cnonce();
    let ha1 = this.h(`${username}:${this.realm}:${password}`);
    if (this.sess) {
      this.sessHa1 ??= this.h(`${ha1}:${this.nonce}:${cnonce}`);
      ha1 = this.sessHa1;
    }
    const ha2 = this.h(`${method}:${uri}`);
    const response = this.qop ? this.h(`${ha1}:${this.nonce}:${nc}:${cnonce}:auth:${ha2}`) : this.h(`${ha1}:${this.nonce}:${ha2}`);
    const q = (v: string): string => `"${v.replace(/["\\]/g, '\\$&')}"`;
    const parts = [`username=${q(username)}`, `realm=${q(this.realm)}`, `nonce=${q(this.nonce)}`, `uri=${q(uri)}`, `algorithm=${this.algorithm}`, `response=${q(response)}`];
    if (this.opaque !== undefined) parts.push(`opaque=${q(this.opaque)}`);
    if (this.qop) parts.push('qop=auth', `nc=${nc}`, `cnonce=${q(cnonce)}`);
    return `Digest ${parts.join(', ')}`;
  }
}
