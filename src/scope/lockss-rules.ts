/**
 * LOCKSS crawl rules (`au_crawlrules`) as a scope rule: the `trawl_lockss`
 * extension section, attrib `crawl_rules` plus the `params` section.
 *
 *   crawl_rules = ['4, "^%s", base_url',                    params:
 *                  '2, "^%s%s/vol%s/…/citedby", base_url, …',  base_url = http://www.example.com/
 *                  '1, "^%s%s/vol%s/", base_url, …']           journal_id = jid, volume_name = 12
 *
 *   rule text ─► code, "template", args ─► args evaluated (params, functions)
 *             ─► values regex-escaped ─► printf expansion ─► RegExp
 *
 *   URL ─► rule 1 ─► outcome? ─ no ─► rule 2 ─► … ─► none: Exclude (default)
 *                       └ yes: include (no objection) or exclude (code ur)
 *
 * The rule text: an integer code from 1 to 6, a comma, a template in double
 * quotes, then zero or more `, arg`. Inside the quotes `\"` stands for a
 * quote; every other backslash is kept as written, so regex escapes such as
 * `\.` reach the regular expression unchanged.
 *
 * Codes, as in the LOCKSS "Crawl Rule Types" table:
 *
 *   1 Include                     match → include,  else no outcome
 *   2 Exclude                     match → exclude,  else no outcome
 *   3 Include No Match            no match → include, else no outcome
 *   4 Exclude No Match            no match → exclude, else no outcome
 *   5 Include Match Else Exclude  match → include,  else exclude
 *   6 Exclude Match Else Include  match → exclude,  else include
 *
 * "Given a URL, the crawler tries each crawl rule in the order of the list,
 * until one of them produces an outcome for the URL. If none of the crawl
 * rules result in an outcome for the URL, the default outcome is Exclude."
 * An include is reported as "no objection" (later scope rules still run);
 * an exclude refuses with URI skip code `ur`.
 *
 * Templates are `printf` format strings. Supported conversions: `%s` (the
 * value as text), `%d` (the value must be a decimal integer; it is written
 * without leading zeros) and `%%` (a literal `%`). Flags, widths and other
 * conversions are errors. There must be exactly one argument per `%s`/`%d`.
 *
 * An argument is a parameter name from `params`, or a function applied to
 * an argument (`url_host(base_url)`, `add_www(url_host(base_url))`).
 * Supported functions (u = an absolute URL, h = a host name or a URL):
 *
 *   url_host(u)        host name, as the URL parser writes it (lower case):
 *                      http://www.Example.com:8080/x/ → www.example.com
 *   url_host_port(u)   host, with the port when the URL gives a non-default
 *                      one → www.example.com:8080
 *   url_domain(u)      url_host without one leading "www." → example.com
 *                      (the same-domain notion of core/url.ts domainOf, but
 *                      IPv6 hosts keep their brackets, as URLs write them)
 *   url_path(u)        path, without query or fragment → /x/
 *   url_protocol(u)    scheme without ":" → http
 *   url_scheme(u)      the same as url_protocol
 *   url_port(u)        port, or the scheme's default port when the URL has
 *                      none (80 for http, 443 for https) → 8080
 *   add_www(h)         "www." put in front of the host unless it is there;
 *                      on a URL only the host changes, the rest stays as
 *                      written: http://example.com/ → http://www.example.com/
 *   del_www(h)         one leading "www." removed from the host, likewise
 *   to_http(u)         the URL with scheme http, the rest as written
 *   to_https(u)        the URL with scheme https, the rest as written
 *
 * Substituted values are regex-escaped: a parameter value is a literal
 * inside the expanded regular expression, so the dots of
 * http://www.example.com/ match only dots and a value can never inject
 * regex syntax; the regex belongs to the template alone. Values are
 * inserted exactly as given: no "/" is added or removed. LOCKSS base URLs
 * end with "/", which is why the spec's sample writes "^%spdf/" and
 * "^%s%s/vol%s/" with no "/" after the first %s; a base_url without its
 * final "/" would expand "^%spdf/" to ^http://www\.example\.compdf/.
 *
 * Matching: the expanded expression (a JavaScript RegExp, case-sensitive,
 * no flags) is searched for anywhere in the URL, as the WHATWG URL parser
 * serialises it (lower-case scheme and host, default port dropped) and
 * without its fragment; templates anchor themselves with "^". Write URL
 * parameters in that form too (http://www.example.com/, not HTTP://WWW…).
 */

import { makeSafe } from '../core/safe-regex.ts';
import type { ScopeRule } from './scope.ts';

export interface LockssRule {
  readonly code: 1 | 2 | 3 | 4 | 5 | 6;
  /** The printf template as written between the quotes (with `\"` read as `"`). */
  readonly template: string;
  /** The argument expressions as written, e.g. ["base_url", "url_host(base_url)"]. */
  readonly args: string[];
  /** The expanded template. */
  readonly regex: RegExp;
}

const CODE_NAMES = {
  1: 'Include',
  2: 'Exclude',
  3: 'Include No Match',
  4: 'Exclude No Match',
  5: 'Include Match Else Exclude',
  6: 'Exclude Match Else Include',
} as const;

/** The spec's table as [outcome on a match, outcome on no match]; undefined = no outcome. */
const OUTCOMES: Record<LockssRule['code'], readonly ['include' | 'exclude' | undefined, 'include' | 'exclude' | undefined]> = {
  1: ['include', undefined],
  2: ['exclude', undefined],
  3: [undefined, 'include'],
  4: [undefined, 'exclude'],
  5: ['include', 'exclude'],
  6: ['exclude', 'include'],
};

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443', 'ftp:': '21' };
const SCHEME_RE = /^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*@)?/i;

function parseAbsoluteUrl(fn: string, value: string): URL {
  let u: URL | undefined;
  try {
    u = SCHEME_RE.test(value) ? new URL(value) : undefined;
  } catch {
    u = undefined;
  }
  if (!u) throw new Error(`${fn}() needs an absolute URL such as http://www.example.com/, got ${JSON.stringify(value)}`);
  return u;
}

/** Applies `edit` to the host of a URL (the rest kept as written), or to a bare host name. */
function editHost(value: string, edit: (host: string) => string): string {
  const m = SCHEME_RE.exec(value);
  if (!m) return edit(value);
  const start = m[0].length;
  let end = start;
  while (end < value.length && !'/?#:'.includes(value[end]!)) end++;
  if (value[start] === '[') end = value.indexOf(']', start) + 1 || value.length;
  return value.slice(0, start) + edit(value.slice(start, end)) + value.slice(end);
}

function setScheme(fn: string, value: string, scheme: string): string {
  parseAbsoluteUrl(fn, value);
  return value.replace(/^[a-z][a-z0-9+.-]*:/i, `${scheme}:`);
}

const stripWww = (host: string): string => (/^www\./i.test(host) ? host.slice(4) : host);

/** The functions an argument may apply; each takes one value. */
const FUNCTIONS: Record<string, (value: string) => string> = {
  url_host: (v) => parseAbsoluteUrl('url_host', v).hostname,
  url_host_port: (v) => parseAbsoluteUrl('url_host_port', v).host,
  url_domain: (v) => stripWww(parseAbsoluteUrl('url_domain', v).hostname),
  url_path: (v) => parseAbsoluteUrl('url_path', v).pathname,
  url_protocol: (v) => parseAbsoluteUrl('url_protocol', v).protocol.slice(0, -1),
  url_scheme: (v) => parseAbsoluteUrl('url_scheme', v).protocol.slice(0, -1),
  url_port: (v) => {
    const u = parseAbsoluteUrl('url_port', v);
    const port = u.port || DEFAULT_PORTS[u.protocol];
    if (port === undefined) throw new Error(`url_port(): ${JSON.stringify(v)} has no port and its scheme has no default port`);
    return port;
  },
  add_www: (v) => editHost(v, (h) => (/^www\./i.test(h) ? h : `www.${h}`)),
  del_www: (v) => editHost(v, stripWww),
  to_http: (v) => setScheme('to_http', v, 'http'),
  to_https: (v) => setScheme('to_https', v, 'https'),
};

/** The supported function names, for error messages and documentation. */
export const LOCKSS_FUNCTIONS: readonly string[] = Object.keys(FUNCTIONS);

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

// ------------------------------------------------------------ rule text

/** An argument expression: a parameter name, or a function of an argument. */
type Arg = { readonly kind: 'param'; readonly name: string; readonly at: number } | { readonly kind: 'call'; readonly fn: string; readonly arg: Arg; readonly at: number };

interface ParsedRuleText {
  readonly code: LockssRule['code'];
  readonly template: string;
  readonly args: ReadonlyArray<{ readonly text: string; readonly expr: Arg }>;
}

/** A small cursor over one rule's text; errors carry the 1-based column. */
class Reader {
  pos = 0;
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
  }
  fail(what: string, at = this.pos): never {
    throw new Error(`at column ${at + 1}: ${what}`);
  }
  expect(c: string, what: string): void {
    this.skipSpace();
    if (this.text[this.pos] !== c) this.fail(`expected ${what}, found ${this.text[this.pos] === undefined ? 'the end of the rule' : JSON.stringify(this.text[this.pos])}`);
    this.pos++;
  }
  ident(): string | undefined {
    this.skipSpace();
    const m = /^[A-Za-z_]\w*/.exec(this.text.slice(this.pos));
    if (!m) return undefined;
    this.pos += m[0].length;
    return m[0];
  }
}

function parseArg(r: Reader): Arg {
  r.skipSpace();
  const at = r.pos;
  const name = r.ident();
  if (name === undefined) r.fail('expected a parameter name or a function such as url_host(base_url)');
  r.skipSpace();
  if (r.text[r.pos] !== '(') return { kind: 'param', name, at };
  if (!(name in FUNCTIONS)) r.fail(`unknown function ${name}(); the supported functions are ${LOCKSS_FUNCTIONS.join(', ')}`, at);
  r.pos++;
  const arg = parseArg(r);
  r.expect(')', `")" closing ${name}(`);
  return { kind: 'call', fn: name, arg, at };
}

function parseRuleText(text: string): ParsedRuleText {
  const r: Reader = new Reader(text);
  r.skipSpace();
  const codeText = /^\d+/.exec(text.slice(r.pos))?.[0];
  if (codeText === undefined) r.fail('expected a crawl rule code from 1 to 6');
  const code = Number(codeText);
  if (!(code >= 1 && code <= 6)) r.fail(`crawl rule code ${codeText} is not one of 1 to 6 (1 Include, 2 Exclude, 3 Include No Match, 4 Exclude No Match, 5 Include Match Else Exclude, 6 Exclude Match Else Include)`);
  r.pos += codeText.length;
  r.expect(',', '"," after the crawl rule code');
  r.expect('"', 'the template in double quotes');
  let template = '';
  for (;;) {
    const c = text[r.pos];
    if (c === undefined) r.fail('the template has no closing double quote');
    r.pos++;
    if (c === '"') break;
    if (c === '\\' && text[r.pos] === '"') {
      template += '"';
      r.pos++;
    } else if (c === '\\' && text[r.pos] !== undefined) {
      template += c + text[r.pos]!;
      r.pos++;
    } else template += c;
  }
  const args: Array<{ text: string; expr: Arg }> = [];
  for (;;) {
    r.skipSpace();
    if (r.pos >= text.length) break;
    r.expect(',', '"," before the next argument');
    r.skipSpace();
    const start = r.pos;
    const expr = parseArg(r);
    args.push({ text: text.slice(start, r.pos), expr });
  }
  return { code: code as LockssRule['code'], template, args };
}

// ------------------------------------------------------------ expansion

function evaluate(arg: Arg, n: number, params: Readonly<Record<string, string>>): string {
  if (arg.kind === 'param') {
    if (!Object.hasOwn(params, arg.name)) {
      const known = Object.keys(params);
      const hint = arg.name in FUNCTIONS ? ` (${arg.name} is a function: write ${arg.name}(base_url))` : '';
      throw new Error(`argument ${n}: unknown parameter ${JSON.stringify(arg.name)}${hint}; the params section has ${known.length === 0 ? 'no parameters' : known.join(', ')}`);
    }
    return params[arg.name]!;
  }
  const inner = evaluate(arg.arg, n, params);
  try {
    return FUNCTIONS[arg.fn]!(inner);
  } catch (err) {
    throw new Error(`argument ${n}: ${(err as Error).message}`, { cause: err });
  }
}

/** Fills the template's %s / %d / %% with the values (escaped for %s, checked as integers for %d). */
function expand(template: string, values: readonly string[]): string {
  const parts = [...template.matchAll(/%(.?)/gs)];
  for (const m of parts) {
    if (!['s', 'd', '%'].includes(m[1]!)) {
      throw new Error(`unsupported conversion ${JSON.stringify(m[0])} at template offset ${m.index}; only %s, %d and %% are supported`);
    }
  }
  const count = parts.filter((m) => m[1] !== '%').length;
  if (count !== values.length) {
    throw new Error(`the template has ${count} conversion${count === 1 ? '' : 's'} (%s or %d) but ${values.length} argument${values.length === 1 ? ' is' : 's are'} given`);
  }
  let next = 0;
  return template.replace(/%(.?)/gs, (_whole, conv: string) => {
    if (conv === '%') return '%';
    const i = next++;
    const value = values[i]!;
    if (conv === 's') return escapeRegex(value);
    const digits = value.trim();
    if (!/^[+-]?\d+$/.test(digits)) throw new Error(`argument ${i + 1} is ${JSON.stringify(value)}, which %d cannot write: it is not an integer`);
    return BigInt(digits).toString();
  });
}

/**
 * Compiles `trawl_lockss.crawl_rules` against `trawl_lockss.params`. Throws
 * an Error naming the rule (its 1-based position and text) and what is
 * wrong: a malformed rule (with the column), an unknown function or
 * parameter (with the argument's position), a function given a value it
 * cannot use, a template whose conversions and arguments do not pair up,
 * or an expansion that is not a valid regular expression.
 */
export function compileLockssRules(rules: readonly string[], params: Readonly<Record<string, string>>): LockssRule[] {
  return rules.map((text, i) => {
    try {
      const parsed = parseRuleText(text);
      const values = parsed.args.map((a, n) => evaluate(a.expr, n + 1, params));
      const source = expand(parsed.template, values);
      // core/safe-regex.ts: a template that cannot run in linear time is refused, so no rule can stall a match.
      const safe = makeSafe(source);
      if (!safe.ok) {
        throw new Error(`the expanded template ${JSON.stringify(source)} is ${safe.kind === 'syntax' ? 'not a valid regular expression' : 'a regular expression that cannot run in linear time'} (${safe.reason})`);
      }
      const regex = new RegExp(safe.value.source, safe.value.flags);
      return { code: parsed.code, template: parsed.template, args: parsed.args.map((a) => a.text), regex };
    } catch (err) {
      throw new Error(`LOCKSS crawl rule #${i + 1} (${text}): ${(err as Error).message}`, { cause: err });
    }
  });
}

/** The URL as the rules see it: serialised, without the fragment. */
function subjectOf(url: URL): string {
  return url.hash === '' ? url.href : url.href.slice(0, url.href.length - url.hash.length);
}

/**
 * The compiled rules as one scope rule. Rules are tried in order; the first
 * that produces an outcome decides (include = no objection, exclude = code
 * `ur`); when none does, the URL is excluded (the spec's default outcome).
 */
export function lockssScopeRule(rules: LockssRule[]): ScopeRule {
  return {
    name: 'trawl_lockss',
    decide({ url }) {
      const subject = subjectOf(url);
      for (const [i, rule] of rules.entries()) {
        const matches = rule.regex.test(subject);
        const outcome = OUTCOMES[rule.code][matches ? 0 : 1];
        if (outcome === undefined) continue;
        const include = outcome === 'include';
        const reason = `LOCKSS crawl rule #${i + 1} (${rule.code} ${CODE_NAMES[rule.code]}, ${rule.regex.source}) ${matches ? 'matches' : 'does not match'} ${subject}: ${include ? 'include' : 'exclude'}`;
        return include ? { allowed: true, reason } : { allowed: false, code: 'ur', reason };
      }
      return { allowed: false, code: 'ur', reason: `no LOCKSS crawl rule gives an outcome for ${subject}; the default outcome is Exclude` };
    },
  };
}

/**
 * The syntax of one rule, without its parameters (for configuration
 * checks): undefined when well formed, else what is wrong.
 */
export function checkLockssRuleSyntax(text: string): string | undefined {
  try {
    const parsed = parseRuleText(text);
    const conversions = [...parsed.template.matchAll(/%(.?)/gs)];
    const bad = conversions.find((m) => !['s', 'd', '%'].includes(m[1]!));
    if (bad) return `a template with only %s, %d and %% (found ${JSON.stringify(bad[0])})`;
    const count = conversions.filter((m) => m[1] !== '%').length;
    if (count !== parsed.args.length) return `as many arguments as the template has %s and %d (${count}), not ${parsed.args.length}`;
    return undefined;
  } catch (err) {
    return `a LOCKSS crawl rule CODE, "template", arg, … (${(err as Error).message})`;
  }
}
