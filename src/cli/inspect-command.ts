/**
 * `trawl inspect URL` and `trawl export`: what a data directory holds of a
 * URL (record, frontier entry, parent, history, body) or of a collection
 * (its documents as JSON lines, or as files). Both read the collection the
 * same way (service/inspect.ts), from wherever it can be read:
 *
 *   --data DIR ──► crawl store free? ── yes ──► open it here (data-store.ts)
 *                                   └─ no (a trawl serve or crawl holds it)
 *                                       ──► the admin server (--server): trawl.InspectURI,
 *                                           trawl.ExportDocuments page by page
 *                                       ──► neither: TRAWL_ERR_DATA_UNAVAILABLE naming both
 */

import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, openSync, realpathSync, writeFileSync, type WriteStream } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Command } from 'commander';
import { isTrawlError, trawlError } from '../core/errors.ts';
import type { XmlRpcValue } from '../admin/xmlrpc.ts';
import type { LogLine } from '../service/crawl-log.ts';
import type { DocumentSchema, ExportItem, ExportSelection, InspectReport } from '../service/inspect.ts';
import { client, READER_PARSE_LIMITS, toJson, type Client } from './admin-command.ts';
import { openDataStore, type LocalCollection } from './data-store.ts';
import type { Io } from './io.ts';
import { describeStore } from '../store/open-crawl-store.ts';
import { DEFAULT_ADMIN_PORT, readToken } from './serve-command.ts';

interface SourceOptions {
  readonly data: string;
  /** The crawl store when it is not the data directory's (postgres://…, sqlite:PATH), as the crawl was run. */
  readonly store?: string;
  readonly collection?: string;
  readonly server: string;
  readonly tokenFile?: string;
}

/** Where a collection is read from: this process, or the daemon that holds the store. */
type Source =
  | { readonly kind: 'local'; readonly local: LocalCollection }
  | { readonly kind: 'server'; readonly rpc: Client; readonly collection: string };

const DEFAULT_SERVER = `http://127.0.0.1:${DEFAULT_ADMIN_PORT}`;

/** The collection to read: opened here when no process holds the store, else through the admin server (said on stderr). */
async function openSource(o: SourceOptions, io: Io): Promise<Source> {
  const local = await openDataStore(o.data, o.collection, o.store);
  if (local !== 'in-use') return { kind: 'local', local };
  io.err(`trawl: the crawl store ${o.store !== undefined ? describeStore(o.store, o.data) : `of ${o.data}`} is in use by a running trawl; reading through the admin server ${o.server}`);
  const rpc = client(o.server, o.tokenFile !== undefined ? readToken(o.tokenFile) : undefined, READER_PARSE_LIMITS);
  let served: string;
  try {
    served = toJson(await rpc.call('trawl.GetDataDirectory')) as string;
  } catch (err) {
    if (isTrawlError(err) && err.code === 'TRAWL_ERR_IO') throw trawlError('DATA_HELD_NO_SERVER', { dir: o.data, server: o.server, reason: err.message });
    throw err;
  }
  // Another daemon's collections must not be taken for those of --data.
  if (served !== realpathSync(o.data)) throw trawlError('DATA_OTHER_SERVER', { dir: o.data, server: o.server, served });
  const names = toJson(await rpc.call('CollectionGetList')) as string[];
  const where = `the trawl serve at ${o.server}`;
  if (o.collection !== undefined) {
    if (!names.includes(o.collection)) throw trawlError('DATA_NO_COLLECTION', { where, name: o.collection, names: names.join(', ') || 'none' });
    return { kind: 'server', rpc, collection: o.collection };
  }
  if (names.length !== 1) throw trawlError('DATA_CHOOSE_COLLECTION', { where, count: names.length, names: names.join(', ') || 'none' });
  return { kind: 'server', rpc, collection: names[0]! };
}

async function closeSource(s: Source): Promise<void> {
  if (s.kind === 'local') await s.local.close();
}

/** The options both commands share. */
function dataOptions(cmd: Command): Command {
  return cmd
    .option('--data <dir>', 'data directory (crawl store, documents, logs)', './trawl-data')
    .option('--store <url>', 'the crawl store, when the crawl was run with one: sqlite:PATH or postgres://user@host:port/database (documents and logs stay in --data)')
    .option('--collection <name>', 'the collection (needed when the data directory has several)')
    .option('--server <url>', 'the admin server of the trawl serve that holds --data, asked when the store is in use', DEFAULT_SERVER)
    .option('--token-file <file>', 'file holding the admin server\'s bearer token');
}

// ------------------------------------------------------------------ inspect

async function inspectThrough(src: Source, url: string, body: boolean): Promise<InspectReport> {
  if (src.kind === 'local') {
    const { inspectUri } = await import('../service/inspect.ts');
    return inspectUri(src.local.view, url, { body });
  }
  return toJson(await src.rpc.call('trawl.InspectURI', src.collection, url, body ? 1 : 0)) as InspectReport;
}

/** The report as a person reads it. */
export function inspectText(r: InspectReport): string[] {
  const out: string[] = [r.url];
  const row = (k: string, v: string): void => void out.push(`  ${k.padEnd(10)} ${v}`);
  row('collection', r.collection);
  if (r.input !== undefined) row('given as', r.input);
  const rec = r.record;
  if (rec) {
    row('record', [rec.status, rec.httpStatus !== undefined ? `HTTP ${rec.httpStatus}` : undefined, rec.mime, rec.size !== undefined ? `${rec.size} bytes` : undefined]
      .filter((x) => x !== undefined).join(', '));
    row('fetched', `${rec.lastFetched} (cycle ${rec.cycle})`);
    if (rec.checksum !== undefined) row('checksum', rec.checksum);
    if (rec.skipCode !== undefined) row('skip code', `${rec.skipCode}: ${rec.skipMeaning ?? '(unknown code)'}`);
    if (rec.duplicateOf !== undefined) row('duplicate', `of ${rec.duplicateOf}`);
    if (rec.redirectTo !== undefined) row('redirect', `to ${rec.redirectTo}`);
    if (rec.errorCount > 0) row('errors', `${rec.errorCount} in a row`);
    if (rec.etag !== undefined || rec.lastModified !== undefined) row('validators', [rec.etag !== undefined ? `ETag ${rec.etag}` : '', rec.lastModified !== undefined ? `Last-Modified ${rec.lastModified}` : ''].filter(Boolean).join(', '));
  } else row('record', r.known ? 'none yet (queued, not fetched)' : 'none: the crawl store does not hold this URL');
  const f = r.frontier;
  if (f) {
    row('frontier', `${f.state} (cycle ${f.cycle}, depth ${f.depth}${f.retries > 0 ? `, ${f.retries} retries` : ''}${f.kinds.length > 0 ? `, ${f.kinds.join(', ')}` : ''})${f.crashSuspect ? '; crash suspect: it was being fetched when the crawler last stopped unexpectedly' : ''}`);
  }
  row('parent', r.parent ?? (r.known ? 'none (a start URI, or added by an operator)' : 'unknown'));
  if (r.history.length === 0) row('history', 'no event log line names it (log.fetch none?)');
  else {
    row('history', `${r.history.length} event${r.history.length === 1 ? '' : 's'}, oldest first`);
    for (const h of r.history) out.push(`    ${h.time}  ${h.event.padEnd(6)} ${h.status ?? h.code ?? ''}${h.status !== undefined || h.code !== undefined ? '  ' : ''}${h.message}`);
  }
  if (r.bodyMissing !== undefined) row('body', r.bodyMissing);
  if (r.body) {
    row('body', `${r.body.mime}, ${r.body.bytes} bytes${r.body.text === undefined ? ' (binary, base64)' : ''}`);
    out.push(r.body.text ?? r.body.base64 ?? '');
  }
  return out;
}

// ------------------------------------------------------------------ export

/** One exported document's file under --out: <host>[_<port>]/<path>, each name made safe; a query adds a digest of itself. */
export function filePathOf(url: string): string {
  const u = new URL(url);
  const safe = (seg: string): string => {
    let s = seg.replace(/[^A-Za-z0-9._~-]/g, '_');
    if (s === '' || s === '.' || s === '..') s = '_';
    return s.length > 120 ? `${s.slice(0, 100)}_${createHash('sha1').update(seg).digest('hex').slice(0, 10)}` : s;
  };
  const segs = u.pathname.split('/').slice(1);
  let last = segs.pop() ?? '';
  if (last === '') last = 'index.html';
  if (u.search !== '') last = `${last}_${createHash('sha1').update(u.search).digest('hex').slice(0, 10)}`;
  return join(safe(u.host.replace(/[[\]]/g, '').replaceAll(':', '_')), ...segs.map(safe), safe(last));
}

/** A file written a line at a time, waiting for the disk when it lags; an error (a full disk) is thrown by the next write or close. */
class LineFile {
  private readonly path: string;
  private readonly stream: WriteStream;
  private failed: Error | undefined;

  constructor(path: string) {
    this.path = path;
    let fd: number;
    try {
      fd = openSync(path, 'w');
    } catch (err) {
      throw trawlError('EXPORT_WRITE', { path, reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
    }
    this.stream = createWriteStream(path, { fd });
    this.stream.on('error', (err) => (this.failed ??= err));
  }

  private check(): void {
    if (this.failed) throw trawlError('EXPORT_WRITE', { path: this.path, reason: (this.failed as NodeJS.ErrnoException).code ?? this.failed.message });
  }

  async write(line: string): Promise<void> {
    this.check();
    if (!this.stream.write(line)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.stream.off('drain', done);
          this.stream.off('error', done);
          resolve();
        };
        this.stream.on('drain', done);
        this.stream.on('error', done);
      });
      this.check();
    }
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.stream.end(() => resolve()));
    this.check();
  }
}

/** Writes exported documents as files under `out`, with `index.jsonl` naming each one's file and record. */
class FileTree {
  private readonly out: string;
  private readonly index: LineFile;

  constructor(out: string) {
    this.out = out;
    try {
      mkdirSync(out, { recursive: true });
    } catch (err) {
      throw trawlError('EXPORT_WRITE', { path: out, reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
    }
    this.index = new LineFile(join(out, 'index.jsonl'));
  }

  async add(item: ExportItem): Promise<void> {
    const { body, document: _d, ...fields } = item;
    let file: string | undefined;
    if (body) {
      const bytes = Buffer.from(body.base64 ?? '', 'base64');
      file = filePathOf(item.url);
      try {
        mkdirSync(dirname(join(this.out, file)), { recursive: true });
        writeFileSync(join(this.out, file), bytes);
      } catch (err) {
        // A page whose path is a folder of another (/docs and /docs/a): kept under _/ by the digest of its URL.
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST' && code !== 'ENOTDIR' && code !== 'EISDIR') throw trawlError('EXPORT_WRITE', { path: join(this.out, file), reason: code ?? (err as Error).message });
        file = join(dirname(file).split('/')[0]!, '_', createHash('sha1').update(item.url).digest('hex'));
        try {
          mkdirSync(dirname(join(this.out, file)), { recursive: true });
          writeFileSync(join(this.out, file), bytes);
        } catch (again) {
          throw trawlError('EXPORT_WRITE', { path: join(this.out, file), reason: (again as NodeJS.ErrnoException).code ?? (again as Error).message });
        }
      }
    }
    await this.index.write(`${JSON.stringify({ ...fields, ...(file !== undefined ? { file: relative(this.out, join(this.out, file)) } : {}) })}\n`);
  }

  close(): Promise<void> {
    return this.index.close();
  }
}

interface ExportOpts extends SourceOptions {
  site?: string;
  prefix?: string;
  format: string;
  out?: string;
  body: boolean;
  document?: boolean;
  schema?: string;
  all?: boolean;
  pageSize: string;
}

// ------------------------------------------------------------------ commands

export function registerInspectCommands(program: Command, io: Io, setExit: (code: number) => void): void {
  dataOptions(program
    .command('inspect')
    .description('show what a data directory holds of a URL: its record, skip code, frontier state, parent, history (from the event logs) and, with --body, its stored body')
    .argument('<url>', 'the URL (normalised as the collection\'s crawl does)'))
    .option('--body', 'also print the stored body (text as it is, anything else in base64)')
    .option('--json', 'print one JSON object')
    .action(async (url: string, o: SourceOptions & { body?: boolean; json?: boolean }) => {
      if (!URL.canParse(url)) throw trawlError('URL_INVALID', { url });
      const src = await openSource(o, io);
      let report: InspectReport;
      try {
        report = await inspectThrough(src, url, o.body === true);
      } finally {
        await closeSource(src);
      }
      if (!report.known && report.history.length === 0) throw trawlError('URL_UNKNOWN', { url: report.url, name: report.collection });
      if (o.json) io.out(JSON.stringify(report));
      else for (const line of inspectText(report)) io.out(line);
      setExit(0);
    });

  dataOptions(program
    .command('export')
    .description('write a collection\'s stored documents as JSON lines (stdout or --out FILE) or as files under --out DIR; the whole collection, a site or a URL prefix'))
    .option('--site <host[:port]>', 'only this site\'s documents (every port without one)')
    .option('--prefix <url>', 'only URLs that start with this')
    .option('--format <format>', 'jsonl (one JSON object per document) or files (the bodies as files, laid out by host and path, with index.jsonl)', 'jsonl')
    .option('--out <path>', 'jsonl: the file to write (default standard output); files: the folder')
    .option('--no-body', 'jsonl: leave the bodies out (records only)')
    .option('--document', 'jsonl: add the search document a sink receives (title, body_content or body, links…)')
    .option('--schema <schema>', 'the document\'s schema: app_search or open_crawler (default: the one the collection\'s sinks write, open_crawler for Elastic YAML)')
    .option('--all', 'every record, not only those with a stored document (errors, redirects, duplicates…)')
    .option('--page-size <n>', 'documents read at a time', '100')
    .action(async (o: ExportOpts) => {
      if (o.format !== 'jsonl' && o.format !== 'files') throw trawlError('EXPORT_FORMAT', { format: o.format });
      if (o.format === 'files' && o.out === undefined) throw trawlError('EXPORT_NEEDS_OUT', {});
      const { siteMatcher, DOCUMENT_SCHEMAS } = await import('../service/inspect.ts');
      if (o.schema !== undefined && !(DOCUMENT_SCHEMAS as readonly string[]).includes(o.schema)) throw trawlError('EXPORT_SCHEMA', { schema: o.schema, schemas: DOCUMENT_SCHEMAS.join(', ') });
      const schema = o.schema as DocumentSchema | undefined;
      if (o.site !== undefined && siteMatcher(o.site) === undefined) throw trawlError('SITE_INVALID', { site: o.site });
      const pageSize = Math.max(1, Math.min(1000, Number.parseInt(o.pageSize, 10) || 100));
      const files = o.format === 'files';
      const sel: ExportSelection = { ...(o.site !== undefined ? { site: o.site } : {}), ...(o.prefix !== undefined ? { prefix: o.prefix } : {}), all: o.all === true };
      const body = files || o.body;
      const document = !files && o.document === true;
      const src = await openSource(o, io);
      let tree: FileTree | undefined;
      let file: LineFile | undefined;
      let count = 0;
      try {
        if (files) tree = new FileTree(o.out!);
        else if (o.out !== undefined) file = new LineFile(o.out);
        let cursor = 0;
        for (;;) {
          let items: ExportItem[];
          let next: number;
          if (src.kind === 'local') {
            const { exportPage } = await import('../service/inspect.ts');
            ({ items, next } = await exportPage(src.local.view, sel, cursor, { body, document, raw: files, limit: pageSize, ...(schema !== undefined ? { schema } : {}) }));
          } else {
            const selection: Record<string, XmlRpcValue> = { ...sel, body, document, raw: files, ...(schema !== undefined ? { schema } : {}) };
            // A search document carries up to max_links_per_page links: fewer of them per answer.
            const r = toJson(await src.rpc.call('trawl.ExportDocuments', src.collection, selection, cursor === 0 ? '' : String(cursor), document ? Math.min(pageSize, 50) : pageSize)) as { documents: ExportItem[]; cursor: string };
            items = r.documents;
            next = r.cursor === '' ? 0 : Number(r.cursor);
          }
          for (const item of items) {
            count++;
            if (tree) await tree.add(item);
            else if (file) await file.write(`${JSON.stringify(item)}\n`);
            else io.out(JSON.stringify(item));
          }
          if (!file && !tree) {
            try {
              await io.drained?.();
            } catch (err) {
              // The reader of standard output is gone (`| head`): nothing more to write, and nothing wrong.
              if ((err as NodeJS.ErrnoException).code === 'EPIPE') break;
              throw err;
            }
          }
          if (next === 0 || next === cursor) break;
          cursor = next;
        }
      } finally {
        await closeSource(src);
        await tree?.close();
        await file?.close();
      }
      if (o.out !== undefined) io.err(`trawl: ${count} documents exported to ${o.out}`);
      setExit(0);
    });
}

/** `trawl admin log`'s lines as a person reads them. */
export function logText(l: LogLine): string {
  return `${l.time}  ${(l.event ?? '-').padEnd(6)} ${l.url ?? ''}${l.status !== undefined ? ` ${l.status}` : ''}${l.code !== undefined ? ` ${l.code}` : ''}  ${l.msg ?? ''}`;
}
