import type { CycleEnv } from '../cycle-env.ts';
import type { PageContext, PageOutcome, PageStage } from './page-context.ts';

/**
 * What the page says of itself: a quick meta refresh is a redirect
 * (html_redir_is_redir), noindex is not stored (ni), and a page that names
 * another URL as canonical is collapsed onto it (recorded as its
 * duplicate, not stored) when that URL may be crawled.
 */
export class DirectivesStage implements PageStage {
  readonly name = 'directives';

  private readonly env: CycleEnv;

  constructor(env: CycleEnv) {
    this.env = env;
  }

  run(ctx: PageContext): PageOutcome | undefined {
    const { uri, site } = ctx;
    const screening = this.env.screening;
    const refreshTarget = ctx.refreshTarget;
    if (refreshTarget) {
      // MS-FSCCFG html_redir_is_redir: a quick meta refresh is a redirect.
      const next = screening.admit(uri, refreshTarget, true, site.site);
      if (next) ctx.links = [next, ...ctx.links];
      if (ctx.noindex || ctx.settings.htmlRedirIsRedir) return { kind: 'redirect', to: refreshTarget, code: undefined, reason: '' };
    }
    if (ctx.noindex) return { kind: 'skipped', code: 'ni', reason: 'noindex (robots META tag or X-Robots-Tag)' };
    const canonical = ctx.canonical;
    if (canonical && canonical !== uri.url) {
      const target = screening.admit(uri, canonical, true, site.site);
      if (target) {
        ctx.links = [{ ...target, redirects: 0 }, ...ctx.links];
        return { kind: 'duplicate', of: canonical, reason: `rel=canonical names ${canonical}`, checksum: undefined, contentRef: undefined, canonical: true };
      }
    }
    return undefined;
  }
}
