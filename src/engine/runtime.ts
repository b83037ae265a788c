/**
 * A collection's settings turned into what the engine uses at run time:
 * parsed error policies, request headers, the product token, the scope, the
 * sub-collection matchers and priority levels. Built once per cycle.
 */

import { resolveSettings, subcollectionNames } from '../config/effective.ts';
import type { CollectionConfig } from '../config/model.ts';
import type { CollectionSettings } from '../config/registry.ts';
import { parseErrorPolicy, parseSlotDelay, parseTimeSlot, slotContains, type ErrorPolicy, type SlotDelay, type TimeSlot } from '../config/values.ts';
import { compileDotNetRegex } from '../config/dotnet-regex.ts';
import { DEFAULT_USER_AGENT, PRODUCT_TOKEN } from '../core/version.ts';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { TrawlError } from '../core/errors.ts';
import { buildCanonicalizer, type Canonicalizer, type CanonRuleName } from '../scope/canonicalize.ts';
import { elasticScopeRule } from '../scope/elastic-rules.ts';
import { compileLockssRules, lockssScopeRule } from '../scope/lockss-rules.ts';
import { addressRule, basicRules, compileRules, includeExcludeRule, Scope, subcollectionMatcher, type RuleFileReader, type RuleVerdict, type ScopeRule } from '../scope/scope.ts';

/**
 * How often a suspended variable_delay slot (MS-FSCCFG 2.2.4.23) is looked
 * at again: the crawl loop for the collection's own slots, a site task for a
 * sub-collection's. Slots are given to the minute, so half a minute late at
 * most.
 */
export const SUSPEND_RECHECK_MS = 30_000;

export interface SubRuntime {
  readonly name: string;
  readonly settings: CollectionSettings;
  readonly matches: (url: URL) => boolean;
  /** Request headers from the sub-collection's `headers` (the collection's when it sets none). */
  readonly headers: Readonly<Record<string, string>>;
}

export interface Runtime {
  readonly name: string;
  readonly settings: CollectionSettings;
  readonly scope: Scope;
  readonly subs: readonly SubRuntime[];
  /** Request headers from `headers`, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The request headers of a URI of this sub-collection (MS-FSCCFG 2.2.4.33 lets one set its own `headers`). */
  headersFor(sub: string | undefined): Readonly<Record<string, string>>;
  /** The robots.txt product token: the User-Agent's first product name. */
  readonly productToken: string;
  /** The http_errors policy for a status (exact, then wildcard such as 4xx or 40X), or for net / ttl / int. */
  httpPolicy(key: number | 'net' | 'ttl' | 'int'): ErrorPolicy;
  /** The ftp_errors policy for an FTP reply code (exact, then wildcard such as 5xx), or for net / ttl / int (MS-FSCCFG 2.2.4.13). */
  ftpPolicy(key: number | 'net' | 'ttl' | 'int'): ErrorPolicy;
  /** The settings that apply to a URI of this sub-collection (or the collection). */
  settingsFor(sub: string | undefined): CollectionSettings;
  /** Which sub-collection a URL belongs to (the first whose rules it matches). */
  subOf(url: URL): string | undefined;
  /** The priority level for a URL (workqueue_priority put_scheme). */
  priorityOf(url: URL, start: boolean): number;
  /** The delay in ms at `atMs` (epoch ms, judged in local time) for a sub-collection (variable_delay), or 'suspend'. */
  delayNow(sub: string | undefined, atMs: number): number | 'suspend';
  readonly excludeHeaders: ReadonlyArray<readonly [string, readonly RegExp[]]>;
  /** URL canonicalization (rewrite_rules, then the named rules, sort_query_params included), applied before the seen check. */
  readonly canon: Canonicalizer;
  /** ipmask / ip6mask domain rules, judged once the host's address is known; undefined when there are none. */
  readonly addressScope: ((url: URL, ip: string) => RuleVerdict | undefined) | undefined;
}

/**
 * The `headers` lines by lower-case name. MS-FSCCFG calls them additional
 * headers, and its default is the crawler's User-Agent: a list that names
 * no User-Agent keeps trawl's, so that a crawl always says who it is (and
 * robots.txt groups are matched by the same name).
 */
export function parseHeaders(lines: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  out['user-agent'] ??= DEFAULT_USER_AGENT;
  return out;
}

/**
 * RFC 9309 2.2.1: the product token is the name part of the User-Agent
 * ("trawl" of "trawl/0.1.0"). Digits are kept ("MJ12bot" of "MJ12bot/v1.4"),
 * although the RFC's ABNF has none: cut at the first digit, the token would
 * name another crawler's group (`User-agent: MJ`). robots.ts keeps digits in
 * user-agent lines too, so `User-agent: MJ12bot` is this crawler's group.
 * A browser-style User-Agent names the crawler after "compatible;"
 * ("Mozilla/5.0 (compatible; CiteSeerBot/1.12.1 +http://…)" → CiteSeerBot,
 * as Googlebot's and bingbot's do): that name, not "Mozilla", is the token.
 */
export function productTokenOf(userAgent: string | undefined): string {
  const ua = userAgent ?? '';
  const compatible = /\(\s*compatible\s*;\s*([A-Za-z0-9_-]+)/i.exec(ua);
  if (compatible) return compatible[1]!;
  const m = /^([A-Za-z0-9_-]+)/.exec(ua);
  return m ? m[1]! : PRODUCT_TOKEN;
}

function compilePolicies(table: Readonly<Record<string, string>>): (key: number | 'net' | 'ttl' | 'int') => ErrorPolicy {
  const exact = new Map<string, ErrorPolicy>();
  const wild: Array<[RegExp, ErrorPolicy, number]> = [];
  for (const [k, v] of Object.entries(table)) {
    const p = parseErrorPolicy(v);
    if (!p.ok) continue;
    if (/[xX]/.test(k)) wild.push([new RegExp(`^${k.replace(/[xX]/g, '\\d')}$`), p.value, (k.match(/[xX]/g) ?? []).length]);
    else exact.set(k, p.value);
  }
  wild.sort((a, b) => a[2] - b[2]); // 40X before 4XX: the more specific wildcard first
  const keep: ErrorPolicy = { action: 'keep', afterFailures: 0, retries: 0 };
  return (key) => {
    const k = String(key);
    const e = exact.get(k);
    if (e) return e;
    for (const [re, p] of wild) if (re.test(k)) return p;
    return keep;
  };
}

function compileSlots(table: Readonly<Record<string, string>>): Array<[TimeSlot, SlotDelay]> {
  const out: Array<[TimeSlot, SlotDelay]> = [];
  for (const [k, v] of Object.entries(table)) {
    const slot = parseTimeSlot(k);
    const delay = parseSlotDelay(v);
    if (slot.ok && delay.ok) out.push([slot.value, delay.value]);
  }
  return out;
}

export interface RuntimeOptions {
  readonly node?: string;
  /** Where relative rule files (include_domains file, …) are found. */
  readonly baseDir?: string;
  /** Extra scope rules (other dialects), run after the basic ones. */
  readonly extraRules?: readonly ScopeRule[];
}

/**
 * The other rule dialects, after MS-FSCCFG's own rules: Elastic crawl rules
 * (trawl_crawl_rules) then LOCKSS au_crawlrules (trawl_lockss). Each may
 * refuse; an allow is "no objection". See README "How the rule dialects combine".
 */
export function dialectRules(s: CollectionSettings): ScopeRule[] {
  const rules: ScopeRule[] = [];
  if (Object.keys(s.crawlRules).length > 0) {
    rules.push(elasticScopeRule(Object.fromEntries(Object.entries(s.crawlRules).map(([d, v]) => [d, { rules: v.rules ?? [] }]))));
  }
  if (s.lockss.crawlRules && s.lockss.crawlRules.length > 0) {
    try {
      rules.push(lockssScopeRule(compileLockssRules(s.lockss.crawlRules, s.lockss.params)));
    } catch (err) {
      throw new TrawlError('TRAWL_ERR_CONFIG_VALUE', `trawl_lockss.crawl_rules: ${(err as Error).message}`);
    }
  }
  return rules;
}

/** Reads MS-FSCCFG rule files relative to `baseDir`, failing with the path when one cannot be read. */
export function ruleFileReader(baseDir: string): RuleFileReader {
  return (name) => {
    const path = resolvePath(baseDir, name);
    try {
      return { path, text: readFileSync(path, 'utf8') };
    } catch (err) {
      throw new TrawlError('TRAWL_ERR_IO', `cannot read rule file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { location: { file: path } });
    }
  };
}

/** The collection's URL canonicalization (rewrite_rules, the canonicalization rules, sort_query_params), as the crawl applies it. */
export function canonicalizerOf(settings: CollectionSettings): Canonicalizer {
  return buildCanonicalizer({
    rules: [...(settings.urls.canonicalization as readonly CanonRuleName[]), ...(settings.sortQueryParams ? (['sort-query-params'] as const) : [])],
    ...(settings.rewriteRules ? { rewriteRules: settings.rewriteRules } : {}),
  });
}

export function buildRuntime(c: CollectionConfig, opts: RuntimeOptions = {}): Runtime {
  const nodeOpt = opts.node !== undefined ? { node: opts.node } : {};
  const settings = resolveSettings(c, nodeOpt);
  const readFile = ruleFileReader(opts.baseDir ?? process.cwd());
  const subs: SubRuntime[] = subcollectionNames(c, opts.node).map((name) => {
    const s = resolveSettings(c, { ...nodeOpt, subcollection: name });
    return { name, settings: s, matches: subcollectionMatcher(s, readFile), headers: parseHeaders(s.headers) };
  });
  const headers = parseHeaders(settings.headers);
  // MS-FSCCFG 2.2.4.33: a sub-collection's own crawlmode applies to its URIs; looked up per link only when one differs.
  const ownCrawlmode = subs.filter((s) => JSON.stringify(s.settings.crawlmode) !== JSON.stringify(settings.crawlmode));
  const crawlmodeOf = ownCrawlmode.length === 0 ? undefined : (url: URL) => subs.find((s) => s.matches(url))?.settings.crawlmode ?? settings.crawlmode;
  const policy = compilePolicies(settings.httpErrors);
  const ftpPolicy = compilePolicies(settings.ftpErrors);
  const slots = new Map<string | undefined, Array<[TimeSlot, SlotDelay]>>([[undefined, compileSlots(settings.variableDelay)]]);
  for (const sub of subs) slots.set(sub.name, compileSlots(sub.settings.variableDelay));
  const wq = settings.workqueuePriority;
  const levels = Object.entries(wq.priorityLevels)
    .map(([level, def]) => ({ level: Number(level), def }))
    .sort((a, b) => a.level - b.level);
  const levelMatchers = levels.map(({ level, def }) => {
    const inDomains = includeExcludeRule('d', 'do', (u) => u.hostname.toLowerCase(), compileRules(def.includeDomains, true), undefined);
    const inUris = includeExcludeRule('u', 'ur', (u) => u.href, compileRules(def.includeUris, false), undefined);
    return { level, test: (url: URL) => {
      const input = { url, parent: undefined, hops: 0, viaRedirect: false, seed: true };
      const d = inDomains.decide(input);
      const u = inUris.decide(input);
      return (d?.allowed ?? false) || (u?.allowed ?? false);
    } };
  });
  const excludeHeaders = Object.entries(settings.excludeHeaders).map(([name, patterns]) => [name.toLowerCase(), patterns.map((p) => compileDotNetRegex(p))] as const);
  return {
    name: c.name,
    settings,
    scope: new Scope([...basicRules(settings, readFile, crawlmodeOf), ...dialectRules(settings), ...(opts.extraRules ?? [])]),
    canon: canonicalizerOf(settings),
    addressScope: addressRule(compileRules(settings.includeDomains, true, readFile), compileRules(settings.excludeDomains, true, readFile)),
    subs,
    headers,
    productToken: settings.robots.productToken ?? productTokenOf(headers['user-agent']),
    httpPolicy: policy,
    ftpPolicy,
    settingsFor: (sub) => subs.find((s) => s.name === sub)?.settings ?? settings,
    headersFor: (sub) => (sub === undefined ? headers : (subs.find((s) => s.name === sub)?.headers ?? headers)),
    subOf: (url) => subs.find((s) => s.matches(url))?.name,
    priorityOf: (url, start) => {
      if (start) return wq.startUriPri;
      if (wq.putScheme === 'include') for (const m of levelMatchers) if (m.test(url)) return m.level;
      return wq.default;
    },
    delayNow: (sub, atMs) => {
      const s = sub === undefined ? settings : (subs.find((x) => x.name === sub)?.settings ?? settings);
      const table = slots.get(sub) ?? slots.get(undefined)!;
      // Asked several times per fetch (the crawl loop, each request's start and send): the local
      // date is worked out only when variable_delay has slots to match it against.
      if (table.length > 0) {
        const at = new Date(atMs);
        const now = { day: (at.getDay() + 6) % 7 /* Monday = 0 */, minuteOfDay: at.getHours() * 60 + at.getMinutes() };
        for (const [slot, delay] of table) {
          if (slotContains(slot, now)) return delay.kind === 'suspend' ? 'suspend' : delay.delayS * 1000;
        }
      }
      return s.delayS * 1000;
    },
    excludeHeaders,
  };
}
