// What a crawl keeps in memory per site, for broad crawls over many hosts:
// the heap each per-site structure holds with N sites known to the cycle,
// and the time of the crawl loop's idle check at that size.
//   node --expose-gc bench/site-state.ts [--sites 1000000] [--save-sites 20000]
// Needs --expose-gc: each figure is heapUsed after two full GCs, before
// and after N sites' worth of the structure is built.
import { RobotsManager, ROBOTS_MEMO_MAX } from '../src/engine/robots-manager.ts';
import { EgressChecker, SiteResolver } from '../src/fetch/egress.ts';
import type { HttpFetcher } from '../src/fetch/http-fetcher.ts';
import { SiteScheduler } from '../src/frontier/site-scheduler.ts';
import { emptyStats, mergeDiscrete, SiteStats } from '../src/stats/site-stats.ts';
import { sumSiteCounters } from '../src/stats/statistics.ts';
import type { CrawlStore, RobotsRow } from '../src/store/crawl-store.ts';
import { openThreadedCrawlStore } from '../src/store/storage-client.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFlags } from './site/generate.ts';

const f = parseFlags(process.argv.slice(2), { sites: 'string', 'save-sites': 'string' });
const USAGE = 'usage: node --expose-gc bench/site-state.ts [--sites 1000000] [--save-sites 20000]';
const count = (name: string, def: number): number => {
  const v = f[name] === undefined ? def : Number(f[name]);
  if (!Number.isInteger(v) || v < 1) {
    console.error(`--${name} must be a positive integer, got ${String(f[name])}\n${USAGE}`);
    process.exit(2);
  }
  return v;
};
const gc = (globalThis as { gc?: () => void }).gc;
if (f.help || !gc) {
  console.error(USAGE);
  process.exit(f.help ? 0 : 2);
}
const N = count('sites', 1_000_000);
const heap = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const names = Array.from({ length: N }, (_, i) => `http://host-${i}.bench.test`);
const hosts = names.map((n) => n.slice('http://'.length));
const rows: string[] = [`| per site, ${N.toLocaleString('en')} sites | bytes per site | MiB in all |`, '|---|--:|--:|'];
const keep: unknown[] = [];
async function measure(what: string, build: () => unknown): Promise<void> {
  const before = heap();
  keep.push(await build());
  const bytes = heap() - before;
  rows.push(`| ${what} | ${Math.round(bytes / N).toLocaleString('en')} | ${(bytes / 1048576).toFixed(0)} |`);
}

// The scheduler's SiteState, gate and map entry, as addWork makes them.
const policy = { delayMs: () => 0, maxPending: 8, maxSites: 128, maxInterDocs: undefined, maxBackoffDelayMs: 600_000 };
const sched = new SiteScheduler(policy);
await measure('`SiteScheduler`: `SiteState`, its gate, the map entries', () => {
  for (const n of names) sched.addWork(n, 1);
  return sched;
});

// Statistics after ten documents (MS-FSCADM site schema), as the crawler keeps them per site.
function afterTenDocuments(site: string, codes: readonly string[]): SiteStats {
  const st = new SiteStats();
  st.add('Processed', 10);
  st.add('Downloaded', 9);
  st.add('Stored', 8);
  st.add('ReadNet', 80_000);
  st.download(0.05, 8000);
  for (const c of codes) st.count('HTTPResponse', c, c === '200' ? 10 - codes.length + 1 : 1);
  st.count('MimeType', 'text/html', 9);
  st.count('URISkip', 'ro', 2);
  st.data.discrete.LastUri = `${site}/page-9.html`;
  return st;
}

// Once for a site that answered 200 only, once for one that also answered 301 and 404.
for (const codes of [['200'], ['200', '301', '404']]) {
  await measure(`\`SiteStats\` after ten documents, HTTP ${codes.join(', ')}`, () => new Map(names.map((n) => [n, afterTenDocuments(n, codes)])));
  keep.pop();
}

// The robots cache, filled through its own read-back path from a store holding every site's robots.txt.
const robotsBody = new TextEncoder().encode('User-agent: *\nDisallow: /private/\nDisallow: /cgi-bin/\nAllow: /private/open/\nSitemap: http://example.com/sitemap.xml\n');
const store = { getRobots: async (): Promise<RobotsRow> => ({ fetchedMs: Date.now(), status: 200, body: robotsBody }) } as unknown as CrawlStore;
const settings = { obey: true, ttlS: 86_400, timeoutS: 10, authIgnore: true, toutIgnore: true, productToken: 'trawl', headers: {}, maxBytes: 512 * 1024 };
await measure(`\`RobotsManager\` (a 4-line robots.txt; the last ${ROBOTS_MEMO_MAX.toLocaleString('en')} sites)`, async () => {
  const robots = new RobotsManager(store, 'bench', {} as HttpFetcher, settings);
  for (const n of names) await robots.cached(n);
  return robots;
});

// Pinned DNS answers (dns_ttl), one per host, from a lookup that answers at once.
// Then the same once dns_ttl has passed for all of them and one more host is resolved: the expired answers are dropped.
let clock = 0;
const egress = new EgressChecker({ allowLoopback: true, allowPrivateNetworks: false, allowLinkLocal: false, allowIps: [], denyIps: [] });
await measure('`SiteResolver`: the pinned address', async () => {
  const resolver = new SiteResolver(egress, 3_600_000, async () => [{ address: '127.0.0.1', family: 4 }], () => clock);
  for (const h of hosts) await resolver.resolve(h);
  return resolver;
});
await measure('`SiteResolver`, once `dns_ttl` has passed and one more host is resolved (the change)', async () => {
  const resolver = keep.pop() as SiteResolver;
  clock = 3_600_000;
  await resolver.resolve('one-more.bench.test');
  if (resolver.size !== 1) throw new Error(`expected the expired answers dropped, ${resolver.size} held`);
  return resolver;
});

// The collection's counters: summed site by site (what the service did every 30 s) against the
// discrete values alone folded site by site (CollectionCrawl.counterTotals keeps the rest as it counts).
const siteStats = names.map((n) => afterTenDocuments(n, ['200', '404']));
let t = performance.now();
const summed = sumSiteCounters(siteStats.map((st) => st.data));
const sumMs = performance.now() - t;
t = performance.now();
const discrete = emptyStats().discrete;
for (const st of siteStats) mergeDiscrete(discrete, st.data.discrete);
const discreteMs = performance.now() - t;
if (discrete.LastUri !== summed.discrete.LastUri) throw new Error('the two folds disagree');

// The progress line's queue length: a walk over every site against the scheduler's kept total.
t = performance.now();
let walked = 0;
for (const x of sched.all()) walked += x.queued + x.buffer.length;
const walkMs = performance.now() - t;
if (walked !== sched.queuedTotal()) throw new Error(`queued total ${sched.queuedTotal()} against ${walked} walked`);

// The idle check, with every site drained but the last one known.
for (const n of names) sched.get(n).queued = 0;
sched.ready(0);
sched.addWork(names[N - 1]!, 1);
sched.ready(0);
let calls = 0;
const t0 = performance.now();
while (performance.now() - t0 < 500) {
  if (sched.idle()) throw new Error('a site still has work');
  calls++;
}
// Saving every site's statistics at a cycle's end (or a stop), on the storage thread as the crawl
// does: one autocommit per site, against putSiteStatsMany 1,000 sites per transaction.
const SAVE = Math.min(N, count('save-sites', 20_000));
const dir = mkdtempSync(join(tmpdir(), 'trawl-site-state-'));
const threaded = await openThreadedCrawlStore(join(dir, 'trawl.db'));
const json = JSON.stringify(siteStats[0]);
t = performance.now();
for (let i = 0; i < SAVE; i++) await threaded.putSiteStats('one', names[i]!, json);
const oneUs = ((performance.now() - t) * 1000) / SAVE;
t = performance.now();
for (let i = 0; i < SAVE; i += 1000) await threaded.putSiteStatsMany('many', names.slice(i, Math.min(SAVE, i + 1000)).map((site) => ({ site, json })));
const manyUs = ((performance.now() - t) * 1000) / SAVE;
await threaded.close();
rmSync(dir, { recursive: true, force: true });

console.log(rows.join('\n'));
console.log(`\nSaving the sites' statistics (${SAVE.toLocaleString('en')} sites, storage thread): one transaction per site ${oneUs.toFixed(0)} µs per site; 1,000 per transaction ${manyUs.toFixed(1)} µs per site`);
console.log(`\nThe collection's counters with ${N.toLocaleString('en')} sites: summed site by site ${sumMs.toFixed(0)} ms; running totals plus the discrete values folded site by site ${discreteMs.toFixed(0)} ms`);
console.log(`The queue length of the progress line with ${N.toLocaleString('en')} sites: a walk over them ${walkMs.toFixed(1)} ms; \`SiteScheduler.queuedTotal()\`, kept as sites change, reads two numbers`);
console.log(`\`SiteScheduler.idle()\` with ${N.toLocaleString('en')} sites known: ${((performance.now() - t0) * 1000 / calls).toFixed(2)} µs per call`);
