import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ChecksumFilter } from '../../src/core/checksum-filter.ts';

const sha1 = (s: string): string => createHash('sha1').update(s).digest('hex');

describe('ChecksumFilter', () => {
  it('finds every checksum added (no false negatives), over 200,000 documents', () => {
    const f = new ChecksumFilter();
    const added = Array.from({ length: 200_000 }, (_, i) => sha1(`document ${i}`));
    for (const c of added) f.add(c);
    assert.equal(added.filter((c) => !f.mightContain(c)).length, 0);
  });

  it('says no to checksums never added, but for about one in ten thousand at 200,000 added', () => {
    const f = new ChecksumFilter();
    for (let i = 0; i < 200_000; i++) f.add(sha1(`document ${i}`));
    let yes = 0;
    for (let i = 0; i < 100_000; i++) if (f.mightContain(sha1(`never added ${i}`))) yes++;
    // 2^24 bits, 8 positions: (1 - e^(-8 · 200,000 / 2^24))^8 ≈ 2e-8; allow far more, but not a filter that says yes to everything.
    assert.ok(yes <= 10, `${yes} false positives in 100,000`);
  });

  it('answers for checksums of any form: upper-case hex, short strings, non-hex', () => {
    const f = new ChecksumFilter();
    const odd = ['ABCDEF0123456789ABCDEF0123456789ABCDEF01', 'abc', '', 'not-a-hex-checksum-at-all-zzzzzzzzzzzzz', '0123456789abcdefg'];
    for (const c of odd) assert.equal(f.mightContain(c), false, c);
    for (const c of odd) f.add(c);
    for (const c of odd) assert.equal(f.mightContain(c), true, c);
    // Upper and lower case of the same hex digits are the same bits: at worst a lookup the store answers.
    assert.equal(f.mightContain('abcdef0123456789abcdef0123456789abcdef01'), true);
  });
});
