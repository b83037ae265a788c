/**
 * A bounded set of strings kept as 64-bit fingerprints, each with a small
 * integer tag; the oldest are forgotten first (`refresh` moves a key to the
 * newest end), as in BoundedMap.
 *
 * Why not a Map of the strings: the crawler's screened-URI cache answers
 * for every link of every page (30 a page on the bench site), and a lookup
 * of a string that came from another thread in a 100,000-entry Map cost
 * 600–700 ns: hashing the new string, then chasing the bucket, the entry
 * and each candidate key string through memory the cache no longer holds.
 * Here a lookup is one pass over the string's characters and a probe of a
 * typed array: 130–300 ns (bench/README.md). The strings themselves are not
 * kept, so 100,000 URLs take 3.4 MB of typed arrays instead of about 10 MB of
 * heap the garbage collector must trace.
 *
 * A fingerprint can collide: two different strings with the same 64 bits.
 * For n keys the chance that a lookup of a new string hits one is about
 * n / 2^64 (5 × 10^-15 at 100,000), the same trade Heritrix's seen-URI
 * filters make with their 64-bit fingerprints. Use it only where a false
 * "seen" costs little: the crawl store still decides, exactly, what is new.
 *
 *   key ──two 32-bit hash lanes──► (hi, lo) ──lo & mask──► table: open addressing, linear probing
 *                                                           │ entry index + 1 (0 = empty)
 *   entries: a ring in insertion order (hi, lo, tag, live) ◄┘
 *   new key: written at the ring's next place; a live entry there is the oldest and is evicted
 *   refresh: the key's old entry goes dead (a hole the ring reuses), a new one is appended
 *
 * So refreshing a key already held leaves a hole: until the ring comes
 * round to it the cache holds fewer than `max`, and the refresh may evict
 * the oldest key where BoundedMap would not. The crawler refreshes only
 * keys it has just found missing, so this does not arise there.
 */
export class FingerprintCache {
  readonly max: number;
  private readonly mask: number;
  /** Entry index + 1 per slot, 0 for an empty slot. At most half full. */
  private readonly table: Int32Array;
  private readonly hi: Int32Array;
  private readonly lo: Int32Array;
  private readonly tags: Int32Array;
  private readonly live: Uint8Array;
  /** The ring's next place to write. */
  private next = 0;
  private count = 0;
  // The fingerprint of the last key hashed (two numbers instead of an allocation per call); read at once.
  private fpHi = 0;
  private fpLo = 0;

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1 || max > 1 << 28) throw new RangeError(`FingerprintCache max must be an integer from 1 to 2^28, got ${max}`);
    this.max = max;
    let size = 2;
    while (size < max * 2) size *= 2;
    this.mask = size - 1;
    this.table = new Int32Array(size);
    this.hi = new Int32Array(max);
    this.lo = new Int32Array(max);
    this.tags = new Int32Array(max);
    this.live = new Uint8Array(max);
  }

  get size(): number {
    return this.count;
  }

  /** The key's tag, or undefined when the key is not held. */
  get(key: string): number | undefined {
    this.hash(key);
    const slot = this.find(this.fpHi, this.fpLo);
    return slot < 0 ? undefined : this.tags[this.table[slot]! - 1];
  }

  has(key: string): boolean {
    this.hash(key);
    return this.find(this.fpHi, this.fpLo) >= 0;
  }

  /** Adds the key with its tag (a 32-bit integer), or moves a held key to the newest end with the new tag. */
  refresh(key: string, tag: number): void {
    this.hash(key);
    const hi = this.fpHi;
    const lo = this.fpLo;
    const slot = this.find(hi, lo);
    if (slot >= 0) {
      this.live[this.table[slot]! - 1] = 0;
      this.count--;
      this.removeSlot(slot);
    }
    const e = this.next;
    if (this.live[e] === 1) {
      // The oldest live key: the ring is full here. Find its slot by its own fingerprint.
      this.removeSlot(this.find(this.hi[e]!, this.lo[e]!));
      this.count--;
    }
    this.hi[e] = hi;
    this.lo[e] = lo;
    this.tags[e] = tag | 0;
    this.live[e] = 1;
    this.count++;
    let i = lo & this.mask;
    while (this.table[i] !== 0) i = (i + 1) & this.mask;
    this.table[i] = e + 1;
    this.next = e + 1 === this.max ? 0 : e + 1;
  }

  clear(): void {
    this.table.fill(0);
    this.live.fill(0);
    this.next = 0;
    this.count = 0;
  }

  /**
   * Two independent 32-bit lanes over the UTF-16 code units, FNV-1a and a
   * multiply-xorshift, each finished with MurmurHash3's avalanche. Not a
   * cryptographic hash: URLs are not chosen to collide here, and a
   * collision only makes one URL look seen (see the class comment).
   */
  private hash(key: string): void {
    const n = key.length;
    let a = 0x811c9dc5 ^ n;
    let b = 0x9747b28c ^ n;
    for (let i = 0; i < n; i++) {
      const c = key.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 13;
    }
    this.fpHi = fmix32(a);
    this.fpLo = fmix32(b);
  }

  /** The slot holding the fingerprint (fpHi, fpLo), or -1. */
  private find(fpHi: number, fpLo: number): number {
    const { table, hi, lo, mask } = this;
    for (let i = fpLo & mask; ; i = (i + 1) & mask) {
      const t = table[i]!;
      if (t === 0) return -1;
      if (lo[t - 1] === fpLo && hi[t - 1] === fpHi) return i;
    }
  }

  /**
   * Empties a slot and moves back the entries of its probe run that would
   * otherwise no longer be found (deletion without tombstones, for linear
   * probing): an entry at j may fill the hole at i unless its home slot
   * lies cyclically in (i, j].
   */
  private removeSlot(slot: number): void {
    const { table, lo, mask } = this;
    let i = slot;
    table[i] = 0;
    for (let j = (i + 1) & mask; table[j] !== 0; j = (j + 1) & mask) {
      const home = lo[table[j]! - 1]! & mask;
      const stays = i <= j ? i < home && home <= j : i < home || home <= j;
      if (stays) continue;
      table[i] = table[j]!;
      table[j] = 0;
      i = j;
    }
  }
}

/**
 * A 32-bit tag for a short string (a site name, say), for the tags this
 * cache holds: equal strings have equal tags; two different strings share
 * one with a chance of 1 in 2^32.
 */
export function stringTag(s: string): number {
  let a = 0x811c9dc5 ^ s.length;
  for (let i = 0; i < s.length; i++) a = Math.imul(a ^ s.charCodeAt(i), 0x01000193);
  return fmix32(a);
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}
