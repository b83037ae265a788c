import { mimeMatches } from '../../fetch/mime.ts';
import type { CycleEnv } from '../cycle-env.ts';
import type { Rendering } from '../rendering.ts';
import type { PageContext, PageOutcome, PageStage } from './page-context.ts';

/**
 * Render (use_javascript, per collection or sub-collection): an HTML page
 * (uri_search_mime) is run in Chromium (rendering.ts), its dependencies
 * fetched under the crawl's rules. The extract stage then takes links from
 * the rendered DOM and the URLs the script pushed, beside the original's;
 * with javascript_keep_html the rendered HTML is the document checksummed,
 * stored and fed. A render that fails (page_timeout, page_memory, a crash)
 * sends the URI back to the end of its site's queue (retries + 1 in the
 * frontier, so a restart keeps the count); when a URI already retried in
 * this cycle fails, it is skipped with js. Only in the
 * pipeline when some collection or sub-collection sets use_javascript.
 */
export class RenderStage implements PageStage {
  readonly name = 'render';

  private readonly env: CycleEnv;
  private readonly rendering: Rendering;

  constructor(env: CycleEnv, rendering: Rendering) {
    this.env = env;
    this.rendering = rendering;
  }

  run(ctx: PageContext): Promise<PageOutcome | undefined> | undefined {
    const s = ctx.settings;
    if (!s.useJavascript || ctx.mime === undefined || !mimeMatches(ctx.mime, s.uriSearchMime)) return undefined;
    return this.render(ctx);
  }

  private async render(ctx: PageContext): Promise<PageOutcome | undefined> {
    const env = this.env;
    const c = this.rendering.counters;
    const r = await this.rendering.render(ctx);
    if (!r.ok) {
      // Stopping: the page is fetched again by the next run, not skipped.
      if (this.stopping()) return { kind: 'failed', action: 'retry', httpStatus: undefined, code: undefined, reason: `the crawl stopped while the page was rendered: ${r.reason}`, errorCount: ctx.previous?.errorCount ?? 0 };
      // The first failure in this cycle: back to the end of the site's queue, the attempt counted in the
      // frontier (retries, kept across a restart); the site's other pages are fetched meanwhile.
      if (ctx.uri.retries === 0) {
        c.retried++;
        env.events.emit({ type: 'fetch', url: ctx.uri.url, message: `render failed, queued to be tried once more later in this cycle: ${r.reason}` });
        return { kind: 'failed', action: 'retry', httpStatus: undefined, code: undefined, reason: `render failed: ${r.reason}`, errorCount: ctx.previous?.errorCount ?? 0 };
      }
      c.skipped++;
      return { kind: 'skipped', code: 'js', reason: `not rendered, the second time in this cycle: ${r.reason}` };
    }
    c.rendered++;
    const html = Buffer.from(r.html, 'utf8');
    ctx.rendered = { html, urls: [...r.pushed, ...r.navigations] };
    if (ctx.settings.javascriptKeepHtml) ctx.document = html;
    env.events.emit({ type: 'fetch', url: ctx.uri.url, message: `rendered in ${r.ms} ms: ${html.length} bytes of HTML, ${r.pushed.length} URLs pushed` });
    return undefined;
  }

  private stopping(): boolean {
    return this.rendering.stopping;
  }
}
