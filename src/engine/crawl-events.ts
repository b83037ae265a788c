import type { CrawlEvent } from './crawl-types.ts';

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
  logScheduler = false;

  private readonly onEvent: ((e: CrawlEvent) => void) | undefined;

  constructor(onEvent: ((e: CrawlEvent) => void) | undefined) {
    this.onEvent = onEvent;
  }

  emit(e: CrawlEvent): void {
    if (e.type === 'fetch' && !this.logFetch) return;
    if (e.type === 'scheduler' && !this.logScheduler) return;
    this.onEvent?.(e);
  }
}
