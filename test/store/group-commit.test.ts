// The group commit (src/store/group-commit.ts) on its own, over a fake dialect that records each transaction.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { Completion, QueuedUri } from '../../src/store/crawl-store.ts';
import { GroupCommit, type BatchedCompletion, type CompletionBatchWriter } from '../../src/store/group-commit.ts';

const uri = (url: string): QueuedUri => ({ url, site: 'http://a.test:80', depth: 1, hops: 1, redirects: 0, parent: undefined, priority: 1, sub: undefined });
const completion = (leaseId: number, extra: Partial<Completion> = {}): Completion => ({ leaseId, site: 'http://a.test:80', discovered: [uri(`http://a.test/${leaseId}`)], ...extra });

/**
 * A dialect whose transactions are arrays: each completeMany is one
 * transaction, all or nothing; it "writes" site statistics into a table and
 * answers each completion with its discovered links. `fails(batch)` makes a
 * transaction throw before anything is written.
 */
class FakeDialect implements CompletionBatchWriter {
  readonly transactions: Array<Array<{ leaseId: number; writeSiteStats: boolean }>> = [];
  readonly statsWrites: Array<{ key: string; json: string }> = [];
  fails: (batch: readonly BatchedCompletion[]) => boolean = () => false;

  completeMany(batch: readonly BatchedCompletion[]): QueuedUri[][] {
    if (this.fails(batch)) throw new Error(`transaction of ${batch.length} failed`);
    this.transactions.push(batch.map((b) => ({ leaseId: b.completion.leaseId, writeSiteStats: b.writeSiteStats })));
    for (const b of batch) {
      if (b.completion.siteStats !== undefined && b.writeSiteStats) this.statsWrites.push({ key: `${b.collection} ${b.completion.site}`, json: b.completion.siteStats });
    }
    return batch.map((b) => [...b.completion.discovered]);
  }
}

/** The same dialect, answering asynchronously (as a networked database would): each transaction takes `delayMs`. */
class AsyncFakeDialect implements CompletionBatchWriter {
  readonly sync = new FakeDialect();
  inFlight = 0;
  maxInFlight = 0;
  async completeMany(batch: readonly BatchedCompletion[]): Promise<QueuedUri[][]> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((r) => setTimeout(r, 5));
      return this.sync.completeMany(batch);
    } finally {
      this.inFlight--;
    }
  }
}

const ids = (d: FakeDialect): number[][] => d.transactions.map((t) => t.map((c) => c.leaseId));
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

function fakeTimers(t: TestContext): void {
  t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate'] });
}

test('completions within the window share one transaction, written when the window after the first ends', async (t) => {
  fakeTimers(t);
  const d = new FakeDialect();
  const g = new GroupCommit(d, { windowMs: 3 });
  const answers = [g.complete('c', 1, completion(1)), g.complete('c', 1, completion(2))];
  t.mock.timers.tick(2);
  answers.push(g.complete('c', 1, completion(3)));
  assert.deepEqual(ids(d), [], 'nothing is written before the window ends');
  assert.equal(g.pending, 3);
  t.mock.timers.tick(1);
  assert.deepEqual(ids(d), [[1, 2, 3]]);
  assert.equal(g.pending, 0);
  assert.deepEqual((await Promise.all(answers)).map((a) => a.map((u) => u.url)), [['http://a.test/1'], ['http://a.test/2'], ['http://a.test/3']]);
  // The next completion opens a new window.
  const later = g.complete('c', 1, completion(4));
  t.mock.timers.tick(3);
  await later;
  assert.deepEqual(ids(d), [[1, 2, 3], [4]]);
});

test('a window of 0 ms collects the completions of one event-loop turn', async () => {
  const d = new FakeDialect();
  const g = new GroupCommit(d, { windowMs: 0 });
  const first = [g.complete('c', 1, completion(1)), g.complete('c', 1, completion(2))];
  assert.deepEqual(ids(d), []);
  await Promise.all(first);
  await g.complete('c', 1, completion(3));
  assert.deepEqual(ids(d), [[1, 2], [3]]);
});

test('a batch is written at once when maxBatch completions wait, before its window ends', async (t) => {
  fakeTimers(t);
  const d = new FakeDialect();
  const g = new GroupCommit(d, { windowMs: 1000, maxBatch: 4 });
  const answers = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => g.complete('c', 1, completion(i)));
  assert.deepEqual(ids(d), [[1, 2, 3, 4], [5, 6, 7, 8]], 'two full batches, each written by the completion that filled it');
  t.mock.timers.tick(999);
  assert.deepEqual(ids(d), [[1, 2, 3, 4], [5, 6, 7, 8]]);
  t.mock.timers.tick(1);
  assert.deepEqual(ids(d), [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]);
  assert.equal((await Promise.all(answers)).length, 10);
});

test('of the completions of a batch carrying one collection\'s and site\'s statistics, only the last one\'s are written', async (t) => {
  fakeTimers(t);
  const d = new FakeDialect();
  const g = new GroupCommit(d, { windowMs: 3 });
  const b = 'http://b.test:80';
  const answers = [
    g.complete('c', 1, completion(1, { siteStats: 'a1' })),
    g.complete('c', 1, completion(2, { site: b, siteStats: 'b1' })),
    g.complete('c', 1, completion(3, { siteStats: 'a2' })),
    g.complete('c', 1, completion(4)), // no statistics: nothing to supersede
    g.complete('other', 1, completion(5, { siteStats: 'other a' })),
    g.complete('c', 1, completion(6, { site: b, siteStats: 'b2' })),
    g.complete('c', 1, completion(7, { siteStats: 'a3' })),
  ];
  t.mock.timers.tick(3);
  await Promise.all(answers);
  assert.deepEqual(ids(d), [[1, 2, 3, 4, 5, 6, 7]]);
  assert.deepEqual(d.transactions[0]!.filter((c) => c.leaseId !== 4).map((c) => [c.leaseId, c.writeSiteStats]), [[1, false], [2, false], [3, false], [5, true], [6, true], [7, true]]);
  assert.deepEqual(d.statsWrites, [{ key: 'other http://a.test:80', json: 'other a' }, { key: `c ${b}`, json: 'b2' }, { key: 'c http://a.test:80', json: 'a3' }]);
  // Alone in its batch, a completion writes its own statistics.
  const alone = g.complete('c', 1, completion(8, { siteStats: 'a4' }));
  t.mock.timers.tick(3);
  await alone;
  assert.deepEqual(d.transactions[1], [{ leaseId: 8, writeSiteStats: true }]);
});

test('a failed batch is written again one completion at a time: a bad completion fails alone, the others resolve', async (t) => {
  fakeTimers(t);
  const d = new FakeDialect();
  d.fails = (batch) => batch.some((b) => b.completion.leaseId === 2);
  const g = new GroupCommit(d, { windowMs: 3 });
  const answers = [1, 2, 3].map((i) => g.complete('c', 1, completion(i, { siteStats: `s${i}` })));
  t.mock.timers.tick(3);
  const settled = await Promise.allSettled(answers);
  assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.match(String((settled[1] as PromiseRejectedResult).reason), /transaction of 1 failed/);
  // Each retried alone, in order, with its own statistics (a superseding one may have failed).
  assert.deepEqual(d.transactions, [[{ leaseId: 1, writeSiteStats: true }], [{ leaseId: 3, writeSiteStats: true }]]);
});

test('a batch that keeps failing rejects every completion in it, and the next batch is written normally', async (t) => {
  fakeTimers(t);
  const d = new FakeDialect();
  d.fails = () => true;
  const g = new GroupCommit(d, { windowMs: 3 });
  const answers = [1, 2, 3].map((i) => g.complete('c', 1, completion(i)));
  t.mock.timers.tick(3);
  const settled = await Promise.allSettled(answers);
  assert.deepEqual(settled.map((s) => s.status), ['rejected', 'rejected', 'rejected']);
  assert.deepEqual(d.transactions, []);
  d.fails = () => false;
  const next = g.complete('c', 1, completion(4));
  t.mock.timers.tick(3);
  assert.equal((await next).length, 1);
  assert.deepEqual(ids(d), [[4]]);
});

test('each completion resolves with its own answer, in the order the completions came', async (t) => {
  fakeTimers(t);
  const d = new FakeDialect();
  const g = new GroupCommit(d, { windowMs: 3 });
  const order: number[] = [];
  const mine = [1, 2, 3, 4].map((i) => {
    const discovered = [uri(`http://a.test/${i}/x`), uri(`http://a.test/${i}/y`)];
    return g.complete('c', 1, completion(i, { discovered })).then((a) => {
      order.push(i);
      return a.map((u) => u.url);
    });
  });
  t.mock.timers.tick(3);
  const answers = await Promise.all(mine);
  assert.deepEqual(order, [1, 2, 3, 4]);
  assert.deepEqual(answers, [1, 2, 3, 4].map((i) => [`http://a.test/${i}/x`, `http://a.test/${i}/y`]));
});

test('a dialect that answers for another number of completions fails the batch instead of mixing answers up', async (t) => {
  fakeTimers(t);
  const g = new GroupCommit({ completeMany: (batch) => batch.slice(1).map(() => []) }, { windowMs: 3 });
  const answers = [1, 2].map((i) => g.complete('c', 1, completion(i)));
  t.mock.timers.tick(3);
  const settled = await Promise.allSettled(answers);
  assert.deepEqual(settled.map((s) => s.status), ['rejected', 'rejected']);
  assert.match(String((settled[0] as PromiseRejectedResult).reason), /answered 1 times for 2 completions/);
});

test('flush writes what waits now; with nothing waiting it writes nothing', async (t) => {
  fakeTimers(t);
  const d = new FakeDialect();
  const g = new GroupCommit(d, { windowMs: 1000 });
  assert.equal(g.flush(), undefined);
  assert.deepEqual(d.transactions, []);
  const answer = g.complete('c', 1, completion(1));
  assert.equal(g.flush(), undefined, 'a synchronous dialect has written the batch when flush returns');
  assert.deepEqual(ids(d), [[1]]);
  await answer;
  // The window's timer was cleared with the batch: it writes nothing more.
  t.mock.timers.tick(1000);
  assert.deepEqual(ids(d), [[1]]);
});

test('an asynchronous dialect writes one batch at a time; what arrives meanwhile is the next batch', async () => {
  const d = new AsyncFakeDialect();
  const g = new GroupCommit(d, { windowMs: 0, maxBatch: 3 });
  const first = [1, 2, 3].map((i) => g.complete('c', 1, completion(i))); // full: written at once
  const meanwhile = [4, 5, 6, 7].map((i) => g.complete('c', 1, completion(i))); // wait for it, past maxBatch too
  await turn();
  assert.equal(d.inFlight, 1);
  assert.deepEqual((await Promise.all(first)).length, 3);
  assert.equal((await Promise.all(meanwhile)).length, 4);
  assert.deepEqual(ids(d.sync), [[1, 2, 3], [4, 5, 6, 7]]);
  assert.equal(d.maxInFlight, 1);
  // flush() waits for the write under way and then writes what waits.
  const a = g.complete('c', 1, completion(8));
  const b = g.complete('c', 1, completion(9));
  const flushed = g.flush();
  assert.ok(flushed instanceof Promise);
  await flushed;
  assert.deepEqual(ids(d.sync), [[1, 2, 3], [4, 5, 6, 7], [8, 9]]);
  assert.equal((await Promise.all([a, b])).length, 2);
});

test('an asynchronous dialect\'s failed batch is written again one completion at a time, in order', async () => {
  const d = new AsyncFakeDialect();
  d.sync.fails = (batch) => batch.length > 1 || batch[0]!.completion.leaseId === 2;
  const g = new GroupCommit(d, { windowMs: 0 });
  const settled = await Promise.allSettled([1, 2, 3].map((i) => g.complete('c', 1, completion(i))));
  assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.deepEqual(ids(d.sync), [[1], [3]]);
  assert.equal(d.maxInFlight, 1);
});
