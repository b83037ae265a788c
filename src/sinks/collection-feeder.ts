/** The feeder of one collection, as its settings describe it (shared by `trawl serve` and `trawl crawl`). */

import type { CollectionSettings } from '../config/registry.ts';
import { keyFilePath, loadKeyFile, revealSecret } from '../config/secrets.ts';
import type { ContentStore } from '../store/content-store.ts';
import type { CrawlStore } from '../store/crawl-store.ts';
import type { PPCounter } from '../stats/statistics.ts';
import { excludeTagsSet } from '../extract/elastic-content.ts';
import { compileRulesets } from '../extract/extraction-rules.ts';
import type { DocumentOptions } from './document.ts';
import { Feeder, type FeederOptions } from './feeder.ts';
import { sinkTypes, type SinkRegistry } from './sink-registry.ts';

export interface CollectionFeederOptions {
  readonly name: string;
  readonly settings: CollectionSettings;
  readonly destinations: ReadonlyMap<string, string>;
  readonly store: CrawlStore;
  readonly content: ContentStore;
  /** Where the !ENC! key file is looked for. */
  readonly dataDir: string;
  readonly paused: (destination: string) => boolean;
  readonly counters?: Readonly<Partial<Record<PPCounter, number>>>;
  readonly warn: (fields: Record<string, unknown>, message: string) => void;
  /** The sink types to open from (default: the process's, `sinkTypes`). */
  readonly sinkTypes?: SinkRegistry;
  readonly onDelivered?: FeederOptions['onDelivered'];
}

/** A started feeder, or undefined when the collection has no sinks. Throws when a sink is misconfigured. */
/** How the collection's search documents are built (pp ds_send_links, trawl_limits max_links_per_page, uri_search_mime): by the feeder and by `trawl export --document`. */
export function documentOptionsOf(s: CollectionSettings): Omit<DocumentOptions, 'collection' | 'crawlCollection'> {
  const t = s.trawlLimits;
  const rulesets = compileRulesets(s.extractionRulesets);
  return {
    allLinks: s.pp.dsSendLinks, maxLinks: t.maxLinksPerPage, htmlMime: s.uriSearchMime,
    limits: {
      titleBytes: t.maxTitleBytes, bodyBytes: t.maxBodyBytes, keywordsBytes: t.maxKeywordsBytes, descriptionBytes: t.maxDescriptionBytes, indexedLinks: t.maxIndexedLinks, headings: t.maxHeadings,
      elasticTagBytes: t.maxElasticTagBytes, dataAttributeBytes: t.maxDataAttributeBytes,
    },
    ...(rulesets.length > 0 ? { rulesets } : {}),
    ...(s.elastic.excludeTags?.length ? { excludeTags: excludeTagsSet(s.elastic.excludeTags) } : {}),
    ...(s.elastic.fullHtml ? { fullHtml: true } : {}),
    binaryMime: s.extraction.binaryMimeTypes,
    ...(s.extraction.defaultCharset !== 'utf-8' ? { defaultCharset: s.extraction.defaultCharset } : {}),
  };
}

export function collectionFeeder(o: CollectionFeederOptions): Feeder | undefined {
  const s = o.settings;
  // A submitted job (trawl_submission.job_id): its JID is the jms sinks' default JID, and its failures are reported.
  const job = s.submission.jobId;
  const sinkSettings = job === undefined ? s.sinks : Object.fromEntries(Object.entries(s.sinks).map(([k, v]) => [k, v.type === 'jms' && v.jobId === undefined ? { ...v, jobId: job } : v]));
  const sinks = (o.sinkTypes ?? sinkTypes).open(sinkSettings, (v) => revealSecret(v, () => loadKeyFile(keyFilePath(o.dataDir, s.secrets.keyFile))), (message) => o.warn({ collection: o.name }, message));
  if (sinks.length === 0) return undefined;
  const feeder = new Feeder({
    store: o.store,
    content: o.content,
    collection: o.name,
    destinations: o.destinations,
    sinks,
    paused: o.paused,
    documents: documentOptionsOf(s),
    ...(o.counters ? { counters: o.counters } : {}),
    onError: (message) => o.warn({ collection: o.name }, `feeding: ${message}`),
    onRejected: (url, sink, reason) => o.warn({ collection: o.name, url, sink }, `feeding: refused: ${reason}`),
    reportsFailures: job !== undefined,
    ...(o.onDelivered ? { onDelivered: o.onDelivered } : {}),
  });
  feeder.start();
  return feeder;
}
