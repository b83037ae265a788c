/**
 * One unit of work on a ready site: its robots.txt, or its next URI.
 *
 *   resolve + pin DNS (bind the per-IP gate; ipmask / ip6mask judged once per site)
 *   robots.txt: the rules in memory, else the crawl store's copy, else fetched (the whole task);
 *               none for an ftp:// site (robots.txt is an HTTP convention: said once per site)
 *   lease ─► a suspect waits for the one under way ─► refused before any request?
 *         (robots.txt, a sent link out of scope, an address rule) ─► a form login
 *         that covers the site (logged in, or `lf`) ─► max_doc
 *         ─► fetch (the gate moves on when the request is sent; HttpFetcher, or FtpFetcher
 *            for ftp://; a lost login session: log in again and fetch once more) ─► PagePipeline
 *
 * A task holds a request slot until its response is in (releaseSlot); the
 * site may start its next request once the pipeline has made its decisions
 * about it, which it does before its first await.
 */

import { isDiskFull } from '../core/disk-full.ts';
import { pathAndQuery } from '../core/url.ts';
import type { CollectionSettings } from '../config/registry.ts';
import type { SiteResolver } from '../fetch/egress.ts';
import type { FtpFetching } from '../fetch/ftp-lazy.ts';
import type { HttpFetcher, FetchLimits, FetchOutcome, FetchRequest, ProxySet } from '../fetch/http-fetcher.ts';
import { DEFAULT_MAX_BYTES as FEED_MAX_BYTES } from '../extract/feed.ts';
import { fetchDelayMs, type FetchDelayPolicy, type SiteState } from '../frontier/site-scheduler.ts';
import { isSuspect, URI_FLAGS, type LeasedUri } from '../store/crawl-store.ts';
import type { CycleEnv } from './cycle-env.ts';
import type { FormLogin, FormLogins } from './form-logins.ts';
import { PageContext, type PageOutcome } from './pipeline/page-context.ts';
import type { PagePipeline } from './pipeline/pipeline.ts';
import type { KnownRobots, RobotsManager } from './robots-manager.ts';
import { refererFor } from './request-setup.ts';
import type { Seeder } from './seeding.ts';
import { SUSPEND_RECHECK_MS } from './runtime.ts';

/** How long a site whose next URI is a suspect waits while another suspect is fetched. */
const SUSPECT_WAIT_MS = 100;
/** refresh_mode adaptive: a URI this minor cycle did not take; its lease ends without a fetch or a record (adaptive-refresh.ts). */
const NOT_THIS_MINOR_CYCLE: PageOutcome = { kind: 'listed' };

export interface SiteTaskParts {
  readonly env: CycleEnv;
  readonly resolver: SiteResolver;
  readonly fetcher: HttpFetcher;
  /** ftp:// URIs. */
  readonly ftp: FtpFetching;
  readonly robots: RobotsManager;
  readonly seeder: Seeder;
  readonly pipeline: PagePipeline;
  readonly signal: AbortSignal;
  /** Wakes the crawl loop. */
  readonly wake: () => void;
  /** Sites refused by ipmask / ip6mask domain rules once their address was known (kept for the crawl's life). */
  readonly addressRefused: Map<string, string>;
  /** The proxies of a sub-collection's URIs (proxy); absent: the collection names none. */
  readonly proxyFor?: ((sub: string | undefined) => ProxySet | undefined) | undefined;
  /** post_payload: the body POSTed to a URI; absent: the section is empty. */
  readonly postPayloadFor?: ((url: string) => string | undefined) | undefined;
  /** trawl_http send_referer: the parent URL goes with the request. */
  readonly sendReferer?: boolean;
  /** logins: the form logins of the cycle; absent: the collection has none. */
  readonly logins?: FormLogins | undefined;
  /** trawl_politeness delay_factor: the wait after each fetch follows its duration (Heritrix); absent: off. */
  readonly fetchDelay?: FetchDelayPolicy | undefined;
  /** login_failed_ignore: a covered site is crawled even when its login failed. */
  readonly loginFailedIgnore?: boolean;
}

export class SiteTasks {
  /** Requests in flight (robots.txt and pages). */
  inFlight = 0;
  /** A suspect URI is being fetched (fetchOne): suspects go one at a time. */
  private suspectUnderWay = false;
  /** The ftp:// sites told that robots.txt does not apply to them (once per site and cycle). */
  private readonly ftpRobotsTold = new Set<string>();

  private readonly p: SiteTaskParts;

  constructor(p: SiteTaskParts) {
    this.p = p;
  }

  /** One unit of work on a site: its robots.txt, or its next URI. `releaseSlot` gives up its request slot. */
  async run(site: SiteState, releaseSlot: () => void): Promise<void> {
    const { env, resolver } = this.p;
    const routing = env.opts.routing;
    // A multinode installation: a site routed elsewhere (or not yet routed) is not this node's to fetch.
    if (routing !== undefined && (routing.fenced || routing.ownerOf(site.site) !== 'me')) return this.notMine(site);
    site.busy = true;
    try {
      const resolved = await resolver.resolve(site.host);
      if (resolved.ok && env.rt.settings.enforceDelayPerIp) env.sched.bindGate(site, resolved.address);
      // ipmask / ip6mask domain rules depend on host and address only: judged once per site, before any request.
      const refusedByAddress = resolved.ok && env.rt.addressScope ? env.rt.addressScope(new URL(site.site), resolved.address) : undefined;
      if (refusedByAddress && !refusedByAddress.allowed) this.p.addressRefused.set(site.site, refusedByAddress.reason);
      // The rules this task judges its URI by: held here, because the robots memory cache
      // may forget the site while the task awaits (it keeps the sites seen last).
      let robots = this.p.robots.known(site.site);
      let needRobots = env.rt.settings.robots && !this.p.addressRefused.has(site.site) && !robots;
      if (needRobots && site.site.startsWith('ftp:')) {
        // robots.txt (RFC 9309) is an HTTP convention: an FTP site has none to obey.
        needRobots = false;
        if (!this.ftpRobotsTold.has(site.site)) {
          this.ftpRobotsTold.add(site.site);
          env.events.emit({ type: 'robots', url: site.site, message: 'robots.txt does not apply to FTP: the site is crawled without one (the delay, max_pending and the scope still apply)' });
        }
      }
      if (needRobots) {
        const cached = await this.p.robots.cached(site.site);
        if (cached) {
          needRobots = false;
          robots = cached;
          // Queued once per cycle: the store ignores sitemaps already seen when the site is read back.
          await this.p.seeder.queueRobotsSitemaps(site, cached.parsed.sitemaps);
        }
      }
      if (robots) site.crawlDelayMs = (robots.rules.crawlDelayS ?? 0) * 1000;
      // Unresolved: nothing can be fetched from this site; its URIs fail one by one below without a request.
      if (needRobots && resolved.ok) return await this.fetchRobots(site);
      if (site.buffer.length === 0) {
        const pop = env.levelPop;
        if (pop !== undefined && !pop.knows(site.site)) pop.resume(site.site, await env.store.levelCounts(env.name, site.site, env.epoch));
        const leased = pop === undefined
          ? await env.store.lease(env.name, site.site, Math.max(1, env.rt.settings.maxPending))
          : await env.store.lease(env.name, site.site, Math.max(1, env.rt.settings.maxPending), pop.order(site.site));
        if (pop !== undefined) for (const u of leased) pop.took(site.site, u.priority);
        site.queued = Math.max(0, site.queued - leased.length);
        if (leased.length === 0) site.queued = 0;
        site.hold(leased);
      }
      const uri = site.next() as LeasedUri | undefined;
      if (!uri) return;
      try {
        await this.fetchOne(site, uri, robots, releaseSlot);
      } catch (err) {
        // A full disk: nothing of this page was committed and it is still
        // leased; it goes back in front of its site, to be fetched again
        // once there is space (the loop's catch pauses the crawl).
        if (isDiskFull(err)) {
          site.putBack(uri);
          env.sched.addWork(site.site, 0);
        }
        throw err;
      }
    } finally {
      site.busy = false;
    }
  }

  /**
   * A site this node may not fetch now (multinode): the URIs it holds go
   * back to the queue, and it waits until the routing gives it work again
   * (CollectionCrawl.noteWork from the node's tick).
   */
  private async notMine(site: SiteState): Promise<void> {
    const held = site.drain() as LeasedUri[];
    site.queued = 0;
    if (held.length > 0) await this.p.env.store.release(this.p.env.name, held.map((u) => u.id));
  }

  /** The site's robots.txt, fetched as the site's request of this task. */
  private async fetchRobots(site: SiteState): Promise<void> {
    const env = this.p.env;
    if (env.sched.readyAt(site) > env.now()) return; // the gate moved (shared IP): try again when ready
    site.sub = undefined;
    env.sched.started(site, env.now());
    const fetchDelay = this.p.fetchDelay;
    const fetchStartMs = fetchDelay === undefined ? 0 : env.now();
    if (fetchDelay !== undefined) env.sched.fetchStarted(site, fetchStartMs + fetchDelay.maxMs);
    this.inFlight++;
    const stats = { bytesIn: 0, bytesOut: 0, requests: 0 };
    try {
      const r = await this.p.robots.fetch(site.site, stats, this.p.signal, () => env.sched.sent(site, env.now()));
      site.crawlDelayMs = (r.rules.crawlDelayS ?? 0) * 1000;
      env.stats.c.robotsRequests += stats.requests;
      env.stats.c.bytesIn += stats.bytesIn;
      const st = env.stats.statsFor(site.site);
      st.add('ReadNet', stats.bytesIn);
      st.add('WriteNet', stats.bytesOut);
      if (r.parsed.sitemaps.length > 0) st.add('HasSitemap');
      env.events.emit({ type: 'robots', url: `${site.site}/robots.txt`, message: r.reason });
      await this.p.seeder.queueRobotsSitemaps(site, r.parsed.sitemaps);
    } finally {
      this.inFlight--;
      if (fetchDelay !== undefined) {
        const end = env.now();
        env.sched.fetchEnded(site, end, fetchDelayMs(end - fetchStartMs, fetchDelay));
      }
      env.sched.finished(site, false);
    }
  }

  /**
   * A suspect (a URI in flight when the process last died: isSuspect) is
   * fetched one at a time: while one is under way, another waits with its site. It
   * is armed in the store before its request, and disarmed by its
   * completion, so that if the process dies again the store names this URI
   * and no other (CRASH_STRIKE in crawl-store.ts).
   */
  private async fetchOne(site: SiteState, uri: LeasedUri, robots: KnownRobots | undefined, releaseSlot: () => void): Promise<void> {
    if (!isSuspect(uri.flags)) return this.fetchLeased(site, uri, robots, releaseSlot);
    const env = this.p.env;
    if (this.suspectUnderWay) {
      site.notBeforeMs = env.now() + SUSPECT_WAIT_MS;
      site.putBack(uri);
      return;
    }
    this.suspectUnderWay = true;
    try {
      await env.store.armSuspect(env.name, uri.id);
      env.events.emit({ type: 'fetch', url: uri.url, message: 'fetched as the one suspect under way: it was in flight when the crawler stopped unexpectedly' });
      await this.fetchLeased(site, uri, robots, releaseSlot);
    } finally {
      this.suspectUnderWay = false;
      this.p.wake();
    }
  }

  /** What turns a URI away before any request: its outcome, or undefined to fetch it. robots.txt is consulted now (its rules may be newer than the link). */
  private refusal(site: SiteState, uri: LeasedUri, url: URL, robots: KnownRobots | undefined): PageOutcome | undefined {
    if (robots && !robots.rules.isAllowed(pathAndQuery(url))) return { kind: 'refused', code: 'ro', reason: 'disallowed by robots.txt' };
    if ((uri.flags ?? 0) & URI_FLAGS.SENT) {
      // Sent by another collection (send_links_to): this collection's scope decides.
      const d = this.p.env.rt.scope.decide({ url, parent: undefined, hops: uri.hops, viaRedirect: false, seed: false });
      if (!d.allowed) return { kind: 'refused', code: d.code!, reason: `sent by another collection: ${d.reason}` };
    }
    const refused = this.p.addressRefused.get(site.site);
    if (refused !== undefined) return { kind: 'refused', code: 'do', reason: refused };
    return undefined;
  }

  private async fetchLeased(site: SiteState, uri: LeasedUri, robots: KnownRobots | undefined, releaseSlot: () => void): Promise<void> {
    const { env, pipeline } = this.p;
    const url = new URL(uri.url);
    const settings = env.rt.settingsFor(uri.sub);
    const st = env.stats.statsFor(site.site);
    if (robots?.unreachable) {
      // robots.txt could not even be requested: every URI of the site fails the same way, without a request.
      const previous = await env.store.getRecord(env.name, uri.url);
      const failure: FetchOutcome = { kind: 'failure', code: 'co', errorKey: 'net', reason: `site unreachable (robots.txt: ${robots.unreachable})`, blocked: false, connectFailure: true, bytesIn: 0, bytesOut: 0, durationMs: 0 };
      await pipeline.run(new PageContext(site, uri, previous, failure, settings, st, env.now()));
      return;
    }
    const refused = this.refusal(site, uri, url, robots);
    if (refused) return pipeline.write(new PageContext(site, uri, undefined, undefined, settings, st, env.now()), refused);
    // logins: a covered site is logged into before its URI is fetched.
    const login = this.p.logins?.covering(url);
    let loginGeneration = 0;
    if (login) {
      const r = await this.p.logins!.ensure(login);
      if (this.p.signal.aborted) {
        // Stopping: the URI stays leased and goes back to the queue, whatever the login came to.
        site.putBack(uri);
        return;
      }
      if (!r.ok && !this.p.loginFailedIgnore) return this.loginRefused(new PageContext(site, uri, undefined, undefined, settings, st, env.now()), r.reason);
      loginGeneration = r.generation;
    }
    // max_doc: documents downloaded from one site at most.
    if (site.fetched >= settings.maxDoc) {
      site.closed = true;
      await env.store.release(env.name, [uri.id, ...(site.drain() as LeasedUri[]).map((b) => b.id)]);
      const dropped = await env.store.dropQueued(env.name, site.site);
      env.events.emit({ type: 'skip', url: uri.url, message: `max_doc ${settings.maxDoc} reached for ${site.site}; ${dropped + 1} queued URIs are not fetched in this cycle` });
      return;
    }
    // A URI the store has no record of (told with its lease) needs no round trip to the storage thread to learn it.
    const previous = uri.crawled === false ? undefined : await env.store.getRecord(env.name, uri.url);
    const postBody = this.p.postPayloadFor?.(uri.url);
    const referer = this.p.sendReferer ? refererFor(uri.parent, url) : undefined;
    site.sub = uri.sub;
    const earliest = env.sched.earliestStart(site, env.sched.policy.delayMs(site));
    if (earliest > env.now()) {
      // The gate moved while this task was preparing (a shared IP), or this
      // URI's sub-collection asks for a longer delay: put it back in front.
      site.notBeforeMs = earliest;
      site.putBack(uri);
      return;
    }
    // Checks that put the URI back come before the places the cycle limits hand out below.
    if (uri.sub !== undefined && env.rt.delayNow(uri.sub, env.now()) === 'suspend') {
      // MS-FSCCFG 2.2.4.23: the sub-collection's variable_delay slot suspends its
      // crawling: the URI waits in front of its site, and the site is looked at again later.
      site.putBack(uri);
      env.sched.hold(site, env.now() + SUSPEND_RECHECK_MS);
      return;
    }
    // refresh_mode adaptive (adaptive-refresh.ts): what this minor cycle did not take is not fetched now.
    if (env.adaptive && env.adaptive.admit(uri, previous !== undefined && previous.status !== 'deleted') !== 'fetch') {
      return pipeline.write(new PageContext(site, uri, undefined, undefined, settings, st, env.now()), NOT_THIS_MINOR_CYCLE);
    }
    // limits.max_doc (cycle-limits.ts): a URI never fetched takes one of the places left, or is not fetched.
    const newDocument = previous === undefined && env.limits.countsDocuments;
    if (newDocument && !env.limits.takeNewDocument()) {
      return pipeline.write(new PageContext(site, uri, undefined, undefined, settings, st, env.now()), { kind: 'refused', code: 'rl', reason: 'limits.max_doc reached: refresh-only, only known URIs are fetched' });
    }
    if (!env.limits.takeFetch(uri.retries)) {
      // trawl_limits.max_unique_urls used up: the loop ends the cycle once the fetches under way are in.
      if (newDocument) env.limits.settleNewDocument(false);
      site.putBack(uri);
      return;
    }
    env.sched.started(site, env.now());
    const fetchDelay = this.p.fetchDelay;
    const fetchStartMs = fetchDelay === undefined ? 0 : env.now();
    if (fetchDelay !== undefined) env.sched.fetchStarted(site, fetchStartMs + fetchDelay.maxMs);
    this.inFlight++;
    site.busy = false;
    // The loop may start another request to this site now (max_pending).
    this.p.wake();
    let outcome: FetchOutcome;
    /** Why the page is skipped with `lf`: its session was lost and the login again failed. */
    let loginFailure: string | undefined;
    try {
      const req: FetchRequest = {
        url,
        headers: uri.sub === undefined ? env.rt.headers : env.rt.headersFor(uri.sub),
        acceptCompression: settings.acceptCompression && settings.useHttp11,
        http10: !settings.useHttp11,
        ...(settings.ifModifiedSince && previous?.etag ? { ifNoneMatch: previous.etag } : {}),
        ...(settings.ifModifiedSince && previous?.lastModified ? { ifModifiedSince: previous.lastModified } : {}),
        ...(postBody !== undefined ? { postBody } : {}),
        ...(referer !== undefined ? { referer } : {}),
        ...(this.p.proxyFor ? { proxy: this.p.proxyFor(uri.sub) } : {}),
        limits: this.limitsFor(uri, settings),
        signal: this.p.signal,
        onSent: () => env.sched.sent(site, env.now()),
      };
      outcome = url.protocol === 'ftp:' ? await this.p.ftp.fetch({
        url,
        limits: req.limits,
        passive: settings.ftpPassive,
        ...(settings.ifModifiedSince && previous?.lastModified ? { ifModifiedSince: previous.lastModified } : {}),
        signal: this.p.signal,
        onSent: req.onSent,
      }) : await this.p.fetcher.fetch(req);
      if (login && !this.p.signal.aborted) {
        const again = await this.afterLostSession(login, loginGeneration, url, req, outcome);
        if (typeof again === 'string') loginFailure = again;
        else outcome = again;
      }
    } finally {
      this.inFlight--;
      if (fetchDelay !== undefined) {
        const end = env.now();
        env.sched.fetchEnded(site, end, fetchDelayMs(end - fetchStartMs, fetchDelay));
      }
      // The response is in: extracting, storing and committing it need no request slot.
      releaseSlot();
    }
    if (this.p.signal.aborted) {
      // Stopping: the URI stays leased and goes back to the queue.
      env.sched.finished(site, false);
      site.putBack(uri);
      return;
    }
    env.stats.c.requests++;
    st.add('Processed');
    st.data.discrete.LastUri = uri.url;
    if (loginFailure !== undefined) {
      env.sched.finished(site, true);
      const ctx = new PageContext(site, uri, undefined, undefined, settings, st, env.now());
      ctx.newDocument = newDocument;
      return this.loginRefused(ctx, loginFailure);
    }
    // The site is free for its next request once the pipeline has made its
    // decisions about it (failures, a Retry-After pause, closing it), which
    // it does before its first await: storing and committing the page take
    // tens of ms (the group commits) and need not hold max_pending back;
    // COMMIT_BACKLOG bounds how many of the site's pages may wait for that.
    site.committing++;
    try {
      const ctx = new PageContext(site, uri, previous, outcome, settings, st, env.now());
      ctx.newDocument = newDocument;
      const processing = pipeline.run(ctx);
      env.sched.finished(site, true);
      await processing;
    } finally {
      site.committing--;
    }
  }

  /**
   * A covered page that shows its login session was lost (form-logins.ts
   * sessionLost): logs in again (once for all the pages that saw the same
   * session end) and fetches the page once more. Returns the outcome to
   * go on with, or why the page is skipped (the login failed, and
   * login_failed_ignore is off).
   */
  private async afterLostSession(login: FormLogin, generation: number, url: URL, req: FetchRequest, outcome: FetchOutcome): Promise<FetchOutcome | string> {
    const logins = this.p.logins!;
    const lost = logins.sessionLost(login, url, outcome);
    if (lost === undefined) return outcome;
    const r = await logins.relogin(login, generation, `session lost: ${lost}`);
    if (!r.ok) return this.p.loginFailedIgnore ? outcome : r.reason;
    if (this.p.signal.aborted) return outcome;
    const again = await this.p.fetcher.fetch(req);
    if (again.kind === 'response' && (again.status === 401 || again.status === 403) && outcome.kind === 'response' && outcome.status === again.status) logins.statusReloginUseless(login);
    return again;
  }

  /** A URI of a site whose form login failed: skipped with `lf` and the login's reason, before any request for it. */
  private loginRefused(ctx: PageContext, reason: string): Promise<void> {
    const env = this.p.env;
    // Logged whatever log.screened says (the writer logs it too when that is on).
    if (!env.events.logScreened) env.events.emit({ type: 'skip', url: ctx.uri.url, code: 'lf', message: reason });
    return this.p.pipeline.write(ctx, { kind: 'refused', code: 'lf', reason });
  }

  /**
   * The bounds of one fetch. Every body is bounded by max_document_bytes.
   * A sitemap stops at trawl_sitemaps max_bytes as it streams in, and its
   * entries within those bytes are read (as parseSitemap reads a larger
   * body): a 1 GB sitemap costs max_bytes, not a gigabyte. A channel queued
   * as one (rss.start_uris) past the feed reader's limit is refused there.
   */
  private limitsFor(uri: LeasedUri, settings: CollectionSettings): FetchLimits {
    const maxDocumentBytes = settings.trawlLimits.maxDocumentBytes;
    const flags = uri.flags ?? 0;
    const own = flags & URI_FLAGS.SITEMAP ? this.p.env.rt.settings.sitemaps.maxBytes : flags & URI_FLAGS.FEED ? FEED_MAX_BYTES : undefined;
    return {
      fetchTimeoutMs: settings.fetchTimeoutS * 1000,
      connectTimeoutMs: settings.trawlLimits.connectTimeoutS * 1000,
      readTimeoutMs: settings.trawlLimits.readTimeoutS !== undefined ? settings.trawlLimits.readTimeoutS * 1000 : undefined,
      cutOffBytes: own !== undefined ? Math.min(own, maxDocumentBytes) : settings.cutOffBytes,
      truncate: own !== undefined ? (flags & URI_FLAGS.SITEMAP) !== 0 : settings.truncate,
      ...(own !== undefined && !(flags & URI_FLAGS.SITEMAP) ? { cutOffName: 'the channel size limit' } : {}),
      maxDecompressedBytes: settings.trawlLimits.maxDecompressedBytes,
      maxDocumentBytes,
    };
  }
}
