/**
 * The collection `trawl crawl URL…` builds from URLs given on its command
 * line, with its one-shot defaults and options. `trawl config show --url`
 * and `trawl urltest --crawl-url` build the same collection, so they show
 * and judge exactly what `trawl crawl URL` applies. A configuration FILE
 * never gets these defaults: it means what MS-FSCCFG says, in every command
 * (docs/crawling.md, "Settings: files and URLs").
 */

import type { Command } from 'commander';
import { TrawlError, trawlError } from '../core/errors.ts';
import { parseUrl } from '../core/url.ts';
import { emptyCollection, emptySection, type CollectionConfig } from '../config/model.ts';
import { wholeNumberOption } from './options.ts';

/**
 * MS-FSCCFG's defaults suit long-running collections (a 60 s delay, a 300 s
 * timeout, http only). The collection built from command-line URLs sets
 * these instead; an option given (`--delay`) wins.
 */
export const ONE_SHOT_DEFAULTS: ReadonlyArray<readonly [string, number | readonly string[]]> = [
  ['delay', 1.0],
  ['fetch_timeout', 30],
  ['robots_timeout', 30],
  ['allowed_schemes', ['http', 'https']],
];

/** The one-shot options of `trawl crawl URL…`, set in the collection built from the URLs. */
export interface UrlCrawlOptions {
  /** `delay`, seconds. */
  readonly delayS?: number;
  /** `crawlmode` `mode` DEPTH:n: page hops from a start URI. */
  readonly depth?: number;
  /** The User-Agent header line (`headers`). */
  readonly userAgent?: string;
  /** `use_sitemaps`. */
  readonly sitemaps?: boolean;
}

/** The options as commander gives them. */
export interface UrlOptionValues {
  delay?: string;
  depth?: string;
  userAgent?: string;
  sitemaps?: boolean;
}

/**
 * A collection that crawls the given URLs, scoped to their own hosts, with
 * the one-shot defaults written into it (so the crawl store keeps them, and
 * `trawl admin config` or `config show` print them); ftp is allowed when
 * one of them is ftp://.
 */
export function collectionForUrls(urls: readonly string[], o: UrlCrawlOptions = {}): CollectionConfig {
  const c = emptyCollection(`crawl-${new URL(urls[0]!).hostname.replace(/[^A-Za-z0-9.-]/g, '_')}`);
  for (const [k, v] of ONE_SHOT_DEFAULTS) c.root.attribs.set(k, Array.isArray(v) ? [...(v as readonly string[])] : v);
  c.root.attribs.set('start_uris', [...urls]);
  // An ftp:// URL: the FTP fetcher crawls it (docs/crawling.md, FTP).
  if (urls.some((u) => /^ftp:/i.test(u))) c.root.attribs.set('allowed_schemes', ['http', 'https', 'ftp']);
  if (o.delayS !== undefined) c.root.attribs.set('delay', o.delayS);
  if (o.userAgent !== undefined) c.root.attribs.set('headers', [`User-Agent: ${o.userAgent}`]);
  if (o.sitemaps !== undefined) c.root.attribs.set('use_sitemaps', o.sitemaps);
  if (o.depth !== undefined) {
    const mode = emptySection();
    mode.attribs.set('mode', `DEPTH:${o.depth}`);
    c.root.sections.set('crawlmode', mode);
  }
  const hosts = [...new Set(urls.map((u) => new URL(u).hostname.toLowerCase()))];
  const include = emptySection();
  include.attribs.set('exact', hosts);
  c.root.sections.set('include_domains', include);
  return c;
}

/** Whether a command-line input is a URL to crawl (else a configuration file). */
export const isUrlInput = (input: string): boolean => /^(?:https?|ftp):\/\//i.test(input);

/** The URLs as the crawl takes them (WHATWG-serialised), or a usage error naming the bad ones. */
export function checkedUrls(urls: readonly string[]): string[] {
  const bad = urls.filter((u) => !isUrlInput(u) || !parseUrl(u));
  if (bad.length) throw trawlError('CRAWL_BAD_URL', { urls: bad.join(', ') });
  return urls.map((u) => new URL(u).href);
}

/** Adds `--delay`, `--depth`, `--user-agent`, `--sitemaps` (for the collection built from URLs). */
export function addUrlOptions(cmd: Command, what: string): Command {
  return cmd
    .option('--delay <s>', `${what}: seconds between two requests to one site (default 1)`)
    .option('--depth <n>', `${what}: follow links at most this many page hops from the URLs (crawlmode DEPTH:n)`)
    .option('--user-agent <s>', `${what}: the User-Agent header sent (robots.txt groups follow its product token)`)
    .option('--sitemaps', `${what}: find and read the sites' sitemaps (use_sitemaps)`);
}

/**
 * `--delay`, `--depth`, `--user-agent`, `--sitemaps`: only for URLs given on
 * the command line (a configuration file says these itself).
 */
export function urlCrawlOptions(opts: UrlOptionValues, hasUrls: boolean, urlsAre = 'the URLs given on the command line'): UrlCrawlOptions {
  const given = (['delay', 'depth', 'userAgent', 'sitemaps'] as const).filter((k) => opts[k] !== undefined);
  if (given.length && !hasUrls) {
    throw trawlError('URL_OPTIONS_WITHOUT_URLS', { options: given.map((k) => `--${k === 'userAgent' ? 'user-agent' : k}`).join(', '), urlsAre });
  }
  let delayS: number | undefined;
  if (opts.delay !== undefined) {
    delayS = Number(opts.delay);
    if (opts.delay.trim() === '' || !Number.isFinite(delayS) || delayS < 0) throw new TrawlError('TRAWL_ERR_USAGE', `--delay must be a number of seconds of at least 0, not ${JSON.stringify(opts.delay)}`);
  }
  if (opts.userAgent !== undefined && (opts.userAgent.trim() === '' || /[\r\n]/.test(opts.userAgent))) throw new TrawlError('TRAWL_ERR_USAGE', '--user-agent must be one non-empty line');
  return {
    ...(delayS !== undefined ? { delayS } : {}),
    ...(opts.depth !== undefined ? { depth: wholeNumberOption('--depth', opts.depth, 0) } : {}),
    ...(opts.userAgent !== undefined ? { userAgent: opts.userAgent.trim() } : {}),
    ...(opts.sitemaps !== undefined ? { sitemaps: opts.sitemaps } : {}),
  };
}

/** The help text's paragraph on which defaults apply, shared by crawl, config show and urltest. */
export const SETTINGS_RULE_HELP = `
Settings: a configuration file means what MS-FSCCFG says, in every command
(trawl crawl, trawl serve, trawl config show, trawl urltest): a parameter it
does not set has MS-FSCCFG's default (delay 60 s, fetch_timeout 300 s,
robots_timeout 300 s, allowed_schemes http). Only the collection trawl crawl
builds from URLs on its command line gets the one-shot defaults: delay 1 s,
fetch_timeout 30 s, robots_timeout 30 s, allowed_schemes http and https.
See it with: trawl config show --url URL; test URLs against it with:
trawl urltest --crawl-url URL URL...`;
