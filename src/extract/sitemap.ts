/**
 * Sitemaps (sitemaps.org protocol 0.9): XML `<urlset>` and `<sitemapindex>`,
 * text sitemaps (one URL per line), either of them gzipped.
 *
 * ```
 *  body ──(1f 8b? gunzip, output capped at maxBytes)──► bytes ≤ maxBytes
 *       ──(UTF-8, BOM dropped)──► text
 *       ├─ first non-space is "<" ──► saxes, streaming, namespaces on
 *       │     root <urlset> | <sitemapindex> (any namespace; it becomes the core one)
 *       │       └─ <url> | <sitemap>        direct children of the root, core namespace
 *       │            └─ <loc> <lastmod> <changefreq> <priority>   text + CDATA, trimmed
 *       │     each entry is built from its own children only, and dropped without <loc>
 *       └─ otherwise ──► text sitemap: every line that is an absolute URL
 *  ──► entries in document order, at most maxUrls
 * ```
 *
 * Safety: saxes never reads external entities nor expands those a DOCTYPE
 * declares (an entry whose <loc> uses one is dropped), element depth is bounded,
 * and nothing beyond the first `maxBytes` is read, compressed or not: the
 * entries before that limit are returned, marked truncated. An undefined
 * entity reference (`&nbsp;`) is kept as written instead of ending the read.
 *
 * Policy stays with the caller: which schemes and hosts to follow
 * ({@link inSitemapScope}), and how deep to follow indexes (max_index_depth).
 */
import { gunzipSync, constants as zlibConstants } from 'node:zlib';
import { SaxesParser } from 'saxes';
import type { SaxesTagNS } from 'saxes';

export type ChangeFreq = 'always' | 'hourly' | 'daily' | 'weekly' | 'monthly' | 'yearly' | 'never';

export interface SitemapUrl {
  /**
   * The `<loc>` after entity decoding and trimming. Kept as written when it is
   * absolute (any scheme: filtering is the caller's policy); a relative one,
   * which the protocol forbids, is resolved against the sitemap's URL.
   */
  loc: string;
  /** `<lastmod>` as given, only when it is a valid W3C datetime (YYYY, YYYY-MM, YYYY-MM-DD, or with a time and a zone). */
  lastmod?: string;
  /** `<changefreq>`, lower-cased, only when it is one of the protocol's values. */
  changefreq?: ChangeFreq;
  /** `<priority>`, only when it is a number in [0, 1]; the protocol's default when absent is 0.5. */
  priority?: number;
}

/**
 * What a sitemap body held.
 *
 * `truncated`: the entries are a prefix of the document's: `maxUrls` was
 * reached with more entries to come, or the XML broke off (malformed or
 * nested too deep) after the root element was recognised.
 *
 * `invalid`: nothing usable; `reason` says why (not a sitemap, too large,
 * DOCTYPE with entity declarations, bad gzip, ...).
 */
export type SitemapParse =
  | { kind: 'urlset'; urls: SitemapUrl[]; truncated: boolean }
  | { kind: 'index'; sitemaps: Array<{ loc: string; lastmod?: string }>; truncated: boolean }
  | { kind: 'text'; urls: SitemapUrl[]; truncated: boolean }
  | { kind: 'invalid'; reason: string };

export interface SitemapParseOptions {
  /** Where the sitemap was fetched (resolves relative `<loc>`s). */
  url: string;
  /** The response Content-Type, if any; a text sitemap is read only from text/plain or an untyped body. */
  contentType?: string;
  /** Entries kept at most (trawl_sitemaps max_urls). */
  maxUrls: number;
  /** Bytes read at most, after decompression (trawl_sitemaps max_bytes). */
  maxBytes: number;
}

/** Element nesting read at most; the protocol needs 3, extensions (image, video, news) a few more. */
const MAX_DEPTH = 32;
/** Characters kept of one field; the protocol caps a URL at 2048. */
const MAX_FIELD_CHARS = 8192;
const FIELDS = new Set(['loc', 'lastmod', 'changefreq', 'priority']);
const CHANGE_FREQS = new Set<string>(['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never']);
/** Content types a non-XML body may carry and still be read as a text sitemap. */
const TEXT_TYPES = new Set(['text/plain', 'application/octet-stream', 'application/gzip', 'application/x-gzip', 'binary/octet-stream']);

/** Thrown from inside saxes callbacks to stop the parse; never escapes this module. */
class Stop extends Error {}

export function parseSitemap(body: Uint8Array, opts: SitemapParseOptions): SitemapParse {
  const read = decompress(body, opts.maxBytes);
  if (typeof read === 'string') return { kind: 'invalid', reason: read };
  const { bytes, cut } = read;
  // A cut body may end inside a UTF-8 sequence: that last character decodes as U+FFFD.
  const text = new TextDecoder('utf-8', { ignoreBOM: false }).decode(bytes);
  const start = text.search(/\S/);
  if (start < 0) return { kind: 'invalid', reason: cut ? `the first ${opts.maxBytes} bytes (max_bytes) are empty` : 'the body is empty' };
  let parsed: SitemapParse;
  // Leading white space (often left by a template engine) would make the XML declaration an error.
  if (text[start] === '<') parsed = parseXml(text.slice(start), opts);
  else {
    const mime = opts.contentType?.split(';', 1)[0]?.trim().toLowerCase();
    if (mime && !TEXT_TYPES.has(mime)) {
      return { kind: 'invalid', reason: `a ${mime} body that is not XML is not a sitemap` };
    }
    // The last line of a cut text sitemap may be a URL cut short: it is not read.
    parsed = parseText(cut ? text.slice(0, Math.max(0, text.search(/[\r\n][^\r\n]*$/))) : text, opts.maxUrls);
  }
  // What max_bytes cut off is reported as truncation; the entries before it stand.
  if (cut && parsed.kind !== 'invalid') parsed.truncated = true;
  return parsed;
}

/**
 * The body, gunzipped when it starts with the gzip magic bytes, at most
 * `maxBytes` of it (`cut` when there was more); or why it cannot be read.
 */
function decompress(body: Uint8Array, maxBytes: number): { bytes: Uint8Array; cut: boolean } | string {
  // A .gz URL or a gzip Content-Type without the magic bytes was already
  // decoded by the HTTP layer (Content-Encoding: gzip), so only the bytes decide.
  if (body[0] !== 0x1f || body[1] !== 0x8b) {
    return body.byteLength > maxBytes ? { bytes: body.subarray(0, maxBytes), cut: true } : { bytes: body, cut: false };
  }
  const whole = gunzipAtMost(body, maxBytes);
  if (whole !== TOO_LARGE) return typeof whole === 'string' ? whole : { bytes: whole, cut: false };
  return { bytes: gunzipPrefix(body, maxBytes), cut: true };
}

const TOO_LARGE = Symbol('too large');

/** The gunzipped bytes, TOO_LARGE past maxBytes, or the gzip error. */
function gunzipAtMost(compressed: Uint8Array, maxBytes: number): Uint8Array | typeof TOO_LARGE | string {
  try {
    // Z_SYNC_FLUSH: a cut-off stream yields what it holds instead of failing.
    return gunzipSync(compressed, { maxOutputLength: maxBytes, finishFlush: zlibConstants.Z_SYNC_FLUSH });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return TOO_LARGE;
    return `gzip: ${(err as Error).message}`;
  }
}

/**
 * A prefix of the gunzipped body of at least half of maxBytes (when the body
 * holds that much) and at most maxBytes. The synchronous gunzip gives all or
 * nothing, so prefixes of the compressed bytes are tried: doubling until one
 * expands past the limit, then a few halving steps between the last two. The
 * output of a compressed prefix is a prefix of the whole output, and each try
 * costs at most maxBytes, about 8 of them in all.
 */
function gunzipPrefix(compressed: Uint8Array, maxBytes: number): Uint8Array {
  let best: Uint8Array = new Uint8Array(0);
  let lo = 0;
  let hi = compressed.byteLength;
  for (let len = 1024; len < hi; len *= 2) {
    const out = gunzipAtMost(compressed.subarray(0, len), maxBytes);
    if (out === TOO_LARGE) {
      hi = len;
      break;
    }
    if (typeof out === 'string') return best;
    best = out;
    lo = len;
  }
  for (let step = 0; step < 6 && best.byteLength < maxBytes / 2 && hi - lo > 1; step++) {
    const mid = lo + ((hi - lo) >> 1);
    const out = gunzipAtMost(compressed.subarray(0, mid), maxBytes);
    if (out === TOO_LARGE) hi = mid;
    else if (typeof out === 'string') break;
    else {
      best = out;
      lo = mid;
    }
  }
  return best;
}

function parseText(text: string, maxUrls: number): SitemapParse {
  const urls: SitemapUrl[] = [];
  let truncated = false;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.trim();
    if (line === '' || /\s/.test(line) || !URL.canParse(line)) continue;
    if (urls.length >= maxUrls) {
      truncated = true;
      break;
    }
    urls.push({ loc: line });
  }
  if (urls.length === 0) return { kind: 'invalid', reason: 'neither XML nor a text sitemap (no line is an absolute URL)' };
  return { kind: 'text', urls, truncated };
}

interface Fields {
  loc?: string;
  lastmod?: string;
  changefreq?: string;
  priority?: string;
}

function parseXml(text: string, opts: SitemapParseOptions): SitemapParse {
  const parser = new SaxesParser({
    xmlns: true,
    position: false,
    // An undeclared prefix (image:loc without xmlns:image) is a foreign element, not an error.
    resolvePrefix: (prefix: string) => (prefix === '' ? undefined : `urn:trawl:undeclared:${prefix}`),
  });
  let kind: 'urlset' | 'index' | undefined;
  let coreNs = '';
  let notSitemap: string | undefined;
  /** `&name;` of each general entity the DOCTYPE declares (never expanded). */
  const declared: string[] = [];
  let truncated = false;
  const urls: SitemapUrl[] = [];
  const sitemaps: Array<{ loc: string; lastmod?: string }> = [];
  let depth = 0;
  // The open <url>/<sitemap> (depth 2) and the open field in it (depth 3).
  let entry: Fields | undefined;
  let field: keyof Fields | undefined;
  let fieldText = '';

  const isCore = (tag: SaxesTagNS): boolean => tag.uri === coreNs || tag.uri === '';
  const finishEntry = (e: Fields): void => {
    if (e.loc !== undefined && declared.length > 0 && declared.some((ref) => e.loc!.includes(ref))) return;
    const loc = e.loc === undefined ? undefined : resolveLoc(e.loc, opts.url);
    if (loc === undefined) return; // no <loc>: the whole entry goes, its metadata with it
    if ((kind === 'index' ? sitemaps.length : urls.length) >= opts.maxUrls) {
      truncated = true;
      throw new Stop();
    }
    const lastmod = e.lastmod !== undefined && isW3cDatetime(e.lastmod) ? e.lastmod : undefined;
    if (kind === 'index') {
      sitemaps.push(lastmod === undefined ? { loc } : { loc, lastmod });
      return;
    }
    const url: SitemapUrl = { loc };
    if (lastmod !== undefined) url.lastmod = lastmod;
    const freq = e.changefreq?.toLowerCase();
    if (freq !== undefined && CHANGE_FREQS.has(freq)) url.changefreq = freq as ChangeFreq;
    const priority = e.priority !== undefined && /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(e.priority) ? Number(e.priority) : NaN;
    if (priority >= 0 && priority <= 1) url.priority = priority;
    urls.push(url);
  };

  parser.on('doctype', (doctype) => {
    // saxes skips the internal subset without expanding it (no billion laughs,
    // no external entity read): a reference to an entity declared there stays
    // as written, like an undefined one, and the entry whose <loc> uses it is
    // dropped below (the URL it stands for is unknown). The other entries are
    // read, as the Elastic crawlers read them.
    for (const m of doctype.matchAll(/<!ENTITY\s+(?!%)([^\s>]+)/gi)) declared.push(`&${m[1]};`);
  });
  parser.on('opentag', (tag) => {
    depth++;
    if (depth > MAX_DEPTH) {
      truncated = true;
      throw new Stop();
    }
    if (depth === 1) {
      if (tag.local === 'urlset') kind = 'urlset';
      else if (tag.local === 'sitemapindex') kind = 'index';
      else {
        notSitemap = `the root element is <${tag.name}>, not <urlset> or <sitemapindex>`;
        throw new Stop();
      }
      coreNs = tag.uri;
    } else if (depth === 2) {
      entry = isCore(tag) && tag.local === (kind === 'index' ? 'sitemap' : 'url') ? {} : undefined;
    } else if (depth === 3 && entry && isCore(tag) && FIELDS.has(tag.local)) {
      field = tag.local as keyof Fields;
      fieldText = '';
    }
  });
  const onText = (t: string): void => {
    if (field !== undefined && depth === 3 && fieldText.length < MAX_FIELD_CHARS) fieldText += t;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => {
    if (depth === 3 && field !== undefined && entry) {
      // A repeated field: the first one counts.
      entry[field] ??= fieldText.slice(0, MAX_FIELD_CHARS).trim();
      field = undefined;
    } else if (depth === 2 && entry) {
      const done = entry;
      entry = undefined;
      finishEntry(done);
    }
    depth--;
  });
  parser.on('error', (err) => {
    // An undefined entity (&nbsp;) is kept as written and saxes goes on.
    // Anything else malformed ends the read (saxes' recovery from a bare "&"
    // would swallow markup up to the next ";"); what was read before stays usable.
    if (/undefined entity/.test(err.message)) return;
    if (depth > 0) truncated = true;
    throw new Stop();
  });

  try {
    parser.write(text).close();
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
  }
  if (notSitemap !== undefined) return { kind: 'invalid', reason: notSitemap };
  if (kind === undefined) return { kind: 'invalid', reason: 'malformed XML before any root element' };
  return kind === 'index' ? { kind, sitemaps, truncated } : { kind, urls, truncated };
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** A trimmed `<loc>`: kept as written when absolute, else resolved against the sitemap URL. */
function resolveLoc(loc: string, base: string): string | undefined {
  if (loc === '') return undefined;
  // Kept as written, but only when it is a URL: "http://exa mple.org/" is not one.
  if (SCHEME.test(loc)) return URL.canParse(loc) ? loc : undefined;
  try {
    return new URL(loc, base).href;
  } catch {
    return undefined;
  }
}

const W3C_DATETIME = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-](\d{2}):(\d{2})))?)?)?$/;

/** W3C Date and Time Formats (the NOTE sitemaps.org names): YYYY[-MM[-DD[Thh:mm[:ss[.s]]TZD]]]. */
export function isW3cDatetime(value: string): boolean {
  const m = W3C_DATETIME.exec(value);
  if (!m) return false;
  const [, , mo, d, h, mi, s, , zh, zm] = m;
  const year = Number(m[1]);
  if (mo !== undefined && (Number(mo) < 1 || Number(mo) > 12)) return false;
  if (d !== undefined) {
    const days = new Date(Date.UTC(year, Number(mo), 0)).getUTCDate();
    if (Number(d) < 1 || Number(d) > days) return false;
  }
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59)) return false;
  if (s !== undefined && Number(s) > 60) return false; // 60: a leap second
  if (zh !== undefined && (Number(zh) > 23 || Number(zm) > 59)) return false;
  return true;
}

/**
 * sitemaps.org "Sitemap file location": a sitemap at http://h/a/b/sitemap.xml
 * may only list URLs under http://h/a/b/ (same scheme, host and port, and a
 * path below the sitemap's directory) — unless it was named in robots.txt
 * (then any URL of that host).
 *
 * `fromRobots` lifts only the path rule. For cross-submission (a sitemap on
 * host A named in the robots.txt of host B), pass the robots.txt URL as
 * `sitemapUrl`: B's URLs are then in scope. Other schemes (mailto:,
 * javascript:, ftp:) are never in scope of an http(s) sitemap.
 */
export function inSitemapScope(sitemapUrl: string, url: string, fromRobots: boolean): boolean {
  let s: URL;
  let u: URL;
  try {
    s = new URL(sitemapUrl);
    u = new URL(url);
  } catch {
    return false;
  }
  if (s.protocol !== 'http:' && s.protocol !== 'https:') return false;
  if (u.protocol !== s.protocol || u.host !== s.host) return false;
  if (fromRobots) return true;
  const dir = s.pathname.slice(0, s.pathname.lastIndexOf('/') + 1);
  return u.pathname.startsWith(dir);
}
