// Frontier at scale: 1,000,000 URLs over 20 sites queued in the SQLite crawl
// store, then leased and completed, with operations per second and RSS
// sampled as the queue grows and drains. Shows whether frontier memory stays
// flat with the queue size (the queue lives in SQLite, not in the heap).
//   npx node bench/frontier-scale.ts [--urls 1000000] [--sites 20] [--batch 1000] [--store postgres://…]
// With --store, the same on PostgreSQL (an empty database: the collection "bench" is deleted first).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCrawlStore } from '../src/store/sqlite/sqlite-crawl-store.ts';
import type { CrawlStore, QueuedUri } from '../src/store/crawl-store.ts';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const URLS = arg('urls', 1_000_000);
const SITES = arg('sites', 20);
const BATCH = arg('batch', 1000);
const storeAt = process.argv.indexOf('--store');
const pgUrl = storeAt > 0 ? process.argv[storeAt + 1] : undefined;
const dir = mkdtempSync(join(tmpdir(), 'trawl-frontier-'));
let store: CrawlStore;
if (pgUrl !== undefined) {
  const { PostgresCrawlStore } = await import('../src/store/postgres/postgres-crawl-store.ts');
  store = await PostgresCrawlStore.open(pgUrl);
  await store.deleteCollection('bench');
} else store = new SqliteCrawlStore(join(dir, 'trawl.db'));
const mib = (n: number): string => (n / 1048576).toFixed(0);
const rows: string[] = ['| phase | URLs | ops/s | RSS MiB | heap used MiB |', '|---|--:|--:|--:|--:|'];
const sample = (phase: string, n: number, ops: number): void => {
  const m = process.memoryUsage();
  rows.push(`| ${phase} | ${n.toLocaleString('en')} | ${Math.round(ops).toLocaleString('en')} | ${mib(m.rss)} | ${mib(m.heapUsed)} |`);
};

const site = (i: number): string => `http://h${i % SITES}.bench.test:80`;
let queued = 0;
let t = performance.now();
let last = 0;
for (let i = 0; i < URLS; i += BATCH) {
  const batch: QueuedUri[] = [];
  for (let j = i; j < Math.min(URLS, i + BATCH); j++) {
    batch.push({ url: `${site(j)}/section-${j % 97}/page-${j}.html`, site: site(j), depth: 1, hops: 1, redirects: 0, parent: undefined, priority: 1, sub: undefined });
  }
  queued += (await store.enqueue('bench', 1, batch)).length;
  if (queued - last >= URLS / 5) {
    sample('enqueue', queued, (queued - last) / ((performance.now() - t) / 1000));
    last = queued;
    t = performance.now();
  }
}
let done = 0;
last = 0;
t = performance.now();
for (let round = 0; done < queued; round++) {
  const s = `http://h${round % SITES}.bench.test:80`;
  // Completed together, as a crawl's fetches complete: the store's group
  // commit waits up to 3 ms for company, so one at a time would measure that wait.
  const leased = await store.lease('bench', s, 50);
  await Promise.all(leased.map((l) => store.complete('bench', 1, { leaseId: l.id, site: l.site, discovered: [] })));
  done += leased.length;
  if (done - last >= URLS / 5) {
    sample('lease + complete', done, (done - last) / ((performance.now() - t) / 1000));
    last = done;
    t = performance.now();
  }
}
await store.close();
rmSync(dir, { recursive: true, force: true });
const report = `### Frontier at scale: ${URLS.toLocaleString('en')} URLs over ${SITES} sites (${pgUrl !== undefined ? 'PostgreSQL' : 'SQLite, WAL'})\n\n${rows.join('\n')}\n`;
console.log(report);
writeFileSync(join(import.meta.dirname, 'results', `frontier-${pgUrl !== undefined ? 'pg-' : ''}${URLS}-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z.md`), report);
