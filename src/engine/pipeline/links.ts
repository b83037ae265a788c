import { reservedNumber } from '../../core/fingerprint-cache.ts';
import { URI_SKIP_CODE_LIST } from '../../core/skip-codes.ts';
import { queueSentLinks } from '../seeding.ts';
import { urlDiscover, urlSeed } from '../elastic-events.ts';
import type { CycleEnv } from '../cycle-env.ts';
import type { PageContext, PageStage } from './page-context.ts';

/**
 * Links: the extracted links of an HTML page, screened one by one.
 *
 *   nofollow page ──► every link counted nf, none followed
 *   per link: rel=nofollow ─► nf
 *             normalized (unless found in the screened cache as written), seen on this page ─► dropped
 *             in the screened cache ─► counted Local / LocalFwd and ic (or its refusal code)
 *             else LinkScreening.admit ─► queued (Local / LocalFwd) or counted by its skip code
 *
 * The links the extract worker found in the screened cache did not come
 * back; they are counted from its totals, as if screened here. Then
 * send_links_to hands every link to another collection instead.
 */
export class LinksStage implements PageStage {
  readonly name = 'links';

  private readonly env: CycleEnv;

  constructor(env: CycleEnv) {
    this.env = env;
  }

  run(ctx: PageContext): Promise<undefined> | undefined {
    if (ctx.extraction !== undefined) this.screen(ctx);
    const sendTo = ctx.settings.sendLinksTo;
    return sendTo !== undefined && ctx.links.length > 0 ? this.send(ctx, sendTo) : undefined;
  }

  private screen(ctx: PageContext): void {
    const env = this.env;
    const { uri, site, st, settings } = ctx;
    const x = ctx.extraction!;
    const screening = env.screening;
    const stats = env.stats;
    // The links the worker left out, already known: counted as the loop below would count them.
    const known = x.screened;
    if (ctx.nofollow) {
      const all = x.links.length + (known?.links ?? 0);
      // The Elastic event log: one url-discover denial (nofollow) per link of the page.
      if (env.events.elastic) {
        for (const l of x.links) if (l.kind !== 'redirect' && l.kind !== 'canonical' && l.kind !== 'feed') screening.skipUri(site.site, 'nf', l.url, 'nofollow: the page\'s robots meta tag says nofollow', uri.url);
      } else if (all > 0) screening.skipUri(site.site, 'nf', uri.url, `nofollow: ${all} links not followed`);
      return;
    }
    if (known && known.links > 0) {
      const n = known.local + known.fwd;
      st.add('Local', known.local);
      st.add('LocalFwd', known.fwd);
      stats.uriSkips(st, 'ic', n);
      known.refused?.forEach((count, i) => {
        const code = URI_SKIP_CODE_LIST[i];
        if (count > 0 && code !== undefined) stats.uriSkips(st, code, count);
      });
    }
    const { rawFirst, screenFirst, ownTag } = ctx;
    const links = ctx.links;
    const seen = new Set<string>();
    for (const l of x.links) {
      if (l.kind === 'redirect' || l.kind === 'canonical' || l.kind === 'feed') continue;
      if (l.nofollow && settings.checkMetaRobots) {
        screening.skipUri(site.site, 'nf', l.url, 'rel=nofollow', uri.url);
        continue;
      }
      let knownSite = rawFirst ? screening.cache.get(l.url) : undefined;
      // Normalized each time: a map from links as extracted to their normal form cost more than
      // it saved once the extract worker kept the links already known (bench/README.md, *What changed*, 0cfe53b).
      const target = knownSite !== undefined ? l.url : env.normalize(l.url);
      if (!target || seen.has(target) || target === uri.url) continue;
      seen.add(target);
      // Another spelling of a link the worker left out (and counted), as if that one had been seen first.
      if (known && known.fingerprints.length > 0 && screening.cache.listed(target, known.fingerprints)) continue;
      if (knownSite === undefined && screenFirst && (!rawFirst || target !== l.url)) knownSite = screening.cache.get(target);
      if (knownSite !== undefined) {
        const refused = URI_SKIP_CODE_LIST[reservedNumber(knownSite)];
        if (refused !== undefined) {
          // Refused by its URL alone earlier in this cycle (admit; marked only while log.screened is off).
          stats.uriSkips(st, refused, 1);
          continue;
        }
        st.add(knownSite === ownTag ? 'Local' : 'LocalFwd');
        stats.uriSkips(st, 'ic', 1);
        continue;
      }
      const q = screening.admit(uri, target, false, site.site);
      if (q) {
        const elastic = env.events.elastic;
        if (elastic) {
          env.events.emitElastic(urlDiscover(elastic, q.url, uri.url, q.depth + 1));
          env.events.emitElastic(urlSeed(elastic, q.url, uri.url, q.depth + 1, 'organic'));
        }
        links.push(q);
        st.add(q.site === site.site ? 'Local' : 'LocalFwd');
      }
    }
  }

  /** MS-FSCCFG send_links_to: every extracted link goes to that collection instead. */
  private async send(ctx: PageContext, sendTo: string): Promise<undefined> {
    const env = this.env;
    const links = ctx.links;
    const sent = env.opts.sendLinks ? (await env.opts.sendLinks(sendTo, links), true) : await queueSentLinks(env.store, sendTo, links);
    if (!sent) env.events.emit({ type: 'error', url: ctx.uri.url, code: 'TRAWL_ERR_CONFIG_NOT_FOUND', message: `send_links_to names collection ${JSON.stringify(sendTo)}, which this crawler does not know; ${links.length} links dropped` });
    ctx.links = [];
    return undefined;
  }
}
