/**
 * `--citeseerx FILE --repository-root DIR` (trawl crawl, trawl serve): the
 * jms sink CiteSeerX's csx-heritrix.xml describes, added to every collection
 * as the sink `citeseerx` (config/csx-heritrix.ts).
 */

import { resolve } from 'node:path';
import { TrawlError } from '../core/errors.ts';
import { CSX_SINK_NAME, readCsxHeritrix, type CsxSinkSettings, type CsxSubmissions } from '../config/csx-heritrix.ts';
import type { CollectionSettings } from '../config/registry.ts';
import { withSubmissionProfile } from '../config/csx-profile.ts';
import type { CollectionConfig } from '../config/model.ts';

export const CITESEERX_HELP = {
  file: 'CiteSeerX\'s csx-heritrix.xml, as it is: every collection also feeds the jms sink it describes (named citeseerx), and trawl serve makes a job of each URL Submission Message on its newSubmissionsChannel; needs --repository-root',
  root: 'the CiteSeerX repository root the --citeseerx sink writes files and CrawlData sidecars under',
} as const;

/** The sink the options describe, after saying what the file asks for that is not applied; undefined without --citeseerx. */
export function citeseerxSink(opts: { citeseerx?: string | undefined; repositoryRoot?: string | undefined }, warn: (message: string) => void): CsxSinkSettings | undefined {
  return citeseerxConfig(opts, warn, false)?.sink;
}

/** trawl serve: the sink, and the submissions queue the daemon consumes (when the file names one). */
export function citeseerxConfig(opts: { citeseerx?: string | undefined; repositoryRoot?: string | undefined }, warn: (message: string) => void, serving: boolean): { sink: CsxSinkSettings; submissions?: CsxSubmissions | undefined } | undefined {
  if (opts.citeseerx === undefined) {
    if (opts.repositoryRoot !== undefined) throw new TrawlError('TRAWL_ERR_USAGE', '--repository-root is for --citeseerx FILE; give both, or set repository_root in a trawl_sinks section');
    return undefined;
  }
  if (opts.repositoryRoot === undefined) throw new TrawlError('TRAWL_ERR_USAGE', '--citeseerx needs --repository-root DIR: the directory the CiteSeerX ingestion system reads files from (Heritrix\'s was its jobs/ directory)');
  const c = readCsxHeritrix(opts.citeseerx, resolve(opts.repositoryRoot), serving);
  for (const w of c.warnings) warn(w);
  return c;
}

/** A collection's settings with the --citeseerx sink added (replacing a sink of the same name, with a warning). */
export function withCiteseerxSink(s: CollectionSettings, sink: CsxSinkSettings | undefined, collection: string, warn: (message: string) => void): CollectionSettings {
  if (sink === undefined) return s;
  if (CSX_SINK_NAME in s.sinks) warn(`collection ${collection}: its trawl_sinks.${CSX_SINK_NAME} is replaced by the --citeseerx sink`);
  const full: CollectionSettings['sinks'][string] = {
    type: sink.type, schema: undefined, outputDir: undefined, url: undefined, index: undefined, pipeline: undefined, username: undefined, password: undefined, apiKey: undefined,
    fileNaming: 'sha1', consoleFormat: 'json', pipelineParams: undefined, sslVerify: true, caPath: undefined, bulkMaxItems: undefined, bulkMaxBytes: undefined, requestTimeoutS: 60, caFingerprint: undefined, compression: false, retries: 0, retryDelayS: 2,
    repositoryRoot: sink.repositoryRoot, repositoryId: sink.repositoryId, brokerUrl: sink.brokerUrl, ingestionQueue: sink.ingestionQueue, clientId: sink.clientId, jobId: undefined, statusQueue: sink.statusQueue, submissionQueue: undefined, hubLinkIndicator: sink.hubLinkIndicator, acceptPattern: undefined, acceptTypes: undefined,
  };
  return { ...s, sinks: { ...s.sinks, [CSX_SINK_NAME]: full } };
}

/**
 * With --citeseerx, a collection crawls as the User Submission profile does
 * (politeness, retries, User-Agent and From) where its configuration does
 * not say otherwise (config/csx-profile.ts); what is applied is said once.
 */
export function withCiteseerxProfile(c: CollectionConfig, sink: CsxSinkSettings | undefined, warn: (message: string) => void): CollectionConfig {
  if (sink === undefined) return c;
  const { config, applied } = withSubmissionProfile(c);
  if (applied.length > 0) warn(`collection ${c.name}: the CiteSeerX User Submission profile applies: ${applied.join('; ')}`);
  return config;
}
