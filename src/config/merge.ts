/**
 * Merging configurations, as MS-FSCADM 2.2.9.3 CollectionAdd asks: "all
 * settings that are specified in both configurations MUST be overridden by
 * the new configuration", and everything else is kept.
 *
 *   base:    delay=60  storage{compress=yes, clusters=8}  start_uris=[a, b]
 *   partial: delay=10  storage{clusters=4}                start_uris=[c]
 *   merged:  delay=10  storage{compress=yes, clusters=4}  start_uris=[c]
 *
 * A list is one setting: the new list replaces the old one (appending would
 * make it impossible to remove a start URI). Sections merge key by key,
 * recursively; so do sub-collections, logins, feeding destinations and
 * <Node> overrides.
 */

import { cloneSection, type CollectionConfig, type SectionNode } from './model.ts';

/** A new section: `base` overridden by `over`. Neither input is changed. */
export function mergeSections(base: SectionNode, over: SectionNode): SectionNode {
  const out = cloneSection(base);
  for (const [k, v] of over.attribs) out.attribs.set(k, Array.isArray(v) ? [...v] : v);
  for (const [k, v] of over.sections) {
    const mine = out.sections.get(k);
    out.sections.set(k, mine ? mergeSections(mine, v) : cloneSection(v));
  }
  return out;
}

/** CollectionAdd's merge of a partial configuration into an existing collection. */
export function mergeCollections(base: CollectionConfig, partial: CollectionConfig): CollectionConfig {
  const nodes = new Map([...base.nodes].map(([k, v]) => [k, cloneSection(v)]));
  for (const [k, v] of partial.nodes) {
    const mine = nodes.get(k);
    nodes.set(k, mine ? mergeSections(mine, v) : cloneSection(v));
  }
  return { name: base.name, root: mergeSections(base.root, partial.root), nodes };
}
