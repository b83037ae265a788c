/**
 * The scope stage: may this URL enter the frontier? An ordered list of
 * rules, each of which may decide (allow or refuse, with a URI skip code)
 * or pass. The first rule that refuses ends the walk; every rule consulted
 * is kept in the trace, so a decision can always be explained.
 *
 *   URL ─► scheme ─► url-limits ─► exclude-exts ─► domains ─► uris ─► [dialects…]
 *       ─► fwdlinks ─► depth ─► recursion ─► allowed
 *
 * Other rule dialects (Elastic crawl rules, LOCKSS) plug in as more
 * `ScopeRule`s. robots.txt is consulted later, when the URI is leased,
 * because it needs the site's robots.txt fetched first.
 */

import { domainOf } from '../core/url.ts';
import type { UriSkipCode } from '../core/skip-codes.ts';
import { TrawlError } from '../core/errors.ts';
import { compileDotNetRegex } from '../config/dotnet-regex.ts';
import type { CollectionSettings } from '../config/registry.ts';
import { ipv4MaskMatches, ipv6MaskMatches, parseCrawlMode, parseIpv4Mask, parseIpv6Mask, type Ipv4Mask, type Ipv6Mask } from '../config/values.ts';

export interface ScopeInput {
  readonly url: URL;
  /** The page the link was found on; undefined for start URIs and added URIs. */
  readonly parent: URL | undefined;
  /** Page hops from a start URI, counted the crawlmode way. */
  readonly hops: number;
  /** True when the URL is the target of a redirect. */
  readonly viaRedirect: boolean;
  /** True for start URIs and URIs added by an operator (they skip fwdlinks and depth). */
  readonly seed: boolean;
}

export interface RuleVerdict {
  readonly allowed: boolean;
  readonly code?: UriSkipCode;
  readonly reason: string;
}

export interface ScopeRule {
  readonly name: string;
  /** The rule reads nothing but the URL (not the parent, hops, redirect or seed): its verdict holds for the URL wherever it is found. */
  readonly urlOnly?: boolean;
  /** A verdict, or undefined when the rule has nothing to say about this URL. */
  decide(input: ScopeInput): RuleVerdict | undefined;
}

export interface TraceStep {
  readonly rule: string;
  readonly verdict: 'allow' | 'deny' | 'pass';
  readonly reason: string;
}

export interface ScopeDecision {
  readonly allowed: boolean;
  readonly code: UriSkipCode | undefined;
  /** The rule that decided; "default" when none refused. */
  readonly decidedBy: string;
  /**
   * Refused by a rule that, like every rule before it, reads the URL alone:
   * the same URL is refused the same way wherever it is found, so a crawler
   * may remember the refusal instead of asking again.
   */
  readonly byUrlAlone: boolean;
  readonly reason: string;
  readonly trace: readonly TraceStep[];
}

export class Scope {
  readonly rules: readonly ScopeRule[];
  constructor(rules: readonly ScopeRule[]) {
    this.rules = rules;
  }

  decide(input: ScopeInput, explain = false): ScopeDecision {
    const trace: TraceStep[] = [];
    // An allowed URL is decided by the last rule that allowed it explicitly (an include rule), else by the default.
    let allowedBy: { rule: string; reason: string } | undefined;
    let urlAlone = true;
    for (const rule of this.rules) {
      const v = rule.decide(input);
      urlAlone &&= rule.urlOnly === true;
      if (explain) trace.push({ rule: rule.name, verdict: v === undefined ? 'pass' : v.allowed ? 'allow' : 'deny', reason: v?.reason ?? '' });
      if (v && !v.allowed) return { allowed: false, code: v.code, decidedBy: rule.name, reason: v.reason, byUrlAlone: urlAlone, trace };
      if (v?.allowed) allowedBy = { rule: rule.name, reason: v.reason };
    }
    return { allowed: true, code: undefined, decidedBy: allowedBy?.rule ?? 'default', reason: allowedBy?.reason ?? 'no rule refused it', byUrlAlone: false, trace };
  }
}

// ------------------------------------------------------------ rule lists

export interface StringRules {
  readonly exact: ReadonlySet<string>;
  readonly prefix: readonly string[];
  readonly suffix: readonly string[];
  readonly regexp: readonly RegExp[];
  /** ipmask / ip6mask (domain rules only): decided once the host's address is known. */
  readonly ipv4: readonly Ipv4Mask[];
  readonly ipv6: readonly Ipv6Mask[];
}

export interface RuleSection {
  readonly exact?: readonly string[];
  readonly prefix?: readonly string[];
  readonly suffix?: readonly string[];
  readonly regexp?: readonly string[];
  readonly ipmask?: readonly string[];
  readonly ip6mask?: readonly string[];
  readonly file?: readonly string[];
}

/** Reads a rule file's text; relative names are resolved by the caller. */
export type RuleFileReader = (name: string) => { path: string; text: string };

const RULE_TYPES = ['exact', 'prefix', 'suffix', 'regexp', 'ipmask', 'ip6mask'] as const;

/**
 * Compiles exact / prefix / suffix / regexp (and for domains ipmask /
 * ip6mask) lists, adding the rules of `file` lists (MS-FSCCFG 2.2.4.1: one
 * "ruletype:rule" per line). Undefined when there is no rule at all.
 */
export function compileRules(section: RuleSection, lower: boolean, readFile?: RuleFileReader): StringRules | undefined {
  const lists: Record<(typeof RULE_TYPES)[number], string[]> = {
    exact: [...(section.exact ?? [])], prefix: [...(section.prefix ?? [])], suffix: [...(section.suffix ?? [])],
    regexp: [...(section.regexp ?? [])], ipmask: [...(section.ipmask ?? [])], ip6mask: [...(section.ip6mask ?? [])],
  };
  const allowedTypes = lower ? RULE_TYPES : RULE_TYPES.slice(0, 4);
  for (const name of section.file ?? []) {
    if (!readFile) throw new TrawlError('TRAWL_ERR_CONFIG_VALUE', `rule file ${name}: no way to read rule files here`);
    const { path, text } = readFile(name);
    text.split(/\r?\n/).forEach((raw, i) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const colon = line.indexOf(':');
      const type = colon > 0 ? line.slice(0, colon).trim() : '';
      const rule = colon > 0 ? line.slice(colon + 1).trim() : '';
      if (!(allowedTypes as readonly string[]).includes(type) || rule === '') {
        throw new TrawlError('TRAWL_ERR_CONFIG_VALUE', `expected "ruletype:rule" with ruletype one of ${allowedTypes.join(', ')}, got ${JSON.stringify(line)}`, { location: { file: path, line: i + 1 } });
      }
      lists[type as (typeof RULE_TYPES)[number]].push(rule);
    });
  }
  const norm = (x: string): string => (lower ? x.toLowerCase() : x);
  const ipv4 = lists.ipmask.map((m) => {
    const p = parseIpv4Mask(m);
    if (!p.ok) throw new TrawlError('TRAWL_ERR_CONFIG_VALUE', `ipmask ${JSON.stringify(m)}: expected ${p.expected}`);
    return p.value;
  });
  const ipv6 = lists.ip6mask.map((m) => {
    const p = parseIpv6Mask(m);
    if (!p.ok) throw new TrawlError('TRAWL_ERR_CONFIG_VALUE', `ip6mask ${JSON.stringify(m)}: expected ${p.expected}`);
    return p.value;
  });
  const r: StringRules = {
    exact: new Set(lists.exact.map(norm)),
    prefix: lists.prefix.map(norm),
    suffix: lists.suffix.map(norm),
    regexp: lists.regexp.map((x) => compileDotNetRegex(x)),
    ipv4,
    ipv6,
  };
  return r.exact.size + r.prefix.length + r.suffix.length + r.regexp.length + ipv4.length + ipv6.length === 0 ? undefined : r;
}

function matchRules(r: StringRules, text: string): string | undefined {
  if (r.exact.has(text)) return `exact ${text}`;
  for (const p of r.prefix) if (text.startsWith(p)) return `prefix ${p}`;
  for (const x of r.suffix) if (text.endsWith(x)) return `suffix ${x}`;
  for (const re of r.regexp) if (re.test(text)) return `regexp ${re.source}`;
  return undefined;
}

function matchAddress(r: StringRules, ip: string): string | undefined {
  for (const m of r.ipv4) if (ipv4MaskMatches(m, ip)) return `ipmask (${ip})`;
  for (const m of r.ipv6) if (ipv6MaskMatches(m, ip)) return `ip6mask (${ip})`;
  return undefined;
}

const hasAddressRules = (r: StringRules | undefined): boolean => r !== undefined && r.ipv4.length + r.ipv6.length > 0;

/**
 * The domain rules once the host's address is known: ipmask / ip6mask can
 * only be judged at fetch time. Undefined when the rules have no address
 * masks (the discovery-time decision stands).
 */
export function addressRule(include: StringRules | undefined, exclude: StringRules | undefined): ((url: URL, ip: string) => RuleVerdict | undefined) | undefined {
  if (!hasAddressRules(include) && !hasAddressRules(exclude)) return undefined;
  return (url, ip) => {
    const host = url.hostname.toLowerCase();
    if (exclude) {
      const hit = matchRules(exclude, host) ?? matchAddress(exclude, ip);
      if (hit) return { allowed: false, code: 'do', reason: `${host} matches exclude_domains ${hit}` };
    }
    if (include) {
      const hit = matchRules(include, host) ?? matchAddress(include, ip);
      return hit ? { allowed: true, reason: `${host} matches include_domains ${hit}` } : { allowed: false, code: 'do', reason: `${host} (${ip}) matches no include_domains rule` };
    }
    return undefined;
  };
}

/** include_X / exclude_X as one rule: an empty include matches all, an empty exclude matches none (MS-FSCCFG 2.2.4.1–4). */
export function includeExcludeRule(name: string, code: UriSkipCode, subject: (u: URL) => string, include: StringRules | undefined, exclude: StringRules | undefined): ScopeRule {
  return {
    name,
    urlOnly: true,
    decide({ url }) {
      const text = subject(url);
      if (exclude) {
        const hit = matchRules(exclude, text);
        if (hit) return { allowed: false, code, reason: `${text} matches exclude ${hit}` };
      }
      if (include) {
        const hit = matchRules(include, text);
        if (hit) return { allowed: true, reason: `${text} matches include ${hit}` };
        // An address mask may still include it: decided when the host is resolved.
        if (hasAddressRules(include)) return undefined;
        return { allowed: false, code, reason: `${text} matches no include rule` };
      }
      return undefined;
    },
  };
}

// ------------------------------------------------------------ the basics

export interface BasicScopeOptions {
  readonly maxUrlLength: number;
  readonly maxUrlSegments: number;
  readonly maxUrlParams: number;
}

/** The path's non-empty segments (`/a//b/` has two), counted without splitting it: the scope judges every link a page has. */
export function segmentCount(pathname: string): number {
  let n = 0;
  let inSegment = false;
  for (let i = 0; i < pathname.length; i++) {
    const slash = pathname.charCodeAt(i) === 47;
    if (!slash && !inSegment) n++;
    inSegment = !slash;
  }
  return n;
}

/** The query's `&`-separated parameters (`?` alone or none: 0). */
function paramCount(search: string): number {
  if (search.length <= 1) return 0;
  let n = 1;
  for (let i = 1; i < search.length; i++) if (search.charCodeAt(i) === 38) n++;
  return n;
}

/**
 * How often a path pattern recurs, for max_uri_recursion ("the maximum
 * number of times a pattern can be appended to successors of a URI"): the
 * larger of the most frequent single segment (/a/x/a/y/a → 3) and the
 * longest back-to-back run of a segment sequence (/a/b/a/b → 2).
 */
export function pathRepetitions(pathname: string): number {
  const segs = pathname.split('/').filter(Boolean);
  let worst = segs.length > 0 ? 1 : 0;
  const counts = new Map<string, number>();
  for (const s of segs) {
    const n = (counts.get(s) ?? 0) + 1;
    counts.set(s, n);
    if (n > worst) worst = n;
  }
  for (let len = 2; len <= Math.floor(segs.length / 2); len++) {
    for (let start = 0; start + 2 * len <= segs.length; start++) {
      let reps = 1;
      while (start + (reps + 1) * len <= segs.length && segs.slice(start, start + len).join('/') === segs.slice(start + reps * len, start + (reps + 1) * len).join('/')) reps++;
      if (reps > worst) worst = reps;
    }
  }
  return worst;
}

/**
 * The rules of MS-FSCCFG that decide scope from the configuration alone:
 * allowed_schemes, the Elastic URL limits, exclude_exts, include/exclude
 * domains and URIs, crawlmode (fwdlinks, DEPTH:n) and max_uri_recursion.
 */
export function basicRules(s: CollectionSettings, readFile?: RuleFileReader, crawlmodeOf?: (url: URL) => CollectionSettings['crawlmode']): ScopeRule[] {
  const schemes = new Set(s.allowedSchemes.map((x) => `${x.toLowerCase()}:`));
  const exts = s.excludeExts.map((e) => (e.startsWith('.') ? e : `.${e}`).toLowerCase());
  const mode = parseCrawlMode(s.crawlmode.mode);
  const maxHops = mode.ok && mode.value.kind === 'depth' ? mode.value.depth : undefined;
  const lim = s.trawlLimits;
  return [
    {
      name: 'allowed_schemes',
      urlOnly: true,
      decide: ({ url }) => (schemes.has(url.protocol) ? undefined : { allowed: false, code: 'ch', reason: `scheme ${url.protocol.slice(0, -1)} is not in allowed_schemes (${s.allowedSchemes.join(', ')})` }),
    },
    {
      name: 'trawl_limits',
      urlOnly: true,
      decide: ({ url }) => {
        if (url.href.length > lim.maxUrlLength) return { allowed: false, code: 'ur', reason: `URL is ${url.href.length} characters, over max_url_length ${lim.maxUrlLength}` };
        const segs = segmentCount(url.pathname);
        if (segs > lim.maxUrlSegments) return { allowed: false, code: 'ur', reason: `path has ${segs} segments, over max_url_segments ${lim.maxUrlSegments}` };
        const params = paramCount(url.search);
        if (params > lim.maxUrlParams) return { allowed: false, code: 'ur', reason: `query has ${params} parameters, over max_url_params ${lim.maxUrlParams}` };
        return undefined;
      },
    },
    {
      name: 'exclude_exts',
      urlOnly: true,
      decide: ({ url }) => {
        const path = url.pathname.toLowerCase();
        const hit = exts.find((e) => path.endsWith(e));
        return hit ? { allowed: false, code: 'ur', reason: `path ends with excluded extension ${hit}` } : undefined;
      },
    },
    includeExcludeRule('include_domains/exclude_domains', 'do', (u) => u.hostname.toLowerCase(), compileRules(s.includeDomains, true, readFile), compileRules(s.excludeDomains, true, readFile)),
    includeExcludeRule('include_uris/exclude_uris', 'ur', (u) => u.href, compileRules(s.includeUris, false, readFile), compileRules(s.excludeUris, false, readFile)),
    {
      name: 'crawlmode.fwdlinks',
      decide: ({ url, parent, seed, viaRedirect }) => {
        if (seed || !parent) return undefined;
        const other = domainOf(url) !== domainOf(parent);
        if (!other) return undefined;
        // A sub-collection's own crawlmode applies to its URIs (MS-FSCCFG 2.2.4.33), when one differs.
        const cm = crawlmodeOf ? crawlmodeOf(url) : s.crawlmode;
        if (viaRedirect && !cm.fwdredirects) return { allowed: false, code: 'do', reason: `redirect to another domain (${domainOf(url)}) and fwdredirects is no` };
        if (!viaRedirect && !cm.fwdlinks) return { allowed: false, code: 'do', reason: `link to another domain (${domainOf(url)}) and fwdlinks is no` };
        return undefined;
      },
    },
    {
      name: 'crawlmode.mode',
      decide: ({ url, hops, seed }) => {
        if (seed) return undefined;
        if (crawlmodeOf) {
          const cm = crawlmodeOf(url);
          const m = parseCrawlMode(cm.mode);
          const max = m.ok && m.value.kind === 'depth' ? m.value.depth : undefined;
          return max !== undefined && hops > max ? { allowed: false, code: 'de', reason: `${hops} hops from a start URI, beyond ${cm.mode}` } : undefined;
        }
        return maxHops !== undefined && hops > maxHops ? { allowed: false, code: 'de', reason: `${hops} hops from a start URI, beyond ${s.crawlmode.mode}` } : undefined;
      },
    },
    {
      name: 'max_uri_recursion',
      urlOnly: true,
      decide: ({ url }) => {
        // A pattern cannot recur more often than the path has segments: most paths need no closer look.
        if (segmentCount(url.pathname) <= s.maxUriRecursion) return undefined;
        const reps = pathRepetitions(url.pathname);
        return reps > s.maxUriRecursion ? { allowed: false, code: 'ur', reason: `a path pattern repeats ${reps} times, over max_uri_recursion ${s.maxUriRecursion}` } : undefined;
      },
    },
  ];
}

/** A test for a sub-collection's own include/exclude rules (MS-FSCCFG 2.2.4.33): does the URL belong to it? */
export function subcollectionMatcher(sub: CollectionSettings, readFile?: RuleFileReader): (url: URL) => boolean {
  const domains = includeExcludeRule('d', 'do', (u) => u.hostname.toLowerCase(), compileRules(sub.includeDomains, true, readFile), compileRules(sub.excludeDomains, true, readFile));
  const uris = includeExcludeRule('u', 'ur', (x) => x.href, compileRules(sub.includeUris, false, readFile), compileRules(sub.excludeUris, false, readFile));
  return (url) => {
    const input: ScopeInput = { url, parent: undefined, hops: 0, viaRedirect: false, seed: true };
    const d = domains.decide(input);
    if (d && !d.allowed) return false;
    const u = uris.decide(input);
    if (u && !u.allowed) return false;
    return d !== undefined || u !== undefined;
  };
}
