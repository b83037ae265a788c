/** Opens the sinks a collection's `trawl_sinks` sections describe, from the process's sink registry. */

import type { Sink, SinkSettings } from './sink.ts';
import { sinkTypes } from './sink-registry.ts';

export function openSinks(sinks: Readonly<Record<string, SinkSettings>>, reveal: (value: string) => string = (v) => v): Sink[] {
  return sinkTypes.open(sinks, reveal);
}

/** Refuses sinks that are misconfigured or that this version cannot deliver to, naming the parameter. */
export function checkSinks(sinks: Readonly<Record<string, SinkSettings>>): void {
  sinkTypes.check(sinks);
}
