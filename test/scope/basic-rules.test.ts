// The configuration's own scope rules (basicRules): the URL limits and
// max_uri_recursion, checked against the plain way of computing them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { buildRuntime } from '../../src/engine/runtime.ts';
import { pathRepetitions, segmentCount } from '../../src/scope/scope.ts';

/** A small deterministic generator, so that a failure can be replayed. */
function* paths(seed: number, n: number): Generator<string> {
  let x = seed;
  const next = (m: number): number => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % m;
  };
  const words = ['a', 'b', 'ab', 'x', 'docs', '', 'index.html'];
  for (let i = 0; i < n; i++) {
    let p = '';
    const len = next(12);
    for (let j = 0; j < len; j++) p += '/' + words[next(words.length)];
    if (next(3) === 0) p += '/';
    yield p || '/';
  }
}

describe('segmentCount', () => {
  it('counts the non-empty segments, as split and filter would', () => {
    for (const p of ['/', '', '//', '/a', 'a', '/a/', '/a//b/', '///a///b///', '/docs/s01/page-1.html']) {
      assert.equal(segmentCount(p), p.split('/').filter(Boolean).length, p);
    }
    for (const p of paths(1, 5000)) assert.equal(segmentCount(p), p.split('/').filter(Boolean).length, p);
  });

  it('bounds pathRepetitions, which is what lets max_uri_recursion skip short paths', () => {
    for (const p of paths(2, 5000)) assert.ok(pathRepetitions(p) <= segmentCount(p), p);
  });
});

describe('the URL limits and max_uri_recursion decide as before', () => {
  const rt = buildRuntime(readConfigXml(`<CrawlerConfig><DomainSpecification name="c">
    <attrib name="max_uri_recursion" type="integer">2</attrib>
    <section name="trawl_limits"><attrib name="max_url_segments" type="integer">6</attrib><attrib name="max_url_params" type="integer">3</attrib></section>
  </DomainSpecification></CrawlerConfig>`, 'c.xml').document.collections[0]!);
  const decide = (url: string) => rt.scope.decide({ url: new URL(url), parent: undefined, hops: 0, viaRedirect: false, seed: true });

  it('refuses by the number of segments and of query parameters, counted the plain way', () => {
    for (const [query, params] of [['', 0], ['?', 0], ['?a=1', 1], ['?a=1&b=2&c', 3], ['?a&&b&c', 4], ['?&', 2]] as const) {
      const d = decide(`http://a.test/x${query}`);
      assert.equal(d.allowed, params <= 3, `${query}: ${d.reason}`);
      if (!d.allowed) assert.equal(d.reason, `query has ${params} parameters, over max_url_params 3`);
    }
    const seven = decide('http://a.test/1/2//3/4/5/6/7/');
    assert.equal(seven.reason, 'path has 7 segments, over max_url_segments 6');
    assert.equal(decide('http://a.test/1/2//3/4/5/6/').allowed, true);
  });

  it('refuses a recurring pattern by max_uri_recursion, whatever the path\'s length', () => {
    for (const p of paths(3, 3000)) {
      if (segmentCount(p) > 6) continue;
      const reps = pathRepetitions(p);
      const d = decide(`http://a.test${p}`);
      assert.equal(d.allowed, reps <= 2, `${p}: ${reps} repetitions, ${d.reason}`);
      if (!d.allowed) assert.equal(d.reason, `a path pattern repeats ${reps} times, over max_uri_recursion 2`);
    }
    assert.equal(decide('http://a.test/a/b/a/b/a/b').allowed, false);
    assert.equal(decide('http://a.test/a/b/a/b').allowed, true);
  });
});
