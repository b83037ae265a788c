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
import { sinkProblems } from '../config/rules.ts';
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

/** Refuses sinks that are misconfigured or that this version cannot deliver to, naming the parameter. */
export function checkSinks(sinks: Readonly<Record<string, SinkSettings>>): void {
  const p = sinkProblems(sinks)[0];
  if (p) throw new TrawlError(p.unsupported ? 'TRAWL_ERR_CONFIG_UNSUPPORTED' : 'TRAWL_ERR_CONFIG_RULE', p.message);
}
