/**
 * The `passwd` section (MS-FSCCFG 2.2.4.20) as the authentication
 * interceptor reads it: which entry answers a server's challenge for a URL.
 *
 *   entry name        a URI: a prefix; it covers every URL at or below it, on
 *                     its own origin only (scheme, host and port must be equal)
 *                     anything else: a realm; it covers the origins of the
 *                     collection's start URIs only (a realm name says nothing
 *                     about where it may be sent)
 *   user:password                     Basic, any realm
 *   user:password:realm:scheme        that realm ("" = any), that scheme;
 *                                     auto = the strongest the server offers
 *                                     of Digest, NTLMv2 and Basic; for
 *                                     ntlmv2 the realm is the NTLM domain
 *                                     (unless the user is DOMAIN\\user)
 *
 * The longest prefix that covers a URL is asked first, then shorter ones,
 * then the realm entries. Passwords stay as configured (`!ENC!` ones
 * encrypted) until `password()` reveals one as a request is made.
 */

import { digestStrength, type Challenge } from './digest.ts';

/** One passwd value, parsed (config/values.ts `parseCredentials` makes these). */
export interface AuthCredentials {
  readonly username: string;
  /** Plain text, or `!ENC!…` until `PasswdTable.password` reveals it. */
  readonly password: string;
  readonly realm: string | undefined;
  readonly scheme: 'basic' | 'digest' | 'ntlmv1' | 'ntlmv2' | 'auto';
}

export interface PasswdEntry {
  /** The attrib name as configured: the URI prefix or the realm (never a secret). */
  readonly name: string;
  /** The prefix, for an entry named by a URI. */
  readonly prefix: string | undefined;
  readonly origin: string | undefined;
  readonly credentials: AuthCredentials;
  /** The realm the entry is for: its realm field, or its name for a realm entry; undefined = any. */
  readonly realm: string | undefined;
}

/** What answers a challenge: the entry and the challenge it answers. */
export interface AuthChoice {
  readonly entry: PasswdEntry;
  readonly challenge: Challenge;
  readonly scheme: AuthScheme;
}

export type AuthScheme = 'basic' | 'digest' | 'ntlm';

/** The schemes an entry may answer with, in the order `auto` prefers them (Basic last: it sends the password itself). */
function schemesFor(s: AuthCredentials['scheme']): readonly AuthScheme[] {
  if (s === 'basic') return ['basic'];
  if (s === 'digest') return ['digest'];
  if (s === 'ntlmv2') return ['ntlm'];
  if (s === 'auto') return ['digest', 'ntlm', 'basic'];
  return [];
}

export class PasswdTable {
  private readonly prefixed: PasswdEntry[] = [];
  private readonly realms: PasswdEntry[] = [];
  private readonly realmOrigins: ReadonlySet<string>;
  private readonly reveal: (value: string) => string;

  /**
   * `entries`: the section's attribs, name → parsed value; `realmOrigins`: the
   * origins realm entries may answer (the start URIs'); `reveal` decrypts an
   * `!ENC!` password (it may throw a TrawlError).
   */
  constructor(entries: Iterable<readonly [name: string, credentials: AuthCredentials]>, realmOrigins: Iterable<string>, reveal: (value: string) => string) {
    this.reveal = reveal;
    this.realmOrigins = new Set(realmOrigins);
    for (const [name, credentials] of entries) {
      let url: URL | undefined;
      try {
        url = /^https?:\/\//i.test(name) ? new URL(name) : undefined;
      } catch {
        url = undefined;
      }
      if (url) {
        url.hash = '';
        this.prefixed.push({ name, prefix: url.href, origin: url.origin, credentials, realm: credentials.realm || undefined });
      } else {
        this.realms.push({ name, prefix: undefined, origin: undefined, credentials, realm: credentials.realm || name });
      }
    }
    this.prefixed.sort((a, b) => b.prefix!.length - a.prefix!.length);
  }

  get size(): number {
    return this.prefixed.length + this.realms.length;
  }

  /** True when some entry may answer a challenge for this URL (the interceptor does nothing otherwise). */
  covers(url: URL): boolean {
    if (this.realms.length > 0 && this.realmOrigins.has(url.origin)) return true;
    const href = url.href;
    for (const e of this.prefixed) if (e.origin === url.origin && href.startsWith(e.prefix!)) return true;
    return false;
  }

  /** The entries that may answer for this URL, most specific first. */
  candidates(url: URL): PasswdEntry[] {
    const href = url.href;
    const out = this.prefixed.filter((e) => e.origin === url.origin && href.startsWith(e.prefix!));
    if (this.realmOrigins.has(url.origin)) out.push(...this.realms);
    return out;
  }

  /**
   * The entry and challenge to answer a 401 with: the first candidate with
   * a challenge of a scheme it allows and a realm it is for; among that
   * entry's challenges the strongest (Digest before Basic, SHA-512-256 and
   * SHA-256 before MD5). Undefined, with the reason, when none fits.
   */
  choose(url: URL, challenges: readonly Challenge[]): AuthChoice | { readonly reason: string } {
    const cands = this.candidates(url);
    for (const entry of cands) {
      let best: AuthChoice | undefined;
      let bestRank = Infinity;
      for (const scheme of schemesFor(entry.credentials.scheme)) {
        for (const c of challenges) {
          if (c.scheme !== scheme) continue;
          // NTLM has no realm: an ntlmv2 entry's realm field is its domain.
          if (scheme !== 'ntlm' && entry.realm !== undefined && c.params.get('realm') !== entry.realm) continue;
          const rank = scheme === 'digest' ? digestStrength(c) : scheme === 'ntlm' ? 50 : 100;
          if (rank === undefined || rank >= bestRank) continue;
          best = { entry, challenge: c, scheme };
          bestRank = rank;
        }
      }
      if (best) return best;
    }
    const offered = challenges.map((c) => `${c.scheme}${c.params.has('realm') ? ` realm "${c.params.get('realm')}"` : ''}${c.params.has('algorithm') ? ` ${c.params.get('algorithm')}` : ''}`).join(', ') || 'no challenge';
    const ntlm = cands.find((e) => e.credentials.scheme === 'ntlmv1');
    if (ntlm) return { reason: `HTTP 401: passwd entry ${ntlm.name} asks for ntlmv1, which this version does not speak (use ntlmv2; the server offers ${offered})` };
    return { reason: `HTTP 401: no passwd entry for ${url.origin} answers what the server offers (${offered}); entries asked: ${cands.map((e) => `${e.name} (${e.credentials.scheme}${e.realm !== undefined ? `, realm "${e.realm}"` : ''})`).join(', ')}` };
  }

  /** The entry's password in plain text (an `!ENC!` one decrypted now). May throw (a key file that is missing or does not decrypt it). */
  password(entry: PasswdEntry): string {
    return this.reveal(entry.credentials.password);
  }
}
