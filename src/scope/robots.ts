/**
 * robots.txt (RFC 9309): parsed once per site, matched once per link.
 *
 *   parseRobots(body)
 *     bytes ─► BOM dropped ─► UTF-8 text ─► lines (CR | LF | CRLF) ─► key: value
 *     │
 *     ▼
 *   RobotsFile (ParsedRobots)
 *     ├─ groups      one per run of consecutive user-agent lines
 *     │   Group { agents: ['foobot', 'barbot'], rules: CompiledRule[], crawlDelayS }
 *     ├─ byAgent     Map<product token, Group[]>   ('*' too; one token in many groups → merged)
 *     ├─ sitemaps, lineCount, invalidLines, directiveCount, truncated
 *     └─ memo        Map<product token, AgentRules> (forAgent is computed once per token)
 *
 *   forAgent('FooBot') ─► GroupRules (AgentRules): the rules of every group naming
 *   the token, or else of '*', indexed once by head (the literal before the first `*`):
 *
 *       heads, sorted    rules per head, by precedence        a lookup tries only the
 *       ''            ─► [/*.html]                            heads that are prefixes
 *       '/x/'         ─► [/x/]                                of the path (binary search,
 *       '/x/page.html'─► [allow /x/page.html]                   then parent links; see
 *                                                             GroupRules)
 *   precedence: more octets first (RFC 9309 2.2.2 "most specific"), allow before
 *   disallow on a tie, then file order. The best matching rule decides.
 *
 *   CompiledRule for `/a*b**c$` (wildcards split out once, at parse time):
 *
 *       parts = ['/a', 'b', 'c']   anchored = true
 *        │       │     └─ must end the path ($), after everything before it
 *        │       └─ found left to right with indexOf (leftmost is always enough)
 *        └─ must be a prefix of the path
 *
 * Percent-encoding (RFC 9309 2.2.2, 2.2.3). Patterns and paths are compared as
 * percent-encoded octets: a pattern's non-ASCII characters (and space, `"`, `<`,
 * `>`, controls) are encoded as UTF-8 `%XX`, and every `%xx` on both sides is
 * upper-cased. `%2A` and `%24` mean a literal `*` and `$` on both sides. Other
 * `%XX` are NOT decoded: google/robotstxt's ID_Encoding vectors require that
 * `%62%61%7A` and `baz` stay different. The path given to `isAllowed` must already
 * be percent-encoded, as a WHATWG-serialised URL always is; raw non-ASCII in it
 * is compared as is and never matches an encoded pattern (ID_Encoding again).
 */

/** One allow or disallow line, as written (after `%xx` normalisation). */
export interface RobotsRule {
  readonly allow: boolean;
  /** The pattern, percent-encoded as it is matched (non-ASCII → UTF-8 `%XX`, `%xx` upper-cased). */
  readonly pattern: string;
  /** 1-based line in the robots.txt body; 0 for the built-in DISALLOW_ALL rule. */
  readonly line: number;
}

export interface AgentRules {
  /** RFC 9309 2.2.2: most specific (longest) match wins; on a tie, allow wins. `/robots.txt` is always allowed. */
  isAllowed(pathAndQuery: string): boolean;
  /** The rule that decided, for explanations; undefined = no rule matched (allowed). */
  decidingRule(pathAndQuery: string): RobotsRule | undefined;
  /** Crawl-delay of the matched group(s) in seconds, if any (the first valid one in file order). */
  readonly crawlDelayS: number | undefined;
}

export interface ParsedRobots {
  /**
   * RFC 9309 2.2.1 group selection. The token is cut at its first `/` (a
   * version) and compared case-insensitively with each group's product tokens;
   * every group naming it is merged. No such group → the `*` groups, merged.
   * No `*` group either → allow all. An empty token never names a group.
   */
  forAgent(productToken: string): AgentRules;
  /** Sitemap: lines, in file order, as written (not resolved, not checked). */
  readonly sitemaps: readonly string[];
  /** Lines in the parsed part of the body (a final line without a line end counts). */
  readonly lineCount: number;
  /** Lines the parser skipped: no `key: value` shape, an unknown key, or an unusable value (crawl-delay). */
  readonly invalidLines: number;
  /** Lines read as user-agent, allow, disallow, sitemap or crawl-delay directives. */
  readonly directiveCount: number;
  /** True when the body was longer than maxBytes and its tail was ignored. */
  readonly truncated: boolean;
}

export interface ParseRobotsOptions {
  /** Bytes of the body to read; the rest is ignored. Default 500 KiB (RFC 9309 2.5: at least 500 KiB). */
  readonly maxBytes?: number;
}

export const DEFAULT_ROBOTS_MAX_BYTES = 500 * 1024;

interface CompiledRule {
  readonly rule: RobotsRule;
  /** Octets of the percent-encoded pattern, `*` and `$` included (the RFC's "most octets"). */
  readonly specificity: number;
  /** Literal pieces between wildcards, in the same form as a canonical path. Never empty. */
  readonly parts: readonly string[];
  /** True when the pattern ends with `$`. */
  readonly anchored: boolean;
}

interface Group {
  readonly agents: string[];
  readonly rules: CompiledRule[];
  crawlDelayS: number | undefined;
}

// ---------------------------------------------------------------------------
// Percent-encoding

const HEX = '0123456789ABCDEF';
const utf8 = new TextEncoder();

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** ASCII characters a serialised URL never carries unencoded, so a pattern must not either. */
function mustEncodeAscii(c: number): boolean {
  return c <= 0x20 || c === 0x7f || c === 0x22 || c === 0x3c || c === 0x3e;
}

/**
 * The normalisation applied to allow/disallow values: characters outside ASCII
 * (and space, `"`, `<`, `>`, controls) become UTF-8 `%XX`; existing `%xx` are
 * upper-cased; everything else, `*` and `$` included, is kept.
 */
export function escapeRobotsPattern(pattern: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charCodeAt(i);
    if (c === 0x25 /* % */) {
      if (i + 2 < pattern.length && isHex(pattern.charCodeAt(i + 1)) && isHex(pattern.charCodeAt(i + 2))) {
        const esc = pattern.slice(i, i + 3);
        const upper = esc.toUpperCase();
        if (esc !== upper) {
          out += pattern.slice(from, i) + upper;
          from = i + 3;
        }
        i += 2;
      }
      continue;
    }
    if (c < 0x80 && !mustEncodeAscii(c)) continue;
    // A whole code point; TextEncoder turns a lone surrogate into U+FFFD.
    const ch = String.fromCodePoint(pattern.codePointAt(i)!);
    let enc = '';
    for (const b of utf8.encode(ch)) enc += '%' + HEX[b >> 4]! + HEX[b & 15]!;
    out += pattern.slice(from, i) + enc;
    i += ch.length - 1;
    from = i + 1;
  }
  return from === 0 ? pattern : out + pattern.slice(from);
}

/**
 * The form a path is compared in: `%xx` upper-cased, `%2A` → `*` and `%24` → `$`
 * (RFC 9309 2.2.3: an encoded special character matches it literally). A path
 * without `%` is returned unchanged, which is the common case.
 */
function canonicalLiteral(s: string): string {
  if (s.indexOf('%') < 0) return s;
  let out = '';
  let from = 0;
  for (let i = s.indexOf('%'); i >= 0 && i + 2 < s.length; i = s.indexOf('%', i + 1)) {
    const a = s.charCodeAt(i + 1);
    const b = s.charCodeAt(i + 2);
    if (!isHex(a) || !isHex(b)) continue;
    const esc = s.slice(i, i + 3).toUpperCase();
    const lit = esc === '%2A' ? '*' : esc === '%24' ? '$' : esc;
    out += s.slice(from, i) + lit;
    from = i + 3;
    i += 2;
  }
  return out + s.slice(from);
}

function canonicalPath(pathAndQuery: string): string {
  return pathAndQuery === '' ? '/' : canonicalLiteral(pathAndQuery);
}

// ---------------------------------------------------------------------------
// Patterns

function compileRule(allow: boolean, rawValue: string, line: number): CompiledRule {
  const pattern = escapeRobotsPattern(rawValue);
  let body = pattern;
  // RFC 9309 2.2.3: `$` is special only as the last character.
  const anchored = body.endsWith('$');
  if (anchored) body = body.slice(0, -1);
  // Consecutive wildcards act as one: empty pieces between them are dropped, the
  // first and last piece are kept even when empty ('' is a prefix / suffix of anything).
  const pieces = body.split('*');
  const parts = pieces
    .filter((p, i) => p !== '' || i === 0 || i === pieces.length - 1)
    .map(canonicalLiteral);
  return { rule: { allow, pattern, line }, specificity: pattern.length, parts, anchored };
}

/** Whether the rule matches a path already known to start with the rule's first part. */
function matchesAfterHead(r: CompiledRule, path: string): boolean {
  const parts = r.parts;
  let pos = parts[0]!.length;
  if (parts.length === 1) return !r.anchored || path.length === pos;
  const lastIndex = parts.length - 1;
  for (let i = 1; i < lastIndex; i++) {
    const p = parts[i]!;
    const at = path.indexOf(p, pos);
    if (at < 0) return false;
    pos = at + p.length;
  }
  const last = parts[lastIndex]!;
  if (r.anchored) return path.length - last.length >= pos && path.endsWith(last);
  return last === '' || path.indexOf(last, pos) >= 0;
}

function byPrecedence(a: CompiledRule, b: CompiledRule): number {
  if (a.specificity !== b.specificity) return b.specificity - a.specificity;
  if (a.rule.allow !== b.rule.allow) return a.rule.allow ? -1 : 1;
  return a.rule.line - b.rule.line;
}

/**
 * The rules of one agent, indexed by their head (the literal before the first
 * `*`), so a lookup only tries the rules whose head is a prefix of the path:
 *
 *   heads (sorted)   parent      rules (by precedence)
 *   0 ''             -1          [/*?action=]
 *   1 '/w/'           0          [/w/]
 *   2 '/wiki/'        0          [/wiki/]
 *   3 '/wiki/Special' 2          [/wiki/Special*$, /wiki/Special]
 *   4 '/wiki/Talk'    2          [...]
 *
 * Path '/wiki/Specials': binary search → the last head ≤ the path (3); the heads
 * that are prefixes of the path are exactly 3 and its parents that are no longer
 * than the common prefix of head 3 and the path (3 → 2 → 0). Why: a head h that
 * is a prefix of path p sorts before p, and every string between h and p in
 * sorted order starts with h, so h is a prefix of head 3, i.e. one of its parents.
 */
class GroupRules implements AgentRules {
  readonly crawlDelayS: number | undefined;
  private readonly heads: readonly string[];
  /** parent[i] = index of the longest other head that is a prefix of heads[i]; -1 when none. */
  private readonly parent: Int32Array;
  private readonly rulesByHead: ReadonlyArray<readonly CompiledRule[]>;

  constructor(rules: readonly CompiledRule[], crawlDelayS: number | undefined) {
    this.crawlDelayS = crawlDelayS;
    const byHead = new Map<string, CompiledRule[]>();
    for (const r of rules) {
      const head = r.parts[0]!;
      const list = byHead.get(head);
      if (list) list.push(r);
      else byHead.set(head, [r]);
    }
    const heads = [...byHead.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    this.heads = heads;
    this.rulesByHead = heads.map((h) => byHead.get(h)!.sort(byPrecedence));
    this.parent = new Int32Array(heads.length);
    const stack: number[] = [];
    for (let i = 0; i < heads.length; i++) {
      while (stack.length > 0 && !heads[i]!.startsWith(heads[stack[stack.length - 1]!]!)) stack.pop();
      this.parent[i] = stack.length > 0 ? stack[stack.length - 1]! : -1;
      stack.push(i);
    }
  }

  isAllowed(pathAndQuery: string): boolean {
    const r = this.decidingRule(pathAndQuery);
    return r === undefined || r.allow;
  }

  decidingRule(pathAndQuery: string): RobotsRule | undefined {
    const heads = this.heads;
    if (heads.length === 0) return undefined;
    const path = canonicalPath(pathAndQuery);
    // RFC 9309 2.2.2: "The /robots.txt URI is implicitly allowed."
    if (path === '/robots.txt') return undefined;
    let lo = 0;
    let hi = heads.length - 1;
    let last = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (heads[mid]! <= path) {
        last = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (last < 0) return undefined;
    const h = heads[last]!;
    const max = Math.min(h.length, path.length);
    let common = 0;
    while (common < max && h.charCodeAt(common) === path.charCodeAt(common)) common++;
    let best: CompiledRule | undefined;
    for (let k = last; k >= 0; k = this.parent[k]!) {
      if (heads[k]!.length > common) continue;
      for (const r of this.rulesByHead[k]!) {
        if (best && byPrecedence(r, best) >= 0) break; // sorted: no later rule here can win
        if (matchesAfterHead(r, path)) {
          best = r;
          break;
        }
      }
    }
    return best?.rule;
  }
}

const NO_RULES: AgentRules = new GroupRules([], undefined);

// ---------------------------------------------------------------------------
// Product tokens

/** RFC 9309 2.2.1 product-token syntax: `[a-zA-Z_-]+`. For config checks; matching is more lenient. */
export function isValidProductToken(token: string): boolean {
  return /^[A-Za-z_-]+$/.test(token);
}

/**
 * The product token of a user-agent line: `*`, or its leading run of token
 * characters (`FOO BAR` → `foo`, `Googlebot/2.1` → `googlebot`), lower-cased.
 * Digits are kept (`MJ12bot`), although RFC 9309's ABNF has none. '' = none.
 */
function lineToken(value: string): string {
  if (value.startsWith('*')) return '*';
  const m = /^[A-Za-z0-9_-]+/.exec(value);
  return m ? m[0].toLowerCase() : '';
}

/** The caller's token: a `/version` suffix dropped, trimmed, lower-cased (`b / 1.0` → `b`). */
function callerToken(productToken: string): string {
  const slash = productToken.indexOf('/');
  return (slash < 0 ? productToken : productToken.slice(0, slash)).trim().toLowerCase();
}

// ---------------------------------------------------------------------------
// The parsed file

class RobotsFile implements ParsedRobots {
  readonly sitemaps: readonly string[];
  readonly lineCount: number;
  readonly invalidLines: number;
  readonly directiveCount: number;
  readonly truncated: boolean;
  private readonly byAgent = new Map<string, Group[]>();
  private readonly memo = new Map<string, AgentRules>();

  constructor(groups: readonly Group[], stats: Omit<ParsedRobots, 'forAgent'>) {
    for (const g of groups) {
      for (const a of new Set(g.agents)) {
        const list = this.byAgent.get(a);
        if (list) list.push(g);
        else this.byAgent.set(a, [g]);
      }
    }
    this.sitemaps = stats.sitemaps;
    this.lineCount = stats.lineCount;
    this.invalidLines = stats.invalidLines;
    this.directiveCount = stats.directiveCount;
    this.truncated = stats.truncated;
  }

  forAgent(productToken: string): AgentRules {
    const token = callerToken(productToken);
    const known = this.memo.get(token);
    if (known) return known;
    const groups = (token !== '' ? this.byAgent.get(token) : undefined) ?? this.byAgent.get('*');
    let rules: AgentRules = NO_RULES;
    if (groups) {
      const crawlDelayS = groups.find((g) => g.crawlDelayS !== undefined)?.crawlDelayS;
      const all = groups.length === 1 ? groups[0]!.rules : groups.flatMap((g) => g.rules);
      rules = all.length === 0 && crawlDelayS === undefined ? NO_RULES : new GroupRules(all, crawlDelayS);
    }
    this.memo.set(token, rules);
    return rules;
  }
}

// ---------------------------------------------------------------------------
// Parsing

type Key = 'user-agent' | 'allow' | 'disallow' | 'sitemap' | 'crawl-delay';
const KEYS: ReadonlySet<string> = new Set<Key>(['user-agent', 'allow', 'disallow', 'sitemap', 'crawl-delay']);

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0b || c === 0x0c;
}

/**
 * Trims ASCII white space only. String.prototype.trim would also drop a U+FEFF,
 * and a BOM in the middle of the file is not white space (google/robotstxt
 * ID_UTF8ByteOrderMarkIsSkipped: it makes that line's key unknown).
 */
function trimSpace(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isSpace(s.charCodeAt(a))) a++;
  while (b > a && isSpace(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/** Splits a comment-free, trimmed line into key and value; undefined when it has no such shape. */
function keyValue(line: string): { key: string; value: string } | undefined {
  const colon = line.indexOf(':');
  if (colon >= 0) {
    const key = trimSpace(line.slice(0, colon)).toLowerCase();
    return key === '' ? undefined : { key, value: trimSpace(line.slice(colon + 1)) };
  }
  // A forgotten colon (`disallow /`), accepted as google/robotstxt does, but only
  // for known keys and exactly two words: obeying it is the polite reading.
  const m = /^([^ \t]+)[ \t]+([^ \t]+)$/.exec(line);
  if (m && KEYS.has(m[1]!.toLowerCase())) return { key: m[1]!.toLowerCase(), value: m[2]! };
  return undefined;
}

/** A Crawl-delay value: a non-negative decimal number of seconds, nothing else (`10a`, `1.2.1` are ignored). */
function parseDelayS(value: string): number | undefined {
  if (!/^(?:\d+(?:\.\d*)?|\.\d+)$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** The byte length of the UTF-8 BOM prefix at the start (a partial BOM is skipped too, as google/robotstxt does). */
function bomLength(bytes: Uint8Array): number {
  const bom = [0xef, 0xbb, 0xbf];
  let n = 0;
  while (n < 3 && n < bytes.length && bytes[n] === bom[n]) n++;
  return n;
}

function decodeBody(body: string | Uint8Array, maxBytes: number): { text: string; truncated: boolean } {
  let bytes: Uint8Array;
  if (typeof body === 'string') {
    // A string of at most maxBytes/3 UTF-16 units is at most maxBytes in UTF-8.
    if (body.length <= Math.floor(maxBytes / 3)) return { text: body.startsWith('\uFEFF') ? body.slice(1) : body, truncated: false };
    bytes = utf8.encode(body);
  } else {
    bytes = body;
  }
  let truncated = false;
  let keepLastLine = true;
  if (bytes.length > maxBytes) {
    truncated = true;
    const next = bytes[maxBytes];
    keepLastLine = next === 0x0a || next === 0x0d;
    bytes = bytes.subarray(0, maxBytes);
  }
  let text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes.subarray(bomLength(bytes)));
  if (!keepLastLine) {
    // The cut went through a line: its start alone could mean another rule. Drop it.
    const end = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
    text = end < 0 ? '' : text.slice(0, end + 1);
  }
  return { text, truncated };
}

/**
 * Parses a robots.txt body. Never throws: what it cannot read is counted in
 * `invalidLines` and skipped. Rules before the first user-agent line belong to
 * no group and are ignored (RFC 9309 2.2.1). An empty allow or disallow value is
 * no rule.
 */
export function parseRobots(body: string | Uint8Array, opts?: ParseRobotsOptions): ParsedRobots {
  const { text, truncated } = decodeBody(body, opts?.maxBytes ?? DEFAULT_ROBOTS_MAX_BYTES);
  const lines = text === '' ? [] : text.split(/\r\n|\r|\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop(); // the final line end
  const groups: Group[] = [];
  const sitemaps: string[] = [];
  let current: Group | undefined;
  let readingAgents = false; // true until an allow/disallow line: the user-agent lines before it share one group
  let invalidLines = 0;
  let directiveCount = 0;

  for (let n = 0; n < lines.length; n++) {
    let line = lines[n]!;
    const hash = line.indexOf('#');
    if (hash >= 0) line = line.slice(0, hash);
    line = trimSpace(line);
    if (line === '') continue;
    const kv = keyValue(line);
    if (!kv || !KEYS.has(kv.key)) {
      invalidLines++;
      continue;
    }
    const { key, value } = kv;
    switch (key as Key) {
      case 'user-agent': {
        if (!current || !readingAgents) {
          current = { agents: [], rules: [], crawlDelayS: undefined };
          groups.push(current);
          readingAgents = true;
        }
        const token = lineToken(value);
        if (token !== '') current.agents.push(token);
        break;
      }
      case 'allow':
      case 'disallow':
        readingAgents = false;
        if (current && value !== '') current.rules.push(compileRule(key === 'allow', value, n + 1));
        break;
      case 'crawl-delay': {
        // Not a group member line that ends a run of user-agent lines: Google's
        // parser (to which it is an unknown key) and crawler-commons keep
        // `User-agent: a` / `Crawl-delay: 5` / `User-agent: b` / `Disallow: /x`
        // one group for a and b, and so does trawl.
        const delayS = parseDelayS(value);
        if (delayS === undefined) {
          invalidLines++;
          continue;
        }
        if (current && current.crawlDelayS === undefined) current.crawlDelayS = delayS;
        break;
      }
      case 'sitemap':
        // Not part of any group: it neither ends a run of user-agent lines nor starts a group.
        if (value !== '') sitemaps.push(value);
        break;
    }
    directiveCount++;
  }

  return new RobotsFile(groups, { sitemaps, lineCount: lines.length, invalidLines, directiveCount, truncated });
}

export const ALLOW_ALL: ParsedRobots = new RobotsFile([], {
  sitemaps: [], lineCount: 0, invalidLines: 0, directiveCount: 0, truncated: false,
});

export const DISALLOW_ALL: ParsedRobots = new RobotsFile(
  [{ agents: ['*'], rules: [compileRule(false, '/', 0)], crawlDelayS: undefined }],
  { sitemaps: [], lineCount: 0, invalidLines: 0, directiveCount: 0, truncated: false },
);

// ---------------------------------------------------------------------------
// URLs

/**
 * The part of a URL that rules are matched against: path, `;params` and
 * `?query`, without scheme, authority and fragment; "/" when empty. Taken from
 * the string as it is (no decoding, no encoding, no URL parse), so it is cheap
 * and keeps a WHATWG-serialised URL's percent-encoding. Scheme-less inputs are
 * read the way google/robotstxt reads them (`example.com/a` → `/a`).
 */
export function robotsPathOf(url: string): string {
  let s = url;
  const hash = s.indexOf('#');
  if (hash >= 0) s = s.slice(0, hash);
  let from = s.startsWith('//') ? 2 : 0;
  if (from === 0 && s.startsWith('/')) return s;
  const scheme = s.indexOf('://', from);
  if (scheme >= 0) {
    const early = firstOf(s, from);
    if (early < 0 || scheme < early) from = scheme + 3;
  }
  const start = firstOf(s, from);
  if (start < 0) return '/';
  return s.charCodeAt(start) === 0x2f ? s.slice(start) : '/' + s.slice(start);
}

/** Index of the first `/`, `?` or `;` at or after `from`; -1 when none. */
function firstOf(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2f || c === 0x3f || c === 0x3b) return i;
  }
  return -1;
}

// ---------------------------------------------------------------------------
// Fetch outcomes

/**
 * What fetching /robots.txt gave. `response` is the final response after the
 * caller followed redirects (a 3xx here is one it could not follow);
 * `too-many-redirects` = more than 5 hops (RFC 9309 2.3.1.2).
 */
export type RobotsFetchOutcome =
  | { kind: 'response'; status: number; body: Uint8Array }
  | { kind: 'timeout' }
  | { kind: 'network-error' }
  | { kind: 'too-many-redirects' };

export interface RobotsOutcomeOptions {
  /** MS-FSCCFG robots_auth_ignore: a 401/403 robots.txt allows all (else it disallows all). */
  readonly authIgnore: boolean;
  /** MS-FSCCFG robots_tout_ignore: a timed-out robots.txt allows all (else it disallows all). */
  readonly toutIgnore: boolean;
  /** Passed to parseRobots for a 2xx body. */
  readonly maxBytes?: number;
}

/**
 * What a robots.txt response means (Elastic crawler "Robots.txt file response
 * code handling", MS-FSCCFG robots_auth_ignore / robots_tout_ignore, RFC 9309 2.3.1):
 *
 *   2xx                 parse the body
 *   3xx (not followed), more than 5 redirects      allow all (unavailable, 2.3.1.2)
 *   401, 403            allow all when authIgnore, else disallow all
 *   429                 disallow all (temporary: the server asks us to slow down)
 *   other 4xx           allow all (unavailable, 2.3.1.3)
 *   5xx, network error  disallow all (unreachable, 2.3.1.4; temporary)
 *   timeout             allow all when toutIgnore, else disallow all
 *   anything else       disallow all (an unknown status is not permission)
 *
 * `reason` is one line for logs and explanations.
 */
export function robotsFromOutcome(o: RobotsFetchOutcome, opts: RobotsOutcomeOptions): { robots: ParsedRobots; reason: string } {
  switch (o.kind) {
    case 'timeout':
      return opts.toutIgnore
        ? { robots: ALLOW_ALL, reason: 'robots.txt timed out: allow all (robots_tout_ignore)' }
        : { robots: DISALLOW_ALL, reason: 'robots.txt timed out: disallow all until it can be read' };
    case 'network-error':
      return { robots: DISALLOW_ALL, reason: 'robots.txt unreachable (network error): disallow all (RFC 9309 2.3.1.4)' };
    case 'too-many-redirects':
      return { robots: ALLOW_ALL, reason: 'robots.txt redirects could not be followed: unavailable, allow all (RFC 9309 2.3.1.2)' };
    case 'response':
      break;
  }
  const s = o.status;
  if (s >= 200 && s < 300) {
    const robots = parseRobots(o.body, opts.maxBytes === undefined ? undefined : { maxBytes: opts.maxBytes });
    const cut = robots.truncated ? ', truncated' : '';
    return { robots, reason: `robots.txt ${s}: obeyed (${robots.lineCount} lines, ${robots.invalidLines} skipped${cut})` };
  }
  if (s >= 300 && s < 400) {
    return { robots: ALLOW_ALL, reason: `robots.txt ${s}: redirect not followed, unavailable: allow all (RFC 9309 2.3.1.2)` };
  }
  if (s === 401 || s === 403) {
    return opts.authIgnore
      ? { robots: ALLOW_ALL, reason: `robots.txt ${s}: allow all (robots_auth_ignore)` }
      : { robots: DISALLOW_ALL, reason: `robots.txt ${s}: disallow all (robots_auth_ignore is off)` };
  }
  if (s === 429) return { robots: DISALLOW_ALL, reason: 'robots.txt 429: disallow all until the server accepts requests again' };
  if (s >= 400 && s < 500) return { robots: ALLOW_ALL, reason: `robots.txt ${s}: unavailable, allow all (RFC 9309 2.3.1.3)` };
  if (s >= 500 && s < 600) return { robots: DISALLOW_ALL, reason: `robots.txt ${s}: unreachable, disallow all (RFC 9309 2.3.1.4)` };
  return { robots: DISALLOW_ALL, reason: `robots.txt ${s}: unexpected status, disallow all` };
}
