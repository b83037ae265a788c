/**
 * Duplicate detection (MS-FSCCFG `diffcheck`): is another page of the
 * collection stored with this checksum?
 *
 *   claim(checksum, url)
 *     ├─ claimed by another page now ─► wait for its answer: a duplicate of it (or of what it found)
 *     ├─ not in the checksum filter ──► no record holds it: claimed, answered at once
 *     └─ otherwise ────────────────────► claimed, then the crawl store is asked (findByChecksum)
 *
 * A page claims its checksum before it is looked up or stored, so an equal
 * page that arrives meanwhile waits for that answer instead of asking the
 * store too and both being stored. The claim of a page that is stored ends
 * when its commit does (release); from then on the crawl store answers.
 *
 * The filter (core/checksum-filter.ts) holds the checksums the collection's
 * records hold: those of the records seeding walks before any fetch, then
 * each one a commit writes (noteRecord), which is the only way records are
 * written while a cycle runs. A checksum not in it is in no record.
 */

import { ChecksumFilter } from '../core/checksum-filter.ts';
import type { CrawlStore, UriRecord } from '../store/crawl-store.ts';

/** A checksum one page is looking up or storing: `original` is what an equal page is a duplicate of (that page, unless the store knew an older one). */
export interface Claim {
  readonly url: string;
  readonly original: Promise<string>;
}

/** The records findByChecksum can answer with, and so the checksums the filter must hold. */
export function holdsChecksum(r: UriRecord): r is UriRecord & { checksum: string } {
  return r.checksum !== undefined && (r.status === 'stored' || r.status === 'unchanged');
}

export class DuplicateDetector {
  /** Checksums of documents being looked up or stored right now. */
  private readonly claimed = new Map<string, Claim>();
  /** Undefined before the first cycle begins: every checksum is then looked up. */
  private filter: ChecksumFilter | undefined;

  private readonly store: CrawlStore;
  private readonly collection: string;

  constructor(store: CrawlStore, collection: string) {
    this.store = store;
    this.collection = collection;
  }

  /** A cycle begins: the filter starts empty, and seeding fills it (noteRecord). */
  beginCycle(): void {
    this.filter = new ChecksumFilter();
  }

  /** A record was written, or found when the cycle began: its checksum is in the store from now on. */
  noteRecord(r: UriRecord): void {
    if (holdsChecksum(r)) this.filter?.add(r.checksum);
  }

  /**
   * Claims `checksum` for the page at `url`, or learns what it duplicates.
   * A Claim (given at once when no record can hold the checksum, or after
   * the store said none does): the page is not a duplicate and holds the
   * claim until `release`. A string: the URL it duplicates (no claim held).
   * A rejected lookup rejects the pages waiting on it too.
   */
  claim(checksum: string, url: string): Claim | Promise<Claim | string> {
    const other = this.claimed.get(checksum);
    if (other !== undefined && other.url !== url) return other.original;
    if (this.filter && !this.filter.mightContain(checksum)) {
      // Claimed all the same, so that an equal document arriving before this one is committed is recorded as its duplicate.
      const claim: Claim = { url, original: Promise.resolve(url) };
      this.claimed.set(checksum, claim);
      return claim;
    }
    return this.lookUp(checksum, url);
  }

  /** Ends `claim` on `checksum` (the page was committed, or failed), unless another has replaced it. */
  release(checksum: string, claim: Claim): void {
    if (this.claimed.get(checksum) === claim) this.claimed.delete(checksum);
  }

  private async lookUp(checksum: string, url: string): Promise<Claim | string> {
    const lookup = this.store.findByChecksum(this.collection, checksum, url);
    const mine: Claim = { url, original: lookup.then((o) => o ?? url) };
    mine.original.catch(() => undefined); // a failed lookup fails this page; those waiting get the same error
    this.claimed.set(checksum, mine);
    let original: string | undefined;
    try {
      original = await lookup;
    } catch (err) {
      this.claimed.delete(checksum);
      throw err;
    }
    if (original === undefined) return mine;
    // A duplicate stores nothing: its claim ends here.
    this.claimed.delete(checksum);
    return original;
  }
}
