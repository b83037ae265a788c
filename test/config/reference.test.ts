// The configuration reference in docs/configuration.md is generated from the registry; this fails when they differ.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { renderConfigReference, spliceReference } from '../../src/config/reference.ts';
import { listRegistry } from '../../src/config/registry.ts';
import { ROOT } from '../helpers.ts';

describe('configuration reference', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
  it('in docs/configuration.md is what the registry generates (run `npm run docs:config`)', () => {
    assert.equal(spliceReference(doc), doc);
  });
  it('lists every registry entry', () => {
    const ref = renderConfigReference();
    for (const e of listRegistry()) assert.ok(ref.includes(`\`${e.path}\``), e.path);
  });
});
