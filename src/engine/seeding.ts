/**
 * Putting URIs in the queue from outside a page: the start URIs and the
 * URIs the crawl store knows when a cycle begins (seed), the Sitemap: lines
 * of robots.txt, and an operator's additions and refetches.
 *
 *   seed   start_uris, start_uri_files, rss start URIs (per sub-collection too),
 *          sitemaps ─► scope ─► enqueue
 *          every record the store knows ─► enqueue again (a page of records at a time);
 *          the same walk fills the duplicate check's checksum filter, and finds the
 *          documents dbswitch expires (deleted with dbswitch_delete)
 */

import { crawlSeed, urlSeed } from './elastic-events.ts';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { siteOf } from '../core/url.ts';
import type { CollectionSettings } from '../config/registry.ts';
import type { SiteState } from '../frontier/site-scheduler.ts';
import { URI_FLAGS, type CrawlStore, type QueuedUri, type UriRecord } from '../store/crawl-store.ts';
import type { CycleEnv } from './cycle-env.ts';
import { RefreshModes } from './refresh-modes.ts';

/** Records read at once when a refresh or an operator's refetch walks the crawl store (recordPages). */
const RECORD_PAGE = 5000;

/**
 * The default route for send_links_to when both collections share a store
 * (trawl crawl): the links are queued in the target collection, marked SENT,
 * for its running cycle or, when it has none, its next one; the target
 * checks them against its own scope when it leases them. False when the
 * store has no such collection.
 */
export async function queueSentLinks(store: CrawlStore, target: string, links: readonly QueuedUri[]): Promise<boolean> {
  const row = await store.getCollection(target);
  if (!row) return false;
  const running = row.epoch > 0 && (row.cycleEndedMs ?? 0) < (row.cycleStartedMs ?? 0);
  await store.enqueue(target, running ? row.epoch : row.epoch + 1, links.map((l) => ({ ...l, sub: undefined, priority: 1, flags: (l.flags ?? 0) | URI_FLAGS.SENT })));
  return true;
}

/**
 * Why AddURIs did not queue a URI:
 *   malformed  not an absolute http(s) URL
 *   scope      a rule of the collection refuses it (`code`, `rule` name which)
 *   crawled    already fetched in this cycle (CollectionRefetchURI fetches it again)
 *   queued     already waiting in this cycle's queue (it will be fetched)
 *   repeated   given more than once in the call
 */
export type NotAddedKind = 'malformed' | 'scope' | 'crawled' | 'queued' | 'repeated';

export interface NotAdded {
  readonly url: string;
  readonly kind: NotAddedKind;
  readonly reason: string;
  /** scope: the skip code (MS-FSCADM 2.2.3.1). */
  readonly code?: string;
  /** scope: the rule that decided (as `trawl urltest --explain` names it). */
  readonly rule?: string;
}

/** What AddURIs answers: how many were queued; `refused`: the malformed and out-of-scope ones; `seen`: those this cycle already has. */
export interface AddedUris {
  added: number;
  refused: NotAdded[];
  seen: NotAdded[];
}

/** At most this many URIs of one AddURIs call that the cycle already has are told apart (crawled or queued) by a record lookup each. */
const SEEN_LOOKUPS = 200;

export class Seeder {
  private readonly env: CycleEnv;
  /** Wakes the crawl loop: new work was queued. */
  private readonly wake: () => void;

  constructor(env: CycleEnv, wake: () => void) {
    this.env = env;
    this.wake = wake;
  }

  /**
   * Start URIs (start_uris, start_uri_files, per sub-collection too), then
   * the URIs the crawl store knows; none of the sites in `unrefreshed`
   * (refresh_mode soft: they still have an earlier cycle's queue to crawl)
   * whose URIs have mode soft (the collection's, or their sub-collection's own).
   */
  async seed(unrefreshed?: ReadonlyMap<string, number>): Promise<void> {
    const env = this.env;
    const rt = env.rt;
    const seeds: Array<{ url: string; sub: string | undefined; flags: number }> = [];
    const fromSettings = (s: CollectionSettings, sub: string | undefined): void => {
      for (const u of s.startUris ?? []) seeds.push({ url: u, sub, flags: 0 });
      this.fromFiles(seeds, s.startUriFiles, sub, 0);
      // MS-FSCCFG 2.2.4.30: RSS channel start URIs.
      for (const u of s.rss.startUris ?? []) seeds.push({ url: u, sub, flags: URI_FLAGS.FEED });
      this.fromFiles(seeds, s.rss.startUriFiles, sub, URI_FLAGS.FEED);
    };
    fromSettings(rt.settings, undefined);
    // A sub-collection's own start_uris, start_uri_files and rss start URIs (MS-FSCCFG 2.2.4.33): those it does not inherit.
    const own = <T>(a: T, b: T): boolean => a !== b && JSON.stringify(a) !== JSON.stringify(b);
    for (const sub of rt.subs) {
      const s = sub.settings;
      const m = rt.settings;
      fromSettings({
        ...s,
        startUris: own(s.startUris, m.startUris) ? s.startUris : undefined,
        startUriFiles: own(s.startUriFiles, m.startUriFiles) ? s.startUriFiles : undefined,
        rss: { ...s.rss, startUris: own(s.rss.startUris, m.rss.startUris) ? s.rss.startUris : undefined, startUriFiles: own(s.rss.startUriFiles, m.rss.startUriFiles) ? s.rss.startUriFiles : undefined },
      }, sub.name);
    }
    if (rt.settings.useSitemaps) for (const u of rt.settings.sitemaps.urls ?? []) seeds.push({ url: u, sub: undefined, flags: URI_FLAGS.SITEMAP });
    // refresh_mode, the collection's and each sub-collection's own (refresh-modes.ts): soft holds a site with URIs still queued; prepend queues in front.
    const modes = RefreshModes.of(rt);
    const heldSite = (site: string, sub: string | undefined): boolean => unrefreshed?.has(site) === true && modes.modeOf(sub) === 'soft';
    const batch: QueuedUri[] = [];
    const front: QueuedUri[] = [];
    for (const s of seeds) {
      const url = env.normalize(s.url);
      if (!url) {
        env.events.emit({ type: 'error', url: s.url, code: 'TRAWL_ERR_CONFIG_VALUE', message: `start URI ${JSON.stringify(s.url)} is not a valid absolute URL` });
        continue;
      }
      const u = new URL(url);
      const d = rt.scope.decide({ url: u, parent: undefined, hops: 0, viaRedirect: false, seed: true });
      if (!d.allowed) {
        env.screening.skipUri(siteOf(u), d.code!, url, `start URI refused: ${d.reason}`);
        continue;
      }
      const site = siteOf(u);
      const sub = s.sub ?? rt.subOf(u);
      if (heldSite(site, sub)) continue;
      (modes.modeOf(sub) === 'prepend' ? front : batch).push({ url, site, depth: 0, hops: 0, redirects: 0, parent: undefined, priority: rt.priorityOf(u, true), sub, flags: s.flags });
    }
    // A refresh re-queues every URI the crawl store knows, so unchanged
    // pages (304s, which carry no links) are still refetched; a page of
    // records at a time (recordPages). The start URIs go first either way:
    // prepended, they are put in front last.
    if (batch.length > 0 || front.length === 0) await env.store.enqueue(env.name, env.epoch, batch, false);
    const elastic = env.events.elastic;
    if (elastic && batch.length + front.length > 0) {
      env.events.emitElastic(crawlSeed(elastic, batch.length + front.length));
      for (const q of [...front, ...batch]) env.events.emitElastic(urlSeed(elastic, q.url, undefined, 1, q.flags === URI_FLAGS.SITEMAP ? 'sitemap' : 'seed_list'));
    }
    // The same walk fills the checksum filter before any page is fetched (duplicates.ts).
    const { dbswitch, dbswitchDelete } = rt.settings;
    let expiredCount = 0;
    // One walk queues at the back, in the order written, or in front, last page first; with sub-collections of
    // both kinds, a walk forwards (which also expires and fills the filter) and one backwards for the prepend ones.
    const walks = modes.mixed ? (modes.uses('prepend') ? [false, true] : [false]) : [modes.main === 'prepend'];
    for (const [i, backwards] of walks.entries()) {
      for await (const records of this.recordPages(backwards)) {
        const known: QueuedUri[] = [];
        const expired: string[] = [];
        for (const r of records) {
          if (r.status === 'deleted') continue;
          let stale = false;
          if (i === 0) {
            // MS-FSCCFG 2.2.3 dbswitch: not processed in the last `dbswitch` cycles.
            stale = env.epoch - r.epoch > dbswitch;
            if (stale) {
              expiredCount++;
              if (dbswitchDelete) {
                expired.push(r.url);
                continue;
              }
            }
            env.duplicates.noteRecord(r);
          }
          const sub = modes.mixed ? rt.subOf(new URL(r.url)) : undefined;
          const mode = modes.modeOf(sub);
          if ((mode === 'prepend') !== backwards) continue;
          if (heldSite(r.site, sub)) continue;
          // trawl_purge: the cycle crawls from its start URIs; what it does not reach, the purge phase checks (purge.ts).
          if (env.purges && mode === modes.main) continue;
          // refresh_mode adaptive: each minor cycle queues the known URIs it takes (adaptive-refresh.ts).
          if (env.adaptive) env.adaptive.noteRecord(r, stale);
          else known.push(this.requeueOf(r));
        }
        if (expired.length > 0) await this.deleteExpired(expired);
        await env.store.enqueue(env.name, env.epoch, known, backwards);
      }
    }
    if (front.length > 0) await env.store.enqueue(env.name, env.epoch, front, true);
    if (expiredCount > 0) {
      env.events.emit({
        type: 'cycle',
        message: dbswitchDelete
          ? `dbswitch: ${expiredCount} documents not processed in the last ${dbswitch} cycles expired and were deleted (dbswitch_delete)`
          : `dbswitch: ${expiredCount} documents not processed in the last ${dbswitch} cycles expired; they are queued again to check that they still exist (dbswitch_delete no)`,
      });
    }
  }

  /**
   * dbswitch_delete: expired URIs are forgotten as CollectionDeleteURIs
   * forgets them (record, queue entry, a delete operation for each content
   * destination, in one transaction), then their stored copies go.
   */
  private async deleteExpired(urls: readonly string[]): Promise<void> {
    const env = this.env;
    const refs = await env.store.deleteUris(env.name, urls, env.opts.feedTo ?? []);
    for (const ref of refs) await env.content.delete(ref);
    env.limits.noteDocuments(-refs.length);
    if (refs.length > 0 && (env.opts.feedTo?.length ?? 0) > 0) env.opts.onFeed?.();
  }

  private fromFiles(seeds: Array<{ url: string; sub: string | undefined; flags: number }>, files: readonly string[] | undefined, sub: string | undefined, flags: number): void {
    for (const f of files ?? []) {
      const path = resolvePath(this.env.opts.baseDir ?? '.', f);
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (err) {
        this.env.events.emit({ type: 'error', code: 'TRAWL_ERR_IO', message: `cannot read start URI file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` });
        continue;
      }
      for (const line of text.split(/\r?\n/)) {
        const t = line.trim();
        if (t && !t.startsWith('#')) seeds.push({ url: t, sub, flags });
      }
    }
  }

  /**
   * The crawl store's records a page at a time, so that a refresh of a
   * store of millions holds one page rather than all of them. In the order
   * the records were written; with `backwards`, last page first, for a
   * caller that puts each page in front of the queue: front insertion
   * keeps a batch's own order, and each page goes before the one after it.
   * A crash half-way is safe: seed runs again when the cycle resumes, and
   * enqueue leaves out what this cycle already queued.
   */
  private async *recordPages(backwards: boolean): AsyncGenerator<UriRecord[]> {
    const env = this.env;
    for (let from: number | undefined; ;) {
      const page = await env.store.listRecordPage(env.name, { ...(from !== undefined ? { from } : {}), backwards, limit: RECORD_PAGE });
      if (page.records.length > 0) yield page.records;
      if (page.records.length < RECORD_PAGE) return;
      from = backwards ? page.first : page.last;
    }
  }

  /** What a known URI is queued again as: from its record, a priority and sub-collection as of the configuration now. */
  private requeueOf(r: UriRecord, u = new URL(r.url)): QueuedUri {
    return { url: r.url, site: r.site, depth: r.depth, hops: r.depth, redirects: 0, parent: r.parent, priority: this.env.rt.priorityOf(u, false), sub: this.env.rt.subOf(u) };
  }

  /** Queues again the known URIs (crawl store records) that `pick` selects. */
  async requeueKnown(pick: (url: URL) => boolean, front: boolean): Promise<number> {
    let n = 0;
    for await (const records of this.recordPages(front)) {
      const batch: QueuedUri[] = [];
      for (const r of records) {
        if (r.status === 'deleted') continue;
        const u = new URL(r.url);
        if (pick(u)) batch.push(this.requeueOf(r, u));
      }
      if (batch.length > 0) n += await this.requeue(batch, front);
    }
    return n;
  }

  /**
   * A sub-collection's own `refresh` in `trawl serve` (service/sub-refresh.ts): its known URIs queued again
   * as its refresh_mode says: scratch (and adaptive) first drops what of it is still queued; prepend queues
   * in front; soft leaves out the sites with URIs still queued; append queues at the back.
   */
  async refreshSub(sub: string): Promise<number> {
    const env = this.env;
    const mode = env.rt.settingsFor(sub).refreshMode;
    if (mode === 'scratch' || mode === 'adaptive') await env.store.dropQueued(env.name, undefined, undefined, { names: [sub], except: false });
    const busy = mode === 'soft' ? new Set((await env.store.sitesWithWork(env.name)).map((w) => w.site)) : undefined;
    return this.requeueKnown((u) => env.rt.subOf(u) === sub && !(busy?.has(siteOf(u)) ?? false), mode === 'prepend');
  }

  /** Queues these URLs again, even if already fetched in this cycle; `refeed`: fed again even when unchanged. */
  async requeueUrls(urls: readonly string[], front: boolean, refeed: boolean): Promise<number> {
    const rt = this.env.rt;
    const batch: QueuedUri[] = [];
    for (const raw of urls) {
      const url = this.env.normalize(raw);
      if (!url) continue;
      const u = new URL(url);
      batch.push({ url, site: siteOf(u), depth: 0, hops: 0, redirects: 0, parent: undefined, priority: rt.priorityOf(u, true), sub: rt.subOf(u), flags: refeed ? URI_FLAGS.REFEED : 0 });
    }
    return this.requeue(batch, front);
  }

  private async requeue(batch: QueuedUri[], front: boolean): Promise<number> {
    const env = this.env;
    const n = await env.store.requeue(env.name, env.epoch, batch, front);
    for (const q of batch) env.sched.addWork(q.site, 1);
    this.wake();
    return n;
  }

  /** URIs added while the cycle runs (MS-FSCADM AddURIs): checked like start URIs and queued, `urgent` ones first. */
  async addUris(urls: readonly string[], urgent: boolean): Promise<AddedUris> {
    const env = this.env;
    const rt = env.rt;
    const refused: NotAdded[] = [];
    const seen: NotAdded[] = [];
    const batch: QueuedUri[] = [];
    const inCall = new Set<string>();
    for (const raw of urls) {
      const url = env.normalize(raw);
      if (!url) {
        refused.push({ url: raw, kind: 'malformed', reason: 'not a valid absolute URL' });
        continue;
      }
      if (inCall.has(url)) {
        seen.push({ url, kind: 'repeated', reason: 'given more than once' });
        continue;
      }
      inCall.add(url);
      const u = new URL(url);
      const d = rt.scope.decide({ url: u, parent: undefined, hops: 0, viaRedirect: false, seed: true });
      if (!d.allowed) {
        refused.push({ url, kind: 'scope', reason: `${d.code}: ${d.reason}`, ...(d.code !== undefined ? { code: d.code } : {}), rule: d.decidedBy });
        continue;
      }
      batch.push({ url, site: siteOf(u), depth: 0, hops: 0, redirects: 0, parent: undefined, priority: rt.priorityOf(u, true), sub: rt.subOf(u) });
    }
    const added = await env.store.enqueue(env.name, env.epoch, batch, urgent);
    for (const a of added) {
      env.bloom?.add(a.url);
      env.sched.addWork(a.site, 1);
    }
    this.wake();
    if (added.length < batch.length) seen.push(...(await this.alreadySeen(batch, added)));
    return { added: added.length, refused, seen };
  }

  /** The URIs of `batch` that enqueue did not add: the cycle has them, crawled already or still queued. */
  private async alreadySeen(batch: readonly QueuedUri[], added: readonly QueuedUri[]): Promise<NotAdded[]> {
    const env = this.env;
    const taken = new Set(added);
    const row = await env.store.getCollection(env.name);
    const cycleStart = row?.cycleStartedMs ?? 0;
    const out: NotAdded[] = [];
    for (const q of batch) {
      if (taken.has(q)) continue;
      if (out.length >= SEEN_LOOKUPS) {
        out.push({ url: q.url, kind: 'queued', reason: 'already queued or crawled in this cycle' });
        continue;
      }
      const rec = await env.store.getRecord(env.name, q.url);
      out.push(rec !== undefined && rec.lastCrawledMs >= cycleStart
        ? { url: q.url, kind: 'crawled', reason: `already crawled in this cycle, at ${new Date(rec.lastCrawledMs).toISOString()}` }
        : { url: q.url, kind: 'queued', reason: 'already queued in this cycle; it will be fetched' });
    }
    return out;
  }

  /** use_sitemaps: the Sitemap: lines of a site's robots.txt (trawl_sitemaps robots_discovery). */
  async queueRobotsSitemaps(site: SiteState, sitemaps: readonly string[]): Promise<void> {
    const env = this.env;
    const sm = env.rt.settings.sitemaps;
    // A sub-collection's own use_sitemaps decides for the sitemaps in it (MS-FSCCFG 2.2.4.33).
    const anySub = env.rt.subs.some((s) => s.settings.useSitemaps);
    if ((!env.rt.settings.useSitemaps && !anySub) || !sm.robotsDiscovery || sitemaps.length === 0) return;
    const batch: QueuedUri[] = [];
    for (const raw of sitemaps) {
      const url = env.normalize(raw, site.site);
      if (!url) continue;
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
      if (anySub && !env.rt.settingsFor(env.rt.subOf(u)).useSitemaps) continue;
      batch.push({ url, site: siteOf(u), depth: 0, hops: 0, redirects: 0, parent: `${site.site}/robots.txt`, priority: env.rt.priorityOf(u, true), sub: undefined, flags: URI_FLAGS.SITEMAP });
    }
    const added = await env.store.enqueue(env.name, env.epoch, batch, true);
    for (const a of added) env.sched.addWork(a.site, 1);
  }
}
