/**
 * The Elastic crawler's periodic `crawl-status` event (the Open Crawler's
 * EventGenerator#log_crawl_status with its Crawl#status and Stats), for a
 * collection with trawl_elastic.events:
 *
 *   CrawlEvents ─ every Elastic record ─► ElasticCrawlStats.observe
 *                   crawl-start           the crawl's start (crawl_duration_msec)
 *                   url-discover          urls_allowed, urls_denied.<deny reason>
 *                   url-fetch             pages_visited, status_codes.<code>,
 *                                         crawling_time_msec (its event.duration)
 *   ElasticStatusTimer ─ when the loop starts, every trawl_elastic.stats_interval
 *                        seconds (stats_dump_interval, default 10), and once more
 *                        after crawl-end ─► one crawl-status record:
 *
 *   event.kind metric, event.type info, event.action crawl-status,
 *   crawler.status.queue_size, pages_visited, urls_allowed, urls_denied.<reason>,
 *   crawl_duration_msec, crawling_time_msec, avg_response_time_msec,
 *   active_threads, http_client.max_connections, http_client.used_connections,
 *   status_codes.<code>
 *
 * The counting is the Open Crawler's: from the records written, so that the
 * figures agree with the log. queue_size is the URIs queued and not started
 * (SiteScheduler.queuedTotal); active_threads and used_connections are the
 * site tasks under way, max_connections the crawl's request slots. Made only
 * when the Elastic log is on; otherwise nothing here runs.
 */

import type { Ecs, ElasticCrawl } from './elastic-events.ts';
import { crawlStatus } from './elastic-events.ts';

/** The figures Stats keeps, counted from the Elastic records. */
export class ElasticCrawlStats {
  private startedMs: number | undefined;
  private endedMs: number | undefined;
  private pagesVisited = 0;
  private crawlingTimeMs = 0;
  private urlsAllowed = 0;
  private readonly denied = new Map<string, number>();
  private readonly statusCodes = new Map<string, number>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  observe(ecs: Ecs): void {
    switch (ecs['event.action']) {
      case 'crawl-start':
        this.startedMs = this.now();
        this.endedMs = undefined;
        break;
      case 'crawl-end':
        this.endedMs = this.now();
        break;
      case 'url-discover':
        if (ecs['event.type'] === 'denied') {
          const reason = String(ecs['crawler.url.deny_reason']);
          this.denied.set(reason, (this.denied.get(reason) ?? 0) + 1);
        } else {
          this.urlsAllowed++;
        }
        break;
      case 'url-fetch': {
        const code = String(ecs['http.response.status_code']);
        this.pagesVisited++;
        this.statusCodes.set(code, (this.statusCodes.get(code) ?? 0) + 1);
        const ns = ecs['event.duration'];
        // Whole milliseconds, as the Open Crawler divides the nanoseconds.
        if (typeof ns === 'number') this.crawlingTimeMs += Math.floor(ns / 1_000_000);
        break;
      }
    }
  }

  /** Crawl#status: the fields of a crawl-status record, without its prefix. */
  status(queueSize: number, activeTasks: number, maxConnections: number): Record<string, unknown> {
    return {
      queue_size: queueSize,
      pages_visited: this.pagesVisited,
      urls_allowed: this.urlsAllowed,
      urls_denied: Object.fromEntries(this.denied),
      crawl_duration_msec: this.startedMs === undefined ? undefined : (this.endedMs ?? this.now()) - this.startedMs,
      crawling_time_msec: this.crawlingTimeMs,
      avg_response_time_msec: this.pagesVisited > 0 ? this.crawlingTimeMs / this.pagesVisited : 0,
      active_threads: activeTasks,
      http_client: { max_connections: maxConnections, used_connections: activeTasks },
      status_codes: Object.fromEntries(this.statusCodes),
    };
  }
}

/** What a crawl-status record is made from, read when it is written. */
export interface StatusSource {
  readonly crawl: () => ElasticCrawl | undefined;
  readonly stats: ElasticCrawlStats;
  readonly queueSize: () => number;
  readonly activeTasks: () => number;
  readonly maxConnections: number;
  readonly emit: (ecs: Ecs) => void;
}

/** Writes crawl-status records: now, every `intervalMs`, and when told (`dump`). */
export class ElasticStatusTimer {
  private timer: NodeJS.Timeout | undefined;
  private readonly src: StatusSource;
  private readonly intervalMs: number;

  constructor(src: StatusSource, intervalMs: number) {
    this.src = src;
    this.intervalMs = intervalMs;
  }

  start(): void {
    this.dump();
    this.timer = setInterval(() => this.dump(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  dump(): void {
    const crawl = this.src.crawl();
    if (!crawl) return;
    this.src.emit(crawlStatus(crawl, this.src.stats.status(this.src.queueSize(), this.src.activeTasks(), this.src.maxConnections)));
  }
}
