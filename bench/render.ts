/**
 * The render benchmark: trawl with use_javascript against Crawlee's
 * PlaywrightCrawler, on one JavaScript site (bench/js-site.ts) served on
 * loopback, both driving Debian's Chromium (/usr/bin/chromium) with the same
 * flags and the same number of pages at once; then a soak of trawl alone.
 *
 *   npx node bench/render.ts [--pages 300] [--concurrency 2] [--crawlers trawl,crawlee] [--time-limit 900]
 *   npx node bench/render.ts --crawlers none --soak-minutes 30 [--pages 300]   # the soak only
 *     [--soak-plain] use_javascript off (the control)   [--soak-gc] a full GC before each sample
 *     [--soak-heap-snapshots DIR] a heap snapshot after each cycle
 *     [--soak-serve] a crawl object per cycle from one CollectionRuntime, as trawl serve runs a collection
 *
 * Each crawler runs under /usr/bin/time (user+sys CPU of the whole process
 * tree, Chromium's processes included, as they are waited for), while its
 * tree's resident memory (the crawler and every Chromium process below it)
 * is summed from /proc every 250 ms for the peak. Coverage and pages come
 * from the site's own request log, never from a crawler's report.
 *
 * The soak runs one CollectionCrawl in a child process (with --soak-serve a
 * crawl object per cycle from one CollectionRuntime, as the daemon runs a
 * collection) for cycle after cycle (refresh_mode scratch: every
 * page fetched and rendered again each cycle), and samples that process
 * tree's memory after each cycle: after the first cycles it must be flat.
 *
 * Results: a Markdown table on stdout, and JSON + Markdown in bench/results/.
 */

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pagePath, startJsSite, type JsSite } from './js-site.ts';

const BENCH = resolve(import.meta.dirname);
const ROOT = resolve(BENCH, '..');
const IP = '127.0.36.1';
const BROWSER = '/usr/bin/chromium';

function flag(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1]! : dflt;
}

/** Resident bytes of `root` and every process below it (from /proc). */
export function treeRssBytes(root: number): number {
  const parent = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const n of readdirSync('/proc')) {
    const pid = Number(n);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(pid, Number(f[1]));
      rss.set(pid, Number(f[21]) * 4096);
    } catch {
      // gone
    }
  }
  let total = 0;
  for (const [pid, bytes] of rss) {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 32; hops++) {
      if (p === root) {
        total += bytes;
        break;
      }
      p = parent.get(p);
    }
  }
  return total;
}

interface RunResult {
  readonly crawler: string;
  readonly exit: number | null;
  readonly wallS: number;
  readonly cpuS: number;
  readonly peakRssMb: number;
  readonly pagesServed: number;
  readonly coverage: number;
  readonly requests: number;
  readonly note: string;
}

async function timed(name: string, command: string[], site: JsSite, timeLimitS: number, env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  site.reset();
  const timeFile = join(mkdtempSync(join(tmpdir(), 'trawl-render-time-')), 'time');
  const t0 = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', timeFile, ...command], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, treeRssBytes(child.pid!));
  }, 250);
  const limit = setTimeout(() => {
    // time's own child gets the signal: the crawler stops and reports what it did
    spawnSync('pkill', ['-INT', '-P', String(child.pid)]);
  }, timeLimitS * 1000);
  const exit = await new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  clearInterval(sampler);
  clearTimeout(limit);
  const wallS = (performance.now() - t0) / 1000;
  const [u, s] = readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  const pages = [...site.pagePaths()].filter((p) => p !== '/');
  const note = exit === 0 ? '' : `exit ${exit}: ${err.trim().split('\n').slice(-3).join(' / ')}`;
  if (process.env.BENCH_VERBOSE) process.stderr.write(`${name} stdout: ${out.slice(-2000)}\n${name} stderr: ${err.slice(-4000)}\n`);
  return { crawler: name, exit, wallS, cpuS: (u ?? 0) + (s ?? 0), peakRssMb: peak / 1048576, pagesServed: pages.length, coverage: pages.length / site.pages, requests: site.log.length, note };
}

function trawlConfig(site: JsSite, concurrency: number, extra = '', javascript = true): string {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-render-cfg-'));
  const file = join(dir, 'render.xml');
  writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="render">
  <attrib name="start_uris" type="list-string"><member>${site.origin}/</member></attrib>
  <attrib name="delay" type="real">0</attrib>
  <attrib name="max_pending" type="integer">${concurrency}</attrib>
  <attrib name="use_javascript" type="boolean">${javascript ? 'yes' : 'no'}</attrib>
  <attrib name="javascript_delay" type="real">0</attrib>
  <attrib name="exclude_exts" type="list-string"><member>.css</member><member>.js</member><member>.json</member></attrib>
  ${extra}
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
  <section name="trawl_render"><attrib name="browser" type="string">${BROWSER}</attrib><attrib name="contexts" type="integer">${concurrency}</attrib></section>
</DomainSpecification></CrawlerConfig>`);
  return file;
}

function ensureCrawlee(): void {
  const dir = join(BENCH, 'crawlee');
  if (existsSync(join(dir, 'node_modules', '@crawlee', 'playwright', 'package.json')) && existsSync(join(dir, 'node_modules', 'playwright', 'package.json'))) return;
  process.stderr.write('bench: installing Crawlee (PlaywrightCrawler, playwright without its browsers) into bench/crawlee/ (its own package.json; not a dependency of trawl)…\n');
  const r = spawnSync('npm', [existsSync(join(dir, 'package-lock.json')) ? 'ci' : 'install', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' } });
  if (r.status !== 0) throw new Error('npm could not install bench/crawlee');
}

function version(pkgJson: string): string {
  return (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
}

function table(rows: readonly RunResult[]): string {
  const lines = ['| crawler | pages/s | CPU ms/page | peak RSS (MiB, crawler + Chromium) | coverage (server log) | requests | wall s | note |', '|---|---:|---:|---:|---:|---:|---:|---|'];
  for (const r of rows) {
    lines.push(`| ${r.crawler} | ${(r.pagesServed / r.wallS).toFixed(2)} | ${r.pagesServed ? Math.round((r.cpuS * 1000) / r.pagesServed) : '-'} | ${Math.round(r.peakRssMb)} | ${(r.coverage * 100).toFixed(1)} % (${r.pagesServed}) | ${r.requests} | ${r.wallS.toFixed(1)} | ${r.note} |`);
  }
  return lines.join('\n');
}

/** The soak's child's memory after a cycle: the process's, and the store's files. */
interface SoakSample {
  readonly cycle: number;
  readonly requests: number;
  readonly ms: number;
  readonly rssMb: number;
  readonly anonMb: number;
  readonly fileMb: number;
  readonly heapMb: number;
  readonly externalMb: number;
  readonly arrayBuffersMb: number;
  readonly dbMb: number;
  readonly walMb: number;
}

/** RssAnon and RssFile of this process, in bytes (from /proc/self/status). */
function rssParts(): { anon: number; file: number } {
  const status = readFileSync('/proc/self/status', 'latin1');
  const kib = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { anon: kib('RssAnon'), file: kib('RssFile') + kib('RssShmem') };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** The soak's child: one CollectionCrawl, cycle after cycle, a JSON line (SoakSample) after each. */
async function soakWorker(): Promise<void> {
  const { readConfigXml } = await import('../src/config/xml-reader.ts');
  const { resolveSettings } = await import('../src/config/effective.ts');
  const { CollectionCrawl } = await import('../src/engine/crawler.ts');
  const { openContentStore } = await import('../src/store/open-content-store.ts');
  const { SqliteCrawlStore } = await import('../src/store/sqlite/sqlite-crawl-store.ts');
  const { openCollectionRuntime } = await import('../src/service/collection-runtime.ts');
  const { writeHeapSnapshot } = await import('node:v8');
  const config = readConfigXml(readFileSync(flag('config', ''), 'utf8'), 'render.xml').document.collections[0]!;
  const dir = flag('data', '');
  const db = join(dir, 'trawl.db');
  const store = new SqliteCrawlStore(db);
  const settings = resolveSettings(config);
  // --serve: a crawl object per cycle from one CollectionRuntime, as trawl serve runs a collection; else one crawl object for every cycle.
  const runtime = process.argv.includes('--serve') ? openCollectionRuntime({ config, settings, store, dataDir: dir, maxConcurrency: 64, warn: () => undefined }) : undefined;
  const content = runtime ? undefined : openContentStore(join(dir, 'content'), { ...settings.storage });
  const one = content ? new CollectionCrawl(config, { store, content, onEvent: () => undefined }) : undefined;
  const until = Date.now() + Number(flag('minutes', '30')) * 60_000;
  const snapshots = flag('heap-snapshots', '');
  const gc = (globalThis as { gc?: () => void }).gc;
  const MB = 1048576;
  for (let cycle = 1; Date.now() < until; cycle++) {
    const t0 = performance.now();
    const crawl = one ?? runtime!.newCrawl({ onEvent: () => undefined });
    const s = await crawl.runCycle();
    const ms = Math.round(performance.now() - t0);
    // With --expose-gc (--soak-gc): garbage collected first, so that what is left is what is held.
    gc?.();
    if (snapshots) writeHeapSnapshot(join(snapshots, `cycle-${cycle}.heapsnapshot`));
    const m = process.memoryUsage();
    const parts = rssParts();
    const sample: SoakSample = {
      cycle, requests: s.requests, ms, rssMb: m.rss / MB, anonMb: parts.anon / MB, fileMb: parts.file / MB, heapMb: m.heapUsed / MB,
      externalMb: m.external / MB, arrayBuffersMb: m.arrayBuffers / MB, dbMb: sizeOf(db) / MB, walMb: sizeOf(`${db}-wal`) / MB,
    };
    process.stdout.write(`${JSON.stringify(sample)}\n`);
  }
  await runtime?.close();
  await store.close();
}

interface SoakOptions {
  readonly minutes: number;
  /** use_javascript off: the same site crawled plainly, the control for "store and crawl" against "rendering". */
  readonly plain: boolean;
  /** node --expose-gc, and a full collection before each sample. */
  readonly gc: boolean;
  /** A directory for a heap snapshot after each cycle. */
  readonly heapSnapshots: string;
  /** A crawl object per cycle from one CollectionRuntime, as trawl serve runs a collection (else one for all cycles). */
  readonly serve: boolean;
}

async function soak(site: JsSite, concurrency: number, o: SoakOptions): Promise<string> {
  const data = mkdtempSync(join(tmpdir(), 'trawl-render-soak-'));
  const config = trawlConfig(site, concurrency, '<attrib name="refresh_mode" type="string">scratch</attrib>', !o.plain);
  const nodeFlags = ['--max-semi-space-size=8', ...(o.gc ? ['--expose-gc'] : [])];
  const workerFlags = ['--soak-worker', '--config', config, '--data', data, '--minutes', String(o.minutes), ...(o.heapSnapshots ? ['--heap-snapshots', o.heapSnapshots] : []), ...(o.serve ? ['--serve'] : [])];
  const child = spawn(process.execPath, [...nodeFlags, import.meta.filename, ...workerFlags], { stdio: ['ignore', 'pipe', 'inherit'] });
  const rows: string[] = [
    `| cycle | ${o.serve ? 'requests' : 'requests so far'} | cycle s | tree RSS after (MiB) | peak tree RSS in cycle (MiB) | node RSS (MiB) | of it anonymous | of it files | JS heap (MiB) | external (MiB) | of it ArrayBuffers | store file (MiB) | -wal (MiB) |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  let peak = 0;
  let buf = '';
  const sampler = setInterval(() => {
    peak = Math.max(peak, treeRssBytes(child.pid!));
  }, 250);
  const r = (n: number): string => n.toFixed(1);
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const c = JSON.parse(line) as SoakSample;
      const row = `| ${c.cycle} | ${c.requests} | ${(c.ms / 1000).toFixed(1)} | ${Math.round(treeRssBytes(child.pid!) / 1048576)} | ${Math.round(peak / 1048576)} | ${r(c.rssMb)} | ${r(c.anonMb)} | ${r(c.fileMb)} | ${r(c.heapMb)} | ${r(c.externalMb)} | ${r(c.arrayBuffersMb)} | ${r(c.dbMb)} | ${r(c.walMb)} |`;
      peak = 0;
      rows.push(row);
      process.stderr.write(`soak: ${row}\n`);
    }
  });
  await new Promise((r) => child.on('exit', r));
  clearInterval(sampler);
  return rows.join('\n');
}

async function main(): Promise<void> {
  if (process.argv.includes('--soak-worker')) return soakWorker();
  const pages = Number(flag('pages', '300'));
  const concurrency = Number(flag('concurrency', '2'));
  const crawlers = flag('crawlers', 'trawl,crawlee').split(',').filter((c) => c !== 'none' && c !== '');
  const timeLimitS = Number(flag('time-limit', '900'));
  const soakMinutes = Number(flag('soak-minutes', '0'));
  const soakOptions: SoakOptions = { minutes: soakMinutes, plain: process.argv.includes('--soak-plain'), gc: process.argv.includes('--soak-gc'), heapSnapshots: flag('soak-heap-snapshots', ''), serve: process.argv.includes('--soak-serve') };
  const site = await startJsSite({ ip: IP, pages });
  const seeds = join(mkdtempSync(join(tmpdir(), 'trawl-render-seeds-')), 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/\n`);
  const results: RunResult[] = [];
  const chromium = spawnSync(BROWSER, ['--version'], { encoding: 'utf8' }).stdout.trim();
  try {
    for (const c of crawlers) {
      process.stderr.write(`bench: ${c}…\n`);
      if (c === 'trawl') {
        const data = mkdtempSync(join(tmpdir(), 'trawl-render-data-'));
        results.push(await timed('trawl', [process.execPath, join(ROOT, 'bin/trawl.js'), 'crawl', '--data', data, '--json', trawlConfig(site, concurrency)], site, timeLimitS));
      } else if (c === 'crawlee') {
        ensureCrawlee();
        const storage = mkdtempSync(join(tmpdir(), 'crawlee-render-'));
        results.push(await timed('crawlee PlaywrightCrawler', [process.execPath, join(BENCH, 'crawlee', 'run-playwright.mjs'), '--seeds', seeds, '--concurrency', String(concurrency), '--browser', BROWSER, '--storage', storage], site, timeLimitS));
      } else {
        throw new Error(`unknown crawler ${c}`);
      }
      process.stderr.write(`${table(results.slice(-1))}\n`);
    }
    const soakTable = soakMinutes > 0 ? await soak(site, concurrency, soakOptions) : undefined;
    const crawleeDir = join(BENCH, 'crawlee', 'node_modules');
    const versions = {
      chromium,
      playwrightCore: version(join(ROOT, 'node_modules', 'playwright-core', 'package.json')),
      ...(existsSync(join(crawleeDir, '@crawlee', 'playwright')) ? { crawlee: version(join(crawleeDir, '@crawlee', 'playwright', 'package.json')), playwright: version(join(crawleeDir, 'playwright', 'package.json')) } : {}),
    };
    const header = `Render benchmark: ${pages} pages (${pagePath(1)}, … a quarter each plain, script, fetch, client-side routing), ${concurrency} pages at once, ${cpus().length} cores (shared), ${new Date().toISOString()}\n${JSON.stringify(versions)}`;
    const md = [header, '', results.length ? table(results) : '', soakTable ? `\nSoak (${soakMinutes} min, one process, cycle after cycle${soakOptions.serve ? ', a crawl object per cycle (as trawl serve)' : ''}${soakOptions.plain ? ', use_javascript off' : ''}${soakOptions.gc ? ', a full GC before each sample' : ''}${['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_'].map((v) => (process.env[v] ? `, ${v}=${process.env[v]}` : '')).join('')}):\n\n${soakTable}` : ''].join('\n');
    process.stdout.write(`${md}\n`);
    const dir = join(BENCH, 'results');
    mkdirSync(dir, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    writeFileSync(join(dir, `render-${stamp}.md`), `${md}\n`);
    writeFileSync(join(dir, `render-${stamp}.json`), `${JSON.stringify({ pages, concurrency, versions, results, soak: soakTable }, null, 2)}\n`);
    await sleep(10);
  } finally {
    await site.close();
  }
}

await main();
