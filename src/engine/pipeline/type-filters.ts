/**
 * The body's type: the mime stage names it (every 2xx page), the type
 * filters turn away what is not to be stored (exclude_headers,
 * allowed_types, an empty body). Between them, the sitemap and channel
 * stages take the pages that are sitemaps or channels.
 */

import { detectMime, mimeMatches } from '../../fetch/mime.ts';
import type { CycleEnv } from '../cycle-env.ts';
import type { PageContext, PageOutcome, PageStage } from './page-context.ts';

/** Names the MIME type (Content-Type, or sniffed: force_mimetype_detection) and counts it. */
export class MimeStage implements PageStage {
  readonly name = 'mime';

  run(ctx: PageContext): undefined {
    const o = ctx.response;
    const mime = detectMime(o.headers['content-type'], o.body, ctx.settings.forceMimetypeDetection);
    ctx.st.count('MimeType', mime);
    ctx.mime = mime;
    return undefined;
  }
}

/** exclude_headers (MS-FSCCFG 2.2.4.22: hx), allowed_types (mi), an empty document (em). */
export class TypeFilterStage implements PageStage {
  readonly name = 'type-filters';

  private readonly env: CycleEnv;

  constructor(env: CycleEnv) {
    this.env = env;
  }

  run(ctx: PageContext): PageOutcome | undefined {
    const o = ctx.response;
    for (const [name, patterns] of this.env.rt.excludeHeaders) {
      const v = o.headers[name];
      if (v !== undefined && patterns.some((p) => p.test(v))) return { kind: 'skipped', code: 'hx', reason: `header ${name}: ${v} is excluded` };
    }
    // trawl_extraction.binary_mime_types names files to index: they are kept whatever allowed_types says.
    if (!mimeMatches(ctx.mime!, ctx.settings.allowedTypes) && !mimeMatches(ctx.mime!, ctx.settings.extraction.binaryMimeTypes)) return { kind: 'skipped', code: 'mi', reason: `MIME type ${ctx.mime} is not in allowed_types` };
    if (o.body.length === 0) return { kind: 'skipped', code: 'em', reason: 'empty document' };
    return undefined;
  }
}
