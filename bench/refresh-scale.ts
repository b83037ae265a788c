// A refresh over a large crawl store: N crawled URIs (records) over 20
// sites, then an operator's refetch of all of them (CollectionRefetchURI
// with a site, the same walk of the store a refresh cycle's start makes),
// with the time it takes and the process's peak RSS before and after.
// Shows whether a refresh holds the store's records in memory at once.
// `npm run bench:refresh` runs it with the V8 flags and malloc setting that
// bin/trawl.js gives the crawler, on which the peak depends.
//   npm run bench:refresh -- [--records 1000000] [--sites 20]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSettings } from '../src/config/effective.ts';
import { readConfigXml } from '../src/config/xml-reader.ts';
import { CollectionCrawl } from '../src/engine/crawler.ts';
import { openContentStore } from '../src/store/open-content-store.ts';
import { SqliteCrawlStore } from '../src/store/sqlite/sqlite-crawl-store.ts';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const RECORDS = arg('records', 1_000_000);
const SITES = arg('sites', 20);
const dir = mkdtempSync(join(tmpdir(), 'trawl-refresh-'));
const mib = (kib: number): string => (kib / 1024).toFixed(0);
const peak = (): number => process.resourceUsage().maxRSS;

const store = new SqliteCrawlStore(join(dir, 'trawl.db'));
const site = (i: number): string => `http://h${i % SITES}.bench.test:80`;
let t = performance.now();
// Written as a crawl writes them: one transaction per batch of completions.
for (let i = 0; i < RECORDS; i += 1000) {
  const batch = [];
  for (let j = i; j < Math.min(RECORDS, i + 1000); j++) {
    batch.push({ url: `${site(j)}/section-${j % 97}/page-${j}.html`, site: site(j), depth: 1, hops: 1, redirects: 0, parent: undefined, priority: 1, sub: undefined });
  }
  await store.enqueue('bench', 1, batch);
  for (let s = 0; s < SITES; s++) {
    const leased = await store.lease('bench', site(s), 1000);
    await Promise.all(leased.map((l) => store.complete('bench', 1, {
      leaseId: l.id, site: l.site, discovered: [],
      record: {
        url: l.url, site: l.site, status: 'stored', httpStatus: 200, checksum: `c${l.id}`, lastCrawledMs: 1, etag: undefined, lastModified: undefined, errorCount: 0,
        skipCode: undefined, mime: 'text/html', size: 8000, contentRef: `ref-${l.id}`, duplicateOf: undefined, redirectTo: undefined, depth: 1, parent: undefined, epoch: 1,
      },
    })));
  }
}
const fillS = (performance.now() - t) / 1000;

const xml = `<?xml version="1.0"?><CrawlerConfig><DomainSpecification name="bench"><attrib name="start_uris" type="list-string"></attrib></DomainSpecification></CrawlerConfig>`;
const config = readConfigXml(xml, 'bench.xml').document.collections[0]!;
const content = openContentStore(join(dir, 'content'), { ...resolveSettings(config).storage });
const crawl = new CollectionCrawl(config, { store, content });
globalThis.gc?.();
const before = peak();
t = performance.now();
const requeued = await crawl.requeueKnown(() => true);
const refetchS = (performance.now() - t) / 1000;
const after = peak();
const rev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const report = `### A refresh at scale: ${RECORDS.toLocaleString('en')} records over ${SITES} sites (${rev})

| records | written in s | requeued | requeue s | URIs/s | peak RSS before MiB | peak RSS after MiB |
|--:|--:|--:|--:|--:|--:|--:|
| ${RECORDS.toLocaleString('en')} | ${fillS.toFixed(1)} | ${requeued.toLocaleString('en')} | ${refetchS.toFixed(1)} | ${Math.round(requeued / refetchS).toLocaleString('en')} | ${mib(before)} | ${mib(after)} |
`;
console.log(report);
writeFileSync(join(import.meta.dirname, 'results', `refresh-${RECORDS}-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z.md`), report);
await content.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
