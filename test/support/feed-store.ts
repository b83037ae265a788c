// A real SQLite crawl store and flat-file content store holding one small
// HTML page per URL, ready for a Feeder: the feeding tests share it.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { openContentStore } from '../../src/store/open-content-store.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import type { ContentStore } from '../../src/store/content-store.ts';
import { rec } from '../store/crawl-store-suite.ts';

export const sha1 = (s: string): string => createHash('sha1').update(s).digest('hex');

/** Stores `<title>URL</title><p>text of URL</p>` for each URL in collection `c`, with checksum sha1(URL). */
export async function storeWithDocs(dir: string, urls: readonly string[]): Promise<{ store: SqliteCrawlStore; content: ContentStore }> {
  const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
  const content = openContentStore(join(dir, 'content'), { datastore: 'flatfile', compress: true, compressExcludeMime: [], storeHttpHeader: false, clusters: 2 });
  for (const url of urls) {
    const ref = await content.put(url, { body: new TextEncoder().encode(`<title>${url}</title><p>text of ${url}</p>`), header: undefined, mime: 'text/html' });
    await store.putRecord('c', rec(url, { contentRef: ref, checksum: sha1(url) }));
  }
  return { store, content };
}
