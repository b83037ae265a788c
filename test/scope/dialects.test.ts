// The two extra scope dialects: Elastic crawl rules (trawl_crawl_rules) and
// LOCKSS au_crawlrules (trawl_lockss). The Elastic tables are copied from
// the Elastic web crawler reference (its crawl rules section), the LOCKSS
// sample and code table from the LOCKSS crawl rules document (both among the
// project's specifications); each row runs through the
// public functions and through a Scope, whose trace must name the deciding rule.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { elasticRuleMatches, elasticScopeRule, parseElasticRule, type ElasticRule } from '../../src/scope/elastic-rules.ts';
import { compileLockssRules, lockssScopeRule } from '../../src/scope/lockss-rules.ts';
import { Scope, type ScopeInput, type ScopeRule } from '../../src/scope/scope.ts';

const input = (href: string): ScopeInput => ({ url: new URL(href), parent: undefined, hops: 0, viaRedirect: false, seed: false });

/** A rule after the dialect, to show that an allow is only "no objection". */
const AFTER: ScopeRule = { name: 'after', decide: () => undefined };

// ------------------------------------------------------------ Elastic

/** The reference's rule names, as its tables write them. */
const REFERENCE_TYPES: Record<string, ElasticRule['type']> = { 'Begins with': 'begins', Ends: 'ends', Contains: 'contains', Regex: 'regex' };

/** "Disallow if Begins with /blog" (the reference's wording) → "disallow begins /blog". */
function fromReference(phrase: string): string {
  const m = /^(Allow|Disallow) if (Begins with|Ends|Contains|Regex) (.+)$/.exec(phrase);
  assert.ok(m, `not a reference rule phrase: ${phrase}`);
  return `${m[1]!.toLowerCase()} ${REFERENCE_TYPES[m[2]!]} ${m[3]}`;
}

// "Crawl rule matching": URL path | Rule | Path pattern | Match?
const MATCHING: ReadonlyArray<readonly [path: string, rule: string, pattern: string, match: 'YES' | 'NO']> = [
  ['/foo/bar', 'Begins with', '/foo', 'YES'],
  ['/foo/bar', 'Begins with', '/*oo', 'YES'],
  ['/bar/foo', 'Begins with', '/foo', 'NO'],
  ['/foo/bar', 'Begins with', 'foo', 'NO'],
  ['/blog/posts/hello-world', 'Ends', 'world', 'YES'],
  ['/blog/posts/hello-world', 'Ends', 'hello-*', 'YES'],
  ['/blog/world-hello', 'Ends', 'world', 'NO'],
  ['/blog/world-hello', 'Ends', '*world', 'NO'],
  ['/fruits/bananas', 'Contains', 'banana', 'YES'],
  ['/fruits/apples', 'Contains', 'banana', 'NO'],
  ['/2020', 'Regex', '\\/[0-9]{3,5}', 'YES'],
  ['/20', 'Regex', '\\/[0-9]{3,5}', 'NO'],
  ['/2020', 'Regex', '[0-9]{3,5}', 'NO'],
];

// "Crawl rule order": Path | Crawl rules | Resulting policy
const ORDER: ReadonlyArray<readonly [path: string, rules: readonly string[], policy: 'ALLOW' | 'DISALLOW']> = [
  ['/blog/2021/foo-bar-baz', ['Disallow if Begins with /blog', 'Allow if Regex .*'], 'DISALLOW'],
  ['/blog/2021/foo-bar-baz', ['Allow if Regex .*', 'Disallow if Begins with /blog'], 'ALLOW'],
];

// "Restricting paths using crawl rules": Policy | Rule | Path pattern, with the
// paths the text names ("disallow the blog", "allow only the blog", "since / is
// disallowed") and the deciding rule.
const RESTRICTING: ReadonlyArray<{ what: string; rules: readonly string[]; paths: ReadonlyArray<readonly [path: string, policy: 'ALLOW' | 'DISALLOW', by: number]> }> = [
  {
    what: 'disallow the blog',
    rules: ['Disallow if Begins with /blog', 'Allow if Regex .*'],
    paths: [['/blog', 'DISALLOW', 1], ['/blog/2021/foo-bar-baz', 'DISALLOW', 1], ['/', 'ALLOW', 2], ['/about', 'ALLOW', 2]],
  },
  {
    what: 'allow only the blog',
    rules: ['Allow if Begins with /blog', 'Disallow if Regex .*', 'Allow if Regex .*'],
    paths: [['/blog', 'ALLOW', 1], ['/blog/2021/foo-bar-baz', 'ALLOW', 1], ['/', 'DISALLOW', 2], ['/about', 'DISALLOW', 2]],
  },
];

const DOMAIN = 'https://example.com';

describe('Elastic crawl rules', () => {
  describe('"Crawl rule matching" table', () => {
    for (const [path, name, pattern, match] of MATCHING) {
      const type = REFERENCE_TYPES[name]!;
      it(`${path} | ${name} | ${pattern} | ${match}`, () => {
        const rule = parseElasticRule(`disallow ${type} ${pattern}`);
        assert.deepEqual(rule, { policy: 'disallow', type, pattern });
        assert.equal(elasticRuleMatches(rule, path), match === 'YES');
        // The same row through the scope rule: a match refuses, no match falls to the implicit allow.
        const v = elasticScopeRule({ [DOMAIN]: { rules: [`disallow ${type} ${pattern}`] } }).decide(input(DOMAIN + path));
        assert.ok(v);
        assert.equal(v.allowed, match === 'NO');
        if (match === 'YES') {
          assert.equal(v.code, 'ur');
          assert.equal(v.reason, `Elastic crawl rule #1 "disallow ${type} ${pattern}" of ${DOMAIN} matches ${path}`);
        } else {
          assert.match(v.reason, /implicit last rule/);
        }
      });
    }
  });

  describe('"Crawl rule order" table', () => {
    for (const [path, phrases, policy] of ORDER) {
      it(`${path} | ${phrases.map((p, i) => `${i + 1}. ${p}`).join(' ')} | ${policy}`, () => {
        const v = elasticScopeRule({ [DOMAIN]: { rules: phrases.map(fromReference) } }).decide(input(DOMAIN + path));
        assert.ok(v);
        assert.equal(v.allowed, policy === 'ALLOW');
        assert.match(v.reason, /^Elastic crawl rule #1 /, 'the first matching rule decides');
      });
    }
  });

  describe('"Restricting paths using crawl rules" tables', () => {
    for (const { what, rules, paths } of RESTRICTING) {
      for (const [path, policy, by] of paths) {
        it(`${what}: ${path} → ${policy} by rule #${by}`, () => {
          const v = elasticScopeRule({ [DOMAIN]: { rules: rules.map(fromReference) } }).decide(input(DOMAIN + path));
          assert.ok(v);
          assert.equal(v.allowed, policy === 'ALLOW');
          assert.match(v.reason, new RegExp(`^Elastic crawl rule #${by} `));
          if (!v.allowed) assert.equal(v.code, 'ur');
        });
      }
    }
  });

  describe('domains', () => {
    const rule = elasticScopeRule({
      'https://example.com': { rules: ['disallow begins /private'] },
      'http://example.com:8080': { rules: ['disallow begins /'] },
      'https://shop.example.com/': { rules: [] },
    });
    const cases: ReadonlyArray<readonly [url: string, verdict: 'allow' | 'deny' | 'none', why: string]> = [
      ['https://example.com/private/x', 'deny', 'its own domain'],
      ['https://example.com:443/private/x', 'deny', 'the default port is the same domain'],
      ['https://EXAMPLE.com/private/x', 'deny', 'host names are case-insensitive'],
      ['https://example.com/public', 'allow', 'the implicit last rule'],
      ['http://example.com/private/x', 'none', 'another scheme is another domain, with no section'],
      ['https://www.example.com/private/x', 'none', 'another host is another domain'],
      ['http://example.com:8080/anything', 'deny', 'a domain with a port'],
      ['https://shop.example.com/private/x', 'allow', 'a domain without rules allows everything'],
      ['https://other.org/private', 'none', 'no section: no verdict'],
    ];
    for (const [url, verdict, why] of cases) {
      it(`${url} → ${verdict} (${why})`, () => {
        const v = rule.decide(input(url));
        assert.equal(v === undefined ? 'none' : v.allowed ? 'allow' : 'deny', verdict);
      });
    }

    it('refuses a domain URL with a path, the same domain twice, and a bad rule, naming them', () => {
      assert.throws(() => elasticScopeRule({ 'https://example.com/blog': { rules: [] } }), /must not include a path.*https:\/\/example\.com/);
      assert.throws(() => elasticScopeRule({ 'https://example.com': { rules: [] }, 'https://example.com:443': { rules: [] } }), /same domain/);
      assert.throws(() => elasticScopeRule({ 'not a url': { rules: [] } }), /"not a url" is not a domain URL/);
      assert.throws(() => elasticScopeRule({ [DOMAIN]: { rules: ['allow begins /a', 'deny begins /b'] } }), /rule #2 of https:\/\/example\.com: Elastic crawl rule "deny begins \/b": expected "allow\|disallow/);
    });
  });

  describe('what is matched', () => {
    const cases: ReadonlyArray<readonly [rule: string, url: string, matches: boolean, why: string]> = [
      ['disallow contains ?sort=', 'https://example.com/list?sort=asc', true, 'the query belongs to the path side of the URL'],
      ['disallow ends .pdf', 'https://example.com/a.pdf?download=1', false, 'so ends is measured to the end of the query'],
      ['disallow ends .pdf', 'https://example.com/a.pdf#page=2', true, 'the fragment is not part of it'],
      ['disallow contains #page', 'https://example.com/a.pdf#page=2', false, 'the fragment is not part of it'],
      ['disallow begins /Blog', 'https://example.com/blog', false, 'case-sensitive'],
      ['disallow begins /caf%C3%A9', 'https://example.com/café', true, 'the path is percent-encoded, as the URL serialises it'],
      ['disallow contains a*c', 'https://example.com/x/abbbc/y', true, '* in the middle of a contains pattern'],
      ['disallow begins /a.c', 'https://example.com/abc', false, 'a . in a literal pattern is a dot'],
      ['disallow begins /a+', 'https://example.com/a+b', true, 'regex characters in a literal pattern are literal'],
      ['disallow regex \\/a|\\/b', 'https://example.com/x/b', false, 'an alternation is anchored as a whole'],
      ['disallow regex \\/a|\\/b', 'https://example.com/b', true, 'an alternation is anchored as a whole'],
      ['disallow regex \\A\\/docs\\z', 'https://example.com/docs', true, 'Ruby \\A and \\z'],
      ['disallow regex \\A\\/docs\\z', 'https://example.com/docs/x', false, 'Ruby \\z is the end'],
      ['disallow regex \\/\\h+\\Z', 'https://example.com/c0ffee', true, 'Ruby \\h is a hex digit, \\Z the end'],
      ['disallow regex \\/\\h+\\Z', 'https://example.com/coffee', false, 'Ruby \\h is not the letter h'],
      ['disallow regex \\/[\\h-]+$', 'https://example.com/ab-12', true, 'Ruby \\h inside a class'],
      ['disallow regex \\/\\H', 'https://example.com/x', true, 'Ruby \\H'],
    ];
    for (const [text, url, matches, why] of cases) {
      it(`${text} on ${url} → ${matches ? 'match' : 'no match'} (${why})`, () => {
        const v = elasticScopeRule({ [DOMAIN]: { rules: [text] } }).decide(input(url));
        assert.ok(v);
        assert.equal(!v.allowed, matches);
      });
    }

    it('refuses rules it cannot read, quoting them', () => {
      assert.throws(() => parseElasticRule('allow starts /x'), /"allow starts \/x": expected "allow\|disallow begins\|ends\|contains\|regex PATTERN"/);
      assert.throws(() => parseElasticRule('disallow begins'), /expected/);
      assert.throws(() => parseElasticRule('disallow regex \\/(a'), /"disallow regex \\\\\/\(a": .*(Unterminated group|Invalid regular expression)/);
      assert.throws(() => parseElasticRule('disallow regex \\/a\\K'), /the Ruby escape \\K is not supported/);
      assert.throws(() => parseElasticRule('disallow regex \\p{Alpha}'), /the Ruby escape \\p is not supported/);
      assert.throws(() => parseElasticRule('disallow regex (?>a)'), /Invalid/);
    });

    it('trims the rule text and keeps the pattern after the type', () => {
      assert.deepEqual(parseElasticRule('  allow   contains  a b  '), { policy: 'allow', type: 'contains', pattern: 'a b' });
    });
  });

  describe('inside a Scope', () => {
    const scope = new Scope([elasticScopeRule({ [DOMAIN]: { rules: ['allow begins /blog', 'disallow regex .*'] } }), AFTER]);

    it('a disallow ends the walk and is the deciding rule', () => {
      const d = scope.decide(input(`${DOMAIN}/about`), true);
      assert.equal(d.allowed, false);
      assert.equal(d.code, 'ur');
      assert.equal(d.decidedBy, 'trawl_crawl_rules');
      assert.equal(d.reason, `Elastic crawl rule #2 "disallow regex .*" of ${DOMAIN} matches /about`);
      assert.deepEqual(d.trace, [{ rule: 'trawl_crawl_rules', verdict: 'deny', reason: d.reason }]);
    });

    it('an allow is no objection: the next rules still run', () => {
      const d = scope.decide(input(`${DOMAIN}/blog/x`), true);
      assert.equal(d.allowed, true);
      assert.equal(d.decidedBy, 'trawl_crawl_rules'); // the last rule that allowed it explicitly
      assert.deepEqual(d.trace, [
        { rule: 'trawl_crawl_rules', verdict: 'allow', reason: `Elastic crawl rule #1 "allow begins /blog" of ${DOMAIN} matches /blog/x` },
        { rule: 'after', verdict: 'pass', reason: '' },
      ]);
    });

    it('a URL outside every domain passes', () => {
      const d = scope.decide(input('https://elsewhere.org/about'), true);
      assert.equal(d.allowed, true);
      assert.deepEqual(d.trace[0], { rule: 'trawl_crawl_rules', verdict: 'pass', reason: '' });
    });
  });
});

// ------------------------------------------------------------ LOCKSS

// The spec's sample, as written in its <string> elements.
const SAMPLE_RULES = [
  String.raw`4, "^%s", base_url`,
  String.raw`1, "^%s.*\.(css|js|gif|jpg|png)$", base_url`,
  String.raw`2, "^%s%s/vol%s/iss[^/]+/art[^/]+/citedby", base_url, journal_id, volume_name`,
  String.raw`1, "^%s%s/vol%s/", base_url, journal_id, volume_name`,
  String.raw`1, "^%spdf/.*\.pdf$", base_url`,
];
const PARAMS = { base_url: 'http://www.example.com/', journal_id: 'jid', volume_name: '12' };

/** The deciding rule's 1-based position, or 'default'. */
function decidedBy(reason: string): number | 'default' {
  const m = /^LOCKSS crawl rule #(\d+) /.exec(reason);
  if (m) return Number(m[1]);
  assert.match(reason, /the default outcome is Exclude$/);
  return 'default';
}

type Outcome = 'include' | 'exclude';

function lockssOutcome(rule: ScopeRule, url: string): { outcome: Outcome; by: number | 'default' } {
  const v = rule.decide(input(url));
  assert.ok(v, 'the LOCKSS rule always decides');
  if (!v.allowed) assert.equal(v.code, 'ur');
  return { outcome: v.allowed ? 'include' : 'exclude', by: decidedBy(v.reason) };
}

describe('LOCKSS crawl rules', () => {
  describe('the spec sample', () => {
    const rules = compileLockssRules(SAMPLE_RULES, PARAMS);
    const rule = lockssScopeRule(rules);

    it('expands the templates with regex-escaped values', () => {
      assert.deepEqual(
        rules.map((r) => [r.code, r.args, r.regex.source]),
        [
          [4, ['base_url'], String.raw`^http:\/\/www\.example\.com\/`],
          [1, ['base_url'], String.raw`^http:\/\/www\.example\.com\/.*\.(css|js|gif|jpg|png)$`],
          [2, ['base_url', 'journal_id', 'volume_name'], String.raw`^http:\/\/www\.example\.com\/jid\/vol12\/iss[^/]+\/art[^/]+\/citedby`],
          [1, ['base_url', 'journal_id', 'volume_name'], String.raw`^http:\/\/www\.example\.com\/jid\/vol12\/`],
          [1, ['base_url'], String.raw`^http:\/\/www\.example\.com\/pdf\/.*\.pdf$`],
        ],
      );
      assert.equal(rules[1]!.template, String.raw`^%s.*\.(css|js|gif|jpg|png)$`);
    });

    const cases: ReadonlyArray<readonly [url: string, outcome: Outcome, by: number | 'default', why: string]> = [
      ['http://www.example.com/jid/vol12/', 'include', 4, 'the volume'],
      ['http://www.example.com/jid/vol12/iss3/art4/', 'include', 4, 'an article of the volume'],
      ['http://www.example.com/jid/vol12/iss3/art4/fulltext.html', 'include', 4, 'an article page'],
      ['http://www.example.com/jid/vol12/iss3/art4/#refs', 'include', 4, 'the fragment is not matched'],
      ['http://www.example.com/jid/vol12/iss3/art4/citedby', 'exclude', 3, 'citedby: rule 3 (code 2) comes before rule 4 (code 1)'],
      ['http://www.example.com/jid/vol12/iss3/art4/citedby?page=2', 'exclude', 3, 'citedby with a query'],
      ['http://www.example.com/jid/vol12/iss3/art4/citedby/print.css', 'include', 2, 'a stylesheet: rule 2 comes before the citedby rule'],
      ['http://www.example.com/css/site.css', 'include', 2, 'css'],
      ['http://www.example.com/js/app.js', 'include', 2, 'js'],
      ['http://www.example.com/images/logo.png', 'include', 2, 'png'],
      ['http://www.example.com/images/cover.jpg', 'include', 2, 'jpg'],
      ['http://www.example.com/images/spacer.gif', 'include', 2, 'gif'],
      ['http://www.example.com/images/logo.png?v=2', 'exclude', 'default', 'the $ of rule 2 is the end of the URL, query included'],
      ['http://www.example.com/pdf/jid/vol12/art4.pdf', 'include', 5, 'a pdf'],
      ['http://www.example.com/pdf/readme.txt', 'exclude', 'default', 'not a pdf: no rule gives an outcome'],
      ['http://www.example.com/jid/vol12/art4.pdf', 'include', 4, 'a pdf inside the volume is the volume rule'],
      ['http://www.example.com/jid/vol13/iss1/art1/', 'exclude', 'default', 'another volume'],
      ['http://www.example.com/jid/vol123/', 'exclude', 'default', 'vol123 is not vol12/'],
      ['http://www.example.com/other/vol12/', 'exclude', 'default', 'another journal'],
      ['http://www.example.com/', 'exclude', 'default', 'the home page is in base_url but no rule includes it'],
      ['http://other.example.org/jid/vol12/', 'exclude', 1, 'outside base_url: rule 1 (code 4)'],
      ['https://www.example.com/jid/vol12/', 'exclude', 1, 'another scheme is outside base_url'],
      ['http://example.com/jid/vol12/', 'exclude', 1, 'the host without www is outside base_url'],
      ['http://wwwxexample.com/jid/vol12/', 'exclude', 1, 'the dots of base_url are literal dots'],
      ['http://cdn.example.net/site.css', 'exclude', 1, 'a stylesheet outside base_url'],
      ['http://www.example.com:8080/jid/vol12/', 'exclude', 1, 'another port is outside base_url'],
    ];
    for (const [url, outcome, by, why] of cases) {
      it(`${url} → ${outcome} by ${by === 'default' ? 'the default' : `rule #${by}`} (${why})`, () => {
        assert.deepEqual(lockssOutcome(rule, url), { outcome, by });
      });
    }

    it('a base_url without its final "/" breaks "^%spdf/", as the spec sample implies', () => {
      const noSlash = lockssScopeRule(compileLockssRules(SAMPLE_RULES, { ...PARAMS, base_url: 'http://www.example.com' }));
      assert.deepEqual(lockssOutcome(noSlash, 'http://www.example.com/pdf/a.pdf'), { outcome: 'exclude', by: 'default' });
      assert.deepEqual(lockssOutcome(noSlash, 'http://www.example.compdf/a.pdf'), { outcome: 'include', by: 5 });
    });
  });

  describe('each code on its own (the "Crawl Rule Types" table)', () => {
    const MATCH = 'http://www.example.com/a/x';
    const NO_MATCH = 'http://www.example.com/b/x';
    // code | outcome when the URL matches | outcome when it does not; rule #2 includes
    // everything, so "no outcome" from rule #1 shows as rule #2 deciding.
    const TABLE: ReadonlyArray<readonly [code: number, name: string, onMatch: readonly [Outcome, number], onNoMatch: readonly [Outcome, number]]> = [
      [1, 'Include', ['include', 1], ['include', 2]],
      [2, 'Exclude', ['exclude', 1], ['include', 2]],
      [3, 'Include No Match', ['include', 2], ['include', 1]],
      [4, 'Exclude No Match', ['include', 2], ['exclude', 1]],
      [5, 'Include Match Else Exclude', ['include', 1], ['exclude', 1]],
      [6, 'Exclude Match Else Include', ['exclude', 1], ['include', 1]],
    ];
    for (const [code, name, onMatch, onNoMatch] of TABLE) {
      it(`${code} ${name}`, () => {
        const rule = lockssScopeRule(compileLockssRules([`${code}, "^%sa/", base_url`, '1, "."'], PARAMS));
        assert.deepEqual(lockssOutcome(rule, MATCH), { outcome: onMatch[0], by: onMatch[1] });
        assert.deepEqual(lockssOutcome(rule, NO_MATCH), { outcome: onNoMatch[0], by: onNoMatch[1] });
        const v = rule.decide(input(MATCH));
        assert.ok(v);
        if (onMatch[1] === 1) assert.match(v.reason, new RegExp(`^LOCKSS crawl rule #1 \\(${code} ${name}, `));
      });
    }

    it('no rule, or no outcome from any rule: the default is Exclude', () => {
      assert.deepEqual(lockssOutcome(lockssScopeRule([]), MATCH), { outcome: 'exclude', by: 'default' });
      assert.deepEqual(lockssOutcome(lockssScopeRule(compileLockssRules(['1, "^%sa/", base_url'], PARAMS)), NO_MATCH), { outcome: 'exclude', by: 'default' });
    });
  });

  // Expected sources are written as RegExp#source shows them: with every "/" as "\/".
  describe('templates, arguments and functions', () => {
    const P = { base_url: 'http://www.example.com:8080/lockss/', plain: 'http://example.com/', secure: 'https://www.example.com/', vol: '012', odd: 'j(1)+.x' };
    const cases: ReadonlyArray<readonly [rule: string, source: string]> = [
      ['1, "^%s$", base_url', String.raw`^http:\/\/www\.example\.com:8080\/lockss\/$`],
      ['1, "%s", url_host(base_url)', String.raw`www\.example\.com`],
      ['1, "%s", url_host_port(base_url)', String.raw`www\.example\.com:8080`],
      ['1, "%s", url_host_port(secure)', String.raw`www\.example\.com`],
      ['1, "%s", url_domain(base_url)', String.raw`example\.com`],
      ['1, "%s", url_domain(plain)', String.raw`example\.com`],
      ['1, "%s", url_path(base_url)', String.raw`\/lockss\/`],
      ['1, "%s", url_protocol(base_url)', 'http'],
      ['1, "%s", url_scheme(secure)', 'https'],
      ['1, "%s", url_port(base_url)', '8080'],
      ['1, ":%d/", url_port(secure)', ':443\\/'],
      ['1, ":%d/", url_port(plain)', ':80\\/'],
      ['1, "%s", add_www(plain)', String.raw`http:\/\/www\.example\.com\/`],
      ['1, "%s", add_www(secure)', String.raw`https:\/\/www\.example\.com\/`],
      ['1, "%s", del_www(secure)', String.raw`https:\/\/example\.com\/`],
      ['1, "%s", del_www(url_host(base_url))', String.raw`example\.com`],
      ['1, "%s", add_www(url_domain(base_url))', String.raw`www\.example\.com`],
      ['1, "%s", to_https(plain)', String.raw`https:\/\/example\.com\/`],
      ['1, "%s", to_http(secure)', String.raw`http:\/\/www\.example\.com\/`],
      ['1, "^https?://%s/", url_host( base_url )', String.raw`^https?:\/\/www\.example\.com\/`],
      ['1, "vol%d/", vol', 'vol12\\/'],
      ['1, "%s%%7E", url_host(base_url)', String.raw`www\.example\.com%7E`],
      ['1, "/%s/", odd', String.raw`\/j\(1\)\+\.x\/`],
      [String.raw`1, "^%s\"q\"\.", plain`, String.raw`^http:\/\/example\.com\/"q"\.`],
      ['1, "^no-args$"', '^no-args$'],
      ['  5 ,"a"  ', 'a'],
    ];
    for (const [text, source] of cases) {
      it(`${text} → /${source}/`, () => {
        const [r] = compileLockssRules([text], P);
        assert.ok(r);
        assert.equal(r.regex.source, source);
      });
    }

    it('a regex-escaped value matches only itself', () => {
      const rule = lockssScopeRule(compileLockssRules(['5, "^%s%s/", base_url, odd'], P));
      assert.equal(lockssOutcome(rule, 'http://www.example.com:8080/lockss/j(1)+.x/').outcome, 'include');
      assert.equal(lockssOutcome(rule, 'http://www.example.com:8080/lockss/j11x/').outcome, 'exclude');
    });
  });

  describe('bad rules fail clearly', () => {
    const P = { base_url: 'http://www.example.com/', journal_id: 'jid', volume_name: '12' };
    const cases: ReadonlyArray<readonly [rule: string, error: RegExp]> = [
      ['1, "^%s%s/", base_url', /^LOCKSS crawl rule #2 \(1, "\^%s%s\/", base_url\): the template has 2 conversions \(%s or %d\) but 1 argument is given$/],
      ['1, "^%s", base_url, journal_id', /rule #2 .*: the template has 1 conversion \(%s or %d\) but 2 arguments are given$/],
      ['1, "^%s", url_hots(base_url)', /rule #2 .*: at column 11: unknown function url_hots\(\); the supported functions are url_host, url_host_port, url_domain, url_path, url_protocol, url_scheme, url_port, add_www, del_www, to_http, to_https$/],
      ['1, "^%s%s", base_url, jornal_id', /rule #2 .*: argument 2: unknown parameter "jornal_id"; the params section has base_url, journal_id, volume_name$/],
      ['1, "^%s", url_host', /argument 1: unknown parameter "url_host" \(url_host is a function: write url_host\(base_url\)\)/],
      ['1, "^%s", url_host(journal_id)', /argument 1: url_host\(\) needs an absolute URL such as http:\/\/www\.example\.com\/, got "jid"/],
      ['1, "^%svol%d/", base_url, journal_id', /argument 2 is "jid", which %d cannot write: it is not an integer/],
      ['1, "^%x", base_url', /unsupported conversion "%x" at template offset 1; only %s, %d and %% are supported/],
      ['1, "^%5s", base_url', /unsupported conversion "%5"/],
      ['1, "^%s(", base_url', /the expanded template ".*" is not a valid regular expression/],
      ['7, "^%s", base_url', /at column 1: crawl rule code 7 is not one of 1 to 6/],
      ['include, "^%s", base_url', /at column 1: expected a crawl rule code from 1 to 6/],
      ['1 "^%s", base_url', /at column 3: expected "," after the crawl rule code, found "\\""/],
      ['1, ^%s, base_url', /at column 4: expected the template in double quotes/],
      ['1, "^%s, base_url', /the template has no closing double quote/],
      ['1, "^%s" base_url', /at column 10: expected "," before the next argument/],
      ['1, "^%s", url_host(base_url', /expected "\)" closing url_host\(, found the end of the rule/],
      ['1, "^%s", ', /expected a parameter name or a function/],
    ];
    for (const [text, error] of cases) {
      it(text, () => {
        // Second in the list, so the message must name the rule's position.
        assert.throws(() => compileLockssRules(['4, "^%s", base_url', text], P), (err: Error) => {
          assert.match(err.message, /^LOCKSS crawl rule #2 \(/);
          assert.match(err.message, error);
          return true;
        });
      });
    }
  });

  describe('inside a Scope', () => {
    const scope = new Scope([lockssScopeRule(compileLockssRules(SAMPLE_RULES, PARAMS)), AFTER]);

    it('an exclude is the deciding rule, with the LOCKSS rule in the reason', () => {
      const d = scope.decide(input('http://www.example.com/jid/vol12/iss3/art4/citedby'), true);
      assert.equal(d.allowed, false);
      assert.equal(d.code, 'ur');
      assert.equal(d.decidedBy, 'trawl_lockss');
      assert.equal(d.reason, String.raw`LOCKSS crawl rule #3 (2 Exclude, ^http:\/\/www\.example\.com\/jid\/vol12\/iss[^/]+\/art[^/]+\/citedby) matches http://www.example.com/jid/vol12/iss3/art4/citedby: exclude`);
      assert.deepEqual(d.trace, [{ rule: 'trawl_lockss', verdict: 'deny', reason: d.reason }]);
    });

    it('the default exclusion decides too', () => {
      const d = scope.decide(input('http://www.example.com/about.html'), true);
      assert.equal(d.decidedBy, 'trawl_lockss');
      assert.equal(d.reason, 'no LOCKSS crawl rule gives an outcome for http://www.example.com/about.html; the default outcome is Exclude');
    });

    it('an include is no objection: the next rules still run', () => {
      const d = scope.decide(input('http://www.example.com/jid/vol12/iss3/art4/'), true);
      assert.equal(d.allowed, true);
      assert.equal(d.decidedBy, 'trawl_lockss'); // the last rule that allowed it explicitly
      assert.deepEqual(d.trace.map((s) => [s.rule, s.verdict]), [['trawl_lockss', 'allow'], ['after', 'pass']]);
      assert.match(d.trace[0]!.reason, /^LOCKSS crawl rule #4 \(1 Include, .*\) matches .*: include$/);
    });
  });
});

describe('both dialects in one Scope', () => {
  const scope = new Scope([
    elasticScopeRule({ 'http://www.example.com': { rules: ['disallow contains /print/', 'allow regex .*'] } }),
    lockssScopeRule(compileLockssRules(SAMPLE_RULES, PARAMS)),
    AFTER,
  ]);
  const cases: ReadonlyArray<readonly [url: string, allowed: boolean, decidedBy: string, trace: string]> = [
    ['http://www.example.com/jid/vol12/print/x', false, 'trawl_crawl_rules', 'trawl_crawl_rules:deny'],
    ['http://www.example.com/jid/vol12/x', true, 'trawl_lockss', 'trawl_crawl_rules:allow trawl_lockss:allow after:pass'],
    ['http://www.example.com/jid/vol12/iss1/art1/citedby', false, 'trawl_lockss', 'trawl_crawl_rules:allow trawl_lockss:deny'],
    ['http://other.example.org/x', false, 'trawl_lockss', 'trawl_crawl_rules:pass trawl_lockss:deny'],
  ];
  for (const [url, allowed, by, trace] of cases) {
    it(`${url} → ${allowed ? 'allowed' : `refused by ${by}`}`, () => {
      const d = scope.decide(input(url), true);
      assert.equal(d.allowed, allowed);
      assert.equal(d.decidedBy, by);
      assert.equal(d.trace.map((s) => `${s.rule}:${s.verdict}`).join(' '), trace);
    });
  }
});
