// `trawl config validate` warns about configured regular expressions that backtrack
// badly, and refuses those that could not run in linear time (the real binary).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { backtrackingRisk, compileSafeRegex, makeSafe } from '../../src/core/safe-regex.ts';
import { ROOT } from '../helpers.ts';

const BIN = join(ROOT, 'bin/trawl.js');
const tmp = mkdtempSync(join(tmpdir(), 'trawl-regex-'));

function validate(name: string, body: string) {
  const file = join(tmp, name);
  writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?>\n<CrawlerConfig>\n  <DomainSpecification name="c">\n${body}\n  </DomainSpecification>\n</CrawlerConfig>\n`);
  const r = spawnSync(process.execPath, [BIN, 'config', 'validate', file], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('config validate: regular expressions', () => {
  it('warns about nested and overlapping quantifiers, naming file, line, parameter and pattern', () => {
    const r = validate('slow.xml', [
      '    <section name="exclude_uris"><attrib name="regexp" type="list-string"><member>^https?://x/(a+)+$</member></attrib></section>',
      '    <attrib name="rewrite_rules" type="list-string"><member>#(.*)*x#y#</member></attrib>',
      '    <section name="trawl_crawl_rules"><section name="https://example.com"><attrib name="rules" type="list-string"><member>disallow regex /(a|ab)*z</member><member>allow begins /</member></attrib></section></section>',
      '    <section name="include_uris"><attrib name="regexp" type="list-string"><member>^https://example\\.com/[a-z]+/\\d+$</member></attrib></section>',
    ].join('\n'));
    assert.equal(r.code, 0, r.err);
    const lineNo = (l: string): number => Number(/slow\.xml:(\d+):/.exec(l)?.[1]);
    const lines = r.err.trim().split('\n').sort((a, b) => lineNo(a) - lineNo(b));
    assert.equal(lines.length, 3, r.err);
    assert.match(lines[0]!, /slow\.xml:4:\d+: warning TRAWL_ERR_CONFIG_VALUE: collection "c", exclude_uris\.regexp: the pattern "\^https\?:\/\/x\/\(a\+\)\+\$" can backtrack badly: the quantified group \(a\+\) holds another quantifier/);
    assert.match(lines[1]!, /slow\.xml:5:\d+: warning TRAWL_ERR_CONFIG_VALUE: collection "c", rewrite_rules: the pattern "\(\.\*\)\*x" can backtrack badly/);
    assert.match(lines[2]!, /slow\.xml:6:\d+: warning TRAWL_ERR_CONFIG_VALUE: collection "c", trawl_crawl_rules\.https:\/\/example\.com\.rules: the pattern "\/\(a\|ab\)\*z" can backtrack badly: the quantified alternation/);
    assert.match(r.out, /slow\.xml: OK/);
  });

  it('refuses a pattern that cannot run in linear time, naming the parameter and the construct', () => {
    const r = validate('backref.xml', '    <section name="exclude_uris"><attrib name="regexp" type="list-string"><member>(\\w+)/\\1</member></attrib></section>');
    assert.equal(r.code, 65, r.err);
    assert.match(r.err, /backref\.xml:4:\d+: error TRAWL_ERR_CONFIG_\w+: collection "c", exclude_uris\.regexp: .*linear time.*backreference/);
  });

  it('finds what the static check is for, and leaves ordinary patterns alone', () => {
    for (const p of ['(a+)+', '(a|a)*', '(.*)*', '(?:a*)*x', '((ab)*c)*', '(a|ab)+', '(x\\d+)*']) assert.ok(backtrackingRisk(p), p);
    for (const p of ['^https?://[^/]+/(a|b)*$', 'a+b+', '(a{2})+', '[(]+(x)', '\\(a+\\)+', '^/docs/[a-z0-9-]+\\.html$', '(?i)/admin/']) assert.equal(backtrackingRisk(p), undefined, p);
  });

  it('compiles configured patterns so that catastrophic ones end in milliseconds', () => {
    for (const [source, flags] of [['^(a+)+$', ''], ['^(a+)+$', 'i'], ['^(a|a)*$', ''], ['^(.*a){12}$', ''], ['^[a-z]{20,}(x+)+$', 'i']] as const) {
      const re = compileSafeRegex(source, flags, 'test');
      const started = performance.now();
      assert.equal(re.test(`${'a'.repeat(40)}!`), false);
      assert.ok(performance.now() - started < 1000, `/${source}/${flags} took ${performance.now() - started} ms`);
    }
  });

  it('keeps the meaning of case-insensitive patterns and large counts', () => {
    const i = compileSafeRegex('^/Docs/[a-f]{2}(?-i:X)\\.HTML$', 'i', 'test');
    assert.equal(i.test('/docs/aF' + 'X.html'), true);
    assert.equal(i.test('/DOCS/Ab' + 'x.html'), false);
    const n = compileSafeRegex('^\\d{20,40}$', '', 'test');
    assert.deepEqual([19, 20, 40, 41].map((k) => n.test('1'.repeat(k))), [false, true, true, false]);
    const r = makeSafe('(a)\\1');
    assert.equal(r.ok, false);
    assert.match((r as { reason: string }).reason, /backreference/);
    assert.throws(() => compileSafeRegex('(', '', 'exclude_uris.regexp'), /exclude_uris\.regexp \/\(\/ is not a valid regular expression/);
  });
});
