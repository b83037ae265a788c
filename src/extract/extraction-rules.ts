/**
 * The Elastic Open Crawler's extraction rulesets (docs/features/EXTRACTION_RULES.md
 * of elastic/crawler): custom fields of the search document, per domain.
 *
 *   trawl_extraction_rulesets.<ruleset>   domain       https://example.com
 *                                         url_filters  ["ends /cities", "begins /blog"]
 *                                         rules        ['{"action":"extract","field_name":"cities",
 *                                                         "selector":".city","join_as":"array","source":"html"}']
 *
 *   document URL ─► rulesets of its domain (scheme://host:port), in order
 *                ─► any url_filter matches (none = every URL)? ─► each rule, in order:
 *                     extract html   the text of every element the CSS selector selects
 *                     extract url    the regular expression on the URL: its groups, else the match
 *                                    ─► join_as array, or string (joined by a space; '' when none)
 *                     set            `value` when the selector selects something (html) or
 *                                    the expression matches the URL (url); else nothing
 *                ─► field_name = result (a later rule or ruleset replaces an earlier one)
 *
 * A url_filter is written as a crawl rule without its policy: "begins /blog",
 * "ends /cities", "contains help", "regex ^/blog/.*" (matched as
 * `trawl_crawl_rules` matches, scope/elastic-rules.ts). A rule is a JSON
 * object with the Open Crawler's keys (action, field_name, selector,
 * join_as, source, value), so that a YAML ruleset converts member for member.
 * Selectors are CSS (css-select over htmlparser2's DOM); XPath selectors,
 * which the Open Crawler also takes, are refused as not supported.
 */

import { compile, selectAll } from 'css-select';
import type { AnyNode, Document, Element } from 'domhandler';
import { compileSafeRegex } from '../core/safe-regex.ts';
import { pathAndQuery, siteOf } from '../core/url.ts';
import { elasticRuleMatches, parseElasticRule, type ElasticRule } from '../scope/elastic-rules.ts';
import { RESERVED_FIELD_NAMES, nodeText } from './elastic-content.ts';

export type FieldValue = string | string[] | number | boolean | readonly unknown[] | Readonly<Record<string, unknown>>;

export interface ExtractionRule {
  readonly action: 'extract' | 'set';
  readonly fieldName: string;
  readonly source: 'html' | 'url';
  readonly joinAs: 'array' | 'string';
  readonly selector: string;
  readonly value?: FieldValue;
  /** The compiled selector: a CSS query for html, an expression for url. */
  readonly css?: (n: AnyNode) => boolean;
  readonly re?: RegExp;
}

export interface Ruleset {
  readonly name: string;
  /** scheme://host:port of the domain it applies to. */
  readonly site: string;
  readonly urlFilters: readonly ElasticRule[];
  readonly rules: readonly ExtractionRule[];
}

/** One ruleset's settings, as `trawl_extraction_rulesets.<ruleset>` holds them. */
export interface RulesetSettings {
  readonly domain?: string | undefined;
  readonly urlFilters?: readonly string[] | undefined;
  readonly rules?: readonly string[] | undefined;
}

/** "TYPE PATTERN" → a url filter; throws an Error saying what is wrong. */
export function parseUrlFilter(text: string): ElasticRule {
  const m = /^\s*(begins|ends|contains|regex)\s+(\S.*?)\s*$/.exec(text);
  if (!m) throw new Error(`url filter ${JSON.stringify(text)}: expected "begins|ends|contains|regex PATTERN", e.g. "ends /cities"`);
  if (m[1] === 'begins' && !m[2]!.startsWith('/')) throw new Error(`url filter ${JSON.stringify(text)}: a begins pattern must start with /`);
  return parseElasticRule(`allow ${m[1]} ${m[2]}`);
}

/** A Ruby-style leading (?i) becomes the i flag; the rest compiles as any configured expression does. */
function compileUrlRegex(selector: string): RegExp {
  const ci = selector.startsWith('(?i)');
  return compileSafeRegex(ci ? selector.slice(4) : selector, ci ? 'i' : '', 'the selector');
}

/** One rule member (a JSON object with the Open Crawler's keys) → a rule; throws an Error saying what is wrong. */
export function parseExtractionRule(text: string): ExtractionRule {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`extraction rule ${text}: not a JSON object (${(err as Error).message})`, { cause: err });
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new Error(`extraction rule ${text}: not a JSON object`);
  const known = new Set(['action', 'field_name', 'selector', 'join_as', 'source', 'value']);
  const unknown = Object.keys(o).filter((k) => !known.has(k));
  if (unknown.length > 0) throw new Error(`extraction rule ${text}: unknown key ${unknown.map((k) => JSON.stringify(k)).join(', ')} (expected action, field_name, selector, join_as, source, value)`);
  const { action, field_name: fieldName, selector, join_as: joinAs, source, value } = o;
  if (action !== 'extract' && action !== 'set') throw new Error(`extraction rule ${text}: action must be extract or set`);
  if (typeof fieldName !== 'string' || fieldName === '') throw new Error(`extraction rule ${text}: field_name must be a non-empty string`);
  if (RESERVED_FIELD_NAMES.has(fieldName)) throw new Error(`extraction rule ${text}: field_name ${fieldName} is one of the document's own fields`);
  if (source !== 'html' && source !== 'url') throw new Error(`extraction rule ${text}: source must be html or url`);
  if (action === 'extract' && joinAs !== 'array' && joinAs !== 'string') throw new Error(`extraction rule ${text}: join_as must be array or string`);
  if (action === 'set' && (value === undefined || value === null)) throw new Error(`extraction rule ${text}: a set rule needs a value`);
  if (typeof selector !== 'string' || selector.trim() === '') throw new Error(`extraction rule ${text}: selector must be a non-empty string`);
  const base = { action: action as ExtractionRule['action'], fieldName, source: source as ExtractionRule['source'], joinAs: joinAs === 'array' ? 'array' as const : 'string' as const, selector, ...(value !== undefined ? { value: value as FieldValue } : {}) };
  if (source === 'url') {
    try {
      return { ...base, re: compileUrlRegex(selector) };
    } catch (err) {
      throw new Error(`extraction rule ${text}: ${(err as Error).message}`, { cause: err });
    }
  }
  if (/^(\/|\.\/|\(|\.\.)/.test(selector.trim())) throw new Error(`extraction rule ${text}: the selector looks like XPath, which this version does not support; write it as a CSS selector`);
  try {
    return { ...base, css: compile<AnyNode, Element>(selector) as (n: AnyNode) => boolean };
  } catch (err) {
    throw new Error(`extraction rule ${text}: not a CSS selector (${(err as Error).message})`, { cause: err });
  }
}

/** The rulesets of a collection, checked; throws an Error naming the ruleset and what is wrong. */
export function compileRulesets(sets: Readonly<Record<string, RulesetSettings>>): Ruleset[] {
  return Object.entries(sets).map(([name, s]) => {
    const where = `trawl_extraction_rulesets.${name}`;
    if (!s.domain) throw new Error(`${where}: domain is not set (the domain URL the ruleset applies to, e.g. https://www.example.com)`);
    let site: string;
    try {
      site = siteOf(new URL(s.domain));
    } catch {
      throw new Error(`${where}: domain ${JSON.stringify(s.domain)} is not a URL`);
    }
    const wrap = <T>(f: () => T): T => {
      try {
        return f();
      } catch (err) {
        throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
      }
    };
    return { name, site, urlFilters: wrap(() => (s.urlFilters ?? []).map(parseUrlFilter)), rules: wrap(() => (s.rules ?? []).map(parseExtractionRule)) };
  });
}

const NOTHING: ReadonlySet<string> = new Set();

/** What a rule finds: the texts of the selected elements, or the URL expression's groups (else its whole match). */
function occurrences(rule: ExtractionRule, url: string, dom: Document | undefined): string[] {
  if (rule.source === 'url') {
    const m = rule.re!.exec(url);
    if (!m) return [];
    return m.length > 1 ? m.slice(1).map((g) => g ?? '') : [m[0]];
  }
  if (!dom) return [];
  // No element is left out: a rule may select a <script> (JSON-LD, say), as the Open Crawler's rules may.
  return selectAll<AnyNode, Element>(rule.css! as (n: Element) => boolean, dom).map((e) => nodeText(e, false, NOTHING));
}

/**
 * The custom fields the rulesets give the document at `url` (`dom` is its
 * parsed HTML; undefined for a file, where only url rules find anything).
 */
export function applyRulesets(rulesets: readonly Ruleset[], url: string, dom: Document | undefined): Map<string, FieldValue> {
  const out = new Map<string, FieldValue>();
  if (rulesets.length === 0) return out;
  const u = new URL(url);
  const site = siteOf(u);
  const path = pathAndQuery(u);
  for (const rs of rulesets) {
    if (rs.site !== site) continue;
    if (rs.urlFilters.length > 0 && !rs.urlFilters.some((f) => elasticRuleMatches(f, path))) continue;
    for (const rule of rs.rules) {
      const found = occurrences(rule, url, dom);
      if (rule.action === 'set') {
        if (found.length > 0) out.set(rule.fieldName, rule.value!);
      } else {
        out.set(rule.fieldName, rule.joinAs === 'array' ? found : found.join(' '));
      }
    }
  }
  return out;
}
