/**
 * End-to-end crawl benchmark: trawl against Crawlee and wget2 on one
 * generated multi-host site served by nginx, with equal settings.
 *
 *   npm run bench:crawl -- [--hosts 50] [--pages 2000] [--crawlers trawl,crawlee,wget2] [--time-limit 900] …
 *   npm run bench:crawl -- --hosts 5 --pages 200          # the small run, well under a minute
 *   npm run bench:crawl -- --crawlers trawl@HEAD~1,trawl,trawl@HEAD~1,trawl   # trawl before and after, in pairs
 *   npm run bench:crawl -- --pg postgres://u:p@127.0.0.1:5432/postgres --crawlers trawl,trawl+pg,trawl,trawl+pg   # SQLite and PostgreSQL, in pairs
 *
 * Steps: generate the site (bench/site/generate.ts) unless the same one is
 * already there; start nginx (bench/nginx.sh); run each crawler in turn
 * under /usr/bin/time (wall, user+sys CPU, peak RSS); attribute the access
 * log lines written during each run to that crawler; print one Markdown
 * table and save it with the raw numbers to bench/results/.
 *
 * Every count of what was fetched (pages, coverage, duplicates, disallowed
 * fetches) comes from nginx's access log, never from a crawler's own report.
 * See bench/README.md for the columns and the caveats.
 */

import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_DIR, defaultSiteDir, generateSite, parseFlags, trawlConfigXml, type SiteManifest } from './site/generate.ts';

const ROOT = resolve(BENCH_DIR, '..');
const CRAWLERS = ['trawl', 'crawlee', 'wget2'] as const;
type CrawlerName = (typeof CRAWLERS)[number];
/** Extensions no crawler should fetch as pages: all in trawl's default exclude_exts, passed to the peers. */
const ASSET_EXTS = ['css', 'png', 'jpg', 'jpeg', 'gif', 'ico'];

const USAGE = `usage: npm run bench:crawl -- [options]
  --hosts N           hosts in the site (default 50)
  --pages N           pages per host (default 2000)
  --seed N            site generator seed (default 1)
  --port N            nginx port on every 127.0.1.k (default 8080)
  --crawlers LIST     comma-separated, in run order (default trawl,crawlee,wget2); trawl@REV runs trawl as
                      of git revision REV, from a checkout of its own (bench/.work/checkouts/), built there
  --concurrency N     requests in flight for every crawler (default 64)
  --max-pending N     trawl's max_pending per site (default max(8, concurrency / hosts))
  --pg URL            a PostgreSQL server trawl+pg crawls with (--store): each run gets a new database
                      on it (its user needs CREATEDB), dropped afterwards
  --time-limit S      stop a crawler after S seconds and report its partial rate (default 600)
  --site DIR          where the site is (default bench/.work/site-<hosts>x<pages>)
  --work DIR          scratch space for the crawlers' output (default bench/.work/runs)
  --results DIR       where the JSON and Markdown reports go (default bench/results)
  --regenerate        generate the site even when it is already there
  --keep-data         keep the crawlers' output directories
  --keep-server       leave nginx running afterwards
  --from-source       run trawl from its TypeScript sources instead of building dist/ first`;

interface TimeResult {
  readonly userS: number;
  readonly sysS: number;
  readonly maxRssKb: number;
  readonly exit: number | undefined;
  readonly note: string | undefined;
}

interface LogLine {
  readonly t: number;
  readonly host: string;
  readonly method: string;
  readonly uri: string;
  readonly status: number;
  readonly bytes: number;
  readonly ua: string;
}

interface LogStats {
  readonly requests: number;
  readonly byMethod: Record<string, number>;
  readonly byStatus: Record<string, number>;
  readonly distinctUrls: number;
  /** Requests beyond the first to the same host and URI (any method). */
  readonly duplicateFetches: number;
  /** Requests to paths robots.txt disallows (/private/). */
  readonly disallowedFetches: number;
  /** Distinct reachable allowed pages fetched with a 200 GET. */
  readonly pagesFetched: number;
  readonly notFound: number;
  /** 5xx answers: nginx failed, so the run does not measure the crawler. */
  readonly serverErrors: number;
  readonly assetFetches: number;
  readonly robotsFetches: number;
  readonly sitemapFetches: number;
  /** Requests for anything else (not a generated page, asset, robots.txt or sitemap, and not a 404). */
  readonly otherFetches: number;
  readonly bytesSent: number;
  readonly userAgents: string[];
  /** The most duplicated URLs, for the report. */
  readonly topDuplicates: Array<{ url: string; n: number }>;
  readonly firstMs: number | undefined;
  readonly lastMs: number | undefined;
  /**
   * Pages a second through each quarter of the pages fetched (the first
   * 25% of them, then the next, ...), timed from the run's first request:
   * how the rate changes as a crawl goes from discovering its URLs to
   * fetching the ones it already knows.
   */
  readonly quarterRates: number[];
}

interface RunResult {
  readonly crawler: CrawlerName;
  /** How the run was asked for: the crawler's name, or trawl@REV. */
  readonly label: string;
  readonly command: string[];
  readonly version: string;
  readonly wallS: number;
  readonly timedOut: boolean;
  readonly exitCode: number | null;
  readonly time: TimeResult;
  readonly log: LogStats;
  readonly pagesPerS: number;
  readonly cpuMsPerPage: number;
  readonly peakRssMiB: number;
  readonly coverage: number;
  /** What the crawler said about itself (its JSON summary), for cross-checking; not used in the table. */
  readonly ownReport: unknown;
  readonly stderrTail: string;
  /** CPU seconds by thread name (the crawler's threads, sampled from /proc while it ran); empty where /proc is not there. */
  readonly threads: ThreadCpu[];
  /** How long a fixed JavaScript loop took just before this crawler ran (see calibrate()). */
  readonly calibrationMs?: number;
  /** CPU seconds nginx (master and workers) spent while this crawler ran; NaN where /proc is not there. */
  readonly serverCpuS: number;
}

interface ThreadCpu {
  readonly name: string;
  readonly count: number;
  readonly userS: number;
  readonly sysS: number;
  /** Seconds runnable but waiting for a core (schedstat's run-queue time); NaN where the kernel does not keep it. */
  readonly waitS: number;
}

/** One thread's sample: CPU ticks from its stat file, run-queue nanoseconds from its schedstat. */
interface ThreadSample {
  readonly name: string;
  readonly user: number;
  readonly sys: number;
  readonly waitNs: number;
}

// ------------------------------------------------------------------ helpers

function sh(cmd: string, args: string[], opts: { input?: string } = {}): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input: opts.input ?? '', stdio: ['pipe', 'pipe', 'pipe'] });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

function which(cmd: string): string | undefined {
  const r = sh('sh', ['-c', `command -v ${cmd}`]);
  return r.ok && r.out ? r.out.split('\n')[0] : undefined;
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

let aptUpdated = false;
function aptInstall(pkg: string): boolean {
  if (!isRoot()) {
    console.error(`bench: ${pkg} is missing and this is not root: apt-get install -y ${pkg}`);
    return false;
  }
  console.error(`bench: installing ${pkg} from Debian…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const run = (): boolean => spawnSync('apt-get', ['install', '-y', '-q', pkg], { stdio: ['ignore', 'ignore', 'inherit'], env }).status === 0;
  if (run()) return true;
  if (!aptUpdated) {
    aptUpdated = true;
    spawnSync('apt-get', ['update', '-q'], { stdio: ['ignore', 'ignore', 'inherit'] });
    return run();
  }
  return false;
}

function ensureTool(cmd: string, pkg: string): string | undefined {
  return which(cmd) ?? (aptInstall(pkg) ? which(cmd) : undefined);
}

function ensureCrawlee(): boolean {
  const dir = join(BENCH_DIR, 'crawlee');
  if (existsSync(join(dir, 'node_modules', '@crawlee', 'cheerio', 'package.json'))) return true;
  console.error('bench: installing Crawlee into bench/crawlee/ (its own package.json; not a dependency of trawl)…');
  const lock = existsSync(join(dir, 'package-lock.json'));
  const r = spawnSync('npm', [lock ? 'ci' : 'install', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  return r.status === 0;
}

function crawleeVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(BENCH_DIR, 'crawlee', 'node_modules', '@crawlee', 'cheerio', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function parseTimeFile(path: string): TimeResult {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // /usr/bin/time was killed itself
  }
  const lines = text.trim().split('\n');
  const last = lines.at(-1) ?? '';
  try {
    const j = JSON.parse(last) as { user: number; sys: number; maxrss_kb: number; exit: number };
    return { userS: j.user, sysS: j.sys, maxRssKb: j.maxrss_kb, exit: j.exit, note: lines.length > 1 ? lines.slice(0, -1).join(' ') : undefined };
  } catch {
    return { userS: NaN, sysS: NaN, maxRssKb: NaN, exit: undefined, note: text || 'no /usr/bin/time output' };
  }
}

function readFrom(path: string, from: number): string {
  const size = statSync(path).size;
  if (size <= from) return '';
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(size - from);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, from + off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function bump(h: Record<string, number>, k: string): void {
  h[k] = (h[k] ?? 0) + 1;
}

/** Attributes what nginx logged to one crawler run. */
function analyseLog(text: string, reachable: ReadonlyMap<string, ReadonlySet<string>>): LogStats {
  const byMethod: Record<string, number> = {};
  const byStatus: Record<string, number> = {};
  const perUrl = new Map<string, number>();
  const pages = new Set<string>();
  const uas = new Set<string>();
  let requests = 0, disallowed = 0, notFound = 0, serverErrors = 0, assets = 0, robots = 0, sitemaps = 0, other = 0, bytes = 0;
  let first: number | undefined, last: number | undefined;
  /** When each page was first fetched, in log order. */
  const pageTimesMs: number[] = [];
  for (const raw of text.split('\n')) {
    if (!raw) continue;
    let l: LogLine;
    try {
      l = JSON.parse(raw) as LogLine;
    } catch {
      continue;
    }
    requests++;
    bytes += l.bytes;
    first ??= l.t * 1000;
    last = l.t * 1000;
    bump(byMethod, l.method);
    bump(byStatus, String(l.status));
    uas.add(l.ua);
    const key = `${l.host}${l.uri}`;
    perUrl.set(key, (perUrl.get(key) ?? 0) + 1);
    const path = l.uri.split(/[?#]/)[0]!;
    if (path.startsWith('/private/')) disallowed++;
    if (l.status >= 500) serverErrors++;
    if (l.status === 404) notFound++;
    else if (path.startsWith('/static/')) assets++;
    else if (path === '/robots.txt') robots++;
    else if (path === '/sitemap.xml') sitemaps++;
    else if (l.method === 'GET' && l.status === 200 && reachable.get(l.host)?.has(l.uri)) {
      if (!pages.has(key)) pageTimesMs.push(l.t * 1000);
      pages.add(key);
    }
    else if (!path.startsWith('/private/')) other++;
  }
  let dups = 0;
  const top: Array<{ url: string; n: number }> = [];
  for (const [url, n] of perUrl) {
    if (n > 1) {
      dups += n - 1;
      top.push({ url, n });
    }
  }
  top.sort((a, b) => b.n - a.n || a.url.localeCompare(b.url));
  return {
    requests, byMethod, byStatus, distinctUrls: perUrl.size, duplicateFetches: dups, disallowedFetches: disallowed, pagesFetched: pages.size,
    notFound, serverErrors, assetFetches: assets, robotsFetches: robots, sitemapFetches: sitemaps, otherFetches: other, bytesSent: bytes,
    userAgents: [...uas].slice(0, 5), topDuplicates: top.slice(0, 10), firstMs: first, lastMs: last,
    quarterRates: first === undefined ? [] : quarterRates(pageTimesMs, first),
  };
}

/** Pages a second through each quarter of `timesMs` (when each page was fetched), the first quarter timed from `startMs`. */
function quarterRates(timesMs: readonly number[], startMs: number): number[] {
  if (timesMs.length < 4) return [];
  const rates: number[] = [];
  let fromMs = startMs;
  let from = 0;
  for (let q = 1; q <= 4; q++) {
    const to = Math.round((timesMs.length * q) / 4);
    const atMs = timesMs[to - 1]!;
    rates.push(atMs > fromMs ? ((to - from) * 1000) / (atMs - fromMs) : NaN);
    fromMs = atMs;
    from = to;
  }
  return rates;
}

// ------------------------------------------------------------------ crawlers

/** package.json's version and the commit of the working tree (`+dirty` when src/ has changes), so results can be traced. */
/**
 * Compiles trawl to dist/, the form its package installs and runs (see
 * bin/trawl.js, which runs dist/ when it is newer than src/). From the
 * sources, Node loads its TypeScript stripper into each of trawl's three
 * threads: 27 MiB more peak RSS on the 50 × 2,000 crawl.
 */
/** `npm run build` in a checkout of trawl: it runs from dist/, as its package installs it. */
function buildTrawl(root = ROOT): void {
  console.error(`bench: npm run build${root === ROOT ? '' : ` in ${relative(process.cwd(), root)}`} (trawl runs from dist/, as installed)…`);
  const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`npm run build failed in ${root}`);
}

function trawlVersion(root: string): string {
  const v = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const head = spawnSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  if (head.status !== 0) return v;
  const dirty = spawnSync('git', ['-C', root, 'status', '--porcelain', '--', 'src', 'bin'], { encoding: 'utf8' }).stdout.trim() !== '';
  return `${v} (${head.stdout.trim()}${dirty ? '+dirty' : ''})`;
}

/**
 * A checkout of trawl as of `rev` (trawl@REV in --crawlers), built, for
 * measuring a change against the commit before it in the same run:
 * bench/.work/checkouts/<commit>, a git worktree sharing this checkout's
 * node_modules. Made once per commit and kept (`git worktree prune` after
 * deleting the directory forgets it).
 */
function trawlCheckout(rev: string): string {
  const commit = spawnSync('git', ['-C', ROOT, 'rev-parse', '--verify', '--short', `${rev}^{commit}`], { encoding: 'utf8' });
  if (commit.status !== 0) throw new Error(`trawl@${rev}: not a git revision of ${ROOT}`);
  const dir = join(BENCH_DIR, '.work', 'checkouts', commit.stdout.trim());
  if (!existsSync(join(dir, 'package.json'))) {
    mkdirSync(dirname(dir), { recursive: true });
    const add = spawnSync('git', ['-C', ROOT, 'worktree', 'add', '--force', '--detach', dir, commit.stdout.trim()], { encoding: 'utf8' });
    if (add.status !== 0) throw new Error(`trawl@${rev}: git worktree add failed: ${add.stderr.trim()}`);
  }
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  buildTrawl(dir);
  return dir;
}

interface Plan {
  readonly command: string[];
  readonly version: string;
  /** Set in the crawler's environment, besides ours. */
  readonly env?: Record<string, string>;
  /** Reads the crawler's own summary from its stdout. */
  readonly own: (stdout: string) => unknown;
}

function plan(name: CrawlerName, site: string, data: string, concurrency: number, fromSource: boolean, root = ROOT): Plan | undefined {
  const node = process.execPath;
  switch (name) {
    case 'trawl':
      return {
        command: [node, join(root, 'bin', 'trawl.js'), 'crawl', '--data', data, '--allow-private-networks', '--allow-loopback', '--json', '--max-concurrency', String(concurrency), join(site, 'config.xml')],
        version: `${trawlVersion(root)}${fromSource ? ' from source' : ''}`,
        env: { TRAWL_RUN: fromSource ? 'source' : 'dist' },
        own: (out) => {
          try {
            return JSON.parse(out) as unknown;
          } catch {
            return out.slice(-2000);
          }
        },
      };
    case 'crawlee': {
      if (!ensureCrawlee()) return undefined;
      return {
        command: [node, join(BENCH_DIR, 'crawlee', 'run.mjs'), '--seeds', join(site, 'seeds.txt'), '--concurrency', String(concurrency), '--exclude-exts', ASSET_EXTS.join(','), '--storage', data],
        version: crawleeVersion(),
        own: (out) => {
          const line = out.trim().split('\n').at(-1) ?? '';
          try {
            return JSON.parse(line) as unknown;
          } catch {
            return out.slice(-2000);
          }
        },
      };
    }
    case 'wget2': {
      const wget2 = ensureTool('wget2', 'wget2');
      if (!wget2) return undefined;
      const v = sh(wget2, ['--version']).out.split('\n')[0] ?? '';
      return {
        command: [
          wget2, '--recursive', '--level=0', '--robots=on', '--wait=0', `--max-threads=${concurrency}`,
          '--filter-urls', `--reject=${ASSET_EXTS.join(',')}`, '--quiet', `--directory-prefix=${data}`, `--input-file=${join(site, 'seeds.txt')}`,
        ],
        version: /\d+\.\d+(?:\.\d+)?/.exec(v)?.[0] ?? v,
        own: () => undefined,
      };
    }
  }
}


/**
 * The speed of the machine right now: milliseconds a fixed single-threaded
 * JavaScript loop takes in a fresh Node, the best of three. The machines
 * these benchmarks run on are shared and their speed drifts, by up to 2×
 * within an hour; the report prints this next to each crawler so that a
 * run whose crawlers met different machines can be told apart.
 */
function calibrate(): number {
  const loop = 'const t=performance.now();let x=0;for(let i=0;i<2e8;i++)x=(x+i*7)%1000003;process.stdout.write(String(performance.now()-t)+" "+x)';
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const r = spawnSync(process.execPath, ['-e', loop], { encoding: 'utf8' });
    const ms = Number(r.stdout.split(' ')[0]);
    if (r.status === 0 && Number.isFinite(ms)) best = Math.min(best, ms);
  }
  return best;
}

// ------------------------------------------------------------------ CPU by thread

/** Clock ticks per second of /proc's utime and stime (USER_HZ; 100 on Linux unless getconf says otherwise). */
let clockTicks: number | undefined;
function ticksPerSecond(): number {
  clockTicks ??= Number(sh('getconf', ['CLK_TCK']).out) || 100;
  return clockTicks;
}

/**
 * Nanoseconds a thread spent runnable on a run queue, waiting for a core:
 * the second field of /proc/PID/task/TID/schedstat (NaN without
 * CONFIG_SCHED_INFO). Beside the CPU it says whether a thread was short of
 * work or of cores (bench/README.md, *Where the time goes*).
 */
function runQueueNs(schedstatPath: string): number {
  try {
    return Number(readFileSync(schedstatPath, 'utf8').split(' ')[1]);
  } catch {
    return Number.NaN;
  }
}

/** User and system CPU clock ticks from a /proc stat file (a process's or a thread's). */
function cpuTicks(statPath: string): { user: number; sys: number } {
  const stat = readFileSync(statPath, 'utf8');
  // Fields after the parenthesised name: state is 3rd, utime the 14th and stime the 15th of the whole line.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]), sys: Number(f[12]) };
}

/**
 * The crawler's threads and their CPU so far, read from /proc: the process
 * that /usr/bin/time started (its only child), every task of it, by thread
 * id. Node names its threads (MainThread, WorkerThread for worker_threads,
 * V8Worker for the garbage collector's and compiler's helpers,
 * libuv-worker for the file system pool), so the report can say which part
 * of a crawler the CPU went to without a profiler and its overhead.
 */
function readThreads(timePid: number, into: Map<number, ThreadSample>): void {
  let pid: number;
  try {
    pid = Number(readFileSync(`/proc/${timePid}/task/${timePid}/children`, 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return;
  }
  if (!pid) return;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return;
  }
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const cpu = cpuTicks(`/proc/${pid}/task/${tid}/stat`);
      // A thread that ends between the two reads keeps its last run-queue figure.
      const waitNs = runQueueNs(`/proc/${pid}/task/${tid}/schedstat`);
      into.set(Number(tid), { name, ...cpu, waitNs: Number.isNaN(waitNs) ? (into.get(Number(tid))?.waitNs ?? waitNs) : waitNs });
    } catch {
      // the thread ended between readdir and read: its last sample stands
    }
  }
}

/** Threads of one name added up, most CPU first; worker threads keep their thread ids apart (storage, extract, …). */
function threadTable(samples: ReadonlyMap<number, ThreadSample>): ThreadCpu[] {
  const hz = ticksPerSecond();
  const by = new Map<string, { count: number; user: number; sys: number; waitNs: number }>();
  const workers = [...samples].filter(([, t]) => t.name === 'WorkerThread').map(([tid]) => tid).sort((a, b) => a - b);
  for (const [tid, t] of samples) {
    const name = t.name === 'WorkerThread' ? `WorkerThread #${workers.indexOf(tid) + 1}` : t.name;
    const b = by.get(name) ?? { count: 0, user: 0, sys: 0, waitNs: 0 };
    by.set(name, { count: b.count + 1, user: b.user + t.user, sys: b.sys + t.sys, waitNs: b.waitNs + t.waitNs });
  }
  return [...by].map(([name, b]) => ({ name, count: b.count, userS: b.user / hz, sysS: b.sys / hz, waitS: b.waitNs / 1e9 }))
    .sort((a, b) => b.userS + b.sysS - (a.userS + a.sysS));
}

/**
 * CPU seconds (user + system) nginx's processes have used so far: the
 * master named by its pid file and its workers. The difference across a run
 * is what serving that crawler cost, which shares the machine's cores with it.
 */
function serverCpuS(pidFile: string): number {
  try {
    const master = readFileSync(pidFile, 'utf8').trim();
    const children = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    let ticks = 0;
    for (const pid of [master, ...children]) {
      const t = cpuTicks(`/proc/${pid}/stat`);
      ticks += t.user + t.sys;
    }
    return ticks / ticksPerSecond();
  } catch {
    return NaN;
  }
}

async function runOne(name: CrawlerName, label: string, p: Plan, o: { data: string; work: string; accessLog: string; timeLimitS: number; reachable: ReadonlyMap<string, ReadonlySet<string>>; reachableTotal: number }): Promise<RunResult> {
  rmSync(o.data, { recursive: true, force: true });
  mkdirSync(o.data, { recursive: true });
  const timeFile = join(o.work, `${label}.time`);
  const outFile = join(o.work, `${label}.stdout`);
  const errFile = join(o.work, `${label}.stderr`);
  rmSync(timeFile, { force: true });
  const logFrom = statSync(o.accessLog).size;
  const serverPidFile = join(dirname(o.accessLog), 'nginx.pid');
  const server0 = serverCpuS(serverPidFile);
  const out = openSync(outFile, 'w');
  const err = openSync(errFile, 'w');
  console.error(`bench: ${label}: ${Object.entries(p.env ?? {}).map(([k, v]) => `${k}=${v} `).join('')}${p.command.map((a) => (a.startsWith(ROOT) ? relative(process.cwd(), a) || '.' : a)).join(' ')}`);
  const t0 = performance.now();
  // /usr/bin/time ignores SIGINT while it waits, so a SIGINT to the group stops only the crawler.
  const child = spawn('/usr/bin/time', ['-f', '{"user":%U,"sys":%S,"maxrss_kb":%M,"exit":%x}', '-o', timeFile, '--', ...p.command], {
    cwd: o.data, detached: true, stdio: ['ignore', out, err], env: { ...process.env, ...p.env },
  });
  let timedOut = false;
  let stopAt = 0;
  const threadSamples = new Map<number, ThreadSample>();
  const sampler = setInterval(() => readThreads(child.pid!, threadSamples), 500);
  const timers: NodeJS.Timeout[] = [sampler];
  timers.push(setTimeout(() => {
    timedOut = true;
    stopAt = performance.now();
    console.error(`bench: ${label}: time limit of ${o.timeLimitS} s reached; stopping it`);
    try {
      process.kill(-child.pid!, 'SIGINT');
    } catch {
      // already gone
    }
    // Still running: SIGTERM, then SIGKILL, to the crawler itself (not /usr/bin/time, which must report).
    const signal = (sig: NodeJS.Signals): void => {
      try {
        for (const c of readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) process.kill(Number(c), sig);
      } catch {
        // already gone
      }
    };
    timers.push(setTimeout(() => signal('SIGTERM'), 10_000), setTimeout(() => signal('SIGKILL'), 20_000));
  }, o.timeLimitS * 1000));
  const exitCode = await new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  const t1 = performance.now();
  for (const t of timers) clearTimeout(t);
  clearInterval(sampler);
  closeSync(out);
  closeSync(err);
  await sleep(300); // nginx writes a request's log line as it finishes it
  const serverCpu = serverCpuS(serverPidFile) - server0;
  const log = analyseLog(readFrom(o.accessLog, logFrom), o.reachable);
  const time = parseTimeFile(timeFile);
  // A crawler stopped at the time limit is rated over the limit, not over its shutdown.
  const wallS = ((timedOut ? stopAt : t1) - t0) / 1000;
  const cpuS = time.userS + time.sysS;
  const stderr = readFileSync(errFile, 'utf8');
  return {
    crawler: name, label, command: p.command, version: p.version, wallS, timedOut, exitCode, time, log,
    pagesPerS: log.pagesFetched / wallS,
    cpuMsPerPage: log.pagesFetched > 0 ? (cpuS * 1000) / log.pagesFetched : NaN,
    peakRssMiB: time.maxRssKb / 1024,
    coverage: log.pagesFetched / o.reachableTotal,
    ownReport: p.own(readFileSync(outFile, 'utf8')),
    stderrTail: stderr.slice(-2000),
    threads: threadTable(threadSamples),
    serverCpuS: serverCpu,
  };
}

// ------------------------------------------------------------------ report

const f0 = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '–');
const f2 = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '–');
const f3 = (n: number): string => (Number.isFinite(n) ? n.toFixed(3) : '–');
const pct = (n: number): string => (Number.isFinite(n) ? `${(n * 100).toFixed(1)}%` : '–');

/** wget2 exits 8 when the server answered any request with an error: the site's 404s. */
function expectedExit(r: RunResult): boolean {
  return r.exitCode === 0 || (r.crawler === 'wget2' && r.exitCode === 8);
}

/** A run as the report's smaller tables name it: trawl with its version, a peer by name. */
const runName = (r: RunResult): string => (r.crawler === 'trawl' ? `trawl ${r.version}` : r.crawler);

function markdown(m: SiteManifest, reachableTotal: number, runs: readonly RunResult[], params: Record<string, unknown>): string {
  const lines: string[] = [];
  lines.push(`### Crawl benchmark: ${m.hosts} hosts × ${m.pages} pages (${f0(reachableTotal)} reachable allowed pages, ${f1(m.bytes / 1048576)} MiB)`);
  lines.push('');
  lines.push(`concurrency ${String(params.concurrency)}, trawl max_pending ${String(params.maxPending)}, delay 0, robots.txt obeyed, time limit ${String(params.timeLimitS)} s; ${String(params.machine)}`);
  lines.push('');
  lines.push('| crawler | pages | coverage | wall s | pages/s | CPU ms/page | cores used | nginx CPU ms/page | peak RSS MiB | requests | duplicate fetches | disallowed fetches | 404s | asset fetches |');
  lines.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of runs) {
    const notes = [
      ...(r.timedOut ? ['time limit: partial'] : !expectedExit(r) ? [`exit ${String(r.exitCode)}`] : []),
      ...(r.log.serverErrors > 0 ? [`INVALID: nginx answered ${r.log.serverErrors} requests with 5xx`] : []),
    ];
    const name = `${r.crawler} ${r.version}${notes.length ? ` (${notes.join('; ')})` : ''}`;
    lines.push(`| ${name} | ${f0(r.log.pagesFetched)} | ${pct(r.coverage)} | ${f1(r.wallS)} | ${f0(r.pagesPerS)} | ${f2(r.cpuMsPerPage)} | ${f2((r.time.userS + r.time.sysS) / r.wallS)} | ${f3(r.log.pagesFetched > 0 ? (r.serverCpuS * 1000) / r.log.pagesFetched : NaN)} | ${f0(r.peakRssMiB)} | ${f0(r.log.requests)} | ${f0(r.log.duplicateFetches)} | ${f0(r.log.disallowedFetches)} | ${f0(r.log.notFound)} | ${f0(r.log.assetFetches)} |`);
  }
  const trawl = runs.find((r) => r.label === 'trawl') ?? runs.find((r) => r.crawler === 'trawl');
  const peers = runs.filter((r) => r.crawler !== 'trawl');
  // Several runs of trawl (trawl@REV beside trawl): the mean of each version, runs in the order they ran.
  const versions = [...new Set(runs.filter((r) => r.crawler === 'trawl').map((r) => r.version))];
  if (runs.filter((r) => r.crawler === 'trawl').length > versions.length) {
    lines.push('');
    lines.push('| trawl version | runs | mean pages/s | mean CPU ms/page | CPU ms/page of each run | mean wall s | peak RSS MiB |');
    lines.push('|---|--:|--:|--:|---|--:|--:|');
    for (const v of versions) {
      const rs = runs.filter((r) => r.crawler === 'trawl' && r.version === v);
      const mean = (pick: (r: RunResult) => number): number => rs.reduce((a, r) => a + pick(r), 0) / rs.length;
      lines.push(`| ${v} | ${rs.length} | ${f0(mean((r) => r.pagesPerS))} | ${f3(mean((r) => r.cpuMsPerPage))} | ${rs.map((r) => f3(r.cpuMsPerPage)).join(' / ')} | ${f1(mean((r) => r.wallS))} | ${rs.map((r) => f0(r.peakRssMiB)).join(' / ')} |`);
    }
  }
  if (trawl && peers.length) {
    lines.push('');
    lines.push('| trawl ÷ peer | pages/s (>1: trawl faster) | CPU ms/page (<1: trawl cheaper) | peak RSS (<1: trawl smaller) |');
    lines.push('|---|--:|--:|--:|');
    for (const p of peers) lines.push(`| ÷ ${p.crawler} | ${f2(trawl.pagesPerS / p.pagesPerS)} | ${f2(trawl.cpuMsPerPage / p.cpuMsPerPage)} | ${f2(trawl.peakRssMiB / p.peakRssMiB)} |`);
  }
  const ramped = runs.filter((r) => r.log.quarterRates.length === 4);
  if (ramped.length > 0) {
    lines.push('');
    lines.push('Pages a second through each quarter of the pages fetched (from the access log; the first quarter timed from the run\'s first request):');
    lines.push('');
    lines.push('| crawler | 1st quarter | 2nd | 3rd | 4th |');
    lines.push('|---|--:|--:|--:|--:|');
    for (const r of ramped) lines.push(`| ${runName(r)} | ${r.log.quarterRates.map((x) => f0(x)).join(' | ')} |`);
  }
  const calibrated = runs.filter((r) => r.calibrationMs !== undefined && Number.isFinite(r.calibrationMs));
  if (calibrated.length > 0) {
    lines.push('');
    lines.push(`Machine speed just before each crawler ran (a fixed JavaScript loop, best of three; lower is faster): ${calibrated.map((r) => `${r.label} ${f0(r.calibrationMs!)} ms`).join(', ')}.`);
  }
  for (const r of runs) {
    if (r.threads.length === 0 || !(r.log.pagesFetched > 0)) continue;
    const per = (s: number): string => f2((s * 1000) / r.log.pagesFetched);
    lines.push('');
    lines.push(`CPU by thread, ${runName(r)} (sampled from /proc every 0.5 s; ms per page; *waiting*: runnable but without a core, and its share of the wall time):`);
    lines.push('');
    lines.push('| thread | count | user | sys | total | waiting | waiting, % of wall |');
    lines.push('|---|--:|--:|--:|--:|--:|--:|');
    for (const t of r.threads) {
      if (t.userS + t.sysS < 0.05) continue;
      const wait = Number.isFinite(t.waitS) ? [per(t.waitS), `${f0((100 * t.waitS) / t.count / r.wallS)}%`] : ['–', '–'];
      lines.push(`| ${t.name} | ${t.count} | ${per(t.userS)} | ${per(t.sysS)} | ${per(t.userS + t.sysS)} | ${wait[0]} | ${wait[1]} |`);
    }
  }
  return lines.join('\n');
}

/**
 * trawl+pg's database: `create` makes a new one on the server `url` names
 * and returns its URL; `drop` drops the one `url` names.
 */
async function pgDatabase(url: string, op: 'create' | 'drop'): Promise<string> {
  const { default: pg } = await import('pg');
  const u = new URL(url);
  const name = op === 'create' ? `trawl_bench_${Date.now().toString(36)}` : u.pathname.slice(1);
  u.pathname = op === 'create' ? `/${name}` : '/postgres';
  const c = new pg.Client({ connectionString: op === 'create' ? url : u.href });
  await c.connect();
  try {
    await c.query(op === 'create' ? `CREATE DATABASE ${name}` : `DROP DATABASE IF EXISTS ${name}`);
  } finally {
    await c.end();
  }
  return op === 'create' ? u.href : url;
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const f = parseFlags(process.argv.slice(2), {
    hosts: 'string', pages: 'string', seed: 'string', port: 'string', crawlers: 'string', concurrency: 'string', 'max-pending': 'string',
    'time-limit': 'string', site: 'string', work: 'string', results: 'string', regenerate: 'boolean', 'keep-data': 'boolean', 'keep-server': 'boolean',
    'from-source': 'boolean', pg: 'string',
  });
  if (f.help) {
    console.log(USAGE);
    return;
  }
  const int = (k: string, d: number): number => {
    const v = f[k] === undefined ? d : Number(f[k]);
    if (!Number.isInteger(v) || v < 1) throw new Error(`--${k} must be a whole number of at least 1`);
    return v;
  };
  const hosts = int('hosts', 50);
  const pages = int('pages', 2000);
  const seed = int('seed', 1);
  const port = int('port', 8080);
  const concurrency = int('concurrency', 64);
  // max_pending high enough that the per-site cap never binds before the concurrency does.
  const maxPending = int('max-pending', Math.max(8, Math.ceil(concurrency / hosts)));
  const timeLimitS = int('time-limit', 600);
  const crawlers = (typeof f.crawlers === 'string' ? f.crawlers : CRAWLERS.join(',')).split(',').map((c) => c.trim());
  const crawlerOf = (label: string): CrawlerName => (label.startsWith('trawl@') || label === 'trawl+pg' ? 'trawl' : (label as CrawlerName));
  for (const c of crawlers) {
    if (!CRAWLERS.includes(crawlerOf(c)) || c === 'trawl@') throw new Error(`unknown crawler ${c}; known: ${CRAWLERS.join(', ')}, trawl@REV, trawl+pg`);
  }
  const pgServer = typeof f.pg === 'string' ? f.pg : undefined;
  if (crawlers.includes('trawl+pg') && pgServer === undefined) throw new Error('trawl+pg needs --pg URL (a PostgreSQL server to create its databases on)');
  const site = resolve(typeof f.site === 'string' ? f.site : defaultSiteDir(hosts, pages));
  const work = resolve(typeof f.work === 'string' ? f.work : join(BENCH_DIR, '.work', 'runs'));
  const resultsDir = resolve(typeof f.results === 'string' ? f.results : join(BENCH_DIR, 'results'));

  const fromSource = f['from-source'] === true;
  if ((crawlers.includes('trawl') || crawlers.includes('trawl+pg')) && !fromSource) buildTrawl();
  // Each trawl@REV is checked out and built once, before anything runs.
  const checkouts = new Map<string, string>();
  for (const c of crawlers) if (c.startsWith('trawl@') && !checkouts.has(c)) checkouts.set(c, trawlCheckout(c.slice('trawl@'.length)));
  if (fromSource && checkouts.size > 0) throw new Error('--from-source applies to this checkout only; trawl@REV runs built');
  if (!which('/usr/bin/time') && !aptInstall('time')) throw new Error('/usr/bin/time (Debian package "time") is needed to measure CPU and peak RSS');

  // The site: reuse it when it was generated with the same parameters.
  let manifest: SiteManifest | undefined;
  const mPath = join(site, 'manifest.json');
  if (!f.regenerate && existsSync(mPath)) {
    const m = JSON.parse(readFileSync(mPath, 'utf8')) as SiteManifest;
    if (m.generator === 1 && m.hosts === hosts && m.pages === pages && m.seed === seed && m.port === port) manifest = m;
  }
  if (!manifest) {
    if (existsSync(join(site, 'nginx', 'nginx.pid'))) spawnSync('bash', [join(BENCH_DIR, 'nginx.sh'), 'stop', site], { stdio: 'inherit' });
    console.error(`bench: generating ${hosts} hosts × ${pages} pages into ${site}…`);
    const t = performance.now();
    manifest = generateSite({ hosts, pages, seed, port, out: site, maxPending });
    console.error(`bench: generated ${manifest.files} files, ${f1(manifest.bytes / 1048576)} MiB in ${f1((performance.now() - t) / 1000)} s`);
  }
  // trawl's collection carries this run's max_pending.
  writeFileSync(join(site, 'config.xml'), trawlConfigXml(manifest.seeds, manifest.perHost.map((h) => h.host), maxPending));
  const reachable = new Map(manifest.perHost.map((h) => [h.host, new Set(h.reachable)] as const));
  const reachableTotal = manifest.perHost.reduce((n, h) => n + h.reachable.length, 0);

  // Warm the page cache so that the first crawler does not pay for disk reads the others do not.
  const warm = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) warm(join(dir, e.name));
      else readFileSync(join(dir, e.name));
    }
  };
  warm(join(site, 'hosts'));

  const nginx = join(BENCH_DIR, 'nginx.sh');
  if (spawnSync('bash', [nginx, 'start', site], { stdio: 'inherit', env: { ...process.env, PORT: String(port) } }).status !== 0) throw new Error('nginx did not start');
  const stopServer = (): void => {
    if (!f['keep-server']) spawnSync('bash', [nginx, 'stop', site], { stdio: 'inherit' });
  };
  const onSignal = (): void => {
    stopServer();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const runs: RunResult[] = [];
  try {
    mkdirSync(work, { recursive: true });
    const accessLog = join(site, 'nginx', 'access.log');
    for (const label of crawlers) {
      const name = crawlerOf(label);
      const data = join(work, `${label}-data`);
      let p = plan(name, site, data, concurrency, fromSource, checkouts.get(label));
      // trawl+pg: this checkout's trawl with its crawl store in a new database on the --pg server.
      const pgDb = label === 'trawl+pg' && p ? await pgDatabase(pgServer as string, 'create') : undefined;
      if (p && pgDb) p = { ...p, version: `${p.version} +postgres`, command: [...p.command.slice(0, -1), '--store', pgDb, p.command.at(-1) as string] };
      if (!p) {
        console.error(`bench: ${label}: not available; skipped`);
        continue;
      }
      const calibrationMs = calibrate();
      const r = { ...(await runOne(name, label, p, { data, work, accessLog, timeLimitS, reachable, reachableTotal })), calibrationMs };
      runs.push(r);
      console.error(`bench: ${label}: ${r.log.pagesFetched} pages in ${f1(r.wallS)} s (${f0(r.pagesPerS)}/s), ${f2(r.cpuMsPerPage)} CPU ms/page, ${f0(r.peakRssMiB)} MiB peak, exit ${String(r.exitCode)}${r.timedOut ? ', stopped at the time limit' : ''}`);
      if (!expectedExit(r) && !r.timedOut && r.stderrTail) console.error(r.stderrTail);
      if (r.log.serverErrors > 0) console.error(`bench: ${label}: WARNING: nginx answered ${r.log.serverErrors} requests with 5xx; see ${join(site, 'nginx', 'error.log')}`);
      if (!f['keep-data']) rmSync(data, { recursive: true, force: true });
      if (pgDb && !f['keep-data']) await pgDatabase(pgDb, 'drop');
    }
  } finally {
    stopServer();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ${f0(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${sh('/usr/sbin/nginx', ['-v']).out.replace('nginx version: ', '') || 'nginx'}`;
  const params = { hosts, pages, seed, port, concurrency, maxPending, timeLimitS, crawlers, assetExts: ASSET_EXTS, machine };
  const md = markdown(manifest, reachableTotal, runs, params);
  console.log(md);
  mkdirSync(resultsDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:]/g, '-').replace(/\..*/, 'Z');
  const base = join(resultsDir, `crawl-${hosts}x${pages}-${stamp}`);
  const report = {
    date: new Date().toISOString(), params,
    site: { hosts: manifest.hosts, pages: manifest.pages, seed: manifest.seed, files: manifest.files, bytes: manifest.bytes, links: manifest.links, reachableAllowedPages: reachableTotal },
    runs,
  };
  writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${base}.md`, `${md}\n`);
  console.error(`\nbench: saved ${relative(process.cwd(), base)}.json and .md`);
}

await main();
