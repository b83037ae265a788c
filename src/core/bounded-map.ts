/**
 * A Map that forgets its oldest entries beyond `max` (insertion order:
 * `set` of a new key appends it, `refresh` moves a key to the newest end).
 *
 * Why not `map.delete(map.keys().next().value)`: V8 leaves a hole for each
 * deleted entry until the table is rehashed, and a fresh iterator starts at
 * the first slot, so every eviction walked over all the holes left by the
 * evictions before it: a cost that grows with the map, paid on every new
 * key once it is full (bench/README.md, *What changed*, 7f5fcee). One
 * iterator kept across evictions resumes where it stopped: every slot
 * behind it is a hole it made itself, and new keys are appended ahead of
 * it (ECMAScript Map iterators are live, 24.1.5.1).
 *
 * Why not lru-cache or quick-lru: both promote on `get`, which these caches
 * do not want, and both were slower here (bench/README.md, *Tried*).
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  private oldest: MapIterator<K> | undefined;
  readonly max: number;

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`BoundedMap max must be a positive integer, got ${max}`);
    this.max = max;
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Adds or replaces; a replaced key keeps its place in the eviction order. */
  set(key: K, value: V): this {
    this.map.set(key, value);
    if (this.map.size > this.max) this.evictOldest();
    return this;
  }

  /** Adds or replaces, and makes the key the newest (the last to be forgotten). */
  refresh(key: K, value: V): this {
    this.map.delete(key);
    return this.set(key, value);
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
    this.oldest = undefined;
  }

  keys(): MapIterator<K> {
    return this.map.keys();
  }

  private evictOldest(): void {
    // Every key the iterator has passed was deleted here, so the live keys,
    // and at least one exists (size > max >= 1), all lie ahead of it.
    this.oldest ??= this.map.keys();
    this.map.delete(this.oldest.next().value as K);
  }
}
