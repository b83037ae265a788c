/**
 * The freshness benchmark: the same site, whose pages change on a schedule
 * this process knows (site.ts), crawled at the same fetch budget by
 * refresh_mode scratch and by refresh_mode adaptive, each by a real
 * `trawl crawl --cycles N` for the same time. Sampled twice a second:
 *
 *   freshness F(t) = share of pages whose stored copy is the live page
 *   age       A(t) = mean over pages of 0 when fresh, else t − the first change after
 *                    the copy was fetched (Cho and Garcia-Molina, "Synchronizing a
 *                    database to improve freshness", SIGMOD 2000)
 *
 * The stored copy of a page is the version the server last answered a fetch
 * with (a 200, or a 304 that confirms the copy), from the server's own log.
 *
 *   npm run bench:freshness [-- --seconds 240 --warmup 60 --modes scratch,adaptive]
 *   npm run bench:freshness -- --modes scratch,adaptive,adaptive@/path/to/other/checkout
 *     (MODE@DIR: that mode crawled by DIR/bin/trawl.js, another version of trawl, in the same run)
 *
 * Time is compressed: "hot" pages change every 10 s, "warm" every 60 s, the
 * rest every 30 min (not within a run); the budget is one request a site
 * every 0.25 s (delay), so a scratch cycle over the 120 pages takes ~31 s.
 * Adaptive gets no more: refresh 0.6 min in 6 minor cycles of 21 fetches
 * (coverage_min 21, refresh_quota 90 by default), 3.5 a second, against the
 * 4 a second the delay allows scratch (the report gives both rates).
 */

import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startFreshnessSite, type FreshnessSite, type Group } from './site.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const WORK = join(ROOT, 'bench', '.work', 'freshness');
const RESULTS = join(ROOT, 'bench', 'results');

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '240' }, warmup: { type: 'string', default: '60' }, modes: { type: 'string', default: 'scratch,adaptive' } } });
const seconds = Number(values.seconds);
const warmup = Number(values.warmup);
type Mode = 'scratch' | 'adaptive' | 'adaptive-sitemap-1';
/** A mode, and the checkout whose bin/trawl.js crawls it (MODE@DIR; this one without @). */
const modes = values.modes.split(',').map((m) => {
  const at = m.indexOf('@');
  const mode = (at < 0 ? m : m.slice(0, at)) as Mode;
  if (!['scratch', 'adaptive', 'adaptive-sitemap-1'].includes(mode)) throw new Error(`unknown mode ${mode}`);
  return { mode, label: m, root: at < 0 ? ROOT : m.slice(at + 1) };
});
if (!(seconds > warmup && warmup >= 0)) throw new Error('--seconds must be more than --warmup');

const SITE = { ip: '127.0.33.200', pages: 120, hot: 6, warm: 14, hotS: 10, warmS: 60, coldS: 1800 } as const;
const DELAY_S = 0.25;
const ADAPTIVE = { refreshMin: 0.6, refreshCount: 6, coverageMin: 21 } as const;

function configXml(mode: Mode, start: string): string {
  // adaptive-sitemap-1: the same with weights.sitemap 1 instead of 10, so that the change history leads.
  const weights = mode === 'adaptive-sitemap-1' ? '<section name="weights"><attrib name="sitemap" type="real">1</attrib></section>' : '';
  const adaptive = mode !== 'scratch'
    ? `<attrib name="refresh" type="real">${ADAPTIVE.refreshMin}</attrib>
  <section name="adaptive"><attrib name="refresh_count" type="integer">${ADAPTIVE.refreshCount}</attrib><attrib name="coverage_min" type="integer">${ADAPTIVE.coverageMin}</attrib>
    <attrib name="coverage_max_pct" type="integer">0</attrib></section>${weights}`
    // Scratch: cycles one after the other, each to its end (trawl crawl --cycles starts the next at once).
    : '<attrib name="refresh" type="real">60</attrib>';
  return `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="fresh">
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
  <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
  <attrib name="delay" type="real">${DELAY_S}</attrib>
  <attrib name="max_pending" type="integer">1</attrib>
  <attrib name="use_sitemaps" type="boolean">yes</attrib>
  <attrib name="refresh_mode" type="string">${mode === 'scratch' ? 'scratch' : 'adaptive'}</attrib>
  ${adaptive}
  <section name="log"><attrib name="fetch" type="string">none</attrib></section>
</DomainSpecification></CrawlerConfig>
`;
}

interface Sample {
  readonly t: number;
  readonly fresh: Record<Group | 'all', number>;
  /** Mean age (s) over all pages, and over each group's pages. */
  readonly ageS: Record<Group | 'all', number>;
}

/** Freshness and age of every page at `now`, from what the server answered. */
function sample(site: FreshnessSite, copies: Map<number, number>, now: number): Sample {
  const fresh = { hot: 0, warm: 0, cold: 0, all: 0 };
  const sizes = { hot: 0, warm: 0, cold: 0, all: site.groups.length };
  const age = { hot: 0, warm: 0, cold: 0, all: 0 };
  site.groups.forEach((g, i) => {
    sizes[g]++;
    const live = site.version(i, now);
    const copy = copies.get(i);
    if (copy === live) {
      fresh[g]++;
      fresh.all++;
    } else {
      // Never fetched: as old as the run; else since the first change after the copy.
      const a = copy === undefined ? now - site.t0 : now - site.versionStart(i, copy + 1);
      age[g] += a;
      age.all += a;
    }
  });
  return {
    t: (now - site.t0) / 1000,
    fresh: { hot: fresh.hot / sizes.hot, warm: fresh.warm / sizes.warm, cold: fresh.cold / sizes.cold, all: fresh.all / sizes.all },
    ageS: { hot: age.hot / sizes.hot / 1000, warm: age.warm / sizes.warm / 1000, cold: age.cold / sizes.cold / 1000, all: age.all / sizes.all / 1000 },
  };
}

interface ModeResult {
  readonly mode: string;
  readonly pageFetches: number;
  /** Page fetches in the window by group. */
  readonly byGroup: Record<Group, number>;
  readonly requests: number;
  readonly fetchesPerHour: number;
  readonly freshness: Record<Group | 'all', number>;
  readonly ageS: Record<Group | 'all', number>;
  readonly exit: number | null;
}

async function runMode(mode: Mode, label: string, root: string): Promise<ModeResult> {
  const dir = join(WORK, label.replace(/[^\w.-]+/g, '_'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const site = await startFreshnessSite(SITE);
  const file = join(dir, 'fresh.xml');
  writeFileSync(file, configXml(mode, `${site.origin}/`));
  const child = spawn(process.execPath, [join(root, 'bin', 'trawl.js'), 'crawl', '--data', join(dir, 'data'), '--cycles', '100000', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const copies = new Map<number, number>();
  let read = 0;
  const samples: Sample[] = [];
  const start = site.t0;
  const endMs = start + seconds * 1000;
  let windowFetches = 0;
  const byGroup: Record<Group, number> = { hot: 0, warm: 0, cold: 0 };
  while (Date.now() < endMs) {
    await new Promise((r) => setTimeout(r, 500));
    const now = Date.now();
    for (; read < site.served.length; read++) {
      const s = site.served[read]!;
      copies.set(s.page, s.version);
      if (s.ms >= start + warmup * 1000) {
        windowFetches++;
        byGroup[site.groups[s.page]!]++;
      }
    }
    if (now >= start + warmup * 1000) samples.push(sample(site, copies, now));
  }
  child.kill('SIGINT');
  const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const exit = await exited;
  clearTimeout(kill);
  await site.close();
  if (exit !== 0) process.stderr.write(`bench: freshness: trawl crawl (${mode}) exited ${exit}: ${err.slice(-2000)}\n`);
  const mean = (f: (s: Sample) => number): number => samples.reduce((a, s) => a + f(s), 0) / Math.max(1, samples.length);
  return {
    mode: label, pageFetches: windowFetches, byGroup, requests: site.requests,
    fetchesPerHour: Math.round((windowFetches / (seconds - warmup)) * 3600),
    freshness: { hot: mean((s) => s.fresh.hot), warm: mean((s) => s.fresh.warm), cold: mean((s) => s.fresh.cold), all: mean((s) => s.fresh.all) },
    ageS: { hot: mean((s) => s.ageS.hot), warm: mean((s) => s.ageS.warm), cold: mean((s) => s.ageS.cold), all: mean((s) => s.ageS.all) },
    exit,
  };
}

const results: ModeResult[] = [];
for (const { mode, label, root } of modes) {
  process.stderr.write(`bench: freshness: ${label} for ${seconds} s…\n`);
  results.push(await runMode(mode, label, root));
}

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
const lines = [
  `# Freshness: scratch against adaptive (${new Date().toISOString()})`,
  '',
  `${SITE.pages} pages: ${SITE.hot} change every ${SITE.hotS} s, ${SITE.warm} every ${SITE.warmS} s, the rest every ${SITE.coldS} s; even pages send Last-Modified; two in three have a sitemap changefreq.`,
  `Each mode crawled for ${seconds} s by \`trawl crawl --cycles\` (delay ${DELAY_S} s, max_pending 1); sampled every 0.5 s from ${warmup} s on.`,
  '',
  '| mode | page fetches (window): hot / warm / cold | fetches / hour | freshness | hot | warm | cold | mean age | hot | warm | cold |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...results.map((r) => `| ${r.mode} | ${r.pageFetches}: ${r.byGroup.hot} / ${r.byGroup.warm} / ${r.byGroup.cold} | ${r.fetchesPerHour} | ${pct(r.freshness.all)} | ${pct(r.freshness.hot)} | ${pct(r.freshness.warm)} | ${pct(r.freshness.cold)} | ${r.ageS.all.toFixed(2)} s | ${r.ageS.hot.toFixed(2)} s | ${r.ageS.warm.toFixed(2)} s | ${r.ageS.cold.toFixed(2)} s |`),
  '',
  'Mean age per group: over that group\'s pages (the overall mean weighs each group by its number of pages).',
  '',
];
const report = lines.join('\n');
process.stdout.write(report);
mkdirSync(RESULTS, { recursive: true });
const stamp = new Date().toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
writeFileSync(join(RESULTS, `freshness-${stamp}.md`), report);
writeFileSync(join(RESULTS, `freshness-${stamp}.json`), `${JSON.stringify({ site: SITE, delayS: DELAY_S, adaptive: ADAPTIVE, seconds, warmup, results }, null, 2)}\n`);
