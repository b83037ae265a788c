/**
 * Opens the content store that MS-FSCCFG 2.2.4.6 `datastore` names.
 *
 *   openContentStore(dir, storage) ──┬─ datastore=flatfile ──► <dir>/flatfile/…
 *                                    └─ datastore=bstore   ──► <dir>/bstore/cluster-<n>.blk
 *
 * Both live side by side in `dir`, so switching `datastore` leaves the
 * documents of the other format where they are (their refs still name it).
 * Nothing is touched on disk until the first call; errors surface there.
 */

import { TrawlError } from '../core/errors.ts';
import { BstoreContentStore } from './bstore-content-store.ts';
import type { ContentStore, StorageOptions } from './content-store.ts';
import { FlatfileContentStore } from './flatfile-content-store.ts';

export { isCompactable, type Compactable } from './bstore-content-store.ts';

/** What openContentStore takes: the storage settings, `datastore` still as the configuration's string. */
export type ContentStoreOptions = Omit<StorageOptions, 'datastore'> & {
  readonly datastore: string;
  /** `defrag_threshold` (bstore only); 85 when absent. */
  readonly defragThresholdPct?: number;
};

export function openContentStore(dir: string, opts: ContentStoreOptions): ContentStore {
  const { datastore } = opts;
  if (datastore === 'flatfile') return new FlatfileContentStore(dir, { ...opts, datastore });
  if (datastore === 'bstore') return new BstoreContentStore(dir, { ...opts, datastore });
  throw new TrawlError('TRAWL_ERR_CONFIG_VALUE', `storage datastore: expected flatfile or bstore, got "${datastore}"`);
}
