// Reads trawl's JSON event log (logs/crawl.log under a data directory, or a
// collection's log under trawl serve) as the tests look at it.
import { existsSync, readFileSync } from 'node:fs';

/** One event of the log: its time, event name, URL if any, and message. */
export interface LogLine {
  readonly time: string;
  readonly event: string;
  readonly url?: string;
  readonly msg: string;
}

/** The log's events so far: none while the file does not exist, and without a last line still being written. */
export function readCrawlLog(file: string): LogLine[] {
  if (!existsSync(file)) return [];
  const out: LogLine[] = [];
  for (const l of readFileSync(file, 'utf8').split('\n')) {
    if (l === '') continue;
    try {
      out.push(JSON.parse(l) as LogLine);
    } catch {
      // a line being written
    }
  }
  return out;
}
