/**
 * JavaScript rendering (use_javascript): Debian's Chromium, driven by
 * playwright-core, started only when the first page needs it.
 *
 *   render(job) ─► a place in this collection's pool (trawl_render contexts)
 *               ─► the process's browser (browser-host.ts: one Chromium shared by every collection
 *                  that renders, launched by the first page that needs it)
 *               ─► a context of the pool (made once per browser process: WebSockets refused,
 *                  history.pushState recorded, every request routed: the main document is the
 *                  response trawl already fetched; any other goes to `job.dependency`, trawl's
 *                  fetcher and rules) with its one page, which navigates from page to page
 *               ─► load, then network idle (no request of the page's own for network_idle ms),
 *                  all within page_timeout ─► the rendered HTML and the URLs pushed
 *               ─► the context back in the pool (closed instead when its page failed); after restart_after
 *                  pages of the browser, above total_memory, or when a renderer crashed, the browser is
 *                  retired: new pages get a new one, and the old one closes when its last page under way
 *                  (of any collection) ends; a browser that died is replaced by the next page
 *
 * The browser itself reaches no network: every request is answered by the
 * route handler, and its own connections (a preconnect, a prefetch) go to a
 * proxy on a closed loopback port. A page's JavaScript heap is capped at
 * page_memory by V8's own limit: a page past it crashes its renderer and
 * fails like a hang does. A render never throws: it returns why it failed.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { trawlError } from '../core/errors.ts';
import { browserHost, type BrowserGeneration, type BrowserHost } from './browser-host.ts';

export interface RenderSettings {
  /** The Chromium executable. */
  readonly browser: string;
  /** Pages rendered at once. */
  readonly contexts: number;
  readonly pageTimeoutMs: number;
  readonly networkIdleMs: number;
  readonly pageMemoryMb: number;
  readonly totalMemoryMb: number;
  readonly restartAfter: number;
}

/** A request the page made, other than its main document. */
export interface DependencyRequest {
  readonly url: string;
  readonly method: string;
  /** The request body as the page sent it (bytes), and its Content-Type. */
  readonly postData: Uint8Array | null;
  readonly contentType: string | undefined;
  readonly resourceType: string;
}

/** How a dependency is answered: a response, or refused with a reason. */
export type DependencyAnswer =
  | { readonly kind: 'response'; readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: Uint8Array }
  | { readonly kind: 'refused'; readonly reason: string };

export interface RenderJob {
  readonly url: string;
  /** The main document as trawl fetched it (decoded). */
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  /** Fetches a dependency under trawl's rules; never rejects. */
  readonly dependency: (req: DependencyRequest) => Promise<DependencyAnswer>;
}

export type RenderResult =
  | { readonly ok: true; readonly html: string; readonly pushed: readonly string[]; readonly navigations: readonly string[]; readonly ms: number }
  | { readonly ok: false; readonly reason: string };

/** The flags Chromium runs with: no GPU, no QUIC, no background traffic of its own (updates, sync, safe browsing lists). */
export const CHROMIUM_FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage',
  // Whatever the browser would fetch itself goes to a closed port: every page request is answered by the route handler.
  '--proxy-server=http://127.0.0.1:9', '--proxy-bypass-list=<-loopback>',
] as const;

/** Records every URL a page pushes onto its history (client-side routing), before any of its scripts runs. */
const PUSH_STATE_SCRIPT = `(() => {
  const seen = [];
  Object.defineProperty(window, '__trawlPushed', { value: seen, enumerable: false });
  for (const name of ['pushState', 'replaceState']) {
    const original = history[name];
    history[name] = function (state, title, url) {
      try { if (url !== undefined && url !== null && seen.length < 1000) seen.push(String(new URL(String(url), location.href))); } catch (e) {}
      return original.apply(this, arguments);
    };
  }
})();`;

/** The document as page.content() serializes it, and the URLs the page pushed. */
const SNAPSHOT_SCRIPT = `(() => {
  let html = '';
  if (document.doctype) html = new XMLSerializer().serializeToString(document.doctype);
  if (document.documentElement) html += document.documentElement.outerHTML;
  return [html, Array.from(window.__trawlPushed || [])];
})()`;

/** Response headers that do not describe the decoded body the browser is given. */
const DROPPED_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'set-cookie']);

export function browserHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || DROPPED_HEADERS.has(k)) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

export interface RendererCounters {
  pages: number;
  failures: number;
  launches: number;
  restarts: number;
  webSockets: number;
}

class RenderFailure extends Error {}

/** What the route handler knows of a page being rendered. */
interface PageState {
  readonly job: RenderJob;
  mainServed: boolean;
  inFlight: number;
  lastDoneMs: number;
  readonly navigations: string[];
}

/**
 * Memory of the processes below `root` whose command is Chromium (from
 * /proc): each one's proportional set size (smaps_rollup's Pss), so that
 * the pages Chromium's processes share are counted once between them, not
 * once per process as a sum of their RSS would (which is close to twice
 * the real figure, and made total_memory restart a browser that was well
 * within it). A process whose Pss cannot be read counts its RSS.
 */
export function browserMemoryBytes(root = process.pid): number {
  const parent = new Map<number, number>();
  const rss = new Map<number, number>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const n of names) {
    const pid = Number(n);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const f = stat.slice(close + 2).split(' ');
      parent.set(pid, Number(f[1]));
      if (comm.startsWith('chrom')) rss.set(pid, Number(f[21]) * 4096);
    } catch {
      // gone
    }
  }
  let total = 0;
  for (const [pid, bytes] of rss) {
    let p = parent.get(pid);
    for (let hops = 0; p !== undefined && p > 1 && hops < 16; hops++) {
      if (p === root) {
        total += pssBytes(pid) ?? bytes;
        break;
      }
      p = parent.get(p);
    }
  }
  return total;
}

function pssBytes(pid: number): number | undefined {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'latin1'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export class Renderer {
  readonly counters: RendererCounters = { pages: 0, failures: 0, launches: 0, restarts: 0, webSockets: 0 };
  private readonly s: RenderSettings;
  /** The process's browser, shared with the other collections that render (browser-host.ts). */
  private readonly host: BrowserHost;
  private attached = false;
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private closed = false;
  private lastMemoryCheckMs = 0;
  /** This collection's contexts not in use, each of the browser generation it was made in. */
  private idleContexts: Array<{ readonly gen: BrowserGeneration; readonly context: BrowserContext; readonly page: Page }> = [];
  /** The pages being rendered, for the route handler. */
  private readonly pages = new Map<Page, PageState>();

  constructor(s: RenderSettings) {
    this.s = s;
    this.host = browserHost({ executable: s.browser, args: [...CHROMIUM_FLAGS, `--js-flags=--max-old-space-size=${s.pageMemoryMb}`] });
  }

  /** Throws TRAWL_ERR_RENDER_BROWSER, naming the package, when the executable is not there. */
  static check(browser: string, collection: string): void {
    if (!existsSync(browser)) throw trawlError('RENDER_NO_BROWSER', { name: collection, path: browser });
  }

  /** Renders one page; never throws. */
  async render(job: RenderJob): Promise<RenderResult> {
    await this.acquire();
    const started = Date.now();
    let gen: BrowserGeneration | undefined;
    try {
      if (this.closed) return { ok: false, reason: 'the crawl is stopping' };
      if (!this.attached) {
        this.attached = true;
        this.host.attach();
      }
      try {
        const b = await this.host.begin();
        gen = b.gen;
        if (b.launched) this.counters.launches++;
      } catch (err) {
        this.counters.failures++;
        return { ok: false, reason: (err as Error).message };
      }
      const r = await this.renderOn(gen, job, started);
      if (r.ok) this.counters.pages++;
      else this.counters.failures++;
      if (gen.pages >= this.s.restartAfter) this.restart(gen);
      this.checkMemory(gen);
      return r;
    } finally {
      if (gen) this.host.end(gen);
      this.release();
    }
  }

  /** Closes this collection's contexts; the browser closes with the last collection that renders. Renders after this fail at once. */
  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    const idle = this.idleContexts;
    this.idleContexts = [];
    await Promise.all(idle.map((c) => withinMs(c.context.close(), 5_000)));
    if (this.attached) {
      this.attached = false;
      await this.host.detach();
    }
  }

  private acquire(): Promise<void> {
    if (this.active < this.s.contexts) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.waiting.push(() => {
        this.active++;
        resolve();
      });
    });
  }

  private release(): void {
    this.active--;
    this.wakeAll();
  }

  private wakeAll(): void {
    while (this.waiting.length > 0 && (this.closed || this.active < this.s.contexts)) this.waiting.shift()!();
  }

  /**
   * restart_after, total_memory or a crashed renderer: the browser's next
   * pages go to a new one; this one closes when its last page under way
   * (of any collection) ends.
   */
  private restart(gen: BrowserGeneration): void {
    if (this.host.retire(gen)) this.counters.restarts++;
  }

  /** total_memory: the browser's processes' resident memory, read at most every 2 s. */
  private checkMemory(gen: BrowserGeneration): void {
    const now = Date.now();
    if (now - this.lastMemoryCheckMs < 2000) return;
    this.lastMemoryCheckMs = now;
    if (browserMemoryBytes() > this.s.totalMemoryMb * 1024 * 1024) this.restart(gen);
  }

  /**
   * A context of the pool: made once per browser process with what every
   * page in it shares (no service workers, WebSockets refused, the
   * pushState recorder, the route handler that answers each request for
   * the page it belongs to), and reused page after page; one whose page
   * failed is closed instead.
   */
  private async newContext(browser: Browser): Promise<BrowserContext> {
    const context = await browser.newContext({ serviceWorkers: 'block', acceptDownloads: false });
    await context.routeWebSocket(/.*/, (ws) => {
      this.counters.webSockets++;
      ws.close({ code: 1008, reason: 'WebSockets are not fetched by the crawler' });
    });
    await context.addInitScript(PUSH_STATE_SCRIPT);
    await context.route('**/*', (route) => this.answer(route));
    return context;
  }

  /** One request of a page: its main document from the job, anything else through the job's rules. */
  private async answer(route: Route): Promise<void> {
    const req = route.request();
    let state: PageState | undefined;
    try {
      state = this.pages.get(req.frame().page());
    } catch {
      // a request of no page (a worker's): not answered
    }
    if (!state) {
      await route.abort('blockedbyclient').catch(() => undefined);
      return;
    }
    if (req.isNavigationRequest() && req.frame() === req.frame().page().mainFrame()) {
      if (!state.mainServed) {
        state.mainServed = true;
        const job = state.job;
        await route.fulfill({ status: job.status, headers: job.headers, body: asBuffer(job.body) }).catch(() => undefined);
      } else {
        // The page sends the window elsewhere: a link, not something to load now.
        if (state.navigations.length < 100) state.navigations.push(req.url());
        await route.abort('aborted').catch(() => undefined);
      }
      return;
    }
    state.inFlight++;
    try {
      const a = await state.job.dependency({ url: req.url(), method: req.method(), postData: req.postDataBuffer(), contentType: req.headers()['content-type'], resourceType: req.resourceType() });
      if (a.kind === 'response') await route.fulfill({ status: a.status, headers: a.headers, body: asBuffer(a.body) });
      else await route.abort('blockedbyclient');
    } catch {
      await route.abort('failed').catch(() => undefined);
    } finally {
      state.inFlight--;
      state.lastDoneMs = Date.now();
    }
  }

  /** An idle context of `gen`; those of a retired browser are closed (they would keep it open). */
  private idleSlot(gen: BrowserGeneration): { readonly context: BrowserContext; readonly page: Page } | undefined {
    const stale = this.idleContexts.filter((c) => c.gen !== gen);
    if (stale.length > 0) {
      this.idleContexts = this.idleContexts.filter((c) => c.gen === gen);
      for (const c of stale) void withinMs(c.context.close(), 5_000);
    }
    return this.idleContexts.pop();
  }

  private async renderOn(gen: BrowserGeneration, job: RenderJob, started: number): Promise<RenderResult> {
    const browser = gen.browser;
    let context: BrowserContext | undefined;
    let page: Page | undefined;
    let failed: ((e: Error) => void) | undefined;
    const failure = new Promise<never>((_, reject) => {
      failed = reject;
    });
    failure.catch(() => undefined);
    const timer = setTimeout(() => failed!(new RenderFailure(`not rendered within page_timeout (${this.s.pageTimeoutMs / 1000} s)`)), this.s.pageTimeoutMs);
    const onDisconnect = (): void => failed!(new RenderFailure('the browser stopped'));
    browser.once('disconnected', onDisconnect);
    let reusable = false;
    let crashListener: (() => void) | undefined;
    try {
      // A context of the pool with its page, reused: the next page is a navigation of the same tab.
      const slot = this.idleSlot(gen);
      context = slot?.context ?? await Promise.race([this.newContext(browser), failure]);
      page = slot?.page ?? await Promise.race([context.newPage(), failure]);
      const state: PageState = { job, mainServed: false, inFlight: 0, lastDoneMs: Date.now(), navigations: [] };
      this.pages.set(page, state);
      const onCrash = (): void => failed!(new RenderFailure('the renderer crashed (page_memory, or a bug in the page or the browser)'));
      page.on('crash', onCrash);
      crashListener = () => page?.off('crash', onCrash);
      await Promise.race([page.goto(job.url, { waitUntil: 'load', timeout: 0 }), failure]);
      // Network idle: no request of the page's own under way for network_idle ms.
      const idleMs = this.s.networkIdleMs;
      await Promise.race([(async () => {
        for (;;) {
          const quietFor = Date.now() - state.lastDoneMs;
          if (state.inFlight === 0 && quietFor >= idleMs) return;
          await new Promise((r) => setTimeout(r, Math.max(20, Math.min(100, idleMs - quietFor))));
        }
      })(), failure]);
      // The serialized DOM (as page.content() makes it) and the URLs pushed, in one round trip.
      const [html, pushed] = await Promise.race([page.evaluate<[string, string[]]>(SNAPSHOT_SCRIPT), failure]);
      reusable = true;
      return { ok: true, html, pushed, navigations: state.navigations, ms: Date.now() - started };
    } catch (err) {
      if (!(err instanceof RenderFailure)) {
        // Not one of ours: the browser or the page went away under us.
        const msg = (err as Error).message?.split('\n')[0] ?? String(err);
        if (!browser.isConnected()) return { ok: false, reason: `the browser stopped: ${msg}` };
        return { ok: false, reason: `render failed: ${msg}` };
      }
      if (/renderer crashed|browser stopped/.test(err.message)) this.restart(gen);
      return { ok: false, reason: err.message };
    } finally {
      clearTimeout(timer);
      browser.off('disconnected', onDisconnect);
      crashListener?.();
      if (page) this.pages.delete(page);
      if (reusable && context && page && browser.isConnected() && !gen.retired && !this.closed) {
        this.idleContexts.push({ gen, context, page });
      } else if (context) {
        // A page stuck in a loop is closed with its context and renderer; if even that hangs, the browser goes.
        const closedInTime = await Promise.race([context.close().then(() => true, () => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000).unref())]);
        if (!closedInTime) this.restart(gen);
      }
    }
  }
}

/** Waits for `p` (never rejecting) at most `ms`. */
function withinMs(p: Promise<unknown>, ms: number): Promise<void> {
  return Promise.race([p.then(() => undefined, () => undefined), new Promise<void>((r) => setTimeout(r, ms).unref())]);
}

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}
