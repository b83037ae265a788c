/**
 * The per-URL event logs of a data directory, and how they are read back
 * (`trawl inspect`'s history, `trawl admin log`, `trawl.GetLog`).
 *
 *   <data>/logs/crawl.log                  trawl crawl: every collection of every run, one file
 *   <data>/logs/collections/<name>.log     trawl serve: one file per collection
 *
 * Both hold the same JSON lines (pino, written through core/log-file.ts):
 * `{"level":30,"time":"…","collection":"web","event":"fetch","url":"…","status":200,"msg":"200 512 bytes in 3 ms"}`,
 * one per event the collection's `log` section lets through (MS-FSCCFG
 * 2.2.4.5: `fetch` every download and why a document was not stored,
 * `screened` every URI turned away). The crawl writes nothing else for
 * them, so a URL's history costs the crawl nothing beyond the line it
 * already logs; reading it back scans the files from their end.
 */

import { existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

/** `trawl crawl`'s event log. */
export function crawlLogPath(dataDir: string): string {
  return join(dataDir, 'logs', 'crawl.log');
}

/** `trawl serve`'s event log of one collection; the name is made safe for a file name (`/`, `..` and the like escaped). */
export function collectionLogPath(dataDir: string, collection: string): string {
  const safe = encodeURIComponent(collection).replace(/^\.\.?$/, (d) => d.replaceAll('.', '%2E'));
  return join(dataDir, 'logs', 'collections', `${safe}.log`);
}

/** Every event log of a data directory that may hold lines of `collection`. */
export function logFilesOf(dataDir: string, collection: string): string[] {
  return [crawlLogPath(dataDir), collectionLogPath(dataDir, collection)].filter((f) => existsSync(f));
}

/** One line of an event log, as pino wrote it. */
export interface LogLine {
  readonly level: number;
  readonly time: string;
  readonly collection?: string;
  readonly event?: string;
  readonly url?: string;
  readonly status?: number;
  readonly code?: string;
  readonly msg?: string;
}

export interface LogQuery {
  readonly collection: string;
  /** Only the lines about this URL. */
  readonly url?: string;
  /** The last this many lines (of all the files together). */
  readonly lines: number;
}

/** The largest number of lines a query returns. */
export const MAX_LOG_LINES = 10_000;
const CHUNK = 64 * 1024;

/**
 * The last `q.lines` lines of `files` that are about `q.collection` (and
 * `q.url`), oldest first, the files' lines merged by time. Each file is
 * read backwards in 64 KiB chunks until enough lines are found, so the
 * tail of a large log is read without the rest; a URL's lines take a scan
 * of the whole file when it has fewer than asked. Lines that are not JSON
 * are skipped.
 */
export async function readLogLines(files: readonly string[], q: LogQuery): Promise<LogLine[]> {
  const want = Math.max(0, Math.min(MAX_LOG_LINES, Math.floor(q.lines)));
  if (want === 0) return [];
  const all: LogLine[] = [];
  for (const f of files) all.push(...(await tailOf(f, q, want)));
  // ISO times in one format compare as strings; the sort is stable, so a file's own order is kept at equal times.
  all.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  return all.slice(-want);
}

/** Read with asynchronous reads, one chunk at a time: in the daemon, a long scan does not hold up the crawl on the same thread. */
async function tailOf(file: string, q: LogQuery, want: number): Promise<LogLine[]> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(file, 'r');
  } catch {
    return [];
  }
  // Cheap tests before a line is parsed: the URL (when it needs no JSON escaping) and the collection as pino writes them.
  const urlText = q.url !== undefined && JSON.stringify(q.url) === `"${q.url}"` ? `"url":"${q.url}"` : undefined;
  const found: LogLine[] = [];
  try {
    let pos = (await fh.stat()).size;
    let carry = Buffer.alloc(0);
    const take = (text: string): boolean => {
      if (text === '' || (urlText !== undefined && !text.includes(urlText))) return false;
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        return false;
      }
      if (line.collection !== undefined && line.collection !== q.collection) return false;
      if (q.url !== undefined && line.url !== q.url) return false;
      found.push(line);
      return found.length >= want;
    };
    while (pos > 0) {
      const n = Math.min(CHUNK, pos);
      pos -= n;
      const chunk = Buffer.allocUnsafe(n);
      let got = 0;
      while (got < n) {
        const { bytesRead } = await fh.read(chunk, got, n - got, pos + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      const read = chunk.subarray(0, got);
      const buf = carry.length > 0 ? Buffer.concat([read, carry]) : read;
      // What comes before the first newline may be the end of a line that starts in the chunk before
      // (split as bytes: a newline byte is never inside a UTF-8 character).
      const nl = buf.indexOf(10);
      if (nl < 0) {
        carry = buf;
        continue;
      }
      carry = buf.subarray(0, nl);
      const parts = buf.subarray(nl + 1).toString('utf8').split('\n');
      for (let i = parts.length - 1; i >= 0; i--) if (take(parts[i]!)) return found.reverse();
    }
    if (carry.length > 0) take(carry.toString('utf8'));
    return found.reverse();
  } finally {
    await fh.close();
  }
}

/** Where `trawl serve` writes one collection's events (crawl-log.ts paths); the CLI opens it (cli/logging.ts openEventLog). */
export interface EventLog {
  readonly path: string;
  write(e: { readonly type: string; readonly url?: string; readonly status?: number; readonly code?: string; readonly message: string; readonly ecs?: Readonly<Record<string, unknown>> }): void;
  /** Resolves once every line written so far is in the file. */
  flush(): Promise<void>;
  close(): Promise<void>;
}
