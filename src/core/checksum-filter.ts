/**
 * The content checksums a collection's records hold, as a Bloom filter:
 * "not in it" means no record has that checksum, "in it" means one may. The
 * crawler fills one as a cycle begins, from the records it walks to queue
 * them again, and adds each checksum its commits write; then a checksum not
 * in it is in no record of the store, and the duplicate check (MS-FSCCFG
 * `diffcheck`) need not ask the store. That question was a round trip to
 * the storage thread for every page, behind its group commits
 * (bench/README.md sizes it in *Tried*, `diffcheck` off, and the filter's
 * gain in *What changed*, 1108f9d).
 *
 * A false positive costs the lookup the crawler made before, never a missed
 * duplicate. The size is fixed, so the memory is too: 2 MiB, which keeps the
 * false positives under 0.1% up to a million records and lets them grow
 * slowly after (about 2% at 2 million, 46% at 5 million), when the crawl
 * asks the store more and more often, as it did without the filter.
 *
 * The checksum is already a hash (SHA-1 in hex), so the filter takes its
 * bit positions from the checksum's own first 64 bits instead of hashing
 * it again: h1 + i·h2 (double hashing) for the K positions.
 */

import { stringTag } from './fingerprint-cache.ts';

const BITS_LOG2 = 24;
const MASK = (1 << BITS_LOG2) - 1;
const K = 8;
/** Hex digits read from a checksum: two 32-bit words. */
const HEX_DIGITS = 16;

/** The value of one hex digit, or -1. */
function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  return l >= 0x61 && l <= 0x66 ? l - 0x61 + 10 : -1;
}

export class ChecksumFilter {
  private readonly bits = new Uint8Array((1 << BITS_LOG2) / 8);
  private h1 = 0;
  private h2 = 0;

  add(checksum: string): void {
    this.words(checksum);
    for (let i = 0; i < K; i++) {
      const p = (this.h1 + Math.imul(i, this.h2)) & MASK;
      this.bits[p >>> 3]! |= 1 << (p & 7);
    }
  }

  /** False: no checksum equal to this one was added. True: one probably was. */
  mightContain(checksum: string): boolean {
    this.words(checksum);
    for (let i = 0; i < K; i++) {
      const p = (this.h1 + Math.imul(i, this.h2)) & MASK;
      if ((this.bits[p >>> 3]! & (1 << (p & 7))) === 0) return false;
    }
    return true;
  }

  /**
   * The first 64 bits of a hex checksum as h1 and h2 (h2 odd, so that the
   * K positions differ). Anything else (a checksum of another form, though
   * the crawler writes only hex) is hashed character by character instead:
   * the filter must answer for every string it is given.
   */
  private words(checksum: string): void {
    let a = 0;
    let b = 0;
    let hex = checksum.length >= HEX_DIGITS;
    for (let i = 0; hex && i < HEX_DIGITS; i++) {
      const d = hexDigit(checksum.charCodeAt(i));
      if (d < 0) hex = false;
      else if (i < 8) a = (a << 4) | d;
      else b = (b << 4) | d;
    }
    if (!hex) {
      // Two independent 32-bit hashes of a string that is not hex (a cold path).
      a = stringTag(checksum);
      b = stringTag(`${checksum}\u0000`);
    }
    this.h1 = a;
    this.h2 = b | 1;
  }
}
