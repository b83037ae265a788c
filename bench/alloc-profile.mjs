// Where the main thread's allocations come from, garbage included: V8's
// sampling heap profiler with the objects that minor and major GCs have
// already collected kept in the profile (Node's own --heap-prof keeps only
// what is still alive when it stops, a few MiB of start-up code).
//
//   ALLOCPROF=/tmp/alloc.heapprofile node --import ./bench/alloc-profile.mjs bin/trawl.js crawl …
//
// At exit it writes the profile (open it in Chrome DevTools, Memory tab) and
// next to it ALLOCPROF.txt: the functions that allocated the most bytes
// themselves, with their caller, in MiB over the whole run. One sample per
// 32 KiB allocated on average, so small totals are rough. Plain JavaScript
// on purpose, like memory-sampler.mjs: it is loaded into the process it
// measures.
//
// ALLOCPROF_PROMOTED=1 leaves out what the minor GCs (scavenges) collected:
// the profile then holds what lived long enough to be promoted to the old
// generation, which each scavenge copied and a major GC must collect.
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const out = process.env.ALLOCPROF;
if (out && isMainThread) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 32768,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.ALLOCPROF_PROMOTED !== '1',
  });
  const name = (f) => `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
  process.on('exit', () => {
    // An in-thread session answers synchronously, so this completes inside the exit handler.
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (err) {
        process.stderr.write(`alloc-profile: ${err.message}\n`);
        return;
      }
      writeFileSync(out, JSON.stringify(result.profile));
      const bytes = new Map();
      let total = 0;
      const walk = (node, caller) => {
        const key = `${name(node.callFrame)}  ← ${caller}`;
        bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
        total += node.selfSize;
        for (const c of node.children) walk(c, name(node.callFrame));
      };
      walk(result.profile.head, '');
      const mib = (b) => (b / 1048576).toFixed(0).padStart(6);
      const lines = [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([k, b]) => `${mib(b)}  ${k}`);
      writeFileSync(`${out}.txt`, `${mib(total)}  allocated in all (MiB)\n${lines.join('\n')}\n`);
    });
  });
}
