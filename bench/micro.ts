/**
 * Micro-benchmarks of trawl's hot paths, each against a trivial baseline
 * that does the same job the simplest way, measured in the same run:
 *
 *   link extraction   extractHtml on a generated 8 KB page   vs  htmlparser2 tokenising it with no-op handlers
 *   URL normalisation normalizeUrl(href, page)                vs  new URL(href, page).href
 *   robots matching   parsed robots.txt isAllowed(path)       vs  startsWith over the file's literal Disallow prefixes
 *   SQLite frontier   enqueue + lease + complete per URI      vs  the same INSERT / SELECT+UPDATE / UPDATE on a bare table
 *   screened cache    FingerprintCache: a seen link looked up, a new URL remembered (full)  vs  the same on a Map with a ring of its keys
 *   site scheduler    addWork with 50,000 sites waiting       vs  Map get of the site + a counter
 *   crawl log line    pino into LogFile, 64 lines a turn      vs  pino into pino.destination (sonic-boom, async)
 *
 *   npm run bench:micro -- [--ms 1000] [--rounds 5] [--results DIR]
 *
 * Rounds alternate subject and baseline; each figure is the median of the
 * rounds. Absolute ops/s depend on the machine; the ratio (trawl ÷ baseline)
 * much less, so targets are written as ratios (bench/README.md).
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Parser } from 'htmlparser2';
import pino from 'pino';
import { LogFile } from '../src/core/log-file.ts';
import { FingerprintCache } from '../src/core/fingerprint-cache.ts';
import { normalizeUrl, siteOf } from '../src/core/url.ts';
import { extractHtml } from '../src/extract/html.ts';
import { SiteScheduler } from '../src/frontier/site-scheduler.ts';
import { parseRobots, robotsPathOf } from '../src/scope/robots.ts';
import type { QueuedUri, UriRecord } from '../src/store/crawl-store.ts';
import { SqliteCrawlStore } from '../src/store/sqlite/sqlite-crawl-store.ts';
import { BENCH_DIR, parseFlags, samplePage } from './site/generate.ts';

const f = parseFlags(process.argv.slice(2), { ms: 'string', rounds: 'string', results: 'string' });
if (f.help) {
  console.log('usage: npm run bench:micro -- [--ms 1000] [--rounds 5] [--results DIR]');
  process.exit(0);
}
const MS = Number(f.ms ?? 1000);
const ROUNDS = Number(f.rounds ?? 5);
let sink = 0;

/** Runs `fn` (one call = `opsPerCall` operations) for about `ms`; ops per second. */
function timeSync(fn: () => void, opsPerCall: number, ms: number): number {
  let calls = 0;
  let batch = 1;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    for (let i = 0; i < batch; i++) fn();
    calls += batch;
    t = performance.now();
    if (t - t0 < ms / 20) batch *= 2;
  }
  return (calls * opsPerCall) / ((t - t0) / 1000);
}

async function timeAsync(fn: () => Promise<void>, opsPerCall: number, ms: number): Promise<number> {
  let calls = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    await fn();
    calls++;
    t = performance.now();
  }
  return (calls * opsPerCall) / ((t - t0) / 1000);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Case {
  readonly name: string;
  readonly unit: string;
  readonly subject: string;
  readonly baseline: string;
  readonly run: (which: 'subject' | 'baseline', ms: number) => Promise<number>;
  readonly cleanup?: () => void;
}

// ------------------------------------------------------------------ inputs

const page = samplePage();
const pageBytes = Buffer.byteLength(page.html);
const hrefs = [...page.html.matchAll(/<(?:a|link|img)\s[^>]*?(?:href|src)="([^"]*)"/g)].map((m) => m[1]!);
const absolute = hrefs.map((h) => new URL(h, page.url).href);

const ROBOTS = `# A typical site's robots.txt
User-agent: Googlebot
Disallow: /nogoogle/

User-agent: *
Disallow: /private/
Disallow: /admin/
Disallow: /cgi-bin/
Disallow: /search
Allow: /search/about
Disallow: /cart/
Disallow: /checkout/
Disallow: /account/
Disallow: /tmp/
Disallow: /print/
Disallow: /*?sessionid=
Disallow: /*.pdf$
Disallow: /docs/s99/
Disallow: /api/
Allow: /api/public/
Disallow: /static/private/
Disallow: /drafts/
Disallow: /internal/
Crawl-delay: 1

Sitemap: https://example.com/sitemap.xml
`;
const rules = parseRobots(ROBOTS).forAgent('trawl');
const robotsPaths = absolute.map((u) => robotsPathOf(u));
const prefixes = [...ROBOTS.matchAll(/^Disallow: (\/[^*$\n]*)$/gm)].map((m) => m[1]!);

// ------------------------------------------------------------------ cases

const cases: Case[] = [
  {
    name: 'link extraction',
    unit: `pages (${(pageBytes / 1024).toFixed(1)} KB, ${hrefs.length} links)`,
    subject: 'extractHtml (src/extract/html.ts)',
    baseline: 'htmlparser2 Parser, no-op handlers',
    run: async (which, ms) => which === 'subject'
      ? timeSync(() => {
        sink += extractHtml(page.html, page.url).links.length;
      }, 1, ms)
      : timeSync(() => {
        let n = 0;
        const p = new Parser({ onopentag: () => void n++ }, { decodeEntities: true });
        p.end(page.html);
        sink += n;
      }, 1, ms),
  },
  {
    name: 'URL normalisation',
    unit: 'URLs (relative and absolute hrefs of the page)',
    subject: 'normalizeUrl (src/core/url.ts)',
    baseline: 'new URL(href, base).href',
    run: async (which, ms) => which === 'subject'
      ? timeSync(() => {
        for (const h of hrefs) sink += normalizeUrl(h, page.url)?.length ?? 0;
      }, hrefs.length, ms)
      : timeSync(() => {
        for (const h of hrefs) sink += new URL(h, page.url).href.length;
      }, hrefs.length, ms),
  },
  {
    name: 'robots matching',
    unit: "paths (the page's links) against the * group's 19 rules",
    subject: 'isAllowed of a parsed robots.txt (src/scope/robots.ts)',
    baseline: 'startsWith over the literal Disallow prefixes',
    run: async (which, ms) => which === 'subject'
      ? timeSync(() => {
        for (const p of robotsPaths) if (rules.isAllowed(p)) sink++;
      }, robotsPaths.length, ms)
      : timeSync(() => {
        for (const p of robotsPaths) if (!prefixes.some((x) => p.startsWith(x))) sink++;
      }, robotsPaths.length, ms),
  },
];

// The crawler's screened-URI cache at its default size, full: per operation, a link it holds is looked
// up (a new string, as links arrive from the extract worker) and a new URL is remembered, evicting
// the oldest. The baseline is the cheapest exact FIFO: a Map of the strings whose oldest key is known
// from a ring. Before FingerprintCache the crawler used a Map of the strings (BoundedMap).
const CACHE = 100_000;
const urlOf = (i: number): string => `http://127.0.1.${(i % 50) + 1}:8080/s${i % 40}/page-${i}.html`;
const screenedCache = new FingerprintCache(CACHE);
const ringMap = new Map<string, number>();
const ring: string[] = new Array<string>(CACHE);
let nextUrl = 0;
let nextRing = 0;
let probe = 0;
for (; nextUrl < CACHE; nextUrl++) screenedCache.refresh(urlOf(nextUrl), 1);
for (; nextRing < CACHE; nextRing++) ringMap.set((ring[nextRing] = urlOf(nextRing)), 1);
/** A URL the cache still holds: one of the newest CACHE / 2 remembered. */
const heldUrl = (newest: number): string => urlOf(newest - 1 - ((probe = (probe + 7919) % (CACHE / 2))));
cases.push({
  name: 'screened cache',
  unit: `lookups of a held link + new URLs remembered, in a full cache of ${CACHE.toLocaleString('en-US')}`,
  subject: 'FingerprintCache.get + refresh (src/core/fingerprint-cache.ts)',
  baseline: 'Map get; set + delete of the oldest key, read from a ring',
  run: async (which, ms) => which === 'subject'
    ? timeSync(() => {
      sink += screenedCache.get(heldUrl(nextUrl)) ?? 0;
      screenedCache.refresh(urlOf(nextUrl++), 1);
    }, 1, ms)
    : timeSync(() => {
      sink += ringMap.get(heldUrl(nextRing)) ?? 0;
      const slot = nextRing % CACHE;
      ringMap.delete(ring[slot]!);
      ringMap.set((ring[slot] = urlOf(nextRing++)), 1);
    }, 1, ms),
});

// The scheduler of a broad crawl: 50,000 sites waiting for one of max_sites' slots, each new URI
// noted with addWork. Each call used to search the waiting line: 16 µs at 50,000 sites.
const SITES = 50_000;
const sched = new SiteScheduler({ delayMs: () => 0, maxPending: 8, maxSites: 128, maxInterDocs: undefined, maxBackoffDelayMs: 1000 });
const siteNames = Array.from({ length: SITES }, (_, i) => `http://h${i}.example:80`);
for (const name of siteNames) sched.addWork(name, 1);
const plainSites = new Map(siteNames.map((name) => [name, { queued: 1 }]));
let nextSite = 0;
cases.push({
  name: 'site scheduler',
  unit: `addWork calls, ${SITES.toLocaleString('en-US')} sites waiting`,
  subject: 'SiteScheduler.addWork (src/frontier/site-scheduler.ts)',
  baseline: 'Map get of the site and a counter',
  run: async (which, ms) => which === 'subject'
    ? timeSync(() => {
      sink += sched.addWork(siteNames[(nextSite = (nextSite + 7919) % SITES)]!, 1).queued;
    }, 1, ms)
    : timeSync(() => {
      const s = plainSites.get(siteNames[(nextSite = (nextSite + 7919) % SITES)]!)!;
      sink += ++s.queued;
    }, 1, ms),
});

// SQLite frontier: a round pushes 240 URIs (8 batches of 30, like 8 pages' links) and pops them
// (30 leases of 8, the 8 completed together with a record each, sharing a commit), as the engine
// does: its fetches complete concurrently and the store groups them. The store's commit window is
// 0 here (completions of one event-loop turn share a commit): the crawl's 3 ms window is latency
// that 64 fetches in flight fill, and a single driver would only measure the wait.
const dir = mkdtempSync(join(tmpdir(), 'trawl-micro-'));
const store = new SqliteCrawlStore(join(dir, 'trawl.db'), { commitWindowMs: 0 });
await store.putCollection('bench', '<CrawlerConfig/>', Date.now());
const raw = new DatabaseSync(join(dir, 'bare.db'));
raw.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
raw.exec('CREATE TABLE q (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE, site TEXT NOT NULL, state INTEGER NOT NULL); CREATE INDEX q_site ON q (site, state, id);');
const ins = raw.prepare('INSERT OR IGNORE INTO q (url, site, state) VALUES (?, ?, 0)');
const sel = raw.prepare('SELECT id, url FROM q WHERE site = ? AND state = 0 ORDER BY id LIMIT ?');
const mark = raw.prepare('UPDATE q SET state = ? WHERE id = ?');
const SITE = siteOf(page.url);
let serial = 0;
const PER_ROUND = 240;
const nextBatch = (): QueuedUri[] => Array.from({ length: 30 }, () => ({
  url: `${SITE}/docs/s${serial % 100}/page-${serial++}.html`, site: SITE, depth: 1, hops: 1, redirects: 0, parent: page.url, priority: 1, sub: undefined,
}));
const record = (url: string): UriRecord => ({
  url, site: SITE, status: 'stored', httpStatus: 200, checksum: 'da39a3ee5e6b4b0d3255bfef95601890afd80709', lastCrawledMs: Date.now(), etag: '"abc"',
  lastModified: undefined, errorCount: 0, skipCode: undefined, mime: 'text/html', size: 8192, contentRef: `f:${url.length}`, duplicateOf: undefined,
  redirectTo: undefined, depth: 1, parent: page.url, epoch: 1,
});
const tx = (fn: () => void): void => {
  raw.exec('BEGIN IMMEDIATE');
  fn();
  raw.exec('COMMIT');
};
cases.push({
  name: 'SQLite frontier',
  unit: 'URIs pushed and popped (enqueue + lease + complete)',
  subject: 'SqliteCrawlStore (src/store/sqlite/sqlite-crawl-store.ts)',
  baseline: 'node:sqlite, bare indexed table: INSERT / SELECT+UPDATE / UPDATE',
  run: async (which, ms) => which === 'subject'
    ? timeAsync(async () => {
      for (let b = 0; b < 8; b++) await store.enqueue('bench', 1, nextBatch());
      for (;;) {
        const leased = await store.lease('bench', SITE, 8);
        if (leased.length === 0) break;
        await Promise.all(leased.map((l) => store.complete('bench', 1, { leaseId: l.id, site: SITE, record: record(l.url), discovered: [], siteStats: '{}' })));
      }
    }, PER_ROUND, ms)
    : timeAsync(async () => {
      for (let b = 0; b < 8; b++) {
        const batch = nextBatch();
        tx(() => {
          for (const u of batch) ins.run(u.url, u.site);
        });
      }
      for (;;) {
        let rows: Array<{ id: number }> = [];
        tx(() => {
          rows = sel.all(SITE, 8) as Array<{ id: number }>;
          for (const r of rows) mark.run(1, r.id);
        });
        if (rows.length === 0) break;
        tx(() => {
          for (const r of rows) mark.run(2, r.id);
        });
      }
    }, PER_ROUND, ms),
  cleanup: () => {
    raw.close();
    rmSync(dir, { recursive: true, force: true });
  },
});

// The crawl log: a fetch's line through pino into trawl's batching
// destination, against pino's own asynchronous file destination (sonic-boom).
// A turn of the event loop logs 64 lines, as a crawl's turn finishes many fetches.
const logDir = mkdtempSync(join(tmpdir(), 'trawl-micro-log-'));
const logFile = new LogFile(join(logDir, 'trawl.log'));
const sonic = pino.destination({ dest: join(logDir, 'sonic.log'), sync: false });
const logTo = (dest: pino.DestinationStream) => pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, dest).child({ collection: 'bench' });
const logs = { subject: logTo(logFile), baseline: logTo(sonic) };
let logged = 0;
cases.push({
  name: 'crawl log line',
  unit: 'lines (a fetch\'s event, 64 a turn)',
  subject: 'pino into LogFile (src/core/log-file.ts)',
  baseline: 'pino into pino.destination({ sync: false })',
  run: async (which, ms) => timeAsync(async () => {
    const log = logs[which];
    for (let i = 0; i < 64; i++, logged++) log.info({ event: 'fetch', url: `http://127.0.1.${logged % 50}:8080/docs/s01/page-${logged}.html`, status: 200, code: undefined }, `200 8123 bytes in ${logged % 40} ms`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }, 64, ms),
  cleanup: () => {
    void logFile.close();
    sonic.end();
    rmSync(logDir, { recursive: true, force: true });
  },
});

// ------------------------------------------------------------------ run

interface Row {
  readonly name: string;
  readonly unit: string;
  readonly subject: string;
  readonly baseline: string;
  readonly subjectOpsPerS: number;
  readonly baselineOpsPerS: number;
  readonly ratio: number;
  readonly samples: { subject: number[]; baseline: number[] };
}

const rows: Row[] = [];
for (const c of cases) {
  // Warm-up: let both reach their optimised state.
  await c.run('subject', Math.min(300, MS));
  await c.run('baseline', Math.min(300, MS));
  const s: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    s.push(await c.run('subject', MS));
    b.push(await c.run('baseline', MS));
  }
  const row: Row = { name: c.name, unit: c.unit, subject: c.subject, baseline: c.baseline, subjectOpsPerS: median(s), baselineOpsPerS: median(b), ratio: median(s) / median(b), samples: { subject: s, baseline: b } };
  rows.push(row);
  console.error(`bench: ${c.name}: ${Math.round(row.subjectOpsPerS).toLocaleString('en-US')}/s vs ${Math.round(row.baselineOpsPerS).toLocaleString('en-US')}/s`);
}
await store.close();
for (const c of cases) c.cleanup?.();

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const lines = [
  `### Micro-benchmarks (median of ${ROUNDS} × ${MS} ms; ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, Node ${process.version})`,
  '',
  '| benchmark | unit | trawl ops/s | baseline | baseline ops/s | trawl ÷ baseline |',
  '|---|---|--:|---|--:|--:|',
  ...rows.map((r) => `| ${r.name}: ${r.subject} | ${r.unit} | ${fmt(r.subjectOpsPerS)} | ${r.baseline} | ${fmt(r.baselineOpsPerS)} | ${r.ratio.toFixed(2)} |`),
];
const md = lines.join('\n');
console.log(md);
if (sink === 0.5) console.log(''); // keeps the results observable to the optimiser
const resultsDir = resolve(typeof f.results === 'string' ? f.results : join(BENCH_DIR, 'results'));
mkdirSync(resultsDir, { recursive: true });
const base = join(resultsDir, `micro-${new Date().toISOString().replace(/[:]/g, '-').replace(/\..*/, 'Z')}`);
writeFileSync(`${base}.json`, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpu: cpus()[0]?.model, cpus: cpus().length, ms: MS, rounds: ROUNDS, rows }, null, 2)}\n`);
writeFileSync(`${base}.md`, `${md}\n`);
console.error(`\nbench: saved ${relative(process.cwd(), base)}.json and .md`);
