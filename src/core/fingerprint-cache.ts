/** A cache's table, shared with another thread that reads it (FingerprintReader). */
export interface SharedFingerprints {
  /** Four numbers a slot: fingerprint high and low halves, tag, entry index + 1 (0: empty). */
  readonly slots: Int32Array;
}

/** A slot's fields, at slot × 4. */
const HI = 0;
const LO = 1;
const TAG = 2;
const ENTRY = 3;

/**
 * Lookups in a FingerprintCache's table, and nothing that changes it: the
 * cache itself, or a view of a shared cache's table on another thread
 * (`new FingerprintReader(cache.shared())`; extract-pool.ts).
 *
 * A view reads while the owning thread writes, without locks. A read that
 * races a write can miss a key that is held (an entry moving back after a
 * deletion, or one not yet in the table): the caller then decides as if it
 * had no cache. It cannot find a key that was never held, short of a
 * 64-bit match: the slot's fingerprint is compared with the key's, and a
 * half of one entry's fingerprint with a half of another's matches a given
 * key no more often than a collision. It can find a key the ring has just
 * evicted, which the cache did hold, and in such a race read the tag of
 * the key that took the slot. A probe gives up after visiting every slot,
 * so a view cannot chase entries that keep moving.
 */
export class FingerprintReader {
  protected readonly mask: number;
  protected readonly slots: Int32Array;
  // The fingerprint of the last key hashed (two numbers instead of an allocation per call); read at once.
  protected fpHi = 0;
  protected fpLo = 0;
  private touched = 0;

  constructor(mem: SharedFingerprints) {
    const n = mem.slots.length >> 2;
    if (n < 2 || (n & (n - 1)) !== 0 || mem.slots.length !== n * 4) throw new RangeError(`a fingerprint table has a power of two slots of four numbers, got ${mem.slots.length} numbers`);
    this.mask = n - 1;
    this.slots = mem.slots;
  }

  /** The key's tag, or undefined when the key is not held. */
  get(key: string): number | undefined {
    this.hash(key);
    const slot = this.find(this.fpHi, this.fpLo);
    return slot < 0 ? undefined : this.slots[slot * 4 + TAG];
  }

  has(key: string): boolean {
    this.hash(key);
    return this.find(this.fpHi, this.fpLo) >= 0;
  }

  /**
   * Looks up many keys at once. Writes each key's fingerprint to
   * `fps[2k]`, `fps[2k + 1]` (as lastFingerprint would) and its slot to
   * `found[k]`, -1 when the key is not held; `tagAt(found[k])` is its tag.
   *
   * A lookup's time is mostly one cache miss: the key's slot, at a random
   * place in a table of megabytes that the other threads' work keeps
   * evicting (for the extract worker the table is written on the other
   * core, too). get() in a loop takes those misses one after another,
   * each behind the hashing of its key. Here every key is hashed first,
   * then every key's first slot is read in one tight loop, where the reads
   * do not depend on each other and the CPU overlaps their misses, and
   * only then are the slots probed, from cache (bench/README.md, *What
   * changed*, faa6b9a).
   */
  findMany(keys: readonly string[], fps: Int32Array, found: Int32Array): void {
    const n = keys.length;
    for (let k = 0; k < n; k++) {
      this.hash(keys[k]!);
      fps[2 * k] = this.fpHi;
      fps[2 * k + 1] = this.fpLo;
    }
    const { slots, mask } = this;
    let touched = 0;
    for (let k = 0; k < n; k++) touched |= slots[(fps[2 * k + 1]! & mask) * 4 + ENTRY]!;
    // Kept, so that the compiler cannot drop the reads as unused.
    this.touched = touched;
    for (let k = 0; k < n; k++) found[k] = this.find(fps[2 * k]!, fps[2 * k + 1]!);
  }

  /** The tag held in a slot that findMany found. */
  tagAt(slot: number): number {
    return this.slots[slot * 4 + TAG]!;
  }

  /** Writes the fingerprint of the key last looked up (get or has) as two numbers at `out[at]`, `out[at + 1]`. */
  lastFingerprint(out: Int32Array, at: number): void {
    out[at] = this.fpHi;
    out[at + 1] = this.fpLo;
  }

  /** Whether the key's fingerprint is one of `pairs` (as lastFingerprint writes them, one after another). */
  listed(key: string, pairs: ArrayLike<number>): boolean {
    this.hash(key);
    for (let i = 0; i + 1 < pairs.length; i += 2) if (pairs[i] === this.fpHi && pairs[i + 1] === this.fpLo) return true;
    return false;
  }

  /**
   * Two independent 32-bit lanes over the UTF-16 code units, FNV-1a and a
   * multiply-xorshift, each finished with MurmurHash3's avalanche. Not a
   * cryptographic hash: URLs are not chosen to collide here, and a
   * collision only makes one URL look seen (see the class comment).
   */
  protected hash(key: string): void {
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
  protected find(fpHi: number, fpLo: number): number {
    const { slots, mask } = this;
    for (let i = fpLo & mask, left = mask; left >= 0; i = (i + 1) & mask, left--) {
      const at = i * 4;
      if (slots[at + ENTRY] === 0) return -1;
      if (slots[at + LO] === fpLo && slots[at + HI] === fpHi) return i;
    }
    return -1;
  }
}

/**
 * A bounded set of strings kept as 64-bit fingerprints, each with a small
 * integer tag; the oldest are forgotten first (`refresh` moves a key to the
 * newest end), as in BoundedMap.
 *
 * Why not a Map of the strings: the crawler's screened-URI cache answers
 * for every link of every page, and a Map lookup of a string that came
 * from another thread hashes the new string, then chases the bucket, the
 * entry and each candidate key string through memory the cache no longer
 * holds. Here a lookup is one pass over the string's characters and a
 * probe of a typed array, several times faster (bench/README.md, *What
 * changed*, 1a6e09c). The strings themselves are not kept: the memory is
 * typed arrays, smaller than the strings and nothing for the garbage
 * collector to trace.
 *
 * A fingerprint can collide: two different strings with the same 64 bits.
 * For n keys the chance that a lookup of a new string hits one is about
 * n / 2^64 (5 × 10^-15 at 100,000), the same trade Heritrix's seen-URI
 * filters make with their 64-bit fingerprints. Use it only where a false
 * "seen" costs little: the crawl store still decides, exactly, what is new.
 *
 *   key ──two 32-bit hash lanes──► (hi, lo) ──lo & mask──► slots: open addressing, linear probing
 *                                                           │ (hi, lo, tag, entry index + 1) each, 0 = empty
 *   entries: a ring in insertion order (hi, lo, live) ◄─────┘
 *   new key: written at the ring's next place; a live entry there is the oldest and is evicted
 *   refresh: the key's old entry goes dead (a hole the ring reuses), a new one is appended
 *
 * A slot holds its key's fingerprint and tag, so a lookup reads one cache
 * line of the table: on the thread that writes it that made no difference
 * (the layout try in bench/README.md), but the extract worker reads the
 * table from the other core, where each line is a miss (extract-wire.ts).
 *
 * So refreshing a key already held leaves a hole: until the ring comes
 * round to it the cache holds fewer than `max`, and the refresh may evict
 * the oldest key where BoundedMap would not. The crawler refreshes only
 * keys it has just found missing, so this does not arise there.
 */
export class FingerprintCache extends FingerprintReader {
  readonly max: number;
  private readonly hi: Int32Array;
  private readonly lo: Int32Array;
  private readonly live: Uint8Array;
  private readonly isShared: boolean;
  /** The ring's next place to write. */
  private next = 0;
  private count = 0;

  /** @param opts.shared puts the table in a SharedArrayBuffer, for a FingerprintReader on another thread (shared()). */
  constructor(max: number, opts: { shared?: boolean } = {}) {
    if (!Number.isInteger(max) || max < 1 || max > 1 << 28) throw new RangeError(`FingerprintCache max must be an integer from 1 to 2^28, got ${max}`);
    let size = 2;
    while (size < max * 2) size *= 2;
    super({ slots: opts.shared ? new Int32Array(new SharedArrayBuffer(size * 16)) : new Int32Array(size * 4) });
    this.max = max;
    this.hi = new Int32Array(max);
    this.lo = new Int32Array(max);
    this.live = new Uint8Array(max);
    this.isShared = opts.shared === true;
  }

  get size(): number {
    return this.count;
  }

  /** The table for a FingerprintReader on another thread; undefined unless made with `shared`. */
  shared(): SharedFingerprints | undefined {
    return this.isShared ? { slots: this.slots } : undefined;
  }

  /** Whether the next key added makes the cache forget its oldest one (the ring has come round to a live entry). */
  get full(): boolean {
    return this.live[this.next] === 1;
  }

  /**
   * A cache of `max` entries, more than this one's, that holds this one's
   * keys with their tags, oldest first as here, in a table of its own
   * (shared when this one's is). This one is left as it was.
   */
  grown(max: number): FingerprintCache {
    if (!(max > this.max)) throw new RangeError(`a grown FingerprintCache holds more than ${this.max} entries, got ${max}`);
    const g = new FingerprintCache(max, { shared: this.isShared });
    // From the ring's next place round to it again: oldest to newest.
    for (let k = 0, e = this.next; k < this.max; k++, e = e + 1 === this.max ? 0 : e + 1) {
      if (this.live[e] !== 1) continue;
      const slot = this.find(this.hi[e]!, this.lo[e]!);
      g.put(this.hi[e]!, this.lo[e]!, this.slots[slot * 4 + TAG]!);
    }
    return g;
  }

  /** Adds the key with its tag (a 32-bit integer), or moves a held key to the newest end with the new tag. */
  refresh(key: string, tag: number): void {
    this.hash(key);
    this.put(this.fpHi, this.fpLo, tag);
  }

  private put(hi: number, lo: number, tag: number): void {
    const { slots, mask } = this;
    const slot = this.find(hi, lo);
    if (slot >= 0) {
      this.live[slots[slot * 4 + ENTRY]! - 1] = 0;
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
    this.live[e] = 1;
    this.count++;
    let i = lo & mask;
    while (slots[i * 4 + ENTRY] !== 0) i = (i + 1) & mask;
    // The slot is complete before it is marked taken, for a reader on another thread.
    const at = i * 4;
    slots[at + HI] = hi;
    slots[at + LO] = lo;
    slots[at + TAG] = tag | 0;
    slots[at + ENTRY] = e + 1;
    this.next = e + 1 === this.max ? 0 : e + 1;
  }

  clear(): void {
    this.slots.fill(0);
    this.live.fill(0);
    this.next = 0;
    this.count = 0;
  }

  /**
   * Empties a slot and moves back the entries of its probe run that would
   * otherwise no longer be found (deletion without tombstones, for linear
   * probing): an entry at j may fill the hole at i unless its home slot
   * lies cyclically in (i, j].
   */
  private removeSlot(slot: number): void {
    const { slots, mask } = this;
    let i = slot;
    slots[i * 4 + ENTRY] = 0;
    for (let j = (i + 1) & mask; slots[j * 4 + ENTRY] !== 0; j = (j + 1) & mask) {
      const home = slots[j * 4 + LO]! & mask;
      const stays = i <= j ? i < home && home <= j : i < home || home <= j;
      if (stays) continue;
      // As in refresh, the hole is filled before it is marked taken; then the old slot is emptied.
      slots[i * 4 + HI] = slots[j * 4 + HI]!;
      slots[i * 4 + LO] = slots[j * 4 + LO]!;
      slots[i * 4 + TAG] = slots[j * 4 + TAG]!;
      slots[i * 4 + ENTRY] = slots[j * 4 + ENTRY]!;
      slots[j * 4 + ENTRY] = 0;
      i = j;
    }
  }
}

/**
 * A 32-bit tag for a short string (a site name, say), for the tags this
 * cache holds: equal strings have equal tags; two different strings share
 * one with a chance of 1 in 2^32. Never one of the 256 reserved tags.
 */
export function stringTag(s: string): number {
  let a = 0x811c9dc5 ^ s.length;
  for (let i = 0; i < s.length; i++) a = Math.imul(a ^ s.charCodeAt(i), 0x01000193);
  return unreserved(fmix32(a));
}

/** The block of 256 tags that stringTag never returns, for marks of the cache's user's own (reservedTag). */
const RESERVED_BLOCK = 0x7e57a500;

/** A tag in the reserved block moved out of it (to the next block). Exported for its test. */
export function unreserved(tag: number): number {
  return reservedNumber(tag) >= 0 ? tag ^ 0x100 : tag;
}

/** Reserved tag number `n` (0–255): no string's tag. */
export function reservedTag(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 255) throw new RangeError(`a reserved tag number is from 0 to 255, got ${n}`);
  return RESERVED_BLOCK | n;
}

/** The number of a reserved tag, or -1 for any other tag. */
export function reservedNumber(tag: number): number {
  return (tag & ~0xff) === RESERVED_BLOCK ? tag & 0xff : -1;
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}
