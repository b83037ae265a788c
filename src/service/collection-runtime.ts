/**
 * What a collection needs open to be crawled and fed, opened one way for
 * `trawl crawl` (one cycle) and `trawl serve` (cycle after cycle), so the
 * two cannot drift:
 *
 *   openCollectionRuntime(config, settings)
 *     ├─ content store    <dataDir>/content/<name>  (the settings' storage section)
 *     ├─ destinations     feeding sections, or `default` → the collection's own name
 *     ├─ feeder           the trawl_sinks sinks, started; none without sinks
 *     └─ newCrawl(…)      a CollectionCrawl on the crawl store and this content
 *                         store, feeding these destinations
 *
 * The crawl store is the caller's: one per process, shared by its collections.
 */

import { urlOutput } from '../engine/elastic-events.ts';
import { join } from 'node:path';
import type { CollectionSettings } from '../config/registry.ts';
import type { CollectionConfig } from '../config/model.ts';
import { CollectionCrawl, type CrawlerOptions } from '../engine/crawler.ts';
import { ScreenedCaches } from '../engine/link-screening.ts';
import type { EgressPolicy } from '../fetch/egress.ts';
import { collectionFeeder } from '../sinks/collection-feeder.ts';
import type { Feeder } from '../sinks/feeder.ts';
import { destinationsOf, pausedByConfig } from '../sinks/feeding.ts';
import type { SinkRegistry } from '../sinks/sink-registry.ts';
import type { PPCounter } from '../stats/statistics.ts';
import type { ContentStore } from '../store/content-store.ts';
import type { CrawlStore } from '../store/crawl-store.ts';
import { openContentStore } from '../store/open-content-store.ts';

export interface RuntimeOptions {
  readonly config: CollectionConfig;
  /** The collection's settings for this node (`resolveSettings(config, { node })`). */
  readonly settings: CollectionSettings;
  readonly store: CrawlStore;
  /** The data directory: the content store lives under it, the !ENC! key file is looked for in it, and crawls watch its disk. */
  readonly dataDir: string;
  readonly node?: string | undefined;
  /** Overrides of the collection's trawl_egress settings (CLI flags). */
  readonly egress?: Partial<EgressPolicy> | undefined;
  /** Requests in flight at once over all sites, for every crawl of this runtime. */
  readonly maxConcurrency: number;
  /** Whether a destination is paused right now; default: as the configuration says. */
  readonly paused?: (destination: string) => boolean;
  /** Feeding counters to continue from (after a restart). */
  readonly counters?: Readonly<Partial<Record<PPCounter, number>>>;
  readonly warn: (fields: Record<string, unknown>, message: string) => void;
  /**
   * The sinks could not be opened (a misconfigured sink, an unreadable key
   * file). Given: told here, and the runtime has no feeder. Absent: opening
   * the runtime fails with that error.
   */
  readonly onSinkError?: (err: unknown) => void;
  /** The sink types to open from (default: the process's). */
  readonly sinkTypes?: SinkRegistry;
}

/** What a crawl of this runtime may add to (or override in) the options every crawl of it gets. */
export type CrawlExtras = Omit<CrawlerOptions, 'store' | 'content' | 'feedTo' | 'onFeed'>;

export class CollectionRuntime {
  readonly config: CollectionConfig;
  readonly content: ContentStore;
  /** Content destination → content collection (MS-FSCCFG 2.2.4.9). */
  readonly destinations: ReadonlyMap<string, string>;
  /** Drains the feed outbox into the sinks; undefined when the collection has none. */
  readonly feeder: Feeder | undefined;
  private readonly o: RuntimeOptions;
  /** The screened-URI cache kept from one cycle for the next: trawl serve makes a crawl object per cycle. */
  private readonly screenedCaches = new ScreenedCaches();
  /** The latest crawl and where its events go: the Elastic event log's url-output goes there too. */
  private current: { crawl: CollectionCrawl; onEvent: CrawlExtras['onEvent'] } | undefined;

  constructor(o: RuntimeOptions, content: ContentStore, destinations: ReadonlyMap<string, string>, feeder: Feeder | undefined) {
    this.o = o;
    this.config = o.config;
    this.content = content;
    this.destinations = destinations;
    this.feeder = feeder;
  }

  /** The destinations a change is fed to: none without a feeder, since nothing would send them. */
  get feedTo(): string[] {
    return this.feeder ? [...this.destinations.keys()] : [];
  }

  /** A crawl of the collection; `extras` are its per-command options (events, links sent, operator state, limits). */
  newCrawl(extras: CrawlExtras): CollectionCrawl {
    const feeder = this.feeder;
    const crawl = new CollectionCrawl(this.config, {
      store: this.o.store,
      content: this.content,
      maxConcurrency: this.o.maxConcurrency,
      dataDir: this.o.dataDir,
      ...(this.o.node !== undefined ? { node: this.o.node } : {}),
      ...(this.o.egress ? { egress: this.o.egress } : {}),
      ...(feeder ? { feedTo: [...this.destinations.keys()], onFeed: () => feeder.poke() } : {}),
      ...(feeder?.reportsFailures ? { reportFailures: true } : {}),
      screenedCaches: this.screenedCaches,
      ...extras,
    });
    this.current = { crawl, onEvent: extras.onEvent };
    return crawl;
  }

  /** The Elastic event log's url-output for a document a sink took or refused, in the latest crawl's log. */
  elasticOutput(url: string, sink: string, ok: boolean, message: string, startMs: number, endMs: number): void {
    const c = this.current;
    const id = c?.crawl.elasticCrawlId;
    if (!c?.onEvent || id === undefined) return;
    c.onEvent({ type: 'elastic', url, message: 'url-output', ecs: urlOutput({ id }, url, sink, ok, message, startMs, endMs) });
  }

  /** A crawl object for queueing while no cycle runs: it checks scope and writes the queue. */
  probe(): CollectionCrawl {
    return new CollectionCrawl(this.config, { store: this.o.store, content: this.content });
  }

  /** Stops the feeder (what it has not sent stays in the outbox) and closes the content store. */
  async close(): Promise<void> {
    await this.feeder?.stop();
    await this.content.close();
  }
}

export function openCollectionRuntime(o: RuntimeOptions): CollectionRuntime {
  const s = o.settings;
  const name = o.config.name;
  const content = openContentStore(join(o.dataDir, 'content', name), { ...s.storage });
  const destinations = destinationsOf(s, name);
  let feeder: Feeder | undefined;
  // The feeder is made before the runtime it tells of each document delivered.
  const made: { runtime?: CollectionRuntime } = {};
  try {
    feeder = collectionFeeder({
      ...(s.elastic.events ? { onDelivered: (url: string, sink: string, ok: boolean, message: string, startMs: number, endMs: number) => made.runtime?.elasticOutput(url, sink, ok, message, startMs, endMs) } : {}),
      name, settings: s, destinations, store: o.store, content, dataDir: o.dataDir,
      paused: o.paused ?? ((d) => pausedByConfig(s, d)), warn: o.warn,
      ...(o.counters ? { counters: o.counters } : {}),
      ...(o.sinkTypes ? { sinkTypes: o.sinkTypes } : {}),
    });
  } catch (err) {
    if (!o.onSinkError) {
      void content.close().catch(() => undefined);
      throw err;
    }
    o.onSinkError(err);
  }
  made.runtime = new CollectionRuntime(o, content, destinations, feeder);
  return made.runtime;
}
