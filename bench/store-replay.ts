/**
 * Replays a crawl's calls on its SQLite crawl store (recorded with
 * bench/store-trace.mjs) against a new store, alone in this thread: the
 * storage thread's work of the crawl with nothing else running, so that a
 * change to the store, its schema or its pragmas can be measured in a few
 * seconds and, for the bytes and system calls, exactly.
 *
 *   npm run bench:store -- --trace /tmp/store.trace [--runs 3] [--pragma 'PRAGMA cache_size = -16384'] \
 *     [--page-size 4096] [--batch N] [--module DIR/src/store/sqlite/sqlite-crawl-store.ts]
 *
 * The group commits happen where they happened in the crawl (the trace
 * records each one), so the transactions are the crawl's own; `--batch N`
 * commits every N completions instead, to see what wider transactions
 * would save (on the bench crawl's trace: 84 µs per URI as recorded, about
 * 15 a transaction; 77 at 64; 71 at 256). Reported per
 * completed URI: CPU (user and system, the whole process), and from
 * /proc/self/io the bytes and the read and write system calls. The bytes and
 * the calls depend only on the store's code and settings; the CPU on the
 * machine too, so compare variants interleaved (`--module` of another
 * checkout, runs alternating in one shell loop).
 */

import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { deserialize } from 'node:v8';
import type { SqliteCrawlStore as Store } from '../src/store/sqlite/sqlite-crawl-store.ts';
import { parseFlags } from './site/generate.ts';

const f = parseFlags(process.argv.slice(2), { trace: 'string', runs: 'string', pragma: 'string', 'page-size': 'string', module: 'string', batch: 'string' });
if (f.help || typeof f.trace !== 'string') {
  console.log("usage: npm run bench:store -- --trace FILE [--runs 3] [--pragma 'PRAGMA …'] [--page-size BYTES] [--batch N] [--module PATH]");
  process.exit(f.help ? 0 : 2);
}

type Call = [method: string, args: unknown[]];

function readTrace(path: string): Call[] {
  const calls: Call[] = [];
  const fd = openSync(path, 'r');
  try {
    const size = statSync(path).size;
    const head = Buffer.alloc(4);
    let pos = 0;
    while (pos < size) {
      if (readSync(fd, head, 0, 4, pos) !== 4) throw new Error(`${path}: truncated record at byte ${pos}`);
      const len = head.readUInt32LE(0);
      const body = Buffer.alloc(len);
      if (readSync(fd, body, 0, len, pos + 4) !== len) throw new Error(`${path}: truncated record at byte ${pos}`);
      calls.push(deserialize(body) as Call);
      pos += 4 + len;
    }
  } finally {
    closeSync(fd);
  }
  return calls;
}

function procIo(): Record<string, number> {
  const io: Record<string, number> = {};
  for (const line of readFileSync('/proc/self/io', 'utf8').split('\n')) {
    const [k, v] = line.split(': ');
    if (k && v) io[k] = Number(v);
  }
  return io;
}

const modulePath = resolve(typeof f.module === 'string' ? f.module : new URL('../src/store/sqlite/sqlite-crawl-store.ts', import.meta.url).pathname);
const { SqliteCrawlStore } = (await import(pathToFileURL(modulePath).href)) as { SqliteCrawlStore: typeof Store };
const calls = readTrace(f.trace);
const completions = calls.filter(([m]) => m === 'complete').length;
console.log(`${f.trace}: ${calls.length} calls, ${completions} completions; store ${modulePath}`);

for (let run = 1; run <= Number(f.runs ?? 3); run++) {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-replay-'));
  const path = join(dir, 'trawl.db');
  if (typeof f['page-size'] === 'string') {
    // The page size is fixed when the file is first written, before the store creates its tables.
    const db = new DatabaseSync(path);
    db.exec(`PRAGMA page_size = ${Number(f['page-size'])}; PRAGMA journal_mode = WAL;`);
    db.close();
  }
  // The trace says when to commit: no timer of the store's own may commit earlier.
  const store = new SqliteCrawlStore(path, { commitWindowMs: 3_600_000 }) as unknown as Record<string, (...a: unknown[]) => unknown>;
  // Writes the completions waiting for their group commit: the store's group commit (src/store/group-commit.ts), or,
  // in a checkout from before it moved above the dialect (--module), the store's own flushCompletions.
  const commits = (store as unknown as { commits?: { flush(): unknown } }).commits;
  const flush = commits ? () => commits.flush() : () => store.flushCompletions!();
  if (typeof f.pragma === 'string') (store as unknown as { db: DatabaseSync }).db.exec(f.pragma);
  const io0 = procIo();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const waits: unknown[] = [];
  const batch = typeof f.batch === 'string' ? Number(f.batch) : 0;
  let sinceFlush = 0;
  for (const [method, args] of calls) {
    if (method === 'flushCompletions') {
      if (batch === 0) flush();
      continue;
    }
    const r = store[method]!(...args);
    if (method === 'complete') {
      waits.push(r);
      if (batch > 0 && ++sinceFlush >= batch) {
        flush();
        sinceFlush = 0;
      }
    }
  }
  if (batch > 0) flush();
  await Promise.all(waits);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const io = procIo();
  const per = (n: number): string => (n / completions).toFixed(1);
  const dbBytes = statSync(path).size;
  console.log(
    `run ${run}: ${(((cpu.user + cpu.system) / 1000) / completions * 1000).toFixed(1)} µs CPU per URI ` +
      `(user ${((cpu.user / completions)).toFixed(1)}, sys ${(cpu.system / completions).toFixed(1)}), wall ${(wall / 1000).toFixed(1)} s; ` +
      `per URI: written ${per((io.wchar ?? 0) - (io0.wchar ?? 0))} B in ${per((io.syscw ?? 0) - (io0.syscw ?? 0))} calls, ` +
      `read ${per((io.rchar ?? 0) - (io0.rchar ?? 0))} B in ${per((io.syscr ?? 0) - (io0.syscr ?? 0))} calls; database ${(dbBytes / 1048576).toFixed(1)} MiB`,
  );
  rmSync(dir, { recursive: true, force: true });
}
