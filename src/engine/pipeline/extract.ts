import { stringTag } from '../../core/fingerprint-cache.ts';
import { mimeMatches } from '../../fetch/mime.ts';
import { parseRobotsDirectives, type LinkFlags } from '../../extract/html.ts';
import { URI_FLAGS } from '../../store/crawl-store.ts';
import type { CycleEnv } from '../cycle-env.ts';
import type { PooledExtraction } from '../../extract/extract-wire.ts';
import type { ExtractedLink } from '../../extract/html.ts';
import type { PageContext, PageStage } from './page-context.ts';

type ExtractOptions = { flags: LinkFlags; maxLinks: number; productToken: string; allowedSchemes: readonly string[] };

/**
 * Extract: X-Robots-Tag, then for HTML (uri_search_mime) one pass of the
 * extractor on the extract worker: links, meta robots, meta refresh,
 * rel=canonical, feeds (rss.auto_discover, queued here as channels) and the
 * declared language. The links themselves are screened by the links stage.
 *
 * While the screened-URI cache is lent to the worker, the worker looks the
 * page's links up there and sends back only those it does not hold, with
 * their counts (extract-wire.ts): only when a link found there as it is
 * needs no normalizing (no rewrite_rules: normalizing is then idempotent),
 * and links are neither sent to another collection nor held back by
 * refresh-only.
 */
export class ExtractStage implements PageStage {
  readonly name = 'extract';
  private readonly linkFlags: LinkFlags;

  private readonly env: CycleEnv;

  constructor(env: CycleEnv) {
    this.env = env;
    const f = env.rt.settings.linkExtraction;
    this.linkFlags = { a: f.a, action: f.action, area: f.area, card: f.card, comment: f.comment, embed: f.embed, frame: f.frame, go: f.go, img: f.img, layer: f.layer, link: f.link, meta: f.meta, metaRefresh: f.metaRefresh, object: f.object, script: f.script, scriptJava: f.scriptJava, style: f.style };
  }

  run(ctx: PageContext): Promise<undefined> | undefined {
    const { settings } = ctx;
    const o = ctx.response;
    const xRobotsTag = o.headers['x-robots-tag'];
    if (xRobotsTag && settings.checkMetaRobots) {
      const xRobots = parseRobotsDirectives(xRobotsTag, this.env.rt.productToken);
      ctx.nofollow = xRobots.nofollow === true;
      ctx.noindex = xRobots.noindex === true;
    }
    ctx.isHtml = mimeMatches(ctx.mime!, settings.uriSearchMime);
    return ctx.isHtml ? this.extract(ctx) : undefined;
  }

  private async extract(ctx: PageContext): Promise<undefined> {
    const env = this.env;
    const { uri, settings } = ctx;
    const screening = env.screening;
    // A link queued earlier in this cycle (the screened URI cache) is not judged again: the outcome writer would drop it.
    ctx.screenFirst = screening.enabled && settings.sendLinksTo === undefined && !env.opts.refreshOnly?.();
    // Every URL in the screened cache is a normal form, and with no
    // rewrite_rules normalizing is idempotent, so a link found there as it
    // is needs no normalizing: one lookup instead of a normalization and a
    // lookup for the links seen before, most of a page's.
    ctx.rawFirst = ctx.screenFirst && env.rt.canon.idempotent;
    ctx.ownTag = stringTag(ctx.site.site);
    const rendered = ctx.rendered;
    // A rendered page's two extractions are merged here: the worker sends back every link of each.
    const screen = ctx.rawFirst && screening.shareId !== undefined && rendered === undefined ? { id: screening.shareId, ownTag: ctx.ownTag } : undefined;
    const extractOpts = { flags: this.linkFlags, maxLinks: settings.trawlLimits.maxLinksPerPage, productToken: env.rt.productToken, allowedSchemes: settings.allowedSchemes };
    let x = await env.pool.extract(ctx.response.body, uri.url, extractOpts, screen);
    if (rendered !== undefined) x = await this.withRendered(x, rendered, uri.url, extractOpts);
    ctx.extraction = x;
    if (settings.checkMetaRobots) {
      ctx.noindex ||= x.robots.noindex;
      ctx.nofollow ||= x.robots.nofollow;
    }
    if (x.metaRefresh && settings.htmlRedirIsRedir && x.metaRefresh.delayS <= settings.htmlRedirThreshS) {
      // Canonicalized like every other URL the crawl queues (the extractor only resolves it).
      const target = env.normalize(x.metaRefresh.url);
      if (target !== undefined && target !== uri.url) ctx.refreshTarget = target;
    }
    // ftp_searchlinks off: no links are taken from a document fetched over FTP (a listing included).
    if (!settings.ftpSearchlinks && uri.url.startsWith('ftp:')) ctx.nofollow = true;
    // rss.follow_links: a document found in a channel has its links followed only when it is on.
    if ((uri.flags ?? 0) & URI_FLAGS.FROM_FEED && !settings.rss.followLinks) ctx.nofollow = true;
    if (settings.rss.autoDiscover) {
      for (const f of x.feeds) {
        const target = env.normalize(f);
        const q = target ? screening.admit(uri, target, false, ctx.site.site) : undefined;
        if (q) ctx.links.push({ ...q, flags: URI_FLAGS.FEED });
      }
    }
    ctx.canonical = x.canonical ? env.normalize(x.canonical) : undefined;
    ctx.declaredLang = x.lang;
    return undefined;
  }

  /**
   * use_javascript: the links of the rendered DOM and the URLs the script
   * pushed (client-side routing), after the original's; the links stage
   * drops the ones seen twice. The rest of the extraction (robots, refresh,
   * canonical, language) stays the original document's.
   */
  private async withRendered(x: PooledExtraction, rendered: NonNullable<PageContext['rendered']>, url: string, opts: ExtractOptions): Promise<PooledExtraction> {
    const y = await this.env.pool.extract(rendered.html, url, opts, undefined);
    const links: ExtractedLink[] = [...x.links, ...y.links.filter((l) => l.kind === 'navigate' || l.kind === 'embed')];
    for (const u of rendered.urls) {
      if (links.length >= opts.maxLinks) break;
      if (u.startsWith('http:') || u.startsWith('https:')) links.push({ url: u, kind: 'navigate', tag: '#script', attr: 'history', nofollow: false });
    }
    return { ...x, links };
  }
}
