/**
 * A collection's content destinations (MS-FSCCFG 2.2.4.9) and the
 * MS-FSCADM 2.2.2.3 `contentdest` strings that name them.
 *
 * Without a `feeding` section a collection has one destination, `default`,
 * whose content collection is the crawl collection's own name. Feeding is
 * on only when the collection has sinks (`trawl_sinks`): with none there is
 * nowhere to send documents, and nothing is queued for sending.
 */

import { trawlError } from '../core/errors.ts';
import type { CollectionSettings } from '../config/registry.ts';

export const DEFAULT_DESTINATION = 'default';

/** Destination name → content collection. */
export function destinationsOf(s: CollectionSettings, crawlCollection: string): Map<string, string> {
  const named = Object.entries(s.feeding);
  if (named.length === 0) return new Map([[DEFAULT_DESTINATION, crawlCollection]]);
  return new Map(named.map(([name, d]) => [name, d.collection ?? name]));
}

/** Whether a destination starts paused: its own `paused`, or pp `ds_paused` for all of them. */
export function pausedByConfig(s: CollectionSettings, destination: string): boolean {
  return s.pp.dsPaused || (s.feeding[destination]?.paused ?? false);
}

/**
 * The destinations a contentdest names: "" is the default configuration
 * (every destination), a name is that destination, and
 * "default:<content collection>" every destination feeding that content
 * collection.
 */
export function resolveContentdest(destinations: ReadonlyMap<string, string>, contentdest: string, crawlCollection: string): string[] {
  const known = [...destinations.keys()];
  if (contentdest === '') return known;
  if (destinations.has(contentdest)) return [contentdest];
  if (contentdest.startsWith('default:')) {
    const cc = contentdest.slice('default:'.length);
    const hits = known.filter((d) => destinations.get(d) === cc);
    if (hits.length > 0) return hits;
    throw trawlError('CONTENTDEST_NO_FEEDER', { name: crawlCollection, contentCollection: cc, fed: [...new Set(destinations.values())].join(', ') });
  }
  throw trawlError('CONTENTDEST_UNKNOWN', { name: crawlCollection, contentdest, known: known.join(', ') });
}
