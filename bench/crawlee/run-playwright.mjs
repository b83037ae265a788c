// Crawlee's PlaywrightCrawler for the render benchmark (bench/render.ts runs it).
//
//   node bench/crawlee/run-playwright.mjs --seeds FILE --concurrency 2 --browser /usr/bin/chromium [--storage DIR]
//
// Settings matched to trawl's: Debian's Chromium with the same flags, exactly
// --concurrency pages at once (the autoscaled pool's minimum and maximum both
// set), robots.txt obeyed, each page given until network idle (Playwright's
// rule: no request for 500 ms, trawl's network_idle default) before its
// links are enqueued (same host), storage in memory only, no retries.
// Prints its own count as one JSON line on stdout at the end.
import { readFileSync } from 'node:fs';
import { PlaywrightCrawler, Configuration, log, LogLevel } from '@crawlee/playwright';
import { chromium } from 'playwright';

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}

const seeds = readFileSync(arg('seeds'), 'utf8').split('\n').map((l) => l.trim()).filter(Boolean);
const concurrency = Number(arg('concurrency', '2'));
const browser = arg('browser', '/usr/bin/chromium');
const storage = arg('storage', undefined);
if (storage) process.env.CRAWLEE_STORAGE_DIR = storage;

log.setLevel(LogLevel.WARNING);
const config = new Configuration({ persistStorage: false, purgeOnStart: true, ...(storage ? { storageClientOptions: { localDataDirectory: storage } } : {}) });

let pages = 0;
const crawler = new PlaywrightCrawler(
  {
    minConcurrency: concurrency,
    maxConcurrency: concurrency,
    maxRequestRetries: 0,
    respectRobotsTxtFile: true,
    navigationTimeoutSecs: 30,
    requestHandlerTimeoutSecs: 30,
    headless: true,
    launchContext: {
      launcher: chromium,
      launchOptions: {
        executablePath: browser,
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
      },
    },
    async requestHandler({ page, enqueueLinks }) {
      await page.waitForLoadState('networkidle', { timeout: 30_000 }).catch(() => {});
      pages++;
      await enqueueLinks({ strategy: 'same-hostname' });
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
process.stdout.write(`${JSON.stringify({ crawler: 'crawlee-playwright', pages, ms: Math.round(performance.now() - t0), stats })}\n`);
