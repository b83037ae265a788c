import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { queueSentLinks, Seeder } from '../../src/engine/seeding.ts';
import { URI_FLAGS, type CrawlStore, type QueuedUri, type RecordPage, type UriRecord } from '../../src/store/crawl-store.ts';
import { ORIGIN, SITE, storedRecord, testCycle } from './cycle-fixture.ts';

/** A store whose records come back in pages of `RECORD_PAGE` (5,000): here fewer, so one page. */
function recordStore(records: UriRecord[]): Partial<CrawlStore> {
  return { listRecordPage: (): Promise<RecordPage> => Promise.resolve({ records, first: 1, last: records.length }) };
}

describe('seeding', () => {
  it('queues the valid start URIs (normalized), counts the refused ones, and reports an unreadable start URI file with a code', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trawl-seed-'));
    writeFileSync(join(dir, 'more.txt'), `# comment\n${ORIGIN}/from-file\n\n`);
    const t = testCycle({
      body: `<attrib name="start_uris" type="list-string"><member>${ORIGIN}/a#frag</member><member>ftp://a.test/x</member></attrib>
             <attrib name="start_uri_files" type="list-string"><member>more.txt</member><member>missing.txt</member></attrib>`,
      opts: { baseDir: dir },
      store: recordStore([]),
    });
    await new Seeder(t.env, () => undefined).seed();
    const first = t.log.enqueued[0]!;
    assert.deepEqual(first.uris.map((q) => q.url), [`${ORIGIN}/a`, `${ORIGIN}/from-file`]);
    assert.equal(first.front, false);
    assert.equal(first.uris[0]!.depth, 0);
    const errors = t.events.filter((e) => e.type === 'error');
    assert.deepEqual(errors.map((e) => e.code), ['TRAWL_ERR_IO']);
    assert.equal(Object.values(t.env.stats.c.uriSkips).reduce((a, b) => a + b, 0), 1);
  });

  it('queues every known URI again but the deleted ones, and fills the duplicate check\'s filter from the same walk', async () => {
    const records = [storedRecord(`${ORIGIN}/k1`, { checksum: 'aa'.repeat(20) }), storedRecord(`${ORIGIN}/gone`, { status: 'deleted' })];
    const t = testCycle({ store: recordStore(records) });
    t.env.duplicates.beginCycle();
    await new Seeder(t.env, () => undefined).seed();
    assert.deepEqual(t.log.enqueued.map((e) => e.uris.map((q) => q.url)), [[], [`${ORIGIN}/k1`]]);
    // The filter holds k1's checksum now: an equal page is looked up in the store.
    assert.ok(t.env.duplicates.claim('aa'.repeat(20), `${ORIGIN}/other`) instanceof Promise);
    assert.ok(!(t.env.duplicates.claim('bb'.repeat(20), `${ORIGIN}/other`) instanceof Promise));
  });

  it('with refresh_mode prepend puts the known URIs in front, and the start URIs in front of them last', async () => {
    const t = testCycle({
      body: `<attrib name="refresh_mode" type="string">prepend</attrib><attrib name="start_uris" type="list-string"><member>${ORIGIN}/s</member></attrib>`,
      store: recordStore([storedRecord(`${ORIGIN}/k`)]),
    });
    await new Seeder(t.env, () => undefined).seed();
    assert.deepEqual(t.log.enqueued.map((e) => [e.uris.map((q) => q.url), e.front]), [[[`${ORIGIN}/k`], true], [[`${ORIGIN}/s`], true]]);
  });

  it('a sub-collection\'s own refresh_mode: prepend puts its URIs in front, the collection\'s append keeps the others at the back; soft holds its sites', async () => {
    const body = (mode: string): string => `<attrib name="refresh_mode" type="string">append</attrib>
      <attrib name="start_uris" type="list-string"><member>${ORIGIN}/s</member><member>${ORIGIN}/news/s</member></attrib>
      <SubDomain name="news"><section name="include_uris"><attrib name="prefix" type="list-string"><member>${ORIGIN}/news/</member></attrib></section>
        <attrib name="refresh_mode" type="string">${mode}</attrib></SubDomain>`;
    const records = [storedRecord(`${ORIGIN}/k`), storedRecord(`${ORIGIN}/news/n`)];
    const prepend = testCycle({ body: body('prepend'), store: recordStore(records) });
    await new Seeder(prepend.env, () => undefined).seed();
    // The start URIs and known URIs of the collection at the back; the sub-collection's known URIs, then its start URI, in front.
    assert.deepEqual(prepend.log.enqueued.map((e) => [e.uris.map((q) => q.url), e.front]).filter(([u]) => (u as string[]).length > 0),
      [[[`${ORIGIN}/s`], false], [[`${ORIGIN}/k`], false], [[`${ORIGIN}/news/n`], true], [[`${ORIGIN}/news/s`], true]]);
    assert.deepEqual(prepend.log.enqueued.flatMap((e) => e.uris.map((q) => q.sub)).filter((x) => x !== undefined), ['news', 'news']);
    // soft: the site still has URIs queued, so the sub-collection's URIs of it are not refreshed; the collection's are.
    const soft = testCycle({ body: body('soft'), store: recordStore(records) });
    await new Seeder(soft.env, () => undefined).seed(new Map([[SITE, 1]]));
    assert.deepEqual(soft.log.enqueued.flatMap((e) => e.uris.map((q) => q.url)), [`${ORIGIN}/s`, `${ORIGIN}/k`]);
  });

  it('adds an operator\'s URIs past the scope, giving work to their sites and waking the loop', async () => {
    let woken = 0;
    const t = testCycle({ body: '<attrib name="exclude_exts" type="list-string"><member>.png</member></attrib>' });
    const r = await new Seeder(t.env, () => woken++).addUris([`${ORIGIN}/new`, `${ORIGIN}/i.png`, '::'], true);
    assert.equal(r.added, 1);
    assert.deepEqual(r.refused.map((x) => x.url), [`${ORIGIN}/i.png`, '::']);
    assert.equal(t.log.enqueued[0]?.front, true);
    assert.equal(t.env.sched.peek(SITE)?.queued, 1);
    assert.equal(woken, 1);
  });

  it('sends links to another collection marked SENT, for its running cycle or else its next', async () => {
    const queued: Array<{ epoch: number; uris: QueuedUri[] }> = [];
    let row = { epoch: 4, cycleStartedMs: 10, cycleEndedMs: 5 };
    const store = {
      getCollection: (name: string) => Promise.resolve(name === 'other' ? row : undefined),
      enqueue: (_c: string, epoch: number, uris: QueuedUri[]) => (queued.push({ epoch, uris }), Promise.resolve(uris)),
    } as unknown as CrawlStore;
    const link: QueuedUri = { url: `${ORIGIN}/x`, site: SITE, depth: 1, hops: 1, redirects: 0, parent: undefined, priority: 3, sub: 'sub' };
    assert.equal(await queueSentLinks(store, 'other', [link]), true);
    row = { epoch: 4, cycleStartedMs: 10, cycleEndedMs: 20 };
    assert.equal(await queueSentLinks(store, 'other', [link]), true);
    assert.equal(await queueSentLinks(store, 'nobody', [link]), false);
    assert.deepEqual(queued.map((q) => q.epoch), [4, 5]);
    assert.equal(queued[0]!.uris[0]!.flags, URI_FLAGS.SENT);
    assert.equal(queued[0]!.uris[0]!.sub, undefined);
    assert.equal(queued[0]!.uris[0]!.priority, 1);
  });
});
