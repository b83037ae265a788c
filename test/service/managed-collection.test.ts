// One collection of the service: its status transitions and operator state,
// checked in memory and in the crawl store's row (a real SQLite store).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import pino from 'pino';
import { TrawlError } from '../../src/core/errors.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { childSection, emptyCollection } from '../../src/config/model.ts';
import { openCollectionRuntime } from '../../src/service/collection-runtime.ts';
import { decodeOperatorState, emptyOperatorState, type OperatorState } from '../../src/service/collection-state.ts';
import { ManagedCollection } from '../../src/service/managed-collection.ts';
import { Statistics } from '../../src/stats/statistics.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import { tempDir } from '../support/crawl-harness.ts';

const log = pino({ level: 'silent' });

async function setup(o: { status?: string; state?: OperatorState; paused?: boolean } = {}): Promise<{ mc: ManagedCollection; store: SqliteCrawlStore; dir: string; done: () => Promise<void> }> {
  const dir = tempDir('managed-collection-');
  const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
  const config = emptyCollection('c');
  if (o.paused) childSection(config.root, 'pp').attribs.set('ds_paused', true);
  const settings = resolveSettings(config);
  await store.putCollection('c', '<x/>', Date.now());
  const mc = new ManagedCollection({ config, settings, store, log, status: o.status ?? 'crawling', state: o.state ?? emptyOperatorState(), statsCycles: 2, now: Date.now });
  mc.attach(openCollectionRuntime({ config, settings, store, dataDir: dir, maxConcurrency: 4, paused: (d) => mc.isPaused(d), warn: () => undefined }));
  return {
    mc, store, dir,
    done: async () => {
      await mc.stop();
      await mc.runtime.close();
      await store.close();
    },
  };
}

async function stored(store: SqliteCrawlStore): Promise<{ state: string; extra: Record<string, unknown> }> {
  const row = await store.getCollection('c');
  assert.ok(row);
  return { state: row.state, extra: row.extra };
}

function isCode(code: string, message?: RegExp): (e: unknown) => boolean {
  return (e) => e instanceof TrawlError && e.code === code && (message === undefined || message.test(e.message));
}

describe('managed collection', () => {
  it('reads its status from the row: suspended and zombie as they are, anything else as crawling', async () => {
    for (const [given, expected] of [['suspended', 'suspended'], ['zombie', 'zombie'], ['crawling', 'crawling'], ['compacting', 'crawling']] as const) {
      const { mc, done } = await setup({ status: given });
      assert.equal(mc.status, expected, given);
      await done();
    }
  });

  it('suspends and resumes, in memory and in the store, refusing a transition to the state it is in', async () => {
    const { mc, store, done } = await setup();
    await mc.suspend();
    assert.equal(mc.status, 'suspended');
    assert.equal((await stored(store)).state, 'suspended');
    await assert.rejects(mc.suspend(), isCode('TRAWL_ERR_XMLRPC_PARAMS', /^collection "c" is already suspended$/));
    await mc.resume();
    assert.equal(mc.status, 'crawling');
    assert.equal((await stored(store)).state, 'crawling');
    await assert.rejects(mc.resume(), isCode('TRAWL_ERR_XMLRPC_PARAMS', /^collection "c" is not suspended$/));
    await mc.markZombie();
    assert.equal(mc.status, 'zombie');
    assert.equal((await stored(store)).state, 'zombie');
    await done();
  });

  it('pauses and resumes feeding per destination, stores the choice, and refuses a pause of what is paused', async () => {
    const { mc, store, done } = await setup();
    assert.equal(mc.isPaused('default'), false);
    assert.deepEqual(mc.feedingNow(), { default: true });
    assert.deepEqual(await mc.setFeedingPaused(['default'], true), ['default']);
    assert.equal(mc.isPaused('default'), true);
    assert.deepEqual((await stored(store)).extra, { feedingPaused: { default: true } });
    // Two identical calls at once: the second sees the first's change and is refused.
    const [a, b] = await Promise.allSettled([mc.setFeedingPaused(['default'], false), mc.setFeedingPaused(['default'], false)]);
    assert.equal(a.status, 'fulfilled');
    assert.equal(b.status, 'rejected');
    assert.ok(isCode('TRAWL_ERR_XMLRPC_PARAMS', /^feeding of "c" to default is already running$/)((b as PromiseRejectedResult).reason));
    assert.deepEqual((await stored(store)).extra, { feedingPaused: { default: false } });
    await done();
  });

  it('starts paused where the configuration says so, until an operator resumes', async () => {
    const { mc, done } = await setup({ paused: true });
    assert.equal(mc.isPaused('default'), true);
    await mc.setFeedingPaused(['default'], false);
    assert.equal(mc.isPaused('default'), false);
    await done();
  });

  it('keeps the state unchanged when a change is refused or cannot be stored', async () => {
    const { mc, store, done } = await setup();
    await mc.setRefreshOnly(true);
    await assert.rejects(mc.update((d) => {
      d.refreshOnly = false;
      throw new Error('refused');
    }), /refused/);
    assert.equal(mc.state.refreshOnly, true);
    const realUpdate = store.updateCollection.bind(store);
    store.updateCollection = async () => {
      throw new Error('disk full');
    };
    await assert.rejects(mc.setRefreshOnly(false), /disk full/);
    store.updateCollection = realUpdate;
    assert.equal(mc.state.refreshOnly, true);
    assert.deepEqual((await stored(store)).extra, { refreshOnly: true });
    // The queue of changes goes on after a failure.
    await mc.setRefreshOnly(false);
    assert.deepEqual((await stored(store)).extra, {});
    await done();
  });

  it('asks for a refetch once: taken when the cycle starts', async () => {
    const { mc, store, done } = await setup();
    await mc.requestRefetch();
    assert.equal(mc.state.refetch, true);
    assert.deepEqual((await stored(store)).extra, { refetch: true });
    await mc.takeRefetch();
    assert.equal(mc.state.refetch, false);
    assert.deepEqual((await stored(store)).extra, {});
    await done();
  });

  it('holds preempted sites, and ends a quarantine on time while the site stays held', async () => {
    const { mc, store, done } = await setup();
    const until = Date.now() + 60_000;
    await mc.hold(['http://a.test:80'], until, false);
    const soon = Date.now() + 80;
    await mc.hold(['http://q.test:80', 'https://q.test:80'], soon, true);
    assert.deepEqual([...mc.state.held], [['http://a.test:80', until], ['http://q.test:80', soon], ['https://q.test:80', soon]]);
    assert.deepEqual([...mc.state.quarantine.keys()], ['http://q.test:80', 'https://q.test:80']);
    assert.deepEqual(decodeOperatorState((await stored(store)).extra).quarantine, mc.state.quarantine);
    for (let i = 0; i < 100 && mc.state.quarantine.size > 0; i++) await sleep(20);
    assert.equal(mc.state.quarantine.size, 0);
    assert.equal(mc.state.held.size, 3);
    const extra = (await stored(store)).extra;
    assert.equal(extra.quarantine, undefined);
    assert.deepEqual(Object.keys(extra.held as object), ['http://a.test:80', 'http://q.test:80', 'https://q.test:80']);
    await done();
  });

  it('ends at start a quarantine that ended while the service was down', async () => {
    const state = decodeOperatorState({ quarantine: { 'http://q.test:80': Date.now() - 1000 }, held: { 'http://q.test:80': Date.now() - 1000 } });
    const { mc, done } = await setup({ state });
    for (let i = 0; i < 100 && mc.state.quarantine.size > 0; i++) await sleep(10);
    assert.equal(mc.state.quarantine.size, 0);
    await done();
  });

  it('reads its statistics back from the stored state, and starts them again when they do not read', async () => {
    const saved = new Statistics({ schema: 'collectionschema', name: 'c', nowS: 1000, keep: 2 });
    saved.newCycle(2000);
    const { mc, store, done } = await setup({ state: decodeOperatorState({ stats: saved.toJSON() }) });
    const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
    assert.deepEqual(plain(mc.stats.toJSON()), plain(saved.toJSON()));
    await mc.saveStats();
    assert.deepEqual((await stored(store)).extra.stats, plain(saved.toJSON()));
    await done();
    const bad = await setup({ state: decodeOperatorState({ stats: { nonsense: true } }) });
    assert.equal(bad.mc.stats.toJSON().name, 'c');
    assert.equal(bad.mc.stats.toJSON().current, 0);
    await bad.done();
  });

  it('wakes a wait early, and a stopped collection waits no more', async () => {
    const { mc, done } = await setup();
    let woke = false;
    const wait = mc.waitFor(undefined).then(() => (woke = true));
    await sleep(10);
    assert.equal(woke, false);
    mc.wake();
    await wait;
    const started = Date.now();
    const long = mc.waitFor(60_000);
    await mc.stop();
    await long;
    assert.ok(Date.now() - started < 5000);
    await mc.waitFor(60_000);
    assert.equal(mc.isStopped, true);
    await done();
  });
});
