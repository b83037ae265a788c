/**
 * `trawl crawl`: one refresh cycle of every given collection, to
 * completion, on the embedded store in a data directory. A file's
 * collections mean what MS-FSCCFG says; URLs make one collection with the
 * one-shot defaults (url-collection.ts). Running the same
 * command again after a crash or Ctrl-C resumes where it stopped.
 */

import { mkdirSync } from 'node:fs';
import { dirname, join, resolve as resolvePath } from 'node:path';
import type { Command } from 'commander';
import pino from 'pino';
import { LogFile, isoTimeEachMs } from '../core/log-file.ts';
import { TrawlError, trawlError } from '../core/errors.ts';
import { describeSkipCode } from '../core/skip-codes.ts';
import { parseUrl } from '../core/url.ts';
import { formatDiagnostic, type Diagnostic } from '../config/diagnostics.ts';
import { resolveSettings } from '../config/effective.ts';
import { readConfigFile } from '../config/load.ts';
import type { CollectionConfig } from '../config/model.ts';
import { COLLECTION, findAttrib } from '../config/registry.ts';
import { honouredWarnings } from '../config/honoured.ts';
import { maskText } from '../config/secrets.ts';
import { writeConfigXml } from '../config/writer.ts';
import type { CollectionCrawl, CrawlEvent, CycleSummary, Progress } from '../engine/crawler.ts';
import { LIMIT_PARAMETER } from '../engine/cycle-limits.ts';
import { openCollectionRuntime } from '../service/collection-runtime.ts';
import type { Feeder } from '../sinks/feeder.ts';
import { describeStore, openCrawlStore } from '../store/open-crawl-store.ts';
import { sinkTypes } from '../sinks/sink-registry.ts';
import { CITESEERX_HELP, citeseerxSink, withCiteseerxProfile, withCiteseerxSink } from './citeseerx-option.ts';
import type { Io } from './io.ts';
import { logEvent, maskingLogOptions } from './logging.ts';
import { wholeNumberOption } from './options.ts';
import { addUrlOptions, checkedUrls, collectionForUrls, isUrlInput, SETTINGS_RULE_HELP, urlCrawlOptions } from './url-collection.ts';

export { collectionForUrls, ONE_SHOT_DEFAULTS, type UrlCrawlOptions } from './url-collection.ts';

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

function progressLine(name: string, p: Progress, feeder: Feeder | undefined): string {
  const rate = p.elapsedMs > 0 ? (p.requests / (p.elapsedMs / 1000)).toFixed(1) : '0.0';
  return `${name}: ${p.requests} pages, ${rate}/s, ${p.queued} queued, ${p.inFlight} in flight, ${p.errors} errors, ${p.activeSites} active sites, ${formatDuration(p.elapsedMs)}${feedingStatus(feeder)}`;
}

/** The sinks' trouble for the progress line: empty while they take what they are given. */
export function feedingStatus(feeder: Feeder | undefined, nowMs = Date.now()): string {
  if (!feeder || feeder.failures === 0) return '';
  const inS = Math.max(0, Math.ceil((feeder.retryAtMs - nowMs) / 1000));
  return `; feeding failed ${feeder.failures}× (${maskText(feeder.lastError ?? 'a sink failed')}), next try in ${inS} s`;
}

/** MS-FSCCFG's default `delay`: `trawl crawl FILE` says so when a file's collection crawls with it. */
const MS_FSCCFG_DELAY_S = findAttrib(COLLECTION, 'delay')!.default as number;

/** How long the end of a one-shot crawl waits for its sinks to take what the cycle fed, by default (`--feed-timeout`). */
const FEED_TIMEOUT_S = 60;

type FeedingSummary = Feeder['counters'] & { waiting: number; lastError?: string };

/** Where a collection's output is, for the summary: the paths a user opens next. */
export interface OutputPaths {
  /** The event log (JSON lines). */
  readonly log: string;
  /** The content store of the collection: the stored documents. */
  readonly documents: string;
  /** The crawl store: the SQLite file, or the PostgreSQL URL with its password masked. */
  readonly store: string;
}

export function outputPaths(dataDir: string, collection: string, store?: string): OutputPaths {
  const data = resolvePath(dataDir);
  return { log: join(data, 'logs', 'crawl.log'), documents: join(data, 'content', collection), store: describeStore(store, data) };
}

/** One line per skip code the summary printed: what it means and what to do (core/skip-codes.ts). */
export function skipLegend(s: Pick<CycleSummary, 'uriSkips' | 'docSkips'>): string[] {
  const lines: string[] = [];
  for (const code of [...Object.keys(s.uriSkips), ...Object.keys(s.docSkips)]) {
    const d = describeSkipCode(code);
    if (d) lines.push(`    ${code}: ${d.meaning}; what to do: ${d.action}`);
  }
  return lines;
}

/**
 * What a collection's start URIs became in this run: the reason of each
 * one that was refused or failed. Only skip and error events are looked
 * at (one Set lookup each), never successful fetches.
 */
export class StartUriWatch {
  private readonly uris: ReadonlySet<string>;
  readonly reasons = new Map<string, string>();

  constructor(uris: readonly string[]) {
    this.uris = new Set(uris.map((u) => parseUrl(u)?.href ?? u));
  }

  get size(): number {
    return this.uris.size;
  }

  note(e: CrawlEvent): void {
    if ((e.type === 'skip' || e.type === 'error') && e.url !== undefined && this.uris.has(e.url)) this.reasons.set(e.url, `${e.code !== undefined ? `${e.code}: ` : ''}${maskText(e.message)}`);
  }

  /** Every start URI was refused or failed. */
  get allFailed(): boolean {
    return this.uris.size > 0 && this.reasons.size === this.uris.size;
  }
}

/**
 * The rule of a failed one-shot crawl (docs/crawling.md, *trawl crawl*, "Exit
 * status"): nothing was stored or found unchanged in this run, and either
 * every start URI was refused or failed, or a cycle that started in this
 * run ended complete. A cycle stopped by a signal or --max-pages, or a
 * resumed one whose documents were stored earlier, is not a failure.
 */
export function crawlFailure(s: CycleSummary, watch: StartUriWatch): string | undefined {
  if (s.stored + s.unchanged > 0 || s.stoppedBy === 'signal') return undefined;
  if (watch.allFailed) return watch.size === 1 ? 'its start URI was refused or failed' : `all ${watch.size} start URIs were refused or failed`;
  if (s.complete && !s.resumed && s.stoppedBy === 'done') return 'the cycle fetched no document';
  return undefined;
}

/** `--feed-timeout S`: seconds, 0 or more (fractions allowed), or a usage error that names the flag. */
function feedTimeoutS(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new TrawlError('TRAWL_ERR_USAGE', `--feed-timeout must be a number of seconds of at least 0, not ${JSON.stringify(text)}`);
  return n;
}

/** Whether a collection has a console sink: then standard output carries its documents and nothing else. */
function hasConsoleSink(sinks: Readonly<Record<string, { readonly type?: string | undefined }>>): boolean {
  return Object.values(sinks).some((k) => k.type === 'console');
}

/**
 * What ends a run badly, after the summaries were printed: each collection
 * that stored nothing (with each start URI's reason on stderr), then each
 * whose sinks did not take its documents in time. The first becomes the
 * thrown error (its exit status); the others are printed.
 */
function endOfRunErrors(io: Io, runs: ReadonlyArray<{ summary: CycleSummary & { feeding?: FeedingSummary }; watch: StartUriWatch }>, feedTimeout: number, interrupted: boolean): TrawlError | undefined {
  const errors: TrawlError[] = [];
  for (const { summary, watch } of runs) {
    const why = crawlFailure(summary, watch);
    if (why === undefined) continue;
    for (const [url, reason] of watch.reasons) io.err(`trawl: ${maskText(url)}: ${reason}`);
    errors.push(trawlError('CRAWL_FAILED', { name: summary.collection, why }));
  }
  for (const { summary } of runs) {
    const f = summary.feeding;
    if (interrupted || !f || f.waiting === 0 || f.lastError === undefined) continue;
    errors.push(trawlError('CRAWL_FEED_UNDELIVERED', { name: summary.collection, waiting: f.waiting, timeoutS: feedTimeout, reason: maskText(f.lastError) }));
  }
  for (const e of errors.slice(1)) io.err(`trawl: ${maskText(e.describe())}`);
  return errors[0];
}

/** The end of the summary's first line: complete (and why, when a trawl_limits bound ended it), or stopped. */
function cycleOutcome(s: CycleSummary): string {
  if (s.stoppedBy === 'max-duration' || s.stoppedBy === 'max-unique-urls') {
    return `complete: ${LIMIT_PARAMETER[s.stoppedBy]} reached, ${s.abandoned} queued URIs abandoned`;
  }
  return s.complete ? 'complete' : `stopped (${s.stoppedBy}); run the same command again to resume`;
}

function summaryText(s: CycleSummary & { feeding?: FeedingSummary; paths?: OutputPaths }): string {
  const lines = [
    `collection ${s.collection}: cycle ${s.epoch}${s.resumed ? ' (resumed)' : ''} ${cycleOutcome(s)}`,
    `  requests ${s.requests} (+${s.robotsRequests} robots.txt), stored ${s.stored}, unchanged ${s.unchanged}, duplicates ${s.duplicates}, errors ${s.errors}, deleted ${s.deleted}, retries ${s.retries}`,
    `  ${(s.bytesIn / 1024).toFixed(1)} KiB in ${formatDuration(s.durationMs)}, ${s.queued} left queued`,
  ];
  const hist = (label: string, h: Readonly<Record<string, number>>): void => {
    const e = Object.entries(h).sort((a, b) => b[1] - a[1]);
    if (e.length) lines.push(`  ${label}: ${e.map(([k, n]) => `${k} ${n}`).join(', ')}`);
  };
  const f = s.feeding;
  if (f) {
    lines.push(`  fed ${f.PPFed} documents (${f.PPAdded} new, ${f.PPModified} updated), ${f.PPDeleted} deletions, ${f.PPFailed} refused` +
      `${f.waiting > 0 ? `; ${f.waiting} waiting for the next run${f.lastError ? ` (${maskText(f.lastError)})` : ' (a paused destination)'}` : ''}`);
  }
  hist('HTTP status', s.httpStatus);
  hist('URIs skipped', s.uriSkips);
  hist('documents skipped', s.docSkips);
  lines.push(`  cycle ID ${s.cycleId}, status ${s.cycleStatus}`);
  lines.push(...skipLegend(s));
  if (s.paths) lines.push(`  log ${s.paths.log}`, `  documents ${s.paths.documents}`, `  crawl store ${s.paths.store}`);
  return lines.join('\n');
}

export function registerCrawlCommand(program: Command, io: Io, setExit: (code: number) => void): void {
  const cmd = program
    .command('crawl')
    .description('crawl the given collections (MS-FSCCFG XML or Elastic YAML) or URLs: one refresh cycle (--cycles N for more), to completion')
    .argument('<inputs...>', 'configuration files, or http(s) or ftp URLs to crawl within their own sites')
    .option('--data <dir>', 'data directory (crawl store, documents, logs)', './trawl-data')
    .option('--store <url>', 'the crawl store: sqlite:PATH (default <data>/trawl.db) or postgres://user@host:port/database')
    .option('--allow-loopback', 'allow fetching loopback addresses (127.0.0.0/8, ::1)')
    .option('--allow-private-networks', 'allow fetching private network addresses (10/8, 172.16/12, 192.168/16, fc00::/7)')
    .option('--max-pages <n>', 'stop after this many fetches (the cycle stays open; run again to go on)')
    .option('--cycles <n>', 'refresh cycles to run, one after the other, per collection (each bounded by refresh and trawl_limits; refresh_mode says what the next does)', '1')
    .option('--max-concurrency <n>', 'requests in flight at once over all sites', '64')
    .option('--node <name>', 'apply the <Node> overrides of this node scheduler')
    .option('--json', 'print the summary as JSON')
    .option('--feed-timeout <s>', 'seconds the end of the crawl waits for failing sinks; then it exits with status 3 and the documents wait for the next run', String(FEED_TIMEOUT_S))
    .option('--citeseerx <file>', CITESEERX_HELP.file)
    .option('--repository-root <dir>', CITESEERX_HELP.root);
  addUrlOptions(cmd, 'URLs only')
    .addHelpText('after', SETTINGS_RULE_HELP)
    .action(async (inputs: string[], opts: { data: string; store?: string; allowLoopback?: boolean; allowPrivateNetworks?: boolean; maxPages?: string; cycles: string; maxConcurrency: string; node?: string; json?: boolean; feedTimeout: string; citeseerx?: string; repositoryRoot?: string; delay?: string; depth?: string; userAgent?: string; sitemaps?: boolean }) => {
      const maxPages = opts.maxPages === undefined ? undefined : wholeNumberOption('--max-pages', opts.maxPages, 1);
      const maxConcurrency = wholeNumberOption('--max-concurrency', opts.maxConcurrency, 1);
      const cycles = wholeNumberOption('--cycles', opts.cycles, 1);
      const feedTimeout = feedTimeoutS(opts.feedTimeout);
      const csxSink = citeseerxSink(opts, (m) => io.err(`trawl: warning: ${m}`));

      // Inputs: URLs make one collection; files may hold several.
      const urls = checkedUrls(inputs.filter(isUrlInput));
      const oneShot = urlCrawlOptions(opts, urls.length > 0);
      const collections: Array<{ config: CollectionConfig; baseDir: string; file?: string }> = [];
      let firstError: Diagnostic | undefined;
      for (const file of inputs.filter((i) => !isUrlInput(i))) {
        const r = readConfigFile(file);
        for (const d of r.diagnostics) io.err(formatDiagnostic(d));
        firstError ??= r.diagnostics.find((d) => d.severity === 'error');
        for (const c of r.document.collections) collections.push({ config: c, baseDir: dirname(resolvePath(file)), file });
      }
      if (firstError) throw new TrawlError(firstError.code, 'the configuration has errors (listed above); nothing was crawled');
      if (urls.length) collections.push({ config: collectionForUrls(urls, oneShot), baseDir: process.cwd() });
      if (collections.length === 0) throw trawlError('CRAWL_NOTHING', {});

      // The data directory holds the stored configurations (secrets included): its owner's only.
      mkdirSync(opts.data, { recursive: true, mode: 0o700 });
      const store = await openCrawlStore(opts.store, opts.data);
      mkdirSync(join(opts.data, 'logs'), { recursive: true, mode: 0o700 });
      const logFile = new LogFile(join(opts.data, 'logs', 'crawl.log'));
      const log = pino({ base: undefined, timestamp: isoTimeEachMs(), ...maskingLogOptions() }, logFile);
      // Every collection is known before any runs, so send_links_to can reach one that runs later.
      for (const { config } of collections) {
        if (!(await store.getCollection(config.name))) await store.putCollection(config.name, writeConfigXml(config), Date.now());
      }
      const summaries: Array<CycleSummary & { feeding?: FeedingSummary; paths: OutputPaths }> = [];
      const runs: Array<{ summary: CycleSummary & { feeding?: FeedingSummary }; watch: StartUriWatch }> = [];
      // With a console sink, standard output carries documents only: the summary goes to stderr.
      let consoleSink = false;
      let current: CollectionCrawl | undefined;
      let interrupts = 0;
      const onSignal = (): void => {
        interrupts++;
        if (interrupts === 1) {
          io.err('\ntrawl: stopping: in-flight URIs go back to the queue (press Ctrl-C again to force)');
          current?.stop();
        } else {
          io.err('trawl: forced stop');
          process.exit(130);
        }
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        for (const { config: given, baseDir, file } of collections) {
          if (interrupts > 0) break;
          // What the configuration asks for that this version ignores (issue 29), as written by the user.
          for (const d of honouredWarnings(given, opts.node ?? null)) io.err(formatDiagnostic(d));
          const config = withCiteseerxProfile(given, csxSink, (m) => io.err(`trawl: warning: ${m}`));
          const s = withCiteseerxSink(resolveSettings(config, opts.node !== undefined ? { node: opts.node } : {}), csxSink, config.name, (m) => io.err(`trawl: warning: ${m}`));
          // A file means what MS-FSCCFG says: a crawl that waits a minute between two pages of a site should not surprise.
          if (file !== undefined && s.delayS === MS_FSCCFG_DELAY_S) io.err(`trawl: note: collection ${config.name} (${file}): delay is ${MS_FSCCFG_DELAY_S} s, MS-FSCCFG's default: each site gets one request a minute; set <attrib name="delay" type="real"> in the file for a faster crawl`);
          consoleSink ||= hasConsoleSink(s.sinks);
          for (const note of sinkTypes.notes(s.sinks)) io.err(`trawl: warning: collection ${config.name}: ${note}`);
          // URL Submission Messages are consumed by a daemon only (docs/citeseerx.md, *Submitted jobs*).
          for (const [name, sink] of Object.entries(s.sinks)) {
            if (sink.submissionQueue !== undefined) io.err(`trawl: warning: collection ${config.name}: trawl_sinks.${name}.submission_queue is not applied by trawl crawl: only trawl serve consumes URL Submission Messages`);
          }
          const watch = new StartUriWatch(s.startUris ?? []);
          const runtime = openCollectionRuntime({
            config, settings: s, store, dataDir: opts.data, node: opts.node, maxConcurrency,
            egress: { ...(opts.allowLoopback ? { allowLoopback: true } : {}), ...(opts.allowPrivateNetworks ? { allowPrivateNetworks: true } : {}) },
            warn: (fields, message) => log.warn(fields, message),
          });
          const { feeder } = runtime;
          // The collection's name is serialised once, into the child's bindings, instead of with every line.
          const events = log.child({ collection: config.name });
          const runOneCycle = async (): Promise<CycleSummary> => {
            const crawl = runtime.newCrawl({
              baseDir, dataDir: resolvePath(opts.data),
              ...(maxPages !== undefined ? { maxPages } : {}),
              onEvent: (e) => {
                // A full disk (or limits.disk_free) is told on stderr too: the log may be on that disk.
                if (e.type === 'disk') io.err(`${process.stderr.isTTY === true && !opts.json ? '\r\x1b[K' : ''}trawl: collection ${config.name}: ${e.message}`);
                watch.note(e);
                logEvent(events, e);
              },
            });
            current = crawl;
            const tty = process.stderr.isTTY === true && !opts.json;
            const timer = setInterval(() => {
              const line = progressLine(config.name, crawl.progress(), feeder);
              if (tty) process.stderr.write(`\r\x1b[K${line}`);
              else io.err(line);
            }, tty ? 500 : 10_000);
            timer.unref();
            try {
              const summary = await crawl.runCycle();
              let feeding: FeedingSummary | undefined;
              if (feeder) {
                // What the cycle queued for the sinks is sent before the command ends; what a failing sink kept is sent next run.
                const waiting = interrupts > 0 ? Object.values(await store.feedBacklog(config.name)).reduce((a, b) => a + b, 0) : await feeder.drain(feedTimeout * 1000);
                feeding = { ...feeder.counters, waiting, ...(feeder.lastError ? { lastError: feeder.lastError } : {}) };
              }
              const done = { ...summary, ...(feeding ? { feeding } : {}) };
              summaries.push({ ...done, paths: outputPaths(opts.data, config.name, opts.store) });
              runs.push({ summary: done, watch });
              return summary;
            } finally {
              clearInterval(timer);
              if (tty) process.stderr.write('\r\x1b[K');
            }
          };
          try {
            // --cycles: each cycle starts once the one before ended complete; a stop or --max-pages ends the run.
            for (let cycle = 1; cycle <= cycles && interrupts === 0; cycle++) {
              const summary = await runOneCycle();
              if (!summary.complete) break;
            }
          } finally {
            await runtime.close();
          }
        }
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await store.close();
        await logFile.close();
      }
      const print = (line: string): void => (consoleSink ? io.err(line) : io.out(line));
      if (opts.json) print(JSON.stringify({ data: resolvePath(opts.data), collections: summaries }, null, 2));
      else for (const s of summaries) print(summaryText(s));
      const failed = endOfRunErrors(io, runs, feedTimeout, interrupts > 0);
      if (failed) throw failed;
      setExit(0);
    });
}
