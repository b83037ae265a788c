/**
 * A CycleEnv for white-box tests of the engine's modules and page stages:
 * the real run-time settings of a collection "t", scheduler, screening,
 * counters and duplicate detector, over a crawl store and content store
 * that record what they are asked (and answer from what a test gives them).
 */
import assert from 'node:assert/strict';
import { siteOf } from '../../src/core/url.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { extractHtml } from '../../src/extract/html.ts';
import type { ExtractPool } from '../../src/extract/extract-pool.ts';
import type { FetchOutcome, ResponseOutcome } from '../../src/fetch/http-fetcher.ts';
import { SiteScheduler } from '../../src/frontier/site-scheduler.ts';
import type { ContentStore } from '../../src/store/content-store.ts';
import type { Completion, CrawlStore, LeasedUri, QueuedUri, UriRecord } from '../../src/store/crawl-store.ts';
import { CrawlEvents } from '../../src/engine/crawl-events.ts';
import type { CrawlEvent, CrawlerOptions } from '../../src/engine/crawl-types.ts';
import { CycleEnv } from '../../src/engine/cycle-env.ts';
import { CycleStats } from '../../src/engine/cycle-stats.ts';
import { CycleLimits } from '../../src/engine/cycle-limits.ts';
import { DiskGuard } from '../../src/engine/disk-guard.ts';
import { DuplicateDetector } from '../../src/engine/duplicates.ts';
import { LinkScreening, type ScreenedCaches } from '../../src/engine/link-screening.ts';
import { PageContext } from '../../src/engine/pipeline/page-context.ts';
import { buildRuntime } from '../../src/engine/runtime.ts';
import { collectionXml } from '../support/crawl-harness.ts';

export const NOW_MS = 1_700_000_000_000;
/** A site key, as siteOf writes it; its pages' URLs are `${SITE}/…`. */
export const SITE = 'http://a.test:80';
export const ORIGIN = 'http://a.test';

/** What the fake stores were asked. */
export interface StoreLog {
  readonly completions: Completion[];
  readonly retries: number[];
  readonly enqueued: Array<{ epoch: number; uris: QueuedUri[]; front: boolean | undefined }>;
  readonly dropped: string[];
  readonly putContent: string[];
  readonly deletedContent: string[];
  readonly statsRows: Array<{ site: string; json: string }>;
  checksumLookups: number;
}

export interface TestCycle {
  readonly env: CycleEnv;
  readonly events: CrawlEvent[];
  readonly log: StoreLog;
}

export interface FixtureOptions {
  /** Extra attribs and sections of the collection. */
  readonly body?: string;
  readonly opts?: Partial<CrawlerOptions>;
  /** Crawl store methods that replace the fakes'. */
  readonly store?: Partial<CrawlStore>;
  /** findByChecksum's answers, by checksum. */
  readonly checksums?: ReadonlyMap<string, string>;
  readonly screenedStart?: number;
  /** The screened-URI cache kept across cycles, as a crawl object keeps it. */
  readonly screenedCaches?: ScreenedCaches;
}

/** An extract pool that parses on this thread and lends nothing. */
export const LOCAL_POOL = {
  share: () => undefined,
  unshare: () => undefined,
  extract: (body: Uint8Array, url: string, opts: Parameters<typeof extractHtml>[2]) => Promise.resolve(extractHtml(body, url, opts)),
} as unknown as ExtractPool;

export function testCycle(o: FixtureOptions = {}): TestCycle {
  const r = readConfigXml(collectionXml(o.body ?? ''), 'test.xml');
  assert.deepEqual(r.diagnostics.filter((d) => d.severity === 'error'), []);
  const config = r.document.collections[0]!;
  const rt = buildRuntime(config);
  const log: StoreLog = { completions: [], retries: [], enqueued: [], dropped: [], putContent: [], deletedContent: [], statsRows: [], checksumLookups: 0 };
  const store = {
    complete: (_c: string, _e: number, c: Completion) => {
      log.completions.push(c);
      return Promise.resolve(c.discovered);
    },
    retry: (_c: string, id: number) => {
      log.retries.push(id);
      return Promise.resolve();
    },
    enqueue: (_c: string, epoch: number, uris: QueuedUri[], front?: boolean) => {
      log.enqueued.push({ epoch, uris, front });
      return Promise.resolve(uris);
    },
    dropQueued: (_c: string, site: string) => {
      log.dropped.push(site);
      return Promise.resolve(0);
    },
    findByChecksum: (_c: string, checksum: string) => {
      log.checksumLookups++;
      return Promise.resolve(o.checksums?.get(checksum));
    },
    putSiteStatsMany: (_c: string, rows: Array<{ site: string; json: string }>) => {
      log.statsRows.push(...rows);
      return Promise.resolve();
    },
    seen: () => Promise.resolve(false),
    ...o.store,
  } as unknown as CrawlStore;
  let n = 0;
  const content = {
    put: (url: string) => {
      log.putContent.push(url);
      return Promise.resolve(`ref-${++n}`);
    },
    delete: (ref: string) => {
      log.deletedContent.push(ref);
      return Promise.resolve();
    },
  } as unknown as ContentStore;
  const events: CrawlEvent[] = [];
  const crawlEvents = new CrawlEvents((e) => events.push(e));
  crawlEvents.logScreened = rt.settings.log.screened === 'text';
  crawlEvents.logFetch = rt.settings.log.fetch === 'text';
  const now = (): number => NOW_MS;
  const opts: CrawlerOptions = { store, content, ...o.opts };
  const stats = new CycleStats(store, 't', crawlEvents, now);
  stats.epoch = 1;
  const sched = new SiteScheduler({ delayMs: () => 0, maxPending: 1, maxSites: 100, maxInterDocs: undefined, maxBackoffDelayMs: 600_000 });
  const env = new CycleEnv({
    rt, opts, events: crawlEvents, stats, sched, now, bloom: undefined, pool: LOCAL_POOL,
    screening: new LinkScreening(rt, stats, crawlEvents, LOCAL_POOL, o.screenedStart, o.screenedCaches),
    duplicates: new DuplicateDetector(store, 't'),
    disk: new DiskGuard({ dir: undefined, minFreePct: 0, slackPct: 0, onChange: () => undefined }),
    limits: new CycleLimits({ maxCrawlDurationS: undefined, maxUniqueUrls: undefined, maxDoc: 0, maxDocSlack: 0, refreshMin: 0 }, crawlEvents),
  });
  env.epoch = 1;
  return { env, events, log };
}

export function leased(url: string, over: Partial<LeasedUri> = {}): LeasedUri {
  return { id: 7, url, site: siteOf(url), depth: 1, hops: 1, redirects: 0, parent: undefined, priority: 0, sub: undefined, retries: 0, flags: 0, ...over } as LeasedUri;
}

export function response(status: number, body: string | Uint8Array = '', headers: Record<string, string> = {}): ResponseOutcome {
  const b = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  return { kind: 'response', status, headers, headerBlock: '', body: b, truncated: false, bytesIn: b.length + 100, bytesOut: 50, durationMs: 3, address: '127.0.0.1' };
}

export function failure(over: Partial<FetchOutcome & { kind: 'failure' }> = {}): FetchOutcome {
  return { kind: 'failure', code: 'co', errorKey: 'net', reason: 'connection refused', blocked: false, connectFailure: true, bytesIn: 0, bytesOut: 0, durationMs: 0, ...over };
}

/** A context for `url` with this fetch outcome and previous record. */
export function pageContext(t: TestCycle, url: string, fetched: FetchOutcome | undefined, previous?: UriRecord, uri: Partial<LeasedUri> = {}): PageContext {
  const u = leased(url, uri);
  const site = t.env.sched.get(u.site);
  return new PageContext(site, u, previous, fetched, t.env.rt.settingsFor(undefined), t.env.stats.statsFor(u.site), NOW_MS);
}

/** A record as the store would hold it after a stored fetch. */
export function storedRecord(url: string, over: Partial<UriRecord> = {}): UriRecord {
  return {
    url, site: siteOf(url), status: 'stored', httpStatus: 200, checksum: 'c0ffee', lastCrawledMs: 1, etag: undefined, lastModified: undefined, errorCount: 0,
    skipCode: undefined, mime: 'text/html', size: 10, contentRef: 'old-ref', duplicateOf: undefined, redirectTo: undefined, depth: 1, parent: undefined, epoch: 1, ...over,
  };
}
