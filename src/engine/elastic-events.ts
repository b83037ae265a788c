/**
 * The Elastic crawler's event log: its event names and ECS fields
 * (lib/crawler/event_generator.rb of the Elastic Open Crawler; the
 * reference's "event logs"), for a collection with trawl_elastic.events
 * (an Elastic YAML collection has it by default).
 *
 *   CrawlEvents.emit(e) ─ elastic off ─► e as it is (no work at all)
 *                       └ elastic on  ─► e + ecs (toElastic below)
 *   emission points that only exist in the Elastic log (crawl-start,
 *   crawl-end, crawl-seed, url-seed, url-discover allowed, url-extracted,
 *   the periodic crawl-status of elastic-status.ts) build their record with
 *   the functions here, only when elastic is on. trawl's own notes (cycle,
 *   robots.txt, disk, login) are info events named trawl-cycle, trawl-robots,
 *   trawl-disk, trawl-login.
 *
 * Each record is one flat object of dotted ECS names, as the Elastic
 * crawler writes them: @timestamp, event.kind/type/action/outcome, url.*,
 * crawler.crawl.id (the refresh cycle's ID: 24 hexadecimal digits, cycle-lifecycle.ts),
 * crawler.url.deny_reason, http.response.status_code, …
 *
 * trawl's skip codes become the Elastic deny reasons (DENY_REASONS); a code
 * without an Elastic counterpart keeps trawl's reason in `message`.
 */

import { hostname } from 'node:os';
import type { CrawlEvent } from './crawl-types.ts';
import { URI_SKIP_CODE_LIST } from '../core/skip-codes.ts';

export type Ecs = Readonly<Record<string, unknown>>;

/** What every record of one crawl carries. */
export interface ElasticCrawl {
  readonly id: string;
}

const STATIC: Ecs = { 'service.type': 'crawler', 'process.pid': process.pid, 'host.name': hostname(), 'crawler.crawl.stage': 'primary' };
const URI_CODES: ReadonlySet<string> = new Set(URI_SKIP_CODE_LIST);

function base(crawl: ElasticCrawl, kind: 'event' | 'metric', fields: Ecs): Ecs {
  const out: Record<string, unknown> = { '@timestamp': new Date().toISOString(), ...STATIC, 'crawler.crawl.id': crawl.id, 'event.kind': kind };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

/** The url.* fields of a URL (the Elastic crawler's url_fields; the password is never written). */
export function urlFields(href: string): Ecs {
  let u: URL;
  try {
    u = new URL(href);
  } catch {
    return { 'url.full': href };
  }
  return {
    'url.full': href,
    'url.scheme': u.protocol.slice(0, -1),
    'url.domain': u.hostname,
    ...(u.port !== '' ? { 'url.port': Number(u.port) } : {}),
    'url.path': u.pathname,
    ...(u.search !== '' ? { 'url.query': u.search.slice(1) } : {}),
    ...(u.username !== '' ? { 'url.username': decodeURIComponent(u.username) } : {}),
  };
}

/**
 * trawl skip code → the Elastic crawler's deny reason for a URL it does not
 * queue (url-discover) or a page it does not index (url-extracted / fetch).
 */
export function denyReasonOf(code: string, reason: string): string {
  switch (code) {
    case 'ch': return 'incorrect_protocol';
    case 'do': return 'domain_filter_denied';
    case 'ro': return 'robots_txt_disallowed';
    case 'ic': return 'already_seen';
    case 'de': return 'link_too_deep';
    case 'nf': return 'nofollow';
    case 'rl': return 'too_many_unique_links';
    case 'ur':
      if (/Elastic crawl rule/.test(reason)) return 'crawl_rule_denied';
      if (/max_url_length|longer than/.test(reason)) return 'link_too_long';
      if (/max_url_segments|segments/.test(reason)) return 'link_with_too_many_segments';
      if (/max_url_params|parameters/.test(reason)) return 'link_with_too_many_params';
      if (/max_unique_urls/.test(reason)) return 'too_many_unique_links';
      return 'domain_filter_denied';
    case 'mi': return 'content_type_denied';
    case 'ni': return 'noindex';
    case 'cs': return 'duplicate';
    case 'tl': return 'response_too_large';
    default: return code;
  }
}

export function crawlStart(crawl: ElasticCrawl, resume: boolean): Ecs {
  return base(crawl, 'event', { 'event.type': 'start', 'event.action': 'crawl-start', 'crawler.crawl.resume': resume });
}

export function crawlEnd(crawl: ElasticCrawl, outcome: 'success' | 'failure', message: string, resumePossible: boolean): Ecs {
  return base(crawl, 'event', { 'event.type': 'end', 'event.action': 'crawl-end', 'event.outcome': outcome, 'crawler.crawl.resume_possible': resumePossible, message });
}

/** Every leaf of a nested object as `prefix.key.key…` (the Open Crawler's prefixed_ecs_event). */
function prefixed(fields: Readonly<Record<string, unknown>>, prefix: string, out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [k, v] of Object.entries(fields)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) prefixed(v as Record<string, unknown>, `${prefix}.${k}`, out);
    else out[`${prefix}.${k}`] = v;
  }
  return out;
}

/** The periodic crawl-status record: the crawl's status as crawler.status.* (elastic-status.ts). */
export function crawlStatus(crawl: ElasticCrawl, status: Readonly<Record<string, unknown>>): Ecs {
  return base(crawl, 'metric', { ...prefixed(status, 'crawler.status'), 'event.type': 'info', 'event.action': 'crawl-status' });
}

/** An automatic crawl that fell due while another ran and was not started (the Elastic crawl status `skipped`). */
export function crawlSkipped(crawl: ElasticCrawl, message: string): Ecs {
  return base(crawl, 'event', { 'event.type': 'end', 'event.action': 'crawl-skipped', 'event.outcome': 'unknown', 'crawler.crawl.status': 'skipped', message });
}

export function crawlSeed(crawl: ElasticCrawl, count: number): Ecs {
  return base(crawl, 'event', { 'event.type': 'change', 'event.action': 'crawl-seed', 'crawler.crawl.seed_urls.count': count, 'crawler.url.type': 'content' });
}

export function urlSeed(crawl: ElasticCrawl, url: string, source: string | undefined, depth: number, sourceType: 'seed_list' | 'organic' | 'redirect' | 'sitemap'): Ecs {
  return base(crawl, 'event', {
    ...urlFields(url), 'event.type': 'start', 'event.action': 'url-seed', 'crawler.url.type': 'content', 'crawler.url.source_type': sourceType,
    'crawler.url.source_url.full': source, 'crawler.url.crawl_depth': depth,
  });
}

export function urlDiscover(crawl: ElasticCrawl, url: string, source: string | undefined, depth: number | undefined, denied?: { reason: string; message: string }): Ecs {
  return base(crawl, 'event', {
    ...urlFields(url), 'event.type': denied ? 'denied' : 'allowed', 'event.action': 'url-discover',
    'crawler.url.deny_reason': denied?.reason, 'crawler.url.crawl_depth': depth, 'crawler.url.source_url.full': source, message: denied?.message,
  });
}

export function urlExtracted(crawl: ElasticCrawl, url: string, outcome: 'success' | 'failure', denied?: { reason: string; message: string }): Ecs {
  return base(crawl, 'event', {
    ...urlFields(url), 'event.type': denied ? 'denied' : 'allowed', 'event.action': 'url-extracted', 'event.module': 'html', 'event.outcome': outcome,
    'crawler.url.deny_reason': denied?.reason, message: denied?.message,
  });
}

export function urlOutput(crawl: ElasticCrawl, url: string, sink: string, ok: boolean, message: string, startMs: number, endMs: number): Ecs {
  return base(crawl, 'event', {
    ...urlFields(url), 'event.type': 'info', 'event.action': 'url-output', 'event.module': sink, 'event.outcome': ok ? 'success' : 'failure',
    'event.start': new Date(startMs).toISOString(), 'event.end': new Date(endMs).toISOString(), 'event.duration': Math.round((endMs - startMs) * 1e6), message,
  });
}

/** An event every collection reports, in the Elastic crawler's terms; undefined for those it has no event for. */
export function toElastic(crawl: ElasticCrawl, e: CrawlEvent): Ecs | undefined {
  switch (e.type) {
    case 'fetch': {
      if (e.status === undefined || e.url === undefined) return undefined;
      const ok = e.status >= 200 && e.status < 300;
      return base(crawl, 'event', {
        ...urlFields(e.url), 'event.type': 'access', 'event.action': 'url-fetch', 'event.outcome': ok ? 'success' : e.status >= 300 && e.status < 600 ? 'failure' : 'unknown',
        'http.request.method': 'get', 'http.response.status_code': String(e.status), 'http.response.body.bytes': ok ? e.bytes : undefined,
        'event.duration': e.durationMs !== undefined ? Math.round(e.durationMs * 1e6) : undefined,
        'crawler.url.redirect.location': e.location, 'crawler.url.redirect.count': e.redirectCount, message: ok || e.location !== undefined ? undefined : e.message,
      });
    }
    case 'skip': {
      if (e.url === undefined || e.code === undefined) return undefined;
      const denied = { reason: denyReasonOf(e.code, e.message), message: e.message };
      if (URI_CODES.has(e.code)) return urlDiscover(crawl, e.url, e.from, undefined, denied);
      return urlExtracted(crawl, e.url, 'failure', denied);
    }
    case 'error':
      return base(crawl, 'event', { ...(e.url !== undefined ? urlFields(e.url) : {}), 'event.type': 'error', 'error.message': e.message, 'error.code': e.code });
    case 'cycle':
    case 'robots':
    case 'disk':
    case 'login':
      // trawl's own notes: events of their own (trawl-cycle, trawl-robots, …); crawl-status is only the periodic statistics.
      return base(crawl, 'event', { ...(e.url !== undefined ? urlFields(e.url) : {}), 'event.type': 'info', 'event.action': `trawl-${e.type}`, message: e.message });
    case 'elastic':
      return e.ecs;
  }
}
