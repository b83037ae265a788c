/**
 * The console sink (Elastic's `output_sink: console`), in one of two formats
 * (`trawl_sinks.<sink>.console_format`):
 *
 *   json          one JSON line per operation on standard output,
 *                 `{"op":"index",...document}` or `{"op":"delete","id":…,"url":…,"collection":…}`
 *   open_crawler  the Elastic Open Crawler's console output (lib/crawler/output_sink/console.rb):
 *                 per document a line `# <id>, <url>, <HTTP status>`, then the page as
 *                 fetched, or for a file of trawl_extraction.binary_mime_types the line
 *                 `** [Content extractable file (content type: <type>, content length: <bytes>)] **`;
 *                 nothing for a deletion or for a page its schema does not index (the Open
 *                 Crawler never hands those to its sink). What an Elastic YAML console sink has.
 */

import { charsetOfHeader, decodeText, sinkDocument, type DocumentSchema, type SearchDocument } from './document.ts';
import { configRulesFor, type DocumentSourceData, type Sink, type SinkOp, type SinkResult, type SinkType } from './sink.ts';

export type ConsoleFormat = 'json' | 'open_crawler';

export class ConsoleSink implements Sink {
  readonly type = 'console';
  readonly name: string;
  readonly schema: DocumentSchema;
  readonly format: ConsoleFormat;
  private readonly out: NodeJS.WritableStream;

  constructor(name: string, out: NodeJS.WritableStream = process.stdout, schema: DocumentSchema = 'app_search', format: ConsoleFormat = 'json') {
    this.name = name;
    this.out = out;
    this.schema = schema;
    this.format = format;
  }

  async submit(batch: readonly SinkOp[]): Promise<SinkResult> {
    const text = this.format === 'open_crawler' ? batch.map((b) => openCrawlerEntry(b, this.schema)).join('') : `${batch.map((b) => jsonLine(b, this.schema)).join('\n')}\n`;
    if (text !== '') await new Promise<void>((resolve, reject) => this.out.write(text, (err) => (err ? reject(err) : resolve())));
    return { rejected: [] };
  }

  async close(): Promise<void> {}
}

function jsonLine(b: SinkOp, schema: DocumentSchema): string {
  if (b.op === 'delete') return JSON.stringify(b);
  const json = sinkDocument(b.doc, schema);
  // A document its schema does not index is a delete of that id.
  return JSON.stringify(json ? { op: 'index', ...json } : { op: 'delete', id: b.doc.id, url: b.doc.url, collection: b.doc.collection });
}

/** One document as the Open Crawler's console sink prints a crawl result; '' for what it never prints. */
function openCrawlerEntry(b: SinkOp, schema: DocumentSchema): string {
  if (b.op === 'delete' || b.source === undefined) return '';
  const json = sinkDocument(b.doc, schema);
  if (!json) return '';
  const head = `# ${b.doc.id}, ${b.doc.url}, ${b.doc.http_status ?? b.source.record.httpStatus ?? ''}\n`;
  return `${head}${isExtractableFile(json) ? fileLine(b.doc, b.source) : pageText(b.source)}\n`;
}

/** A document made of a binary file (the open_crawler schema's _attachment; app_search's body_base64). */
function isExtractableFile(json: Readonly<Record<string, unknown>>): boolean {
  return '_attachment' in json || 'body_base64' in json;
}

function fileLine(doc: SearchDocument, src: DocumentSourceData): string {
  return `** [Content extractable file (content type: ${doc.content_type ?? src.mime}, content length: ${src.body.length})] **`;
}

/** The page as fetched, in its charset (the Open Crawler prints the response body it decoded). */
function pageText(src: DocumentSourceData): string {
  return decodeText(src.body, charsetOfHeader(src.header));
}

export const CONSOLE_SINK: SinkType = {
  type: 'console',
  problems: configRulesFor,
  open: (name, s) => new ConsoleSink(name, process.stdout, s.schema as DocumentSchema | undefined, s.consoleFormat === 'open_crawler' ? 'open_crawler' : 'json'),
};
