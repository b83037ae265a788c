/**
 * The CiteSeerX `CrawlData` sidecar (CiteSeerX Crawler Interface, "Crawl
 * Data"): the XML file beside each repository file, with the root element
 * `CrawlData` and the children `crawlDate`, `url`, `parentUrl` (optional),
 * `contentType` (optional) and `SHA1`, in the spec's order.
 */

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A time as `java.util.Date.toString()` prints it in GMT: `Wed Aug 22 19:54:32 GMT 2007`, which `new Date(String)` parses. */
export function javaDateString(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} GMT ${d.getUTCFullYear()}`;
}

export interface CrawlData {
  readonly crawlDateMs: number;
  readonly url: string;
  readonly parentUrl?: string | undefined;
  readonly contentType?: string | undefined;
  /** Lower-case hex SHA-1 of the file. */
  readonly sha1: string;
}

/** Text as XML character data: the five special characters escaped, and characters XML 1.0 forbids dropped. */
function xmlText(s: string): string {
  return s
    .replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

export function crawlDataXml(d: CrawlData): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<CrawlData>',
    `  <crawlDate>${javaDateString(d.crawlDateMs)}</crawlDate>`,
    `  <url>${xmlText(d.url)}</url>`,
  ];
  if (d.parentUrl !== undefined) lines.push(`  <parentUrl>${xmlText(d.parentUrl)}</parentUrl>`);
  if (d.contentType !== undefined && d.contentType !== '') lines.push(`  <contentType>${xmlText(d.contentType)}</contentType>`);
  lines.push(`  <SHA1>${d.sha1}</SHA1>`, '</CrawlData>', '');
  return lines.join('\n');
}

/** The `url` of a sidecar this sink wrote (to tell whose file a mirror path holds), or undefined. */
export function crawlDataUrl(xml: string): string | undefined {
  const m = /<url>([^<]*)<\/url>/.exec(xml);
  if (!m) return undefined;
  return m[1]!.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e]!);
}

/** The Content-Type header's value in a stored header block ("HTTP/1.1 200 OK\r\nName: value\r\n…"). */
export function contentTypeHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return /^content-type:[ \t]*([^\r\n]*?)[ \t]*$/im.exec(header)?.[1];
}
