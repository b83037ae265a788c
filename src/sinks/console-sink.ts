/**
 * The console sink (Elastic's `output_sink: console`): one JSON line per
 * operation on standard output, `{"op":"index",...document}` or
 * `{"op":"delete","id":…,"url":…,"collection":…}`.
 */

import { configRulesFor, type Sink, type SinkOp, type SinkResult, type SinkType } from './sink.ts';

export class ConsoleSink implements Sink {
  readonly type = 'console';
  readonly name: string;
  private readonly out: NodeJS.WritableStream;

  constructor(name: string, out: NodeJS.WritableStream = process.stdout) {
    this.name = name;
    this.out = out;
  }

  async submit(batch: readonly SinkOp[]): Promise<SinkResult> {
    const lines = batch.map((b) => JSON.stringify(b.op === 'index' ? { op: 'index', ...b.doc } : b)).join('\n');
    await new Promise<void>((resolve, reject) => this.out.write(`${lines}\n`, (err) => (err ? reject(err) : resolve())));
    return { rejected: [] };
  }

  async close(): Promise<void> {}
}

export const CONSOLE_SINK: SinkType = {
  type: 'console',
  problems: configRulesFor,
  open: (name) => new ConsoleSink(name),
};
