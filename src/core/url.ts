/**
 * URL basics shared by every part of the crawler.
 *
 * A *site* is scheme + host + port (MS-FSCADM's crawl site; the Elastic
 * crawler's domain): `http://example.com:80`. The port is always explicit
 * so `http://a` and `http://a:80` are one site.
 */

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443', 'ftp:': '21' };

/** Parses an absolute URL (or one relative to `base`); undefined when it does not parse. */
export function parseUrl(raw: string, base?: string | URL): URL | undefined {
  try {
    return new URL(raw, base);
  } catch {
    return undefined;
  }
}

/**
 * The form trawl stores and compares: WHATWG-serialised (lower-case scheme
 * and host, default port dropped, percent-encoding normalised by the
 * parser) and without the fragment, which never reaches the server.
 */
export function normalizeUrl(raw: string | URL, base?: string | URL): string | undefined {
  const u = typeof raw === 'string' ? parseUrl(raw, base) : new URL(raw.href);
  if (!u) return undefined;
  // Setting hash re-serialises the URL; only do it when there is one (a hot path).
  if (u.hash !== '' || u.href.endsWith('#')) u.hash = '';
  return u.href;
}

/** `scheme://host:port` with the port always written. */
export function siteOf(url: URL | string): string {
  const u = typeof url === 'string' ? new URL(url) : url;
  const port = u.port || DEFAULT_PORTS[u.protocol] || '';
  return `${u.protocol}//${u.hostname}${port ? `:${port}` : ''}`;
}

/** The host of a site key or URL, without brackets for IPv6. */
export function hostOf(url: URL | string): string {
  const u = typeof url === 'string' ? new URL(url) : url;
  return u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
}

/**
 * The registrable part used for "same domain" decisions (fwdlinks,
 * fwdredirects, reset_level): the host without a leading `www.`. A public
 * suffix list would be more exact; for IP addresses the address itself is
 * the domain.
 */
export function domainOf(url: URL | string): string {
  const host = hostOf(url).toLowerCase();
  return host.startsWith('www.') ? host.slice(4) : host;
}

/** The path and query of a URL, as robots.txt rules and URI rules see them. */
export function pathAndQuery(url: URL): string {
  return (url.pathname || '/') + url.search;
}
