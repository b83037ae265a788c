/**
 * Classify: what kind of answer a fetch got, before its body is looked at.
 *
 *   failure ──► egress refusal: skipped (its code) | else the error policy (net / ttl / int)
 *   3xx ──────► redirect (followed as a link of this page, up to max_redirects)
 *   304 ──────► unchanged
 *   2xx ──────► on to the body's stages
 *   401 the passwd credentials did not get past (authFailure) ──► skipped ot, with the reason
 *   4xx/5xx ──► Retry-After pauses the site (429, 503), then the error policy (the status)
 *
 * The error policy is http_errors, or for an ftp:// URI ftp_errors applied
 * to the FTP reply code (`ftpCode`: 550, 530, …) and to net / ttl / int.
 *
 * Everything that decides about the site (a connection failure counted, the
 * site closed, a pause) happens here, synchronously: the site's next request
 * may start as soon as the pipeline first waits (PageFetcher).
 */

import type { CrawlEvent } from '../crawl-types.ts';
import { urlSeed } from '../elastic-events.ts';
import type { DocSkipCode } from '../../core/skip-codes.ts';
import type { ErrorKey, ResponseOutcome } from '../../fetch/http-fetcher.ts';
import { bump } from '../cycle-stats.ts';
import type { CycleEnv } from '../cycle-env.ts';
import type { PageContext, PageOutcome, PageStage } from './page-context.ts';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const UNCHANGED: PageOutcome = { kind: 'unchanged' };

/** Retry-After: seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

export class ClassifyStage implements PageStage {
  readonly name = 'classify';

  private readonly env: CycleEnv;
  /** trawl_politeness retry_delay, in ms (0: none). */
  private readonly retryDelayMs: number;

  constructor(env: CycleEnv) {
    this.env = env;
    this.retryDelayMs = env.rt.settings.politeness.retryDelayS * 1000;
  }

  run(ctx: PageContext): PageOutcome | undefined {
    const env = this.env;
    const { site, uri, st } = ctx;
    const o = ctx.fetched!;
    st.add('ReadNet', o.bytesIn);
    st.add('WriteNet', o.bytesOut);
    env.stats.c.bytesIn += o.bytesIn;
    if (o.kind === 'failure') {
      if (o.blocked) return { kind: 'skipped', code: o.code, reason: `refused by the egress policy: ${o.reason}` };
      if (o.connectFailure) {
        site.failures++;
        const max = ctx.settings.maxBackoffCounter;
        if (site.failures > max) {
          site.closed = true;
          env.events.emit({ type: 'error', url: uri.url, code: o.code, message: `${site.site}: ${site.failures} connection failures in a row (max_backoff_counter ${max}); the site is left for this cycle` });
        }
      }
      return this.errorPolicy(ctx, o.errorKey, undefined, o.code, o.reason, uri.url.startsWith('ftp:'));
    }
    site.failures = 0;
    st.add('Downloaded');
    st.count('HTTPResponse', String(o.status));
    bump(env.stats.c.httpStatus, String(o.status));
    st.download(o.durationMs / 1000, o.body.length);
    if (o.headers['last-modified']) st.add('HasLastMod');
    if (o.headers.etag) st.add('HasETag');
    const fetched: CrawlEvent = { type: 'fetch', url: uri.url, status: o.status, message: `${o.status} ${o.body.length} bytes in ${Math.round(o.durationMs)} ms` };
    // The Elastic event log's url-fetch also has the body bytes, the duration and a redirect's target.
    env.events.emit(env.events.elastic ? { ...fetched, bytes: o.body.length, durationMs: o.durationMs, ...(REDIRECT_STATUSES.has(o.status) ? { location: redirectTarget(uri.url, o.headers.location), redirectCount: uri.redirects + 1 } : {}) } : fetched);

    if (REDIRECT_STATUSES.has(o.status)) return this.redirect(ctx, o);
    if (o.status === 304) return UNCHANGED;
    if (o.status >= 200 && o.status < 300) return undefined;
    // passwd credentials that did not get past a 401: skipped with the reason, never deleted.
    if (o.authFailure !== undefined) return { kind: 'skipped', code: 'ot', reason: o.authFailure };
    if (o.status === 429 || o.status === 503) {
      const now = env.now();
      const wait = retryAfterMs(o.headers['retry-after'], now);
      if (wait !== undefined) env.sched.pause(site, env.now() + wait, env.now());
    }
    if (o.ftpCode !== undefined) return this.errorPolicy(ctx, o.ftpCode, o.status, undefined, `FTP ${o.headerBlock.slice(4, o.headerBlock.indexOf('\r'))}`, true);
    return this.errorPolicy(ctx, o.status, o.status, undefined, `HTTP ${o.status}`);
  }

  /** MS-FSCCFG 2.2.4.11 (http_errors) and 2.2.4.13 (ftp_errors): KEEP, DELETE[:X] after X consecutive failures, RETRY[:X] within the cycle. */
  private errorPolicy(ctx: PageContext, key: number | ErrorKey, httpStatus: number | undefined, code: DocSkipCode | undefined, reason: string, ftp = false): PageOutcome {
    const policy = ftp ? this.env.rt.ftpPolicy(key) : this.env.rt.httpPolicy(key);
    if (ctx.uri.retries < policy.retries) {
      // trawl_politeness retry_delay (Heritrix retry-delay-seconds): the site waits before the URI is tried again.
      if (this.retryDelayMs > 0) this.env.sched.pause(ctx.site, this.env.now() + this.retryDelayMs, this.env.now());
      return { kind: 'failed', action: 'retry', httpStatus, code, reason, errorCount: ctx.previous?.errorCount ?? 0 };
    }
    const errorCount = (ctx.previous?.errorCount ?? 0) + 1;
    const deleteNow = policy.action === 'delete' && errorCount >= Math.max(1, policy.afterFailures);
    return { kind: 'failed', action: deleteNow ? 'delete' : 'error', httpStatus, code, reason, errorCount };
  }

  /** A redirect is a link of this page (viaRedirect: same depth and hops); the page records where it points. */
  private redirect(ctx: PageContext, o: ResponseOutcome): PageOutcome {
    const { uri } = ctx;
    const location = o.headers.location;
    const target = location ? this.env.normalize(location, uri.url) : undefined;
    if (!target) return { kind: 'redirect', to: undefined, code: 'nr', reason: `redirect ${o.status} without a usable Location` };
    const max = this.env.rt.settings.maxRedirects;
    if (uri.redirects + 1 > max) return { kind: 'redirect', to: target, code: 'nr', reason: `more than max_redirects (${max}) redirects` };
    const next = this.env.screening.admit(uri, target, true, ctx.site.site);
    if (next) {
      const elastic = this.env.events.elastic;
      if (elastic) this.env.events.emitElastic(urlSeed(elastic, next.url, uri.url, next.depth + 1, 'redirect'));
      ctx.links.push(next);
    }
    return { kind: 'redirect', to: target, code: undefined, reason: '' };
  }
}

/** A redirect's Location resolved against the URL it answered (the Elastic event log's crawler.url.redirect.location). */
function redirectTarget(url: string, location: string | string[] | undefined): string | undefined {
  const l = Array.isArray(location) ? location[0] : location;
  if (l === undefined) return undefined;
  try {
    return new URL(l, url).href;
  } catch {
    return undefined;
  }
}
