// `trawl codes`, the real binary: every skip code with its meaning and what to do, every error code with its exit status.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_CODES } from '../../src/core/errors.ts';
import { DOC_SKIP_CODES, URI_SKIP_CODES } from '../../src/core/skip-codes.ts';
import { ROOT } from '../helpers.ts';

const BIN = join(ROOT, 'bin/trawl.js');

function codes(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'codes', ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('trawl codes', () => {
  it('--json lists every URI and document skip code with a meaning and an action, and every error code with its exit status', () => {
    const r = codes('--json');
    assert.equal(r.code, 0, r.err);
    const rows = r.out.trim().split('\n').map((l) => JSON.parse(l) as { kind: string; code: string; meaning: string; action?: string; exitCode?: number });
    const of = (kind: string): string[] => rows.filter((x) => x.kind === kind).map((x) => x.code);
    assert.deepEqual(of('uri-skip'), Object.keys(URI_SKIP_CODES));
    assert.deepEqual(of('document-skip'), Object.keys(DOC_SKIP_CODES));
    assert.deepEqual(of('error'), Object.keys(ERROR_CODES));
    for (const row of rows) {
      assert.ok(row.meaning.length > 0, row.code);
      if (row.kind === 'error') assert.equal(row.exitCode, ERROR_CODES[row.code as keyof typeof ERROR_CODES].exitCode);
      else assert.ok((row.action ?? '').length > 10, `${row.code} has no action`);
    }
  });

  it('prints the codes asked for in words, and fails on an unknown one', () => {
    const r = codes('ro', 'TRAWL_ERR_CRAWL_FAILED');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^URI skip codes/);
    assert.match(r.out, /^ {2}ro {2}Robots disallow: refused by robots\.txt\n {6}what to do: /m);
    assert.match(r.out, /TRAWL_ERR_CRAWL_FAILED \(exit 1\): /);
    assert.doesNotMatch(r.out, /Document skip codes/);
    const bad = codes('zz');
    assert.equal(bad.code, 1);
    assert.match(bad.err, /no such code: zz/);
  });

  it('a reader that goes away early (`| head -1`) ends the output quietly, not with an unhandled EPIPE', () => {
    for (const args of [['codes'], ['crawl', '--help']]) {
      const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${BIN}" ${args.join(' ')} | head -1`], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /EPIPE|Unhandled/);
      assert.equal(r.stdout.split('\n').filter(Boolean).length, 1);
    }
  });
});

