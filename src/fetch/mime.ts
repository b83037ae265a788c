/**
 * MIME types: from Content-Type, or sniffed from the first bytes when the
 * header is missing or `force_mimetype_detection` is on, and matched
 * against MS-FSCCFG patterns where `*` stands for a whole field.
 */

/** `text/html; charset=utf-8` → `text/html`. */
export function mimeFromHeader(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const m = /^\s*([^;\s]+\/[^;\s]+)/.exec(contentType);
  return m ? m[1]!.toLowerCase() : undefined;
}

function startsWith(body: Uint8Array, sig: readonly number[]): boolean {
  return sig.every((b, i) => body[i] === b);
}

/** A small content sniffer for the types a crawler meets most. */
export function sniffMime(body: Uint8Array): string {
  if (startsWith(body, [0x25, 0x50, 0x44, 0x46, 0x2d])) return 'application/pdf';
  if (startsWith(body, [0x89, 0x50, 0x4e, 0x47])) return 'image/png';
  if (startsWith(body, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(body, [0x47, 0x49, 0x46, 0x38])) return 'image/gif';
  if (startsWith(body, [0x1f, 0x8b])) return 'application/gzip';
  if (startsWith(body, [0x50, 0x4b, 0x03, 0x04])) return 'application/zip';
  if (startsWith(body, [0xd0, 0xcf, 0x11, 0xe0])) return 'application/msword';
  const head = Buffer.from(body.subarray(0, 512)).toString('latin1').replace(/^\uFEFF|^\xEF\xBB\xBF/, '').trimStart().toLowerCase();
  if (/^<!doctype html|^<html|^<head|^<body|^<title|^<!--/.test(head)) return 'text/html';
  if (/^<\?xml/.test(head)) {
    if (/<rss|<feed|<rdf:rdf/.test(head)) return 'application/rss+xml';
    if (/<urlset|<sitemapindex/.test(head)) return 'application/xml';
    return 'application/xml';
  }
  let binary = 0;
  const n = Math.min(body.length, 512);
  for (let i = 0; i < n; i++) {
    const b = body[i]!;
    if (b < 9 || (b > 13 && b < 32)) binary++;
  }
  return binary > n / 10 ? 'application/octet-stream' : 'text/plain';
}

export function detectMime(contentType: string | undefined, body: Uint8Array, force: boolean): string {
  const declared = mimeFromHeader(contentType);
  if (declared && !force) return declared;
  return body.length > 0 ? sniffMime(body) : (declared ?? 'application/octet-stream');
}

function matchesAny(mime: string, patterns: readonly string[]): boolean {
  const [type, sub] = mime.toLowerCase().split('/');
  return patterns.some((p) => {
    const [pt, ps] = p.toLowerCase().split('/');
    return (pt === '*' || pt === type) && (ps === '*' || ps === sub);
  });
}

/**
 * The answers for each pattern list, by MIME type. The crawler asks twice a
 * page with the same two lists and a handful of types, and splitting and
 * lower-casing every pattern each time shows in a profile of the bench
 * crawl (bench/README.md, *What changed*, a8a12c1). A list's answers are kept only while it is in use (a
 * WeakMap), and at most MEMO_TYPES types per list, since a type is
 * whatever the server sent.
 */
const memo = new WeakMap<readonly string[], Map<string, boolean>>();
const MEMO_TYPES = 256;

/** `text/*` and `*\/*` match whole fields (MS-FSCCFG allowed_types, uri_search_mime). */
export function mimeMatches(mime: string, patterns: readonly string[]): boolean {
  let answers = memo.get(patterns);
  if (!answers) memo.set(patterns, (answers = new Map()));
  let hit = answers.get(mime);
  if (hit === undefined) {
    hit = matchesAny(mime, patterns);
    if (answers.size < MEMO_TYPES) answers.set(mime, hit);
  }
  return hit;
}
