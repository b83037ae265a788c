// openCollectionRuntime: the content store, destinations, feeder and crawls
// one collection gets, the same for `trawl crawl` and `trawl serve`.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TrawlError } from '../../src/core/errors.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { childSection, emptyCollection, type CollectionConfig } from '../../src/config/model.ts';
import type { FingerprintCache } from '../../src/core/fingerprint-cache.ts';
import type { ExtractPool } from '../../src/extract/extract-pool.ts';
import { openCollectionRuntime, type CollectionRuntime } from '../../src/service/collection-runtime.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { rec } from '../store/crawl-store-suite.ts';
import { sha1 } from '../support/feed-store.ts';

function withFileSink(name: string, outputDir: string | undefined): CollectionConfig {
  const c = emptyCollection(name);
  const sink = childSection(childSection(c.root, 'trawl_sinks'), 'out');
  sink.attribs.set('type', 'file');
  if (outputDir !== undefined) sink.attribs.set('output_dir', outputDir);
  return c;
}

describe('collection runtime', () => {
  it('without sinks: a content store under the data directory, the default destination, no feeder, nothing fed', async () => {
    const dir = tempDir('runtime-');
    const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
    const config = emptyCollection('plain');
    const rt = openCollectionRuntime({ config, settings: resolveSettings(config), store, dataDir: dir, maxConcurrency: 2, warn: () => undefined });
    assert.equal(rt.feeder, undefined);
    assert.deepEqual([...rt.destinations], [['default', 'plain']]);
    assert.deepEqual(rt.feedTo, []);
    const ref = await rt.content.put('http://a.test/', { body: new TextEncoder().encode('hello'), header: undefined, mime: 'text/plain' });
    assert.ok(existsSync(join(dir, 'content', 'plain')));
    assert.equal(new TextDecoder().decode((await rt.content.get(ref))!.body), 'hello');
    await rt.close();
    await store.close();
  });

  it('a crawl it opens runs a cycle of the collection on the given crawl store', async () => {
    const dir = tempDir('runtime-');
    const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
    const config = emptyCollection('empty');
    await store.putCollection('empty', '<x/>', Date.now());
    const rt = openCollectionRuntime({ config, settings: resolveSettings(config), store, dataDir: dir, maxConcurrency: 2, warn: () => undefined });
    const summary = await rt.newCrawl({}).runCycle();
    assert.equal(summary.collection, 'empty');
    assert.equal(summary.requests, 0);
    assert.equal((await store.getCollection('empty'))?.epoch, summary.epoch);
    assert.ok(summary.epoch >= 1);
    await rt.close();
    await store.close();
  });

  it('its crawls, one per cycle as trawl serve makes them, lend the extract worker one screened-URI table, not a new one each cycle', async () => {
    const dir = tempDir('runtime-');
    const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
    const config = emptyCollection('tables');
    await store.putCollection('tables', '<x/>', Date.now());
    const lent: ArrayBufferLike[] = [];
    const extractPool = { share: (cache: FingerprintCache) => void lent.push(cache.shared()!.slots.buffer), unshare: () => undefined } as unknown as ExtractPool;
    const open = (): CollectionRuntime => openCollectionRuntime({ config, settings: resolveSettings(config), store, dataDir: dir, maxConcurrency: 2, warn: () => undefined });
    const rt = open();
    await rt.newCrawl({ extractPool }).runCycle();
    await rt.newCrawl({ extractPool }).runCycle();
    assert.equal(lent.length, 2);
    assert.equal(lent[1], lent[0]);
    // Another runtime (another collection) has a table of its own.
    const other = open();
    await other.newCrawl({ extractPool }).runCycle();
    assert.notEqual(lent[2], lent[0]);
    await Promise.all([rt.close(), other.close()]);
    await store.close();
  });

  it('with a sink: a started feeder that delivers what the outbox holds from its content store, unless the destination is paused', async () => {
    const dir = tempDir('runtime-');
    const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
    const out = join(dir, 'out');
    const config = withFileSink('c', out);
    await store.putCollection('c', '<x/>', Date.now());
    let paused = true;
    const rt = openCollectionRuntime({ config, settings: resolveSettings(config), store, dataDir: dir, maxConcurrency: 2, paused: () => paused, warn: () => undefined });
    assert.ok(rt.feeder);
    assert.deepEqual(rt.feedTo, ['default']);
    const urls = ['http://a.test/1', 'http://a.test/2'];
    for (const url of urls) {
      const ref = await rt.content.put(url, { body: new TextEncoder().encode(`<title>${url}</title>`), header: undefined, mime: 'text/html' });
      await store.putRecord('c', rec(url, { contentRef: ref, checksum: sha1(url) }));
    }
    await store.queueFeedFromRecords('c', ['default'], { urls });
    // Paused: nothing waits for an active destination, and nothing is written.
    assert.equal(await rt.feeder.drain(200), 0);
    assert.equal(existsSync(out), false);
    paused = false;
    rt.feeder.poke();
    assert.equal(await rt.feeder.drain(10_000), 0);
    assert.deepEqual(readdirSync(join(out, 'c')).sort(), urls.map((u) => `${sha1(u)}.json`).sort());
    assert.equal(rt.feeder.counters.PPFed, 2);
    await rt.close();
    await store.close();
  });

  it('a sink that cannot be opened fails the opening, or is told to onSinkError and leaves no feeder', async () => {
    const dir = tempDir('runtime-');
    const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
    const config = withFileSink('bad', undefined);
    const settings = resolveSettings(config);
    assert.throws(
      () => openCollectionRuntime({ config, settings, store, dataDir: dir, maxConcurrency: 2, warn: () => undefined }),
      (e: unknown) => e instanceof TrawlError && e.code === 'TRAWL_ERR_CONFIG_RULE' && /file sink needs output_dir/.test(e.message),
    );
    const told: unknown[] = [];
    const rt = openCollectionRuntime({ config, settings, store, dataDir: dir, maxConcurrency: 2, warn: () => undefined, onSinkError: (e) => told.push(e) });
    assert.equal(told.length, 1);
    assert.equal(rt.feeder, undefined);
    assert.deepEqual(rt.feedTo, []);
    await rt.close();
    await store.close();
  });
});
