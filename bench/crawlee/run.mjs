// Crawlee's CheerioCrawler for the crawl benchmark (bench/crawl.ts runs it).
//
//   node bench/crawlee/run.mjs --seeds FILE [--concurrency 64] [--exclude-exts css,png,…] [--storage DIR]
//
// Settings matched to the other crawlers: no delay, robots.txt obeyed,
// exactly --concurrency requests in flight (the autoscaled pool's minimum
// and maximum are both set, so it does not start at 1 and ramp up), links
// followed within each page's own host (every bench host is a start URL),
// asset extensions not enqueued, storage in memory only.
// Prints Crawlee's own statistics as one JSON line on stdout at the end.
import { readFileSync } from 'node:fs';
import { CheerioCrawler, Configuration, log, LogLevel } from '@crawlee/cheerio';

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}

const seeds = readFileSync(arg('seeds'), 'utf8').split('\n').map((l) => l.trim()).filter(Boolean);
const concurrency = Number(arg('concurrency', '64'));
const exts = arg('exclude-exts', '').split(',').map((e) => e.trim().replace(/^\./, '')).filter(Boolean);
const storage = arg('storage', undefined);
if (storage) process.env.CRAWLEE_STORAGE_DIR = storage;
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const exclude = exts.length ? [new RegExp(`\\.(?:${exts.map(escape).join('|')})(?:[?#].*)?$`, 'i')] : [];

log.setLevel(LogLevel.WARNING);
const config = new Configuration({ persistStorage: false, purgeOnStart: true, ...(storage ? { storageClientOptions: { localDataDirectory: storage } } : {}) });

let pages = 0;
const crawler = new CheerioCrawler(
  {
    minConcurrency: concurrency,
    maxConcurrency: concurrency,
    respectRobotsTxtFile: true,
    async requestHandler({ enqueueLinks }) {
      pages++;
      await enqueueLinks({ strategy: 'same-hostname', exclude });
    },
  },
  config,
);

let stopping = false;
process.on('SIGINT', () => {
  if (stopping) process.exit(130);
  stopping = true;
  crawler.autoscaledPool?.abort().catch(() => {});
});

const t0 = performance.now();
const stats = await crawler.run(seeds);
process.stdout.write(`${JSON.stringify({ crawler: 'crawlee', pages, ms: Math.round(performance.now() - t0), stats })}\n`);
