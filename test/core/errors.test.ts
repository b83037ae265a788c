// The error registry: codes are well formed, documented, and drive exit codes.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_CODES, ERROR_MESSAGES, formatMessage, TrawlError, trawlError } from '../../src/core/errors.ts';
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

  it('documents every code in the error table of docs/operations.md, which the README links to', () => {
    const ops = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    const table = ops.slice(ops.indexOf('## Error codes'));
    for (const code of Object.keys(ERROR_CODES)) assert.ok(table.includes(`| \`${code}\` |`), `${code} is not in the error table of docs/operations.md`);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    assert.ok(readme.includes('](docs/operations.md#error-codes)'), 'README.md links to the error codes');
  });

  it('formats file:line:col: CODE: message', () => {
    const e = new TrawlError('TRAWL_ERR_CONFIG_TYPE', 'delay: expected a number', { location: { file: 'c.xml', line: 3, column: 9 } });
    assert.equal(e.describe(), 'c.xml:3:9: TRAWL_ERR_CONFIG_TYPE: delay: expected a number');
    assert.equal(e.exitCode, 65);
    assert.equal(new TrawlError('TRAWL_ERR_USAGE', 'x').describe(), 'TRAWL_ERR_USAGE: x');
  });

  it('has message templates whose codes are registered and whose placeholders are well formed', () => {
    for (const [id, spec] of Object.entries(ERROR_MESSAGES)) {
      assert.match(id, /^[A-Z][A-Z0-9_]+$/);
      assert.ok(spec.code in ERROR_CODES, `${id}: ${spec.code} is not registered`);
      // Every brace opens a placeholder {name} or {name:json}; nothing else.
      const stripped = spec.template.replace(/\{[A-Za-z][A-Za-z0-9]*(:json)?\}/g, '');
      assert.ok(!/[{}]/.test(stripped), `${id}: stray brace in ${JSON.stringify(spec.template)}`);
      assert.ok(spec.template.length > 10, id);
    }
  });

  it('fills templates: {x} as text, {x:json} quoted, a missing value refused', () => {
    assert.equal(formatMessage('a {x} b {y:json} c {x}', { x: 3, y: 'q"r' }), 'a 3 b "q\\"r" c 3');
    assert.throws(() => formatMessage('needs {z}', {}), /needs \{z\}/);
  });

  it('builds a TrawlError from a message id: its code, its exit status, the filled template', () => {
    const e = trawlError('COLLECTION_NOT_FOUND', { name: 'news' });
    assert.ok(e instanceof TrawlError);
    assert.equal(e.code, 'TRAWL_ERR_CONFIG_NOT_FOUND');
    assert.equal(e.exitCode, 65);
    assert.equal(e.message, 'no collection named "news"');
    const cause = new Error('EACCES');
    const io = trawlError('SERVE_TOKEN_UNREADABLE', { file: '/t', reason: 'EACCES' }, { cause });
    assert.equal(io.describe(), 'TRAWL_ERR_IO: cannot read the token file /t: EACCES');
    assert.equal(io.exitCode, 66);
    assert.equal(io.cause, cause);
  });
});
