import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CrawlEvents } from '../../src/engine/crawl-events.ts';
import type { CrawlEvent } from '../../src/engine/crawl-types.ts';
import { CycleStats, SAVE_STATS_BATCH } from '../../src/engine/cycle-stats.ts';
import type { CrawlStore } from '../../src/store/crawl-store.ts';
import { SiteStats } from '../../src/stats/site-stats.ts';

const NOW = 1_700_000_000_000;

function stats(store: Partial<CrawlStore>): { s: CycleStats; events: CrawlEvent[] } {
  const events: CrawlEvent[] = [];
  const s = new CycleStats(store as CrawlStore, 't', new CrawlEvents((e) => events.push(e)), () => NOW);
  s.epoch = 3;
  return { s, events };
}

describe('cycle statistics', () => {
  it('starts a site\'s cycle times at its first count in a new cycle', () => {
    const { s } = stats({});
    const st = s.statsFor('http://a.test:80');
    assert.equal(st.data.discrete.Epoch, 3);
    assert.equal(st.data.discrete.CrawlStarted, Math.floor(NOW / 1000));
    assert.equal(s.statsFor('http://a.test:80'), st);
  });

  it('keeps the totals as the sum of the sites as they count', () => {
    const { s } = stats({});
    s.statsFor('http://a.test:80').add('Stored', 2);
    s.uriSkips(s.statsFor('http://b.test:80'), 'ic', 5);
    s.docSkip(s.statsFor('http://b.test:80'), 'em');
    const t = s.totalsData()!;
    assert.equal(t.continuous.Stored, 2);
    assert.equal(t.histograms.URISkip.ic, 5);
    assert.equal(t.histograms.DocSkip.em, 1);
    assert.deepEqual(s.c.uriSkips, { ic: 5 });
    assert.deepEqual(s.c.docSkips, { em: 1 });
  });

  it('saves only the sites that changed since the last save, one save at a time', async () => {
    const saved: string[][] = [];
    const { s } = stats({ putSiteStatsMany: (_c, rows) => (saved.push(rows.map((r) => r.site)), Promise.resolve()) });
    s.statsFor('http://a.test:80');
    s.statsFor('http://b.test:80');
    const p = s.saveChanged();
    assert.equal(s.saveChanged(), p);
    await p;
    await s.saveChanged();
    s.statsFor('http://b.test:80');
    await s.saveChanged();
    assert.deepEqual(saved, [['http://a.test:80', 'http://b.test:80'], ['http://b.test:80']]);
  });

  it('keeps the sites it could not save for the next save, with an error event carrying its code', async () => {
    let fail = true;
    const saved: string[] = [];
    const { s, events } = stats({ putSiteStatsMany: (_c, rows) => (fail ? Promise.reject(new Error('locked')) : (saved.push(...rows.map((r) => r.site)), Promise.resolve())) });
    s.statsFor('http://a.test:80');
    await s.saveChanged();
    assert.equal(events[0]?.type, 'error');
    assert.equal(events[0]?.code, 'TRAWL_ERR_IO');
    fail = false;
    await s.saveChanged();
    assert.deepEqual(saved, ['http://a.test:80']);
  });

  it('saves every site at the end, SAVE_STATS_BATCH a write, with the queue lengths and the end time', async () => {
    const writes: Array<ReadonlyArray<{ readonly site: string; readonly json: string }>> = [];
    const { s } = stats({ putSiteStatsMany: (_c, rows) => (writes.push(rows), Promise.resolve()) });
    for (let i = 0; i < SAVE_STATS_BATCH + 1; i++) s.statsFor(`http://h${i}.test:80`);
    await s.saveAll(true, (site) => (site === 'http://h0.test:80' ? 4 : 0));
    assert.deepEqual(writes.map((w) => w.length), [SAVE_STATS_BATCH, 1]);
    const h0 = SiteStats.parse(writes[0]![0]!.json).data.discrete;
    assert.equal(h0.QueueLength, 4);
    assert.equal(h0.CrawlEnded, Math.floor(NOW / 1000));
  });

  it('reads the sites back a page at a time and sums them afresh', async () => {
    const a = new SiteStats();
    a.add('Stored', 3);
    const pages: Array<{ after: string | undefined }> = [];
    const rows = Array.from({ length: SAVE_STATS_BATCH + 2 }, (_, i) => ({ site: `http://h${String(i).padStart(5, '0')}.test:80`, json: JSON.stringify(a) }));
    const { s } = stats({
      listSiteStats: (_c, o) => {
        const after = o?.after;
        pages.push({ after });
        const from = after === undefined ? 0 : rows.findIndex((r) => r.site === after) + 1;
        return Promise.resolve(rows.slice(from, from + (o?.limit ?? 0)));
      },
    });
    await s.load();
    assert.equal(pages.length, 2);
    assert.equal(s.sites.size, SAVE_STATS_BATCH + 2);
    assert.equal(s.totalsData()?.continuous.Stored, 3 * (SAVE_STATS_BATCH + 2));
  });
});
