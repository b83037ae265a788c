/**
 * URL canonicalization: named rules that bring the many spellings of one URL
 * to one form before the seen check, so `HTTP://Example.com:80/a?#top` and
 * `http://example.com/a` are crawled once. The rules follow Heritrix's
 * canonicalization rules and webarchive-commons' IA canonicalizer; the
 * configuration's rewrite_rules (MS-FSCCFG 2.2.3) run before them.
 *
 * Every extracted link passes through here, so this is a hot path: the
 * regular expressions are compiled once, each rule first checks cheaply
 * whether it has anything to do, and a URL that no rule changes is parsed
 * once and returned as its WHATWG href.
 *
 * The pipeline always runs in this order (the order of CANON_RULES), whatever
 * order the options list the rules in:
 *
 *   input ─► WHATWG parse ─► rewrite_rules[0..n] ─► reparse
 *        host rules (URL setters)          path/query/fragment rules (strings)
 *        ├ lowercase-scheme-host           ├ drop-fragment
 *        ├ strip-userinfo                  ├ normalize-percent-encoding
 *        ├ strip-www                       ├ strip-session-ids
 *        ├ strip-wwwn                      ├ sort-query-params
 *        └ drop-default-port (the parse)   └ fixup-query ─► reparse ─► href
 *
 * The string rules see the WHATWG href cut into four parts:
 *
 *   http://u:p@www2.example.com:8080/a/(S(…))/p.aspx;jsessionid=…?b=2&a=1&&sid=…#top
 *   └──────────── head ────────────┘└────────── path ───────────┘└─── query ───┘└──┘
 *                                                                        fragment ─┘
 *
 * The WHATWG parse cannot be turned off: it always lower-cases the scheme and
 * the host of http(s), ws(s), ftp and file URLs, drops their default ports,
 * and percent-encodes what the URL Standard encodes. Turning
 * `lowercase-scheme-host` or `drop-default-port` off does not undo that.
 */

import { compileDotNetRegex, translateDotNetReplacement } from '../config/dotnet-regex.ts';
import { parseRewriteRule } from '../config/values.ts';
import { TrawlError } from '../core/errors.ts';
import { parseUrl } from '../core/url.ts';

export type CanonRuleName =
  | 'lowercase-scheme-host'
  | 'strip-userinfo'
  | 'strip-www'
  | 'strip-wwwn'
  | 'strip-session-ids'
  | 'fixup-query'
  | 'sort-query-params'
  | 'drop-default-port'
  | 'normalize-percent-encoding'
  | 'drop-fragment';

export interface CanonRuleInfo {
  readonly name: CanonRuleName;
  readonly description: string;
  /** Part of DEFAULT_CANON_RULES. */
  readonly defaultOn: boolean;
}

/** Every rule, in the order the pipeline applies them. */
export const CANON_RULES: ReadonlyArray<CanonRuleInfo> = [
  {
    name: 'lowercase-scheme-host',
    defaultOn: true,
    description:
      'Lower-case the scheme and the host. The WHATWG parse already does this for http(s), ws(s), ftp and file; the rule also folds the opaque host of other schemes.',
  },
  { name: 'strip-userinfo', defaultOn: false, description: 'Remove "user:password@" (Heritrix StripUserinfoRule).' },
  {
    name: 'strip-www',
    defaultOn: false,
    description: 'Remove leading "www." labels from the host while a dotted name remains (Heritrix StripWWWRule). The host fetched changes.',
  },
  {
    name: 'strip-wwwn',
    defaultOn: false,
    description:
      'Remove leading "www." and "www<N>." labels from the host while a dotted name remains (Heritrix StripWWWNRule, webarchive-commons massageHost). The host fetched changes.',
  },
  {
    name: 'drop-default-port',
    defaultOn: true,
    description:
      'Remove the port when it is the scheme\'s default (80 for http and ws, 443 for https and wss, 21 for ftp). The WHATWG parse always does this, so explain() never shows the rule.',
  },
  { name: 'drop-fragment', defaultOn: true, description: 'Remove the #fragment, which never reaches the server.' },
  {
    name: 'normalize-percent-encoding',
    defaultOn: true,
    description:
      'In the path, query and fragment: upper-case %xx escapes, decode escaped unreserved characters (A-Z a-z 0-9 - . _ ~), and escape \\ ^ ` { | }, which the WHATWG parser leaves raw and RFC 3986 does not allow (RFC 3986 6.2.2). Opaque paths (mailto:, javascript:) are left alone.',
  },
  {
    name: 'strip-session-ids',
    defaultOn: true,
    description:
      'Remove session ids: query parameters jsessionid, phpsessid and sid with 32 letters or digits, aspsessionid<8 letters> with 24 letters, cfid together with cftoken (Heritrix StripSessionIDs, StripSessionCFIDs); ASP.NET cookieless path ids /(S(…))/ and /(…)/ before an .aspx; the ;jsessionid= path parameter. A removed last parameter leaves its "&" for fixup-query, as in Heritrix.',
  },
  {
    name: 'sort-query-params',
    defaultOn: false,
    description: 'Sort query parameters by key, stably: parameters with the same key keep their order (MS-FSCCFG sort_query_params).',
  },
  {
    name: 'fixup-query',
    defaultOn: true,
    description: 'Remove empty query parameters: a trailing "?" or "&", a leading "&", and "&&" (Heritrix FixupQueryString).',
  },
];

/**
 * A safe set for URLs that will be fetched: lowercase-scheme-host,
 * drop-default-port, drop-fragment, normalize-percent-encoding,
 * strip-session-ids, fixup-query. It never changes the host or the order of
 * parameters, unlike the aggressive rules the Internet Archive uses for
 * deduplication keys.
 */
export const DEFAULT_CANON_RULES: readonly CanonRuleName[] = CANON_RULES.filter((r) => r.defaultOn).map((r) => r.name);

export interface CanonOptions {
  /** The rules to apply. They always run in CANON_RULES order. */
  readonly rules: readonly CanonRuleName[];
  /**
   * MS-FSCCFG 2.2.3 rewrite_rules, each "DmatchDreplacementD" with D one
   * non-space delimiter, match a .NET regular expression and replacement
   * using $1, ${name}, $0 and $$. They run first, in order, on the WHATWG
   * href (lower-case host, percent-encoded), and each replaces the first
   * match only ("a replacement string that MUST replace the first
   * expression").
   */
  readonly rewriteRules?: readonly string[];
}

/** One change made while canonicalizing: a rule name, `rewrite_rules[i]`, or `whatwg-parse`. */
export interface CanonStep {
  readonly rule: string;
  readonly before: string;
  readonly after: string;
}

export interface Canonicalizer {
  /** The canonical href, or undefined when `url` is not a valid absolute URL (or a rewrite made it one that is not). */
  canonicalize(url: string): string | undefined;
  /**
   * canonicalize(canonicalize(u)) === canonicalize(u) for every u: true when
   * no rewrite_rules are set (each named rule is idempotent, which the tests
   * check on generated URLs); a rewrite rule is a user's regular expression,
   * and nothing says applying it twice changes nothing.
   */
  readonly idempotent: boolean;
  /**
   * The steps that changed something, in order; the last `after` is what
   * canonicalize returns. Empty when nothing changed or the URL is invalid.
   */
  explain(url: string): CanonStep[];
}

// ------------------------------------------------------------------ host rules

/**
 * A host rule edits the URL through its setters and says whether it changed
 * it. It first tests the href, a string at hand: a URL getter costs about as
 * much as a scan of the whole href.
 */
type HostRule = (u: URL, href: string) => boolean;

// Schemes whose host the parser lower-cases and whose default port it drops.
const SPECIAL_SCHEME = /^(?:https?|wss?|ftp|file):/;
const UPPER_IN_AUTHORITY = /^[^:]*:\/\/[^/?#]*[A-Z]/;
const UPPER_OUTSIDE_ESCAPES = /%[0-9A-Fa-f]{2}|[A-Z]+/g;
const USERINFO = /^[^:]*:\/\/[^/?#]*@/;
const HOST_STARTS_WWW = /^[^:]*:\/\/(?:[^/?#@]*@)?www\./i;
const HOST_STARTS_WWWN = /^[^:]*:\/\/(?:[^/?#@]*@)?www\d*\./i;
const WWW_LABEL = /^www\./i;
const WWWN_LABEL = /^www\d*\./i;

/**
 * The host without its leading labels that match `label`, as long as a
 * dotted name remains (www.com stays). Removing all of them, not one, keeps
 * the rule idempotent: www.www.example.com becomes example.com at once.
 */
function stripLabels(host: string, label: RegExp): string {
  let rest = host;
  for (let m = label.exec(rest); m; m = label.exec(rest)) {
    const next = rest.slice(m[0].length);
    if (!next.includes('.')) break;
    rest = next;
  }
  return rest;
}

function setHostname(u: URL, host: string): boolean {
  const before = u.href;
  u.hostname = host;
  return u.href !== before;
}

const HOST_RULES: Partial<Record<CanonRuleName, HostRule>> = {
  'lowercase-scheme-host': (u, href) => {
    // The parser lower-cases every scheme and every special host; only an
    // opaque host (foo://Host/) can still hold capitals.
    if (SPECIAL_SCHEME.test(href) || !UPPER_IN_AUTHORITY.test(href)) return false;
    const host = u.hostname;
    const lower = host.replace(UPPER_OUTSIDE_ESCAPES, (m) => (m[0] === '%' ? m : m.toLowerCase()));
    return lower !== host && setHostname(u, lower);
  },
  'strip-userinfo': (u, href) => {
    if (!USERINFO.test(href)) return false;
    u.username = '';
    u.password = '';
    return true;
  },
  'strip-www': (u, href) => {
    if (!HOST_STARTS_WWW.test(href)) return false;
    const host = u.hostname;
    const rest = stripLabels(host, WWW_LABEL);
    return rest !== host && setHostname(u, rest);
  },
  'strip-wwwn': (u, href) => {
    if (!HOST_STARTS_WWWN.test(href)) return false;
    const host = u.hostname;
    const rest = stripLabels(host, WWWN_LABEL);
    return rest !== host && setHostname(u, rest);
  },
  // drop-default-port has nothing to do here: the schemes with a default
  // port (http 80, https 443, ws 80, wss 443, ftp 21) are the URL Standard's
  // special schemes, whose default port the parse already drops.
};

// ---------------------------------------------------------- path / query rules

interface Parts {
  head: string;
  path: string;
  query: string | null;
  fragment: string | null;
  /** An opaque path (mailto:x, javascript:x) is not a list of segments. */
  readonly opaque: boolean;
}

/**
 * A string rule: `apply` edits the parts and says whether it changed them;
 * `hint` is a test over the whole href that matches whenever `apply` might
 * change something (it may match more). A URL no enabled rule's hint
 * matches is never cut into parts: most links cost one parse and a few scans.
 */
interface PartRule {
  readonly hint: RegExp;
  readonly apply: (p: Parts) => boolean;
}

function assemble(p: Parts): string {
  return p.head + p.path + (p.query === null ? '' : `?${p.query}`) + (p.fragment === null ? '' : `#${p.fragment}`);
}

/** Cuts a WHATWG href into its parts; no URL getter needed. */
function partsOf(href: string): Parts {
  const hashAt = href.indexOf('#');
  const noHash = hashAt < 0 ? href : href.slice(0, hashAt);
  // The first "?" starts the query: the parser escapes "?" in userinfo and
  // path, and a host cannot hold one.
  const queryAt = noHash.indexOf('?');
  const beforeQuery = queryAt < 0 ? noHash : noHash.slice(0, queryAt);
  const afterScheme = beforeQuery.indexOf(':') + 1;
  let pathAt = afterScheme;
  if (beforeQuery.startsWith('//', afterScheme)) {
    // An authority cannot hold "/": the path starts at the next one.
    const slash = beforeQuery.indexOf('/', afterScheme + 2);
    pathAt = slash < 0 ? beforeQuery.length : slash;
  }
  const path = beforeQuery.slice(pathAt);
  return {
    head: beforeQuery.slice(0, pathAt),
    path,
    query: queryAt < 0 ? null : noHash.slice(queryAt + 1),
    fragment: hashAt < 0 ? null : href.slice(hashAt + 1),
    opaque: pathAt === afterScheme && !path.startsWith('/'),
  };
}

const PCT_HINT = /[%\\^`{|}]/;
const PCT_TOUCH = /%[0-9A-Fa-f]{2}|[\\^`{|}]/g;

function isUnreserved(c: number): boolean {
  return (
    (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e || c === 0x5f || c === 0x7e
  );
}

/**
 * RFC 3986 6.2.2.1 and 6.2.2.2: upper-case escapes, decode unreserved ones.
 * `\ ^ \` { | }` are neither reserved nor unreserved, so escaping them cannot
 * change what a server reads; `[ ] '` are reserved and stay as they are. A
 * decoded "." cannot form a "." or ".." segment: the parser has already
 * removed every segment spelled that way with %2e.
 */
function normalizePercent(s: string): string {
  if (!PCT_HINT.test(s)) return s;
  return s.replace(PCT_TOUCH, (m) => {
    if (m.length === 1) return `%${m.charCodeAt(0).toString(16).toUpperCase()}`;
    const c = Number.parseInt(m.slice(1), 16);
    return isUnreserved(c) ? String.fromCharCode(c) : m.toUpperCase();
  });
}

// ASP.NET cookieless sessions: /(S(24 chars))/ (2.0+, maybe with A(…) F(…)
// beside it), and /(24 chars)/ (1.x) before an .aspx page.
const ASPNET_PATH_ID = /\/\((?:[A-Za-z]\([0-9A-Za-z]{24}\))+\)(?=\/)/g;
const ASPNET1_PATH_ID = /\/\([0-9A-Za-z]{24}\)(?=\/.*\.aspx)/gi;
const JSESSIONID_PATH_PARAM = /;jsessionid=[^;/]+/gi;
const PATH_SESSION_HINT = /\(|;jsessionid=/i;

function stripPathSessionIds(path: string): string {
  if (!PATH_SESSION_HINT.test(path)) return path;
  const out = path.replace(ASPNET_PATH_ID, '').replace(ASPNET1_PATH_ID, '').replace(JSESSIONID_PATH_PARAM, '');
  // Never let the path begin with "//": without a host it would become one.
  return out.startsWith('//') && !path.startsWith('//') ? path : out;
}

const QUERY_SESSION_HINT = /sid|sessionid|cfid/i;
const ID32_KEY = /^(?:jsessionid|phpsessid|sid)$/i;
const ID32_VALUE = /^[0-9A-Za-z]{32}$/;
const ASP_KEY = /^aspsessionid[A-Za-z]{8}$/i;
const ASP_VALUE = /^[A-Za-z]{24}$/;
const CFID_KEY = /^cfid$/i;
const CFTOKEN_KEY = /^cftoken$/i;

function splitParam(p: string): [key: string, value: string | undefined] {
  const eq = p.indexOf('=');
  return eq < 0 ? [p, undefined] : [p.slice(0, eq), p.slice(eq + 1)];
}

/**
 * Removes each session-id parameter with the "&" after it; a removed last
 * parameter leaves the "&" before it (Heritrix's regular expressions do the
 * same, and fixup-query removes it). ColdFusion's CFID and CFTOKEN go only
 * together.
 */
function stripQuerySessionIds(query: string): string {
  if (!QUERY_SESSION_HINT.test(query)) return query;
  const params = query.split('&').map(splitParam);
  const hasCf = (re: RegExp): boolean => params.some(([k, v]) => re.test(k) && v !== undefined && v !== '');
  const stripCf = hasCf(CFID_KEY) && hasCf(CFTOKEN_KEY);
  const kept: string[] = [];
  let removed = false;
  params.forEach(([key, value], i) => {
    const session =
      value !== undefined &&
      ((ID32_KEY.test(key) && ID32_VALUE.test(value)) ||
        (ASP_KEY.test(key) && ASP_VALUE.test(value)) ||
        (stripCf && value !== '' && (CFID_KEY.test(key) || CFTOKEN_KEY.test(key))));
    if (!session) {
      kept.push(value === undefined ? key : `${key}=${value}`);
      return;
    }
    removed = true;
    if (i === params.length - 1 && i > 0) kept.push('');
  });
  return removed ? kept.join('&') : query;
}

function sortQuery(query: string): string {
  if (!query.includes('&')) return query;
  const params = query.split('&').map((p) => ({ key: splitParam(p)[0], p }));
  // Array.prototype.sort is stable (ES2019): equal keys keep their order.
  params.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return params.map((x) => x.p).join('&');
}

function fixupQuery(query: string): string | null {
  if (query === '') return null;
  if (query[0] !== '&' && !query.endsWith('&') && !query.includes('&&')) return query;
  const kept = query
    .split('&')
    .filter((p) => p !== '')
    .join('&');
  return kept === '' ? null : kept;
}

const PART_RULES: Partial<Record<CanonRuleName, PartRule>> = {
  'drop-fragment': {
    hint: /#/,
    apply: (p) => {
      if (p.fragment === null) return false;
      p.fragment = null;
      return true;
    },
  },
  'normalize-percent-encoding': {
    hint: PCT_HINT,
    apply: (p) => {
      const path = p.opaque ? p.path : normalizePercent(p.path);
      const query = p.query === null ? null : normalizePercent(p.query);
      const fragment = p.fragment === null ? null : normalizePercent(p.fragment);
      if (path === p.path && query === p.query && fragment === p.fragment) return false;
      p.path = path;
      p.query = query;
      p.fragment = fragment;
      return true;
    },
  },
  'strip-session-ids': {
    hint: /s(?:id|essionid)|cfid|\(/i,
    apply: (p) => {
      const path = p.opaque ? p.path : stripPathSessionIds(p.path);
      const query = p.query === null ? null : stripQuerySessionIds(p.query);
      if (path === p.path && query === p.query) return false;
      p.path = path;
      p.query = query;
      return true;
    },
  },
  'sort-query-params': {
    hint: /\?[^#]*&/,
    apply: (p) => {
      const query = p.query === null ? null : sortQuery(p.query);
      if (query === p.query) return false;
      p.query = query;
      return true;
    },
  },
  'fixup-query': {
    hint: /\?(?:[&#]|$)|&(?:[&#]|$)/,
    apply: (p) => {
      const query = p.query === null ? null : fixupQuery(p.query);
      if (query === p.query) return false;
      p.query = query;
      return true;
    },
  },
};

// ------------------------------------------------------------------- assembly

interface RewriteRule {
  readonly label: string;
  readonly re: RegExp;
  readonly replacement: string;
}

function compileRewriteRule(text: string, i: number): RewriteRule {
  const label = `rewrite_rules[${i}]`;
  const parsed = parseRewriteRule(text);
  if (!parsed.ok) throw new TrawlError('TRAWL_ERR_CONFIG_VALUE', `${label} ${JSON.stringify(text)}: expected ${parsed.expected}`);
  let re: RegExp;
  try {
    re = compileDotNetRegex(parsed.value.match);
  } catch (err) {
    throw new TrawlError('TRAWL_ERR_CONFIG_VALUE', `${label} ${JSON.stringify(text)}: ${(err as Error).message}`, { cause: err });
  }
  // Without the g flag, String.prototype.replace replaces the first match only.
  return { label, re, replacement: translateDotNetReplacement(parsed.value.replacement) };
}

/** Builds a canonicalizer; throws TRAWL_ERR_CONFIG_VALUE for an unknown rule or a bad rewrite rule. */
export function buildCanonicalizer(opts: CanonOptions): Canonicalizer {
  const known = new Set<string>(CANON_RULES.map((r) => r.name));
  for (const name of opts.rules) {
    if (!known.has(name)) {
      throw new TrawlError('TRAWL_ERR_CONFIG_VALUE', `unknown canonicalization rule ${JSON.stringify(name)}; expected one of ${[...known].join(', ')}`);
    }
  }
  const on = new Set<string>(opts.rules);
  const enabled = CANON_RULES.map((r) => r.name).filter((name) => on.has(name));
  const rewrites = (opts.rewriteRules ?? []).map(compileRewriteRule);
  const hostRules: Array<[CanonRuleName, HostRule]> = [];
  const partRules: Array<[CanonRuleName, PartRule]> = [];
  for (const name of enabled) {
    const host = HOST_RULES[name];
    const part = PART_RULES[name];
    if (host) hostRules.push([name, host]);
    if (part) partRules.push([name, part]);
  }

  function run(raw: string, trace: CanonStep[] | undefined): string | undefined {
    let u = parseUrl(raw);
    if (!u) return undefined;
    if (trace && u.href !== raw) trace.push({ rule: 'whatwg-parse', before: raw, after: u.href });

    if (rewrites.length > 0) {
      const start = u.href;
      let s = start;
      for (const r of rewrites) {
        const next = s.replace(r.re, r.replacement);
        if (trace && next !== s) trace.push({ rule: r.label, before: s, after: next });
        s = next;
      }
      if (s !== start) {
        u = parseUrl(s);
        if (!u) return undefined;
        if (trace && u.href !== s) trace.push({ rule: 'whatwg-parse', before: s, after: u.href });
      }
    }

    let href = u.href;
    for (const [name, rule] of hostRules) {
      if (!rule(u, href)) continue;
      const after = u.href;
      trace?.push({ rule: name, before: href, after });
      href = after;
    }

    if (!partRules.some(([, rule]) => rule.hint.test(href))) return href;
    const parts = partsOf(href);
    let changed = false;
    for (const [name, rule] of partRules) {
      const before = trace ? assemble(parts) : '';
      if (!rule.apply(parts)) continue;
      changed = true;
      if (trace) trace.push({ rule: name, before, after: assemble(parts) });
    }
    if (!changed) return href;
    // Reparse, so the result is always the parser's own serialisation.
    const s = assemble(parts);
    const out = parseUrl(s);
    if (!out) return undefined;
    if (trace && out.href !== s) trace.push({ rule: 'whatwg-parse', before: s, after: out.href });
    return out.href;
  }

  return {
    canonicalize: (url) => run(url, undefined),
    idempotent: rewrites.length === 0,
    explain: (url) => {
      const trace: CanonStep[] = [];
      return run(url, trace) === undefined ? [] : trace;
    },
  };
}
