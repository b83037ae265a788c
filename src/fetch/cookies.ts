/**
 * Cookies (MS-FSCCFG `use_cookies`, `cookie_timeout`): the `CookieJar`
 * contract the cookie interceptor uses, and `MemoryCookieJar` behind it.
 *
 * `MemoryCookieJar` is tough-cookie's `CookieJar` (its synchronous API over
 * its in-memory store) with trawl's few rules around it. tough-cookie is
 * maintained, follows RFC 6265 (and the parts of RFC 6265bis a crawler
 * meets) and carries the public suffix list (through tldts), which a
 * hand-written jar cannot keep current: without it a site could set a
 * cookie for `co.uk` and have it sent to every site under it. What comes
 * from tough-cookie (RFC 6265 section 5):
 *
 *   Set-Cookie    5.2 parsing (strict: no "=" or an empty name, or a control
 *                 character, refuses it), 5.1.1 dates, Max-Age over Expires
 *   storing       5.3: Domain must domain-match the host (an IP address only
 *                 itself), a Domain on the public suffix list is refused
 *                 (`rejectPublicSuffixes`); RFC 6761 special-use names such
 *                 as `localhost` and `.test` are not suffixes; default path
 *                 5.1.4; an equal name, domain and path replaces the old
 *                 cookie and keeps its creation time; a Secure cookie only
 *                 from https (RFC 6265bis; `allowSecureOnLocal` is off, so
 *                 loopback http is not trusted either); `__Secure-` and
 *                 `__Host-` cookies that break their prefix's rule are refused
 *   Cookie        5.4: host-only or domain match, path match, Secure over
 *                 https only; longer paths first, then older
 *
 * What trawl adds:
 *
 *   clock         every expiry is an absolute time by the jar's `now` when
 *                 stored (Max-Age becomes Expires; far futures are clamped to
 *                 year 9999), and reads drop what ended by that clock: trawl
 *                 does not use tough-cookie's read-time expiry, which measures
 *                 Max-Age from the last access and reads `Date.now()`
 *   session       cookie_timeout: a cookie without Expires or Max-Age is
 *                 given an expiry when stored, `sessionTtlMs` after this
 *                 Set-Cookie (a re-set starts it again; a new cookie_timeout
 *                 applies to cookies set from then on), and is marked with the
 *                 extension `trawl-session` so `describe` can say "session"
 *   limits        tough-cookie bounds nothing: 4096 bytes of name and value
 *                 (else refused), 50 cookies per domain and 3000 in all (RFC
 *                 6265 6.1's minimums), the expired then the oldest go first
 *   saving        `changed` and `serialize()` for the crawl store (the text
 *                 is tough-cookie's serialization), and a `deserialize` that
 *                 reads bad text as an empty jar
 */

import { Cookie, CookieJar as ToughCookieJar, MemoryCookieStore, type CreateCookieJarOptions } from 'tough-cookie';

export interface CookieJar {
  /** The Cookie header value for a request to `url` ("" when none applies). */
  getCookieString(url: string): string;
  /** Stores (or refuses, or deletes by expiry) the cookie of one Set-Cookie value received from `url`. */
  setCookie(header: string, url: string): void;
  /** A change since the last `serialize()` (the crawl store saves the jar only then). */
  readonly changed: boolean;
  /** The jar as JSON text for the crawl store; clears `changed`. */
  serialize(): string;
}

/**
 * A jar that keeps and sends cookies only for some hosts: what a collection
 * with form logins and use_cookies off uses, so the login sessions are
 * kept and no other site's cookies are. `hosts` holds `host` (any port) and
 * `host:port` entries, lower-case.
 */
export class HostScopedJar implements CookieJar {
  private readonly jar: CookieJar;
  private readonly hosts: ReadonlySet<string>;

  constructor(jar: CookieJar, hosts: ReadonlySet<string>) {
    this.jar = jar;
    this.hosts = hosts;
  }

  private covers(url: string): boolean {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return false;
    }
    return this.hosts.has(u.host) || this.hosts.has(u.hostname);
  }

  getCookieString(url: string): string {
    return this.covers(url) ? this.jar.getCookieString(url) : '';
  }

  setCookie(header: string, url: string): void {
    if (this.covers(url)) this.jar.setCookie(header, url);
  }

  get changed(): boolean {
    return this.jar.changed;
  }

  serialize(): string {
    return this.jar.serialize();
  }
}

export interface StoredCookie {
  readonly name: string;
  readonly value: string;
  /** Lower-case domain, no leading dot. */
  readonly domain: string;
  readonly path: string;
  readonly hostOnly: boolean;
  readonly secure: boolean;
  /** When it ends (ms since the epoch); a session cookie's is when it was set + cookie_timeout. */
  readonly expiresMs: number;
  readonly persistent: boolean;
  readonly createdMs: number;
}

export const MAX_COOKIE_BYTES = 4096;
export const MAX_COOKIES_PER_DOMAIN = 50;
export const MAX_COOKIES = 3000;
/** Latest expiry kept (year 9999): a far-future Expires or Max-Age is clamped to it. */
const FAR_FUTURE = 253402300799000;
/** The extension attribute that marks a session cookie (one that came without Expires or Max-Age). */
const SESSION_MARK = 'trawl-session';

const JAR_OPTIONS: CreateCookieJarOptions = {
  rejectPublicSuffixes: true,
  looseMode: false,
  allowSpecialUseDomain: true,
  allowSecureOnLocal: false,
  enforceSecureOriginOnStorage: true,
  prefixSecurity: 'silent',
};

export interface MemoryCookieJarOptions {
  /** cookie_timeout in ms: how long a cookie without Expires or Max-Age lives. */
  readonly sessionTtlMs: number;
  readonly now?: () => number;
}

/** The end of a cookie this jar stored (its `expires` is always a Date); NaN for one it did not. */
function endOf(c: Cookie): number {
  return c.expires instanceof Date ? c.expires.getTime() : Number.NaN;
}

const isSession = (c: Cookie): boolean => c.extensions?.includes(SESSION_MARK) === true;

/** Oldest first (tough-cookie's creation order). */
const byAge = (a: Cookie, b: Cookie): number => (a.creation instanceof Date ? a.creation.getTime() : 0) - (b.creation instanceof Date ? b.creation.getTime() : 0) || a.creationIndex - b.creationIndex;

export class MemoryCookieJar implements CookieJar {
  private store: MemoryCookieStore;
  private jar: ToughCookieJar;
  private readonly sessionTtlMs: number;
  private readonly now: () => number;
  changed = false;

  constructor(opts: MemoryCookieJarOptions) {
    this.sessionTtlMs = opts.sessionTtlMs;
    this.now = opts.now ?? Date.now;
    this.store = new MemoryCookieStore();
    this.jar = new ToughCookieJar(this.store, JAR_OPTIONS);
  }

  /**
   * A jar with the cookies of `serialize()`'s text, the expired ones and any
   * this jar could not have stored dropped. Text that is not tough-cookie's
   * serialization gives an empty jar: that includes a jar saved in the
   * format trawl wrote before it used tough-cookie (`{"version":1,…}`), so
   * after that upgrade a collection starts once with no cookies.
   */
  static deserialize(text: string, opts: MemoryCookieJarOptions): MemoryCookieJar {
    const jar = new MemoryCookieJar(opts);
    let loaded: ToughCookieJar | undefined;
    try {
      const obj = JSON.parse(text) as { version?: unknown } | null;
      if (typeof obj?.version === 'string' && obj.version.startsWith('tough-cookie@')) loaded = ToughCookieJar.deserializeSync(obj as never, new MemoryCookieStore());
    } catch {
      loaded = undefined;
    }
    if (loaded === undefined || !(loaded.store instanceof MemoryCookieStore)) return jar;
    // The cookies, with this jar's options rather than the ones the text names.
    jar.store = loaded.store;
    jar.jar = new ToughCookieJar(jar.store, JAR_OPTIONS);
    const now = jar.now();
    for (const c of jar.cookies()) {
      const end = endOf(c);
      if (!c.key || typeof c.domain !== 'string' || typeof c.path !== 'string' || !(end > now) || c.maxAge != null) jar.remove(c);
    }
    jar.changed = false;
    return jar;
  }

  get size(): number {
    let n = 0;
    for (const paths of Object.values(this.store.idx)) for (const keys of Object.values(paths)) n += Object.keys(keys).length;
    return n;
  }

  /** Every cookie, for tests (names and domains: values are secrets). */
  all(): StoredCookie[] {
    return this.cookies().map((c) => ({
      name: c.key,
      value: c.value,
      domain: c.domain ?? '',
      path: c.path ?? '/',
      hostOnly: c.hostOnly === true,
      secure: c.secure,
      expiresMs: endOf(c),
      persistent: !isSession(c),
      createdMs: c.creation instanceof Date ? c.creation.getTime() : 0,
    }));
  }

  /** The cookies a request to `url` would carry, as "name (domain/path)", in the order sent: never a value. */
  describe(urlText: string): string[] {
    return this.matching(urlText).map((c) => `${c.key} (${c.domain ?? ''}${c.path ?? ''}${isSession(c) ? ', session' : ''})`);
  }

  serialize(): string {
    this.changed = false;
    const now = this.now();
    for (const c of this.cookies()) if (!(endOf(c) > now)) this.remove(c);
    return JSON.stringify(this.jar.serializeSync() ?? {});
  }

  setCookie(header: string, urlText: string): void {
    const c = Cookie.parse(header);
    if (c === undefined || c.key.length + c.value.length > MAX_COOKIE_BYTES) return;
    const now = this.now();
    // The expiry, absolute by this jar's clock (see the file comment).
    let end: number;
    let session = false;
    if (c.maxAge != null) end = typeof c.maxAge === 'number' ? (c.maxAge <= 0 ? 0 : Math.min(now + c.maxAge * 1000, FAR_FUTURE)) : c.maxAge === 'Infinity' ? FAR_FUTURE : 0;
    else if (c.expires instanceof Date) end = Math.min(c.expires.getTime(), FAR_FUTURE);
    else {
      session = true;
      end = now + this.sessionTtlMs;
    }
    c.maxAge = null;
    c.expires = new Date(end);
    c.extensions = session ? [SESSION_MARK] : null;
    let stored: Cookie | undefined;
    try {
      stored = this.jar.setCookieSync(c, urlText, { ignoreError: true, now: new Date(now) });
    } catch {
      return; // a URL tough-cookie does not take
    }
    if (stored === undefined) return;
    this.changed = true;
    if (end <= now) {
      // An expiry in the past deletes the cookie it replaces (RFC 6265 5.3 step 11).
      this.remove(stored);
      return;
    }
    const domain = stored.domain ?? '';
    const ofDomain = Object.values(this.store.idx[domain] ?? {}).flatMap((keys) => Object.values(keys));
    if (ofDomain.length > MAX_COOKIES_PER_DOMAIN) this.evict(ofDomain, ofDomain.length - MAX_COOKIES_PER_DOMAIN, now);
    const total = this.size;
    if (total > MAX_COOKIES) this.evict(this.cookies(), total - MAX_COOKIES, now);
  }

  getCookieString(urlText: string): string {
    return this.matching(urlText).map((c) => c.cookieString()).join('; ');
  }

  /** The unexpired cookies for `url` in the order sent; the expired ones it meets are removed. */
  private matching(urlText: string): Cookie[] {
    let found: Cookie[];
    try {
      found = this.jar.getCookiesSync(urlText, { expire: false, sort: true });
    } catch {
      return [];
    }
    if (found.length === 0) return found;
    const now = this.now();
    return found.filter((c) => {
      if (endOf(c) > now) return true;
      this.remove(c);
      this.changed = true;
      return false;
    });
  }

  private cookies(): Cookie[] {
    return Object.values(this.store.idx).flatMap((paths) => Object.values(paths).flatMap((keys) => Object.values(keys)));
  }

  private remove(c: Cookie): void {
    if (typeof c.domain !== 'string' || typeof c.path !== 'string') return;
    this.store.removeCookie(c.domain, c.path, c.key, () => {}); // synchronous in the memory store
  }

  /** Removes `n` of `list`: the expired ones first, then the oldest. */
  private evict(list: Cookie[], n: number, now: number): void {
    const order = [...list].sort((a, b) => Number(endOf(a) > now) - Number(endOf(b) > now) || byAge(a, b));
    for (const c of order.slice(0, n)) this.remove(c);
  }
}
