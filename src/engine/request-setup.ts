/**
 * What a cycle's requests carry besides the URL, made once per cycle from
 * the settings (nothing here runs per page when its feature is off):
 *
 *   proxy, proxy_max_pending   ─► proxyRoutes: a ProxySet per sub-collection (passwords decrypted)
 *   key_file, cert_file        ─► the client certificate (config/client-cert.ts), read and checked
 *   post_payload               ─► postPayloads: exact URIs in a Map, prefixes in a list
 *   trawl_http.send_referer    ─► refererFor: the parent URL as a Referer value
 */

import type { CollectionSettings } from '../config/registry.ts';
import { revealSecret, type SecretKey } from '../config/secrets.ts';
import { parseProxy } from '../config/values.ts';
import { TrawlError } from '../core/errors.ts';
import type { HttpFetcher, ProxySet, ProxyTarget } from '../fetch/http-fetcher.ts';
import type { Runtime } from './runtime.ts';

/** An !ENC! value decrypted; a failure names the parameter it is in. */
function reveal(param: string, value: string, key: () => SecretKey): string {
  try {
    return revealSecret(value, key);
  } catch (err) {
    if (err instanceof TrawlError) throw new TrawlError(err.code, `${param}: ${err.message}`, { cause: err });
    throw err;
  }
}

/** The proxies a list names, passwords decrypted (a value the validator let through). */
export function proxyTargets(list: readonly string[], key: () => SecretKey): ProxyTarget[] {
  return list.map((text) => {
    const p = parseProxy(text.trim());
    if (!p.ok) throw new TrawlError('TRAWL_ERR_CONFIG_VALUE', `proxy ${JSON.stringify(text.replace(/:[^:@]*@/, ':********@'))} is not ${p.expected}`);
    const { host, port, username } = p.value;
    const password = p.value.password !== undefined ? reveal('proxy', p.value.password, key) : undefined;
    return { host: host.startsWith('[') ? host.slice(1, -1) : host, port, username, password };
  });
}

/** Whether the collection or any sub-collection names a proxy (then the fetcher is made with proxies). */
export function usesProxies(rt: Runtime): boolean {
  return (rt.settings.proxy ?? []).length > 0 || rt.subs.some((s) => (s.settings.proxy ?? []).length > 0);
}

/**
 * The proxies of each sub-collection (undefined: the collection's), as
 * the fetcher's sets: a sub-collection that sets no proxy has the
 * collection's, one that names the same proxies shares their endpoints.
 */
export function proxyRoutes(rt: Runtime, fetcher: HttpFetcher, key: () => SecretKey): (sub: string | undefined) => ProxySet | undefined {
  const of = (s: CollectionSettings): ProxySet | undefined => ((s.proxy ?? []).length > 0 ? fetcher.proxySet(proxyTargets(s.proxy!, key)) : undefined);
  const bySub = new Map<string | undefined, ProxySet | undefined>([[undefined, of(rt.settings)]]);
  for (const sub of rt.subs) bySub.set(sub.name, of(sub.settings));
  return (sub) => (bySub.has(sub) ? bySub.get(sub) : bySub.get(undefined));
}

/**
 * MS-FSCCFG 2.2.4.29: the payload POSTed to a URI, by exact URI or by a
 * "prefix:" name; undefined for a GET. An exact name is compared in the
 * form URIs are queued in (WHATWG href), so "http://Example.com" matches
 * the queued "http://example.com/". Undefined when the section is empty:
 * no per-page work.
 */
export function postPayloads(table: Readonly<Record<string, string>>, key: () => SecretKey): ((url: string) => string | undefined) | undefined {
  return payloadMatcher(table, (value) => reveal('post_payload', value, key));
}

/** The matcher of post_payload's names, each name's value made by `value` once. */
function payloadMatcher<T>(table: Readonly<Record<string, string>>, value: (v: string) => T): ((url: string) => T | undefined) | undefined {
  const entries = Object.entries(table);
  if (entries.length === 0) return undefined;
  const exact = new Map<string, T>();
  const prefixes: Array<[string, T]> = [];
  for (const [name, v] of entries) {
    const payload = value(v);
    if (name.startsWith('prefix:')) {
      prefixes.push([name.slice('prefix:'.length).trim(), payload]);
      continue;
    }
    exact.set(name, payload);
    try {
      exact.set(new URL(name).href, payload);
    } catch {
      // compared as written
    }
  }
  // The longest prefix first, so that a narrower one wins over a wider one.
  prefixes.sort((a, b) => b[0].length - a[0].length);
  return (url) => {
    const e = exact.get(url);
    if (e !== undefined) return e;
    for (const [prefix, payload] of prefixes) if (url.startsWith(prefix)) return payload;
    return undefined;
  };
}

/** How a URI would be requested, for `trawl urltest --explain`: names only, never a secret. */
export interface RequestPlan {
  /** The sub-collection whose settings apply. */
  readonly subcollection: string | undefined;
  /** The proxies it would go through ("user@host:port", no password); empty: straight to the site. */
  readonly proxies: readonly string[];
  /** POST with post_payload (the name that matched is not a secret; the payload is). */
  readonly method: 'GET' | 'POST';
  /** The client certificate's files, when the collection has one. */
  readonly clientCert: { readonly keyFile: string; readonly certFile: string } | undefined;
  /** trawl_http send_referer. */
  readonly referer: boolean;
}

export function requestPlan(rt: Runtime, url: URL): RequestPlan {
  const sub = rt.subOf(url);
  const s = rt.settingsFor(sub);
  const proxies = (s.proxy ?? []).map((text) => {
    const p = parseProxy(text.trim());
    if (!p.ok) return '(unreadable proxy)';
    return `${p.value.username !== undefined ? `${p.value.username}@` : ''}${p.value.host}:${p.value.port}`;
  });
  const post = payloadMatcher(rt.settings.postPayload, () => true)?.(url.href) === true;
  const { keyFile, certFile } = rt.settings;
  return {
    subcollection: sub, proxies, method: post ? 'POST' : 'GET',
    clientCert: keyFile !== undefined && certFile !== undefined ? { keyFile, certFile } : undefined,
    referer: rt.settings.http.sendReferer,
  };
}

/**
 * The Referer for a request to `target` found on `parent` (RFC 9110
 * 10.1.3): the parent without user name, password and fragment, and none
 * from an https page to an http URI, nor for a start URI (no parent).
 */
export function refererFor(parent: string | undefined, target: URL): string | undefined {
  if (parent === undefined) return undefined;
  if (target.protocol === 'http:' && parent.startsWith('https:')) return undefined;
  if (!parent.includes('@') && !parent.includes('#')) return parent;
  try {
    const u = new URL(parent);
    u.username = '';
    u.password = '';
    u.hash = '';
    return u.href;
  } catch {
    return undefined;
  }
}
