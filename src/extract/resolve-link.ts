/**
 * Resolves the plainest relative links of a page without the URL parser.
 *
 * `URL.parse(link, base)` parses the base again for every link, a large
 * share of the extract worker's time (bench/README.md, *What changed*,
 * 58f585f, and *Link extraction, measured*). Most links are a path (`/s03/page-301.html`) or a relative file
 * (`page-7.html`, `../s03/page-301.html`) made only of characters the
 * WHATWG URL parser copies unchanged into a path. For those the result is
 * the base's scheme, credentials, host and port, then the path with its
 * dot segments removed (URL Standard, "path state": `.` and `..`
 * segments). Anything else (a query, `%`, `\`, `:`, spaces, non-ASCII, a
 * scheme-relative `//host`) returns undefined and the caller parses it.
 *
 * Absolute `http://` and `https://` links already in the form `URL.href`
 * writes (a lower-case host name or a dotted-quad IPv4 address, a port
 * other than the scheme's default, a plain path) are answered the same
 * way: they are common (bench/README.md, *What changed*, b052530, counts
 * them on a bench page), and `URL.parse` is the costliest step of their
 * resolution.
 *
 * test/extract/resolve-link.test.ts checks every answer against
 * `URL.parse` over generated links.
 */

/** Characters a path keeps as they are: unreserved and most sub-delims, and `/`. No `:` (a first segment with one is a scheme), `'` or `%`. */
const PATH_SAFE = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/!$&()*+,;=@') PATH_SAFE[c.charCodeAt(0)] = 1;

/**
 * A resolver for links against `base`, an absolute http(s) URL without a
 * fragment as `URL.href` writes it; undefined for any other base.
 * The resolver answers the href without its fragment, or undefined when
 * the link needs the full parser. It answers absolute links only for the
 * schemes in `absolute` (`http:`, `https:`; the crawl's allowed schemes).
 */
export function plainLinkResolver(base: string, absolute: ReadonlySet<string> = NO_SCHEMES): ((link: string) => string | undefined) | undefined {
  const u = URL.parse(base);
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.hash !== '' || u.href !== base) return undefined;
  const prefix = base.slice(0, base.length - u.pathname.length - u.search.length);
  const dir = u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1);
  const http = absolute.has('http:');
  const https = absolute.has('https:');
  return (link) => {
    const hash = link.indexOf('#');
    const p = hash < 0 ? link : link.slice(0, hash);
    const n = p.length;
    if (n === 0) return undefined; // the document itself: the caller decides
    if (p.charCodeAt(0) === 0x68 /* h */) {
      if (http && p.startsWith('http://')) return plainAbsolute(p, 7, 80);
      if (https && p.startsWith('https://')) return plainAbsolute(p, 8, 443);
    }
    if (!pathSafe(p, 0)) return undefined;
    let path: string;
    if (p.charCodeAt(0) === 0x2f /* / */) {
      if (n > 1 && p.charCodeAt(1) === 0x2f) return undefined; // //host/…: another authority
      path = p;
    } else path = dir + p;
    return prefix + (path.includes('/.') ? removeDotSegments(path) : path);
  };
}

const NO_SCHEMES: ReadonlySet<string> = new Set();

/** Whether `s` from `from` on is made only of PATH_SAFE characters. */
function pathSafe(s: string, from: number): boolean {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || PATH_SAFE[c] === 0) return false;
  }
  return true;
}

/**
 * `link` is `scheme://` then an authority (up to `authority`, exclusive)
 * and a path: its href when URL.parse would write it unchanged (but for
 * dot segments, removed here as the parser does), else undefined. Left to
 * the parser: credentials, IPv6, upper case, IDNA labels (`xn--`, checked
 * by the parser), empty labels, a host ending in a number that is not a
 * dotted quad (the IPv4 parser reads `127.1` or `0x7f.1`), an empty, padded
 * or default port, and any path character PATH_SAFE does not hold.
 */
function plainAbsolute(link: string, authority: number, defaultPort: number): string | undefined {
  const n = link.length;
  let end = link.indexOf('/', authority);
  if (end < 0) end = n;
  let colon = -1;
  let labelStart = authority;
  for (let i = authority; i < end; i++) {
    const c = link.charCodeAt(i);
    if (c === 0x3a /* : */) {
      if (colon >= 0) return undefined;
      colon = i;
    } else if (colon >= 0) {
      if (c < 0x30 || c > 0x39) return undefined; // the port: digits only
    } else if (c === 0x2e /* . */) {
      if (i === labelStart) return undefined; // an empty label
      labelStart = i + 1;
    } else if (c === 0x78 /* x */ && i === labelStart && link.startsWith('xn--', i)) {
      return undefined;
    } else if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d)) return undefined;
  }
  const hostEnd = colon >= 0 ? colon : end;
  if (hostEnd === authority || labelStart === hostEnd) return undefined; // no host, or a trailing dot
  const last = link.charCodeAt(labelStart);
  if (last >= 0x30 && last <= 0x39 && !dottedQuad(link, authority, hostEnd)) return undefined;
  if (colon >= 0) {
    const digits = end - colon - 1;
    if (digits === 0 || digits > 5 || link.charCodeAt(colon + 1) === 0x30) return undefined;
    const port = Number(link.slice(colon + 1, end));
    if (port > 65535 || port === defaultPort) return undefined;
  }
  if (end === n) return `${link}/`;
  if (!pathSafe(link, end)) return undefined;
  return link.indexOf('/.', end) < 0 ? link : link.slice(0, end) + removeDotSegments(link.slice(end));
}

/** `link.slice(from, to)` is four decimal numbers of 0–255 without leading zeros, as the IPv4 serializer writes them. */
function dottedQuad(link: string, from: number, to: number): boolean {
  let parts = 0;
  let value = 0;
  let digits = 0;
  for (let i = from; i <= to; i++) {
    const c = i < to ? link.charCodeAt(i) : 0x2e;
    if (c === 0x2e) {
      if (digits === 0 || value > 255) return false;
      parts++;
      value = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      if (digits > 0 && value === 0) return false; // a leading zero: the parser reads it as octal
      value = value * 10 + (c - 0x30);
      if (++digits > 3) return false;
    } else return false;
  }
  return parts === 4;
}

/**
 * `/a/b/../c/./d` → `/a/c/d`, as the URL parser's path state does it (a
 * trailing `.` or `..` leaves a trailing `/`). Walks the segments with
 * indexOf and builds the result by slicing, much cheaper than splitting
 * the path into an array and joining it again (bench/README.md, *What
 * changed*, ef98f99).
 */
function removeDotSegments(path: string): string {
  let out = '';
  const n = path.length;
  for (let i = 1; i <= n;) {
    let j = path.indexOf('/', i);
    if (j < 0) j = n;
    const len = j - i;
    const dot = len > 0 && len < 3 && path.charCodeAt(i) === 0x2e && (len === 1 || path.charCodeAt(i + 1) === 0x2e);
    if (!dot) out += path.slice(i - 1, j);
    else {
      if (len === 2) out = out.slice(0, Math.max(0, out.lastIndexOf('/')));
      if (j === n) out += '/';
    }
    i = j + 1;
  }
  return out === '' ? '/' : out;
}
