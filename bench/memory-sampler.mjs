// Samples process.memoryUsage() in every thread of a Node process, for
// reading where a crawl's memory goes (bench/README.md, "Peak RSS"):
//
//   MEMLOG=/tmp/memlog.txt node --import ./bench/memory-sampler.mjs bin/trawl.js crawl …
//
// Worker threads inherit --import, so the storage thread and the extract
// worker report too. One line per thread every 2 s (MEMLOG_MS to change):
// seconds since start, thread id, RSS (the whole process), V8 heap total and
// used, external memory and ArrayBuffers, in MiB. Plain JavaScript on
// purpose: a .ts file here would load Node's TypeScript stripper into every
// thread, the very memory being measured.
import { appendFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';

const out = process.env.MEMLOG;
if (out) {
  const t0 = Date.now();
  const mib = (b) => (b / 1048576).toFixed(0);
  setInterval(() => {
    const m = process.memoryUsage();
    appendFileSync(out, `${((Date.now() - t0) / 1000).toFixed(0)}s t${threadId} rss=${mib(m.rss)} heapTotal=${mib(m.heapTotal)} heapUsed=${mib(m.heapUsed)} external=${mib(m.external)} arrayBuffers=${mib(m.arrayBuffers)}\n`);
  }, Number(process.env.MEMLOG_MS ?? 2000)).unref();
}
