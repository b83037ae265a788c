import { hash } from 'node:crypto';
import { domainOf, siteOf } from '../../core/url.ts';
import { looksLikeFeed, parseFeed } from '../../extract/feed.ts';
import { URI_FLAGS, type QueuedUri } from '../../store/crawl-store.ts';
import type { SiteStats } from '../../stats/site-stats.ts';
import type { CycleEnv } from '../cycle-env.ts';
import type { OutcomeWriter } from '../outcome-writer.ts';
import type { PageContext, PageOutcome, PageStage } from './page-context.ts';

/**
 * An RSS/Atom/RDF channel (MS-FSCCFG 2.2.4.30): a URI queued as one
 * (rss.start_uris, a feed link found with auto_discover), or any page that
 * looks like one while RSS is in use. Its entries' links are queued (past
 * the include/exclude rules with ignore_rules), the channel's links are
 * kept FIFO (max_link_count) and by age (max_link_age), expired documents
 * are deleted with del_expired_links, and the channel itself is stored only
 * with index_feed (otherwise skip code rs).
 */
export class ChannelStage implements PageStage {
  readonly name = 'channel';

  private readonly env: CycleEnv;
  private readonly writer: OutcomeWriter;

  constructor(env: CycleEnv, writer: OutcomeWriter) {
    this.env = env;
    this.writer = writer;
  }

  run(ctx: PageContext): Promise<PageOutcome> | undefined {
    const rss = ctx.settings.rss;
    const rssOn = (rss.startUris?.length ?? 0) > 0 || (rss.startUriFiles?.length ?? 0) > 0 || rss.autoDiscover;
    if ((ctx.uri.flags ?? 0) & URI_FLAGS.FEED || (rssOn && looksLikeFeed(ctx.mime!, ctx.response.body))) return this.channel(ctx);
    return undefined;
  }

  private async channel(ctx: PageContext): Promise<PageOutcome> {
    const env = this.env;
    const { uri, site, settings, st } = ctx;
    const o = ctx.response;
    const rss = settings.rss;
    const parsed = parseFeed(o.body, { url: uri.url, ...(o.headers['content-location'] ? { contentLocation: o.headers['content-location'] } : {}) });
    const links: QueuedUri[] = ctx.links;
    const entryUrls: string[] = [];
    if ('invalid' in parsed) {
      env.events.emit({ type: 'skip', url: uri.url, message: `not a usable channel: ${parsed.invalid}` });
    } else {
      for (const e of parsed.entries) {
        const raw = e.link ?? e.links.find((l) => l.rel === 'alternate')?.href;
        const url = raw ? env.normalize(raw, uri.url) : undefined;
        if (!url) continue;
        entryUrls.push(url);
        const u = new URL(url);
        const hops = domainOf(u) !== domainOf(new URL(uri.url)) && settings.crawlmode.resetLevel ? 0 : uri.hops + 1;
        if (!rss.ignoreRules) {
          const q = env.screening.admit(uri, url, false, site.site);
          if (q) links.push({ ...q, flags: URI_FLAGS.FROM_FEED });
          continue;
        }
        // ignore_rules: every document the channel names, whatever the include/exclude rules (schemes still apply).
        if (!settings.allowedSchemes.includes(u.protocol.slice(0, -1))) continue;
        links.push({ url, site: siteOf(u), depth: uri.depth + 1, hops, redirects: 0, parent: uri.url, priority: env.rt.priorityOf(u, false), sub: env.rt.subOf(u), flags: URI_FLAGS.FROM_FEED });
      }
      const expired = await env.store.noteFeedLinks(env.name, uri.url, entryUrls, env.now(), rss.maxLinkCount, rss.maxLinkAgeMin * 60_000);
      if (expired.length > 0 && rss.delExpiredLinks) await this.deleteDocuments(expired, st, 'expired from its channel');
      env.events.emit({ type: 'fetch', url: uri.url, message: `channel: ${entryUrls.length} entries, ${links.length} queued, ${expired.length} expired` });
    }
    if (!rss.indexFeed) return { kind: 'skipped', code: 'rs', reason: 'RSS channel: index_feed is no' };
    const contentRef = await env.content.put(uri.url, { body: o.body, header: settings.storage.storeHttpHeader ? o.headerBlock : undefined, mime: ctx.mime ?? 'application/rss+xml' });
    return { kind: 'stored', checksum: hash('sha1', o.body, 'hex'), contentRef, modified: false };
  }

  /**
   * Deletes stored documents other than this page (their content, and the
   * record's content reference), each in a write of its own, and counts
   * them as deleted for the channel's site.
   */
  private async deleteDocuments(urls: readonly string[], st: SiteStats, why: string): Promise<void> {
    const env = this.env;
    for (const url of urls) {
      const rec = await env.store.getRecord(env.name, url);
      if (!rec || rec.status === 'deleted') continue;
      await env.store.putRecord(env.name, { ...rec, status: 'deleted', contentRef: undefined, checksum: undefined, lastCrawledMs: env.now() });
      if (rec.contentRef) await env.content.delete(rec.contentRef);
      await env.store.queueFeed(env.name, this.writer.unfeedOps(url, rec));
      env.stats.c.deleted++;
      st.add('Deleted');
      env.events.emit({ type: 'skip', url, message: `deleted: ${why}` });
    }
  }
}
