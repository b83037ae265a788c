/**
 * The one place a page's outcome becomes what the crawl keeps of it:
 *
 *   PageOutcome ─► counters (the cycle's totals, the site's statistics, DocSkip / URISkip)
 *               ─► the record (status, checksum, content, what it duplicates or redirects to)
 *               ─► the links queued (the context's links, past refresh-only, the screened
 *                  cache, smfilter and quarantines)
 *               ─► the feed operations (add / update / delete per content destination)
 *               ─► ONE crawl store transaction (complete), then the stored copy it replaced
 *                  is deleted
 *
 * Stages decide and write nothing of their own; what they observed about
 * the fetch itself (bytes, the HTTP status, the MIME type, the links they
 * screened) they count where they see it.
 */

import { urlExtracted } from './elastic-events.ts';
import type { DocSkipCode } from '../core/skip-codes.ts';
import { statusToReport, type FailedUri } from '../core/heritrix-status.ts';
import { STATUS_DESTINATION } from '../store/feed-outbox.ts';
import type { FeedOp, QueuedUri, RecordStatus, UriRecord } from '../store/crawl-store.ts';
import { URI_FLAGS } from '../store/crawl-store.ts';
import type { SiteStats } from '../stats/site-stats.ts';
import type { CycleEnv } from './cycle-env.ts';
import type { PageContext, PageOutcome } from './pipeline/page-context.ts';

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** Whether the destinations have (had) the document: it was stored with content. */
export function wasFed(r: UriRecord | undefined): boolean {
  return r !== undefined && r.contentRef !== undefined && (r.status === 'stored' || r.status === 'unchanged');
}

export class OutcomeWriter {
  private readonly env: CycleEnv;

  constructor(env: CycleEnv) {
    this.env = env;
  }

  /** Counts, records, queues and feeds what `o` says of the page, in one transaction. */
  async write(ctx: PageContext, o: PageOutcome): Promise<void> {
    const { c } = this.env.stats;
    const { st, uri, previous } = ctx;
    if (ctx.newDocument) this.env.limits.settleNewDocument(o.kind === 'stored');
    switch (o.kind) {
      case 'stored': {
        c.stored++;
        if (this.env.events.elastic) this.env.events.emitElastic(urlExtracted(this.env.events.elastic, uri.url, 'success'));
        st.add('Stored');
        if (o.modified) st.add('Modified');
        const rec = this.record(ctx, 'stored');
        rec.checksum = o.checksum;
        rec.contentRef = o.contentRef;
        // A page that was a duplicate no longer is: its original's additional_urls change.
        const wasDuplicateOf = previous?.status === 'duplicate' ? previous.duplicateOf : undefined;
        this.env.adaptive?.observe(uri.url, uri.site, previous, o.modified, rec.lastModified, rec.mime, uri.depth, uri.parent, ctx.startedMs);
        await this.commit(ctx, rec, ctx.links, [...this.feedOps(uri.url, wasFed(previous) ? 'update' : 'add'), ...(wasDuplicateOf ? this.feedOps(wasDuplicateOf, 'update') : [])]);
        // A never-fetched URI's document was counted as its place was settled, above.
        if (!wasFed(previous) && !ctx.newDocument) this.env.limits.noteDocuments(1);
        if (previous?.contentRef && previous.contentRef !== o.contentRef) await this.env.content.delete(previous.contentRef);
        return;
      }
      case 'unchanged':
        c.unchanged++;
        st.add('Unchanged');
        this.env.adaptive?.observe(uri.url, uri.site, previous, false, previous?.lastModified, previous?.mime, uri.depth, uri.parent, ctx.startedMs);
        await this.commit(ctx, this.record(ctx, 'unchanged'), ctx.links, this.refeedOps(ctx));
        return;
      case 'duplicate': {
        c.duplicates++;
        this.docSkip(st, 'cs', uri.url, o.reason);
        const rec = this.record(ctx, 'duplicate');
        rec.checksum = o.checksum;
        rec.duplicateOf = o.of;
        rec.skipCode = 'cs';
        rec.contentRef = o.contentRef;
        // The original's document lists this URL in additional_urls: it is fed again (unless it already was).
        // (A rel=canonical target may not be fetched at all: it shows the URL when it is next fed.)
        const again = o.canonical || (previous?.status === 'duplicate' && previous.duplicateOf === o.of) ? [] : this.feedOps(o.of, 'update');
        await this.commit(ctx, rec, ctx.links, [...this.unfeedOps(uri.url, previous), ...again]);
        if (wasFed(previous)) this.env.limits.noteDocuments(-1);
        if (o.canonical && previous?.contentRef) await this.env.content.delete(previous.contentRef);
        return;
      }
      case 'redirect': {
        if (o.code !== undefined) this.docSkip(st, o.code, uri.url, o.reason);
        const rec = this.record(ctx, 'redirect');
        rec.redirectTo = o.to;
        rec.skipCode = o.code;
        await this.commit(ctx, rec, ctx.links, []);
        return;
      }
      case 'skipped': {
        this.docSkip(st, o.code, uri.url, o.reason);
        const rec = this.record(ctx, 'skipped');
        rec.skipCode = o.code;
        const blocked = this.env.opts.reportFailures && ctx.fetched?.kind === 'failure' && ctx.fetched.blocked;
        await this.commit(ctx, rec, ctx.links, blocked ? this.statusOps(uri.url, { kind: 'blocked' }) : []);
        return;
      }
      case 'failed':
        return this.failed(ctx, o);
      case 'refused':
        this.env.screening.skipUri(ctx.site.site, o.code, uri.url, o.reason);
        await this.commit(ctx, undefined, ctx.links, this.env.opts.reportFailures ? this.statusOps(uri.url, { kind: 'refused', code: o.code }) : []);
        return;
      case 'listed':
        await this.commit(ctx, undefined, ctx.links, []);
        return;
    }
  }

  /** MS-FSCCFG 2.2.4.11: RETRY within the cycle, else an error record, or DELETE after X failures in a row. */
  private async failed(ctx: PageContext, o: PageOutcome & { kind: 'failed' }): Promise<void> {
    const env = this.env;
    const { c } = env.stats;
    const { st, site, uri, previous } = ctx;
    if (o.code !== undefined) this.docSkip(st, o.code, uri.url, o.reason);
    if (o.action === 'retry') {
      c.retries++;
      st.add('Retries');
      await env.store.retry(env.name, uri.id);
      // Through addWork: the site may have left the active set while the retry was written.
      env.sched.addWork(site.site, 1);
    } else {
      c.errors++;
      const rec = this.record(ctx, o.action === 'delete' ? 'deleted' : 'error');
      rec.httpStatus = o.httpStatus;
      rec.errorCount = o.errorCount;
      rec.skipCode = o.code;
      if (o.action === 'delete') {
        rec.contentRef = undefined;
        rec.checksum = undefined;
      }
      const status = env.opts.reportFailures ? this.statusOps(uri.url, { kind: 'failed', httpStatus: o.httpStatus, code: o.code, reason: o.reason }) : [];
      if (o.action === 'delete' && previous?.contentRef) {
        c.deleted++;
        st.add('Deleted');
        await this.commit(ctx, rec, ctx.links, [...this.feedOps(uri.url, 'delete'), ...status]);
        if (wasFed(previous)) env.limits.noteDocuments(-1);
        await env.content.delete(previous.contentRef);
      } else {
        // trawl_purge (the Elastic crawler's rule): a fed document whose page answers 5xx is kept, and the destinations
        // get it marked inaccessible (sinks/feeder.ts), until http_errors deletes it (5xx DELETE:3, three cycles in a row).
        const inaccessible = o.httpStatus !== undefined && o.httpStatus >= 500 && o.httpStatus < 600 && env.rt.settings.purge.enabled
          && (wasFed(previous) || (previous?.status === 'error' && previous.contentRef !== undefined));
        await this.commit(ctx, rec, ctx.links, inaccessible ? [...this.feedOps(uri.url, 'inaccessible'), ...status] : status);
      }
    }
    // A transport failure may have closed the site (max_backoff_counter): what it has queued waits for the next cycle.
    if (o.code !== undefined && site.closed) await env.store.dropQueued(env.name, site.site);
  }

  /** Counts a document not stored; logged with its reason under log.fetch. */
  docSkip(st: SiteStats, code: DocSkipCode, url: string, reason: string): void {
    this.env.stats.docSkip(st, code);
    if (this.env.events.logFetch) this.env.events.emit({ type: 'skip', url, code, message: reason });
  }

  /**
   * The record of this fetch, as the outcome's kind leaves most of it: the
   * response's status, the previous record's checksum and content, and,
   * once the mime stage has looked at a 2xx response, that response's type,
   * size and validators (before it, the previous record's).
   */
  private record(ctx: PageContext, status: RecordStatus): Writable<UriRecord> {
    const { uri, previous: p } = ctx;
    const f = ctx.fetched;
    const r = ctx.mime !== undefined ? ctx.response : undefined;
    return {
      url: uri.url, site: uri.site, status, httpStatus: f?.kind === 'response' ? f.status : undefined, checksum: p?.checksum, lastCrawledMs: ctx.startedMs,
      etag: r ? r.headers.etag : p?.etag, lastModified: r ? r.headers['last-modified'] : p?.lastModified, errorCount: 0, skipCode: undefined,
      mime: r ? ctx.mime : p?.mime, size: r ? r.body.length : p?.size, contentRef: p?.contentRef, duplicateOf: undefined, redirectTo: undefined,
      depth: uri.depth, parent: uri.parent, epoch: this.env.epoch,
    };
  }

  /** One feed operation per content destination (none when the collection does not feed). */
  private feedOps(url: string, op: FeedOp['op']): FeedOp[] {
    return (this.env.opts.feedTo ?? []).map((destination) => ({ destination, url, op }));
  }

  /** A submitted job's URL Status Message for a failed URI, unless its code is one never reported (core/heritrix-status.ts). */
  private statusOps(url: string, f: FailedUri): FeedOp[] {
    const status = statusToReport(f);
    return status === undefined ? [] : [{ destination: STATUS_DESTINATION, url, op: `status:${status}` }];
  }

  /** CollectionRefetchURI Refeed: an unchanged document is fed again all the same. */
  private refeedOps(ctx: PageContext): FeedOp[] {
    return (ctx.uri.flags ?? 0) & URI_FLAGS.REFEED && ctx.previous?.contentRef ? this.feedOps(ctx.uri.url, 'update') : [];
  }

  /** A document that was fed and is no longer (now a duplicate, deleted): the destinations drop it. */
  unfeedOps(url: string, previous: UriRecord | undefined): FeedOp[] {
    return wasFed(previous) ? this.feedOps(url, 'delete') : [];
  }

  /**
   * refresh_mode soft: a site still in an earlier cycle is not refreshed, so
   * a link to one of its URIs queued or fetched since that cycle is not
   * queued again (`ic`). One look-up in the store per such link; links to
   * other sites pass untouched.
   */
  private async dropSoftSeen(links: QueuedUri[], soft: ReadonlyMap<string, number>, st: SiteStats): Promise<QueuedUri[]> {
    const env = this.env;
    const kept: QueuedUri[] = [];
    for (const q of links) {
      const since = soft.get(q.site);
      if (since !== undefined && (await env.store.seen(env.name, since, q.url))) {
        env.stats.uriSkips(st, 'ic', 1);
        continue;
      }
      kept.push(q);
    }
    return kept;
  }

  /** Writes the fetch's outcome in one transaction and tells the scheduler about the new work. */
  private async commit(ctx: PageContext, record: UriRecord | undefined, discoveredIn: QueuedUri[], feed: FeedOp[]): Promise<void> {
    const env = this.env;
    const st = ctx.st;
    st.add('DBUpdates');
    // Before the store is written and the document's claim ends.
    if (record) env.duplicates.noteRecord(record);
    // Refresh-only: links are not followed to anything new (known URIs are re-queued at each cycle start).
    let discovered = env.refreshOnly() ? discoveredIn.filter((q) => q.redirects > 0) : discoveredIn;
    discovered = env.screening.dropScreened(discovered, st);
    if (env.softSites !== undefined) discovered = await this.dropSoftSeen(discovered, env.softSites, st);
    if (env.bloom) {
      // smfilter: links the filter has seen are checked against the store here, outside the write transaction.
      const fresh: QueuedUri[] = [];
      for (const q of discovered) {
        if (env.bloom.mightContain(q.url) && (await env.store.seen(env.name, env.epoch, q.url))) {
          env.stats.uriSkips(st, 'ic', 1);
          continue;
        }
        fresh.push(q);
      }
      discovered = fresh;
    }
    // MS-FSCADM CollectionQuarantineSite: URIs found for a quarantined site wait in a separate queue.
    const quarantined = env.opts.quarantinedSites?.();
    if (quarantined && quarantined.size > 0) {
      const now = env.now();
      discovered = discovered.map((q) => ((quarantined.get(q.site) ?? 0) > now ? { ...q, flags: (q.flags ?? 0) | URI_FLAGS.QUARANTINED } : q));
    }
    const added = await env.store.complete(env.name, env.epoch, {
      leaseId: ctx.uri.id,
      site: ctx.site.site,
      ...(record ? { record } : {}),
      discovered,
      ...(feed.length > 0 ? { feed } : {}),
    });
    if (feed.length > 0) env.opts.onFeed?.();
    const dup = discovered.length - added.length;
    if (dup > 0) env.stats.uriSkips(st, 'ic', dup);
    const routing = env.opts.routing;
    for (const a of added) {
      env.bloom?.add(a.url);
      if ((a.flags ?? 0) & URI_FLAGS.QUARANTINED) continue;
      if (routing === undefined) env.sched.addWork(a.site, 1);
      else {
        // Multinode: queued through the crawl store for the node its site is routed to (a new site is routed at the next tick).
        const owner = routing.ownerOf(a.site);
        if (owner === 'me') env.sched.addWork(a.site, 1);
        else if (owner === 'other') st.add('NodeSchedulerFwd');
      }
    }
    for (const q of discovered) env.screening.screen(q.url, q.site);
  }
}
