/**
 * The file sink (Elastic's `output_sink: file`): one JSON file per document,
 * `<output_dir>/<content collection>/<id>.json`, where the id is the SHA-1
 * of the URL; with file_naming url, the Elastic Open Crawler's layout,
 * `<output_dir>/<name from the URL>.json` (elasticFileName). An update replaces the file, a delete removes it. Each file
 * is written to a temporary name, flushed to disk and renamed, so a reader
 * never sees half a document and a crash leaves the old one or the new one.
 */

import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { trawlError } from '../core/errors.ts';
import { sinkDocument, type DocumentSchema } from './document.ts';
import { configRulesFor, type Sink, type SinkOp, type SinkResult, type SinkType } from './sink.ts';

/** A content collection name as a directory name: path separators and dots-only names cannot escape output_dir. */
function dirName(collection: string): string {
  const safe = collection.replace(/[/\\\0]/g, '_');
  return safe === '' || /^\.+$/.test(safe) ? `_${safe}` : safe;
}

/**
 * The Elastic Open Crawler's file name for a URL (output_sink/file.rb): the
 * URL without a trailing "/", every run of characters other than letters,
 * digits, - and _ made one "_", without its leading scheme and "www_"; a
 * name over 255 characters loses its middle (its first 128 and last 122
 * characters are kept).
 */
export function elasticFileName(url: string): string {
  const u = url.endsWith('/') ? url.slice(0, -1) : url;
  let name = u.replace(/[^a-zA-Z0-9\-_]/g, '_').replace(/_+/g, '_').replace(/^https?_?(www_)?/, '');
  if (name.length > 255) name = name.slice(0, 128) + name.slice(name.length - 122);
  return name;
}

export class FileSink implements Sink {
  readonly type = 'file';
  readonly name: string;
  readonly outputDir: string;
  readonly schema: DocumentSchema;
  private readonly byUrl: boolean;
  private readonly made = new Set<string>();

  constructor(name: string, outputDir: string, schema: DocumentSchema = 'app_search', naming: string = 'sha1') {
    this.name = name;
    this.outputDir = outputDir;
    this.schema = schema;
    this.byUrl = naming === 'url';
  }

  pathOf(collection: string, id: string, url?: string): string {
    if (this.byUrl && url !== undefined) return join(this.outputDir, `${elasticFileName(url)}.json`);
    return join(this.outputDir, dirName(collection), `${id}.json`);
  }

  async submit(batch: readonly SinkOp[]): Promise<SinkResult> {
    for (const b of batch) {
      const collection = b.op === 'index' ? b.doc.collection : b.collection;
      const path = this.pathOf(collection, b.op === 'index' ? b.doc.id : b.id, b.op === 'index' ? b.doc.url : b.url);
      const json = b.op === 'index' ? sinkDocument(b.doc, this.schema) : undefined;
      try {
        if (json === undefined) {
          // a delete, or a document this schema does not index
          await rm(path, { force: true });
          continue;
        }
        const dir = this.byUrl ? this.outputDir : join(this.outputDir, dirName(collection));
        if (!this.made.has(dir)) {
          await mkdir(dir, { recursive: true });
          this.made.add(dir);
        }
        const tmp = `${path}.tmp`;
        await writeFile(tmp, `${JSON.stringify(json, null, 2)}\n`, { flush: true });
        await rename(tmp, path);
      } catch (err) {
        // A full disk or a missing permission may pass: the whole batch is tried again later.
        throw trawlError('SINK_FILE_WRITE', { sink: this.name, path, reason: (err as Error).message }, { cause: err });
      }
    }
    return { rejected: [] };
  }

  async close(): Promise<void> {}
}

export const FILE_SINK: SinkType = {
  type: 'file',
  problems: configRulesFor,
  open: (name, s) => new FileSink(name, s.outputDir!, s.schema as DocumentSchema | undefined, s.fileNaming),
};
