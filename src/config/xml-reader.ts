/**
 * Reads MS-FSCCFG XML into the configuration model, checking every element
 * against the parameter registry and collecting every problem found.
 *
 *   bytes ─► readXmlTree (saxes: UTF-8, XML 1.0, no DOCTYPE)
 *         ─► interpret: CrawlerConfig / DomainSpecification / attrib / section /
 *            SubDomain / Login / Node, each checked against the registry
 *         ─► checkRules (the spec's MUST rules across parameters)
 *         ─► { document, diagnostics }
 */

import { TrawlError, type SourceLocation } from '../core/errors.ts';
import { decodeUtf8, readXmlTree, type XmlElement } from '../core/xml.ts';
import { didYouMean, type Diagnostic } from './diagnostics.ts';
import { childSection, emptyCollection, setLocations, type CollectionConfig, type ConfigDocument, type SectionNode } from './model.ts';
import { COLLECTION, findAttrib, findSection, listRegistry, LOGIN, SUBCOLLECTION, SUBDOMAINS } from './registry.ts';
import { checkRules } from './rules.ts';
import type { AttribDef, ParamValue, SectionDef } from './schema.ts';
import { describeSecretValue } from './secrets.ts';
import { parseBoolean, parseInteger, parseReal } from './values.ts';

export interface ReadResult {
  readonly document: ConfigDocument;
  readonly diagnostics: Diagnostic[];
}

type Place = 'collection' | 'subcollection' | 'node' | 'login' | 'section';

interface Ctx {
  readonly diagnostics: Diagnostic[];
  readonly collection: string | undefined;
  readonly locations: Map<string, SourceLocation>;
}

const ALLOWED_ELEMENT_ATTRS = new Set(['name']);

function report(ctx: Ctx, d: Omit<Diagnostic, 'severity' | 'collection'> & { severity?: Diagnostic['severity'] }): void {
  ctx.diagnostics.push({ severity: 'error', ...(ctx.collection !== undefined ? { collection: ctx.collection } : {}), ...d });
}

function checkStrayText(el: XmlElement, ctx: Ctx, what: string, param?: string): void {
  for (const t of el.textLocs) {
    if (t.text.trim() !== '') {
      report(ctx, { code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: t.loc, ...(param ? { param } : {}), message: `unexpected text ${JSON.stringify(t.text.trim().slice(0, 40))} inside <${what}>` });
      return;
    }
  }
}

function checkAttributes(el: XmlElement, ctx: Ctx, allowed: ReadonlySet<string>): void {
  for (const k of Object.keys(el.attrs)) {
    if (allowed.has(k) || k === 'xmlns' || k.startsWith('xmlns:') || k.startsWith('xsi:')) continue;
    report(ctx, { code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: el.loc, message: `unexpected attribute ${k}="${el.attrs[k]}" on <${el.name}>` });
  }
}

function requireName(el: XmlElement, ctx: Ctx): string | undefined {
  const name = el.attrs.name?.trim();
  if (name === undefined || name === '') {
    report(ctx, { code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: el.loc, message: `<${el.name}> needs a non-empty name attribute` });
    return undefined;
  }
  return name;
}

/** Every registry path a bare name appears under, for "wrong place" hints. */
let namesToPaths: Map<string, string[]> | undefined;
function pathsOf(name: string): string[] {
  if (!namesToPaths) {
    namesToPaths = new Map();
    for (const e of listRegistry()) {
      const names = [e.def.name, ...(e.def.kind === 'attrib' ? (e.def.aliases ?? []) : [])];
      for (const n of names) {
        const list = namesToPaths.get(n) ?? [];
        list.push(e.path);
        namesToPaths.set(n, list);
      }
    }
  }
  return namesToPaths.get(name) ?? [];
}

function scopeLabel(place: Place, path: string): string {
  if (place === 'subcollection') return `a sub-collection (${path})`;
  if (place === 'login') return `a login (${path})`;
  if (path === '' || place === 'collection') return 'the collection';
  if (place === 'node') return 'a <Node>';
  return `section ${path}`;
}

function reportUnknown(kind: 'attrib' | 'section', name: string, el: XmlElement, def: SectionDef, place: Place, path: string, ctx: Ctx): void {
  const param = path ? `${path}.${name}` : name;
  // Known in the collection but not in a sub-collection: MS-FSCCFG 2.2.4.33.
  if (place === 'subcollection') {
    const inCollection = kind === 'attrib' ? findAttrib(COLLECTION, name) : findSection(COLLECTION, name);
    if (inCollection) {
      report(ctx, {
        code: 'TRAWL_ERR_CONFIG_PLACE', location: el.loc, param,
        message: `${name} is not allowed in a sub-collection; MS-FSCCFG 2.2.4.33 allows only ${[...SUBCOLLECTION.attribs.map((a) => a.name), ...SUBCOLLECTION.sections.map((s) => s.name)].join(', ')}`,
      });
      return;
    }
  }
  const sameKindHere = kind === 'attrib' ? def.attribs.map((a) => a.name) : def.sections.map((s) => s.name);
  const otherKind = kind === 'attrib' ? findSection(def, name) : findAttrib(def, name);
  if (otherKind) {
    report(ctx, {
      code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: el.loc, param,
      message: kind === 'attrib' ? `${name} is a section here: write <section name="${name}">` : `${name} is a parameter here: write <attrib name="${name}" type="${(otherKind as AttribDef).type}">`,
    });
    return;
  }
  const elsewhere = pathsOf(name).filter((p) => p !== param);
  if (elsewhere.length > 0) {
    report(ctx, {
      code: 'TRAWL_ERR_CONFIG_PLACE', location: el.loc, param,
      message: `${name} is not allowed in ${scopeLabel(place, path)}; it belongs in ${elsewhere.slice(0, 3).map((p) => (p.includes('.') ? p : 'the collection')).join(', ')}`,
    });
    return;
  }
  const guess = didYouMean(name, sameKindHere);
  const known = sameKindHere.length > 0 ? '' : ` (${scopeLabel(place, path)} takes no ${kind}s by fixed name)`;
  report(ctx, {
    code: 'TRAWL_ERR_CONFIG_UNKNOWN', location: el.loc, param,
    message: `unknown ${kind === 'attrib' ? 'parameter' : 'section'} ${JSON.stringify(name)} in ${scopeLabel(place, path)}${guess ? `; did you mean ${JSON.stringify(guess)}?` : known}`,
  });
}

/** A value quoted in a diagnostic: secrets masked as the registry says (secrets.ts), long values cut. */
function describeValue(def: AttribDef, text: string): string {
  return describeSecretValue(def, text);
}

/** Parses and checks one scalar value; reports and returns undefined when it is wrong. */
function readScalar(def: AttribDef, text: string, loc: SourceLocation, param: string, ctx: Ctx, member: boolean): ParamValue | undefined {
  const type = member ? 'string' : def.type;
  let value: ParamValue;
  switch (type) {
    case 'boolean': {
      const b = parseBoolean(text);
      if (b === undefined) {
        report(ctx, { code: 'TRAWL_ERR_CONFIG_TYPE', location: loc, param, message: `expected yes or no, got ${describeValue(def, text)}` });
        return undefined;
      }
      value = b;
      break;
    }
    case 'integer': {
      const n = parseInteger(text);
      if (n === undefined) {
        const looksNumeric = parseReal(text) !== undefined;
        report(ctx, {
          code: looksNumeric && /^[+-]?\d+$/.test(text) ? 'TRAWL_ERR_CONFIG_RANGE' : 'TRAWL_ERR_CONFIG_TYPE', location: loc, param,
          message: looksNumeric && /^[+-]?\d+$/.test(text) ? `expected an integer within INT32 (-2147483648 to 2147483647), got ${text}` : `expected a whole number (integer), got ${describeValue(def, text)}`,
        });
        return undefined;
      }
      value = n;
      break;
    }
    case 'real': {
      const n = parseReal(text);
      if (n === undefined) {
        report(ctx, { code: 'TRAWL_ERR_CONFIG_TYPE', location: loc, param, message: `expected a number (real), got ${describeValue(def, text)}` });
        return undefined;
      }
      value = n;
      break;
    }
    default:
      value = text;
  }
  if (typeof value === 'number') {
    if ((def.min !== undefined && value < def.min) || (def.max !== undefined && value > def.max)) {
      const range = def.max === undefined ? `at least ${def.min}` : def.min === undefined ? `at most ${def.max}` : `between ${def.min} and ${def.max}`;
      report(ctx, { code: 'TRAWL_ERR_CONFIG_RANGE', location: loc, param, message: `expected a value ${range}${def.unit ? ` (${def.unit})` : ''}, got ${value}` });
      return undefined;
    }
  }
  if (typeof value === 'string') {
    if (def.allowed) {
      const hit = def.caseInsensitive ? def.allowed.some((a) => a.toLowerCase() === value.toString().toLowerCase()) : def.allowed.includes(value);
      if (!hit) {
        const guess = didYouMean(value, def.allowed);
        report(ctx, {
          code: 'TRAWL_ERR_CONFIG_VALUE', location: loc, param,
          message: `expected ${def.allowed.length === 1 ? JSON.stringify(def.allowed[0]) : `one of ${def.allowed.join(', ')}`}, got ${describeValue(def, value)}${guess ? `; did you mean ${JSON.stringify(guess)}?` : ''}`,
        });
        return undefined;
      }
    }
    const problem = def.check?.(value);
    if (problem !== undefined) {
      report(ctx, { code: 'TRAWL_ERR_CONFIG_VALUE', location: loc, param, message: `expected ${problem}, got ${describeValue(def, value)}` });
      return undefined;
    }
  }
  return value;
}

function readAttrib(el: XmlElement, def: SectionDef, into: SectionNode, place: Place, path: string, ctx: Ctx): void {
  const name = requireName(el, ctx);
  checkAttributes(el, ctx, new Set(['name', 'type', 'ST_type']));
  if (name === undefined) return;
  let adef = findAttrib(def, name);
  const canonical = adef?.name ?? name;
  const param = path ? `${path}.${canonical}` : canonical;
  if (!adef && def.dynamicAttrib) {
    const problem = def.dynamicAttrib.nameCheck?.(name);
    if (problem !== undefined) {
      report(ctx, { code: 'TRAWL_ERR_CONFIG_VALUE', location: el.loc, param, message: `the name ${JSON.stringify(name)} is not valid in ${path}: expected ${problem}` });
      return;
    }
    adef = def.dynamicAttrib;
  }
  if (!adef) {
    reportUnknown('attrib', name, el, def, place, path, ctx);
    return;
  }
  // MS-FSCCFG 2.2.3's prose names the attribute ST_type, its schema and every example name it type.
  const t1 = el.attrs.type?.trim();
  const t2 = el.attrs.ST_type?.trim();
  if (t1 !== undefined && t2 !== undefined && t1 !== t2) {
    report(ctx, { code: 'TRAWL_ERR_CONFIG_TYPE', location: el.loc, param, message: `type="${t1}" and ST_type="${t2}" disagree; give one of them` });
    return;
  }
  const type = t1 ?? t2;
  if (type === undefined) {
    report(ctx, { code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: el.loc, param, message: `<attrib name="${name}"> has no type attribute; expected type="${adef.type}"` });
    return;
  }
  if (type !== adef.type) {
    const known = ['boolean', 'integer', 'real', 'string', 'list-string'].includes(type);
    report(ctx, {
      code: 'TRAWL_ERR_CONFIG_TYPE', location: el.loc, param,
      message: known ? `${canonical} is ${adef.type === 'integer' ? 'an' : 'a'} ${adef.type}, not ${type}; expected type="${adef.type}"` : `unknown type "${type}"; expected type="${adef.type}" (types: boolean, integer, real, string, list-string)`,
    });
    return;
  }
  if (into.attribs.has(canonical)) {
    const first = ctx.locations.get(param);
    report(ctx, { code: 'TRAWL_ERR_CONFIG_DUPLICATE', location: el.loc, param, message: `${canonical} is given twice in the same place${first?.line ? ` (first on line ${first.line})` : ''}` });
    return;
  }
  let value: ParamValue | undefined;
  if (adef.type === 'list-string') {
    checkStrayText(el, ctx, `attrib name="${name}"`, param);
    const members: string[] = [];
    let bad = false;
    for (const child of el.children) {
      if (child.name !== 'member') {
        report(ctx, { code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: child.loc, param, message: `unexpected <${child.name}> in a list-string; expected <member>` });
        bad = true;
        continue;
      }
      if (child.children.length > 0) {
        report(ctx, { code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: child.children[0]!.loc, param, message: '<member> holds text only' });
        bad = true;
        continue;
      }
      const v = readScalar(adef, child.text.trim(), child.loc, param, ctx, true);
      if (v === undefined) bad = true;
      else members.push(v as string);
    }
    if (!bad) value = members;
  } else {
    if (el.children.length > 0) {
      report(ctx, {
        code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: el.children[0]!.loc, param,
        message: el.children[0]!.name === 'member' ? `<member> is only for list-string parameters; ${canonical} is ${adef.type === 'integer' ? 'an' : 'a'} ${adef.type}` : `unexpected <${el.children[0]!.name}> inside <attrib>`,
      });
      return;
    }
    value = readScalar(adef, el.text.trim(), el.loc, param, ctx, false);
  }
  if (value === undefined) return;
  into.attribs.set(canonical, value);
  ctx.locations.set(param, el.loc);
}

function readSectionElement(el: XmlElement, def: SectionDef, into: SectionNode, place: Place, path: string, ctx: Ctx): void {
  const name = requireName(el, ctx);
  checkAttributes(el, ctx, ALLOWED_ELEMENT_ATTRS);
  if (name === undefined) return;
  const param = path ? `${path}.${name}` : name;
  let sdef = findSection(def, name);
  let childPlace: Place = 'section';
  if (!sdef && def.dynamicSection) {
    const problem = def.dynamicSection.nameCheck?.(name);
    if (problem !== undefined) {
      report(ctx, { code: 'TRAWL_ERR_CONFIG_VALUE', location: el.loc, param, message: `the section name ${JSON.stringify(name)} is not valid in ${path}: expected ${problem}` });
      return;
    }
    sdef = def.dynamicSection;
  }
  if (!sdef) {
    reportUnknown('section', name, el, def, place, path, ctx);
    return;
  }
  if (sdef === SUBCOLLECTION) childPlace = 'subcollection';
  if (sdef === LOGIN) childPlace = 'login';
  if (into.sections.has(name) && sdef !== SUBDOMAINS && findSection(COLLECTION, 'logins') !== sdef) {
    const first = ctx.locations.get(param);
    report(ctx, { code: 'TRAWL_ERR_CONFIG_DUPLICATE', location: el.loc, param, message: `section ${name} is given twice in the same place${first?.line ? ` (first on line ${first.line})` : ''}` });
    return;
  }
  ctx.locations.set(param, el.loc);
  readChildren(el, sdef, childSection(into, name), childPlace, param, ctx);
}

function readChildren(el: XmlElement, def: SectionDef, into: SectionNode, place: Place, path: string, ctx: Ctx): void {
  checkStrayText(el, ctx, el.name, path || undefined);
  for (const child of el.children) {
    switch (child.name) {
      case 'attrib':
        readAttrib(child, def, into, place, path, ctx);
        break;
      case 'section':
        readSectionElement(child, def, into, place, path, ctx);
        break;
      case 'SubDomain':
      case 'Login':
      case 'Node':
        report(ctx, { code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: child.loc, param: path || undefined, message: `<${child.name}> is allowed only directly inside <DomainSpecification>` });
        break;
      default:
        report(ctx, { code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: child.loc, param: path || undefined, message: `unexpected element <${child.name}>; expected <attrib> or <section>` });
    }
  }
}

/** A <SubDomain> or <Login> element becomes a child of the subdomains or logins section. */
function readNamedElement(el: XmlElement, holder: 'subdomains' | 'logins', def: SectionDef, place: Place, root: SectionNode, ctx: Ctx): void {
  const name = requireName(el, ctx);
  checkAttributes(el, ctx, ALLOWED_ELEMENT_ATTRS);
  if (name === undefined) return;
  const param = `${holder}.${name}`;
  const problem = def.nameCheck?.(name);
  if (problem !== undefined) {
    report(ctx, { code: 'TRAWL_ERR_CONFIG_VALUE', location: el.loc, param, message: `the name ${JSON.stringify(name)} is not valid: expected ${problem}` });
    return;
  }
  const container = childSection(root, holder);
  if (container.sections.has(name)) {
    report(ctx, { code: 'TRAWL_ERR_CONFIG_DUPLICATE', location: el.loc, param, message: `${holder === 'subdomains' ? 'sub-collection' : 'login'} ${JSON.stringify(name)} is defined twice` });
    return;
  }
  ctx.locations.set(param, el.loc);
  readChildren(el, def, childSection(container, name), place, param, ctx);
}

function readDomain(el: XmlElement, ctx: Ctx): CollectionConfig | undefined {
  const c = emptyCollection(ctx.collection!);
  for (const child of el.children) {
    switch (child.name) {
      case 'attrib':
        readAttrib(child, COLLECTION, c.root, 'collection', '', ctx);
        break;
      case 'section':
        readSectionElement(child, COLLECTION, c.root, 'collection', '', ctx);
        break;
      case 'SubDomain':
        readNamedElement(child, 'subdomains', SUBCOLLECTION, 'subcollection', c.root, ctx);
        break;
      case 'Login':
        readNamedElement(child, 'logins', LOGIN, 'login', c.root, ctx);
        break;
      case 'Node': {
        const name = requireName(child, ctx);
        checkAttributes(child, ctx, ALLOWED_ELEMENT_ATTRS);
        if (name === undefined) break;
        if (c.nodes.has(name)) {
          report(ctx, { code: 'TRAWL_ERR_CONFIG_DUPLICATE', location: child.loc, message: `<Node name="${name}"> is given twice` });
          break;
        }
        const node: SectionNode = { attribs: new Map(), sections: new Map() };
        c.nodes.set(name, node);
        readChildren(child, COLLECTION, node, 'node', `@node:${name}`, ctx);
        break;
      }
      default:
        report(ctx, { code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: child.loc, message: `unexpected element <${child.name}> in <DomainSpecification>; expected attrib, section, SubDomain, Login or Node` });
    }
  }
  checkStrayText(el, ctx, 'DomainSpecification');
  return c;
}

/**
 * MS-FSCCFG 3.11's own example writes a POST payload with a bare "&"
 * (`variable1=value1&variableB=valueB`), which is not well-formed XML.
 * trawl reads such an ampersand as "&amp;" and warns, so the example loads;
 * the writer always escapes it.
 */
function repairBareAmpersands(text: string, file: string | undefined, out: Diagnostic[]): string {
  // CDATA sections, comments and processing instructions are matched first and
  // kept as they are: an "&" in them is text, not markup (an unterminated one
  // runs to the end, where saxes reports it).
  const bare = /<!\[CDATA\[[\s\S]*?(?:\]\]>|$)|<!--[\s\S]*?(?:-->|$)|<\?[\s\S]*?(?:\?>|$)|&(?!(?:[A-Za-z_][\w.-]*|#\d+|#x[0-9A-Fa-f]+);)/g;
  if (!text.includes('&')) return text;
  let line = 1;
  let lineStart = 0;
  let last = 0;
  return text.replace(bare, (m: string, offset: number) => {
    if (m !== '&') return m;
    for (let i = last; i < offset; i++) {
      if (text.charCodeAt(i) === 10) {
        line++;
        lineStart = i + 1;
      }
    }
    last = offset;
    out.push({
      severity: 'warning', code: 'TRAWL_ERR_CONFIG_XML',
      location: { ...(file !== undefined ? { file } : {}), line, column: offset - lineStart + 1 },
      message: 'a bare "&" is not well-formed XML; it is read as "&amp;" (write &amp; to silence this)',
    });
    return '&amp;';
  });
}

/**
 * Reads a whole MS-FSCCFG document. Never throws for bad input: every
 * problem is a diagnostic, and the document holds what could be read.
 */
export interface ReadOptions {
  /**
   * A partial configuration, to be merged into an existing collection
   * (MS-FSCADM CollectionAdd): every value is checked, but the rules across
   * parameters are left to the caller, who checks the merged result.
   */
  readonly partial?: boolean;
}

export function readConfigXml(input: Uint8Array | string, file?: string, opts: ReadOptions = {}): ReadResult {
  const diagnostics: Diagnostic[] = [];
  const collections: CollectionConfig[] = [];
  let root: XmlElement;
  try {
    const text = repairBareAmpersands(decodeUtf8(input, { ...(file !== undefined ? { file } : {}), encodingCode: 'TRAWL_ERR_CONFIG_ENCODING' }), file, diagnostics);
    root = readXmlTree(text, {
      ...(file !== undefined ? { file } : {}),
      maxBytes: 64 * 1024 * 1024,
      maxDepth: 32,
      malformedCode: 'TRAWL_ERR_CONFIG_XML',
      doctypeCode: 'TRAWL_ERR_CONFIG_DTD',
      encodingCode: 'TRAWL_ERR_CONFIG_ENCODING',
    });
  } catch (err) {
    if (!(err instanceof TrawlError)) throw err;
    diagnostics.push({ severity: 'error', code: err.code, message: err.message, ...(err.location ? { location: err.location } : {}) });
    return { document: { collections }, diagnostics };
  }
  const top: Ctx = { diagnostics, collection: undefined, locations: new Map() };
  if (root.name !== 'CrawlerConfig') {
    report(top, { code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: root.loc, message: `the root element is <${root.name}>; expected <CrawlerConfig> (MS-FSCCFG 2.1.1)` });
    return { document: { collections }, diagnostics };
  }
  checkAttributes(root, top, new Set());
  checkStrayText(root, top, 'CrawlerConfig');
  const seen = new Map<string, SourceLocation>();
  for (const el of root.children) {
    if (el.name !== 'DomainSpecification') {
      report(top, { code: 'TRAWL_ERR_CONFIG_STRUCTURE', location: el.loc, message: `unexpected element <${el.name}> in <CrawlerConfig>; expected <DomainSpecification>` });
      continue;
    }
    const name = requireName(el, top);
    checkAttributes(el, top, ALLOWED_ELEMENT_ATTRS);
    if (name === undefined) continue;
    if (seen.has(name)) {
      report(top, { code: 'TRAWL_ERR_CONFIG_DUPLICATE', location: el.loc, message: `collection ${JSON.stringify(name)} is defined twice (first on line ${seen.get(name)!.line})` });
      continue;
    }
    seen.set(name, el.loc);
    const ctx: Ctx = { diagnostics, collection: name, locations: new Map([['', el.loc]]) };
    const errorsBefore = diagnostics.filter((d) => d.severity === 'error').length;
    const c = readDomain(el, ctx);
    if (!c) continue;
    setLocations(c, ctx.locations);
    // Rules across parameters judge only a collection that was read whole: on a
    // partly read one they report follow-on errors that are not true.
    const readErrors = diagnostics.filter((d) => d.severity === 'error').length > errorsBefore;
    if (!opts.partial && !readErrors) checkRules(c, diagnostics);
    collections.push(c);
  }
  return { document: { collections }, diagnostics };
}
