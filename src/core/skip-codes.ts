/**
 * The skip codes of MS-FSCADM 2.2.3.1 (URIs dropped before they are queued)
 * and 2.2.3.2 (documents dropped after they were downloaded). Statistics,
 * the crawl store and `trawl urltest` all speak these two-letter codes.
 */

export const URI_SKIP_CODES = {
  nf: 'No follow: tagged nofollow, or refused by the RSS settings',
  ch: 'Scheme: not in allowed_schemes',
  ur: 'URI exclusion: refused by the URI rules (include_uris/exclude_uris, exclude_exts, URL limits, recursion)',
  ro: 'Robots disallow: refused by robots.txt',
  do: 'Hostname exclusion: refused by the domain rules (include_domains/exclude_domains, fwdlinks)',
  ic: 'Cache exclusion: already queued or crawled in this cycle',
  fo: 'Out of focus: outside the focused crawl',
  de: 'Depth exceeded: beyond crawlmode DEPTH:n',
} as const;

export const DOC_SKIP_CODES = {
  he: 'Header error: an HTTP header that is not valid',
  mi: 'MIME type: not in allowed_types',
  ti: 'Timeout: the download took longer than fetch_timeout',
  tl: 'Too large: over cut_off (with truncate off) or over the decompression limit',
  hx: 'Header excluded: a header matched exclude_headers',
  en: 'Encoding: an unsupported or broken Content-Encoding',
  cu: 'Chunk decode error',
  nr: 'No redirection target: a redirect without a usable Location, or too many redirects',
  ni: 'No index: a noindex robots META tag or X-Robots-Tag',
  cs: 'Duplicate: the same content as another URI',
  fs: 'Out of focus: the document is outside the focused crawl',
  in: 'Incomplete: only part of the document arrived',
  co: 'Connect failure: no connection could be made',
  ct: 'Connect timeout',
  ne: 'Network error',
  em: 'Empty document',
  eh: 'Empty HTTP header',
  rs: 'RSS no index: a feed document that is not indexed itself',
  ot: 'Other error',
  // Not in MS-FSCADM: the set-aside rule of DESIGN.md's safety defaults.
  cr: 'Crashed twice: in flight when the crawler died twice in a row; set aside and not fetched again in this cycle',
} as const;

export type UriSkipCode = keyof typeof URI_SKIP_CODES;
/** The URI skip codes in a fixed order, for code numbers (the screened cache's refusal tags). */
export const URI_SKIP_CODE_LIST = Object.keys(URI_SKIP_CODES) as UriSkipCode[];
export type DocSkipCode = keyof typeof DOC_SKIP_CODES;
