/**
 * The document a sink receives: the Elastic web crawler's search-document
 * schema (elastic-web-crawler-reference "Web crawler schema": id, url and
 * its parts, title, body_content, meta_description, meta_keywords, headings,
 * links, content_hash, last_crawled_at), plus what trawl knows besides
 * (content collection, crawl collection, HTTP status, MIME type, size).
 *
 * Text fields are cut to Elastic's default extraction limits. A document
 * that is not text (a PDF, an image) carries its bytes in `body_base64`
 * instead of `body_content`, so a downstream pipeline can convert it.
 */

import { hash } from 'node:crypto';
import { Parser } from 'htmlparser2';
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
}

/** Elastic's crawler.extraction.*.limit defaults, which trawl_limits' defaults equal. */
export const EXTRACTION_LIMITS: ExtractionLimits = {
  titleBytes: 1024,
  bodyBytes: 5_242_880,
  keywordsBytes: 512,
  descriptionBytes: 1024,
  indexedLinks: 25,
  headings: 25,
};

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
}

/** The id a document keeps at every destination: updates replace, deletes find it. */
export function documentId(url: string): string {
  return hash('sha1', url, 'hex');
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
  const parser = new Parser({
    onopentag(name, attrs) {
      if (name === 'title' && title === undefined) {
        inTitle = true;
        title = '';
      } else if (SKIP_TEXT.has(name)) skipDepth++;
      else if (HEADING.test(name)) heading = '';
      if (BLOCK.has(name)) body.push(' ');
      if (name === 'base' && attrs.href) {
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

export function decodeText(bytes: Uint8Array, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? declaredCharset(bytes) ?? 'utf-8').decode(bytes);
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
}

/** The MIME types read as HTML when the options name none (one list, so that mimeMatches keeps its answers). */
const HTML_MIME: readonly string[] = ['text/html', 'application/xhtml+xml'];

export function buildDocument(src: DocumentSource, o: DocumentOptions): SearchDocument {
  const u = new URL(src.record.url);
  // The directories of the path: "/news/2024/a.html" → news, 2024.
  const dirs = u.pathname.split('/').slice(1, -1).filter((d) => d !== '');
  const port = u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
  const isHtml = mimeMatches(src.mime, o.htmlMime ?? HTML_MIME);
  const isText = isHtml || src.mime.startsWith('text/') || /[+/](xml|json)$/.test(src.mime);
  const L = o.limits ?? EXTRACTION_LIMITS;
  let fields: Partial<HtmlFields> = {};
  let text: string | undefined;
  if (isHtml) {
    fields = htmlFields(decodeText(src.body, src.charset), src.record.url, o.allLinks ? (o.maxLinks ?? 1000) : L.indexedLinks, L);
    text = fields.body;
  } else if (isText) {
    text = decodeText(src.body, src.charset);
  }
  return {
    id: documentId(src.record.url),
    url: src.record.url,
    url_scheme: u.protocol.slice(0, -1),
    url_host: u.hostname,
    url_port: port,
    url_path: u.pathname,
    ...(dirs[0] !== undefined ? { url_path_dir1: dirs[0] } : {}),
    ...(dirs[1] !== undefined ? { url_path_dir2: dirs[1] } : {}),
    ...(dirs[2] !== undefined ? { url_path_dir3: dirs[2] } : {}),
    ...(fields.title !== undefined ? { title: cutUtf8(fields.title, L.titleBytes) } : {}),
    ...(text !== undefined ? { body_content: cutUtf8(text, L.bodyBytes) } : { body_base64: Buffer.from(src.body).toString('base64') }),
    ...(fields.description !== undefined ? { meta_description: cutUtf8(squash(fields.description), L.descriptionBytes) } : {}),
    ...(fields.keywords !== undefined ? { meta_keywords: cutUtf8(squash(fields.keywords), L.keywordsBytes) } : {}),
    ...(isHtml ? { headings: fields.headings ?? [], links: fields.links ?? [] } : {}),
    ...(src.record.checksum !== undefined ? { content_hash: src.record.checksum } : {}),
    last_crawled_at: new Date(src.record.lastCrawledMs).toISOString(),
    collection: o.collection,
    crawl_collection: o.crawlCollection,
    ...(src.record.parent !== undefined ? { parent_url: src.record.parent } : {}),
    ...(src.record.httpStatus !== undefined ? { http_status: src.record.httpStatus } : {}),
    content_type: src.mime,
    content_length: src.body.length,
  };
}
