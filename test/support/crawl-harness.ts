/** Runs real crawls (in-process engine, real SQLite files, real HTTP on loopback) for the engine tests. */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { CollectionCrawl, type CrawlEvent, type CycleSummary } from '../../src/engine/crawler.ts';
import type { LookupFn } from '../../src/fetch/egress.ts';
import { openContentStore } from '../../src/store/open-content-store.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import type { CycleRow, UriRecord } from '../../src/store/crawl-store.ts';
import type { StatsData } from '../../src/stats/site-stats.ts';
import { sumSiteCounters } from '../../src/stats/statistics.ts';

export function tempDir(prefix = 'trawl-crawl-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A collection named "t" from attribs/sections, with loopback allowed. */
export function collectionXml(body: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="t">
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
  ${body}
</DomainSpecification></CrawlerConfig>`;
}

export interface CrawlRun {
  readonly summary: CycleSummary;
  readonly records: UriRecord[];
  readonly events: CrawlEvent[];
  readonly dir: string;
  /** The collection's counters after the cycle: the crawl's running totals, and the sum of its sites' statistics. */
  readonly counters: { readonly running: StatsData | undefined; readonly summed: StatsData };
}

/**
 * `storeCalls`: counts the crawl's calls on its crawl store by method name,
 * into the object given (the store is the real one, seen through a Proxy).
 */
export async function runCrawl(xml: string, opts: { dir?: string; lookup?: LookupFn; maxPages?: number; maxConcurrency?: number; robotsMemo?: number; screenedStart?: number; storeCalls?: Record<string, number>; onCycle?: (c: CycleRow) => void } = {}): Promise<CrawlRun> {
  const r = readConfigXml(xml, 'test.xml');
  assert.deepEqual(r.diagnostics.filter((d) => d.severity === 'error'), []);
  const config = r.document.collections[0]!;
  const dir = opts.dir ?? tempDir();
  const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
  const s = resolveSettings(config);
  const content = openContentStore(join(dir, 'content'), { ...s.storage });
  const events: CrawlEvent[] = [];
  try {
    const calls = opts.storeCalls;
    const seen = calls ? counting(store, calls) : store;
    const crawl = new CollectionCrawl(config, {
      store: seen, content, onEvent: (e) => events.push(e),
      ...(opts.lookup ? { lookup: opts.lookup } : {}),
      ...(opts.maxPages !== undefined ? { maxPages: opts.maxPages } : {}),
      ...(opts.maxConcurrency !== undefined ? { maxConcurrency: opts.maxConcurrency } : {}),
      ...(opts.robotsMemo !== undefined ? { robotsMemo: opts.robotsMemo } : {}),
      ...(opts.screenedStart !== undefined ? { screenedStart: opts.screenedStart } : {}),
      ...(opts.onCycle ? { onCycle: opts.onCycle } : {}),
    });
    const summary = await crawl.runCycle();
    const records = await store.listRecords('t');
    const counters = { running: structuredClone(crawl.counterTotals()), summed: sumSiteCounters([...crawl.siteCounters().values()].map((st) => st.data)) };
    return { summary, records, events, dir, counters };
  } finally {
    await content.close();
    await store.close();
  }
}

export function byPath(records: readonly UriRecord[], origin: string): Map<string, UriRecord> {
  return new Map(records.filter((r) => r.url.startsWith(origin)).map((r) => [r.url.slice(origin.length) || '/', r]));
}

/** The store, with every method call counted in `calls` by name. */
function counting<T extends object>(store: T, calls: Record<string, number>): T {
  return new Proxy(store, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver) as unknown;
      if (typeof v !== 'function' || typeof key !== 'string') return v;
      return (...args: unknown[]) => {
        calls[key] = (calls[key] ?? 0) + 1;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
