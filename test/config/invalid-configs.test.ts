// Table-driven suite of invalid MS-FSCCFG configurations: each fixture in
// test/fixtures/config-invalid/ holds exactly one problem, and cases.json says
// which error code it must raise, where, and why.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { ERROR_CODES, type ErrorCode } from '../../src/core/errors.ts';
import { FIXTURES } from '../helpers.ts';

interface InvalidCase {
  /** `NNN-short-name.xml` in the fixture directory. */
  readonly file: string;
  /** The one error code the file must raise. */
  readonly code: ErrorCode;
  /** Line (and column, when given) of the first error with that code. */
  readonly line: number;
  readonly column?: number;
  /** Dotted parameter path of that error. */
  readonly param?: string;
  readonly messageIncludes?: string;
  /** The spec section or reason that makes the file invalid. */
  readonly why: string;
}

const DIR = `${FIXTURES}config-invalid/`;
const cases = JSON.parse(readFileSync(`${DIR}cases.json`, 'utf8')) as InvalidCase[];

describe('invalid MS-FSCCFG configurations', () => {
  it('has at least 70 cases, exactly one per fixture file', () => {
    assert.ok(cases.length >= 70, `only ${cases.length} cases`);
    const files = readdirSync(DIR).filter((f) => f.endsWith('.xml')).sort();
    assert.deepEqual(cases.map((c) => c.file).sort(), files);
    for (const c of cases) {
      assert.match(c.file, /^\d{3}-[a-z0-9-]+\.xml$/, c.file);
      assert.ok(c.code in ERROR_CODES, `${c.file}: unknown code ${c.code}`);
      assert.ok(Number.isInteger(c.line) && c.line >= 1, `${c.file}: bad line`);
      assert.ok(c.why.trim().length > 0, `${c.file}: no why`);
    }
  });

  for (const c of cases) {
    it(`${c.file} fails with ${c.code}`, () => {
      const { diagnostics } = readConfigXml(readFileSync(DIR + c.file), c.file);
      const errors = diagnostics.filter((d) => d.severity === 'error');
      const all = `\n  ${diagnostics.map(formatDiagnostic).join('\n  ') || '(no diagnostics)'}`;

      const first = errors.find((d) => d.code === c.code);
      assert.ok(first, `expected an error ${c.code}; got:${all}`);
      assert.equal(first.location?.line, c.line, `line of the first ${c.code}:${all}`);
      if (c.column !== undefined) assert.equal(first.location?.column, c.column, `column of the first ${c.code}:${all}`);
      if (c.param !== undefined) assert.equal(first.param, c.param, `param of the first ${c.code}:${all}`);
      if (c.messageIncludes !== undefined) {
        assert.ok(first.message.includes(c.messageIncludes), `message should include ${JSON.stringify(c.messageIncludes)}:${all}`);
      }

      // Exactly the intended problem: no error of any other code, and every error says which file.
      for (const d of errors) {
        assert.equal(d.code, c.code, `unexpected extra error:${all}`);
        assert.ok(d.location?.file?.includes(c.file), `error without the file name in its location:${all}`);
      }
    });
  }
});
