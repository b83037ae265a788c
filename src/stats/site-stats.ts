/**
 * The statistics of MS-FSCADM 2.2.4.9 (site schema), kept per site as the
 * crawl runs. The crawler saves the sites whose statistics changed once a
 * second, and every site's when a cycle stops or ends. The collection's
 * statistics are the sum of its sites'.
 *
 *   continuous  counters that only grow (Processed, Downloaded, DLTime, …)
 *   discrete    last values (LastUri, QueueLength, Epoch, …)
 *   histograms  code → count (HTTPResponse, URISkip, DocSkip, MimeType)
 *   maxima      DocSizeMax, DLTimeMax (for the flattened structure, 2.2.5)
 */

export const CONTINUOUS_KEYS = [
  'Processed', 'Downloaded', 'Stored', 'Modified', 'Deleted', 'Unchanged', 'DBUpdates', 'ReadNet', 'WriteNet', 'HasLastMod', 'HasETag',
  'DLTime', 'DocSize', 'Retries', 'HasSitemap', 'NodeSchedulerFwd', 'LocalFwd', 'Local',
] as const;
export type ContinuousKey = (typeof CONTINUOUS_KEYS)[number];

export const HISTOGRAM_KEYS = ['HTTPResponse', 'URISkip', 'DocSkip', 'MimeType'] as const;
export type HistogramKey = (typeof HISTOGRAM_KEYS)[number];

export interface StatsData {
  continuous: Record<ContinuousKey, number>;
  histograms: Record<HistogramKey, Record<string, number>>;
  discrete: {
    LastUri: string;
    QueueLength: number;
    /** Seconds since the epoch (MS-FSCADM timestamp). */
    CrawlStarted: number;
    CrawlEnded: number;
    Epoch: number;
    LastRefresh: number;
  };
  maxima: { DocSizeMax: number; DLTimeMax: number };
}

/** An array index no bucket reaches (HTTP status codes are three digits). */
const FAR_INDEX = 0x3fffffff;

/**
 * An empty histogram for numeric buckets (HTTPResponse). A plain object
 * keyed '200', '301', '404' keeps those keys as array elements, and V8
 * sizes the array by the largest of them, kilobytes for one histogram (a
 * broad crawl keeps one per site). An index far beyond any bucket, set and
 * deleted at once, puts the elements in dictionary mode from the start:
 * 209 bytes whatever the codes. JSON.parse already builds sparse
 * indices that way. `npm run bench:sites` shows the bytes per site
 * (bench/README.md, *Memory per site*, and *What changed*, 5348119).
 */
function emptyHistogram(): Record<string, number> {
  const h: Record<number, number> = {};
  h[FAR_INDEX] = 0;
  delete h[FAR_INDEX];
  return h as Record<string, number>;
}

/** Adds to a bucket; `__proto__` (a MIME type is whatever the server sent) is an own property like any other. */
function bump(h: Record<string, number>, bucket: string, n: number): void {
  const v = (Object.hasOwn(h, bucket) ? h[bucket]! : 0) + n;
  if (bucket === '__proto__') Object.defineProperty(h, bucket, { value: v, enumerable: true, writable: true, configurable: true });
  else h[bucket] = v;
}

function histogramOf(from: Record<string, number> | undefined, numeric: boolean): Record<string, number> {
  const h = numeric ? emptyHistogram() : {};
  if (from) for (const [b, n] of Object.entries(from)) bump(h, b, n);
  return h;
}

export function emptyStats(): StatsData {
  return {
    continuous: Object.fromEntries(CONTINUOUS_KEYS.map((k) => [k, 0])) as Record<ContinuousKey, number>,
    // Only HTTPResponse has numeric buckets; the others stay small plain objects (65 bytes against 209).
    histograms: { HTTPResponse: emptyHistogram(), URISkip: {}, DocSkip: {}, MimeType: {} },
    discrete: { LastUri: '', QueueLength: 0, CrawlStarted: 0, CrawlEnded: 0, Epoch: 0, LastRefresh: 0 },
    maxima: { DocSizeMax: 0, DLTimeMax: 0 },
  };
}

/** Folds one site's discrete values into a collection's (what `SiteStats.merge` does with them). */
export function mergeDiscrete(into: StatsData['discrete'], other: StatsData['discrete']): void {
  into.QueueLength += other.QueueLength;
  if (other.CrawlStarted > 0 && (into.CrawlStarted === 0 || other.CrawlStarted < into.CrawlStarted)) into.CrawlStarted = other.CrawlStarted;
  into.CrawlEnded = Math.max(into.CrawlEnded, other.CrawlEnded);
  into.Epoch = Math.max(into.Epoch, other.Epoch);
  into.LastRefresh = Math.max(into.LastRefresh, other.LastRefresh);
  if (other.LastUri) into.LastUri = other.LastUri;
}

export class SiteStats {
  readonly data: StatsData;
  /**
   * The collection's running totals, told of every count this site makes
   * (add, count, download), so that the collection's counters need no sum
   * over every site's histograms (see CollectionCrawl.counterTotals).
   */
  private totals: SiteStats | undefined;

  constructor(data: StatsData = emptyStats(), totals?: SiteStats) {
    this.data = data;
    this.totals = totals;
  }

  /** From now on, every count is also made in `totals` (which the caller has brought up to this site's counts). */
  attach(totals: SiteStats): void {
    this.totals = totals;
  }

  static parse(json: string | undefined): SiteStats {
    if (!json) return new SiteStats();
    const d = JSON.parse(json) as Partial<StatsData>;
    const base = emptyStats();
    return new SiteStats({
      continuous: { ...base.continuous, ...d.continuous },
      histograms: {
        HTTPResponse: histogramOf(d.histograms?.HTTPResponse, true), URISkip: histogramOf(d.histograms?.URISkip, false),
        DocSkip: histogramOf(d.histograms?.DocSkip, false), MimeType: histogramOf(d.histograms?.MimeType, false),
      },
      discrete: { ...base.discrete, ...d.discrete },
      maxima: { ...base.maxima, ...d.maxima },
    });
  }

  add(key: ContinuousKey, n = 1): void {
    this.data.continuous[key] += n;
    this.totals?.add(key, n);
  }

  count(key: HistogramKey, bucket: string, n = 1): void {
    bump(this.data.histograms[key], bucket, n);
    this.totals?.count(key, bucket, n);
  }

  /** One download: its time (seconds) and size (bytes). */
  download(seconds: number, bytes: number): void {
    this.add('DLTime', seconds);
    this.add('DocSize', bytes);
    this.raiseMaxima(bytes, seconds);
  }

  private raiseMaxima(bytes: number, seconds: number): void {
    if (bytes > this.data.maxima.DocSizeMax) this.data.maxima.DocSizeMax = bytes;
    if (seconds > this.data.maxima.DLTimeMax) this.data.maxima.DLTimeMax = seconds;
    this.totals?.raiseMaxima(bytes, seconds);
  }

  toJSON(): StatsData {
    return this.data;
  }

  /** Adds another site's statistics into this one (for collection totals; not passed on to `totals`). */
  merge(other: StatsData): void {
    for (const k of CONTINUOUS_KEYS) this.data.continuous[k] += other.continuous[k];
    for (const h of HISTOGRAM_KEYS) for (const [b, n] of Object.entries(other.histograms[h])) bump(this.data.histograms[h], b, n);
    this.data.maxima.DocSizeMax = Math.max(this.data.maxima.DocSizeMax, other.maxima.DocSizeMax);
    this.data.maxima.DLTimeMax = Math.max(this.data.maxima.DLTimeMax, other.maxima.DLTimeMax);
    mergeDiscrete(this.data.discrete, other.discrete);
  }
}
