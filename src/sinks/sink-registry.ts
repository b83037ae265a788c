/**
 * The sink types this process can open, by `trawl_sinks.<sink>.type`.
 *
 *   trawl_sinks.<name> { type, … } ──► registry.get(type) ──► SinkType.problems / .open ──► Sink
 *                                       unknown type: config/rules.ts says why
 *                                       (reserved for later, or not a type at all)
 *
 * The names the configuration language accepts are listed once, in
 * `core/sink-types.ts` (config may not import sinks); `BUILTIN_SINK_TYPES`
 * must implement exactly its available ones (test/sinks/sink-registry.test.ts).
 * Further types (a test's, later a plugin's) are registered at startup with
 * `register`.
 */

import { TrawlError } from '../core/errors.ts';
import { sinkProblems } from '../config/rules.ts';
import { CONSOLE_SINK } from './console-sink.ts';
import { ELASTICSEARCH_SINK } from './elasticsearch-sink.ts';
import { FILE_SINK } from './file-sink.ts';
import { JMS_SINK, REPOSITORY_SINK } from './repository-sink.ts';
import { FilteredSink, sinkFilterOf } from './sink-filter.ts';
import type { Sink, SinkSettings, SinkSettingsProblem, SinkType } from './sink.ts';

/** The types this version delivers to: one entry each. */
export const BUILTIN_SINK_TYPES: readonly SinkType[] = [CONSOLE_SINK, FILE_SINK, ELASTICSEARCH_SINK, REPOSITORY_SINK, JMS_SINK];

export class SinkRegistry {
  private readonly byType = new Map<string, SinkType>();

  constructor(types: readonly SinkType[] = BUILTIN_SINK_TYPES) {
    for (const t of types) this.register(t);
  }

  /** Adds a type. Registering a name twice is a bug in the caller. */
  register(t: SinkType): this {
    if (this.byType.has(t.type)) throw new Error(`sink type ${JSON.stringify(t.type)} is registered twice`);
    this.byType.set(t.type, t);
    return this;
  }

  get(type: string): SinkType | undefined {
    return this.byType.get(type);
  }

  /** The registered type names, in registration order. */
  get types(): string[] {
    return [...this.byType.keys()];
  }

  /** Every problem of the sinks, in section order; an unregistered type is told by the configuration's own rules. */
  problems(sinks: Readonly<Record<string, SinkSettings>>): SinkSettingsProblem[] {
    const out: SinkSettingsProblem[] = [];
    for (const [name, s] of Object.entries(sinks)) {
      const t = s.type === undefined ? undefined : this.byType.get(s.type);
      out.push(...(t ? t.problems(name, s) : sinkProblems({ [name]: s })));
    }
    return out;
  }

  /** The notes of every sink, in section order (for `trawl crawl` to print before it crawls). */
  notes(sinks: Readonly<Record<string, SinkSettings>>): string[] {
    return Object.entries(sinks).flatMap(([name, s]) => (s.type === undefined ? undefined : this.byType.get(s.type))?.notes?.(name, s) ?? []);
  }

  /** Refuses sinks that are misconfigured or that this process cannot deliver to, naming the parameter. */
  check(sinks: Readonly<Record<string, SinkSettings>>): void {
    const p = this.problems(sinks)[0];
    if (p) throw new TrawlError(p.unsupported ? 'TRAWL_ERR_CONFIG_UNSUPPORTED' : 'TRAWL_ERR_CONFIG_RULE', p.message);
  }

  /** Opens every sink, after checking them all (secrets are revealed only here, when they are used). */
  open(sinks: Readonly<Record<string, SinkSettings>>, reveal: (value: string) => string = (v) => v, warn?: (message: string) => void): Sink[] {
    this.check(sinks);
    const cx = { reveal };
    return Object.entries(sinks).map(([name, s]) => {
      const t = this.byType.get(s.type!)!;
      for (const note of t.notes?.(name, s) ?? []) warn?.(note);
      const sink = t.open(name, s, cx);
      const filter = sinkFilterOf(s);
      return filter === undefined ? sink : new FilteredSink(sink, filter);
    });
  }
}

/** The registry `trawl crawl` and `trawl serve` open sinks from. */
export const sinkTypes = new SinkRegistry();
