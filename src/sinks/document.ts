/**
 * The document a sink receives, in one of two schemas, chosen per sink
 * (`trawl_sinks.<sink>.schema`):
 *
 *   app_search    the App Search web crawler's schema (elastic-web-crawler-reference
 *                 "Web crawler schema": id, url and its parts with url_port a string,
 *                 title, body_content, meta_description, meta_keywords, headings, links,
 *                 domains, content_hash, last_crawled_at, custom fields), plus what
 *                 trawl knows besides (content collection, crawl collection, HTTP
 *                 status, MIME type, size). The default of MS-FSCCFG collections.
 *   open_crawler  the Elastic Open Crawler's (its DocumentMapper): id, last_crawled_at,
 *                 title, body, meta_keywords, meta_description, links (sorted),
 *                 headings, url and its parts with url_port an integer, custom fields;
 *                 empty fields left out; a file of a type binary_mime_types names as
 *                 file_name, content_length, content_type, _attachment (base64), and
 *                 any other page not indexed. What the Elastic YAML reader writes.
 *
 *   record + stored bytes ─► buildDocument ─► SearchDocument (app_search, and the
 *                                              open_crawler form when a sink wants it)
 *                         ─► sinkDocument(doc, schema) in each sink
 *
 * The page is read once (extract/elastic-content.ts: content rules, custom
 * fields; extract/extraction-rules.ts: extraction rulesets) for both forms.
 * Text fields are cut to the trawl_limits extraction limits: on a character
 * boundary for app_search, and with a final "…" inside the limit for
 * open_crawler, as the Open Crawler cuts them. An app_search document that
 * is not text (a PDF, an image) carries its bytes in `body_base64` instead
 * of `body_content`, so a downstream pipeline can convert it.
 */

import { hash } from 'node:crypto';
import { Parser } from 'htmlparser2';
import { readElasticPage, squish as squishText } from '../extract/elastic-content.ts';
import { applyRulesets, type FieldValue, type Ruleset } from '../extract/extraction-rules.ts';
import { mimeMatches } from '../fetch/mime.ts';
import type { UriRecord } from '../store/crawl-store.ts';

/** How much of a page a search document keeps (trawl_limits.max_title_bytes … max_headings). */
export interface ExtractionLimits {
  readonly titleBytes: number;
  readonly bodyBytes: number;
  readonly keywordsBytes: number;
  readonly descriptionBytes: number;
  readonly indexedLinks: number;
  readonly headings: number;
  /** A <meta class="elastic"> field's content (the Open Crawler's max_elastic_tag_size). */
  readonly elasticTagBytes?: number;
  /** A data-elastic-name field's text (the Open Crawler's max_data_attribute_size). */
  readonly dataAttributeBytes?: number;
}

/** Elastic's crawler.extraction.*.limit defaults, which trawl_limits' defaults equal. */
export const EXTRACTION_LIMITS: ExtractionLimits = {
  titleBytes: 1024,
  bodyBytes: 5_242_880,
  keywordsBytes: 512,
  descriptionBytes: 1024,
  indexedLinks: 25,
  headings: 25,
  elasticTagBytes: 512,
  dataAttributeBytes: 512,
};

/** The schemas a sink may write documents in. */
export const DOCUMENT_SCHEMAS = ['app_search', 'open_crawler'] as const;
export type DocumentSchema = (typeof DOCUMENT_SCHEMAS)[number];

export interface SearchDocument {
  readonly id: string;
  readonly url: string;
  readonly url_scheme: string;
  readonly url_host: string;
  readonly url_port: string;
  readonly url_path: string;
  readonly url_path_dir1?: string;
  readonly url_path_dir2?: string;
  readonly url_path_dir3?: string;
  readonly title?: string;
  readonly body_content?: string;
  readonly body_base64?: string;
  readonly meta_description?: string;
  readonly meta_keywords?: string;
  readonly headings?: string[];
  readonly links?: string[];
  readonly content_hash?: string;
  readonly last_crawled_at: string;
  /** The content collection (MS-FSCCFG feeding `collection`) the document is submitted to. */
  readonly collection: string;
  readonly crawl_collection: string;
  /** The page whose link led to the document (kept through redirects); absent for a start URI. */
  readonly parent_url?: string;
  readonly http_status?: number;
  readonly content_type?: string;
  readonly content_length: number;
  /** The URLs of other pages with the same content (duplicates of this one). */
  readonly additional_urls?: string[];
  /** The domains the content appears on (scheme://host[:port]). */
  readonly domains?: string[];
  /** Custom fields: meta tags, data attributes, extraction rulesets; written as fields of their own. */
  readonly custom?: Readonly<Record<string, FieldValue>>;
  /** The page's whole HTML (trawl_elastic.full_html). */
  readonly full_html?: string;
  /** The Open Crawler's form of the document; null when that schema does not index it (built only when a sink asks). */
  readonly openCrawler?: Readonly<Record<string, unknown>> | null;
}

/**
 * The JSON a sink writes for a document in its schema; undefined when the
 * schema does not index it (the sink removes what it holds under that id).
 */
export function sinkDocument(doc: SearchDocument, schema: DocumentSchema = 'app_search'): Readonly<Record<string, unknown>> | undefined {
  if (schema === 'open_crawler') return doc.openCrawler ?? undefined;
  const { custom, openCrawler: _, ...rest } = doc;
  return custom ? { ...rest, ...custom } : rest;
}

/** The id a document keeps at every destination: updates replace, deletes find it. */
export function documentId(url: string): string {
  return hash('sha1', url, 'hex');
}

/** Cuts a string to at most `max` UTF-8 bytes, ending it with "…" when cut (the Open Crawler's limit_bytesize). */
export function cutWithOmission(s: string, max: number): string {
  if (Buffer.byteLength(s) <= max) return s;
  if (max < 3) return '';
  return `${cutUtf8(s, max - 3)}…`;
}

/** Cuts a string to at most `max` UTF-8 bytes, on a character boundary. */
export function cutUtf8(s: string, max: number): string {
  if (s.length * 3 <= max) return s;
  const b = Buffer.from(s, 'utf8');
  if (b.length <= max) return s;
  return new TextDecoder().decode(b.subarray(0, max)).replace(/\uFFFD$/, '');
}

interface HtmlFields {
  title?: string;
  body: string;
  description?: string;
  keywords?: string;
  headings: string[];
  links: string[];
}

const SKIP_TEXT = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head']);
const HEADING = /^h[1-6]$/;
const BLOCK = new Set(['p', 'div', 'br', 'li', 'tr', 'td', 'th', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'section', 'article', 'header', 'footer', 'blockquote', 'pre']);

/** Title, body text, meta description and keywords, headings and links of an HTML page, in one streaming pass. */
export function htmlFields(html: string, baseUrl: string, maxLinks: number, limits: ExtractionLimits = EXTRACTION_LIMITS): HtmlFields {
  const out: HtmlFields = { body: '', headings: [], links: [] };
  const body: string[] = [];
  let bodyChars = 0;
  let title: string | undefined;
  let inTitle = false;
  let skipDepth = 0;
  let heading: string | undefined;
  const seen = new Set<string>();
  let base = baseUrl;
  let baseSeen = false;
  const parser = new Parser({
    onopentag(name, attrs) {
      if (name === 'title' && title === undefined) {
        inTitle = true;
        title = '';
      } else if (SKIP_TEXT.has(name)) skipDepth++;
      else if (HEADING.test(name)) heading = '';
      if (BLOCK.has(name)) body.push(' ');
      if (name === 'base' && attrs.href !== undefined && !baseSeen) {
        // The first <base href> is the document's base (HTML: "the first base element with an href attribute").
        baseSeen = true;
        try {
          base = new URL(attrs.href, baseUrl).href;
        } catch {
          // an unusable <base> is ignored, as browsers do
        }
      } else if (name === 'meta') {
        const key = (attrs.name ?? '').toLowerCase();
        if (key === 'description' && out.description === undefined) out.description = attrs.content ?? '';
        if (key === 'keywords' && out.keywords === undefined) out.keywords = attrs.content ?? '';
      } else if (name === 'a' && attrs.href !== undefined && out.links.length < maxLinks) {
        try {
          const u = new URL(attrs.href, base);
          u.hash = '';
          if ((u.protocol === 'http:' || u.protocol === 'https:') && !seen.has(u.href)) {
            seen.add(u.href);
            out.links.push(u.href);
          }
        } catch {
          // not a URL: not a link
        }
      }
    },
    ontext(text) {
      if (inTitle) title += text;
      else if (skipDepth === 0 && bodyChars < limits.bodyBytes) {
        body.push(text);
        bodyChars += text.length;
      }
      if (heading !== undefined) heading += text;
    },
    onclosetag(name) {
      if (name === 'title') inTitle = false;
      else if (SKIP_TEXT.has(name)) skipDepth = Math.max(0, skipDepth - 1);
      else if (HEADING.test(name) && heading !== undefined) {
        const h = squash(heading);
        if (h && out.headings.length < limits.headings) out.headings.push(h);
        heading = undefined;
      }
      if (BLOCK.has(name)) body.push(' ');
    },
  }, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
  parser.end(html);
  if (title !== undefined) out.title = squash(title);
  out.body = squash(body.join(''));
  return out;
}

function squash(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** The charset a page declares in its first kilobyte (<meta charset>, or http-equiv Content-Type). */
function declaredCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  return /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1]?.toLowerCase();
}

/** `fallback`: the encoding when neither the response nor the page names one (trawl_extraction.default_charset). */
export function decodeText(bytes: Uint8Array, charset: string | undefined, fallback = 'utf-8'): string {
  try {
    return new TextDecoder(charset ?? declaredCharset(bytes) ?? fallback).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** The charset parameter of a stored header block's Content-Type, if any. */
export function charsetOfHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return /^content-type:[^\r\n]*;\s*charset="?([\w-]+)/im.exec(header)?.[1]?.toLowerCase();
}

/** Whether a MIME type is text a reader can be shown as it is (text/*, XML, JSON, JavaScript). */
export function isTextMime(mime: string): boolean {
  return mime.startsWith('text/') || /[+/](xml|json|javascript|xhtml\+xml)$/.test(mime);
}

export interface DocumentSource {
  readonly record: UriRecord;
  readonly body: Uint8Array;
  readonly mime: string;
  /** charset of the Content-Type, when known */
  readonly charset?: string | undefined;
  /** The URLs of the pages that are duplicates of this one (the crawl store's duplicatesOf). */
  readonly additionalUrls?: readonly string[];
}

export interface DocumentOptions {
  readonly collection: string;
  readonly crawlCollection: string;
  /** pp ds_send_links: every link of the page, not only the first 25. */
  readonly allLinks?: boolean;
  readonly maxLinks?: number;
  /** The trawl_limits extraction limits (default EXTRACTION_LIMITS). */
  readonly limits?: ExtractionLimits;
  /** uri_search_mime: the types parsed as HTML. */
  readonly htmlMime?: readonly string[];
  /** trawl_extraction_rulesets, compiled. */
  readonly rulesets?: readonly Ruleset[];
  /** trawl_extraction.binary_mime_types: the files an open_crawler document is made of (besides HTML). */
  readonly binaryMime?: readonly string[];
  /** trawl_elastic.exclude_tags: per origin, the elements the body text leaves out (elastic-content.ts excludeTagsSet). */
  readonly excludeTags?: ReadonlyMap<string, ReadonlySet<string>>;
  /** trawl_elastic.full_html: an HTML page's document carries its whole HTML as full_html. */
  readonly fullHtml?: boolean;
  /** Build the open_crawler form too (a sink of the collection writes it). */
  readonly openCrawler?: boolean;
  /** trawl_extraction.default_charset: the encoding of a page that names none (default utf-8). */
  readonly defaultCharset?: string;
}

/** The MIME types read as HTML when the options name none (one list, so that mimeMatches keeps its answers). */
const HTML_MIME: readonly string[] = ['text/html', 'application/xhtml+xml'];

/** The first three path segments, the file name included: "/news/2024/a.html" → news, 2024, a.html; empty ones left out. */
function pathDirs(pathname: string): Array<string | undefined> {
  const seg = pathname.split('/');
  return [1, 2, 3].map((i) => (seg[i] ? seg[i] : undefined));
}

/** Ruby's Time#rfc3339 of a UTC time: seconds, no fraction, Z. */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function fieldsOf(...maps: ReadonlyArray<ReadonlyMap<string, FieldValue>>): Record<string, FieldValue> | undefined {
  const out: Record<string, FieldValue> = {};
  let any = false;
  for (const m of maps) {
    for (const [k, v] of m) {
      out[k] = v;
      any = true;
    }
  }
  return any ? out : undefined;
}

function cutValues(m: ReadonlyMap<string, string>, max: number): Map<string, string> {
  return new Map([...m].map(([k, v]) => [k, cutWithOmission(v, max)]));
}

function nonBlank(o: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) delete o[k];
  }
  return o;
}

export function buildDocument(src: DocumentSource, o: DocumentOptions): SearchDocument {
  const url = src.record.url;
  const u = new URL(url);
  const dirs = pathDirs(u.pathname);
  const port = u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
  const isHtml = mimeMatches(src.mime, o.htmlMime ?? HTML_MIME);
  const isText = isHtml || src.mime.startsWith('text/') || /[+/](xml|json)$/.test(src.mime);
  const L = o.limits ?? EXTRACTION_LIMITS;
  const tagBytes = L.elasticTagBytes ?? 512;
  const dataBytes = L.dataAttributeBytes ?? 512;
  const maxLinks = o.allLinks ? (o.maxLinks ?? 1000) : L.indexedLinks;
  const html = isHtml ? decodeText(src.body, src.charset, o.defaultCharset) : undefined;
  const page = html !== undefined ? readElasticPage(html, url, { maxLinks, maxHeadings: L.headings, excludeTags: o.excludeTags?.get(u.origin) }) : undefined;
  const fullHtml = o.fullHtml && html !== undefined && html !== '' ? html : undefined;
  const ruleFields = o.rulesets?.length ? applyRulesets(o.rulesets, url, page?.dom) : new Map<string, FieldValue>();
  let text: string | undefined;
  if (page) text = page.body;
  else if (isText) text = decodeText(src.body, src.charset, o.defaultCharset);

  // The Site Search forms (class swiftype, data-swiftype-name) are App Search's only; the Elastic ones win a tie.
  const custom = page
    ? fieldsOf(ruleFields, cutValues(page.swiftypeMetaFields, tagBytes), cutValues(page.metaFields, tagBytes), cutValues(page.swiftypeDataFields, dataBytes), cutValues(page.dataFields, dataBytes))
    : fieldsOf(ruleFields);
  const doc: SearchDocument = {
    id: documentId(url),
    url,
    url_scheme: u.protocol.slice(0, -1),
    url_host: u.hostname,
    url_port: port,
    url_path: u.pathname,
    ...(dirs[0] !== undefined ? { url_path_dir1: dirs[0] } : {}),
    ...(dirs[1] !== undefined ? { url_path_dir2: dirs[1] } : {}),
    ...(dirs[2] !== undefined ? { url_path_dir3: dirs[2] } : {}),
    ...(page?.title !== undefined ? { title: cutUtf8(page.title, L.titleBytes) } : {}),
    ...(text !== undefined ? { body_content: cutUtf8(text, L.bodyBytes) } : { body_base64: Buffer.from(src.body).toString('base64') }),
    ...(page?.description !== undefined ? { meta_description: cutUtf8(squishText(page.description), L.descriptionBytes) } : {}),
    ...(page?.keywords !== undefined ? { meta_keywords: cutUtf8(squishText(page.keywords), L.keywordsBytes) } : {}),
    ...(page ? { headings: page.headings, links: page.links } : {}),
    ...(src.record.checksum !== undefined ? { content_hash: src.record.checksum } : {}),
    last_crawled_at: new Date(src.record.lastCrawledMs).toISOString(),
    collection: o.collection,
    crawl_collection: o.crawlCollection,
    ...(src.record.parent !== undefined ? { parent_url: src.record.parent } : {}),
    ...(src.record.httpStatus !== undefined ? { http_status: src.record.httpStatus } : {}),
    content_type: src.mime,
    content_length: src.body.length,
    ...(src.additionalUrls?.length ? { additional_urls: [...src.additionalUrls] } : {}),
    domains: domainsOf(u, src.additionalUrls),
    ...(fullHtml !== undefined ? { full_html: fullHtml } : {}),
    ...(custom ? { custom } : {}),
  };
  if (!o.openCrawler) return doc;
  return { ...doc, openCrawler: openCrawlerDocument(src, o, u, dirs, page, ruleFields, L, fullHtml) };
}

/** The domains the content appears on: the page's and those of its duplicates, each once, in that order. */
function domainsOf(u: URL, additional: readonly string[] | undefined): string[] {
  const out = [siteOrigin(u)];
  for (const a of additional ?? []) {
    try {
      const d = siteOrigin(new URL(a));
      if (!out.includes(d)) out.push(d);
    } catch {
      // a stored URL always parses
    }
  }
  return out;
}

/** scheme://host[:port], the port only when it is not the scheme's default (as URL.origin writes it). */
function siteOrigin(u: URL): string {
  return u.origin === 'null' ? `${u.protocol}//${u.host}` : u.origin;
}

/** The Open Crawler's document (DocumentMapper#create_doc), or null when it would not index this content. */
function openCrawlerDocument(
  src: DocumentSource, o: DocumentOptions, u: URL, dirs: Array<string | undefined>,
  page: ReturnType<typeof readElasticPage> | undefined, ruleFields: ReadonlyMap<string, FieldValue>, L: ExtractionLimits, fullHtml: string | undefined,
): Record<string, unknown> | null {
  const url = src.record.url;
  const urlParts = nonBlank({
    url,
    url_scheme: u.protocol.slice(0, -1),
    url_host: u.hostname,
    url_port: Number(u.port || (u.protocol === 'https:' ? 443 : u.protocol === 'http:' ? 80 : 0)),
    url_path: u.pathname,
    url_path_dir1: dirs[0],
    url_path_dir2: dirs[1],
    url_path_dir3: dirs[2],
  });
  const core = { id: documentId(url), last_crawled_at: rfc3339(src.record.lastCrawledMs) };
  const rules = Object.fromEntries(ruleFields);
  if (page) {
    return {
      ...core,
      ...nonBlank({
        title: page.title !== undefined ? cutWithOmission(page.title, L.titleBytes) : undefined,
        body: cutWithOmission(page.body, L.bodyBytes),
        meta_keywords: page.keywords !== undefined ? cutWithOmission(page.keywords, L.keywordsBytes) : undefined,
        meta_description: page.description !== undefined ? cutWithOmission(page.description, L.descriptionBytes) : undefined,
        links: [...page.links].sort(),
        headings: page.headings,
        full_html: fullHtml,
      }),
      ...urlParts,
      ...rules,
      ...Object.fromEntries(cutValues(page.metaFields, L.elasticTagBytes ?? 512)),
      ...Object.fromEntries(cutValues(page.dataFields, L.dataAttributeBytes ?? 512)),
    };
  }
  if (!mimeMatches(src.mime, o.binaryMime ?? [])) return null;
  return {
    ...core,
    ...nonBlank({
      file_name: url.slice(url.lastIndexOf('/') + 1),
      content_length: src.body.length,
      content_type: src.mime,
      _attachment: Buffer.from(src.body).toString('base64'),
    }),
    ...urlParts,
    ...rules,
  };
}
