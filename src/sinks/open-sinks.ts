/** Opens the sinks a collection's `trawl_sinks` sections describe (secrets revealed only here, when they are used). */

import { ConsoleSink } from './console-sink.ts';
import { ElasticsearchSink } from './elasticsearch-sink.ts';
import { FileSink } from './file-sink.ts';
import { checkSinks, type Sink, type SinkSettings } from './sink.ts';

export function openSinks(sinks: Readonly<Record<string, SinkSettings>>, reveal: (value: string) => string = (v) => v): Sink[] {
  checkSinks(sinks);
  return Object.entries(sinks).map(([name, s]) => {
    if (s.type === 'console') return new ConsoleSink(name);
    if (s.type === 'file') return new FileSink(name, s.outputDir!);
    return new ElasticsearchSink(name, {
      ...s,
      ...(s.password !== undefined ? { password: reveal(s.password) } : {}),
      ...(s.apiKey !== undefined ? { apiKey: reveal(s.apiKey) } : {}),
    });
  });
}
