import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OutcomeWriter } from '../../src/engine/outcome-writer.ts';
import { URI_FLAGS } from '../../src/store/crawl-store.ts';
import { failure, NOW_MS, pageContext, response, ORIGIN, SITE, storedRecord, testCycle } from './cycle-fixture.ts';

const url = `${ORIGIN}/page`;
const FEEDING = { opts: { feedTo: ['idx', 'log'] } };

describe('outcome writer', () => {
  it('stores: counts, records the response with its checksum and content, feeds an update, and deletes the replaced copy after the commit', async () => {
    const t = testCycle(FEEDING);
    const ctx = pageContext(t, url, response(200, 'body', { etag: '"e"' }), storedRecord(url));
    ctx.mime = 'text/html';
    await new OutcomeWriter(t.env).write(ctx, { kind: 'stored', checksum: 'abc', contentRef: 'new-ref', modified: true });
    assert.equal(t.env.stats.c.stored, 1);
    assert.equal(ctx.st.data.continuous.Modified, 1);
    const [c] = t.log.completions;
    assert.equal(c?.record?.status, 'stored');
    assert.equal(c?.record?.checksum, 'abc');
    assert.equal(c?.record?.contentRef, 'new-ref');
    assert.equal(c?.record?.etag, '"e"');
    assert.equal(c?.record?.size, 4);
    assert.equal(c?.record?.lastCrawledMs, NOW_MS);
    assert.deepEqual(c?.feed, [{ destination: 'idx', url, op: 'update' }, { destination: 'log', url, op: 'update' }]);
    assert.deepEqual(t.log.deletedContent, ['old-ref']);
  });

  it('feeds an add for a document never fed, and nothing without destinations', async () => {
    const fed = testCycle(FEEDING);
    const a = pageContext(fed, url, response(200, 'x'));
    a.mime = 'text/html';
    await new OutcomeWriter(fed.env).write(a, { kind: 'stored', checksum: 'abc', contentRef: 'r', modified: false });
    assert.deepEqual(fed.log.completions[0]?.feed?.map((f) => f.op), ['add', 'add']);
    const plain = testCycle();
    await new OutcomeWriter(plain.env).write(pageContext(plain, url, response(200, 'x')), { kind: 'stored', checksum: 'abc', contentRef: 'r', modified: false });
    assert.equal(plain.log.completions[0]?.feed, undefined);
  });

  it('records a 304 as unchanged with the previous validators, refeeding only a Refeed URI', async () => {
    const t = testCycle(FEEDING);
    const prev = storedRecord(url, { etag: '"old"' });
    const w = new OutcomeWriter(t.env);
    await w.write(pageContext(t, url, response(304), prev), { kind: 'unchanged' });
    await w.write(pageContext(t, url, response(304), prev, { flags: URI_FLAGS.REFEED }), { kind: 'unchanged' });
    assert.equal(t.env.stats.c.unchanged, 2);
    const [plain, refeed] = t.log.completions;
    assert.equal(plain?.record?.httpStatus, 304);
    assert.equal(plain?.record?.etag, '"old"');
    assert.equal(plain?.record?.checksum, 'c0ffee');
    assert.equal(plain?.feed, undefined);
    assert.deepEqual(refeed?.feed?.map((f) => f.op), ['update', 'update']);
  });

  it('records a canonical duplicate, drops it from the destinations and deletes its stored copy', async () => {
    const t = testCycle(FEEDING);
    const ctx = pageContext(t, url, response(200, 'x'), storedRecord(url));
    ctx.mime = 'text/html';
    await new OutcomeWriter(t.env).write(ctx, { kind: 'duplicate', of: `${ORIGIN}/c`, reason: 'rel=canonical', checksum: undefined, contentRef: undefined, canonical: true });
    assert.equal(t.env.stats.c.duplicates, 1);
    assert.deepEqual(t.env.stats.c.docSkips, { cs: 1 });
    const r = t.log.completions[0]?.record;
    assert.equal(r?.status, 'duplicate');
    assert.equal(r?.duplicateOf, `${ORIGIN}/c`);
    assert.equal(r?.contentRef, undefined);
    assert.equal(r?.checksum, undefined);
    assert.deepEqual(t.log.completions[0]?.feed?.map((f) => f.op), ['delete', 'delete']);
    assert.deepEqual(t.log.deletedContent, ['old-ref']);
  });

  it('retries without a commit, and drops a closed site\'s queue after a transport failure', async () => {
    const t = testCycle();
    const ctx = pageContext(t, url, failure());
    ctx.site.closed = true;
    await new OutcomeWriter(t.env).write(ctx, { kind: 'failed', action: 'retry', httpStatus: undefined, code: 'co', reason: 'refused', errorCount: 0 });
    assert.deepEqual(t.log.retries, [7]);
    assert.equal(t.log.completions.length, 0);
    assert.equal(t.env.stats.c.retries, 1);
    assert.deepEqual(t.env.stats.c.docSkips, { co: 1 });
    assert.deepEqual(t.log.dropped, [SITE]);
  });

  it('deletes a stored document after its failures, feeding the delete and removing the content', async () => {
    const t = testCycle(FEEDING);
    const ctx = pageContext(t, url, response(404), storedRecord(url));
    await new OutcomeWriter(t.env).write(ctx, { kind: 'failed', action: 'delete', httpStatus: 404, code: undefined, reason: 'HTTP 404', errorCount: 3 });
    assert.equal(t.env.stats.c.errors, 1);
    assert.equal(t.env.stats.c.deleted, 1);
    const r = t.log.completions[0]?.record;
    assert.equal(r?.status, 'deleted');
    assert.equal(r?.errorCount, 3);
    assert.equal(r?.contentRef, undefined);
    assert.deepEqual(t.log.completions[0]?.feed?.map((f) => f.op), ['delete', 'delete']);
    assert.deepEqual(t.log.deletedContent, ['old-ref']);
    assert.deepEqual(t.env.stats.c.docSkips, {});
    assert.deepEqual(t.log.dropped, []);
  });

  it('counts a refusal before any request as a URI skip and commits no record', async () => {
    const t = testCycle();
    await new OutcomeWriter(t.env).write(pageContext(t, url, undefined), { kind: 'refused', code: 'ro', reason: 'disallowed by robots.txt' });
    assert.deepEqual(t.env.stats.c.uriSkips, { ro: 1 });
    assert.equal(t.log.completions.length, 1);
    assert.equal(t.log.completions[0]?.record, undefined);
    assert.equal(t.log.completions[0]?.leaseId, 7);
  });

  it('queues the links past the screened cache, counting those it holds as ic, and remembers the rest', async () => {
    const t = testCycle();
    const w = new OutcomeWriter(t.env);
    const first = pageContext(t, url, undefined);
    const link = { url: `${ORIGIN}/a`, site: SITE, depth: 2, hops: 2, redirects: 0, parent: url, priority: 0, sub: undefined };
    first.links.push(link);
    await w.write(first, { kind: 'listed' });
    assert.deepEqual(t.log.completions[0]?.discovered, [link]);
    const again = pageContext(t, url, undefined);
    again.links.push(link);
    await w.write(again, { kind: 'listed' });
    assert.deepEqual(t.log.completions[1]?.discovered, []);
    assert.deepEqual(t.env.stats.c.uriSkips, { ic: 1 });
  });

  it('logs a document skip with its code while log.fetch is on, and not when it is off', async () => {
    const on = testCycle();
    await new OutcomeWriter(on.env).write(pageContext(on, url, response(200)), { kind: 'skipped', code: 'em', reason: 'empty document' });
    assert.deepEqual(on.events.filter((e) => e.type === 'skip').map((e) => e.code), ['em']);
    const off = testCycle({ body: '<section name="log"><attrib name="fetch" type="string">none</attrib></section>' });
    await new OutcomeWriter(off.env).write(pageContext(off, url, response(200)), { kind: 'skipped', code: 'em', reason: 'empty document' });
    assert.equal(off.events.length, 0);
    assert.deepEqual(off.env.stats.c.docSkips, { em: 1 });
  });

  it('queues a submitted job\'s failed URIs as status operations, with Heritrix\'s codes, and nothing for them otherwise', async () => {
    const t = testCycle({ opts: { feedTo: ['idx'], reportFailures: true } });
    const w = new OutcomeWriter(t.env);
    await w.write(pageContext(t, url, response(404)), { kind: 'failed', action: 'error', httpStatus: 404, code: undefined, reason: 'HTTP 404', errorCount: 1 });
    await w.write(pageContext(t, `${ORIGIN}/r`, failure()), { kind: 'failed', action: 'retry', httpStatus: undefined, code: 'co', reason: 'refused', errorCount: 0 });
    await w.write(pageContext(t, `${ORIGIN}/c`, failure()), { kind: 'failed', action: 'error', httpStatus: undefined, code: 'co', reason: 'connect ECONNREFUSED', errorCount: 1 });
    await w.write(pageContext(t, `${ORIGIN}/private`, undefined), { kind: 'refused', code: 'ro', reason: 'disallowed by robots.txt' });
    await w.write(pageContext(t, `${ORIGIN}/l`, failure({ blocked: true, code: 'ot' })), { kind: 'skipped', code: 'ot', reason: 'refused by the egress policy' });
    await w.write(pageContext(t, `${ORIGIN}/e`, response(200)), { kind: 'skipped', code: 'em', reason: 'empty document' });
    assert.deepEqual(t.log.completions.map((c) => c.feed ?? []), [
      [{ destination: 'status updates', url, op: 'status:404' }],
      [{ destination: 'status updates', url: `${ORIGIN}/c`, op: 'status:-2' }],
      [{ destination: 'status updates', url: `${ORIGIN}/private`, op: 'status:-9998' }],
      [{ destination: 'status updates', url: `${ORIGIN}/l`, op: 'status:-5001' }],
      [],
    ], 'a retry within the cycle reports nothing yet; a document skipped is no failure');
    const plain = testCycle(FEEDING);
    const pw = new OutcomeWriter(plain.env);
    await pw.write(pageContext(plain, url, response(404)), { kind: 'failed', action: 'error', httpStatus: 404, code: undefined, reason: 'HTTP 404', errorCount: 1 });
    await pw.write(pageContext(plain, `${ORIGIN}/private`, undefined), { kind: 'refused', code: 'ro', reason: 'disallowed by robots.txt' });
    assert.deepEqual(plain.log.completions.map((c) => c.feed), [undefined, undefined]);
  });
});
