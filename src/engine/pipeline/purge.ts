/**
 * The purge stage (trawl_purge, the Elastic crawler's purge phase): in the
 * place of classify when the collection purges, and acting only on the
 * URIs the purge phase queued (URI_FLAGS.PURGE, engine/purge.ts); every
 * other page is classify's, unchanged.
 *
 *   purge URI ─► classify (counts, the error policy)
 *                 3xx, 4xx (not 401 with credentials, not 429) ─► failed, delete: the record
 *                          is deleted and each content destination told (outcome-writer.ts);
 *                          a redirect's target is not followed
 *                 2xx ─► on through the pipeline as any page: its document refreshed, its
 *                        links followed (a page reached only through one that answered
 *                        304, which carries no links, is found again this way)
 *                 304 ─► unchanged
 *                 5xx, a failure ─► as classify says: http_errors (an Elastic YAML
 *                        collection's 5xx is DELETE:3, three failing cycles in a row)
 */

import { URI_FLAGS } from '../../store/frontier-store.ts';
import type { CycleEnv } from '../cycle-env.ts';
import type { ClassifyStage } from './classify.ts';
import type { PageContext, PageOutcome, PageStage } from './page-context.ts';

export class PurgeStage implements PageStage {
  readonly name = 'purge';
  private readonly classify: ClassifyStage;

  constructor(_env: CycleEnv, classify: ClassifyStage) {
    this.classify = classify;
  }

  run(ctx: PageContext): PageOutcome | undefined {
    const r = this.classify.run(ctx);
    if (((ctx.uri.flags ?? 0) & URI_FLAGS.PURGE) === 0) return r;
    const o = ctx.fetched;
    if (o === undefined || o.kind !== 'response') return r;
    if (o.status >= 300 && o.status < 500 && o.status !== 304 && o.status !== 429 && o.authFailure === undefined) {
      ctx.links.length = 0;
      return { kind: 'failed', action: 'delete', httpStatus: o.status, code: undefined, reason: `purge: HTTP ${o.status}`, errorCount: (ctx.previous?.errorCount ?? 0) + 1 };
    }
    return r;
  }
}
