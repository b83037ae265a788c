/**
 * One Chromium per process, shared by every collection that renders
 * (`trawl serve` with several use_javascript collections): each
 * collection's Renderer keeps its own pool of contexts in it (trawl_render
 * contexts), and the browser process is a generation of the host.
 *
 *   Renderer.render ─► begin(): the current generation (launched by the first page that needs one), its page count +1
 *                   ─► the page rendered in a context of that generation
 *                   ─► end(): its page count −1
 *   restart (restart_after, total_memory, a crashed renderer) ─► retire(gen): new pages go to the next generation;
 *                   the retired one is closed when its last page under way ends, so that
 *                   one collection's restart never cuts another's pages short
 *   the browser died ─► its generation retired at once (its pages fail and go back to the queue)
 *
 * Collections share a browser when they name the same executable and
 * page_memory (a flag of the browser process); otherwise each such group
 * has its own. The last Renderer to detach closes what is left.
 */

import type { Browser } from 'playwright-core';
import { trawlError } from '../core/errors.ts';

/** One browser process of the host. */
export interface BrowserGeneration {
  readonly browser: Browser;
  /** 1 for the host's first browser, then +1 per launch. */
  readonly n: number;
  /** Pages begun on it, and under way on it now. */
  pages: number;
  active: number;
  retired: boolean;
}

export interface BrowserLaunch {
  readonly executable: string;
  readonly args: readonly string[];
}

export interface HostCounters {
  launches: number;
  restarts: number;
}

const CLOSE_WAIT_MS = 10_000;

export class BrowserHost {
  readonly counters: HostCounters = { launches: 0, restarts: 0 };
  private readonly launchWith: BrowserLaunch;
  /** The generation new pages get (while it launches, and once it runs). */
  private current: Promise<BrowserGeneration> | undefined;
  private currentGen: BrowserGeneration | undefined;
  private readonly closing = new Set<Promise<void>>();
  private readonly live = new Set<BrowserGeneration>();
  private users = 0;
  private generations = 0;

  constructor(launch: BrowserLaunch) {
    this.launchWith = launch;
  }

  /** A Renderer begins to use the host; `detach` when it is done. */
  attach(): void {
    this.users++;
  }

  /** A Renderer is done with the host; the last one closes every browser of it (and waits for that). */
  async detach(): Promise<void> {
    this.users = Math.max(0, this.users - 1);
    if (this.users > 0) return;
    const current = this.current;
    this.current = undefined;
    this.currentGen = undefined;
    if (current) await current.then(() => undefined, () => undefined);
    for (const g of [...this.live]) this.close(g);
    await Promise.all([...this.closing]);
  }

  /**
   * The generation a page is rendered on, counted as under way on it until
   * `end`; `launched` when this call started it. Rejects when the browser
   * cannot be started.
   */
  async begin(): Promise<{ gen: BrowserGeneration; launched: boolean }> {
    let launched = false;
    // A generation retired while this page waited for it to launch (it died at once) is not used: another is started, twice at most.
    for (let attempt = 0; ; attempt++) {
      if (!this.current) {
        launched = true;
        const launching = this.launch();
        this.current = launching;
        launching.then((g) => {
          if (this.current !== launching) return;
          if (g.retired) this.current = undefined;
          else this.currentGen = g;
        }, () => {
          if (this.current === launching) this.current = undefined;
        });
      }
      const gen = await this.current;
      if (gen.retired && attempt < 2) continue;
      gen.pages++;
      gen.active++;
      return { gen, launched };
    }
  }

  /** The page begun on `gen` ended: a retired generation goes once its last page has. */
  end(gen: BrowserGeneration): void {
    gen.active--;
    if (gen.retired && gen.active <= 0) this.close(gen);
  }

  /** New pages go to a new browser; `gen` is closed once its pages under way end. True when this call retired it. */
  retire(gen: BrowserGeneration): boolean {
    if (gen.retired) return false;
    gen.retired = true;
    this.counters.restarts++;
    this.forget(gen);
    if (gen.active <= 0) this.close(gen);
    return true;
  }

  /** New pages no longer get `gen`. */
  private forget(gen: BrowserGeneration): void {
    if (this.currentGen === gen) {
      this.currentGen = undefined;
      this.current = undefined;
    }
  }

  private async launch(): Promise<BrowserGeneration> {
    const { chromium } = await import('playwright-core');
    let browser: Browser;
    try {
      browser = await chromium.launch({
        executablePath: this.launchWith.executable, headless: true, timeout: 60_000,
        args: [...this.launchWith.args],
        handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false,
      });
    } catch (err) {
      throw trawlError('RENDER_LAUNCH', { path: this.launchWith.executable, why: ((err as Error).message ?? String(err)).split('\n')[0] ?? '' });
    }
    this.counters.launches++;
    const gen: BrowserGeneration = { browser, n: ++this.generations, pages: 0, active: 0, retired: false };
    this.live.add(gen);
    browser.on('disconnected', () => {
      // Crashed or killed: its pages fail; the next page starts another browser.
      this.live.delete(gen);
      gen.retired = true;
      this.forget(gen);
    });
    return gen;
  }

  private close(gen: BrowserGeneration): void {
    if (!this.live.delete(gen)) return;
    const done: Promise<void> = Promise.race([
      gen.browser.close().catch(() => undefined),
      new Promise<void>((r) => setTimeout(r, CLOSE_WAIT_MS).unref()),
    ]).then(() => {
      this.closing.delete(done);
    });
    this.closing.add(done);
  }
}

const hosts = new Map<string, BrowserHost>();

/** The process's host for browsers started with this executable and these flags. */
export function browserHost(launch: BrowserLaunch): BrowserHost {
  const key = JSON.stringify([launch.executable, ...launch.args]);
  let host = hosts.get(key);
  if (!host) {
    host = new BrowserHost(launch);
    hosts.set(key, host);
  }
  return host;
}
