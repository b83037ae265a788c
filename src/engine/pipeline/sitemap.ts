import { siteOf } from '../../core/url.ts';
import { urlDiscover, urlSeed } from '../elastic-events.ts';
import { inSitemapScope, parseSitemap } from '../../extract/sitemap.ts';
import { sitemapDepthOf, URI_FLAGS, withSitemapDepth } from '../../store/crawl-store.ts';
import type { CycleEnv } from '../cycle-env.ts';
import type { PageContext, PageOutcome, PageStage } from './page-context.ts';

const LISTED: PageOutcome = { kind: 'listed' };

/**
 * A sitemap (use_sitemaps; a URI queued as one): its URLs are queued as
 * entry points, an index's sitemaps as more sitemaps (up to
 * trawl_sitemaps max_index_depth); no document is stored and no record
 * written, so the next cycle finds the sitemaps again through robots.txt
 * and the configuration.
 */
export class SitemapStage implements PageStage {
  readonly name = 'sitemap';

  private readonly env: CycleEnv;

  constructor(env: CycleEnv) {
    this.env = env;
  }

  run(ctx: PageContext): Promise<PageOutcome> | undefined {
    return (ctx.uri.flags ?? 0) & URI_FLAGS.SITEMAP ? this.list(ctx) : undefined;
  }

  private async list(ctx: PageContext): Promise<PageOutcome> {
    const env = this.env;
    const { uri, site } = ctx;
    const o = ctx.response;
    const sm = env.rt.settings.sitemaps;
    const parsed = parseSitemap(o.body, { url: uri.url, ...(o.headers['content-type'] ? { contentType: o.headers['content-type'] } : {}), maxUrls: sm.maxUrls, maxBytes: sm.maxBytes });
    const links = ctx.links;
    if (parsed.kind === 'invalid') {
      env.events.emit({ type: 'skip', url: uri.url, message: `not a usable sitemap: ${parsed.reason}` });
    } else if (parsed.kind === 'index') {
      const depth = sitemapDepthOf(uri.flags) + 1;
      if (depth > sm.maxIndexDepth) env.events.emit({ type: 'skip', url: uri.url, message: `sitemap index nested deeper than max_index_depth ${sm.maxIndexDepth}` });
      else {
        for (const child of parsed.sitemaps) {
          const url = env.normalize(child.loc);
          if (!url || !inSitemapScope(uri.url, url, true)) continue;
          const u = new URL(url);
          links.push({ url, site: siteOf(u), depth: uri.depth, hops: uri.hops, redirects: 0, parent: uri.url, priority: env.rt.priorityOf(u, true), sub: undefined, flags: withSitemapDepth(URI_FLAGS.SITEMAP, depth) });
        }
      }
      env.events.emit({ type: 'fetch', url: uri.url, message: `sitemap index: ${links.length} sitemaps${parsed.truncated ? ' (truncated)' : ''}` });
    } else {
      const meta = [];
      for (const entry of parsed.urls) {
        const url = env.normalize(entry.loc);
        // The sitemaps protocol's location rule: a sitemap lists URLs of its own host.
        if (!url || !inSitemapScope(uri.url, url, true)) continue;
        const q = env.screening.admit(uri, url, false, site.site);
        if (!q) continue;
        const elastic = env.events.elastic;
        if (elastic) {
          env.events.emitElastic(urlDiscover(elastic, url, uri.url, uri.depth + 1));
          env.events.emitElastic(urlSeed(elastic, url, uri.url, uri.depth + 1, 'sitemap'));
        }
        links.push({ ...q, depth: uri.depth, hops: 0, parent: uri.url });
        meta.push({ url, lastmod: entry.lastmod, changefreq: entry.changefreq, priority: entry.priority });
      }
      await env.store.putSitemapMeta(env.name, meta);
      env.adaptive?.noteSitemap(meta);
      env.events.emit({ type: 'fetch', url: uri.url, message: `sitemap: ${parsed.urls.length} URLs, ${links.length} in scope${parsed.truncated ? ' (truncated)' : ''}` });
    }
    return LISTED;
  }
}
