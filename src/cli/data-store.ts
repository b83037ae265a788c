/**
 * A data directory's crawl store opened by a command that only reads it
 * (`trawl urltest --data`, `trawl inspect`, `trawl export`): the store is
 * held by one process at a time (store/sqlite/connection.ts), so while a
 * `trawl crawl` or `trawl serve` holds it, opening answers `in-use` after a
 * short wait instead of the crawler's 5 s, and the caller decides what then.
 *
 * With `--store postgres://…` (as the crawl was run) the crawl store is that
 * database and the documents and logs stay in the data directory; the reader
 * takes the store's exclusive hold as a crawler does (store/postgres/
 * connection.ts holdExclusive), so `in-use` means the same thing there.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { trawlError, TrawlError } from '../core/errors.ts';
import { hasErrors } from '../config/diagnostics.ts';
import { resolveSettings } from '../config/effective.ts';
import { readConfigXml } from '../config/xml-reader.ts';
import { logFilesOf } from '../service/crawl-log.ts';
import type { CollectionView } from '../service/inspect.ts';
import type { CrawlStore } from '../store/crawl-store.ts';
import { openContentStore } from '../store/open-content-store.ts';
import { parseStoreSpec } from '../store/open-crawl-store.ts';
import { maskStoreUrl } from '../store/postgres/url.ts';
import { isStoreInUse } from '../store/sqlite/connection.ts';
import { SqliteCrawlStore } from '../store/sqlite/sqlite-crawl-store.ts';

/** How long opening waits for a process that holds the store. */
const READER_BUSY_MS = 500;

/**
 * The crawl store of `data`, or the one `--store` names; `in-use` when
 * another process holds it. Throws DATA_NO_STORE when a SQLite store is not
 * there, TRAWL_ERR_STORE_UNAVAILABLE when a PostgreSQL server cannot be reached.
 */
export async function openStoreOf(data: string, storeSpec?: string): Promise<CrawlStore | 'in-use'> {
  const spec = parseStoreSpec(storeSpec, data);
  if (spec.kind === 'postgres') {
    const { PostgresCrawlStore } = await import('../store/postgres/postgres-crawl-store.ts');
    try {
      return await PostgresCrawlStore.open(spec.url, { exclusive: true, poolSize: 2 });
    } catch (err) {
      if (err instanceof TrawlError && err.message === trawlError('STORE_PG_IN_USE', { url: maskStoreUrl(spec.url) }).message) return 'in-use';
      throw err;
    }
  }
  const path = spec.path;
  if (!existsSync(path)) throw trawlError('DATA_NO_STORE', { dir: data, path });
  try {
    return new SqliteCrawlStore(path, { busyTimeoutMs: READER_BUSY_MS });
  } catch (err) {
    if (isStoreInUse(err)) return 'in-use';
    throw err;
  }
}

/** One collection of a data directory, opened here: its crawl store, content store and event logs. */
export interface LocalCollection {
  readonly view: CollectionView;
  close(): Promise<void>;
}

/**
 * The collection `name` of `data` (the only one when `name` is undefined),
 * with its content store as its stored configuration sets it up; `in-use`
 * when another process holds the crawl store.
 */
export async function openDataStore(data: string, name: string | undefined, storeSpec?: string): Promise<LocalCollection | 'in-use'> {
  const store = await openStoreOf(data, storeSpec);
  if (store === 'in-use') return store;
  try {
    const names = (await store.listCollections()).map((r) => r.name).filter((n) => !n.startsWith('\u0000'));
    const where = `--data ${data}`;
    if (name !== undefined && !names.includes(name)) throw trawlError('DATA_NO_COLLECTION', { where, name, names: names.join(', ') || 'none' });
    if (name === undefined && names.length !== 1) throw trawlError('DATA_CHOOSE_COLLECTION', { where, count: names.length, names: names.join(', ') || 'none' });
    const chosen = name ?? names[0]!;
    const row = (await store.getCollection(chosen))!;
    const r = readConfigXml(row.configXml, `collection ${chosen}`);
    const config = r.document.collections[0];
    if (!config || hasErrors(r.diagnostics)) throw new TrawlError('TRAWL_ERR_CONFIG_STRUCTURE', `the stored configuration of collection ${JSON.stringify(chosen)} does not read back`);
    const settings = resolveSettings(config);
    const content = openContentStore(join(data, 'content', chosen), { ...settings.storage });
    return {
      view: { name: chosen, store, content, settings, logFiles: () => logFilesOf(data, chosen) },
      close: async () => {
        await content.close();
        await store.close();
      },
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
