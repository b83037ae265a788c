/**
 * A cycle's parts, made from the collection's configuration when a cycle is
 * set up (or an idle collection is prepared for an operator's request):
 *
 *   settings ─► Runtime ─► resolver + fetcher (client certificate, proxies) + FTP fetcher ─► robots.txt manager
 *                       ─► SiteScheduler (delay, variable_delay, Crawl-delay)
 *                       ─► DiskGuard, LinkScreening, smfilter ─► CycleEnv
 *                       ─► FormLogins (logins) ─► Rendering (use_javascript) ─► Seeder, PagePipeline ─► SiteTasks
 */

import { readClientCertificate, readServerTrust } from '../config/client-cert.ts';
import type { CollectionConfig } from '../config/model.ts';
import { keyFilePath, loadKeyFile, revealSecret, type SecretKey } from '../config/secrets.ts';
import { parseCredentials, parseFtpAccount } from '../config/values.ts';
import { Agent } from 'undici';
import { pinnedLookup } from '../fetch/interceptors/egress.ts';
import { HttpAuth } from '../fetch/interceptors/http-auth.ts';
import { PasswdTable, type AuthCredentials } from '../fetch/passwd.ts';
import type { CollectionCookies } from './collection-cookies.ts';
import { EgressChecker, SiteResolver, type EgressPolicy } from '../fetch/egress.ts';
import type { CollectionSettings } from '../config/registry.ts';
import type { FtpAccount } from '../fetch/ftp-fetcher.ts';
import { LazyFtpFetcher, type FtpFetching } from '../fetch/ftp-lazy.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { HostScopedJar } from '../fetch/cookies.ts';
import { sharedExtractPool } from '../extract/extract-pool.ts';
import { BloomFilter } from '../frontier/bloom.ts';
import { SiteScheduler, type SiteState } from '../frontier/site-scheduler.ts';
import type { CrawlEvents } from './crawl-events.ts';
import type { CrawlerOptions } from './crawl-types.ts';
import { CycleEnv } from './cycle-env.ts';
import type { CycleStats } from './cycle-stats.ts';
import { CycleLimits } from './cycle-limits.ts';
import { DiskGuard } from './disk-guard.ts';
import { FormLogins, formLoginsOf, loginHosts } from './form-logins.ts';
import type { DuplicateDetector } from './duplicates.ts';
import { LinkScreening, type ScreenedCaches } from './link-screening.ts';
import { PagePipeline } from './pipeline/pipeline.ts';
import { RobotsManager } from './robots-manager.ts';
import { Rendering, usesJavascript } from './rendering.ts';
import { buildRuntime } from './runtime.ts';
import { postPayloads, proxyRoutes, usesProxies } from './request-setup.ts';
import { adaptiveRefreshFor } from './adaptive-refresh.ts';
import { Seeder } from './seeding.ts';
import { SiteTasks } from './site-task.ts';

/** What lives as long as the crawl object, across the cycles it sets up. */
export interface CrawlShared {
  readonly events: CrawlEvents;
  readonly stats: CycleStats;
  readonly duplicates: DuplicateDetector;
  /** Aborted by a stop. */
  readonly signal: AbortSignal;
  /** Wakes the crawl loop. */
  readonly wake: () => void;
  readonly addressRefused: Map<string, string>;
  readonly now: () => number;
  /** The collection's cookie jar, when use_cookies is on (kept across cycles). */
  readonly cookies: (sessionTtlMs: number) => CollectionCookies;
  /** The screened-URI cache, kept from one cycle for the next. */
  readonly screenedCaches?: ScreenedCaches;
}

export interface CycleSetup {
  readonly env: CycleEnv;
  readonly fetcher: HttpFetcher;
  /** ftp:// URIs (allowed_schemes ftp); holds no connection until one is fetched. */
  readonly ftp: FtpFetching;
  /** The authentication interceptor's state (passwd), closed with the fetcher. */
  readonly auth: HttpAuth | undefined;
  readonly seeder: Seeder;
  readonly siteTasks: SiteTasks;
  /** use_javascript: the browser and the rules of its requests (started with the first page to render). */
  readonly rendering: Rendering | undefined;
}

/**
 * The authentication interceptor's state for the collection's passwd
 * section; undefined without entries (the fetcher then has no such
 * interceptor). Realm entries answer on the start URIs' origins; `!ENC!`
 * passwords are decrypted when sent, with the key file read once. With a
 * resolver, NTLM handshakes get a dispatcher of their own when first
 * needed: one connection per origin, through the same pinned, checked
 * lookup as the fetcher's.
 */
export function httpAuthFor(passwd: Readonly<Record<string, string>>, startUris: readonly string[], keyFile: string, dataDir: string | undefined, net?: { resolver: SiteResolver; connectTimeoutMs: number }): HttpAuth | undefined {
  const entries: Array<[string, AuthCredentials]> = [];
  for (const [name, value] of Object.entries(passwd)) {
    const parsed = parseCredentials(value.trim());
    if (parsed.ok) entries.push([name.trim(), parsed.value]);
  }
  if (entries.length === 0) return undefined;
  const origins: string[] = [];
  for (const u of startUris) {
    try {
      origins.push(new URL(u).origin);
    } catch {
      // the validator reported it
    }
  }
  let key: SecretKey | undefined;
  const reveal = (v: string): string => revealSecret(v, () => (key ??= loadKeyFile(keyFilePath(dataDir ?? process.cwd(), keyFile))));
  const ntlmDispatcher = net ? () => new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: 10_000, connect: { lookup: pinnedLookup(net.resolver), timeout: net.connectTimeoutMs } }) : undefined;
  return new HttpAuth(new PasswdTable(entries, origins, reveal), ntlmDispatcher ? { ntlmDispatcher } : {});
}

export function setUpCycle(config: CollectionConfig, opts: CrawlerOptions, shared: CrawlShared): CycleSetup {
  const { events, now } = shared;
  const rt = buildRuntime(config, { ...(opts.node !== undefined ? { node: opts.node } : {}), ...(opts.baseDir !== undefined ? { baseDir: opts.baseDir } : {}) });
  const s = rt.settings;
  const egress: EgressPolicy = { ...s.egress, ...opts.egress };
  const checker = new EgressChecker(egress);
  const resolver = new SiteResolver(checker, s.egress.dnsTtlS * 1000, opts.lookup, now);
  if (opts.onDnsLookup) resolver.onLookup = opts.onDnsLookup;
  // !ENC! values (proxy passwords, payloads) are decrypted with the key file, read once if one needs it.
  let secretKey: SecretKey | undefined;
  const key = (): SecretKey => (secretKey ??= loadKeyFile(keyFilePath(opts.dataDir ?? process.cwd(), s.secrets.keyFile)));
  // key_file / cert_file: read and checked now, so a wrong file stops the cycle with its name, before any request.
  // trawl_tls: the CAs trusted besides the system's and how a site's certificate is checked.
  const cert = readClientCertificate(s, opts.baseDir ?? process.cwd());
  const trust = readServerTrust(s.tls, opts.baseDir ?? process.cwd());
  const tls = cert || trust ? { ...cert, ...trust } : undefined;
  // logins: with use_cookies off, the jar keeps (and sends) only the cookies of the hosts the logins cover or use.
  const logins = formLoginsOf(s.logins);
  const jar = s.useCookies || logins.length > 0 ? shared.cookies(s.cookieTimeoutS * 1000) : undefined;
  const auth = httpAuthFor(s.passwd, s.startUris ?? [], s.secrets.keyFile, opts.dataDir, { resolver, connectTimeoutMs: s.trawlLimits.connectTimeoutS * 1000 });
  const fetcher = new HttpFetcher(resolver, {
    connections: Math.max(2, s.maxPending), connectTimeoutMs: s.trawlLimits.connectTimeoutS * 1000,
    ...(tls ? { tls } : {}), ...(usesProxies(rt) ? { proxyMaxPending: s.proxyMaxPending } : {}),
    observer: opts.fetchObserver,
    auth,
    cookies: jar && !s.useCookies ? new HostScopedJar(jar, loginHosts(logins)) : jar,
  });
  const proxyFor = usesProxies(rt) ? proxyRoutes(rt, fetcher, key) : undefined;
  const ftp = new LazyFtpFetcher(resolver, checker, { account: ftpAccounts(s, key), connectTimeoutMs: s.trawlLimits.connectTimeoutS * 1000, maxListingBytes: s.trawlLimits.maxDocumentBytes, observer: opts.fetchObserver });
  const robots = new RobotsManager(opts.store, rt.name, fetcher, {
    obey: s.robots, ttlS: s.robotsTtlS, timeoutS: s.robotsTimeoutS, authIgnore: s.robotsAuthIgnore, toutIgnore: s.robotsToutIgnore,
    productToken: rt.productToken, headers: rt.headers, maxBytes: 512 * 1024,
    // robots.txt goes through the proxy of the sub-collection its URL belongs to.
    ...(proxyFor ? { proxyFor: (url: URL) => proxyFor(rt.subOf(url)) } : {}),
  }, now, opts.robotsMemo);
  const sched = new SiteScheduler({
    maxPending: s.maxPending,
    maxSites: s.maxSites,
    maxInterDocs: s.maxInterDocs,
    maxBackoffDelayMs: s.maxBackoffDelayS * 1000,
    // MS-FSCCFG 2.2.4.33: the delay is the sub-collection's for its URIs.
    delayMs: (site: SiteState) => {
      const d = rt.delayNow(site.sub, now());
      const base = d === 'suspend' ? 0 : d;
      const crawlDelay = s.obeyRobotsDelay ? site.crawlDelayMs : 0;
      return Math.max(base, crawlDelay);
    },
  });
  // The Elastic event log has a url-discover denial for every URL turned away.
  events.logScreened = s.log.screened === 'text' || s.elastic.events;
  events.logFetch = s.log.fetch === 'text';
  events.logScheduler = s.log.scheduler === 'text';
  const disk = new DiskGuard({
    dir: opts.dataDir, minFreePct: s.limits.diskFreePct, slackPct: s.limits.diskFreeSlackPct,
    ...(opts.diskPollMs !== undefined ? { pollMs: opts.diskPollMs } : {}),
    onChange: (_state, message) => events.emit({ type: 'disk', message }),
  });
  const pool = opts.extractPool ?? sharedExtractPool();
  const screening = new LinkScreening(rt, shared.stats, events, pool, opts.screenedStart, shared.screenedCaches);
  const bloom = s.smfilterBits > 0 ? new BloomFilter(s.smfilterBits) : undefined;
  const limits = new CycleLimits({
    maxCrawlDurationS: s.trawlLimits.maxCrawlDurationS, maxUniqueUrls: s.trawlLimits.maxUniqueUrls, maxDoc: s.limits.maxDoc, maxDocSlack: s.limits.maxDocSlack, refreshMin: s.refreshMin,
  }, events);
  const env = new CycleEnv({ rt, opts, events, stats: shared.stats, sched, screening, duplicates: shared.duplicates, disk, limits, bloom, pool, now });
  const seeder = new Seeder(env, shared.wake);
  if (s.refreshMode === 'adaptive') env.adaptive = adaptiveRefreshFor(env, s);
  // use_javascript: Chromium is looked for now (its absence stops the cycle, naming the package) and started with the first page.
  const rendering = usesJavascript(rt) ? new Rendering({ rt, fetcher, robots, events, signal: shared.signal, now, proxyFor }) : undefined;
  const pipeline = PagePipeline.standard(env, rendering);
  const formLogins = logins.length === 0 ? undefined : new FormLogins(logins, {
    fetcher, events, now, timeoutMs: s.loginTimeoutS * 1000, connectTimeoutMs: s.trawlLimits.connectTimeoutS * 1000,
    headers: rt.headers, reveal: (v) => revealSecret(v, key), signal: shared.signal,
    ...(proxyFor ? { proxyFor: (url: URL) => proxyFor(rt.subOf(url)) } : {}),
  });
  const siteTasks = new SiteTasks({
    env, resolver, fetcher, ftp, robots, seeder, pipeline, signal: shared.signal, wake: shared.wake, addressRefused: shared.addressRefused,
    proxyFor, postPayloadFor: postPayloads(s.postPayload, key), sendReferer: s.http.sendReferer,
    logins: formLogins, loginFailedIgnore: s.loginFailedIgnore,
    fetchDelay: s.politeness.delayFactor === undefined ? undefined : { factor: s.politeness.delayFactor, minMs: s.politeness.minDelayS * 1000, maxMs: Math.max(s.politeness.minDelayS, s.politeness.maxDelayS) * 1000 },
  });
  return { env, fetcher, ftp, auth, seeder, siteTasks, rendering };
}

/**
 * ftp_acct (MS-FSCCFG 2.2.4.21): the account for a host, by site name
 * (compared without regard to case), its password revealed (!ENC!
 * decrypted with the key file) the first time the host is fetched, and
 * held only by the fetcher. No account: anonymous.
 */
export function ftpAccounts(s: CollectionSettings, key: () => SecretKey): (host: string) => FtpAccount | undefined {
  const table = ftpAccountTable(s);
  if (table.size === 0) return () => undefined;
  const revealed = new Map<string, FtpAccount>();
  return (host) => {
    const h = host.toLowerCase();
    const known = revealed.get(h);
    if (known) return known;
    const value = table.get(h);
    if (value === undefined) return undefined;
    const parsed = parseFtpAccount(value);
    if (!parsed.ok) return undefined;
    const account = { user: parsed.value.username, password: revealSecret(parsed.value.password, key) };
    revealed.set(h, account);
    return account;
  };
}

function ftpAccountTable(s: CollectionSettings): Map<string, string> {
  return new Map(Object.entries(s.ftpAcct).map(([site, value]) => [site.toLowerCase(), value]));
}

/** The user name an FTP fetch of `host` logs in with (ftp_acct, else anonymous); never the password. */
export function ftpUserFor(s: CollectionSettings, host: string): { user: string; configured: boolean } {
  const value = ftpAccountTable(s).get(host.toLowerCase());
  const parsed = value === undefined ? undefined : parseFtpAccount(value);
  return parsed?.ok ? { user: parsed.value.username, configured: true } : { user: 'anonymous', configured: false };
}
