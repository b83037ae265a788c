/**
 * The effective configuration: defaults, then the collection's values, then
 * the <Node> override for this node, then (for a sub-collection) its own
 * values. The result is the typed `CollectionSettings` the engine reads.
 *
 *   registry defaults ◄── collection root ◄── <Node name=this-node>
 *                                 ▲
 *        sub-collection values ───┘  (scope rules: the sub-collection's own only)
 */

import { TrawlError } from '../core/errors.ts';
import { mergeSections } from './merge.ts';
import { cloneSection, emptySection, type CollectionConfig, type SectionNode } from './model.ts';
import { COLLECTION, COLLECTION_BASE, type CollectionSettings } from './registry.ts';
import type { ParamValue, SectionDef } from './schema.ts';

/** The four scope sections of MS-FSCCFG 2.2.4.1–4. */
export const SCOPE_SECTIONS = ['include_domains', 'exclude_domains', 'include_uris', 'exclude_uris'] as const;

/** Registry defaults as a tree, for writing a complete configuration. */
export function defaultsTree(def: SectionDef = COLLECTION): SectionNode {
  const out = emptySection();
  for (const a of def.attribs) if (a.default !== undefined) out.attribs.set(a.name, Array.isArray(a.default) ? [...a.default] : a.default);
  for (const [k, v] of Object.entries(def.defaults ?? {})) out.attribs.set(k, v);
  for (const s of def.sections) {
    const child = defaultsTree(s);
    if (child.attribs.size > 0 || child.sections.size > 0) out.sections.set(s.name, child);
  }
  return out;
}

/** Converts a tree to the typed view of `def`, applying the registry defaults. */
export function toSettings(def: SectionDef, node: SectionNode | undefined): unknown {
  const out: Record<string, unknown> = {};
  const fixedA = new Set(def.attribs.map((a) => a.name));
  const fixedS = new Set(def.sections.map((s) => s.name));
  for (const a of def.attribs) {
    const v = node?.attribs.get(a.name) ?? a.default;
    out[a.key] = Array.isArray(v) ? Object.freeze([...v]) : v;
  }
  for (const s of def.sections) out[s.key] = toSettings(s, node?.sections.get(s.name));
  let dynamic: Record<string, unknown> | undefined;
  if (def.dynamicAttrib) {
    dynamic = { ...def.defaults };
    for (const [k, v] of node?.attribs ?? []) if (!fixedA.has(k)) dynamic[k] = v as ParamValue;
  }
  if (def.dynamicSection) {
    dynamic = {};
    for (const [k, v] of node?.sections ?? []) if (!fixedS.has(k)) dynamic[k] = toSettings(def.dynamicSection, v);
  }
  if (dynamic !== undefined) {
    if (def.dynamicAs !== undefined) out[def.dynamicAs] = Object.freeze(dynamic);
    else if (def.attribs.length === 0 && def.sections.length === 0) return Object.freeze(dynamic);
  }
  return Object.freeze(out);
}

export interface ResolveOptions {
  /** The node scheduler whose <Node> override applies. */
  readonly node?: string;
  /** The sub-collection whose settings are wanted. */
  readonly subcollection?: string;
}

/** The collection's tree with the node's override merged in. */
export function effectiveTree(c: CollectionConfig, node?: string): SectionNode {
  if (node === undefined) return c.root;
  const over = c.nodes.get(node);
  return over ? mergeSections(c.root, over) : c.root;
}

/** Names of the sub-collections, after the node override. */
export function subcollectionNames(c: CollectionConfig, node?: string): string[] {
  return [...(effectiveTree(c, node).sections.get('subdomains')?.sections.keys() ?? [])];
}

/**
 * The typed settings of a collection, or of one of its sub-collections,
 * as seen by one node. A sub-collection inherits every value of its
 * collection except the four scope sections, which are its own
 * membership rules.
 */
export function resolveSettings(c: CollectionConfig, opts: ResolveOptions = {}): CollectionSettings {
  const tree = effectiveTree(c, opts.node);
  if (opts.subcollection === undefined) return toSettings(COLLECTION_BASE, tree) as CollectionSettings;
  const sub = tree.sections.get('subdomains')?.sections.get(opts.subcollection);
  if (!sub) {
    throw new TrawlError('TRAWL_ERR_CONFIG_NOT_FOUND', `collection ${JSON.stringify(c.name)} has no sub-collection ${JSON.stringify(opts.subcollection)}`);
  }
  const inherited = cloneSection(tree);
  for (const s of [...SCOPE_SECTIONS, 'subdomains']) inherited.sections.delete(s);
  return toSettings(COLLECTION_BASE, mergeSections(inherited, sub)) as CollectionSettings;
}
