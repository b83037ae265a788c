// URL canonicalization (src/scope/canonicalize.ts), driven by the conformance data in
// test/fixtures/conformance/url/: Heritrix and webarchive-commons canonicalization vectors
// (url-canon.jsonl, one loop), and the WHATWG URL tests (urltestdata.json and companions),
// which pin down the parser every rule sits on.
//
// trawl's output is always a WHATWG href, so an expected value is compared after the
// WHATWG parser has serialised it (http://WWW.aRchive.Org/ is compared as
// http://www.archive.org/). Vectors that give only a host, a path or a query are
// placed in an http://example.com/ URL, and so are their expected values.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { TrawlError } from '../../src/core/errors.ts';
import {
  buildCanonicalizer,
  CANON_RULES,
  DEFAULT_CANON_RULES,
  type CanonOptions,
  type CanonRuleName,
} from '../../src/scope/canonicalize.ts';
import { FIXTURES } from '../helpers.ts';

const DIR = `${FIXTURES}conformance/url/`;

// ------------------------------------------------------------- url-canon.jsonl

interface CanonVector {
  readonly input: string | null;
  readonly rule: string;
  readonly expected: string | null;
  readonly source: string;
  readonly params?: { readonly regex: string; readonly format: string };
}

/** How a vector's input becomes a URL: it is one, or it is only a host, path, query (`?…`) or query body. */
type Form = 'url' | 'host' | 'path' | 'search' | 'query';

function asUrl(form: Form, s: string): string {
  switch (form) {
    case 'url':
      return s;
    case 'host':
      return `http://${s}/`;
    case 'path':
      return `http://example.com${s}`;
    case 'search':
      return `http://example.com/${s}`;
    case 'query':
      return `http://example.com/?${s}`;
  }
}

function whatwg(s: string): string {
  try {
    return new URL(s).href;
  } catch {
    return s;
  }
}

/** A group is `rule#source test name`. */
const groupOf = (v: CanonVector): string => `${v.rule}#${v.source.slice(v.source.indexOf('#') + 1)}`;

const HERITRIX_DEFAULT: readonly CanonRuleName[] = ['lowercase-scheme-host', 'strip-userinfo', 'strip-wwwn', 'strip-session-ids', 'fixup-query'];

interface Claim {
  readonly trawl: string;
  readonly form: Form;
  readonly options: (v: CanonVector) => CanonOptions;
}

const rules =
  (...names: CanonRuleName[]) =>
  (): CanonOptions => ({ rules: names });

/** Heritrix's RegexRule (Java regex, matches() then "$1$2") as one rewrite rule. */
function regexRuleOptions(v: CanonVector): CanonOptions {
  const p = v.params!;
  if (p.regex.startsWith('(default')) return { rules: [] };
  assert.ok(!p.regex.includes('#') && !p.format.includes('#'));
  return { rules: [], rewriteRules: [`#${p.regex}#${p.format}#`] };
}

/** Groups trawl claims: every vector must agree, except DELIBERATE_DIFFERENCES. */
const CLAIMED: ReadonlyMap<string, Claim> = new Map<string, Claim>([
  ['heritrix:StripSessionIDs#testCanonicalize', { trawl: 'strip-session-ids', form: 'url', options: rules('strip-session-ids') }],
  ['heritrix:StripSessionCFIDs#testCanonicalize', { trawl: 'strip-session-ids', form: 'url', options: rules('strip-session-ids') }],
  ['heritrix:StripWWWRule#testCanonicalize', { trawl: 'strip-www', form: 'url', options: rules('strip-www') }],
  ['heritrix:StripWWWNRule#testCanonicalize', { trawl: 'strip-wwwn', form: 'url', options: rules('strip-wwwn') }],
  ['heritrix:StripUserinfoRule#testCanonicalize', { trawl: 'strip-userinfo', form: 'url', options: rules('strip-userinfo') }],
  ['heritrix:LowercaseRule#testCanonicalize', { trawl: 'lowercase-scheme-host', form: 'url', options: rules('lowercase-scheme-host') }],
  ['heritrix:FixupQueryString#testCanonicalize', { trawl: 'fixup-query', form: 'url', options: rules('fixup-query') }],
  ['heritrix:RegexRule#testCanonicalize', { trawl: 'rewrite_rules', form: 'url', options: regexRuleOptions }],
  ['heritrix:RegexRule#testSessionid', { trawl: 'rewrite_rules', form: 'url', options: regexRuleOptions }],
  [
    'heritrix:RulesCanonicalizationPolicy(default rules)#testCanonicalize',
    { trawl: HERITRIX_DEFAULT.join(' + '), form: 'url', options: () => ({ rules: HERITRIX_DEFAULT }) },
  ],
  ['wac:alphaReorderQuery#testAlphaReorderQuery', { trawl: 'sort-query-params', form: 'query', options: rules('sort-query-params') }],
  ['wac:massageHost(strip www/wwwN host prefix)#testMassageHost', { trawl: 'strip-wwwn', form: 'host', options: rules('strip-wwwn') }],
  ['wac:stripPathSessionID#testStripPathSessionID', { trawl: 'strip-session-ids', form: 'path', options: rules('strip-session-ids') }],
  ['wac:stripQuerySessionID#testStripQuerySessionID', { trawl: 'strip-session-ids', form: 'search', options: rules('strip-session-ids') }],
  [
    'wac:BasicURLCanonicalizer(GoogleSafeBrowsing-style)#testUnicodeEscaping',
    { trawl: 'normalize-percent-encoding', form: 'url', options: rules('normalize-percent-encoding') },
  ],
  ['wac:OrdinaryIAURLCanonicalizer#testSchemeCapitals', { trawl: 'lowercase-scheme-host', form: 'url', options: rules('lowercase-scheme-host') }],
]);

const STABLE_SORT =
  'sort-query-params sorts by key only and stably (MS-FSCCFG sort_query_params): repeated keys are often an ordered list, so their values keep their order';

/** Vector id (group#ordinal) → why trawl gives another answer. */
const DELIBERATE_DIFFERENCES: ReadonlyMap<string, string> = new Map([
  ['wac:alphaReorderQuery#testAlphaReorderQuery#11', STABLE_SORT], // a=b&a=a → a=a&a=b
  ['wac:alphaReorderQuery#testAlphaReorderQuery#12', STABLE_SORT], // b=b&a=b&b=a&a=a → a=a&a=b&b=a&b=b
]);

/** Vector id → why it has no URL to canonicalize. */
const NOT_APPLICABLE: ReadonlyMap<string, string> = new Map([['wac:alphaReorderQuery#testAlphaReorderQuery#1', 'a Java null has no URL form']]);

const AGGRESSIVE =
  'Aggressive IA dedup key: lower-cases the path and drops its trailing slash (/big/ → /big), which changes the resource a fetch URL names';
const NEAREST_AGGRESSIVE: CanonOptions = {
  rules: ['lowercase-scheme-host', 'strip-userinfo', 'strip-wwwn', 'drop-default-port', 'drop-fragment', 'strip-session-ids', 'sort-query-params', 'fixup-query'],
};

/** Groups trawl does not claim, why, and (for whole URLs) the nearest trawl rules, whose agreement is only reported. */
const NOT_CLAIMED: ReadonlyMap<string, { readonly why: string; readonly nearest?: CanonOptions }> = new Map([
  ['wac:IAURLCanonicalizer(AggressiveIACanonicalizerRules)#testFull', { why: AGGRESSIVE, nearest: NEAREST_AGGRESSIVE }],
  ['wac:IAURLCanonicalizer(AggressiveIACanonicalizerRules)#testStripSessionId', { why: AGGRESSIVE, nearest: NEAREST_AGGRESSIVE }],
  ['wac:AggressiveIAURLCanonicalizer#testCanonicalize', { why: AGGRESSIVE, nearest: NEAREST_AGGRESSIVE }],
  [
    'wac:OrdinaryIAURLCanonicalizer#testMisc',
    { why: 'collapses empty labels in the host (http://...host..com..); trawl keeps the host the WHATWG parser gives', nearest: { rules: DEFAULT_CANON_RULES } },
  ],
  [
    'wac:BasicURLCanonicalizer(GoogleSafeBrowsing-style)#testGoogleExamples',
    {
      why: 'Safe Browsing lookup form: unescapes repeatedly (%25 becomes %), collapses // in paths, guesses http:// for bare hosts; a fetch URL must keep naming the same resource',
      nearest: { rules: DEFAULT_CANON_RULES },
    },
  ],
  [
    'wac:BasicURLCanonicalizer(GoogleSafeBrowsing-style)#testStraySpacing',
    { why: 'deletes spaces inside the host name; the WHATWG parser rejects such a host', nearest: { rules: DEFAULT_CANON_RULES } },
  ],
  [
    'wac:BasicURLCanonicalizer(GoogleSafeBrowsing-style)#testSchemeCapitalsPreserved',
    { why: 'keeps the scheme as written (Http://); the WHATWG parser lower-cases it, as OrdinaryIAURLCanonicalizer#testSchemeCapitals expects', nearest: { rules: DEFAULT_CANON_RULES } },
  ],
  [
    'wac:BasicURLCanonicalizer(GoogleSafeBrowsing-style)#testHostDots',
    {
      why: 'trims and collapses dots in the host; a trailing dot is another name to HTTP (Host header, TLS), so trawl keeps what the WHATWG parser keeps',
      nearest: { rules: DEFAULT_CANON_RULES },
    },
  ],
  [
    'wac:BasicURLCanonicalizer.decode(percent-decode, UTF-8 aware)#testDecode',
    { why: 'decodes escapes to Unicode text; trawl keeps URLs percent-encoded and decodes only unreserved ASCII (normalize-percent-encoding)' },
  ],
  [
    'wac:BasicURLCanonicalizer.unescapeRepeatedly#testUnescapeRepeatedly',
    { why: 'decodes until nothing changes (%2525 → %), which changes the resource a path names' },
  ],
  [
    'wac:BasicURLCanonicalizer.attemptIPFormats#testAttemptIPFormats',
    { why: 'IP format massaging: the WHATWG IPv4 parser already reads numeric hosts (017.0.0.1 → 15.0.0.1) and reads 10.0.258 as 10.0.1.2' },
  ],
  ['wac:hostToSURT#testSURT', { why: 'SURT keys order a Wayback index; trawl keys its seen set by the canonical URL itself' }],
  ['wac:WaybackURLKeyMaker.makeKey(SURT key)#testMakeKey', { why: 'SURT keys order a Wayback index; trawl keys its seen set by the canonical URL itself' }],
]);

function readCanonVectors(): Array<CanonVector & { id: string; group: string }> {
  const seen = new Map<string, number>();
  return readFileSync(`${DIR}url-canon.jsonl`, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const v = JSON.parse(l) as CanonVector;
      const group = groupOf(v);
      const n = (seen.get(group) ?? 0) + 1;
      seen.set(group, n);
      return { ...v, group, id: `${group}#${n}` };
    });
}

describe('url-canon.jsonl: Heritrix and webarchive-commons canonicalization', () => {
  const vectors = readCanonVectors();

  it('knows every group, and every listed vector exists', () => {
    assert.equal(vectors.length, 276);
    const groups = new Set(vectors.map((v) => v.group));
    for (const g of groups) assert.ok(CLAIMED.has(g) !== NOT_CLAIMED.has(g), `${g} must be either claimed or not claimed`);
    for (const g of [...CLAIMED.keys(), ...NOT_CLAIMED.keys()]) assert.ok(groups.has(g), `${g} is not a group`);
    const ids = new Set(vectors.map((v) => v.id));
    for (const id of [...DELIBERATE_DIFFERENCES.keys(), ...NOT_APPLICABLE.keys()]) assert.ok(ids.has(id), `${id} is not a vector`);
  });

  it('agrees with every vector of the claimed groups except the deliberate differences', (t) => {
    const perGroup = new Map<string, { pass: number; total: number; na: number }>();
    const differing: string[] = [];
    const failures: string[] = [];
    for (const v of vectors) {
      const claim = CLAIMED.get(v.group);
      if (!claim) continue;
      const c = perGroup.get(v.group) ?? { pass: 0, total: 0, na: 0 };
      perGroup.set(v.group, c);
      if (v.input === null || v.expected === null) {
        assert.ok(NOT_APPLICABLE.has(v.id), `${v.id} has a null input`);
        c.na++;
        continue;
      }
      c.total++;
      const got = buildCanonicalizer(claim.options(v)).canonicalize(asUrl(claim.form, v.input));
      const want = whatwg(asUrl(claim.form, v.expected));
      if (got === want) {
        c.pass++;
        continue;
      }
      differing.push(v.id);
      if (!DELIBERATE_DIFFERENCES.has(v.id)) failures.push(`${v.id} ${JSON.stringify(v.input)}: got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
    }
    let pass = 0;
    let total = 0;
    for (const [group, c] of perGroup) {
      pass += c.pass;
      total += c.total;
      t.diagnostic(`claimed ${group} → ${CLAIMED.get(group)!.trawl}: ${c.pass}/${c.total}${c.na ? ` (${c.na} not applicable)` : ''}`);
    }
    for (const [id, why] of DELIBERATE_DIFFERENCES) t.diagnostic(`deliberate difference ${id}: ${why}`);
    t.diagnostic(`claimed total: ${pass}/${total} (${DELIBERATE_DIFFERENCES.size} deliberate differences)`);
    assert.deepEqual(failures, []);
    assert.deepEqual(differing.sort(), [...DELIBERATE_DIFFERENCES.keys()].sort());
  });

  it('reports the groups it does not claim, with the reason', (t) => {
    for (const [group, { why, nearest }] of NOT_CLAIMED) {
      const mine = vectors.filter((v) => v.group === group);
      assert.ok(mine.length > 0);
      let agreement = '';
      if (nearest) {
        const c = buildCanonicalizer(nearest);
        const agree = mine.filter((v) => v.input !== null && v.expected !== null && c.canonicalize(v.input) === whatwg(v.expected)).length;
        agreement = `; the nearest trawl rules agree on ${agree}/${mine.length}`;
      }
      t.diagnostic(`not claimed ${group} (${mine.length} vectors): ${why}${agreement}`);
    }
  });
});

// ------------------------------------------------------------------- WPT URL

interface WptCase {
  readonly input: string;
  readonly base: string | null;
  readonly href?: string;
  readonly failure?: boolean;
}

function readWpt(name: string): WptCase[] {
  return (JSON.parse(readFileSync(DIR + name, 'utf8')) as unknown[]).filter((x): x is WptCase => typeof x === 'object' && x !== null);
}

const URLTESTDATA = readWpt('urltestdata.json');
const URLTESTDATA_JS = readWpt('urltestdata-javascript-only.json');

const wptKey = (c: WptCase): string => `${JSON.stringify(c.input)} against ${JSON.stringify(c.base)}`;

/**
 * urltestdata.json cases this Node's built-in URL gets wrong, each with the
 * reason. Node v24.21.0 (ada 4.0.0) passes all 891, so the list is empty; a
 * Node 24 release with an older parser would list its failures here, each
 * with the reason "Node's URL predates this WPT change".
 */
const KNOWN_NODE_URL_FAILURES: ReadonlyMap<string, string> = new Map();

function parseWpt(c: WptCase): string | undefined {
  try {
    return (c.base === null ? new URL(c.input) : new URL(c.input, c.base)).href;
  } catch {
    return undefined;
  }
}

describe('WPT URL tests: the parser every rule sits on', () => {
  it('resolves every urltestdata.json case as WPT says, except the known Node failures', (t) => {
    const failing: string[] = [];
    let withBase = 0;
    let mustFail = 0;
    for (const c of [...URLTESTDATA, ...URLTESTDATA_JS]) {
      if (c.base !== null) withBase++;
      if (c.failure) mustFail++;
      const got = parseWpt(c);
      const ok = c.failure ? got === undefined : got === c.href;
      if (!ok) failing.push(wptKey(c));
    }
    const total = URLTESTDATA.length + URLTESTDATA_JS.length;
    t.diagnostic(`WPT urltestdata + javascript-only: ${total - failing.length}/${total} (${withBase} with a base, ${mustFail} must fail; Node ${process.version}, ada ${process.versions.ada})`);
    assert.equal(URLTESTDATA.length, 891);
    assert.deepEqual(failing.sort(), [...KNOWN_NODE_URL_FAILURES.keys()].sort());
  });

  it('maps host names to ASCII as toascii.json says', (t) => {
    const cases = (JSON.parse(readFileSync(`${DIR}toascii.json`, 'utf8')) as unknown[]).filter(
      (x): x is { input: string; output: string | null } => typeof x === 'object' && x !== null,
    );
    const failing: string[] = [];
    for (const c of cases) {
      let host: string | null;
      try {
        host = new URL(`https://${c.input}/x`).host;
      } catch {
        host = null;
      }
      if (host !== c.output) failing.push(`${JSON.stringify(c.input)}: got ${host}, expected ${c.output}`);
    }
    t.diagnostic(`WPT toascii: ${cases.length - failing.length}/${cases.length}`);
    assert.equal(cases.length, 87);
    assert.deepEqual(failing, []);
  });

  it('percent-encodes a query as percent-encoding.json says for UTF-8', () => {
    const cases = (JSON.parse(readFileSync(`${DIR}percent-encoding.json`, 'utf8')) as unknown[]).filter(
      (x): x is { input: string; output: Record<string, string> } => typeof x === 'object' && x !== null,
    );
    assert.equal(cases.length, 7);
    for (const c of cases) assert.equal(new URL(`https://doesnotmatter.invalid/?${c.input}`).search.slice(1), c.output['utf-8'], JSON.stringify(c.input));
  });
});

// ------------------------------------------------ DEFAULT_CANON_RULES over WPT

const UNRESERVED_ESCAPE = /%(?:4[1-9A-Fa-f]|5[0-9Aa]|6[1-9A-Fa-f]|7[0-9Aa]|3[0-9]|2[DdEe]|5[Ff]|7[Ee])/;
const LOWER_HEX_ESCAPE = /%(?:[0-9A-Fa-f][a-f]|[a-f][0-9A-Fa-f])/;

/** The default rules a WPT href gives a reason to act, judged from the href alone. */
function triggers(href: string): Set<string> {
  const t = new Set<string>();
  const u = new URL(href);
  const hashAt = href.indexOf('#');
  const noHash = hashAt < 0 ? href : href.slice(0, hashAt);
  const queryAt = noHash.indexOf('?');
  const query = queryAt < 0 ? null : noHash.slice(queryAt + 1);
  if (hashAt >= 0) t.add('drop-fragment');
  if (UNRESERVED_ESCAPE.test(href) || LOWER_HEX_ESCAPE.test(href) || /[\\^`{|}]/.test(href)) t.add('normalize-percent-encoding');
  if (query !== null && query.split('&').includes('')) t.add('fixup-query');
  if (/sessionid|sessid|sid=|cfid|\(/i.test(href)) t.add('strip-session-ids');
  if (/[A-Z]/.test(u.hostname.replace(/%[0-9A-Fa-f]{2}/g, ''))) t.add('lowercase-scheme-host');
  return t;
}

/** The octets a string stands for, escapes decoded. */
function octets(s: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < s.length; ) {
    if (s[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) {
      out.push(Number.parseInt(s.slice(i + 1, i + 3), 16));
      i += 3;
      continue;
    }
    const cp = s.codePointAt(i)!;
    out.push(...Buffer.from(String.fromCodePoint(cp)));
    i += cp > 0xffff ? 2 : 1;
  }
  return Buffer.from(out);
}

/** True when `after` is `before` with only characters from `chars` removed. */
function onlyRemoved(before: string, after: string, chars: string): boolean {
  let j = 0;
  for (const ch of before) {
    if (j < after.length && after[j] === ch) j++;
    else if (!chars.includes(ch)) return false;
  }
  return j === after.length;
}

/** What each rule may do to a string, checked step by step. */
const STEP_CHECKS: Readonly<Record<string, (before: string, after: string) => boolean>> = {
  'drop-fragment': (b, a) => b.includes('#') && a === b.slice(0, b.indexOf('#')),
  'normalize-percent-encoding': (b, a) => octets(b).equals(octets(a)) && !LOWER_HEX_ESCAPE.test(a) && !UNRESERVED_ESCAPE.test(a),
  'fixup-query': (b, a) => onlyRemoved(b, a, '?&'),
  'strip-session-ids': (b, a) => a.length < b.length,
  'lowercase-scheme-host': (b, a) => a !== b && a.toLowerCase() === b.toLowerCase(),
};

describe('DEFAULT_CANON_RULES over every WPT href', () => {
  const c = buildCanonicalizer({ rules: DEFAULT_CANON_RULES });
  const hrefs = [...URLTESTDATA, ...URLTESTDATA_JS].filter((x) => !x.failure).map((x) => x.href!);

  it('is idempotent, and changes an href only as its rules say', (t) => {
    let untouched = 0;
    let changed = 0;
    const perRule = new Map<string, number>();
    for (const href of hrefs) {
      const out = c.canonicalize(href);
      assert.ok(out !== undefined, href);
      assert.equal(c.canonicalize(out), out, `not idempotent: ${href}`);
      const steps = c.explain(href);
      assert.equal(steps.at(-1)?.after ?? href, out, `explain disagrees: ${href}`);
      const allowed = triggers(href);
      if (allowed.size === 0) {
        assert.equal(out, href, `${href} has nothing for the rules to do`);
        untouched++;
      }
      if (out !== href) changed++;
      for (const s of steps) {
        assert.ok(allowed.has(s.rule), `${s.rule} acted on ${href} without a reason: ${s.before} → ${s.after}`);
        assert.ok(STEP_CHECKS[s.rule]!(s.before, s.after), `${s.rule} did more than it says: ${s.before} → ${s.after}`);
        perRule.set(s.rule, (perRule.get(s.rule) ?? 0) + 1);
      }
    }
    t.diagnostic(`WPT hrefs: ${hrefs.length}; ${untouched} give the rules nothing to do and are unchanged; ${changed} changed`);
    for (const [rule, n] of [...perRule].sort()) t.diagnostic(`  ${rule} acted on ${n}`);
    assert.ok(untouched > 400, `only ${untouched} untouched hrefs: the check would prove little`);
  });

  it('gives the same result for the input as for its href', () => {
    for (const x of URLTESTDATA) {
      if (x.failure || x.base !== null) continue;
      assert.equal(c.canonicalize(x.input), c.canonicalize(x.href!), JSON.stringify(x.input));
    }
  });
});

// ------------------------------------------------------------- rule by rule

const canon = (url: string, ...names: CanonRuleName[]): string | undefined => buildCanonicalizer({ rules: names }).canonicalize(url);

describe('CANON_RULES and DEFAULT_CANON_RULES', () => {
  it('names every rule once, with a description', () => {
    const names = CANON_RULES.map((r) => r.name);
    assert.equal(new Set(names).size, names.length);
    assert.equal(names.length, 10);
    for (const r of CANON_RULES) assert.ok(r.description.length > 20, r.name);
  });

  it('default: the safe set for fetch URLs', () => {
    assert.deepEqual(
      [...DEFAULT_CANON_RULES].sort(),
      ['drop-default-port', 'drop-fragment', 'fixup-query', 'lowercase-scheme-host', 'normalize-percent-encoding', 'strip-session-ids'],
    );
    const c = buildCanonicalizer({ rules: DEFAULT_CANON_RULES });
    assert.equal(
      c.canonicalize('HTTP://User:pw@WWW.Example.COM:80/a/%7euser/%e2%82%ac?b=2&a=1&jsessionid=0123456789ABCDEF0123456789ABCDEF#top'),
      'http://User:pw@www.example.com/a/~user/%E2%82%AC?b=2&a=1',
    );
  });
});

describe('buildCanonicalizer', () => {
  it('returns undefined for what is not an absolute URL, and explains nothing', () => {
    const c = buildCanonicalizer({ rules: DEFAULT_CANON_RULES });
    for (const bad of ['', '/relative', 'example.com/x', 'http://[::1', 'http://a b/']) {
      assert.equal(c.canonicalize(bad), undefined, bad);
      assert.deepEqual(c.explain(bad), [], bad);
    }
  });

  it('refuses an unknown rule name', () => {
    assert.throws(
      () => buildCanonicalizer({ rules: ['strip-www', 'lowercase-path' as CanonRuleName] }),
      (err: unknown) => err instanceof TrawlError && err.code === 'TRAWL_ERR_CONFIG_VALUE' && /lowercase-path/.test(err.message),
    );
  });

  it('applies the rules in pipeline order, whatever order they are listed in', () => {
    const url = 'http://www.example.com/?&b=1&&a=2&sid=0123456789abcdef0123456789abcdef#x';
    const forward = CANON_RULES.map((r) => r.name);
    const a = buildCanonicalizer({ rules: forward }).explain(url);
    const b = buildCanonicalizer({ rules: [...forward].reverse() }).explain(url);
    assert.deepEqual(a, b);
    assert.deepEqual(
      a.map((s) => s.rule),
      ['strip-www', 'drop-fragment', 'strip-session-ids', 'sort-query-params', 'fixup-query'],
    );
    assert.equal(a.at(-1)!.after, 'http://example.com/?a=2&b=1');
  });

  it('with no rules, gives the WHATWG href and explains the parse', () => {
    const c = buildCanonicalizer({ rules: [] });
    assert.equal(c.canonicalize('HTTP://Example.COM:80/a/../b?x#y'), 'http://example.com/b?x#y');
    assert.deepEqual(c.explain('HTTP://Example.COM:80/b'), [{ rule: 'whatwg-parse', before: 'HTTP://Example.COM:80/b', after: 'http://example.com/b' }]);
    assert.deepEqual(c.explain('http://example.com/b'), []);
  });
});

describe('every combination of rules, on generated URLs (fixed seed)', () => {
  let seed = 3986;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;
  const some = (xs: readonly string[], max: number, sep: string): string => Array.from({ length: rand(max + 1) }, () => pick(xs)).join(sep);
  const ID32 = '0123456789abcdef0123456789ABCDEF';
  const HOSTS = ['www.Example.com', 'WWW2.example.co.uk', 'www.www.x.y', 'www.com', 'u:P@www.a.b', 'Host', '[::1]', '127.0.0.1', 'xn--bcher-kva.de', 'h%41st'];
  const PORTS = ['', ':80', ':443', ':21', ':8080'];
  const SEGMENTS = ['a', 'A', '%7e', '%7E', '%2e', '%2E%2e', '%2fx', '(S(abcdefghijklmnopqrstuvwx))', '(abcdefghijklmnopqrstuvwx)', 'p.aspx', 'x;jsessionid=ABC', '|', '^', '..', '.', '', '%zz', 'é', '\\', '%41%42'];
  const PARAMS = ['', 'a=1', 'B=2', 'b', `sid=${ID32}`, `JSESSIONID=${ID32}`, 'CFID=1', 'cftoken=2', '%7e=%41', 'x={|}', 'aspsessionidABCDEFGH=ABCDEFGHIJKLMNOPQRSTUVWX', 'a=0'];
  const FRAGMENTS = ['', '#', '#top', '#%7e|', '#a#b'];

  function randomUrl(): string {
    const query = rand(3) === 0 ? '' : `?${some(PARAMS, 5, '&')}`;
    const scheme = pick(['http', 'https', 'ws', 'ftp', 'foo', 'file', 'mailto', 'javascript']);
    if (scheme === 'mailto' || scheme === 'javascript') return `${scheme}:${some(SEGMENTS, 3, '')}${query}${pick(FRAGMENTS)}`;
    return `${scheme}://${pick(HOSTS)}${scheme === 'file' ? '' : pick(PORTS)}/${some(SEGMENTS, 4, '/')}${query}${pick(FRAGMENTS)}`;
  }

  it('is idempotent, explains what it returns, and always returns what the parser writes', (t) => {
    const names = CANON_RULES.map((r) => r.name);
    let checked = 0;
    let changed = 0;
    for (let k = 0; k < 400; k++) {
      const mask = rand(1 << names.length);
      const c = buildCanonicalizer({ rules: names.filter((_, i) => mask & (1 << i)) });
      for (let j = 0; j < 10; j++) {
        const url = randomUrl();
        const out = c.canonicalize(url);
        const href = URL.canParse(url) ? new URL(url).href : undefined;
        assert.equal(out === undefined, href === undefined, url);
        if (out === undefined) continue;
        const what = `${url} with ${names.filter((_, i) => mask & (1 << i)).join(', ')}`;
        assert.equal(c.canonicalize(out), out, `not idempotent: ${what} → ${out}`);
        assert.equal(new URL(out).href, out, what);
        const steps = c.explain(url);
        assert.equal(steps.at(-1)?.after ?? href, out, what);
        assert.ok(steps.every((s, i) => s.rule !== 'whatwg-parse' || i === 0), `a rule's result was not the parser's own: ${what}`);
        checked++;
        if (out !== href) changed++;
      }
    }
    t.diagnostic(`generated URLs: ${checked} canonicalized, ${changed} changed by the rules`);
    assert.ok(checked > 3000 && changed > 1000, `${checked} checked, ${changed} changed`);
  });
});

describe('host rules', () => {
  it('lowercase-scheme-host folds an opaque host, not its escapes or the path', () => {
    assert.equal(canon('foo://EXAMPLE.com/A', 'lowercase-scheme-host'), 'foo://example.com/A');
    assert.equal(canon('foo://%C3%91A/', 'lowercase-scheme-host'), 'foo://%C3%91a/');
  });

  it('strip-userinfo removes user and password, and nothing else', () => {
    assert.equal(canon('https://u:p@example.com:8443/x', 'strip-userinfo'), 'https://example.com:8443/x');
    assert.equal(canon('https://u@example.com/', 'strip-userinfo'), 'https://example.com/');
  });

  it('strip-www removes www. labels while a dotted name remains', () => {
    assert.equal(canon('http://www.example.com/', 'strip-www'), 'http://example.com/');
    assert.equal(canon('http://www.www.example.com/', 'strip-www'), 'http://example.com/');
    assert.equal(canon('http://www.com/', 'strip-www'), 'http://www.com/');
    assert.equal(canon('http://www.www.com/', 'strip-www'), 'http://www.com/');
    assert.equal(canon('foo://WWW.Example.com/', 'strip-www'), 'foo://Example.com/');
    assert.equal(canon('http://www2.example.com/', 'strip-www'), 'http://www2.example.com/');
    assert.equal(canon('http://www.example.com:8080/', 'strip-www'), 'http://example.com:8080/');
  });

  it('strip-wwwn removes www and wwwN labels while a dotted name remains', () => {
    assert.equal(canon('http://www.www2.example.com/', 'strip-wwwn'), 'http://example.com/');
    assert.equal(canon('http://www1.www2.com/', 'strip-wwwn'), 'http://www2.com/');
    assert.equal(canon('http://www7.com/', 'strip-wwwn'), 'http://www7.com/');
    assert.equal(canon('http://wwwx.example.com/', 'strip-wwwn'), 'http://wwwx.example.com/');
  });
});

describe('path and query rules', () => {
  it('drop-fragment removes the fragment, even an empty one', () => {
    assert.equal(canon('http://e.com/a?q#', 'drop-fragment'), 'http://e.com/a?q');
    assert.equal(canon('http://e.com/a#b#c', 'drop-fragment'), 'http://e.com/a');
  });

  it('normalize-percent-encoding: upper-case hex, decode unreserved, escape \\ ^ ` { | }, leave reserved ones', () => {
    const n = (u: string) => canon(u, 'normalize-percent-encoding');
    assert.equal(n('http://e.com/%7e%41%2d%5f%2E%30'), 'http://e.com/~A-_.0');
    assert.equal(n('http://e.com/a%2fb%3F%25%e2%82%ac'), 'http://e.com/a%2Fb%3F%25%E2%82%AC');
    assert.equal(n('http://e.com/a|b?c={d}`|^\\'), 'http://e.com/a%7Cb?c=%7Bd%7D%60%7C%5E%5C');
    assert.equal(n("http://e.com/[a]?b=[c]&'d'"), "http://e.com/[a]?b=[c]&%27d%27");
    assert.equal(n('http://e.com/%zz%4?%'), 'http://e.com/%zz%4?%');
    assert.equal(n('http://e.com/#%7e%7c'), 'http://e.com/#~%7C');
    // An opaque path is not a list of segments: it is left as written.
    assert.equal(n('mailto:a%7e|b@e.com?subject=%7e'), 'mailto:a%7e|b@e.com?subject=~');
  });

  it('normalize-percent-encoding never creates a dot segment', () => {
    assert.equal(canon('http://e.com/a/%2e/b/%2E%2e/c/x%2Ey', 'normalize-percent-encoding'), 'http://e.com/a/c/x.y');
  });

  it('strip-session-ids: the ;jsessionid= path parameter and ASP.NET path ids', () => {
    const s = (u: string) => canon(u, 'strip-session-ids');
    assert.equal(s('http://e.com/a.jsp;jsessionid=0A1B2C3D.node1?x=1'), 'http://e.com/a.jsp?x=1');
    assert.equal(s('http://e.com/a;JSESSIONID=abc/b'), 'http://e.com/a/b');
    assert.equal(s('http://e.com/app/(S(4hqa0555fwsecu455xqckv45))/mvc/route'), 'http://e.com/app/mvc/route');
    // The bare ASP.NET 1.x form is taken for a session id only before an .aspx page.
    assert.equal(s('http://e.com/(4hqa0555fwsecu455xqckv45)/page.html'), 'http://e.com/(4hqa0555fwsecu455xqckv45)/page.html');
    assert.equal(s('foo:/(S(4hqa0555fwsecu455xqckv45))//x.aspx'), 'foo:/(S(4hqa0555fwsecu455xqckv45))//x.aspx');
  });

  it('strip-session-ids: only whole keys, with the value shape each id has', () => {
    const s = (u: string) => canon(u, 'strip-session-ids');
    const id32 = '0123456789abcdef0123456789ABCDEF';
    assert.equal(s(`http://e.com/?SID=${id32}&x=1`), 'http://e.com/?x=1');
    assert.equal(s(`http://e.com/?basid=${id32}&x=1`), `http://e.com/?basid=${id32}&x=1`);
    assert.equal(s(`http://e.com/?sid=${id32.slice(1)}`), `http://e.com/?sid=${id32.slice(1)}`);
    assert.equal(s('http://e.com/?x=1&cfid=1&y=2&cftoken=2'), 'http://e.com/?x=1&y=2&');
    assert.equal(s('http://e.com/?cfid=1&y=2'), 'http://e.com/?cfid=1&y=2');
    assert.equal(s(`http://e.com/?jsessionid=${id32}&jsessionid=${id32}`), 'http://e.com/?');
  });

  it('sort-query-params sorts by key, stably, with empty parameters first', () => {
    const q = (u: string) => canon(u, 'sort-query-params');
    assert.equal(q('http://e.com/?b=2&a=9&b=1&a=3&c'), 'http://e.com/?a=9&a=3&b=2&b=1&c');
    assert.equal(q('http://e.com/?a[]=2&a=1&a[]=1'), 'http://e.com/?a=1&a[]=2&a[]=1');
    assert.equal(q('http://e.com/?B=1&a=1&_=1'), 'http://e.com/?B=1&_=1&a=1'); // code-unit order, as Java's compareTo
    assert.equal(q('http://e.com/?z=1&'), 'http://e.com/?&z=1');
    assert.equal(canon('http://e.com/?z=1&', 'sort-query-params', 'fixup-query'), 'http://e.com/?z=1');
  });

  it('fixup-query removes empty parameters and an empty query', () => {
    const f = (u: string) => canon(u, 'fixup-query');
    assert.equal(f('http://e.com/?'), 'http://e.com/');
    assert.equal(f('http://e.com/?&&'), 'http://e.com/');
    assert.equal(f('http://e.com/?&a=1&&b=2&'), 'http://e.com/?a=1&b=2');
    assert.equal(f('http://e.com/?a=&b'), 'http://e.com/?a=&b');
    assert.equal(f('http://e.com/??'), 'http://e.com/??');
  });
});

// ---------------------------------------------------------------- rewrite_rules

describe('rewrite_rules (MS-FSCCFG 2.2.3)', () => {
  const apply = (rewriteRules: string[], url: string): string | undefined => buildCanonicalizer({ rules: [], rewriteRules }).canonicalize(url);

  it('takes any non-space delimiter', () => {
    for (const d of ['#', '|', '@', ',', '!', '%', '~', 'X']) {
      assert.equal(apply([`${d}/old/(.*)${d}/new/$1${d}`], 'http://e.com/old/p?q'), 'http://e.com/new/p?q', d);
    }
  });

  it('refuses a rule that is not DmatchDreplacementD or whose regex JavaScript cannot run', () => {
    for (const bad of ['', 'ab', '#a#b', '#a#b#c#', ' a b ', '##b#', '#(?>a)#b#', '#a++#b#', '#(#b#']) {
      assert.throws(
        () => buildCanonicalizer({ rules: [], rewriteRules: [bad] }),
        (err: unknown) => err instanceof TrawlError && err.code === 'TRAWL_ERR_CONFIG_VALUE' && err.message.includes('rewrite_rules[0]'),
        JSON.stringify(bad),
      );
    }
  });

  it('replaces the first match only', () => {
    assert.equal(apply(['#a#b#'], 'http://e.com/aaa?a'), 'http://e.com/baa?a');
    assert.equal(apply(['#/x/#/#'], 'http://e.com/x/x/x/y'), 'http://e.com/x/x/y');
  });

  it('substitutes $1, ${name}, $0 and $$', () => {
    assert.equal(apply(['#/(\\d+)/(\\d+)/#/$2/$1/#'], 'http://e.com/1/2/x'), 'http://e.com/2/1/x');
    assert.equal(apply(["#/(?<year>\\d{4})/(?'month'\\d\\d)/#/${month}-${year}/#"], 'http://e.com/2024/05/x'), 'http://e.com/05-2024/x');
    assert.equal(apply(['#/x$#$0$0#'], 'http://e.com/x'), 'http://e.com/x/x');
    assert.equal(apply(['#/price#/$$#'], 'http://e.com/price'), 'http://e.com/$');
  });

  it('understands .NET syntax: (?i), \\A, \\z', () => {
    assert.equal(apply(['#(?i)/OLD/#/new/#'], 'http://e.com/old/x'), 'http://e.com/new/x');
    assert.equal(apply(['#\\Ahttp://e\\.com/index\\.html\\z#http://e.com/#'], 'http://e.com/index.html'), 'http://e.com/');
  });

  it('runs in order, each on the previous result, before the named rules', () => {
    const c = buildCanonicalizer({
      rules: ['drop-fragment', 'fixup-query'],
      // The fragment is still there for the first rule; the second sees what the first made.
      rewriteRules: ['|#!(.*)$|?_escaped_fragment_=$1|', '|_escaped_fragment_=|page=|'],
    });
    assert.equal(c.canonicalize('http://e.com/app#!inbox'), 'http://e.com/app?page=inbox');
    assert.deepEqual(
      c.explain('http://e.com/app#!inbox').map((s) => s.rule),
      ['rewrite_rules[0]', 'rewrite_rules[1]'],
    );
  });

  it('sees the WHATWG href, and its result is parsed again', () => {
    assert.equal(apply(['#^http://example\\.com/#HTTP://Other.Example:80/#'], 'HTTP://EXAMPLE.COM/a'), 'http://other.example/a');
    const c = buildCanonicalizer({ rules: [], rewriteRules: ['#^http://#http://[#'] });
    assert.equal(c.canonicalize('http://e.com/'), undefined);
    assert.deepEqual(c.explain('http://e.com/'), []);
  });

  it('leaves a URL the rule does not match alone', () => {
    assert.equal(apply(['#/nomatch/#/x/#'], 'http://e.com/a'), 'http://e.com/a');
    assert.deepEqual(buildCanonicalizer({ rules: [], rewriteRules: ['#/nomatch/#/x/#'] }).explain('http://e.com/a'), []);
  });
});
