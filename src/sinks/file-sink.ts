/**
 * The file sink (Elastic's `output_sink: file`): one JSON file per document,
 * `<output_dir>/<content collection>/<id>.json`, where the id is the SHA-1
 * of the URL. An update replaces the file, a delete removes it. Each file
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

export class FileSink implements Sink {
  readonly type = 'file';
  readonly name: string;
  readonly outputDir: string;
  readonly schema: DocumentSchema;
  private readonly made = new Set<string>();

  constructor(name: string, outputDir: string, schema: DocumentSchema = 'app_search') {
    this.name = name;
    this.outputDir = outputDir;
    this.schema = schema;
  }

  pathOf(collection: string, id: string): string {
    return join(this.outputDir, dirName(collection), `${id}.json`);
  }

  async submit(batch: readonly SinkOp[]): Promise<SinkResult> {
    for (const b of batch) {
      const collection = b.op === 'index' ? b.doc.collection : b.collection;
      const path = this.pathOf(collection, b.op === 'index' ? b.doc.id : b.id);
      const json = b.op === 'index' ? sinkDocument(b.doc, this.schema) : undefined;
      try {
        if (json === undefined) {
          // a delete, or a document this schema does not index
          await rm(path, { force: true });
          continue;
        }
        const dir = join(this.outputDir, dirName(collection));
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
  open: (name, s) => new FileSink(name, s.outputDir!, s.schema as DocumentSchema | undefined),
};
