/**
 * Resolves the plainest relative links of a page without the URL parser.
 *
 * `URL.parse(link, base)` parses the base again for every link: on the
 * bench site that was 3.2 million parses, a sixth of the extract worker's
 * time. Most links are a path (`/s03/page-301.html`) or a relative file
 * (`page-7.html`, `../s03/page-301.html`) made only of characters the
 * WHATWG URL parser copies unchanged into a path. For those the result is
 * the base's scheme, credentials, host and port, then the path with its
 * dot segments removed (URL Standard, "path state": `.` and `..`
 * segments). Anything else (a query, `%`, `\`, `:`, spaces, non-ASCII, a
 * scheme-relative `//host`) returns undefined and the caller parses it.
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
 * the link needs the full parser.
 */
export function plainLinkResolver(base: string): ((link: string) => string | undefined) | undefined {
  const u = URL.parse(base);
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.hash !== '' || u.href !== base) return undefined;
  const prefix = base.slice(0, base.length - u.pathname.length - u.search.length);
  const dir = u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1);
  return (link) => {
    const hash = link.indexOf('#');
    const p = hash < 0 ? link : link.slice(0, hash);
    const n = p.length;
    if (n === 0) return undefined; // the document itself: the caller decides
    for (let i = 0; i < n; i++) {
      const c = p.charCodeAt(i);
      if (c >= 128 || PATH_SAFE[c] === 0) return undefined;
    }
    let path: string;
    if (p.charCodeAt(0) === 0x2f /* / */) {
      if (n > 1 && p.charCodeAt(1) === 0x2f) return undefined; // //host/…: another authority
      path = p;
    } else path = dir + p;
    return prefix + (path.includes('/.') ? removeDotSegments(path) : path);
  };
}

/**
 * `/a/b/../c/./d` → `/a/c/d`, as the URL parser's path state does it (a
 * trailing `.` or `..` leaves a trailing `/`). Walks the segments with
 * indexOf and builds the result by slicing: 610 → 210 ns for a bench
 * link such as `/docs/s03/../s07/page-301.html` against splitting the
 * path into an array and joining it again.
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
