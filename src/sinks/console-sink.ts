/**
 * The console sink (Elastic's `output_sink: console`): one JSON line per
 * operation on standard output, `{"op":"index",...document}` or
 * `{"op":"delete","id":…,"url":…,"collection":…}`.
 */

import { sinkDocument, type DocumentSchema } from './document.ts';
import { configRulesFor, type Sink, type SinkOp, type SinkResult, type SinkType } from './sink.ts';

export class ConsoleSink implements Sink {
  readonly type = 'console';
  readonly name: string;
  readonly schema: DocumentSchema;
  private readonly out: NodeJS.WritableStream;

  constructor(name: string, out: NodeJS.WritableStream = process.stdout, schema: DocumentSchema = 'app_search') {
    this.name = name;
    this.out = out;
    this.schema = schema;
  }

  async submit(batch: readonly SinkOp[]): Promise<SinkResult> {
    const lines = batch.map((b) => {
      if (b.op === 'delete') return JSON.stringify(b);
      const json = sinkDocument(b.doc, this.schema);
      // A document its schema does not index is a delete of that id.
      return JSON.stringify(json ? { op: 'index', ...json } : { op: 'delete', id: b.doc.id, url: b.doc.url, collection: b.doc.collection });
    }).join('\n');
    await new Promise<void>((resolve, reject) => this.out.write(`${lines}\n`, (err) => (err ? reject(err) : resolve())));
    return { rejected: [] };
  }

  async close(): Promise<void> {}
}

export const CONSOLE_SINK: SinkType = {
  type: 'console',
  problems: configRulesFor,
  open: (name, s) => new ConsoleSink(name, process.stdout, s.schema as DocumentSchema | undefined),
};
