// robots.txt decisions from crawler-commons, protego and reppy
// (test/fixtures/conformance/robots/more/, one loop per file). Each URL is
// judged in the form the crawl gives it: WHATWG-parsed, then the default
// canonicalization (so `/%7Emak` is `/~mak`).
//
// Where these parsers disagree with RFC 9309 or Google's reference parser,
// the RFC decides, then Google's parser; DIFFERS lists every vector trawl
// decides otherwise, by reason. Regressions this file guards: a Crawl-delay
// line does not end a run of user-agent lines (testBrokenKrugleRobotsTxtFile),
// and a token with digits names its own group.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { normalizeUrl, pathAndQuery } from '../../src/core/url.ts';
import { productTokenOf } from '../../src/engine/runtime.ts';
import { buildCanonicalizer, DEFAULT_CANON_RULES } from '../../src/scope/canonicalize.ts';
import { parseRobots } from '../../src/scope/robots.ts';
import { FIXTURES } from '../helpers.ts';

interface MoreVector {
  readonly id: string;
  readonly robots?: string;
  readonly robots_hex?: string;
  readonly agent?: string;
  readonly agents?: string | readonly string[];
  readonly url: string;
  readonly allowed: boolean;
}

const AGENT_NAMES =
  'the parser matches agent names by prefix, as a list, or as words of a whole User-Agent string; trawl matches its one product token exactly (RFC 9309 2.2.1)';
const NON_ASCII_TOKEN = 'a product token is [A-Za-z0-9_-] (RFC 9309 2.2.1 plus digits); a non-ASCII name names no group';
const TYPOS = 'misspelled keys (dissalow, useragent) are ignored, as RFC 9309 and Google do; obeying a guess could also disallow what the site meant to allow';
const ENCODED = "the crawl's normal form decodes %62%61%7A to baz (and %7E to ~) in the URL; a pattern keeps its escapes (google/robotstxt ID_Encoding)";
const UNKNOWN_KEYS = 'an unknown key does not end a run of user-agent lines, as in Google\'s parser (RFC 9309 leaves it open)';
const PLACEHOLDER = 'the source builds this URL from a variable ($TMP) that the vector does not expand';

const DIFFERS: ReadonlyMap<string, string> = new Map([
  ...['testNutchCases-row494-2', 'testNutchCases-row495-2', 'testNutchCases-row496-2', 'testNutchCases-row498-2', 'testNutchCases-row499-2',
    'testNutchCases-row505-2', 'testNutchCases-row506-2', 'testNutchCases-row509-2', 'testNutchCases2-row552-2', 'testNutchCases2-row553-2',
    'testNutchCases2-row556-2', 'testNutchCases2-row559-2', 'testHeritrixCases-5', 'testHeritrixCases-6', 'testHeritrixCases-7',
    'testMultiAgentNames-1', 'testMultiWordAgentName-1', 'testSpacesInMultipleUserAgentNames-2', 'testSpacesInMultipleUserAgentNames-3',
    'testMatchingUserAgentNamesHttpHeader-3', 'testMatchingUserAgentNamesHttpHeader-4', 'test_generosity-3', 'test_generosity-5', 'test_generosity-6',
  ].map((id) => [id, AGENT_NAMES] as const),
  ...['test_unicode_url_and_useragent-4', 'test_unicode_url_and_useragent-10', 'test_unicode_url_and_useragent-12', 'test_unicode_url_and_useragent-15']
    .map((id) => [id, NON_ASCII_TOKEN] as const),
  ...['testDirectiveTypos-1', 'testDirectiveTypos-2', 'testDirectiveTypos-3', 'testDirectiveTypos-4', 'testDirectiveTypos-5',
    'test_malformed_disallow-2', 'test_malformed_disallow-3', 'test_malformed_disallow-4', 'test_malformed_disallow-5', 'test_malformed_disallow-6',
  ].map((id) => [id, TYPOS] as const),
  ...['testEscapedPaths-row319-1', 'test_percentage_encoding-6', 'test_percentage_encoding-7', 'test_1996rfc_examples-15'].map((id) => [id, ENCODED] as const),
  ...['test_grouping_unknown_keys-1', 'test_grouping_unknown_keys-2', 'test_grouping_unknown_keys-3'].map((id) => [id, UNKNOWN_KEYS] as const),
  ...['testManyUserAgentsMergeRules-2', 'test_1996rfc_examples-3', 'test_1996rfc_examples-6'].map((id) => [id, PLACEHOLDER] as const),
  ['testHtmlMarkupInRobotsTxt-2', 'HTML tags are not stripped from lines: `Disallow: /<BR>` is the path /%3CBR%3E'],
  ['testBigCrawlDelay-1', 'a large Crawl-delay is a politeness setting, not a disallow'],
  ['testRobotsWithUTF16LEBOM-1', 'robots.txt is UTF-8 (RFC 9309 2.3); a UTF-16 file is not decoded'],
  ['testRobotsWithUTF16BEBOM-1', 'robots.txt is UTF-8 (RFC 9309 2.3); a UTF-16 file is not decoded'],
  ['testPrecedenceOfRules-1', 'RFC 9309 2.2.2 counts octets: `Disallow: /*` (2) is more specific than `Allow: /` (1)'],
  ['test_index_html_is_directory-1', 'Allow: /d/index.html does not also allow /d/ (Google-specific, not in RFC 9309; it widens an allow)'],
  ['test_special_symbols_dual_behaviour-2', 'a final `$` is the end anchor (RFC 9309 2.2.3); a literal `$` is written %24'],
  ['test_special_symbols_dual_behaviour-3', 'a final `$` is the end anchor (RFC 9309 2.2.3); a literal `$` is written %24'],
  ['test_with_absolute_urls-2', 'a pattern is a path (RFC 9309 2.2.2); an absolute URL as a pattern matches no path'],
  ['test_no_leading_user_agent-2#reppy', 'rules before the first user-agent line belong to no group (RFC 9309 2.2.1)'],
  ['test_grouping_unknown_keys-1#reppy', UNKNOWN_KEYS],
  ['test_skip_malformed_line-1#reppy', 'a missing colon is accepted for known keys, as Google does (obeying `Disallow /x` is the polite reading)'],
]);

const canon = buildCanonicalizer({ rules: DEFAULT_CANON_RULES });

/** The path and query the crawl would match: WHATWG (relative ones against a fixed origin), then canonicalized. */
function crawlPath(url: string): string {
  const abs = normalizeUrl(url, 'http://example.com/');
  assert.ok(abs !== undefined, `vector URL ${url} does not parse`);
  return pathAndQuery(new URL(canon.canonicalize(abs) ?? abs));
}

for (const [file, suffix] of [['robots-crawler-commons.jsonl', ''], ['robots-protego.jsonl', ''], ['robots-reppy.jsonl', '#reppy']] as const) {
  describe(`robots.txt conformance: more/${file}`, () => {
    const vectors = readFileSync(`${FIXTURES}conformance/robots/more/${file}`, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as MoreVector);
    it('has vectors and unique ids', () => {
      assert.ok(vectors.length > 50);
      assert.equal(new Set(vectors.map((v) => v.id)).size, vectors.length);
    });
    for (const v of vectors) {
      const why = DIFFERS.get(v.id + suffix);
      const agent = Array.isArray(v.agents) ? v.agents.join(',') : ((v.agent ?? v.agents) as string);
      it(`${v.id}: ${agent} ${v.url} → ${why ? `differs (${why})` : v.allowed ? 'allowed' : 'disallowed'}`, () => {
        const body = v.robots_hex !== undefined ? Buffer.from(v.robots_hex, 'hex') : v.robots!;
        const got = parseRobots(body).forAgent(agent).isAllowed(crawlPath(v.url));
        assert.equal(got, why ? !v.allowed : v.allowed);
      });
    }
  });
}

describe('robots.txt groups: regressions', () => {
  it('a token with digits (MJ12bot) obeys its own group, not User-agent: MJ', () => {
    const robots = parseRobots('User-agent: MJ\nDisallow: /\n\nUser-agent: MJ12bot\nDisallow: /private\n');
    const token = productTokenOf('MJ12bot/v1.4.8 (http://mj12bot.com/)');
    assert.equal(token, 'MJ12bot');
    const rules = robots.forAgent(token);
    assert.equal(rules.isAllowed('/public'), true);
    assert.equal(rules.isAllowed('/private/x'), false);
  });
  it('a Crawl-delay line does not end a run of user-agent lines', () => {
    const robots = parseRobots('User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /x\n');
    for (const agent of ['a', 'b']) {
      const rules = robots.forAgent(agent);
      assert.equal(rules.isAllowed('/x'), false, agent);
      assert.equal(rules.crawlDelayS, 5, agent);
    }
  });
});
