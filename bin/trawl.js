#!/usr/bin/env node
// Entry point for `npx trawl`. A published package, which ships only dist/,
// runs the compiled JavaScript. In a checkout the TypeScript sources run
// directly (Node 24 type stripping), unless `npm run build` has compiled
// dist/ since the last change to src/: then dist/ runs. Type stripping
// loads Node's TypeScript stripper (a WebAssembly module) into every thread
// that loads a .ts file, three in a crawl: 27 MiB more peak RSS on the
// bench crawl (bench/README.md). TRAWL_RUN=source or TRAWL_RUN=dist picks
// one regardless.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const source = new URL('../src/cli/main.ts', import.meta.url);
const compiled = new URL('../dist/cli/main.js', import.meta.url);
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `trawl needs Node.js 24 or later (this is ${process.version}). ` +
      'Run it through `npx trawl` or `npm run trawl`, which use the pinned Node from devDependencies.\n',
  );
  process.exit(1);
}
// A crawler allocates many short-lived objects (pages, links) at a steady
// rate, and V8's default young generation (semi-spaces of up to 64 MiB, in
// each thread) then sits at its largest. With 4 MiB semi-spaces a
// 20,000-page crawl peaked at 344 MiB instead of 436 MiB (bench/README.md).
// 8 MiB costs 20-25 MiB more than 4 at the peak of the 100,000-page bench
// crawl and about a tenth less CPU: a page lives about 90 ms from its fetch
// to its commit, and at 4 MiB a scavenge came every 30 ms, so most of what
// a page holds was copied two or three times before it died (scavenges
// were 7% of the main thread's time). What survives them (pages and records
// held across a fetch, an extraction and a commit) dies in the old generation, which V8 lets grow to up to four
// times what the last major GC kept before it collects again. Capping the
// growth at 2.5 times (--heap-growing-percent=150) took the 100,000-page
// bench crawl from 283-287 MiB to 243-247 MiB for about 3% more CPU; at
// double it was 223-226 MiB for 8% more (bench/README.md, *The old
// generation's growth*).
// glibc gives each thread that allocates its own malloc arena (trawl runs a
// storage thread, an HTML worker and libuv's pool); two arenas peaked at
// 318 MiB on the 100,000-page bench crawl instead of 359 MiB, no slower.
// All are fixed when the process starts, so trawl restarts itself with
// them: in place (execve keeps the process id, so signals and kill -9 reach
// the crawler itself). A flag given to node explicitly wins over trawl's
// value for it; TRAWL_NODE_FLAGS=keep leaves Node as it was started; a
// MALLOC_ARENA_MAX already set is kept.
const NODE_FLAGS = [
  ['--max-semi-space-size', '8'],
  ['--heap-growing-percent', '150'],
];
/** `--max_semi_space_size=8` and `--max-semi-space-size 8` name the same flag. */
const given = new Set(process.execArgv.map((a) => a.split('=')[0].replaceAll('_', '-')));
const missing = NODE_FLAGS.filter(([flag]) => !given.has(flag)).map(([flag, value]) => `${flag}=${value}`);
if (missing.length > 0 && process.env.TRAWL_NODE_FLAGS !== 'keep' && typeof process.execve === 'function') {
  const env = { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' };
  process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], env);
}

/** The newest modification time under `dir` (0 when it does not exist). */
function newest(dir) {
  let t = 0;
  try {
    for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (e.isFile()) t = Math.max(t, statSync(join(e.parentPath, e.name)).mtimeMs);
    }
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  return t;
}
const builtAt = (() => {
  try {
    return statSync(compiled).mtimeMs;
  } catch {
    return 0;
  }
})();
const run = process.env.TRAWL_RUN;
if (run !== undefined && run !== '' && run !== 'source' && run !== 'dist') {
  process.stderr.write(`trawl: TRAWL_RUN must be "source" or "dist", not ${JSON.stringify(run)}\n`);
  process.exit(2);
}
const sourceDir = fileURLToPath(new URL('../src', import.meta.url));
// No dist/ built: the sources, without walking them.
const fromSource = run === 'source' || (run !== 'dist' && (builtAt === 0 || newest(sourceDir) > builtAt));
const entry = fromSource ? source : compiled;
if (run && !existsSync(entry)) {
  process.stderr.write(`trawl: TRAWL_RUN=${run} but ${fileURLToPath(entry)} does not exist${run === 'dist' ? ' (run npm run build)' : ''}\n`);
  process.exit(2);
}
// A reader that went away (`trawl crawl --help | head -1`) is an EPIPE on
// standard output: what is left to print has nowhere to go, which is no
// error of trawl's. Without a listener Node throws it as an unhandled event.
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err;
});
const { main } = await import(entry.href);
process.exitCode = await main(process.argv);
