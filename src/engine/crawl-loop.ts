/**
 * The crawl loop: starts a task on each ready site while request slots are
 * free, sleeps until a site is ready or something wakes it, and ends when
 * no task runs and no site has work (or on a stop, or at max pages).
 *
 *   ┌─► stopped? max pages? a trawl_limits bound (cycle-limits.ts)? disk full (wait for space)?
 *   │   suspended time slot (MS-FSCCFG 2.2.4.23)? else held sites held,
 *   │   SiteScheduler.ready(now, free slots) ─► SiteTasks.run(site) for each
 *   │   nothing running and nothing queued ─► done
 *   └── sleep until the next site is ready, or notify()
 */

import { TrawlError } from '../core/errors.ts';
import { SUSPEND_RECHECK_MS } from './runtime.ts';
import type { CrawlerOptions, CycleSummary } from './crawl-types.ts';
import type { CycleEnv } from './cycle-env.ts';
import type { SiteTasks } from './site-task.ts';

export class CrawlLoop {
  private wakeUp: (() => void) | undefined;

  /** Wakes the loop (a slot was freed, work arrived, a stop). */
  notify(): void {
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  async run(env: CycleEnv, siteTasks: SiteTasks, opts: CrawlerOptions, signal: AbortSignal): Promise<CycleSummary['stoppedBy']> {
    const maxConcurrency = opts.maxConcurrency ?? 64;
    const c = env.stats.c;
    // A task holds one of the maxConcurrency request slots until its
    // response is in (releaseSlot), then extracts, stores and commits the
    // page without it: the content store's and the crawl store's group
    // commits make that take tens of ms, and holding the slot meanwhile kept
    // the crawl below its concurrency. At most seven times as many pages may
    // be in that second half, so that the documents held in memory stay
    // bounded; fewer left the bench crawl slower (bench/README.md, *What changed*, 9f4fb33).
    const maxTasks = 8 * maxConcurrency;
    const tasks = new Set<Promise<void>>();
    let requesting = 0;
    for (;;) {
      if (signal.aborted) {
        // In-flight fetches are aborted; wait for them to put their URIs back.
        await Promise.allSettled(tasks);
        return 'signal';
      }
      if (opts.maxPages !== undefined && c.requests >= opts.maxPages) {
        await Promise.allSettled(tasks);
        return 'max-pages';
      }
      const now = env.now();
      const limit = env.limits.reached(now);
      if (limit !== undefined) {
        // trawl_limits (cycle-limits.ts): no fetch starts; the ones under way finish.
        await Promise.allSettled(tasks);
        return limit;
      }
      if (env.disk.paused) {
        // A write failed for lack of space: no fetch starts until there is some again.
        await env.disk.waitForSpace(signal);
        continue;
      }
      let nextMs: number | undefined;
      const slot = env.rt.delayNow(undefined, now);
      if (slot === 'suspend') {
        // MS-FSCCFG 2.2.4.23: crawling is suspended during this slot.
        nextMs = now + SUSPEND_RECHECK_MS;
      } else {
        const held = opts.heldSites?.();
        if (held) for (const [siteKey, until] of held) if (until > now) env.sched.hold(env.sched.get(siteKey), until);
        // At most the free slots' worth of sites: tasks only grow within this turn.
        const ready = env.sched.ready(now, Math.min(maxConcurrency - requesting, maxTasks - tasks.size));
        nextMs = ready.nextMs;
        for (const site of ready.sites) {
          if (opts.maxPages !== undefined && c.requests + siteTasks.inFlight >= opts.maxPages) break;
          requesting++;
          let holding = true;
          const releaseSlot = (): void => {
            if (!holding) return;
            holding = false;
            requesting--;
            this.notify();
          };
          const t = siteTasks.run(site, releaseSlot).catch((err: unknown) => {
            if (!env.disk.noteFailure(err, `while crawling ${site.site}`)) env.events.emit({ type: 'error', code: err instanceof TrawlError ? err.code : 'TRAWL_ERR_INTERNAL', message: `internal error on ${site.site}: ${(err as Error).stack ?? String(err)}` });
          });
          tasks.add(t);
          void t.finally(() => {
            releaseSlot();
            tasks.delete(t);
            this.notify();
          });
        }
      }
      // refresh_mode adaptive: the next minor cycle begins at its time (or, with refresh 0, once this one is idle).
      const minorAt = env.adaptive?.nextMinorAt(tasks.size === 0 && env.sched.idle());
      if (minorAt !== undefined && minorAt <= now) {
        await env.adaptive!.beginMinor();
        continue;
      }
      if (tasks.size === 0 && env.sched.idle() && minorAt === undefined) {
        // A node of a multinode installation ends its cycle with the installation's: until then it waits for work routed to it.
        const routing = opts.routing;
        if (routing === undefined || !(await routing.pending())) return 'done';
        nextMs = Math.min(nextMs ?? Number.POSITIVE_INFINITY, env.now() + routing.pollMs);
      }
      if (minorAt !== undefined && minorAt !== Number.POSITIVE_INFINITY) nextMs = Math.min(nextMs ?? minorAt, minorAt);
      // Woken at max_crawl_duration's deadline at the latest, not at the next site's delay.
      if (env.limits.deadline !== Number.POSITIVE_INFINITY) nextMs = Math.min(nextMs ?? env.limits.deadline, env.limits.deadline);
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        // Not unref'd: this timer is what keeps the process alive while every site waits for its delay.
        if (nextMs !== undefined) timer = setTimeout(resolve, Math.max(1, nextMs - env.now()));
      });
      // Cleared when woken early (a stop above all): left running, a site's
      // delay (60 s by default) kept a stopped daemon alive that long.
      clearTimeout(timer);
      this.wakeUp = undefined;
    }
  }
}
