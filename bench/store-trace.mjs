// Records every call a crawl makes on its SQLite crawl store, so that
// bench/store-replay.ts can run the same work again on its own: the storage
// thread's share of a crawl, measured without the fetches, the extraction
// and the machine's drift over a two-minute crawl.
//
//   STORETRACE=/tmp/store.trace node --import ./bench/store-trace.mjs bin/trawl.js crawl …
//
// Each record is a 4-byte little-endian length and a v8.serialize()d
// [method, args] (the arguments as the storage thread received them). A
// group commit is recorded as ['flushCompletions', []] where it happened, so
// that the replay commits the same completions together (the name is the
// one the store's own method had before group commit moved above the
// dialect, so that older traces replay too). Plain JavaScript
// on purpose, like alloc-profile.mjs: it is loaded into the process it
// measures, and into each of its threads; only the thread that opens a
// store writes.
import { closeSync, openSync, writeSync } from 'node:fs';
import { serialize } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

const out = process.env.STORETRACE;
if (out && !isMainThread) {
  // bin/trawl.js runs dist/ or src/ (TRAWL_RUN); the storage thread then imports the same module instances.
  const dist = process.env.TRAWL_RUN === 'dist';
  const load = (path) => import(new URL(dist ? `../dist/store/${path}.js` : `../src/store/${path}.ts`, import.meta.url).href);
  const proto = (await load('sqlite/sqlite-crawl-store')).SqliteCrawlStore.prototype;
  const groupCommit = (await load('group-commit')).GroupCommit.prototype;
  let fd;
  const record = (method, args) => {
    fd ??= openSync(out, 'w');
    const body = serialize([method, args]);
    const head = Buffer.alloc(4);
    head.writeUInt32LE(body.length);
    writeSync(fd, head);
    writeSync(fd, body);
  };
  let depth = 0;
  // A group commit (src/store/group-commit.ts) writing a batch: what it writes is replayed by the calls that queued it.
  const flush = groupCommit.flush;
  groupCommit.flush = function (...args) {
    if (this.pending > 0) record('flushCompletions', []);
    depth++;
    try {
      return flush.apply(this, args);
    } finally {
      depth--;
    }
  };
  for (const method of Object.getOwnPropertyNames(proto)) {
    const fn = proto[method];
    if (method === 'constructor' || typeof fn !== 'function') continue;
    proto[method] = function (...args) {
      // Only the calls that came from the crawl: a method one of them calls is replayed by the replayed call,
      // and what the constructor calls (before it has prepared its statements) by the replay's constructor.
      if (depth === 0 && this.st !== undefined) record(method, args);
      depth++;
      try {
        return fn.apply(this, args);
      } finally {
        depth--;
      }
    };
  }
  process.on('exit', () => {
    if (fd !== undefined) closeSync(fd);
  });
}
