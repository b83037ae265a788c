// Reads every parameter table of MS-FSCCFG §2.2.3–§2.2.4 from the spec text
// itself and checks the registry against it: each parameter is there, with
// the documented type and default, and nothing in the registry's MS-FSCCFG
// part is missing from the spec. Where trawl deliberately differs, the
// difference is listed here with its reason.
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { COLLECTION, EXTENSION_PREFIX, findAttrib, findSection, listRegistry, SUBCOLLECTION } from '../../src/config/registry.ts';
import type { AttribDef, ParamValue, SectionDef } from '../../src/config/schema.ts';
import { FIXTURES } from '../helpers.ts';

const spec = readFileSync(join(FIXTURES, 'specs', 'MS-FSCCFG-crawler-configuration-file-format.md'), 'utf8');

/** Spec section number → registry path of the table's parameters. */
const TABLES: Record<string, string> = {
  '2.2.3': '', '2.2.4.1': 'include_domains', '2.2.4.3': 'include_uris', '2.2.4.5': 'log', '2.2.4.6': 'storage',
  '2.2.4.7': 'pp', '2.2.4.8': 'ppdup', '2.2.4.9': 'feeding.<destination>', '2.2.4.10': 'cachesize',
  '2.2.4.15': 'workqueue_priority', '2.2.4.16': 'workqueue_priority.<level>', '2.2.4.17': 'link_extraction',
  '2.2.4.18': 'limits', '2.2.4.19': 'focused', '2.2.4.24': 'adaptive', '2.2.4.25': 'weights',
  '2.2.4.26': 'sitemap_weights', '2.2.4.28': 'crawlmode', '2.2.4.30': 'rss', '2.2.4.31': 'logins.<login>',
};

/** Deliberate differences from the spec's table, with the reason (also in docs/configuration.md "Spec decisions"). */
const DEVIATIONS: Record<string, { registryDefault: ParamValue | undefined; why: string }> = {
  headers: { registryDefault: undefined, why: 'the default User-Agent names trawl and its version, not FAST' },
  uri_dir: { registryDefault: undefined, why: 'the table\'s "none" means no directory: the parameter is absent by default' },
  uri_search_mime: { registryDefault: undefined, why: 'text/vnd.wap.xml is not a MIME type; WML is text/vnd.wap.wml (as in the 3.2 example)' },
};

interface SpecRow { section: string; name: string; type: string; defaultText: string }

function specRows(): SpecRow[] {
  const rows: SpecRow[] = [];
  let section: string | undefined;
  for (const line of spec.split('\n')) {
    const h = /^#{2,5} (\d+(?:\.\d+)+) /.exec(line);
    if (h) {
      section = h[1]!;
      continue;
    }
    if (section === undefined || !(section in TABLES)) continue;
    const m = /^(?:<b>)?([a-z_0-9]+)(?:<\/b>)?\t(?:<b>)?(boolean|integer|real|string|list-string)(?:<\/b>)?\t([^\t]*)\t/.exec(line);
    if (m) rows.push({ section, name: m[1]!, type: m[2]!, defaultText: m[3]!.trim() });
  }
  return rows;
}

function lookup(path: string, name: string): AttribDef | undefined {
  let def: SectionDef = COLLECTION;
  for (const part of path ? path.split('.') : []) {
    def = part.startsWith('<') ? def.dynamicSection! : findSection(def, part)!;
  }
  return findAttrib(def, name);
}

function parseDefault(text: string, type: string): ParamValue | undefined {
  if (text === 'N/A') return undefined;
  if (/Maximum value of INT32/.test(text)) return 2147483647;
  if (type === 'boolean') return text === 'yes';
  if (type === 'integer' || type === 'real') return Number(text);
  if (type === 'list-string') return text === 'none' ? [] : text.split(',').map((s) => s.trim());
  return text;
}

describe('registry against the MS-FSCCFG text', () => {
  const rows = specRows();

  it('finds the spec\'s parameter tables', () => {
    // 66 attribs in the 2.2.3 table and 124 in the section tables.
    assert.equal(rows.filter((r) => r.section === '2.2.3').length, 66);
    assert.equal(rows.length, 190);
  });

  for (const row of rows) {
    const path = TABLES[row.section]!;
    it(`${row.section} ${path ? `${path}.` : ''}${row.name}: ${row.type}, default ${row.defaultText}`, () => {
      const def = lookup(path, row.name);
      assert.ok(def, `${row.name} is not in the registry under ${path || 'the collection'}`);
      assert.equal(def.type, row.type);
      const deviation = DEVIATIONS[row.name];
      if (deviation && (path === '' || row.name === 'uri_dir')) {
        assert.ok(deviation.why.length > 0);
        return;
      }
      assert.deepStrictEqual(def.default, parseDefault(row.defaultText, row.type));
    });
  }

  it('has nothing from MS-FSCCFG that the spec does not list (besides login_failed_ignore of the 3.2 example)', () => {
    const specNames = new Set(rows.map((r) => `${TABLES[r.section]}|${r.name}`));
    for (const e of listRegistry()) {
      if (e.def.kind !== 'attrib' || e.def.name.startsWith('<') || e.path.startsWith(EXTENSION_PREFIX)) continue;
      const i = e.path.lastIndexOf('.');
      const path = i < 0 ? '' : e.path.slice(0, i);
      const names = [e.def.name, ...(e.def.aliases ?? [])];
      if (!(path in Object.fromEntries(Object.values(TABLES).map((p) => [p, 1])))) continue;
      if (e.def.name === 'login_failed_ignore') continue;
      assert.ok(names.some((n) => specNames.has(`${path}|${n}`)), `${e.path} is not in the spec tables`);
    }
  });

  it('has the defaults of 2.2.4.12 and 2.2.4.14 for http_errors and ftp_errors', () => {
    const table = (num: string): Record<string, string> => {
      const start = spec.indexOf(`#### ${num} Default Values`);
      const body = spec.slice(start, spec.indexOf('####', start + 10));
      return Object.fromEntries([...body.matchAll(/^([0-9a-z]{3})\t([A-Z].*)$/gm)].map((m) => [m[1]!, m[2]!.trim()]));
    };
    assert.deepEqual(findSection(COLLECTION, 'http_errors')!.defaults, table('2.2.4.12'));
    assert.deepEqual(findSection(COLLECTION, 'ftp_errors')!.defaults, table('2.2.4.14'));
  });

  it('allows exactly the 2.2.4.33 subset in sub-collections', () => {
    const start = spec.indexOf('Only a sub-set of the configuration parameters');
    const body = spec.slice(start, spec.indexOf('The **refresh** configuration parameters', start));
    const listed = [...body.matchAll(/\*\*([a-z_\\0-9]+)\*\*/g)].map((m) => m[1]!.replace(/\\/g, ''));
    assert.ok(listed.length >= 16);
    const allowed = new Set([...SUBCOLLECTION.attribs.map((a) => a.name), ...SUBCOLLECTION.sections.map((s) => s.name)]);
    for (const name of listed) assert.ok(allowed.has(name), `${name} should be allowed in a sub-collection`);
    const extra = [...allowed].filter((n) => !listed.includes(n));
    // 2.2.4.33 adds rss, variable_delay and the four include/exclude sections.
    assert.deepEqual(extra.sort(), ['exclude_domains', 'exclude_uris', 'include_domains', 'include_uris', 'rss', 'variable_delay']);
  });

  it('covers every section of 2.2.4', () => {
    const sections = [...spec.matchAll(/^#{2,5} 2\.2\.4\.\d+ ([a-z_\\]+) Section/gm)].map((m) => m[1]!.replace(/\\/g, ''));
    assert.ok(sections.length >= 28, String(sections.length));
    const known = new Set(listRegistry().filter((e) => e.def.kind === 'section').map((e) => e.def.name));
    for (const s of sections) assert.ok(known.has(s), `section ${s} is missing`);
  });
});
