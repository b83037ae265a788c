/**
 * One page on its way through the pipeline (pipeline.ts): what it was
 * given when its response came in, and what the stages learnt about it so
 * far. One object per page, made once its fetch is over; the stages fill
 * its fields and one of them ends it with a PageOutcome.
 */

import type { DocSkipCode, UriSkipCode } from '../../core/skip-codes.ts';
import type { CollectionSettings } from '../../config/registry.ts';
import type { FetchOutcome, ResponseOutcome } from '../../fetch/http-fetcher.ts';
import type { PooledExtraction } from '../../extract/extract-wire.ts';
import type { SiteState } from '../../frontier/site-scheduler.ts';
import type { LeasedUri, QueuedUri, UriRecord } from '../../store/crawl-store.ts';
import type { SiteStats } from '../../stats/site-stats.ts';
import type { Claim } from '../duplicates.ts';

/**
 * How a page ends: the one value the outcome writer (outcome-writer.ts)
 * turns into the record, the links queued, the feed operations and the
 * counters. The links are the context's `links`.
 */
export type PageOutcome =
  /** The document was stored: a new or changed page (`modified`: its checksum changed), or an indexed channel. */
  | { readonly kind: 'stored'; readonly checksum: string; readonly contentRef: string; readonly modified: boolean }
  /** Not modified: a 304, or the checksum the record already holds. The record keeps its checksum and content. */
  | { readonly kind: 'unchanged' }
  /**
   * A duplicate of `of`, counted as DocSkip cs: by checksum (diffcheck;
   * `contentRef` when store_dupes kept a copy), or named by rel=canonical
   * (`canonical`: no checksum, and the copy stored before is deleted).
   */
  | { readonly kind: 'duplicate'; readonly of: string; readonly reason: string; readonly checksum: string | undefined; readonly contentRef: string | undefined; readonly canonical: boolean }
  /** A redirect (an HTTP status, or a quick meta refresh) to `to`; with `code` nr when it cannot be followed. */
  | { readonly kind: 'redirect'; readonly to: string | undefined; readonly code: 'nr' | undefined; readonly reason: string }
  /** Not stored, for a document skip code (counted as DocSkip). */
  | { readonly kind: 'skipped'; readonly code: DocSkipCode; readonly reason: string }
  /**
   * A failed fetch or an error status, after the http_errors policy
   * (MS-FSCCFG 2.2.4.11): fetched again in this cycle (`retry`), or recorded
   * as an error or deleted. `code`: a transport failure's skip code (counted
   * as DocSkip; undefined for an HTTP status); `errorCount` the failures in a row.
   */
  | { readonly kind: 'failed'; readonly action: 'retry' | 'error' | 'delete'; readonly httpStatus: number | undefined; readonly code: DocSkipCode | undefined; readonly reason: string; readonly errorCount: number }
  /** Turned away before any request (robots.txt, an address rule, the scope of a link another collection sent): counted as URISkip, no record. */
  | { readonly kind: 'refused'; readonly code: UriSkipCode; readonly reason: string }
  /** A sitemap: only its links are queued; no record is written, so the next cycle finds it again. */
  | { readonly kind: 'listed' };

export class PageContext {
  /** The links to queue, in order; stages add to it or replace it. */
  links: QueuedUri[] = [];
  /** The MIME type (set by the mime stage for a 2xx response): the record then describes this response. */
  mime: string | undefined = undefined;
  /** The page was parsed as HTML (uri_search_mime). */
  isHtml = false;
  /** What the extract stage found (HTML only). */
  extraction: PooledExtraction | undefined = undefined;
  /**
   * How the extract stage screened the links, for the links stage: links in
   * the screened cache are not judged again (screenFirst), and are looked
   * up there as extracted, before normalizing (rawFirst); `ownTag` is the
   * page's site's tag in the cache.
   */
  screenFirst = false;
  rawFirst = false;
  ownTag = 0;
  /** Meta robots and X-Robots-Tag (check_meta_robots), rss.follow_links. */
  noindex = false;
  nofollow = false;
  /** A quick meta refresh to follow as a redirect (html_redir_is_redir), normalized. */
  refreshTarget: string | undefined = undefined;
  /** rel=canonical, normalized. */
  canonical: string | undefined = undefined;
  /** The language the page declares (`<html lang>`). */
  declaredLang: string | undefined = undefined;
  /** The page as rendered (render stage, use_javascript): its HTML, and the URLs its script pushed onto the history or sent the window to. */
  rendered: { readonly html: Buffer; readonly urls: readonly string[] } | undefined = undefined;
  /** The document checksummed, stored and fed when it is not the response's body (javascript_keep_html: the rendered HTML). */
  document: Buffer | undefined = undefined;
  /** The content checksum (duplicate stage). */
  checksum: string | undefined = undefined;
  /** The checksum this page claims until its commit (duplicates.ts); the pipeline releases it. */
  claim: Claim | undefined = undefined;
  /** A place among limits.max_doc's documents was taken for this never-fetched URI (cycle-limits.ts); the outcome writer settles it. */
  newDocument = false;

  /**
   * @param site the site's scheduler state
   * @param uri the leased URI
   * @param previous its record before this fetch (undefined: never crawled)
   * @param fetched the fetch's outcome (undefined: refused before any request)
   * @param settings the effective settings of the URI's sub-collection
   * @param st the site's statistics
   * @param startedMs when processing began: the record's lastCrawledMs
   */
  readonly site: SiteState;
  readonly uri: LeasedUri;
  readonly previous: UriRecord | undefined;
  readonly fetched: FetchOutcome | undefined;
  readonly settings: CollectionSettings;
  readonly st: SiteStats;
  readonly startedMs: number;

  constructor(site: SiteState, uri: LeasedUri, previous: UriRecord | undefined, fetched: FetchOutcome | undefined, settings: CollectionSettings, st: SiteStats, startedMs: number) {
    this.site = site;
    this.uri = uri;
    this.previous = previous;
    this.fetched = fetched;
    this.settings = settings;
    this.st = st;
    this.startedMs = startedMs;
  }

  /** The response, for the stages after classify (which ends every page without one). */
  get response(): ResponseOutcome {
    return this.fetched as ResponseOutcome;
  }
}

/**
 * A step of the page pipeline: a long-lived object (made once per cycle)
 * whose `run` either passes the page on (undefined) or ends it with its
 * outcome. It returns a promise only when it waits for I/O, so that the
 * stages that need none cost no await.
 */
export interface PageStage {
  /** For traces and tests. */
  readonly name: string;
  run(ctx: PageContext): PageOutcome | undefined | Promise<PageOutcome | undefined>;
}
