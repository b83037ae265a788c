import { hash } from 'node:crypto';
import { contentHash } from '../../extract/elastic-content.ts';
import { mimeMatches } from '../../fetch/mime.ts';
import type { Claim } from '../duplicates.ts';
import type { CycleEnv } from '../cycle-env.ts';
import type { PageContext, PageOutcome, PageStage } from './page-context.ts';

const UNCHANGED: PageOutcome = { kind: 'unchanged' };

/** trawl_extraction.content_hash_include: the hash of the page's extracted fields (only when the setting names some). */
function fieldsHash(ctx: PageContext, include: readonly string[]): string {
  const o = ctx.response;
  const charset = /;\s*charset="?([\w-]+)/i.exec(o.headers['content-type'] ?? '')?.[1];
  let html: string;
  try {
    html = new TextDecoder(charset ?? 'utf-8').decode(o.body);
  } catch {
    html = new TextDecoder('utf-8').decode(o.body);
  }
  const t = ctx.settings.trawlLimits;
  return contentHash(html, ctx.uri.url, include, t.maxIndexedLinks, t.maxHeadings);
}

/**
 * Duplicate: the page's checksum (of its first csum_cut_off bytes), then
 * unchanged when the record already holds it with content, or, with
 * diffcheck, a duplicate of another page stored with it (duplicates.ts).
 * A page that is neither holds its checksum's claim until it is committed.
 */
export class DuplicateStage implements PageStage {
  readonly name = 'duplicate';

  private readonly env: CycleEnv;

  constructor(env: CycleEnv) {
    this.env = env;
  }

  run(ctx: PageContext): PageOutcome | Promise<PageOutcome | undefined> | undefined {
    const { settings, previous } = ctx;
    // The rendered document when javascript_keep_html keeps it (render.ts), else the body as fetched.
    const body = ctx.document ?? ctx.response.body;
    const include = settings.extraction.contentHashInclude;
    const checksum = include.length > 0 && mimeMatches(ctx.mime!, settings.uriSearchMime)
      ? fieldsHash(ctx, include)
      : hash('sha1', settings.csumCutOffBytes > 0 ? body.subarray(0, settings.csumCutOffBytes) : body, 'hex');
    ctx.checksum = checksum;
    if (previous?.checksum === checksum && previous.contentRef && previous.status !== 'deleted') return UNCHANGED;
    if (!settings.diffcheck) return undefined;
    const answer = this.env.duplicates.claim(checksum, ctx.uri.url);
    if (answer instanceof Promise) return this.settle(ctx, answer);
    ctx.claim = answer;
    return undefined;
  }

  private async settle(ctx: PageContext, answer: Promise<Claim | string>): Promise<PageOutcome | undefined> {
    const a = await answer;
    if (typeof a !== 'string') {
      ctx.claim = a;
      return undefined;
    }
    const { settings, uri } = ctx;
    const o = ctx.response;
    let contentRef: string | undefined;
    if (settings.storage.storeDupes) contentRef = await this.env.content.put(uri.url, { body: ctx.document ?? o.body, header: settings.storage.storeHttpHeader ? o.headerBlock : undefined, mime: ctx.mime! });
    // extract_links_from_dupes: a duplicate's links are followed only when it is on.
    if (!settings.extractLinksFromDupes) ctx.links = [];
    return { kind: 'duplicate', of: a, reason: `duplicate of ${a}`, checksum: ctx.checksum, contentRef, canonical: false };
  }
}
