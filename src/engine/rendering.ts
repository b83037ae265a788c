/**
 * A cycle's JavaScript rendering (use_javascript): the Renderer (Chromium,
 * src/render/renderer.ts) and the rules every request a rendered page makes
 * goes through, made only when the collection or a sub-collection sets
 * use_javascript.
 *
 *   a dependency request ─► http(s) only ─► robots.txt of its site (loaded as a task would)
 *     ─► paced per host by javascript_delay (delay when absent)
 *     ─► the crawl's fetcher: egress policy with pinned DNS, cookies, authentication,
 *        proxies, body limits ─► a redirect: the next hop again through all of it (max_redirects)
 *     ─► the response handed to the browser, or the request refused
 *
 * A dependency is never crawled as a page: nothing here queues a link. One
 * outside the scope is fetched as a dependency and counted apart.
 */

import { pathAndQuery, siteOf } from '../core/url.ts';
import type { CollectionSettings } from '../config/registry.ts';
import type { FetchLimits, HttpFetcher, ProxySet } from '../fetch/http-fetcher.ts';
import { browserHeaders, Renderer, type DependencyAnswer, type DependencyRequest, type RenderResult } from '../render/renderer.ts';
import type { CrawlEvents } from './crawl-events.ts';
import type { PageContext } from './pipeline/page-context.ts';
import type { KnownRobots, RobotsManager } from './robots-manager.ts';
import type { Runtime } from './runtime.ts';

const NOTHING = (): void => undefined;

export interface RenderCounters {
  /** Pages rendered, and those that failed once (retried) and twice (skipped js). */
  rendered: number;
  retried: number;
  skipped: number;
  /** Dependency requests answered from a fetch, of them outside the scope, and refused (egress, robots.txt, scheme, method, a failed fetch). */
  dependencies: number;
  outOfScope: number;
  refused: number;
  dependencyBytes: number;
}

export interface RenderingParts {
  readonly rt: Runtime;
  readonly fetcher: HttpFetcher;
  readonly robots: RobotsManager;
  readonly events: CrawlEvents;
  readonly signal: AbortSignal;
  readonly now: () => number;
  readonly proxyFor?: ((sub: string | undefined) => ProxySet | undefined) | undefined;
}

/** Does the collection or one of its sub-collections set use_javascript? */
export function usesJavascript(rt: Runtime): boolean {
  return rt.settings.useJavascript || rt.subs.some((s) => rt.settingsFor(s.name).useJavascript);
}

export class Rendering {
  readonly renderer: Renderer;
  readonly counters: RenderCounters = { rendered: 0, retried: 0, skipped: 0, dependencies: 0, outOfScope: 0, refused: 0, dependencyBytes: 0 };
  private readonly p: RenderingParts;
  /** Per host, the dependency fetch the next one waits for (javascript_delay); a host leaves once its last one is done. */
  private readonly gates = new Map<string, Promise<void>>();
  private readonly robotsLoading = new Map<string, Promise<KnownRobots>>();

  constructor(p: RenderingParts) {
    this.p = p;
    const r = p.rt.settings.render;
    Renderer.check(r.browser, p.rt.name);
    this.renderer = new Renderer({
      browser: r.browser, contexts: r.contexts, pageTimeoutMs: r.pageTimeoutS * 1000, networkIdleMs: r.networkIdleMs,
      pageMemoryMb: r.pageMemoryMb, totalMemoryMb: r.totalMemoryMb, restartAfter: r.restartAfter,
    });
  }

  /** Renders the page of `ctx` (its response is the main document). */
  render(ctx: PageContext): Promise<RenderResult> {
    const o = ctx.response;
    return this.renderer.render({
      url: ctx.uri.url, status: o.status, headers: browserHeaders(o.headers), body: o.body,
      dependency: (req) => this.dependency(ctx, req),
    });
  }

  /** The crawl is stopping: a render cut short says nothing about the page. */
  get stopping(): boolean {
    return this.p.signal.aborted;
  }

  close(): Promise<void> {
    return this.renderer.close();
  }

  /** One request of a rendered page, under the crawl's rules. */
  private async dependency(ctx: PageContext, req: DependencyRequest): Promise<DependencyAnswer> {
    const { rt, fetcher } = this.p;
    const c = this.counters;
    const settings = ctx.settings;
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'POST') return this.refuse(`method ${req.method} is not fetched for a page`);
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return this.refuse('not a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return this.refuse(`scheme ${url.protocol} is not fetched for a page`);
    url.hash = '';
    const decision = rt.scope.decide({ url, parent: undefined, hops: 0, viaRedirect: false, seed: false });
    const offScope = !decision.allowed;
    const limits = this.limitsFor(settings);
    const headers = ctx.uri.sub === undefined ? rt.headers : rt.headersFor(ctx.uri.sub);
    for (let hop = 0; hop <= settings.maxRedirects; hop++) {
      if (this.p.signal.aborted) return this.refuse('the crawl is stopping');
      const robots = await this.robotsFor(siteOf(url));
      if (robots.unreachable !== undefined) return this.refuse(`${url.href}: site unreachable (${robots.unreachable})`);
      if (!robots.rules.isAllowed(pathAndQuery(url))) return this.refuse(`${url.href}: disallowed by robots.txt`);
      const sent = await this.pace(url.host, ctx);
      const o = await fetcher.fetch({
        url, headers, acceptCompression: settings.acceptCompression && settings.useHttp11, http10: !settings.useHttp11, limits,
        // The page's own body bytes and Content-Type (JSON, text, form, binary), not post_payload's form encoding.
        ...(req.method === 'POST' && hop === 0 ? { postBody: req.postData ?? new Uint8Array(0), postContentType: req.contentType } : {}),
        ...(this.p.proxyFor ? { proxy: this.p.proxyFor(ctx.uri.sub) } : {}),
        referer: ctx.uri.url,
        signal: this.p.signal,
        onSent: sent,
      });
      // A fetch that failed before its request left opens the gate too.
      sent();
      if (o.kind === 'failure') return this.refuse(`${url.href}: ${o.reason}`);
      const location = o.headers.location;
      if (o.status >= 300 && o.status < 400 && location) {
        try {
          url = new URL(location, url);
        } catch {
          return this.refuse(`${url.href}: a redirect to an unusable Location`);
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') return this.refuse(`a redirect to scheme ${url.protocol}`);
        continue;
      }
      c.dependencies++;
      if (offScope) c.outOfScope++;
      c.dependencyBytes += o.body.length;
      return { kind: 'response', status: o.status, headers: browserHeaders(o.headers), body: o.body };
    }
    return this.refuse(`${req.url}: more than max_redirects (${settings.maxRedirects}) redirects`);
  }

  private refuse(reason: string): DependencyAnswer {
    this.counters.refused++;
    return { kind: 'refused', reason };
  }

  /** The dependency's site's robots.txt, as a site task loads it: memory, the crawl store, else fetched (once at a time per site). */
  private robotsFor(site: string): Promise<KnownRobots> {
    const robots = this.p.robots;
    const known = robots.known(site);
    if (known) return Promise.resolve(known);
    let loading = this.robotsLoading.get(site);
    if (!loading) {
      loading = (async (): Promise<KnownRobots> => {
        const cached = await robots.cached(site);
        if (cached) return cached;
        return robots.fetch(site, { bytesIn: 0, bytesOut: 0, requests: 0 }, this.p.signal);
      })().finally(() => this.robotsLoading.delete(site));
      this.robotsLoading.set(site, loading);
    }
    return loading;
  }

  /**
   * javascript_delay (delay when absent) between the starts of two
   * dependency fetches from one host: each waits for the one before it to be
   * sent (`onSent`, as the site scheduler counts) and the delay to pass.
   * Returns the callback that marks this one sent; with no delay, nothing waits.
   */
  private async pace(host: string, ctx: PageContext): Promise<() => void> {
    const now = this.p.now();
    const d = ctx.settings.javascriptDelayS;
    const fallback = this.p.rt.delayNow(ctx.uri.sub, now);
    const delayMs = d !== undefined ? d * 1000 : fallback === 'suspend' ? 0 : fallback;
    if (delayMs <= 0) return NOTHING;
    const before = this.gates.get(host);
    let open!: () => void;
    const mine = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.gates.set(host, mine);
    if (before) await before;
    let sent = false;
    return () => {
      if (sent) return;
      sent = true;
      setTimeout(() => {
        if (this.gates.get(host) === mine) this.gates.delete(host);
        open();
      }, delayMs).unref();
    };
  }

  private limitsFor(settings: CollectionSettings): FetchLimits {
    const maxDocumentBytes = settings.trawlLimits.maxDocumentBytes;
    return {
      fetchTimeoutMs: settings.fetchTimeoutS * 1000,
      connectTimeoutMs: settings.trawlLimits.connectTimeoutS * 1000,
      cutOffBytes: maxDocumentBytes, truncate: false,
      maxDecompressedBytes: settings.trawlLimits.maxDecompressedBytes,
      maxDocumentBytes,
    };
  }
}
