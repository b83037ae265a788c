/**
 * A Bloom filter over URLs (MS-FSCCFG `smfilter`: its size in bits). It
 * sits in front of the crawl store's seen set as a speed-up only: "not in
 * the filter" means certainly new this run, "in the filter" means "ask the
 * store", which decides. A false positive costs one store lookup, never a
 * lost URL.
 *
 *   bits: [0 1 0 0 1 1 0 …]     k positions per URL from two FNV-1a hashes
 *                                (double hashing: h1 + i·h2)
 */

function fnv1a(s: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class BloomFilter {
  private readonly bits: Uint8Array;
  private readonly size: number;
  private readonly k: number;

  /** `sizeBits` bits; `k` hash functions (7 suits about 10 bits per element). */
  constructor(sizeBits: number, k = 7) {
    this.size = Math.max(64, Math.floor(sizeBits));
    this.bits = new Uint8Array(Math.ceil(this.size / 8));
    this.k = k;
  }

  private positions(s: string): number[] {
    const h1 = fnv1a(s, 0);
    const h2 = fnv1a(s, 0x5bd1e995) | 1;
    const out: number[] = [];
    for (let i = 0; i < this.k; i++) out.push((h1 + Math.imul(i, h2)) >>> 0);
    return out.map((p) => p % this.size);
  }

  add(s: string): void {
    for (const p of this.positions(s)) this.bits[p >> 3]! |= 1 << (p & 7);
  }

  /** False: certainly never added. True: probably added. */
  mightContain(s: string): boolean {
    return this.positions(s).every((p) => (this.bits[p >> 3]! & (1 << (p & 7))) !== 0);
  }
}
