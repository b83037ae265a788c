// robots.txt parsing and matching (RFC 9309), driven by the conformance vectors in
// test/fixtures/conformance/robots/ (one loop per file), plus the response-code table.
//
// Deliberate differences from the vectors. Everything tagged rfc9309 or
// rfc9309-derived must agree; of the rest, exactly the vectors listed in
// EXPECTED_TO_DIFFER (below) decide otherwise, for these reasons:
//
// | vector note / source test                         | trawl's reason                                          |
// |---------------------------------------------------|---------------------------------------------------------|
// | GoogleOnly_IndexHTMLisDirectory: `Allow: /d/index.html` also allows `/d/` | not in RFC 9309; it would widen an allow rule |
// | GoogleOnly_LineTooLong: lines cut at 16,664 bytes | not in RFC 9309; a cut rule matches other URLs (the 500 KiB body limit bounds memory) |
// | differs-from-google-robotstxt: "robots-parser percent-encodes/normalises the URL" (raw π, ❃, 💩, ✼, ✤, ✿ in the URL) | isAllowed takes a percent-encoded path, as a WHATWG-serialised URL is; raw non-ASCII is compared as is, which rfc9309 ID_Encoding requires |
// | origin-mismatch: "url is not on robots_url origin" | choosing the robots.txt of the URL's origin is the caller's job (one robots.txt per site); these rules applied to the path allow it |
//
// A Crawl-delay line does not end a run of user-agent lines (Google, crawler-commons);
// robots-parser's five crawl-delay vectors that say otherwise are listed where the
// robots-extra file is run. The vectors of crawler-commons, protego and reppy, and
// their differences, are in test/scope/robots-more.test.ts.
//
// Google-specific choices where trawl agrees with Google (so not listed): a
// missing ":" is accepted for known keys (`disallow /` is obeyed, the polite
// reading); a user-agent line's value is read up to its first non-token character
// (`Foo Bar` names `foo`), while the caller's token is only cut at `/`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  ALLOW_ALL,
  DEFAULT_ROBOTS_MAX_BYTES,
  DISALLOW_ALL,
  escapeRobotsPattern,
  isValidProductToken,
  parseRobots,
  robotsFromOutcome,
  robotsPathOf,
  type ParsedRobots,
  type RobotsFetchOutcome,
} from '../../src/scope/robots.ts';
import { FIXTURES } from '../helpers.ts';

const DIR = `${FIXTURES}conformance/robots/`;

function readJsonl<T>(name: string): T[] {
  return readFileSync(DIR + name, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

interface RobotsVector {
  readonly robots: string;
  readonly agent: string;
  readonly url: string;
  readonly allowed: boolean;
  readonly source: string;
  readonly tags: readonly string[];
  readonly note?: string;
}

/** A vector's id: its source test's name and its 1-based ordinal among that test's vectors. */
function withIds<T extends { source: string }>(vectors: readonly T[]): Array<T & { id: string }> {
  const seen = new Map<string, number>();
  return vectors.map((v) => {
    const n = (seen.get(v.source) ?? 0) + 1;
    seen.set(v.source, n);
    return { ...v, id: `${v.source.slice(v.source.indexOf('#') + 1)}#${n}` };
  });
}

const RAW_NON_ASCII =
  'the URL carries raw non-ASCII; isAllowed takes a percent-encoded path (WHATWG URLs are) and rfc9309 ID_Encoding forbids encoding it here';
const OTHER_ORIGIN = "another origin's URL: the caller picks the robots.txt by site; these rules applied to the path allow it";
const NO_LINE_CUT = 'no 16,664-byte line cut (not in RFC 9309): a cut pattern would match other URLs';

/** Vector id → why trawl decides otherwise. Every other vector must agree with trawl. */
const EXPECTED_TO_DIFFER: ReadonlyMap<string, string> = new Map([
  ['GoogleOnly_IndexHTMLisDirectory#1', 'Allow: /d/index.html does not also allow /d/ (not in RFC 9309; it widens an allow)'],
  ['GoogleOnly_LineTooLong#2', NO_LINE_CUT],
  ['GoogleOnly_LineTooLong#5', NO_LINE_CUT],
  ['should handle Unicode and urlencoded paths#9', RAW_NON_ASCII],
  ['should handle Unicode and urlencoded paths#10', RAW_NON_ASCII],
  ['should handle Unicode and urlencoded paths#13', RAW_NON_ASCII],
  ['should handle Unicode and urlencoded paths#14', RAW_NON_ASCII],
  ['should handle Unicode and urlencoded paths#17', RAW_NON_ASCII],
  ['should handle Unicode and urlencoded paths#18', RAW_NON_ASCII],
  ['should handle Unicode and urlencoded paths#21', RAW_NON_ASCII],
  ['should handle Unicode and urlencoded paths#23', RAW_NON_ASCII],
  ['should handle Unicode and urlencoded paths#25', RAW_NON_ASCII],
  ['should honor given port number#3', OTHER_ORIGIN],
  ['should honor given port number#4', OTHER_ORIGIN],
  ['should honor given port number#5', OTHER_ORIGIN],
  ['should honor given port number#6', OTHER_ORIGIN],
  ['should default to port 80 for http: if no port given#3', OTHER_ORIGIN],
  ['should default to port 80 for http: if no port given#4', OTHER_ORIGIN],
  ['should default to port 443 for https: if no port given#5', OTHER_ORIGIN],
  ['should default to port 443 for https: if no port given#6', OTHER_ORIGIN],
]);

/** Tags whose vectors state RFC 9309 itself: no difference is allowed. */
const MUST_AGREE = ['rfc9309', 'rfc9309-derived'];

describe('robots.txt conformance: robots.jsonl', () => {
  const vectors = withIds(readJsonl<RobotsVector>('robots.jsonl'));

  it('has unique vector ids, and every listed difference names a vector', () => {
    const ids = new Set(vectors.map((v) => v.id));
    assert.equal(ids.size, vectors.length);
    for (const id of EXPECTED_TO_DIFFER.keys()) assert.ok(ids.has(id), `${id} is not a vector`);
  });

  it('agrees with every vector except the deliberate differences', (t) => {
    const perTag = new Map<string, { pass: number; total: number }>();
    const differing: string[] = [];
    for (const v of vectors) {
      const got = parseRobots(v.robots).forAgent(v.agent).isAllowed(robotsPathOf(v.url));
      const agrees = got === v.allowed;
      if (!agrees) differing.push(v.id);
      for (const tag of v.tags) {
        const c = perTag.get(tag) ?? { pass: 0, total: 0 };
        c.total++;
        if (agrees) c.pass++;
        perTag.set(tag, c);
      }
      if (MUST_AGREE.some((tag) => v.tags.includes(tag))) {
        assert.equal(got, v.allowed, `${v.id} [${v.tags.join(', ')}] ${JSON.stringify(v.url)} ${v.note ?? ''}`);
      }
    }
    for (const [tag, c] of [...perTag].sort()) t.diagnostic(`robots ${tag}: ${c.pass}/${c.total}`);
    t.diagnostic(`robots all: ${vectors.length - differing.length}/${vectors.length} (${EXPECTED_TO_DIFFER.size} deliberate differences)`);
    for (const tag of MUST_AGREE) {
      const c = perTag.get(tag);
      assert.ok(c && c.total > 0 && c.pass === c.total, `${tag}: ${c?.pass}/${c?.total}`);
    }
    assert.deepEqual(differing.sort(), [...EXPECTED_TO_DIFFER.keys()].sort());
  });
});

interface ExtraVector {
  readonly kind: string;
  readonly robots?: string;
  readonly robots_hex?: string;
  readonly input?: string;
  readonly url?: string;
  readonly agent?: string | null;
  readonly expected: unknown;
  readonly source: string;
}

function bodyOf(v: ExtraVector): string | Uint8Array {
  return v.robots_hex !== undefined ? new Uint8Array(Buffer.from(v.robots_hex, 'hex')) : v.robots!;
}

/** How each extra kind is checked; kinds without a checker do not fit this API. */
const EXTRA_CHECKS: Readonly<Record<string, (v: ExtraVector) => unknown>> = {
  // valid_directives ↔ directiveCount, unknown_directives ↔ invalidLines (the inputs have no
  // other kind of skipped line), last_line_seen ↔ lineCount (their last directive is on the last line).
  'parse-stats': (v) => {
    const p = parseRobots(bodyOf(v));
    const e = v.expected as Record<string, number>;
    const got: Record<string, number> = { valid_directives: p.directiveCount };
    if ('unknown_directives' in e) got.unknown_directives = p.invalidLines;
    if ('last_line_seen' in e) got.last_line_seen = p.lineCount;
    return got;
  },
  sitemaps: (v) => parseRobots(bodyOf(v)).sitemaps,
  'crawl-delay': (v) => parseRobots(bodyOf(v)).forAgent(v.agent ?? '').crawlDelayS ?? null,
  'path-params-query': (v) => robotsPathOf(v.input!),
  'escape-pattern': (v) => escapeRobotsPattern(v.input!),
  'matching-line-number': (v) => parseRobots(bodyOf(v)).forAgent(v.agent ?? '').decidingRule(robotsPathOf(v.url!))?.line ?? -1,
  'valid-user-agent-token': (v) => isValidProductToken(v.input!),
};

/** Kinds left out, and why. */
const EXTRA_SKIPPED: Readonly<Record<string, string>> = {
  'not-applicable-url': 'origin checks belong to the caller (robots.txt is chosen per site)',
  'preferred-host': 'the Yandex Host: directive is not supported (ignored as unknown)',
  'explicitly-disallowed': 'no "explicit mode" in this API',
};

describe('robots.txt conformance: robots-extra.jsonl', () => {
  const vectors = readJsonl<ExtraVector>('robots-extra.jsonl');

  it('knows every kind', () => {
    for (const v of vectors) assert.ok(v.kind in EXTRA_CHECKS || v.kind in EXTRA_SKIPPED, v.kind);
  });

  it('agrees with every vector of the kinds that fit the API', (t) => {
    const perKind = new Map<string, { pass: number; total: number }>();
    const failures: string[] = [];
    for (const v of vectors) {
      const check = EXTRA_CHECKS[v.kind];
      if (!check) continue;
      const c = perKind.get(v.kind) ?? { pass: 0, total: 0 };
      c.total++;
      const got = check(v);
      try {
        assert.deepEqual(got, v.expected);
        c.pass++;
      } catch {
        failures.push(`${v.kind} ${v.source}: got ${JSON.stringify(got)}, expected ${JSON.stringify(v.expected)}`);
      }
      perKind.set(v.kind, c);
    }
    for (const [kind, c] of [...perKind].sort()) t.diagnostic(`robots-extra ${kind}: ${c.pass}/${c.total}`);
    for (const [kind, why] of Object.entries(EXTRA_SKIPPED)) t.diagnostic(`robots-extra ${kind}: skipped (${why})`);
    // robots-parser ends a group of user-agent lines at a Crawl-delay line; trawl keeps
    // the group together, as Google's parser and crawler-commons do (test/scope/robots-more.test.ts).
    const CRAWL_DELAY_GROUPS = [
      'should parse the crawl-delay directive: got 1, expected null',
      'should fallback to * when a UA has no rules of its own: got 1, expected 10',
      'should not fallback to * when a UA has rules: got 1, expected null',
      'should ignore version numbers in the UA string: got 1, expected 10',
      'should ignore version numbers in the UA string: got 1, expected 12',
    ];
    assert.deepEqual(failures.map((f) => f.slice(f.indexOf('#') + 1)), CRAWL_DELAY_GROUPS);
  });
});

describe('parseRobots', () => {
  it('drops a UTF-8 BOM from bytes and from strings', () => {
    const text = 'User-agent: *\nDisallow: /x\n';
    for (const body of [`\uFEFF${text}`, new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)])]) {
      const p = parseRobots(body);
      assert.equal(p.invalidLines, 0);
      assert.equal(p.forAgent('a').isAllowed('/x'), false);
    }
  });

  it('reads CR, LF and CRLF line ends, comments, and a missing final newline', () => {
    const p = parseRobots('User-agent: a # the a bot\r\nDisallow: /a\rUser-agent: b\nDisallow: /b # not /b/c');
    assert.equal(p.lineCount, 4);
    assert.equal(p.forAgent('a').isAllowed('/a'), false);
    assert.equal(p.forAgent('b').isAllowed('/b'), false);
    assert.equal(p.forAgent('b').isAllowed('/a'), true);
  });

  it('reads only maxBytes and drops the line the cut goes through', () => {
    const head = 'User-agent: *\nDisallow: /private\n';
    const body = new TextEncoder().encode(`${head}Disallow: /\n`);
    // The cut falls inside "Disallow: /": that partial line must not become a rule.
    const cut = parseRobots(body, { maxBytes: head.length + 5 });
    assert.equal(cut.truncated, true);
    assert.equal(cut.lineCount, 2);
    assert.equal(cut.forAgent('x').isAllowed('/public'), true);
    assert.equal(cut.forAgent('x').isAllowed('/private'), false);
    // A cut right before a line end keeps the whole last line.
    const atEnd = parseRobots(body, { maxBytes: body.length - 1 });
    assert.equal(atEnd.truncated, true);
    assert.equal(atEnd.lineCount, 3);
    assert.equal(atEnd.forAgent('x').isAllowed('/public'), false);
    assert.equal(parseRobots(body).truncated, false);
  });

  it('parses a body larger than 500 KiB up to the default limit', () => {
    const filler = '# padding padding padding padding padding padding padding\n'.repeat(8000); // ~464 KB
    const p = parseRobots(`User-agent: *\n${filler}Disallow: /late\n`);
    assert.ok(filler.length < DEFAULT_ROBOTS_MAX_BYTES);
    assert.equal(p.forAgent('x').isAllowed('/late'), false);
    const beyond = parseRobots(`User-agent: *\n${filler}${filler}Disallow: /late\n`);
    assert.equal(beyond.truncated, true);
    assert.equal(beyond.forAgent('x').isAllowed('/late'), true);
  });

  it('counts directives and skipped lines', () => {
    const p = parseRobots(
      'User-agent: a\nDisallow: /x\nNoindex: /y\nthis is not a directive\nCrawl-delay: soon\nCrawl-delay: 2\nSitemap: https://e.com/s.xml\n',
    );
    assert.equal(p.directiveCount, 4);
    assert.equal(p.invalidLines, 3);
    assert.equal(p.lineCount, 7);
    assert.deepEqual(p.sitemaps, ['https://e.com/s.xml']);
    assert.equal(p.forAgent('a').crawlDelayS, 2);
  });

  it('ignores rules before the first user-agent line and empty allow/disallow values', () => {
    const p = parseRobots('Disallow: /\nUser-agent: *\nDisallow:\nAllow:\n');
    assert.equal(p.forAgent('x').isAllowed('/'), true);
    assert.equal(p.forAgent('x').decidingRule('/'), undefined);
  });

  it('starts a new group with a user-agent line after rules, and merges groups of one agent', () => {
    const p = parseRobots('User-agent: a\nUser-agent: b\nDisallow: /ab\nUser-agent: a\nDisallow: /a2\nCrawl-delay: 3\n');
    assert.equal(p.forAgent('b').isAllowed('/ab'), false);
    assert.equal(p.forAgent('b').isAllowed('/a2'), true);
    assert.equal(p.forAgent('A').isAllowed('/ab'), false);
    assert.equal(p.forAgent('A').isAllowed('/a2'), false);
    assert.equal(p.forAgent('a').crawlDelayS, 3);
    assert.equal(p.forAgent('b').crawlDelayS, undefined);
  });

  it('matches the product token case-insensitively, without a /version, and never the empty token', () => {
    const p = parseRobots('User-agent: TrawlBot/2.0\nDisallow: /\nUser-agent:\nDisallow: /empty\n');
    assert.equal(p.forAgent('trawlbot').isAllowed('/x'), false);
    assert.equal(p.forAgent('TRAWLBOT/0.1.0').isAllowed('/x'), false);
    assert.equal(p.forAgent('').isAllowed('/empty'), true);
    assert.equal(p.forAgent('other').isAllowed('/x'), true);
  });
});

describe('AgentRules matching', () => {
  const rules = (text: string) => parseRobots(`User-agent: *\n${text}`).forAgent('bot');

  it('lets the longest pattern decide, allow on a tie, and reports the deciding rule', () => {
    const r = rules('Disallow: /a\nAllow: /a/b\nDisallow: /a/b\n');
    assert.deepEqual(r.decidingRule('/a/b/c'), { allow: true, pattern: '/a/b', line: 3 });
    assert.deepEqual(r.decidingRule('/a/x'), { allow: false, pattern: '/a', line: 2 });
    assert.equal(r.decidingRule('/b'), undefined);
  });

  it('always allows /robots.txt', () => {
    assert.equal(rules('Disallow: /\n').isAllowed('/robots.txt'), true);
    assert.equal(rules('Disallow: /\n').isAllowed('/robots.txt?x'), false);
    assert.equal(DISALLOW_ALL.forAgent('bot').isAllowed('/robots.txt'), true);
  });

  it('supports * anywhere and $ at the end only', () => {
    const r = rules('Disallow: /*.pdf$\nDisallow: /a*b*c\nDisallow: /cost$5\n');
    assert.equal(r.isAllowed('/x/y.pdf'), false);
    assert.equal(r.isAllowed('/x/y.pdf?download'), true);
    assert.equal(r.isAllowed('/a-b-c-d'), false);
    assert.equal(r.isAllowed('/a-c-b'), true);
    assert.equal(r.isAllowed('/cost$5/x'), false); // a `$` inside a pattern is literal
  });

  it('handles many wildcards without blowing up', () => {
    const r = rules(`Disallow: /${'*'.repeat(5000)}a${'*'.repeat(5000)}b$\n`);
    assert.equal(r.isAllowed(`/${'x'.repeat(100_000)}`), true);
    assert.equal(r.isAllowed(`/${'a'.repeat(100_000)}b`), false);
  });

  it('compares percent-encoded octets: non-ASCII patterns encoded, %xx case-folded, %2A and %24 literal', () => {
    const r = rules('Disallow: /café\nDisallow: /%7euser\nDisallow: /star-%2A\nDisallow: /my page\n');
    assert.equal(r.isAllowed('/caf%C3%A9'), false);
    assert.equal(r.isAllowed('/caf%c3%a9/menu'), false);
    assert.equal(r.isAllowed('/%7Euser'), false);
    assert.equal(r.isAllowed('/~user'), true); // RFC 3986 equivalents are not decoded (google/robotstxt ID_Encoding)
    assert.equal(r.isAllowed('/star-*'), false);
    assert.equal(r.isAllowed('/star-%2a'), false);
    assert.equal(r.isAllowed('/star-x'), true);
    assert.equal(r.isAllowed('/my%20page'), false);
  });

  it('decides like a naive longest-match scan over regular expressions (random rules, fixed seed)', () => {
    let seed = 9309;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const word = (alphabet: string, max: number): string =>
      Array.from({ length: rand(max + 1) }, () => alphabet[rand(alphabet.length)]).join('');
    let checked = 0;
    for (let file = 0; file < 500; file++) {
      const rules = Array.from({ length: 1 + rand(8) }, () => ({
        allow: rand(2) === 0,
        pattern: (rand(4) === 0 ? '*' : '/') + word('ab/*', 5) + (rand(3) === 0 ? '$' : ''),
      }));
      const compiled = rules.map((r) => {
        const body = r.pattern.endsWith('$') ? r.pattern.slice(0, -1) : r.pattern;
        const src = body.split('*').map((p) => p.replace(/[/]/g, '\\/')).join('.*');
        return { ...r, re: new RegExp(`^${src}${r.pattern.endsWith('$') ? '$' : ''}`, 's') };
      });
      const agent = parseRobots(`User-agent: *\n${rules.map((r) => `${r.allow ? 'Allow' : 'Disallow'}: ${r.pattern}`).join('\n')}\n`).forAgent('x');
      for (let k = 0; k < 20; k++) {
        const path = `/${word('ab/', 8)}`;
        let best: (typeof compiled)[number] | undefined;
        for (const r of compiled) {
          if (!r.re.test(path)) continue;
          if (!best || r.pattern.length > best.pattern.length || (r.pattern.length === best.pattern.length && r.allow && !best.allow)) best = r;
        }
        const got = agent.decidingRule(path);
        const what = `${path} against ${JSON.stringify(rules)}`;
        assert.equal(got?.allow, best?.allow, what);
        assert.equal(got?.pattern.length, best?.pattern.length, what);
        checked++;
      }
    }
    assert.equal(checked, 10_000);
  });

  it('gives the crawl-delay of the chosen group only', () => {
    const p = parseRobots('User-agent: *\nCrawl-delay: 5\nDisallow: /a\nUser-agent: slow\nCrawl-delay: 0.5\nDisallow: /b\nUser-agent: own\nDisallow: /x\n');
    assert.equal(p.forAgent('slow').crawlDelayS, 0.5);
    assert.equal(p.forAgent('own').crawlDelayS, undefined);
    assert.equal(p.forAgent('any').crawlDelayS, 5);
  });

  it('ALLOW_ALL and DISALLOW_ALL', () => {
    assert.equal(ALLOW_ALL.forAgent('bot').isAllowed('/x'), true);
    assert.equal(DISALLOW_ALL.forAgent('bot').isAllowed('/'), false);
    assert.equal(DISALLOW_ALL.forAgent('').isAllowed('/x?y'), false);
    assert.deepEqual(DISALLOW_ALL.forAgent('bot').decidingRule('/x'), { allow: false, pattern: '/', line: 0 });
  });
});

describe('robotsPathOf', () => {
  it('keeps path, params and query as written, drops the fragment, gives / when empty', () => {
    assert.equal(robotsPathOf('https://e.com/a%20b;p?q=%41&r#frag'), '/a%20b;p?q=%41&r');
    assert.equal(robotsPathOf('https://e.com?q'), '/?q');
    assert.equal(robotsPathOf('https://user:pw@e.com:8080'), '/');
    assert.equal(robotsPathOf(new URL('https://e.com/π?é').href), '/%CF%80?%C3%A9');
  });
});

describe('robotsFromOutcome', () => {
  const body = new TextEncoder().encode('User-agent: *\nDisallow: /private\n');
  const flags = [
    { authIgnore: false, toutIgnore: false },
    { authIgnore: true, toutIgnore: true },
  ];
  const verdict = (o: RobotsFetchOutcome, f: { authIgnore: boolean; toutIgnore: boolean }): ParsedRobots =>
    robotsFromOutcome(o, f).robots;

  it('parses a 2xx body', () => {
    for (const status of [200, 203, 299]) {
      const r = robotsFromOutcome({ kind: 'response', status, body }, flags[0]!);
      assert.equal(r.robots.forAgent('bot').isAllowed('/private'), false);
      assert.equal(r.robots.forAgent('bot').isAllowed('/public'), true);
      assert.match(r.reason, new RegExp(`^robots.txt ${status}: obeyed`));
    }
  });

  it('allows all on 4xx, except 401/403 without robots_auth_ignore, and 429', () => {
    for (const f of flags) {
      for (const status of [400, 404, 410, 451]) assert.equal(verdict({ kind: 'response', status, body }, f), ALLOW_ALL, String(status));
      for (const status of [401, 403]) {
        assert.equal(verdict({ kind: 'response', status, body }, f), f.authIgnore ? ALLOW_ALL : DISALLOW_ALL, String(status));
      }
      assert.equal(verdict({ kind: 'response', status: 429, body }, f), DISALLOW_ALL);
    }
    assert.match(robotsFromOutcome({ kind: 'response', status: 403, body }, flags[1]!).reason, /robots_auth_ignore/);
  });

  it('disallows all on 5xx, network errors and unknown statuses', () => {
    for (const f of flags) {
      for (const status of [500, 502, 503, 599]) assert.equal(verdict({ kind: 'response', status, body }, f), DISALLOW_ALL);
      assert.equal(verdict({ kind: 'network-error' }, f), DISALLOW_ALL);
      assert.equal(verdict({ kind: 'response', status: 600, body }, f), DISALLOW_ALL);
      assert.equal(verdict({ kind: 'response', status: 100, body }, f), DISALLOW_ALL);
    }
  });

  it('follows robots_tout_ignore on a timeout', () => {
    assert.equal(verdict({ kind: 'timeout' }, { authIgnore: false, toutIgnore: false }), DISALLOW_ALL);
    assert.equal(verdict({ kind: 'timeout' }, { authIgnore: false, toutIgnore: true }), ALLOW_ALL);
  });

  it('treats a 3xx it was given, and too many redirects, as unavailable: allow all', () => {
    for (const f of flags) {
      assert.equal(verdict({ kind: 'too-many-redirects' }, f), ALLOW_ALL);
      for (const status of [301, 302, 307, 308]) assert.equal(verdict({ kind: 'response', status, body }, f), ALLOW_ALL);
    }
  });

  it('passes maxBytes on to the parser', () => {
    const r = robotsFromOutcome({ kind: 'response', status: 200, body }, { ...flags[0]!, maxBytes: 14 });
    assert.equal(r.robots.truncated, true);
    assert.equal(r.robots.forAgent('bot').isAllowed('/private'), true);
    assert.match(r.reason, /truncated/);
  });
});
