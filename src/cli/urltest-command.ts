/**
 * `trawl urltest CONFIG URL…` (or `--crawl-url URL URL…`, the collection
 * `trawl crawl URL` builds): would this collection crawl these URLs, and
 * why (or why not)? The same scope pipeline the crawler runs, plus
 * robots.txt, with every rule consulted shown by --explain.
 */

import { readFileSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import type { Command } from 'commander';
import { TrawlError, trawlError } from '../core/errors.ts';
import { skipMeaning } from '../core/skip-codes.ts';
import { normalizeUrl, pathAndQuery, siteOf } from '../core/url.ts';
import { formatDiagnostic, hasErrors } from '../config/diagnostics.ts';
import { readConfigFile } from '../config/load.ts';
import type { CollectionConfig } from '../config/model.ts';
import { httpAuthFor } from '../engine/cycle-setup.ts';
import { describeLogin, formLoginsOf } from '../engine/form-logins.ts';
import { keyFilePath, loadKeyFile, type SecretKey } from '../config/secrets.ts';
import { proxyRoutes, requestPlan, usesProxies, type RequestPlan } from '../engine/request-setup.ts';
import { buildRuntime } from '../engine/runtime.ts';
import { ftpUserFor } from '../engine/cycle-setup.ts';
import { MemoryCookieJar } from '../fetch/cookies.ts';
import { RobotsManager } from '../engine/robots-manager.ts';
import { EgressChecker, SiteResolver } from '../fetch/egress.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { parseRobots, type AgentRules } from '../scope/robots.ts';
import type { TraceStep } from '../scope/scope.ts';
import type { CrawlStore, RobotsRow } from '../store/crawl-store.ts';
import { describeStore } from '../store/open-crawl-store.ts';
import { openStoreOf } from './data-store.ts';
import type { Io } from './io.ts';
import { addUrlOptions, checkedUrls, collectionForUrls, SETTINGS_RULE_HELP, urlCrawlOptions, type UrlOptionValues } from './url-collection.ts';

export interface UrlTestResult {
  /** The URL as judged: normalised as the crawl does (WHATWG, fragment dropped, rewrite_rules, canonicalization, sort_query_params). */
  readonly url: string;
  /** The URL as given, when normalising changed it. */
  readonly input?: string;
  readonly allowed: boolean;
  readonly code: string | null;
  readonly decidedBy: string;
  readonly reason: string;
  readonly trace: TraceStep[];
  /** With --data: what the crawl store holds for the URL (absent: no record). */
  readonly record?: { readonly status: string; readonly skipCode: string | null; readonly skipReason: string | null; readonly httpStatus: number | null; readonly lastCrawled: string };
  /** The passwd entries that would answer a challenge for the URL: names, users, schemes and realms (never a password). */
  readonly credentials?: string;
  /** The form login that covers the URL's host (logins), named with where it submits. */
  readonly login?: string;
  /** With --data and use_cookies: the names, domains and paths of the cookies the saved jar would send (never a value). */
  readonly cookies?: string[];
  /** For an allowed URL: how it would be requested (sub-collection, proxies, method, client certificate); names only. */
  readonly request?: RequestPlan;
}

/** The request line of --explain: method, proxies, sub-collection, client certificate, Referer. */
function describePlan(p: RequestPlan): string {
  const via = p.proxies.length === 0 ? 'straight to the site' : `through proxy ${p.proxies.join(' or ')}`;
  const parts = [`${p.method}${p.method === 'POST' ? ' (post_payload)' : ''} ${via}`];
  if (p.subcollection !== undefined) parts.push(`settings of sub-collection ${p.subcollection}`);
  if (p.clientCert) parts.push(`client certificate ${p.clientCert.certFile}`);
  parts.push(p.referer ? 'Referer: the page it was found on' : 'no Referer');
  return parts.join('; ');
}

/** A robots cache that keeps nothing: urltest must not write anywhere. */
function memoryRobotsStore(): CrawlStore {
  const rows = new Map<string, RobotsRow>();
  return {
    getRobots: async (_c: string, site: string) => rows.get(site),
    putRobots: async (_c: string, site: string, row: RobotsRow) => void rows.set(site, row),
  } as unknown as CrawlStore;
}

export function registerUrltestCommand(program: Command, io: Io, setExit: (code: number) => void): void {
  const cmd = program
    .command('urltest')
    .description('tell whether a collection would crawl each URL, with the skip code; --explain shows every rule consulted')
    .usage('[options] <config> <urls...>  |  --crawl-url <url> [options] <urls...>')
    .argument('[config]', 'configuration file (MS-FSCCFG XML or Elastic YAML); with --crawl-url, the first URL to test')
    .argument('[urls...]', 'URLs to test')
    .option('--crawl-url <url>', 'instead of a file: the collection `trawl crawl URL` crawls (repeat for several URLs), with its one-shot defaults', (v: string, prev: string[] = []) => [...prev, v])
    .option('--collection <name>', 'the collection (needed when the file has several)')
    .option('--explain', 'print every rule consulted, in order, and the one that decided')
    .option('--json', 'print one JSON object per URL: {url, allowed, code, decidedBy, trace}')
    .option('--robots <file>', 'use this robots.txt instead of fetching each site\'s')
    .option('--no-fetch-robots', 'do not fetch robots.txt from the sites')
    .option('--allow-loopback', 'allow fetching robots.txt from loopback addresses')
    .option('--allow-private-networks', 'allow fetching robots.txt from private addresses')
    .option('--data <dir>', 'also show what the crawl store in this data directory holds for each URL (its status and skip code); its key file decrypts !ENC! proxy passwords')
    .option('--store <url>', 'with --data: the crawl store, when the crawl was run with one (sqlite:PATH or postgres://user@host:port/database)');
  addUrlOptions(cmd, 'with --crawl-url')
    .addHelpText('after', SETTINGS_RULE_HELP)
    .action(async (first: string | undefined, rest: string[], opts: { crawlUrl?: string[]; collection?: string; explain?: boolean; json?: boolean; robots?: string; fetchRobots: boolean; allowLoopback?: boolean; allowPrivateNetworks?: boolean; data?: string; store?: string } & UrlOptionValues) => {
      const oneShot = urlCrawlOptions(opts, opts.crawlUrl !== undefined, '--crawl-url');
      let c: CollectionConfig | undefined;
      let urls: string[];
      let baseDir: string;
      if (opts.crawlUrl !== undefined) {
        // The collection `trawl crawl URL…` builds: every positional argument is a URL to test.
        if (opts.collection !== undefined) throw trawlError('URLTEST_COLLECTION_WITH_URL', {});
        c = collectionForUrls(checkedUrls(opts.crawlUrl), oneShot);
        urls = first === undefined ? [] : [first, ...rest];
        baseDir = process.cwd();
      } else {
        if (first === undefined) throw trawlError('URLTEST_NO_CONFIG', {});
        const file = first;
        urls = rest;
        baseDir = dirname(resolvePath(file));
        const r = readConfigFile(file);
        if (hasErrors(r.diagnostics)) {
          for (const d of r.diagnostics) io.err(formatDiagnostic(d));
          throw new TrawlError(r.diagnostics.find((d) => d.severity === 'error')!.code, `${file} is not a valid configuration`);
        }
        const cs = r.document.collections;
        if (opts.collection !== undefined) c = cs.find((x) => x.name === opts.collection);
        else if (cs.length === 1) c = cs[0];
        if (!c) {
          throw new TrawlError(opts.collection !== undefined ? 'TRAWL_ERR_CONFIG_NOT_FOUND' : 'TRAWL_ERR_USAGE', opts.collection !== undefined ? `${file} has no collection ${JSON.stringify(opts.collection)}` : `${file} defines ${cs.length} collections; choose one with --collection`);
        }
      }
      if (urls.length === 0) throw trawlError('URLTEST_NO_URL', {});
      const rt = buildRuntime(c, { baseDir });
      const s = rt.settings;
      let fileRules: AgentRules | undefined;
      if (opts.robots !== undefined) {
        let body: Buffer;
        try {
          body = readFileSync(opts.robots);
        } catch (err) {
          throw new TrawlError('TRAWL_ERR_IO', `cannot read --robots ${opts.robots}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        }
        fileRules = parseRobots(body).forAgent(rt.productToken);
      }
      const resolver = new SiteResolver(new EgressChecker({ ...s.egress, ...(opts.allowLoopback ? { allowLoopback: true } : {}), ...(opts.allowPrivateNetworks ? { allowPrivateNetworks: true } : {}) }), s.egress.dnsTtlS * 1000);
      const proxied = usesProxies(rt);
      const fetcher = new HttpFetcher(resolver, { connectTimeoutMs: s.trawlLimits.connectTimeoutS * 1000, ...(proxied ? { proxyMaxPending: s.proxyMaxPending } : {}) });
      // robots.txt goes through the collection's proxies, as in the crawl; an !ENC! password is read with the key file of --data.
      let key: SecretKey | undefined;
      const proxyFor = proxied ? proxyRoutes(rt, fetcher, () => (key ??= loadKeyFile(keyFilePath(opts.data ?? './trawl-data', s.secrets.keyFile)))) : undefined;
      const robots = new RobotsManager(memoryRobotsStore(), c.name, fetcher, {
        obey: s.robots, ttlS: s.robotsTtlS, timeoutS: Math.min(s.robotsTimeoutS, 15), authIgnore: s.robotsAuthIgnore, toutIgnore: s.robotsToutIgnore,
        productToken: rt.productToken, headers: rt.headers, maxBytes: 512 * 1024,
        ...(proxyFor ? { proxyFor: (u: URL) => proxyFor(rt.subOf(u)) } : {}),
      });
      const results: UrlTestResult[] = [];
      const auth = httpAuthFor(s.passwd, s.startUris ?? [], s.secrets.keyFile, opts.data);
      const logins = formLoginsOf(s.logins);
      try {
        for (const raw of urls) {
          // The crawl's own normalisation (Crawler.normalize): WHATWG parse without the
          // fragment, then rewrite_rules and the canonicalization rules.
          const abs = normalizeUrl(raw);
          const canonical = abs === undefined ? undefined : rt.canon.canonicalize(abs);
          if (canonical === undefined) {
            const why = abs === undefined ? 'not a valid absolute URL' : 'rewrite_rules made it an invalid URL';
            results.push({ url: raw, allowed: false, code: null, decidedBy: 'url', reason: why, trace: [{ rule: 'url', verdict: 'deny', reason: why }] });
            continue;
          }
          const url = new URL(canonical);
          const input = canonical !== raw ? { input: raw } : {};
          const d = rt.scope.decide({ url, parent: undefined, hops: 0, viaRedirect: false, seed: false }, true);
          const trace = [...d.trace];
          const credentials = auth?.describe(url);
          const login = logins.length > 0 ? describeLogin(logins, url) : undefined;
          let result: UrlTestResult = { url: url.href, ...input, allowed: d.allowed, code: d.code ?? null, decidedBy: d.decidedBy, reason: d.reason, trace, ...(credentials !== undefined ? { credentials } : {}), ...(login !== undefined ? { login } : {}) };
          if (d.allowed && url.protocol === 'ftp:') {
            // Which account an FTP fetch would log in with (its name only), and no robots.txt: it is an HTTP convention.
            const who = ftpUserFor(s, url.hostname);
            trace.push({ rule: 'ftp_acct', verdict: 'pass', reason: who.configured ? `logs in as ${who.user}, the ftp_acct account for ${url.hostname}` : `logs in as anonymous: no ftp_acct account for ${url.hostname}` });
            trace.push({ rule: 'robots.txt', verdict: 'pass', reason: 'not consulted: robots.txt does not apply to FTP' });
          } else if (d.allowed) {
            // robots.txt last, as in the crawl (it is consulted when the URI is leased).
            let rules = fileRules;
            let source = opts.robots !== undefined ? `robots.txt from ${opts.robots}` : '';
            if (!rules && s.robots && opts.fetchRobots) {
              const got = robots.known(siteOf(url)) ?? (await robots.fetch(siteOf(url), { bytesIn: 0, bytesOut: 0, requests: 0 }));
              if (got.unreachable) {
                trace.push({ rule: 'robots.txt', verdict: 'pass', reason: `not consulted: ${got.unreachable}` });
              } else {
                rules = got.rules;
                source = `${siteOf(url)}/robots.txt (${got.reason})`;
              }
            } else if (!s.robots) trace.push({ rule: 'robots.txt', verdict: 'pass', reason: 'robots is no' });
            if (rules) {
              const path = pathAndQuery(url);
              const rule = rules.decidingRule(path);
              const ok = rules.isAllowed(path);
              const why = rule ? `${rule.allow ? 'Allow' : 'Disallow'}: ${rule.pattern} (line ${rule.line}) of ${source}` : `no rule of ${source} matches ${path}`;
              trace.push({ rule: 'robots.txt', verdict: ok ? 'allow' : 'deny', reason: why });
              if (!ok) result = { ...result, allowed: false, code: 'ro', decidedBy: 'robots.txt', reason: why, trace };
            }
          }
          results.push(result.allowed ? { ...result, request: requestPlan(rt, url) } : result);
        }
      } finally {
        await fetcher.close();
      }
      // The jar is the crawl's with use_cookies, and for the login sessions of a collection with logins.
      if (opts.data !== undefined || opts.store !== undefined) await addRecords(results, opts.data ?? './trawl-data', opts.store, c.name, s.useCookies || logins.length > 0 ? s.cookieTimeoutS * 1000 : undefined);
      for (const res of results) {
        if (opts.json) {
          io.out(JSON.stringify(res));
          continue;
        }
        if (res.input !== undefined) io.out(`${res.input} normalises to ${res.url}`);
        io.out(`${res.allowed ? 'allowed' : 'denied '} ${res.url}${res.code ? ` (${res.code})` : ''}${res.allowed ? '' : `: ${res.reason}`}`);
        if (opts.data !== undefined) {
          const rec = res.record;
          io.out(rec ? `  stored: ${rec.status}${rec.skipCode ? ` (${rec.skipCode}: ${rec.skipReason})` : ''}${rec.httpStatus !== null ? `, HTTP ${rec.httpStatus}` : ''}, last crawled ${rec.lastCrawled}` : '  stored: no record');
        }
        if (opts.explain) {
          if (res.credentials !== undefined) io.out(`  credentials: ${res.credentials}`);
          if (res.login !== undefined) io.out(`  login: ${res.login}`);
          if (res.cookies !== undefined) io.out(`  cookies: ${res.cookies.length > 0 ? res.cookies.join(', ') : 'none'}`);
          res.trace.forEach((t, i) => io.out(`  ${String(i + 1).padStart(2)}. ${t.rule}: ${t.verdict}${t.reason ? ` (${t.reason})` : ''}`));
          io.out(`  decided by: ${res.decidedBy}`);
          if (res.request) io.out(`  request: ${describePlan(res.request)}`);
        }
      }
      setExit(0);
    });
}

/**
 * Adds each URL's record from the crawl store of `data` (opened as `trawl
 * inspect` opens it, data-store.ts). The store is held by one process at a
 * time: while a crawler runs on it, this fails and says so; `trawl inspect`
 * then reads through the admin server.
 */
async function addRecords(results: UrlTestResult[], data: string, storeSpec: string | undefined, collection: string, cookieTtlMs: number | undefined): Promise<void> {
  const store = await openStoreOf(data, storeSpec);
  if (store === 'in-use') throw new TrawlError('TRAWL_ERR_IO', `the crawl store ${describeStore(storeSpec, data)} is in use by another process (a trawl crawl or trawl serve); \`trawl inspect URL --data ${data}\` reads it through the admin server`);
  try {
    if (cookieTtlMs !== undefined) {
      const text = await store.getCookieJar(collection);
      const jar = MemoryCookieJar.deserialize(text ?? '{}', { sessionTtlMs: cookieTtlMs });
      for (let i = 0; i < results.length; i++) results[i] = { ...results[i]!, cookies: jar.describe(results[i]!.url) };
    }
    for (let i = 0; i < results.length; i++) {
      const r = await store.getRecord(collection, results[i]!.url);
      if (!r) continue;
      const code = r.skipCode ?? null;
      results[i] = {
        ...results[i]!,
        record: {
          status: r.status, skipCode: code, skipReason: skipMeaning(code ?? undefined) ?? null,
          httpStatus: r.httpStatus ?? null, lastCrawled: new Date(r.lastCrawledMs).toISOString(),
        },
      };
    }
  } finally {
    await store.close();
  }
}
