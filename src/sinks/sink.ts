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

import { sinkProblems } from '../config/rules.ts';

import type { UriRecord } from '../store/record-store.ts';
import type { DocumentSchema, SearchDocument } from './document.ts';

/** What a document was built from: the record and the stored bytes, for sinks that keep files as fetched (the repository sink). */
export interface DocumentSourceData {
  readonly record: UriRecord;
  readonly body: Uint8Array;
  /** The stored response header block (store_http_header), when kept. */
  readonly header: string | undefined;
  readonly mime: string;
}

export type SinkOp =
  | { readonly op: 'index'; readonly doc: SearchDocument; readonly source?: DocumentSourceData; readonly kind?: 'article' | 'hub' }
  | { readonly op: 'delete'; readonly id: string; readonly url: string; readonly collection: string };

export interface SinkResult {
  /** Operations the sink refused for good (a mapping error, a 4xx): by position in the batch, with the reason. */
  readonly rejected: ReadonlyArray<{ readonly index: number; readonly reason: string }>;
}

export interface Sink {
  readonly name: string;
  readonly type: string;
  /** The schema its documents are written in (`trawl_sinks.<sink>.schema`); app_search when absent. */
  readonly schema?: DocumentSchema;
  /**
   * Submits a batch. Resolves once the sink has it (durably, for the file
   * sink); rejects when the batch may be retried as a whole (the sink is
   * unreachable, overloaded, or failed for a reason that may pass).
   */
  submit(batch: readonly SinkOp[]): Promise<SinkResult>;
  /**
   * A sink that reports failed URIs (the jms sink with a status_queue, for a
   * submitted job): sends one URL Status Message per update and resolves once
   * the broker has them all; rejects when they may be sent again.
   */
  sendStatuses?(collection: string, updates: ReadonlyArray<{ readonly url: string; readonly status: number }>): Promise<void>;
  close(): Promise<void>;
}

/** The settings of one `trawl_sinks.<name>` section, secrets already revealed. */
export interface SinkSettings {
  readonly type?: string | undefined;
  /** app_search or open_crawler (document.ts DOCUMENT_SCHEMAS). */
  readonly schema?: string | undefined;
  readonly outputDir?: string | undefined;
  readonly url?: string | undefined;
  readonly index?: string | undefined;
  readonly pipeline?: string | undefined;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly apiKey?: string | undefined;
  readonly repositoryRoot?: string | undefined;
  readonly repositoryId?: string | undefined;
  readonly brokerUrl?: string | undefined;
  readonly ingestionQueue?: string | undefined;
  readonly clientId?: string | undefined;
  readonly jobId?: string | undefined;
  readonly statusQueue?: string | undefined;
  readonly submissionQueue?: string | undefined;
  readonly hubLinkIndicator?: string | undefined;
  readonly acceptPattern?: string | undefined;
  readonly acceptTypes?: readonly string[] | undefined;
  readonly fileNaming?: string | undefined;
  /** The console sink: json (default) or open_crawler (the Open Crawler's console output). */
  readonly consoleFormat?: string | undefined;
  /** The elasticsearch sink: "name=value" fields merged into each document sent through the pipeline. */
  readonly pipelineParams?: readonly string[] | undefined;
  readonly sslVerify?: boolean | undefined;
  readonly caPath?: string | undefined;
  readonly bulkMaxItems?: number | undefined;
  readonly bulkMaxBytes?: number | undefined;
  readonly requestTimeoutS?: number | undefined;
  readonly caFingerprint?: string | undefined;
  readonly compression?: boolean | undefined;
  readonly retries?: number | undefined;
  readonly retryDelayS?: number | undefined;
}

/** A problem in one sink's settings, naming its parameter (config/rules.ts `SinkProblem`). */
export interface SinkSettingsProblem {
  readonly param: string;
  readonly message: string;
  /** The type exists but this version cannot deliver to it: TRAWL_ERR_CONFIG_UNSUPPORTED, else TRAWL_ERR_CONFIG_RULE. */
  readonly unsupported: boolean;
}

/** What opening a sink needs besides its own settings. */
export interface SinkOpenContext {
  /** Reveals an !ENC! secret with the collection's key file; only called for values that are used. */
  readonly reveal: (value: string) => string;
}

/**
 * A kind of sink: the value of `trawl_sinks.<sink>.type` and how to check
 * and open one. Registered in `sink-registry.ts`; a new sink is its class
 * and this definition in one file, plus one entry in the registry's list.
 */
export interface SinkType {
  readonly type: string;
  /** What is wrong with one sink's settings; empty when it can be opened. `name` is the sink's section name. */
  problems(name: string, settings: SinkSettings): readonly SinkSettingsProblem[];
  /** What the operator should know about settings that are not wrong (an OpenWire URL mapped to STOMP); said when the sink opens. */
  notes?(name: string, settings: SinkSettings): string[];
  /** Opens the sink. Called only with settings `problems` found nothing wrong in. */
  open(name: string, settings: SinkSettings, cx: SinkOpenContext): Sink;
}

/**
 * The checks the configuration language makes for one sink of a built-in
 * type (config/rules.ts `sinkProblems`, which `config validate` reports with
 * their line): a built-in type's `problems`.
 */
export function configRulesFor(name: string, settings: SinkSettings): SinkSettingsProblem[] {
  return sinkProblems({ [name]: settings });
}
