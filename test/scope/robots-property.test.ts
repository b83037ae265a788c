// Generated robots.txt files and paths (fast-check, fixed seed): the parser never
// throws and stays fast, matching never throws, and two metamorphic properties hold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseRobots } from '../../src/scope/robots.ts';

const RUNS = { numRuns: 300, seed: 9309 } as const;

const pathChar = fc.constantFrom('/', 'a', 'b', 'x', '*', '$', '%', '2', 'A', '?', '=', '&', '.', '~', 'é', ' ');
const path = fc.array(pathChar, { maxLength: 24 }).map((cs) => '/' + cs.join(''));
const agent = fc.constantFrom('*', 'trawl', 'TRAWL', 'other', 'mj', 'mj12bot', 'a-b_c', '', 'trawl/1.0', 'x y');
const line = fc.oneof(
  fc.tuple(fc.constantFrom('User-agent', 'user-agent', 'USER-AGENT', 'useragent'), agent).map(([k, v]) => `${k}: ${v}`),
  fc.tuple(fc.constantFrom('Allow', 'Disallow', 'disallow'), path).map(([k, v]) => `${k}: ${v}`),
  fc.tuple(fc.constantFrom('Crawl-delay', 'Sitemap', 'Noindex'), fc.string({ maxLength: 8 })).map(([k, v]) => `${k}: ${v}`),
  fc.string({ maxLength: 30 }),
  fc.constant(''),
  fc.constant('# comment'),
);
const robotsFile = fc.tuple(fc.array(line, { maxLength: 40 }), fc.constantFrom('\n', '\r\n', '\r')).map(([ls, eol]) => ls.join(eol));
const group = (token: string, rules: readonly string[]): string => [`User-agent: ${token}`, ...rules].join('\n');
const ruleLine = fc.tuple(fc.boolean(), path).map(([allow, p]) => `${allow ? 'Allow' : 'Disallow'}: ${p}`);

describe('robots.txt properties', () => {
  it('parses arbitrary text and bytes without throwing, in bounded time', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 2000 }), robotsFile), (text) => {
      const started = performance.now();
      const p = parseRobots(text);
      assert.ok(p.lineCount >= 0);
      assert.ok(performance.now() - started < 250, 'one parse took more than 250 ms');
    }), RUNS);
    fc.assert(fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
      parseRobots(bytes);
    }), RUNS);
  });

  it('matches generated paths against generated files without throwing', () => {
    fc.assert(fc.property(robotsFile, agent, fc.array(path, { maxLength: 10 }), (text, a, paths) => {
      const rules = parseRobots(text).forAgent(a);
      for (const p of paths) {
        const ok = rules.isAllowed(p);
        const r = rules.decidingRule(p);
        assert.equal(ok, r === undefined || r.allow);
      }
    }), RUNS);
  });

  it('a group of only `Allow: /` for our token allows every path', () => {
    fc.assert(fc.property(fc.array(ruleLine, { maxLength: 10 }), path, (others, p) => {
      const text = [group('*', others), group('trawl', ['Allow: /'])].join('\n\n');
      assert.equal(parseRobots(text).forAgent('trawl/2.0').isAllowed(p), true);
    }), RUNS);
  });

  it("adding other agents' groups does not change our decision", () => {
    fc.assert(fc.property(fc.array(ruleLine, { minLength: 1, maxLength: 8 }), fc.array(fc.tuple(fc.constantFrom('other', 'mj', 'googlebot', 'trawlx'), fc.array(ruleLine, { maxLength: 5 })), { maxLength: 4 }), fc.array(path, { minLength: 1, maxLength: 8 }), (ours, theirs, paths) => {
      const base = group('trawl', ours);
      const more = [...theirs.map(([t, rs]) => group(t, rs.length > 0 ? rs : ['Disallow: /'])), base].join('\n\n');
      const a = parseRobots(base).forAgent('trawl');
      const b = parseRobots(more).forAgent('trawl');
      for (const p of paths) assert.equal(b.isAllowed(p), a.isAllowed(p), p);
    }), RUNS);
  });
});
