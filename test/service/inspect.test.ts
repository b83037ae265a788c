// The readers behind `trawl export` and `trawl inspect` (src/service/inspect.ts) on a real SQLite store:
// pages bounded in documents and in body bytes, resumed after the last record they held.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveSettings } from '../../src/config/effective.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { EXPORT_PAGE_BYTES, exportPage, inspectUri, type CollectionView } from '../../src/service/inspect.ts';
import type { ContentStore, StoredDocument } from '../../src/store/content-store.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import { rec } from '../store/crawl-store-suite.ts';

function view(store: SqliteCrawlStore, docs: Map<string, StoredDocument>): CollectionView {
  const c = readConfigXml('<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="c"/></CrawlerConfig>').document.collections[0]!;
  const content = { get: async (ref: string) => docs.get(ref), close: async () => undefined } as unknown as ContentStore;
  return { name: 'c', store, content, settings: resolveSettings(c), logFiles: () => [] };
}

describe('exportPage', () => {
  it('ends a page past EXPORT_PAGE_BYTES of bodies and the next one starts at the record after', async () => {
    const store = new SqliteCrawlStore(':memory:');
    const docs = new Map<string, StoredDocument>();
    const big = new Uint8Array(Math.ceil(EXPORT_PAGE_BYTES / 3) + 1).fill(0x61);
    for (let i = 0; i < 7; i++) {
      docs.set(`ref${i}`, { body: big, header: undefined, mime: 'text/plain' });
      await store.putRecord('c', rec(`http://a.test/${i}`, { contentRef: `ref${i}` }));
    }
    // One that is not a stored document: left out unless `all`.
    await store.putRecord('c', rec('http://a.test/err', { status: 'error', contentRef: undefined }));
    const v = view(store, docs);
    const seen: string[][] = [];
    let from = 0;
    for (let calls = 0; calls < 10; calls++) {
      const page = await exportPage(v, {}, from, { body: true, document: false, limit: 100 });
      seen.push(page.items.map((i) => i.url.slice('http://a.test/'.length)));
      assert.ok(page.items.every((i) => i.body!.text!.length === big.length));
      if (page.next === 0) break;
      from = page.next;
    }
    // Three bodies pass the budget: each page holds three, and nothing is repeated or lost.
    assert.deepEqual(seen, [['0', '1', '2'], ['3', '4', '5'], ['6']]);
    const all = await exportPage(v, { all: true, prefix: 'http://a.test/e' }, 0, { body: false, document: false, limit: 10 });
    assert.deepEqual(all.items.map((i) => [i.url, i.status]), [['http://a.test/err', 'error']]);
    await store.close();
  });

  it('inspectUri: the frontier entry, the parent, and no history without logs', async () => {
    const store = new SqliteCrawlStore(':memory:');
    await store.enqueue('c', 1, [{ url: 'http://a.test/q', site: 'http://a.test:80', depth: 1, hops: 1, redirects: 0, parent: 'http://a.test/', priority: 1, sub: undefined }]);
    const r = await inspectUri(view(store, new Map()), 'http://a.test/q#x', { body: true });
    assert.equal(r.url, 'http://a.test/q');
    assert.equal(r.input, 'http://a.test/q#x');
    assert.equal(r.known, true);
    assert.equal(r.record, undefined);
    assert.equal(r.parent, 'http://a.test/');
    assert.deepEqual([r.frontier!.state, r.frontier!.crashSuspect], ['queued', false]);
    assert.equal(r.bodyMissing, 'no record');
    assert.deepEqual(r.history, []);
    await store.close();
  });
});
