import { compileRules, includeExcludeRule, type ScopeRule } from '../../scope/scope.ts';
import { withFocusHops, focusHopsOf, type QueuedUri } from '../../store/crawl-store.ts';
import type { CycleEnv } from '../cycle-env.ts';
import type { PageContext, PageOutcome, PageStage } from './page-context.ts';

/**
 * MS-FSCCFG 2.2.4.19 focused: a text document in another language than
 * focused.languages is not stored (fs), and only `depth` such documents in
 * a row are passed through: the links of one further away are counted fo.
 * Domains in focused.exclude_domains are outside the focused scheduling.
 */
export class FocusStage implements PageStage {
  readonly name = 'focus';
  /** focused.exclude_domains. */
  private readonly exempt: ScopeRule | undefined;

  private readonly env: CycleEnv;

  constructor(env: CycleEnv) {
    this.env = env;
    const exempt = compileRules(env.rt.settings.focused.excludeDomains, true);
    this.exempt = exempt ? includeExcludeRule('focused.exclude_domains', 'fo', (u) => u.hostname.toLowerCase(), undefined, exempt) : undefined;
  }

  run(ctx: PageContext): Promise<PageOutcome | undefined> | undefined {
    const languages = ctx.settings.focused.languages ?? [];
    if (languages.length === 0 || !ctx.mime!.startsWith('text/')) return undefined;
    const exempt = this.exempt?.decide({ url: new URL(ctx.uri.url), parent: undefined, hops: 0, viaRedirect: false, seed: true });
    if (exempt && !exempt.allowed) return undefined;
    return this.judge(ctx, languages);
  }

  private async judge(ctx: PageContext, languages: readonly string[]): Promise<PageOutcome | undefined> {
    const { uri, site, settings } = ctx;
    const o = ctx.response;
    const text = new TextDecoder().decode(o.body.subarray(0, 80_000));
    // Loaded on first use: franc's trigram profiles and the ISO 639-3 table are 0.9 MB of source.
    const { detectLanguage, htmlText } = await import('../../extract/language.ts');
    const lang = detectLanguage({ lang: ctx.declaredLang, contentLanguage: o.headers['content-language'], text: ctx.isHtml ? htmlText(text) : text });
    if (lang === undefined || languages.includes(lang)) return undefined;
    const hops = focusHopsOf(uri.flags) + 1;
    const depth = settings.focused.depth ?? 0;
    const kept: QueuedUri[] = [];
    for (const l of ctx.links) {
      if (hops > depth) this.env.screening.skipUri(site.site, 'fo', l.url, `reached through ${hops} documents outside the focus languages (focused depth ${depth})`);
      else kept.push({ ...l, flags: withFocusHops(l.flags ?? 0, hops) });
    }
    ctx.links = kept;
    return { kind: 'skipped', code: 'fs', reason: `language ${lang} is not in focused.languages (${languages.join(', ')})` };
  }
}
