// The error registry: codes are well formed, documented, and drive exit codes.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_CODES, TrawlError } from '../../src/core/errors.ts';
import { ROOT } from '../helpers.ts';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('error registry', () => {
  it('has well-formed codes with a summary and an exit code', () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      assert.match(code, /^TRAWL_ERR_[A-Z0-9_]+$/);
      assert.ok(spec.summary.length > 10, code);
      assert.ok(Number.isInteger(spec.exitCode) && spec.exitCode > 0 && spec.exitCode < 126, code);
    }
  });

  it('is the only source of codes: every TRAWL_ERR_ string in src/ is registered', () => {
    for (const file of sources(join(ROOT, 'src'))) {
      for (const m of readFileSync(file, 'utf8').matchAll(/TRAWL_ERR_[A-Z0-9_]+/g)) {
        assert.ok(m[0] in ERROR_CODES, `${m[0]} in ${file} is not in the registry`);
      }
    }
  });

  it('documents every code in README.md', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const code of Object.keys(ERROR_CODES)) assert.ok(readme.includes(code), `${code} is not in README.md`);
  });

  it('formats file:line:col: CODE: message', () => {
    const e = new TrawlError('TRAWL_ERR_CONFIG_TYPE', 'delay: expected a number', { location: { file: 'c.xml', line: 3, column: 9 } });
    assert.equal(e.describe(), 'c.xml:3:9: TRAWL_ERR_CONFIG_TYPE: delay: expected a number');
    assert.equal(e.exitCode, 65);
    assert.equal(new TrawlError('TRAWL_ERR_USAGE', 'x').describe(), 'TRAWL_ERR_USAGE: x');
  });
});
