/** The Open Crawler's console output (console_format open_crawler) read back: one entry per "# <id>, <url>, <status>" line, with what follows it. */
export interface ConsoleEntry {
  readonly id: string;
  readonly url: string;
  readonly status: string;
  /** The lines after the header up to the next header (the page, or the content-extractable-file line). */
  readonly content: string;
}

const HEADER = /^# ([0-9a-f]{40}), (\S+), (\d*)$/;

export function consoleEntries(out: string): ConsoleEntry[] {
  const entries: Array<{ id: string; url: string; status: string; lines: string[] }> = [];
  for (const line of out.split('\n')) {
    const m = HEADER.exec(line);
    if (m) entries.push({ id: m[1]!, url: m[2]!, status: m[3]!, lines: [] });
    else if (entries.length > 0) entries[entries.length - 1]!.lines.push(line);
    else if (line.trim() !== '') throw new Error(`console output does not start with a "# id, url, status" line: ${JSON.stringify(line)}`);
  }
  return entries.map((e) => ({ id: e.id, url: e.url, status: e.status, content: e.lines.join('\n').replace(/\n+$/, '') }));
}
