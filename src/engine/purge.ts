/**
 * The purge phase (trawl_purge; the Elastic crawler's "purge crawl"): with
 * it, a refresh cycle crawls what its start URIs lead to, as the Elastic
 * crawler does, rather than every URI the crawl store knows; once the
 * cycle has run out of work, the documents it did not reach are fetched
 * once more, and those that answer 3xx or 4xx are deleted from the crawl
 * store and from every content destination (pipeline/purge.ts decides each
 * answer); one that answers 2xx is processed as any page, links and all.
 *
 *   cycle ends with nothing left (stoppedBy done)
 *     └─► walk the records: a document (stored, unchanged, or an error that kept its content)
 *         whose record is from an earlier cycle ─► queued again with URI_FLAGS.PURGE
 *     └─► the crawl loop runs again over them: robots.txt, politeness and the
 *         trawl_limits bounds as for any fetch
 *
 * Only with refresh_mode scratch (CycleEnv.purges): the other modes decide
 * themselves what a cycle fetches again. A cycle a bound or a stop ended
 * has no purge phase: what it did not reach may simply not have had its
 * turn.
 */

import { siteOf } from '../core/url.ts';
import type { QueuedUri } from '../store/crawl-store.ts';
import { URI_FLAGS } from '../store/frontier-store.ts';
import type { CycleEnv } from './cycle-env.ts';

const PAGE = 5000;

/** Queues the documents the cycle did not reach for the purge; returns how many. */
export async function queuePurge(env: CycleEnv): Promise<number> {
  let n = 0;
  for (let from: number | undefined; ;) {
    const page = await env.store.listRecordPage(env.name, { ...(from !== undefined ? { from } : {}), limit: PAGE });
    const batch: QueuedUri[] = [];
    for (const r of page.records) {
      if (r.epoch >= env.epoch || r.contentRef === undefined) continue;
      if (r.status !== 'stored' && r.status !== 'unchanged' && r.status !== 'error') continue;
      const u = new URL(r.url);
      batch.push({ url: r.url, site: siteOf(u), depth: r.depth, hops: r.depth, redirects: 0, parent: r.parent, priority: env.rt.priorityOf(u, false), sub: env.rt.subOf(u), flags: URI_FLAGS.PURGE });
    }
    if (batch.length > 0) {
      const queued = await env.store.requeue(env.name, env.epoch, batch);
      n += queued;
      const bySite = new Map<string, number>();
      for (const q of batch) bySite.set(q.site, (bySite.get(q.site) ?? 0) + 1);
      for (const [site, k] of bySite) env.sched.addWork(site, k);
    }
    if (page.records.length < PAGE) return n;
    from = page.last;
  }
}
