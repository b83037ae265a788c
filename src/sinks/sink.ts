/**
 * Sinks: where fed documents end up (the "indexing engine" of MS-FSCADM).
 * A collection's `trawl_sinks` sections name them; every document fed to a
 * content destination (MS-FSCCFG 2.2.4.9 `feeding`) is written to each sink,
 * tagged with the destination's content collection.
 *
 *   feed outbox (crawl store) ──► Feeder ──► buildDocument ──► Sink.submit(batch)
 *
 * Delivery is at least once: the Feeder removes operations from the outbox
 * only after `submit` resolves, so a crash in between sends them again. Sinks
 * are idempotent on the document id (an update replaces, a delete of an
 * unknown id is not an error).
 */

import { TrawlError } from '../core/errors.ts';
import type { SearchDocument } from './document.ts';

export type SinkOp =
  | { readonly op: 'index'; readonly doc: SearchDocument }
  | { readonly op: 'delete'; readonly id: string; readonly url: string; readonly collection: string };

export interface SinkResult {
  /** Operations the sink refused for good (a mapping error, a 4xx): by position in the batch, with the reason. */
  readonly rejected: ReadonlyArray<{ readonly index: number; readonly reason: string }>;
}

export interface Sink {
  readonly name: string;
  readonly type: string;
  /**
   * Submits a batch. Resolves once the sink has it (durably, for the file
   * sink); rejects when the batch may be retried as a whole (the sink is
   * unreachable, overloaded, or failed for a reason that may pass).
   */
  submit(batch: readonly SinkOp[]): Promise<SinkResult>;
  close(): Promise<void>;
}

/** The settings of one `trawl_sinks.<name>` section, secrets already revealed. */
export interface SinkSettings {
  readonly type?: string | undefined;
  readonly outputDir?: string | undefined;
  readonly url?: string | undefined;
  readonly index?: string | undefined;
  readonly pipeline?: string | undefined;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly apiKey?: string | undefined;
}

/** Sink types this version delivers to; the others are refused by name when a collection is added. */
export const AVAILABLE_SINK_TYPES = ['console', 'file', 'elasticsearch'] as const;

/** Checks one sink's settings; the problem as a sentence naming the parameter, or undefined. */
export function sinkProblem(name: string, s: SinkSettings): string | undefined {
  const at = `trawl_sinks.${name}`;
  if (s.type === undefined) return `${at}.type is missing (one of ${AVAILABLE_SINK_TYPES.join(', ')})`;
  if (!(AVAILABLE_SINK_TYPES as readonly string[]).includes(s.type)) {
    return `${at}.type ${s.type} is not available in this version of trawl (available: ${AVAILABLE_SINK_TYPES.join(', ')})`;
  }
  if (s.type === 'file' && !s.outputDir) return `${at}: the file sink needs output_dir`;
  if (s.type === 'elasticsearch') {
    if (!s.url) return `${at}: the elasticsearch sink needs url`;
    try {
      const u = new URL(s.url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return `${at}.url ${s.url} is not an http(s) URL`;
    } catch {
      return `${at}.url ${JSON.stringify(s.url)} is not a URL`;
    }
  }
  return undefined;
}

export function checkSinks(sinks: Readonly<Record<string, SinkSettings>>): void {
  for (const [name, s] of Object.entries(sinks)) {
    const problem = sinkProblem(name, s);
    if (problem) throw new TrawlError(s.type !== undefined && !(AVAILABLE_SINK_TYPES as readonly string[]).includes(s.type) ? 'TRAWL_ERR_CONFIG_UNSUPPORTED' : 'TRAWL_ERR_CONFIG_RULE', problem);
  }
}
