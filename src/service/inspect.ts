/**
 * What `trawl inspect` and `trawl export` show of a collection, read from
 * its crawl store, its content store and its event logs, the same way
 * whoever holds them: the CLI on a data directory no crawler runs on, or
 * the daemon for `trawl.InspectURI` / `trawl.ExportDocuments` / `trawl.GetLog`
 * (the store is held by one process at a time: connection.ts).
 *
 *   CollectionView { name, store, content, settings, log files }
 *     ├─ inspectUri(view, url)      record + frontier entry + parent + history (event log) + body
 *     ├─ exportPage(view, sel, …)   records in the order written, a page at a time, bodies decoded
 *     └─ readLogLines(files, …)     crawl-log.ts
 *
 * Nothing here is on the crawl's path: the history is what the event log
 * already holds, the parent what the frontier row was queued with.
 */

import { skipMeaning } from '../core/skip-codes.ts';
import { normalizeUrl } from '../core/url.ts';
import type { CollectionSettings } from '../config/registry.ts';
import { canonicalizerOf } from '../engine/runtime.ts';
import { documentOptionsOf } from '../sinks/collection-feeder.ts';
import { buildDocument, charsetOfHeader, decodeText, DOCUMENT_SCHEMAS, isTextMime, sinkDocument, type DocumentSchema } from '../sinks/document.ts';
import { destinationsOf } from '../sinks/feeding.ts';
import type { ContentStore } from '../store/content-store.ts';
import { CRASH_STRIKES_MASK, URI_FLAGS, type CrawlStore, type FrontierEntry, type UriRecord } from '../store/crawl-store.ts';
import { readLogLines, type LogLine } from './crawl-log.ts';

/** One collection as the readers see it. */
export interface CollectionView {
  readonly name: string;
  readonly store: CrawlStore;
  readonly content: ContentStore;
  readonly settings: CollectionSettings;
  /** The event logs that may hold its lines (crawl-log.ts logFilesOf). */
  readonly logFiles: () => string[];
  /** Writes what the running crawl's log holds in memory (the daemon's), before it is read. */
  readonly flushLog?: () => Promise<void>;
}

/** A record as the readers print it: times as ISO strings, absent fields left out. */
export interface RecordView {
  readonly status: string;
  readonly httpStatus?: number;
  readonly checksum?: string;
  readonly mime?: string;
  readonly size?: number;
  readonly lastFetched: string;
  readonly etag?: string;
  readonly lastModified?: string;
  readonly errorCount: number;
  readonly skipCode?: string;
  readonly skipMeaning?: string;
  readonly duplicateOf?: string;
  readonly redirectTo?: string;
  readonly depth: number;
  readonly parent?: string;
  /** The refresh cycle that last wrote it. */
  readonly cycle: number;
  readonly contentRef?: string;
}

const opt = <K extends string, V>(k: K, v: V | undefined): { [P in K]?: V } => (v === undefined ? {} : { [k]: v }) as { [P in K]?: V };

export function recordView(r: UriRecord): RecordView {
  return {
    status: r.status, ...opt('httpStatus', r.httpStatus), ...opt('checksum', r.checksum), ...opt('mime', r.mime), ...opt('size', r.size),
    lastFetched: new Date(r.lastCrawledMs).toISOString(), ...opt('etag', r.etag), ...opt('lastModified', r.lastModified), errorCount: r.errorCount,
    ...opt('skipCode', r.skipCode), ...opt('skipMeaning', skipMeaning(r.skipCode)), ...opt('duplicateOf', r.duplicateOf), ...opt('redirectTo', r.redirectTo),
    depth: r.depth, ...opt('parent', r.parent), cycle: r.epoch, ...opt('contentRef', r.contentRef),
  };
}

export interface FrontierView {
  /** queued, leased (being fetched) or done in its last cycle. */
  readonly state: FrontierEntry['state'];
  /** It was being fetched when the crawler last stopped unexpectedly (a crash strike, frontier-store.ts CRASH_STRIKE). */
  readonly crashSuspect: boolean;
  readonly cycle: number;
  readonly depth: number;
  readonly hops: number;
  readonly redirects: number;
  readonly retries: number;
  readonly priority: number;
  readonly subcollection?: string;
  /** What the URI is for besides a page (URI_FLAGS names: sitemap, feed, sent, quarantined…). */
  readonly kinds: string[];
}

function frontierView(e: FrontierEntry): FrontierView {
  const kinds = Object.entries(URI_FLAGS).filter(([, bit]) => (e.flags & bit) !== 0).map(([name]) => name.toLowerCase().replace('_', '-'));
  return {
    state: e.state, crashSuspect: (e.flags & CRASH_STRIKES_MASK) !== 0, cycle: e.epoch, depth: e.depth, hops: e.hops, redirects: e.redirects,
    retries: e.retries, priority: e.priority, ...opt('subcollection', e.sub), kinds,
  };
}

/** One event of a URL's history, from the event log. */
export interface HistoryEntry {
  readonly time: string;
  /** fetch, skip, error, robots. */
  readonly event: string;
  readonly status?: number;
  readonly code?: string;
  readonly meaning?: string;
  readonly message: string;
}

function historyEntry(l: LogLine): HistoryEntry {
  return {
    time: l.time, event: l.event ?? 'log', ...opt('status', l.status), ...opt('code', l.code), ...opt('meaning', skipMeaning(l.code)), message: l.msg ?? '',
  };
}

/** A stored body: text when its type is text and it decodes, else base64. */
export interface BodyView {
  readonly mime: string;
  readonly bytes: number;
  readonly text?: string;
  readonly base64?: string;
  /** The response header block, when storage store_http_header kept it. */
  readonly header?: string;
}

function bodyView(doc: { body: Uint8Array; mime: string; header: string | undefined }, raw = false): BodyView {
  const text = !raw && isTextMime(doc.mime) ? decodeText(doc.body, charsetOfHeader(doc.header)) : undefined;
  return {
    mime: doc.mime, bytes: doc.body.length,
    ...(text !== undefined ? { text } : { base64: Buffer.from(doc.body).toString('base64') }),
    ...opt('header', doc.header),
  };
}

export interface InspectReport {
  readonly collection: string;
  /** The URL as the crawl normalises it (WHATWG, fragment dropped, rewrite_rules, canonicalization). */
  readonly url: string;
  /** The URL as given, when normalising changed it. */
  readonly input?: string;
  /** The crawl store holds the URL (a record or a frontier entry). */
  readonly known: boolean;
  readonly record?: RecordView;
  readonly frontier?: FrontierView;
  /** The page that linked it (the frontier entry's, else the record's); absent for a start URI or one an operator added. */
  readonly parent?: string;
  /** Its events from the event logs, oldest first (the last HISTORY_MAX). */
  readonly history: HistoryEntry[];
  /** The stored body, with `body`. */
  readonly body?: BodyView;
  /** Why there is no body although it was asked for. */
  readonly bodyMissing?: string;
}

export const HISTORY_MAX = 100;

/** The URL as the collection's crawl would name it; undefined when it is not an absolute URL. */
export function normalizeFor(settings: CollectionSettings, raw: string): string | undefined {
  const abs = normalizeUrl(raw);
  if (abs === undefined) return undefined;
  try {
    return canonicalizerOf(settings).canonicalize(abs) ?? abs;
  } catch {
    return abs;
  }
}

/** Everything known of one URL. `url` must be absolute (normalizeFor). */
export async function inspectUri(v: CollectionView, raw: string, opts: { body?: boolean } = {}): Promise<InspectReport> {
  const url = normalizeFor(v.settings, raw) ?? raw;
  const [record, entry] = await Promise.all([v.store.getRecord(v.name, url), v.store.frontierEntry(v.name, url)]);
  await v.flushLog?.();
  const history = (await readLogLines(v.logFiles(), { collection: v.name, url, lines: HISTORY_MAX })).map(historyEntry);
  const parent = entry?.parent ?? record?.parent;
  let body: BodyView | undefined;
  let bodyMissing: string | undefined;
  if (opts.body) {
    if (!record?.contentRef) bodyMissing = record ? `no body is stored (status ${record.status})` : 'no record';
    else {
      const doc = await v.content.get(record.contentRef);
      if (doc) body = bodyView(doc);
      else bodyMissing = `the content store no longer holds ${record.contentRef}`;
    }
  }
  return {
    collection: v.name, url, ...(url !== raw ? { input: raw } : {}), known: record !== undefined || entry !== undefined,
    ...(record ? { record: recordView(record) } : {}), ...(entry ? { frontier: frontierView(entry) } : {}), ...opt('parent', parent),
    history, ...opt('body', body), ...opt('bodyMissing', bodyMissing),
  };
}

/** Which records an export takes. */
export interface ExportSelection {
  /** `host` or `host:port`: the records of that site (every scheme; without a port, every port). */
  readonly site?: string;
  /** Only URLs that start with it. */
  readonly prefix?: string;
  /** Every record, not only those with a stored document (stored or unchanged, with content). */
  readonly all?: boolean;
}

export interface ExportOptions {
  /** The decoded body (default). */
  readonly body: boolean;
  /** The search document the sinks receive (src/sinks/document.ts). */
  readonly document: boolean;
  /** The document's schema; default the one the collection's sinks write (exportSchemaOf). */
  readonly schema?: DocumentSchema;
  /** The body as stored, in base64 even when it is text (`--format files` writes the bytes). */
  readonly raw?: boolean;
  /** Lines per page at most. */
  readonly limit: number;
  /** Records looked at per page at most, matching or not (bounds one call's work). */
  readonly scan?: number;
}

/** One exported document: a JSON line of `trawl export`. */
export interface ExportItem extends RecordView {
  readonly url: string;
  readonly collection: string;
  readonly body?: BodyView;
  readonly bodyMissing?: string;
  /** The search document as a sink of the export's schema writes it. */
  readonly document?: Readonly<Record<string, unknown>>;
  /** Why there is no document: the schema does not index this record (open_crawler: a file not in binary_mime_types). */
  readonly documentMissing?: string;
}

export { DOCUMENT_SCHEMAS, type DocumentSchema };

/**
 * The schema `trawl export --document` uses when none is asked for: the one
 * the collection's document sinks write (open_crawler for a collection read
 * from Elastic YAML), app_search when no sink names one.
 */
export function exportSchemaOf(s: CollectionSettings): DocumentSchema {
  for (const sink of Object.values(s.sinks)) {
    const schema = sink.schema as DocumentSchema | undefined;
    if (schema !== undefined && DOCUMENT_SCHEMAS.includes(schema)) return schema;
  }
  return 'app_search';
}

export interface ExportPage {
  readonly items: ExportItem[];
  /** Where the next page starts; 0 when this was the last page. */
  readonly next: number;
}

/** Checks a --site value, and the test a record's site must pass. */
export function siteMatcher(site: string | undefined): ((recordSite: string) => boolean) | undefined {
  if (site === undefined) return undefined;
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:\s/[\]]+)(?::(\d{1,5}))?$/.exec(site.trim());
  if (!m) return undefined;
  const host = m[1]!.toLowerCase();
  const port = m[2];
  return (recordSite) => {
    const at = recordSite.lastIndexOf(':');
    const h = recordSite.slice(recordSite.indexOf('://') + 3, at);
    return h === host && (port === undefined || recordSite.slice(at + 1) === port);
  };
}

const wanted = (r: UriRecord): boolean => r.contentRef !== undefined && (r.status === 'stored' || r.status === 'unchanged');

/** Body bytes a page holds at most (one document always goes, whatever its size): bounds a trawl.ExportDocuments answer. */
export const EXPORT_PAGE_BYTES = 8 * 1024 * 1024;

/**
 * The exported documents after position `from` (0: the start), in the order
 * the records were first written, a page at a time: memory holds one page
 * (at most `limit` documents, and past EXPORT_PAGE_BYTES of bodies no
 * more), whatever the size of the collection.
 */
export async function exportPage(v: CollectionView, sel: ExportSelection, from: number, o: ExportOptions): Promise<ExportPage> {
  const onSite = siteMatcher(sel.site);
  const scan = Math.max(1, o.scan ?? 5000);
  const limit = Math.max(1, o.limit);
  const items: ExportItem[] = [];
  const destination = destinationsOf(v.settings, v.name).values().next().value ?? v.name;
  if (o.document && o.schema === undefined) o = { ...o, schema: exportSchemaOf(v.settings) };
  let pos = from;
  let scanned = 0;
  let bytes = 0;
  while (items.length < limit && scanned < scan && bytes < EXPORT_PAGE_BYTES) {
    const page = await v.store.listRecordPage(v.name, { from: pos, limit: Math.min(limit - items.length, scan - scanned, 500), positions: true });
    if (page.records.length === 0) return { items, next: 0 };
    for (let i = 0; i < page.records.length; i++) {
      const r = page.records[i]!;
      pos = page.positions?.[i] ?? page.last;
      scanned++;
      if (!sel.all && !wanted(r)) continue;
      if (onSite && !onSite(r.site)) continue;
      if (sel.prefix !== undefined && !r.url.startsWith(sel.prefix)) continue;
      const item = await exportItem(v, r, o, destination);
      items.push(item);
      bytes += item.body?.bytes ?? 0;
      if (bytes >= EXPORT_PAGE_BYTES) break;
    }
  }
  return { items, next: pos };
}

async function exportItem(v: CollectionView, r: UriRecord, o: ExportOptions, destination: string): Promise<ExportItem> {
  const base = { url: r.url, collection: v.name, ...recordView(r) };
  if (!(o.body || o.document)) return base;
  const doc = r.contentRef !== undefined ? await v.content.get(r.contentRef) : undefined;
  if (!doc) return r.contentRef !== undefined ? { ...base, bodyMissing: `the content store no longer holds ${r.contentRef}` } : base;
  let document: Pick<ExportItem, 'document' | 'documentMissing'> = {};
  if (o.document) {
    const schema = o.schema ?? 'app_search';
    const built = buildDocument({ record: r, body: doc.body, mime: doc.mime, charset: charsetOfHeader(doc.header) }, { ...documentOptionsOf(v.settings), collection: destination, crawlCollection: v.name, openCrawler: schema === 'open_crawler' });
    const json = sinkDocument(built, schema);
    document = json !== undefined ? { document: json } : { documentMissing: `the ${schema} schema does not index ${doc.mime} (trawl_extraction.binary_mime_types)` };
  }
  return { ...base, ...(o.body ? { body: bodyView(doc, o.raw) } : {}), ...document };
}
