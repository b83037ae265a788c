/**
 * Elastic web crawler crawl rules as a scope rule (the `trawl_crawl_rules`
 * extension section: one section per domain URL, attrib `rules`).
 *
 *   trawl_crawl_rules
 *     ├─ https://example.com        rules = ["disallow begins /blog", "allow regex .*"]
 *     └─ https://shop.example.com   rules = [...]
 *
 *   URL ─► site (scheme://host:port) ─► that domain's rules, in order
 *       │                                ├─ first match → its policy decides
 *       │                                └─ none → the implicit last rule: allow
 *       └─ no section for the site → no verdict (undefined)
 *
 * Decisions, each resting on the Elastic web crawler reference ("Crawl rule",
 * "Crawl rule logic", "Crawl rule matching", "Crawl rule order"):
 *
 * - The subject is the URL minus its domain: "Each URL has a domain (e.g.
 *   https://example.com) and a path (e.g. /category/clothing)". The URL is
 *   split into those two parts only, so the query string belongs to the
 *   path side and is matched too (`pathAndQuery`: `/a/b?x=1`); the fragment
 *   never reaches the server and is not part of it. The Elastic Open
 *   Crawler likewise matches its rules against the whole URL, query included.
 *   One consequence: `ends .pdf` does not match `/a.pdf?download=1`.
 * - Paths are compared as the WHATWG URL serialises them (percent-encoded),
 *   and case-sensitively (Ruby regular expressions are case-sensitive).
 * - begins / ends / contains: "The path pattern is a literal string except
 *   for the character *, which is a meta character that will match
 *   anything" — `*` matches any run of characters, `/` and the empty run
 *   included. begins is anchored at the start of the path, ends at its end,
 *   contains at neither.
 * - regex: "The rule matches when the path pattern matches the beginning of
 *   the path" — the pattern is anchored at the start (`^(?:pattern)`), not at
 *   the end, so `\/[0-9]{3,5}` matches `/2020` and `[0-9]{3,5}` does not.
 *   The group keeps an alternation (`/a|/b`) anchored as a whole.
 * - "compatible with the Ruby language regular expression engine": patterns
 *   run on JavaScript's engine. Ruby escapes that JavaScript would silently
 *   read as plain letters are translated (`\A` → `^`, `\z` → `$`, `\Z` → end
 *   or before a final newline, `\h` → hex digit, `\H` → not a hex digit);
 *   `\G \K \R \X \p{…} \P{…}` are refused with an error rather than
 *   misread. Other Ruby-only syntax (possessive `*+`, atomic `(?>…)`,
 *   inline `(?i)`) does not compile in JavaScript and is refused the same way.
 * - Domains: "Each unique combination of protocol and hostname is a separate
 *   domain" and the sitemap section's "exact domain (here defined as scheme +
 *   host + port)". Domain URLs and crawled URLs are both reduced to
 *   `scheme://host:port` (`siteOf`), so `https://example.com` and
 *   `https://example.com:443` are one domain. "The domain URL must not
 *   include a path": a path, query or fragment is an error.
 * - Order: "The crawler evaluates the crawl rules in order. The first matching
 *   crawl rule determines the policy". When none matches, the URL is allowed:
 *   the dashboard's default last rule "Allow if Regex .*", which cannot be
 *   deleted or moved, is always there, so it is implied here.
 */

import { compileSafeRegex } from '../core/safe-regex.ts';
import { pathAndQuery, siteOf } from '../core/url.ts';
import type { ScopeRule } from './scope.ts';

export interface ElasticRule {
  readonly policy: 'allow' | 'disallow';
  readonly type: 'begins' | 'ends' | 'contains' | 'regex';
  /** The path pattern as written (for regex, before the Ruby translation). */
  readonly pattern: string;
}

const RULE_RE = /^(allow|disallow)\s+(begins|ends|contains|regex)\s+(\S.*)$/;

/**
 * Parses one `trawl_crawl_rules` member: "allow|disallow begins|ends|contains|regex PATTERN".
 * Leading and trailing white space is dropped; the pattern is the rest of
 * the text after the type. Throws an Error that quotes the text when it has
 * another shape, or when a regex pattern does not compile.
 */
export function parseElasticRule(text: string): ElasticRule {
  const m = RULE_RE.exec(text.trim());
  if (!m) throw new Error(`Elastic crawl rule ${JSON.stringify(text)}: expected "allow|disallow begins|ends|contains|regex PATTERN", e.g. "disallow begins /admin"`);
  const rule: ElasticRule = { policy: m[1] as ElasticRule['policy'], type: m[2] as ElasticRule['type'], pattern: m[3]! };
  try {
    compileElasticRule(rule);
  } catch (err) {
    throw new Error(`Elastic crawl rule ${JSON.stringify(text)}: ${(err as Error).message}`, { cause: err });
  }
  return rule;
}

/** A wildcard pattern as regex source: literal text, with `*` matching anything. */
function wildcardSource(pattern: string): string {
  return pattern.split('*').map(escapeRegex).join('.*');
}

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

const HEX = '0-9a-fA-F';
const RUBY_ONLY = new Set(['G', 'K', 'R', 'X', 'p', 'P']);

/**
 * Rewrites the Ruby escapes that JavaScript (without the `u` flag) would
 * read as plain letters. Walks the pattern once, tracking character classes
 * (as JavaScript delimits them) so that `\h` can be written inside one.
 */
function rubyRegexToJs(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const n = pattern[i + 1];
      if (n === undefined) throw new Error('the regular expression ends with a lone backslash');
      i++;
      if (n === 'h') out += inClass ? HEX : `[${HEX}]`;
      else if (n === 'H' && !inClass) out += `[^${HEX}]`;
      else if (n === 'H') throw new Error(`the Ruby escape \\H inside a character class is not supported (at offset ${i - 1})`);
      else if (!inClass && n === 'A') out += '^';
      else if (!inClass && n === 'z') out += '$';
      else if (!inClass && n === 'Z') out += '(?:\\n?$)'; // not a lookahead, which could not run in linear time; a path has no line end
      else if (RUBY_ONLY.has(n)) throw new Error(`the Ruby escape \\${n} is not supported (at offset ${i - 1})`);
      else out += `\\${n}`;
      continue;
    }
    if (c === '[' && !inClass) inClass = true;
    else if (c === ']' && inClass) inClass = false; // as JavaScript reads it: `]` always closes (`[]` is empty)
    out += c;
  }
  return out;
}

/**
 * The regular expression a rule stands for, matched against a path (and
 * query). Every kind is compiled by core/safe-regex.ts, so no rule can stall
 * a match; a `regex` pattern V8's linear-time engine cannot run (a
 * backreference, a lookahead) is refused with the reason.
 */
function compileElasticRule(rule: ElasticRule): RegExp {
  switch (rule.type) {
    case 'begins':
      return compileSafeRegex(`^${wildcardSource(rule.pattern)}`, '', 'the pattern');
    case 'ends':
      return compileSafeRegex(`${wildcardSource(rule.pattern)}$`, '', 'the pattern');
    case 'contains':
      return compileSafeRegex(wildcardSource(rule.pattern), '', 'the pattern');
    case 'regex':
      return compileSafeRegex(`^(?:${rubyRegexToJs(rule.pattern)})`, '', 'the regex');
  }
}

/**
 * Does the rule match this path? `path` is everything after the domain:
 * the path, which always begins with `/`, and the query string if there is
 * one (see the header). Throws only when a regex pattern does not compile,
 * which `parseElasticRule` already reports.
 */
export function elasticRuleMatches(rule: ElasticRule, path: string): boolean {
  return compileElasticRule(rule).test(path);
}

interface CompiledDomain {
  readonly url: string;
  readonly rules: ReadonlyArray<{ readonly text: string; readonly rule: ElasticRule; readonly re: RegExp }>;
}

/**
 * The crawl rules of every configured domain as one scope rule. Keys are
 * domain URLs (scheme, host, optional port; no path), values hold the
 * ordered rule texts. A URL on a domain without a section gets no verdict;
 * otherwise the first matching rule's policy is the verdict (a disallow
 * refuses with code `ur`), and a URL no rule matches is allowed by the
 * implicit last rule. Throws on a bad domain URL or rule, naming both.
 */
export function elasticScopeRule(domains: Readonly<Record<string, { readonly rules: readonly string[] }>>): ScopeRule {
  const bySite = new Map<string, CompiledDomain>();
  for (const [domainUrl, { rules }] of Object.entries(domains)) {
    let u: URL;
    try {
      u = new URL(domainUrl);
    } catch {
      throw new Error(`trawl_crawl_rules: ${JSON.stringify(domainUrl)} is not a domain URL (expected scheme, host and optional port, e.g. https://www.example.com)`);
    }
    if (u.search !== '' || u.hash !== '' || (u.pathname !== '/' && u.pathname !== '')) {
      throw new Error(`trawl_crawl_rules: the domain URL ${domainUrl} must not include a path, query or fragment (give ${u.origin})`);
    }
    const site = siteOf(u);
    if (bySite.has(site)) throw new Error(`trawl_crawl_rules: ${domainUrl} and ${bySite.get(site)!.url} are the same domain (${site})`);
    const compiled = rules.map((text, i) => {
      try {
        const rule = parseElasticRule(text);
        return { text: text.trim(), rule, re: compileElasticRule(rule) };
      } catch (err) {
        throw new Error(`trawl_crawl_rules: rule #${i + 1} of ${domainUrl}: ${(err as Error).message}`, { cause: err });
      }
    });
    bySite.set(site, { url: u.origin, rules: compiled });
  }

  return {
    name: 'trawl_crawl_rules',
    decide({ url }) {
      const domain = bySite.get(siteOf(url));
      if (!domain) return undefined;
      const path = pathAndQuery(url);
      for (const [i, r] of domain.rules.entries()) {
        if (!r.re.test(path)) continue;
        const reason = `Elastic crawl rule #${i + 1} "${r.text}" of ${domain.url} matches ${path}`;
        return r.rule.policy === 'allow' ? { allowed: true, reason } : { allowed: false, code: 'ur', reason };
      }
      return { allowed: true, reason: `no Elastic crawl rule of ${domain.url} matches ${path}; the implicit last rule "allow regex .*" allows it` };
    },
  };
}
