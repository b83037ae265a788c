/**
 * Proxies (MS-FSCCFG 2.2.3 `proxy`, `proxy_max_pending`): where a request
 * goes when its collection (or sub-collection) names proxies.
 *
 *   ProxyPool (one per fetcher)  the endpoints by host, port and user: a proxy named by the
 *                                collection and by a sub-collection is one endpoint, so its
 *                                proxy_max_pending counts every request that goes through it
 *   ProxySet                     the proxies one collection or sub-collection names; a site
 *                                goes through one of them, chosen by its host name, and the
 *                                next ones are tried when that proxy cannot be connected to
 *   ProxyEndpoint                one proxy: undici's ProxyAgent (plain HTTP through the proxy
 *                                for http URLs, CONNECT tunnels for https), Basic proxy
 *                                authentication, and the requests in flight through it
 *
 * The interceptor that sends a call through its proxy is
 * `interceptors/proxy.ts`; the egress check before it still judges the
 * target's address as trawl resolves it (docs/crawling.md, "Proxies").
 */

import { rootCertificates, type ConnectionOptions } from 'node:tls';
import { ProxyAgent } from 'undici';

/** One proxy as the configuration names it, its password already decrypted. */
export interface ProxyTarget {
  readonly host: string;
  readonly port: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
}

/**
 * TLS options for the connections to the sites, not to the proxy: the
 * client certificate (key_file, cert_file), and how the site's certificate
 * is checked (trawl_tls: CAs trusted besides the system's, and full,
 * certificate or none).
 */
export interface ClientTls {
  readonly key?: Buffer | undefined;
  readonly cert?: Buffer | undefined;
  /** PEM certificates trusted with the system's. */
  readonly ca?: readonly string[] | undefined;
  /** full: chain and host name; certificate: the chain only; none: nothing. */
  readonly verify?: 'full' | 'certificate' | 'none' | undefined;
}

/** The tls.connect options of a ClientTls (none when it is undefined). */
export function tlsConnectOptions(t: ClientTls | undefined): ConnectionOptions {
  if (!t) return {};
  return {
    ...(t.key && t.cert ? { key: t.key, cert: t.cert } : {}),
    ...(t.ca && t.ca.length > 0 ? { ca: [...rootCertificates, ...t.ca] } : {}),
    ...(t.verify === 'none' ? { rejectUnauthorized: false } : {}),
    ...(t.verify === 'certificate' ? { checkServerIdentity: () => undefined } : {}),
  };
}

export interface ProxyOptions {
  /** proxy_max_pending: requests in flight through one proxy at once. */
  readonly maxPending: number;
  readonly connectTimeoutMs: number;
  readonly tls?: ClientTls | undefined;
}

/** One proxy: its agent and the requests in flight through it. */
export class ProxyEndpoint {
  /** host:port, with the user name when there is one (never the password): what messages name it by. */
  readonly label: string;
  readonly agent: ProxyAgent;
  readonly maxPending: number;
  inFlight = 0;
  /** Calls waiting for a free place, first come first served. */
  private readonly waiting: Array<() => void> = [];

  constructor(t: ProxyTarget, o: ProxyOptions) {
    const host = t.host.includes(':') && !t.host.startsWith('[') ? `[${t.host}]` : t.host;
    this.label = `${t.username !== undefined ? `${t.username}@` : ''}${host}:${t.port}`;
    this.maxPending = o.maxPending;
    const token = t.username !== undefined ? `Basic ${Buffer.from(`${t.username}:${t.password ?? ''}`).toString('base64')}` : undefined;
    this.agent = new ProxyAgent({
      uri: `http://${host}:${t.port}`,
      ...(token !== undefined ? { token } : {}),
      // http URLs go to the proxy as absolute-form requests; https ones through a CONNECT tunnel.
      proxyTunnel: false,
      proxyTls: { timeout: o.connectTimeoutMs },
      requestTls: { timeout: o.connectTimeoutMs, ...tlsConnectOptions(o.tls) },
      keepAliveTimeout: 10_000,
      pipelining: 1,
    });
  }

  /**
   * Takes a place among the requests in flight: true at once when one is
   * free (no promise), else a promise of true once one is, or of false if
   * `signal` aborts first.
   */
  acquire(signal: AbortSignal | undefined): true | Promise<boolean> {
    if (this.inFlight < this.maxPending) {
      this.inFlight++;
      return true;
    }
    return new Promise<boolean>((resolve) => {
      if (signal?.aborted) return resolve(false);
      const granted = (): void => {
        signal?.removeEventListener('abort', aborted);
        resolve(true);
      };
      const aborted = (): void => {
        const i = this.waiting.indexOf(granted);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(false);
      };
      signal?.addEventListener('abort', aborted, { once: true });
      this.waiting.push(granted);
    });
  }

  /** Gives a place back: to the first waiting call, if any (the count stays), else to the pool. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.inFlight--;
  }

  /** Calls waiting for a place (tests, statistics). */
  get queued(): number {
    return this.waiting.length;
  }
}

/** The proxies of one collection or sub-collection. */
export class ProxySet {
  readonly endpoints: readonly ProxyEndpoint[];

  constructor(endpoints: readonly ProxyEndpoint[]) {
    if (endpoints.length === 0) throw new Error('a proxy set needs a proxy');
    this.endpoints = endpoints;
  }

  /** The index of the proxy a host's requests go through first: the same for every request of the host. */
  first(host: string): number {
    const n = this.endpoints.length;
    if (n === 1) return 0;
    // FNV-1a over the host name: stable across runs, so a site keeps its proxy.
    let h = 0x811c9dc5;
    for (let i = 0; i < host.length; i++) h = Math.imul(h ^ host.charCodeAt(i), 0x01000193);
    return (h >>> 0) % n;
  }

  /** What the set is called in messages: its proxies' labels. */
  get label(): string {
    return this.endpoints.map((e) => e.label).join(', ');
  }
}

/** The endpoints of one fetcher, shared by every set that names the same proxy. */
export class ProxyPool {
  private readonly byKey = new Map<string, ProxyEndpoint>();
  private readonly o: ProxyOptions;

  constructor(o: ProxyOptions) {
    this.o = o;
  }

  /** The set for these proxies, reusing the endpoints already made. */
  set(targets: readonly ProxyTarget[]): ProxySet {
    return new ProxySet(targets.map((t) => {
      const key = `${t.host.toLowerCase()}\0${t.port}\0${t.username ?? ''}\0${t.password ?? ''}`;
      let e = this.byKey.get(key);
      if (!e) this.byKey.set(key, (e = new ProxyEndpoint(t, this.o)));
      return e;
    }));
  }

  get size(): number {
    return this.byKey.size;
  }

  async close(): Promise<void> {
    await Promise.all([...this.byKey.values()].map((e) => e.agent.close().catch(() => e.agent.destroy())));
  }
}
