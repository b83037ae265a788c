/**
 * The STATUS of a CiteSeerX URL Status Message (docs/citeseerx.md "URL
 * Status Messages"): what a failed URI's outcome is in the fetch status
 * codes Heritrix 1.12 reported, so that a listener written for Heritrix's
 * messages reads trawl's unchanged.
 *
 *   an HTTP (or FTP-as-HTTP) error status      the status itself (401, 404, 500, …)
 *   a transport failure (its DOC skip code)    Heritrix's negative codes: -2 connect failed, -3 connection
 *                                              lost, -4 timeout, -5 runtime error, -6 host unresolvable
 *   refused before any request (URI skip code) -9998 robots.txt, -5001 blocked (address or egress rules),
 *                                              -5003 quota (max_doc), -62 prerequisite (form login),
 *                                              -5000 out of scope
 *
 * The codes Heritrix's JMSCrawlStatusProcessor never reported are left out
 * (`IGNORED_STATUS_CODES`); `statusToReport` answers undefined for them.
 */

/** The codes CiteSeerX's status processor skips (the interface document, "Crawl Status Updates"). */
export const IGNORED_STATUS_CODES: ReadonlySet<number> = new Set([-50, 1, 100, 101, 300, 301, 302, 303, 304, 307]);

/** Heritrix's fetch status codes trawl reports (FetchStatusCodes). */
export const HERITRIX_STATUS = {
  CONNECT_FAILED: -2,
  CONNECT_LOST: -3,
  TIMEOUT: -4,
  RUNTIME_EXCEPTION: -5,
  DOMAIN_PREREQUISITE_FAILURE: -6,
  OTHER_PREREQUISITE_FAILURE: -62,
  OUT_OF_SCOPE: -5000,
  BLOCKED_BY_USER: -5001,
  BLOCKED_BY_QUOTA: -5003,
  ROBOTS_PRECLUDED: -9998,
} as const;

const H = HERITRIX_STATUS;

/** A document skip code of a transport failure → Heritrix's code (docs/citeseerx.md has the table). */
const FAILURE_CODES: Readonly<Record<string, number>> = {
  co: H.CONNECT_FAILED,
  ct: H.CONNECT_FAILED,
  ti: H.TIMEOUT,
  ne: H.CONNECT_LOST,
  in: H.CONNECT_LOST,
  cu: H.CONNECT_LOST,
  en: H.CONNECT_LOST,
  he: H.CONNECT_LOST,
  eh: H.CONNECT_LOST,
  ot: H.RUNTIME_EXCEPTION,
  cr: H.RUNTIME_EXCEPTION,
};

/** A URI skip code of a URI refused before any request → Heritrix's code. */
const REFUSAL_CODES: Readonly<Record<string, number>> = {
  ro: H.ROBOTS_PRECLUDED,
  do: H.BLOCKED_BY_USER,
  rl: H.BLOCKED_BY_QUOTA,
  lf: H.OTHER_PREREQUISITE_FAILURE,
};

/** What the crawl knows of a failed URI. */
export type FailedUri =
  /** A failed fetch or an error status (the http_errors policy's last word: not a retry). */
  | { readonly kind: 'failed'; readonly httpStatus: number | undefined; readonly code: string | undefined; readonly reason: string }
  /** Refused by the egress policy before a request left. */
  | { readonly kind: 'blocked' }
  /** Turned away before any request, with its URI skip code. */
  | { readonly kind: 'refused'; readonly code: string };

/** Heritrix's status code for a failed URI. */
export function heritrixStatus(f: FailedUri): number {
  if (f.kind === 'blocked') return H.BLOCKED_BY_USER;
  if (f.kind === 'refused') return REFUSAL_CODES[f.code] ?? H.OUT_OF_SCOPE;
  if (f.httpStatus !== undefined) return f.httpStatus;
  if (f.code === 'co') {
    // A site whose robots.txt could not be requested fails its URIs with `co` and that request's reason:
    // the resolver's error, or the egress policy's refusal of its address.
    if (/refused unless|trawl_egress\.deny_ips|egress policy/.test(f.reason)) return H.BLOCKED_BY_USER;
    if (/ENOTFOUND|EAI_AGAIN|EAI_NONAME|\bDNS\b/.test(f.reason)) return H.DOMAIN_PREREQUISITE_FAILURE;
  }
  return FAILURE_CODES[f.code ?? ''] ?? H.RUNTIME_EXCEPTION;
}

/** The status a URL Status Message reports, or undefined when it is one of the codes never reported. */
export function statusToReport(f: FailedUri): number | undefined {
  const s = heritrixStatus(f);
  return IGNORED_STATUS_CODES.has(s) ? undefined : s;
}
