/**
 * The configuration model: what a user wrote, normalised, before defaults.
 *
 *   ConfigDocument
 *     └─ CollectionConfig  (one per DomainSpecification)
 *          ├─ root: SectionNode    the collection's own values; <SubDomain>
 *          │                       elements live in root.sections 'subdomains',
 *          │                       <Login> elements in 'logins' (MS-FSCCFG 2.2.4.33, 2.2.4.31)
 *          └─ nodes: name → SectionNode   <Node> overrides (MS-FSCCFG 2.2.7)
 *
 *   SectionNode = { attribs: name → value, sections: name → SectionNode }
 *
 * Names are canonical (aliases are resolved by the reader) and values are
 * typed (boolean, number, string, string[]). Only what the user set is
 * here: defaults are applied by `effective.ts`, so a merge or a write-back
 * never confuses "set to the default" with "not set".
 */

import type { ParamValue } from './schema.ts';
import type { SourceLocation } from '../core/errors.ts';

export interface SectionNode {
  readonly attribs: Map<string, ParamValue>;
  readonly sections: Map<string, SectionNode>;
}

export interface CollectionConfig {
  readonly name: string;
  readonly root: SectionNode;
  readonly nodes: Map<string, SectionNode>;
}

export interface ConfigDocument {
  readonly collections: CollectionConfig[];
}

export function emptySection(): SectionNode {
  return { attribs: new Map(), sections: new Map() };
}

export function emptyCollection(name: string): CollectionConfig {
  return { name, root: emptySection(), nodes: new Map() };
}

/** The child section `name`, created when missing. */
export function childSection(node: SectionNode, name: string): SectionNode {
  let child = node.sections.get(name);
  if (!child) {
    child = emptySection();
    node.sections.set(name, child);
  }
  return child;
}

/** Follows a dotted path of section names; undefined when any is missing. */
export function sectionAt(node: SectionNode, path: readonly string[]): SectionNode | undefined {
  let cur: SectionNode | undefined = node;
  for (const p of path) cur = cur?.sections.get(p);
  return cur;
}

export function cloneSection(node: SectionNode): SectionNode {
  return {
    attribs: new Map([...node.attribs].map(([k, v]) => [k, Array.isArray(v) ? [...v] : v] as [string, ParamValue])),
    sections: new Map([...node.sections].map(([k, v]) => [k, cloneSection(v)])),
  };
}

export function cloneCollection(c: CollectionConfig, name = c.name): CollectionConfig {
  return { name, root: cloneSection(c.root), nodes: new Map([...c.nodes].map(([k, v]) => [k, cloneSection(v)])) };
}

export function sameValue(a: ParamValue | undefined, b: ParamValue | undefined): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => x === b[i]);
  return a === b;
}

/** Where each value was written, by dotted path; kept beside the model, not in it. */
const LOCATIONS = new WeakMap<CollectionConfig, Map<string, SourceLocation>>();

export function setLocations(c: CollectionConfig, locs: Map<string, SourceLocation>): void {
  LOCATIONS.set(c, locs);
}

/** The location of a dotted path such as `subdomains.news.refresh`, if the reader recorded one. */
export function locationOf(c: CollectionConfig, path: string): SourceLocation | undefined {
  return LOCATIONS.get(c)?.get(path);
}

/** Plain JSON form of a section, for `--format json` and debugging. */
export function sectionToJson(node: SectionNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of node.attribs) out[k] = v;
  for (const [k, v] of node.sections) out[k] = sectionToJson(v);
  return out;
}
