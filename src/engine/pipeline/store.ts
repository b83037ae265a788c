import type { CycleEnv } from '../cycle-env.ts';
import type { PageContext, PageOutcome, PageStage } from './page-context.ts';

/**
 * Store: the document goes to the content store (with its header block
 * under store_http_header). The last stage: every page that reaches it is
 * stored; the outcome writer commits it and deletes the copy it replaces.
 */
export class StoreStage implements PageStage {
  readonly name = 'store';

  private readonly env: CycleEnv;

  constructor(env: CycleEnv) {
    this.env = env;
  }

  async run(ctx: PageContext): Promise<PageOutcome> {
    const { settings, uri, previous } = ctx;
    const o = ctx.response;
    const checksum = ctx.checksum!;
    const contentRef = await this.env.content.put(uri.url, { body: ctx.document ?? o.body, header: settings.storage.storeHttpHeader ? o.headerBlock : undefined, mime: ctx.mime! });
    return { kind: 'stored', checksum, contentRef, modified: previous?.checksum ? previous.checksum !== checksum : false };
  }
}
