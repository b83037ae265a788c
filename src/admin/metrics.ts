/**
 * `GET /metrics`: the daemon's metrics in the Prometheus text exposition
 * format (version 0.0.4), and what `GET /healthz` answers.
 *
 *   CrawlerService.metricsSnapshot() ──► per collection: counters, fetch latency,
 *                                        queue, sites, feed backlog, state
 *   process (/proc, process.*) ────────► resident memory, CPU, fds, start time
 *                                   └──► Exposition (families: HELP, TYPE, samples) ──► text
 *
 * Why a writer of our own and not prom-client: the format is a handful of
 * line rules (below), the values already live in the service's own
 * counters and are read at the scrape, so a registry of metric objects
 * would only copy them; and the project adds no dependency for what a
 * hundred lines do. `promtool check metrics` checks the output in
 * test/admin/metrics.test.ts.
 *
 * The format: each family is `# HELP name text` (text with `\` and newline
 * escaped), `# TYPE name counter|gauge|histogram`, then its samples, all
 * together; a sample is `name{label="value",…} number`, label values with
 * `\`, `"` and newline escaped; numbers in Go's float syntax (`+Inf`,
 * `-Inf`, `NaN`). A histogram is `name_bucket{le="…"}` (cumulative, the
 * last `le="+Inf"`), `name_sum` and `name_count`.
 */

import { readdir, readFile } from 'node:fs/promises';
import { DOC_SKIP_CODES, URI_SKIP_CODES } from '../core/skip-codes.ts';
import { VERSION } from '../core/version.ts';
import type { CollectionMetricsSnapshot, CrawlerService } from '../service/crawler-service.ts';

/** The Content-Type of the text format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type MetricType = 'counter' | 'gauge' | 'histogram';
export type Labels = Readonly<Record<string, string>>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A label value as the format writes it: backslash, double quote and newline escaped. */
export function escapeLabelValue(v: string): string {
  return v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** HELP text: backslash and newline escaped. */
export function escapeHelp(v: string): string {
  return v.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

/** A sample value in Go's ParseFloat syntax. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function labelText(labels: Labels): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(labels)) {
    if (!LABEL_NAME.test(k) || k.startsWith('__')) throw new Error(`not a label name: ${k}`);
    parts.push(`${k}="${escapeLabelValue(v)}"`);
  }
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

/** Writes families one after the other; a family's samples are given together. */
export class Exposition {
  private readonly lines: string[] = [];
  private readonly seen = new Set<string>();

  private head(name: string, type: MetricType, help: string): void {
    if (!METRIC_NAME.test(name)) throw new Error(`not a metric name: ${name}`);
    if (this.seen.has(name)) throw new Error(`metric family written twice: ${name}`);
    this.seen.add(name);
    this.lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
  }

  /** A counter or gauge family and its samples. */
  family(name: string, type: 'counter' | 'gauge', help: string, samples: Iterable<readonly [Labels, number]>): void {
    if (type === 'counter' && !name.endsWith('_total')) throw new Error(`a counter's name ends in _total: ${name}`);
    this.head(name, type, help);
    for (const [labels, value] of samples) this.lines.push(`${name}${labelText(labels)} ${formatValue(value)}`);
  }

  /** A histogram family: per label set, cumulative bucket counts (the last one +Inf), sum and count. */
  histogram(name: string, help: string, series: Iterable<{ labels: Labels; bounds: readonly number[]; cumulative: readonly number[]; sum: number; count: number }>): void {
    this.head(name, 'histogram', help);
    for (const s of series) {
      for (let i = 0; i < s.cumulative.length; i++) {
        const le = i < s.bounds.length ? formatValue(s.bounds[i]!) : '+Inf';
        this.lines.push(`${name}_bucket${labelText({ ...s.labels, le })} ${formatValue(s.cumulative[i]!)}`);
      }
      this.lines.push(`${name}_sum${labelText(s.labels)} ${formatValue(s.sum)}`, `${name}_count${labelText(s.labels)} ${formatValue(s.count)}`);
    }
  }

  text(): string {
    return this.lines.length === 0 ? '' : `${this.lines.join('\n')}\n`;
  }
}

// ------------------------------------------------------------ the process

interface ProcessFacts {
  readonly rssBytes: number;
  readonly cpuSeconds: number;
  readonly startTimeS: number;
  /** Linux only (/proc). */
  readonly openFds?: number;
  readonly maxFds?: number;
}

async function processFacts(): Promise<ProcessFacts> {
  const cpu = process.cpuUsage();
  const facts = { rssBytes: process.memoryUsage.rss(), cpuSeconds: (cpu.user + cpu.system) / 1e6, startTimeS: Math.floor(performance.timeOrigin / 1000) };
  let openFds: number | undefined;
  let maxFds: number | undefined;
  try {
    // Less one: the listing's own descriptor is in it.
    openFds = (await readdir('/proc/self/fd')).length - 1;
  } catch {
    // not Linux
  }
  try {
    const m = /^Max open files\s+(\d+)/m.exec(await readFile('/proc/self/limits', 'utf8'));
    if (m) maxFds = Number(m[1]);
  } catch {
    // not Linux
  }
  return { ...facts, ...(openFds !== undefined ? { openFds } : {}), ...(maxFds !== undefined ? { maxFds } : {}) };
}

// ------------------------------------------------------------ the families

const STATES = ['crawling', 'suspended', 'zombie'] as const;

/** Every code of a table (0 when not seen), then any other code seen, so a series never appears out of nothing. */
function byCode(table: Readonly<Record<string, string>>, seen: Readonly<Record<string, number>>): Array<[string, number]> {
  const out: Array<[string, number]> = Object.keys(table).map((code) => [code, seen[code] ?? 0]);
  for (const [code, n] of Object.entries(seen)) if (!Object.hasOwn(table, code)) out.push([code, n]);
  return out;
}

function* perCollection(cs: readonly CollectionMetricsSnapshot[], value: (c: CollectionMetricsSnapshot) => number | undefined): Generator<readonly [Labels, number]> {
  for (const c of cs) {
    const v = value(c);
    if (v !== undefined) yield [{ collection: c.name }, v];
  }
}

/** The text `GET /metrics` answers. */
export async function renderMetrics(service: CrawlerService): Promise<string> {
  const cs = await service.metricsSnapshot();
  const proc = await processFacts();
  const x = new Exposition();
  const counter = (name: string, help: string, value: (c: CollectionMetricsSnapshot) => number | undefined): void => x.family(name, 'counter', help, perCollection(cs, value));
  const gauge = (name: string, help: string, value: (c: CollectionMetricsSnapshot) => number | undefined): void => x.family(name, 'gauge', help, perCollection(cs, value));

  counter('trawl_pages_fetched_total', 'Page requests answered or failed (robots.txt not included), per collection.', (c) => c.counters.requests);
  counter('trawl_robots_fetched_total', 'robots.txt requests, per collection.', (c) => c.counters.robotsRequests);
  counter('trawl_downloaded_bytes_total', 'Response body bytes received as sent (before decompression), pages and robots.txt, per collection.', (c) => c.bodyBytes);
  counter('trawl_documents_stored_total', 'Documents stored new or changed, per collection.', (c) => c.counters.stored);
  counter('trawl_documents_unchanged_total', 'Documents fetched again that had not changed (304, or the same content), per collection.', (c) => c.counters.unchanged);
  counter('trawl_documents_deleted_total', 'Stored documents deleted after failed fetches (http_errors DELETE), per collection.', (c) => c.counters.deleted);
  counter('trawl_fetch_errors_total', 'Fetches recorded as errors (HTTP error status or transport failure, after retries), per collection.', (c) => c.counters.errors);
  counter('trawl_fetch_retries_total', 'Fetches retried within the cycle (http_errors RETRY), per collection.', (c) => c.counters.retries);
  x.family('trawl_http_responses_total', 'counter', 'Page responses by HTTP status code, per collection.',
    cs.flatMap((c) => Object.entries(c.counters.httpStatus).map(([code, n]) => [{ collection: c.name, code }, n] as const)));
  x.family('trawl_uri_skips_total', 'counter', 'URIs not queued, by MS-FSCADM URI skip code (trawl codes), per collection.',
    cs.flatMap((c) => byCode(URI_SKIP_CODES, c.counters.uriSkips).map(([code, n]) => [{ collection: c.name, code }, n] as const)));
  x.family('trawl_document_skips_total', 'counter', 'Documents not stored, by MS-FSCADM document skip code (trawl codes), per collection.',
    cs.flatMap((c) => byCode(DOC_SKIP_CODES, c.counters.docSkips).map(([code, n]) => [{ collection: c.name, code }, n] as const)));
  x.histogram('trawl_fetch_duration_seconds', 'Time from the start of a request (page or robots.txt) to its outcome, body read, per collection.',
    cs.map((c) => ({ labels: { collection: c.name }, ...c.latency })));
  gauge('trawl_uris_queued', 'URIs waiting in the queue, per collection.', (c) => c.queued);
  gauge('trawl_sites_active', 'Sites with work queued or a request in flight in the running cycle, per collection.', (c) => c.activeSites);
  gauge('trawl_requests_in_flight', 'Requests in flight now, per collection.', (c) => c.inFlight);
  x.family('trawl_feed_backlog_documents', 'gauge', 'Documents waiting in the feed outbox for a content destination, per collection.',
    cs.flatMap((c) => Object.entries(c.feedBacklog ?? {}).map(([destination, n]) => [{ collection: c.name, destination }, n] as const)));
  x.family('trawl_collection_state', 'gauge', 'The collection\'s state (MS-FSCADM CollectionGetStatus): 1 for the current one.',
    cs.flatMap((c) => STATES.map((state) => [{ collection: c.name, state }, c.status === state ? 1 : 0] as const)));
  gauge('trawl_collection_cycle_running', 'Whether a refresh cycle is running now (1) or not (0), per collection.', (c) => (c.cycleRunning ? 1 : 0));
  x.family('trawl_collections', 'gauge', 'Collections this daemon has, those being deleted included.', [[{}, cs.length]]);
  x.family('trawl_build_info', 'gauge', 'trawl\'s version and the Node.js version it runs on; always 1.', [[{ version: VERSION, nodejs: process.versions.node }, 1]]);

  x.family('process_cpu_seconds_total', 'counter', 'User and system CPU time spent, seconds.', [[{}, proc.cpuSeconds]]);
  x.family('process_resident_memory_bytes', 'gauge', 'Resident memory size, bytes.', [[{}, proc.rssBytes]]);
  x.family('process_start_time_seconds', 'gauge', 'Start time of the process since the Unix epoch, seconds.', [[{}, proc.startTimeS]]);
  if (proc.openFds !== undefined) x.family('process_open_fds', 'gauge', 'Open file descriptors.', [[{}, proc.openFds]]);
  if (proc.maxFds !== undefined) x.family('process_max_fds', 'gauge', 'The limit of open file descriptors (soft).', [[{}, proc.maxFds]]);
  return x.text();
}
