// The [MC-RegEx] to JavaScript translation: what maps, and what is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileDotNetRegex, translateDotNetRegex, translateDotNetReplacement } from '../../src/config/dotnet-regex.ts';

describe('.NET regular expressions', () => {
  const matches: [string, string, boolean][] = [
    ['^http://www\\.contoso\\.com/', 'http://www.contoso.com/a', true],
    ['(?i)CONTOSO', 'www.contoso.com', true],
    ['(?i:CON)toso', 'CONtoso', true],
    ['(?i:CON)toso', 'conTOSO', false],
    ['\\Ahttp', 'http://x', true],
    ['\\Ahttp', 'x http', false],
    ['\\.pdf\\z', 'a.pdf', true],
    ['\\.pdf\\Z', 'a.pdf\n', true],
    ['a(?#comment)b', 'ab', true],
    ['[]a]', ']', true],
    ['(?<=/)docs', '/docs', true],
  ];
  for (const [pattern, input, want] of matches) {
    it(`/${pattern}/ ${want ? 'matches' : 'does not match'} ${JSON.stringify(input)}`, () => assert.equal(compileDotNetRegex(pattern).test(input), want));
  }
  const refused: [string, RegExp][] = [
    ['(?>a+)b', /atomic group/], ['a++', /possessive/], ['(?(x)a|b)', /conditional/], ['(?<a-b>x)', /balancing/],
    ['\\Gx', /\\G/], ['\\p{IsGreek}', /named block/], ['[a-z-[aeiou]]', /subtraction/], ['a(?i)b', /inline options/],
    ['(?x) a b', /n or x/], ['(unclosed', /valid regular expression/],
    // Not linear-time (core/safe-regex.ts): refused rather than run where it could stall a crawl.
    ["(?'year'\\d{4})-\\k'year'", /linear time.*backreference/], ['\\p{Lu}+', /linear time.*\\p\{…\}/], ['a(?=b)', /linear time.*lookahead/],
  ];
  for (const [pattern, why] of refused) {
    it(`refuses ${pattern}`, () => {
      const t = translateDotNetRegex(pattern);
      assert.equal(t.ok, false);
      assert.match((t as { expected: string }).expected, why);
    });
  }
  it('translates replacement strings', () => {
    assert.equal(translateDotNetReplacement('${name}/$1/$0/$$'), '$<name>/$1/$&/$$');
    assert.equal('ab'.replace(compileDotNetRegex('(a)(b)'), translateDotNetReplacement('${1}0-${2}')), 'a0-b');
    assert.equal('2020-01'.replace(compileDotNetRegex('(?<y>\\d+)-(\\d+)'), translateDotNetReplacement('$2/${y}')), '01/2020');
  });
});
