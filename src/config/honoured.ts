/**
 * What a configuration asks for that this version does not do: the
 * warnings `config validate`, `trawl crawl` and the daemon (CollectionAdd,
 * start-up) give, all from `honouredWarnings`.
 *
 *   CollectionConfig ─► walk the registry over what the user wrote
 *        root (collection, subdomains.<sub>)   paths   "proxy", "subdomains.news.use_javascript"
 *        nodes (<Node> overrides)              paths   "@node:n1.proxy" (location only)
 *     attrib set to a non-default value:  not              → warning
 *                                         partly           → warning (only for `values`, when given)
 *     section marked `not` and not empty:                  → one warning for the section
 *
 * Only values the user wrote count: a default never warns, so a parameter
 * whose default is what trawl does (log.site text, for one) stays quiet.
 */

import type { Diagnostic } from './diagnostics.ts';
import { locationOf, sameValue, type CollectionConfig, type SectionNode } from './model.ts';
import { COLLECTION } from './registry.ts';
import { maskValue } from './secrets.ts';
import type { AttribDef, Honoured, ParamValue, SectionDef } from './schema.ts';

/** What a warning says after the parameter: what is missing. */
export function honouredNote(h: Honoured): string | undefined {
  if (h === 'full') return undefined;
  if (h === 'not') return 'is not honoured: this version reads and checks it, then ignores it';
  return `is only partly honoured: ${h.partly}`;
}

function attribIgnored(def: AttribDef, value: ParamValue, defaultValue: ParamValue | undefined): boolean {
  const h = def.honoured;
  if (h === 'full') return false;
  if (defaultValue !== undefined && sameValue(value, defaultValue)) return false;
  if (h === 'not' || h.values === undefined) return true;
  const members = Array.isArray(value) ? value : [String(value)];
  // A credentials value (user:password:realm:scheme) is ignored for its scheme.
  if (def.secret === 'credentials') return members.some((m) => h.values!.includes(m.split(':')[3]?.trim().toLowerCase() ?? ''));
  return members.some((m) => h.values!.includes(m));
}

/** As the XML writes it (yes/no, members joined), cut short: a warning is one line. */
function showValue(v: ParamValue): string {
  const text = typeof v === 'boolean' ? (v ? 'yes' : 'no') : Array.isArray(v) ? v.join(', ') : String(v);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

function isEmpty(node: SectionNode): boolean {
  return node.attribs.size === 0 && [...node.sections.values()].every(isEmpty);
}

/**
 * Every parameter of `c` set (explicitly, to a value other than its default)
 * that this version does not fully honour, as warnings naming the parameter,
 * where it was written and what is missing. A parameter set both in the
 * collection and in a <Node> override is reported for each place.
 * `node`: absent, every <Node> override is looked at (config validate); a
 * name, only that node's (the one that crawls); null, none.
 */
export function honouredWarnings(c: CollectionConfig, node?: string | null): Diagnostic[] {
  const out: Diagnostic[] = [];
  const warn = (path: string, locPath: string, note: string, what: string): void => {
    const location = locationOf(c, locPath) ?? locationOf(c, '');
    out.push({
      severity: 'warning', code: 'TRAWL_ERR_CONFIG_NOT_HONOURED', collection: c.name, param: path,
      message: `${what} ${note}`,
      ...(location ? { location } : {}),
    });
  };
  const walk = (def: SectionDef, node: SectionNode, path: string, locPrefix: string): void => {
    for (const [name, value] of node.attribs) {
      const a = def.attribs.find((x) => x.name === name) ?? def.dynamicAttrib;
      if (a === undefined) continue;
      const fixed = a !== def.dynamicAttrib;
      const dflt = fixed ? a.default : def.defaults?.[name];
      if (!attribIgnored(a, value, dflt)) continue;
      const p = path + name;
      // Secrets (proxy passwords, credentials) are masked: warnings are printed and logged.
      warn(p, locPrefix + p, honouredNote(a.honoured)!, `${p} = ${showValue(maskValue(a, value))}`);
    }
    for (const [name, child] of node.sections) {
      const d = def.sections.find((x) => x.name === name) ?? def.dynamicSection;
      if (d === undefined) continue;
      const p = path + name;
      if (d.honoured === 'not') {
        if (!isEmpty(child) || d === def.dynamicSection) warn(p, locPrefix + p, honouredNote('not')!, `the section ${p}`);
        continue;
      }
      walk(d, child, `${p}.`, locPrefix);
    }
  };
  walk(COLLECTION, c.root, '', '');
  for (const [name, tree] of c.nodes) if (node === undefined || node === name) walk(COLLECTION, tree, '', `@node:${name}.`);
  // A sub-collection's own refresh_mode applies to its URIs (engine/refresh-modes.ts), but adaptive is the collection's alone.
  for (const [sub, tree] of c.root.sections.get('subdomains')?.sections ?? []) {
    const v = tree.attribs.get('refresh_mode');
    const own = c.root.attribs.get('refresh_mode') ?? COLLECTION.attribs.find((a) => a.name === 'refresh_mode')?.default;
    if (v === undefined || own === undefined || sameValue(v, own) || (v !== 'adaptive' && own !== 'adaptive')) continue;
    const p = `subdomains.${sub}.refresh_mode`;
    warn(p, p, `is not applied: with refresh_mode adaptive on one side, the collection's refresh_mode (${showValue(own)}) decides for the sub-collection's URIs`, `${p} = ${showValue(v)}`);
  }
  return out;
}

const SCOPE_SECTIONS = ['include_domains', 'include_uris'] as const;

/**
 * A collection with nothing that limits where it goes (no include_domains
 * or include_uris rules, no Elastic or LOCKSS crawl rules, and crawlmode
 * fwdlinks not turned off) crawls every host its links reach: one warning.
 * `trawl crawl URL` never meets this: it writes include_domains itself.
 */
export function scopeWarnings(c: CollectionConfig): Diagnostic[] {
  const r = c.root;
  const hasRules = (name: string): boolean => {
    const s = r.sections.get(name);
    return s !== undefined && !isEmpty(s);
  };
  if (SCOPE_SECTIONS.some(hasRules) || hasRules('trawl_crawl_rules') || hasRules('trawl_lockss')) return [];
  if (r.sections.get('crawlmode')?.attribs.get('fwdlinks') === false) return [];
  const location = locationOf(c, '');
  return [{
    severity: 'warning', code: 'TRAWL_ERR_CONFIG_RULE', collection: c.name, param: 'include_domains',
    message: 'the collection has no scope: without include_domains or include_uris rules it follows links to every host it meets; add an include_domains section (e.g. an attrib "suffix" with the domains to crawl) or set crawlmode fwdlinks to no',
    ...(location ? { location } : {}),
  }];
}

/** Both lists, for `config validate`. */
export function configWarnings(c: CollectionConfig): Diagnostic[] {
  return [...scopeWarnings(c), ...honouredWarnings(c)];
}
