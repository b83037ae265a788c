/**
 * Writes the configuration model back to MS-FSCCFG XML.
 *
 * Modes:
 *   explicit  what the user set, exactly (the default; parse(write(x)) = x)
 *   complete  every parameter with a default, overridden by what was set
 *   changed   only values that differ from the defaults
 *
 * The output is in the registry's order, with 4-space indentation as in the
 * spec's examples. <SubDomain> and <Login> elements are written as the
 * equivalent `subdomains` and `logins` sections (MS-FSCCFG 2.2.4.33 says
 * the crawler adds SubDomain elements to that section). With `redact`,
 * clear-text secrets are masked; `!ENC!` values are kept.
 */

import { defaultsTree } from './effective.ts';
import { mergeSections } from './merge.ts';
import { emptySection, sameValue, type CollectionConfig, type ConfigDocument, type SectionNode } from './model.ts';
import { COLLECTION, findAttrib, findSection } from './registry.ts';
import type { AttribDef, ParamValue, SectionDef } from './schema.ts';
import { maskValue } from './secrets.ts';

export type WriteMode = 'explicit' | 'complete' | 'changed';

export interface WriteOptions {
  readonly mode?: WriteMode;
  readonly redact?: boolean;
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function formatScalar(def: AttribDef, value: ParamValue): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') return def.type === 'real' && Number.isInteger(value) ? value.toFixed(1) : String(value);
  return String(value);
}

/** The tree without the values that equal their defaults. */
function withoutDefaults(node: SectionNode, defaults: SectionNode | undefined): SectionNode {
  const out = emptySection();
  for (const [k, v] of node.attribs) if (!sameValue(v, defaults?.attribs.get(k))) out.attribs.set(k, v);
  for (const [k, v] of node.sections) {
    const child = withoutDefaults(v, defaults?.sections.get(k));
    if (child.attribs.size > 0 || child.sections.size > 0) out.sections.set(k, child);
  }
  return out;
}

function childDefs(def: SectionDef, name: string, kind: 'attrib' | 'section'): AttribDef | SectionDef | undefined {
  if (kind === 'attrib') return findAttrib(def, name) ?? def.dynamicAttrib;
  return findSection(def, name) ?? def.dynamicSection;
}

function writeSectionBody(lines: string[], def: SectionDef, node: SectionNode, indent: string, opts: WriteOptions): void {
  const fixedA = def.attribs.filter((a) => node.attribs.has(a.name)).map((a) => a.name);
  const dynA = [...node.attribs.keys()].filter((k) => !findAttrib(def, k));
  for (const name of [...fixedA, ...dynA]) {
    const adef = childDefs(def, name, 'attrib') as AttribDef;
    let value = node.attribs.get(name)!;
    if (opts.redact) value = maskValue(adef, value);
    const open = `${indent}<attrib name="${escapeXml(name)}" type="${adef.type}">`;
    if (Array.isArray(value)) {
      if (value.length === 0) {
        lines.push(`${indent}<attrib name="${escapeXml(name)}" type="list-string"/>`);
        continue;
      }
      lines.push(open);
      for (const m of value) lines.push(`${indent}    <member> ${escapeXml(m)} </member>`);
      lines.push(`${indent}</attrib>`);
    } else {
      lines.push(`${open} ${escapeXml(formatScalar(adef, value))} </attrib>`);
    }
  }
  const fixedS = def.sections.filter((s) => node.sections.has(s.name)).map((s) => s.name);
  const dynS = [...node.sections.keys()].filter((k) => !findSection(def, k));
  for (const name of [...fixedS, ...dynS]) {
    const sdef = childDefs(def, name, 'section') as SectionDef;
    const child = node.sections.get(name)!;
    if (child.attribs.size === 0 && child.sections.size === 0) {
      lines.push(`${indent}<section name="${escapeXml(name)}"/>`);
      continue;
    }
    lines.push(`${indent}<section name="${escapeXml(name)}">`);
    writeSectionBody(lines, sdef, child, `${indent}    `, opts);
    lines.push(`${indent}</section>`);
  }
}

function treeFor(c: CollectionConfig, mode: WriteMode): SectionNode {
  if (mode === 'complete') return mergeSections(defaultsTree(), c.root);
  if (mode === 'changed') return withoutDefaults(c.root, defaultsTree());
  return c.root;
}

export function writeCollectionXml(c: CollectionConfig, opts: WriteOptions = {}, indent = '    '): string[] {
  const mode = opts.mode ?? 'explicit';
  const lines = [`${indent}<DomainSpecification name="${escapeXml(c.name)}">`];
  writeSectionBody(lines, COLLECTION, treeFor(c, mode), `${indent}    `, opts);
  for (const [name, node] of c.nodes) {
    lines.push(`${indent}    <Node name="${escapeXml(name)}">`);
    writeSectionBody(lines, COLLECTION, node, `${indent}        `, opts);
    lines.push(`${indent}    </Node>`);
  }
  lines.push(`${indent}</DomainSpecification>`);
  return lines;
}

export function writeConfigXml(doc: ConfigDocument | CollectionConfig, opts: WriteOptions = {}): string {
  const collections = 'collections' in doc ? doc.collections : [doc];
  const lines = ['<?xml version="1.0" encoding="utf-8"?>', '<CrawlerConfig>'];
  for (const c of collections) lines.push(...writeCollectionXml(c, opts));
  lines.push('</CrawlerConfig>', '');
  return lines.join('\n');
}
