/**
 * The skip codes of MS-FSCADM 2.2.3.1 (URIs dropped before they are queued)
 * and 2.2.3.2 (documents dropped after they were downloaded). Statistics,
 * the crawl store and `trawl urltest` all speak these two-letter codes.
 *
 *   code ──► meaning   URI_SKIP_CODES / DOC_SKIP_CODES  (what happened)
 *        └─► action    URI_SKIP_ACTIONS / DOC_SKIP_ACTIONS  (what an operator
 *                      who wanted the URI may do; `trawl codes`, the summary's legend)
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
  // Not in MS-FSCADM: the refresh-only mode of MS-FSCCFG 2.2.4.18 limits.max_doc.
  rl: 'Refresh-only limit: the collection holds limits.max_doc documents, so a URI never fetched is not fetched',
  // Not in MS-FSCADM: the form logins of MS-FSCCFG 2.2.4.31.
  lf: 'Login failed: the form login that covers the site failed, so its URIs are not fetched in this cycle',
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
  // Not in MS-FSCADM: JavaScript rendering (use_javascript).
  js: 'Render failed: the page could not be rendered (time limit, memory cap, renderer crash) twice in a row',
} as const;

export type UriSkipCode = keyof typeof URI_SKIP_CODES;

/** What a skip code means, of either table (`trawl inspect`, `trawl urltest --data`); undefined for any other code. */
export function skipMeaning(code: string | undefined): string | undefined {
  if (code === undefined) return undefined;
  if (Object.hasOwn(DOC_SKIP_CODES, code)) return DOC_SKIP_CODES[code as keyof typeof DOC_SKIP_CODES];
  return Object.hasOwn(URI_SKIP_CODES, code) ? URI_SKIP_CODES[code as keyof typeof URI_SKIP_CODES] : undefined;
}
/** The URI skip codes in a fixed order, for code numbers (the screened cache's refusal tags). */
export const URI_SKIP_CODE_LIST = Object.keys(URI_SKIP_CODES) as UriSkipCode[];
export type DocSkipCode = keyof typeof DOC_SKIP_CODES;

/** What an operator who wanted a URI refused with this code can do; one entry per code (the types require it). */
export const URI_SKIP_ACTIONS: Readonly<Record<UriSkipCode, string>> = {
  nf: 'nothing: the page asks not to follow the link (nofollow), or the rss settings refuse it',
  ch: 'add the scheme to allowed_schemes',
  ur: 'check the URI rules with `trawl urltest --explain CONFIG URL`',
  ro: 'nothing: the site asks not to be crawled there (robots.txt); `trawl urltest --explain` names the rule',
  do: 'add the host to include_domains (a URL crawl stays on the hosts of its URLs)',
  ic: 'nothing: the URI is fetched once a cycle',
  fo: 'widen the focused section',
  de: 'raise crawlmode DEPTH:n',
  rl: 'raise limits.max_doc, or delete documents: refresh-only ends below max_doc - max_doc_slack',
  lf: 'read why in logs/crawl.log (event login); check the login\'s parameters and form, or set login_failed_ignore to crawl the site anyway',
};

/** What an operator who wanted a document dropped with this code can do; one entry per code. */
export const DOC_SKIP_ACTIONS: Readonly<Record<DocSkipCode, string>> = {
  he: 'nothing on this side: the server sends a broken header',
  mi: 'add the MIME type to allowed_types',
  ti: 'raise fetch_timeout, or look at the server',
  tl: 'raise cut_off (or set truncate), or the decompression limit',
  hx: 'change exclude_headers',
  en: 'nothing on this side: the server sends a broken or unsupported Content-Encoding',
  cu: 'nothing on this side: the server sends broken chunked encoding',
  nr: 'check the redirect with curl -I; raise max_redirects if the chain is long',
  ni: 'nothing: the page asks not to be indexed',
  cs: 'nothing: the same content is stored under another URI',
  fs: 'widen the focused section',
  in: 'look at the server or the network; the next cycle fetches it again',
  co: 'check that the host is up and reachable; an egress refusal (loopback, private networks) names the option that allows it (--allow-loopback, --allow-private-networks)',
  ct: 'check that the host is up and reachable, or raise fetch_timeout',
  ne: 'look at the network; the next cycle fetches it again',
  em: 'nothing, usually: the server sent an empty body',
  eh: 'nothing on this side: the server sent no headers',
  rs: 'nothing: the feed is read for its links (rss settings)',
  ot: 'read the reason in logs/crawl.log (an egress refusal names the option that allows it: --allow-loopback, --allow-private-networks)',
  cr: 'the page crashed trawl twice: run `trawl urltest --data DIR URL`, and report it with the URL',
  js: 'read why in logs/crawl.log (event skip); raise trawl_render page_timeout or page_memory, or turn use_javascript off for the sub-collection',
};

/** The meaning of a URI or document skip code and what to do about it; undefined for a code not in either table. */
export function describeSkipCode(code: string): { readonly kind: 'URI' | 'document'; readonly meaning: string; readonly action: string } | undefined {
  if (Object.hasOwn(URI_SKIP_CODES, code)) return { kind: 'URI', meaning: URI_SKIP_CODES[code as UriSkipCode], action: URI_SKIP_ACTIONS[code as UriSkipCode] };
  if (Object.hasOwn(DOC_SKIP_CODES, code)) return { kind: 'document', meaning: DOC_SKIP_CODES[code as DocSkipCode], action: DOC_SKIP_ACTIONS[code as DocSkipCode] };
  return undefined;
}
