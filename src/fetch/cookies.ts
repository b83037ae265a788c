/**
 * Cookies (MS-FSCCFG `use_cookies`, `cookie_timeout`): the `CookieJar`
 * contract the cookie interceptor uses, and `MemoryCookieJar`, a small
 * RFC 6265 jar behind it.
 *
 * The contract is tough-cookie's synchronous one (`getCookieStringSync`,
 * `setCookieSync`, `serializeSync`), so that tough-cookie can replace
 * `MemoryCookieJar` without touching the interceptor or the store: it is
 * the library the design names, and is not among this version's
 * dependencies yet. What this jar does (RFC 6265 section 5):
 *
 *   Set-Cookie    5.2 parsing: name=value, Expires (5.1.1 dates), Max-Age
 *                 (wins over Expires), Domain (leading dot dropped), Path,
 *                 Secure; HttpOnly and SameSite are read and have no effect
 *                 on a crawler
 *   storing       5.3: Domain must domain-match the host (an IP address only
 *                 itself), else the cookie is refused; no Domain: host-only;
 *                 a Domain that is a public suffix is refused unless it is the
 *                 host itself (then host-only): this jar knows only the bare
 *                 top-level labels ("com", "uk"; no public suffix list, which
 *                 tough-cookie brings); default path 5.1.4; a Secure cookie
 *                 only from https (RFC 6265bis); an equal name, domain and
 *                 path replaces the old cookie and keeps its creation time;
 *                 an expired one deletes it
 *   session       a cookie without Expires or Max-Age lives `sessionTtlMs`
 *                 (cookie_timeout), then is dropped like an expired one
 *   limits        4096 bytes of name and value, 50 cookies per domain and
 *                 3000 in all (RFC 6265 6.1's minimums): the oldest go first
 *   Cookie        5.4: host-only or domain match, path match, Secure over
 *                 https only, unexpired; longer paths first, then older
 */

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

export interface StoredCookie {
  readonly name: string;
  readonly value: string;
  /** Lower-case domain, no leading dot. */
  readonly domain: string;
  readonly path: string;
  readonly hostOnly: boolean;
  readonly secure: boolean;
  /** When it ends (ms since the epoch); a session cookie's is creation + cookie_timeout. */
  readonly expiresMs: number;
  readonly persistent: boolean;
  readonly createdMs: number;
}

export const MAX_COOKIE_BYTES = 4096;
export const MAX_COOKIES_PER_DOMAIN = 50;
export const MAX_COOKIES = 3000;
/** Latest expiry kept (year 9999): a far-future Expires is clamped to it. */
const FAR_FUTURE = 253402300799000;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** RFC 6265 5.1.1: the cookie date algorithm; undefined for a date it does not accept. */
export function parseCookieDate(text: string): number | undefined {
  // eslint-disable-next-line no-control-regex -- the delimiters of 5.1.1 include %x09
  const tokens = text.split(/[\x09\x20-\x2F\x3B-\x40\x5B-\x60\x7B-\x7E]+/).filter(Boolean);
  let time: [number, number, number] | undefined;
  let day: number | undefined;
  let month: number | undefined;
  let year: number | undefined;
  for (const t of tokens) {
    let m: RegExpExecArray | null;
    if (time === undefined && (m = /^(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\D.*)?$/.exec(t))) time = [Number(m[1]), Number(m[2]), Number(m[3])];
    else if (day === undefined && (m = /^(\d{1,2})(?:\D.*)?$/.exec(t))) day = Number(m[1]);
    else if (month === undefined && MONTHS.includes(t.slice(0, 3).toLowerCase())) month = MONTHS.indexOf(t.slice(0, 3).toLowerCase());
    else if (year === undefined && (m = /^(\d{2,4})(?:\D.*)?$/.exec(t))) year = Number(m[1]);
  }
  if (year !== undefined && year >= 70 && year <= 99) year += 1900;
  else if (year !== undefined && year >= 0 && year <= 69) year += 2000;
  if (time === undefined || day === undefined || month === undefined || year === undefined) return undefined;
  if (day < 1 || day > 31 || year < 1601 || time[0] > 23 || time[1] > 59 || time[2] > 59) return undefined;
  const ms = Date.UTC(year, month, day, time[0], time[1], time[2]);
  if (new Date(ms).getUTCDate() !== day) return undefined; // 31 February
  return ms;
}

function isIpAddress(host: string): boolean {
  return /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host) || host.startsWith('[') || host.includes(':');
}

/** RFC 6265 5.1.3 (host already canonical: lower-case, as the URL parser writes it). */
export function domainMatch(host: string, domain: string): boolean {
  if (host === domain) return true;
  return !isIpAddress(host) && host.endsWith(domain) && host.charCodeAt(host.length - domain.length - 1) === 0x2e;
}

/** RFC 6265 5.1.4: the default path of a request path. */
export function defaultPath(path: string): string {
  if (!path.startsWith('/')) return '/';
  const i = path.lastIndexOf('/');
  return i === 0 ? '/' : path.slice(0, i);
}

/** RFC 6265 5.1.4: path-match. */
export function pathMatch(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

/** A domain this jar treats as a public suffix: a single label ("com", "uk", "localhost"). */
function isPublicSuffix(domain: string): boolean {
  return !domain.includes('.');
}

export interface MemoryCookieJarOptions {
  /** cookie_timeout in ms: how long a cookie without Expires or Max-Age lives. */
  readonly sessionTtlMs: number;
  readonly now?: () => number;
}

export class MemoryCookieJar implements CookieJar {
  /** By domain; each list in creation order. */
  private readonly byDomain = new Map<string, StoredCookie[]>();
  private count = 0;
  private readonly sessionTtlMs: number;
  private readonly now: () => number;
  changed = false;

  constructor(opts: MemoryCookieJarOptions) {
    this.sessionTtlMs = opts.sessionTtlMs;
    this.now = opts.now ?? Date.now;
  }

  /** A jar with the cookies of `serialize()`'s text (the expired ones dropped); an unreadable text gives an empty jar. */
  static deserialize(text: string, opts: MemoryCookieJarOptions): MemoryCookieJar {
    const jar = new MemoryCookieJar(opts);
    let list: unknown;
    try {
      list = (JSON.parse(text) as { cookies?: unknown }).cookies;
    } catch {
      list = undefined;
    }
    if (!Array.isArray(list)) return jar;
    const now = jar.now();
    for (const c of list as StoredCookie[]) {
      if (typeof c?.name !== 'string' || typeof c.value !== 'string' || typeof c.domain !== 'string' || typeof c.path !== 'string' || typeof c.expiresMs !== 'number') continue;
      if (c.expiresMs <= now) continue;
      jar.put({ name: c.name, value: c.value, domain: c.domain, path: c.path, hostOnly: c.hostOnly === true, secure: c.secure === true, expiresMs: c.expiresMs, persistent: c.persistent === true, createdMs: Number(c.createdMs) || now });
    }
    jar.changed = false;
    return jar;
  }

  get size(): number {
    return this.count;
  }

  /** Every cookie, for tests and `inspect` (names and domains: values are secrets). */
  all(): StoredCookie[] {
    return [...this.byDomain.values()].flat();
  }

  /** The cookies a request to `url` would carry, as "name (domain/path)", in the order sent: never a value. */
  describe(urlText: string): string[] {
    const sent = this.getCookieString(urlText);
    if (sent === '') return [];
    const url = new URL(urlText);
    const names = sent.split('; ').map((p) => p.slice(0, Math.max(0, p.indexOf('='))));
    const now = this.now();
    const live = this.all().filter((c) => c.expiresMs > now && (c.hostOnly ? c.domain === url.hostname : domainMatch(url.hostname, c.domain)) && pathMatch(url.pathname || '/', c.path) && (!c.secure || url.protocol === 'https:'));
    return names.map((n) => live.find((c) => c.name === n)).filter((c) => c !== undefined).map((c) => `${c.name} (${c.domain}${c.path}${c.persistent ? '' : ', session'})`);
  }

  serialize(): string {
    this.changed = false;
    const now = this.now();
    return JSON.stringify({ version: 1, cookies: this.all().filter((c) => c.expiresMs > now) });
  }

  setCookie(header: string, urlText: string): void {
    let url: URL;
    try {
      url = new URL(urlText);
    } catch {
      return;
    }
    const c = this.parse(header, url);
    if (c === undefined) return;
    const now = this.now();
    if (c.expiresMs <= now) {
      this.remove(c.domain, c.name, c.path);
      return;
    }
    this.put(c);
  }

  getCookieString(urlText: string): string {
    if (this.count === 0) return '';
    let url: URL;
    try {
      url = new URL(urlText);
    } catch {
      return '';
    }
    const host = url.hostname;
    const secure = url.protocol === 'https:';
    const path = url.pathname || '/';
    const now = this.now();
    const found: StoredCookie[] = [];
    // The host and each parent domain: the only keys a matching cookie can be under.
    let d = host;
    for (let guard = 0; guard < 128; guard++) {
      const list = this.byDomain.get(d);
      if (list) {
        for (const c of list) {
          if (c.expiresMs <= now) continue;
          if (c.hostOnly ? c.domain !== host : !domainMatch(host, c.domain)) continue;
          if (!pathMatch(path, c.path) || (c.secure && !secure)) continue;
          found.push(c);
        }
      }
      const dot = d.indexOf('.');
      if (dot < 0 || isIpAddress(host)) break;
      d = d.slice(dot + 1);
    }
    if (found.length === 0) return '';
    found.sort((a, b) => b.path.length - a.path.length || a.createdMs - b.createdMs);
    return found.map((c) => (c.name === '' ? c.value : `${c.name}=${c.value}`)).join('; ');
  }

  /** RFC 6265 5.2 and 5.3: the cookie a Set-Cookie value stores, or undefined when it is refused. */
  private parse(header: string, url: URL): StoredCookie | undefined {
    const semi = header.indexOf(';');
    const pair = semi < 0 ? header : header.slice(0, semi);
    const eq = pair.indexOf('=');
    if (eq < 0) return undefined;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    // eslint-disable-next-line no-control-regex -- RFC 6265bis 5.6: a control character refuses the cookie
    if (name === '' || name.length + value.length > MAX_COOKIE_BYTES || /[\x00-\x08\x0a-\x1f\x7f]/.test(name + value)) return undefined;
    let expires: number | undefined;
    let maxAge: number | undefined;
    let domainAttr: string | undefined;
    let pathAttr: string | undefined;
    let secure = false;
    for (const av of semi < 0 ? [] : header.slice(semi + 1).split(';')) {
      const i = av.indexOf('=');
      const key = (i < 0 ? av : av.slice(0, i)).trim().toLowerCase();
      const v = i < 0 ? '' : av.slice(i + 1).trim();
      if (key === 'expires') {
        const t = parseCookieDate(v);
        if (t !== undefined) expires = t;
      } else if (key === 'max-age') {
        if (/^-?\d+$/.test(v)) maxAge = Number(v);
      } else if (key === 'domain') {
        if (v !== '') domainAttr = (v.startsWith('.') ? v.slice(1) : v).toLowerCase();
      } else if (key === 'path') {
        pathAttr = v.startsWith('/') ? v : undefined;
      } else if (key === 'secure') {
        secure = true;
      }
    }
    const now = this.now();
    let expiresMs: number;
    let persistent = true;
    if (maxAge !== undefined) expiresMs = maxAge <= 0 ? 0 : Math.min(now + maxAge * 1000, FAR_FUTURE);
    else if (expires !== undefined) expiresMs = Math.min(expires, FAR_FUTURE);
    else {
      persistent = false;
      expiresMs = now + this.sessionTtlMs;
    }
    const host = url.hostname;
    let domain = host;
    let hostOnly = true;
    if (domainAttr !== undefined) {
      if (isPublicSuffix(domainAttr)) {
        if (domainAttr !== host) return undefined;
      } else {
        if (!domainMatch(host, domainAttr)) return undefined;
        domain = domainAttr;
        hostOnly = false;
      }
    }
    if (secure && url.protocol !== 'https:') return undefined;
    return { name, value, domain, path: pathAttr ?? defaultPath(url.pathname), hostOnly, secure, expiresMs, persistent, createdMs: now };
  }

  private remove(domain: string, name: string, path: string): void {
    const list = this.byDomain.get(domain);
    if (!list) return;
    const i = list.findIndex((c) => c.name === name && c.path === path);
    if (i < 0) return;
    list.splice(i, 1);
    this.count--;
    if (list.length === 0) this.byDomain.delete(domain);
    this.changed = true;
  }

  private put(c: StoredCookie): void {
    let list = this.byDomain.get(c.domain);
    if (!list) {
      list = [];
      this.byDomain.set(c.domain, list);
    }
    const i = list.findIndex((o) => o.name === c.name && o.path === c.path);
    if (i >= 0) {
      const old = list[i]!;
      if (old.value === c.value && old.expiresMs === c.expiresMs && old.hostOnly === c.hostOnly && old.secure === c.secure) return;
      list[i] = { ...c, createdMs: old.createdMs };
      this.changed = true;
      return;
    }
    list.push(c);
    this.count++;
    this.changed = true;
    if (list.length > MAX_COOKIES_PER_DOMAIN) this.evict(list, c.domain);
    if (this.count > MAX_COOKIES) this.evictOldest();
  }

  /** Drops the expired cookies of the list, else its oldest. */
  private evict(list: StoredCookie[], domain: string): void {
    const now = this.now();
    const live = list.filter((c) => c.expiresMs > now);
    if (live.length === list.length) live.shift();
    this.count -= list.length - live.length;
    list.splice(0, list.length, ...live);
    if (list.length === 0) this.byDomain.delete(domain);
  }

  private evictOldest(): void {
    let oldest: { domain: string; c: StoredCookie } | undefined;
    for (const [domain, list] of this.byDomain) {
      const c = list[0];
      if (c && (!oldest || c.createdMs < oldest.c.createdMs)) oldest = { domain, c };
    }
    if (oldest) this.remove(oldest.domain, oldest.c.name, oldest.c.path);
  }
}
