import type { CycleRow } from '../store/crawl-store.ts';
import type { CrawlEvent } from './crawl-types.ts';
import { toElastic, type Ecs, type ElasticCrawl } from './elastic-events.ts';
import type { ElasticCrawlStats } from './elastic-status.ts';

/**
 * Where a crawl's events go, with the two switches of MS-FSCCFG 2.2.4.5
 * `log`: `screened` (default none) logs every URI the scope, robots.txt or
 * the seen check turned away; `fetch` (default text) logs every downloaded
 * document, including why one was not stored; `scheduler` (default none)
 * logs the decisions of refresh_mode adaptive (adaptive-refresh.ts). The skip codes are counted in
 * the statistics either way. One per crawl; the switches are set from the
 * settings when a cycle is set up.
 */
export class CrawlEvents {
  logScreened = false;
  logFetch = true;
  /** The cycle being crawled: its ID, number and Elastic status as they change (cycle-lifecycle.ts), for whoever writes an event. */
  cycle: CycleRow | undefined = undefined;
  /**
   * trawl_elastic.events: the crawl whose events are also written in the
   * Elastic crawler's terms (elastic-events.ts); undefined: off, and the
   * emission points that only that log has do nothing.
   */
  elastic: ElasticCrawl | undefined = undefined;
  /** With `elastic`: the figures of its periodic crawl-status, counted from each record written (elastic-status.ts). */
  elasticStats: ElasticCrawlStats | undefined = undefined;
  logScheduler = false;

  private readonly onEvent: ((e: CrawlEvent) => void) | undefined;

  constructor(onEvent: ((e: CrawlEvent) => void) | undefined) {
    this.onEvent = onEvent;
  }

  emit(e: CrawlEvent): void {
    if (e.type === 'fetch' && !this.logFetch) return;
    if (e.type === 'scheduler' && !this.logScheduler) return;
    if (this.elastic !== undefined && e.ecs === undefined) {
      const ecs = toElastic(this.elastic, e);
      if (ecs !== undefined) this.elasticStats?.observe(ecs);
      this.onEvent?.(ecs !== undefined ? { ...e, ecs } : e);
      return;
    }
    this.onEvent?.(e);
  }

  /** An event only the Elastic log has (crawl-start, url-seed, …), built by the caller while `elastic` is set. */
  emitElastic(ecs: Ecs): void {
    this.elasticStats?.observe(ecs);
    const action = ecs['event.action'];
    const url = ecs['url.full'];
    this.onEvent?.({ type: 'elastic', message: typeof action === 'string' ? action : 'event', ...(typeof url === 'string' ? { url } : {}), ecs });
  }
}
