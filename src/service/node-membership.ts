/**
 * What a member of a multinode installation adds to the crawler service
 * (docs/multinode.md): the site routing a node's crawls obey, and the
 * cluster a site belongs to (MS-FSCCFG domain_clustering, site_clusters).
 * The installation itself (heartbeats, routes, in the database) is
 * store/postgres/installation.ts.
 */

import { getPublicSuffix } from 'tough-cookie';
import type { CollectionSettings } from '../config/registry.ts';
import type { SiteRouting } from '../engine/crawl-types.ts';
import type { Installation } from '../store/postgres/installation.ts';

/**
 * The cluster of a site: the name of the site_clusters group that lists
 * its host (MS-FSCCFG 2.2.4.27); else, with domain_clustering, its domain
 * (the public suffix and one label: www.a.example.com and b.example.com
 * are example.com; an address is its own domain); else the site itself.
 * A cluster is routed to one node as a whole.
 */
export function clusterOf(settings: CollectionSettings | undefined, site: string): string {
  if (!settings) return site;
  let host: string;
  try {
    host = new URL(site).hostname.toLowerCase();
  } catch {
    return site;
  }
  const groups = settings.siteClusters as Readonly<Record<string, readonly string[] | undefined>>;
  for (const [name, hosts] of Object.entries(groups ?? {})) {
    if (hosts?.some((h) => h.trim().toLowerCase() === host)) return `cluster:${name}`;
  }
  if (settings.domainClustering) {
    // Special-use names (.test, .example, .localhost…) count as suffixes, as the public suffix list would have them.
    const domain = /^[\d.]+$/.test(host) || host.startsWith('[') ? host : getPublicSuffix(host, { allowSpecialUseDomain: true, ignoreError: true }) ?? host;
    return `domain:${domain}`;
  }
  return site;
}

/** The routing a node's crawl of `collection` obeys (CrawlerOptions.routing). */
export function routingOf(inst: Installation, collection: string): SiteRouting {
  return {
    ownerOf: (site) => inst.ownerOf(collection, site),
    get fenced() {
      return inst.fenced;
    },
    pending: () => inst.pending(collection),
    pollMs: Math.min(1000, inst.beatMs),
  };
}

/** The operator's held sites and the sites given to this node with their delay still running, together (the later time wins). */
export function heldWithRoutes(held: ReadonlyMap<string, number>, routed: ReadonlyMap<string, number>): ReadonlyMap<string, number> {
  if (routed.size === 0) return held;
  const out = new Map(held);
  for (const [site, until] of routed) out.set(site, Math.max(until, out.get(site) ?? 0));
  return out;
}
