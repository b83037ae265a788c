// The registry's `honoured` statuses, the warnings built from them
// (src/config/honoured.ts), the list of tests that cover honoured
// parameters, and the reference's Honoured column.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { honouredWarnings, scopeWarnings } from '../../src/config/honoured.ts';
import { formatHonoured, renderConfigReference } from '../../src/config/reference.ts';
import { listRegistry } from '../../src/config/registry.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { ROOT } from '../helpers.ts';
import { HONOURED_TESTS, KNOWN_UNTESTED } from './honoured-tests.ts';

const xml = (body: string) =>
  `<?xml version="1.0" encoding="utf-8"?>\n<CrawlerConfig>\n  <DomainSpecification name="c">\n${body}\n  </DomainSpecification>\n</CrawlerConfig>\n`;
const SCOPE = '    <section name="include_domains"><attrib name="suffix" type="list-string"><member>example.com</member></attrib></section>';

function read(body: string) {
  const r = readConfigXml(Buffer.from(xml(body)), 'c.xml');
  assert.deepEqual(r.diagnostics.filter((d) => d.severity === 'error'), []);
  return r.document.collections[0]!;
}

const honoured = listRegistry().filter((e) => e.def.honoured !== 'not');

describe('registry: honoured statuses', () => {
  it('every partly status says what is missing, and its values are values the parameter allows', () => {
    for (const e of listRegistry()) {
      const h = e.def.honoured;
      if (h === 'full' || h === 'not') continue;
      assert.ok(h.partly.length > 10 && !h.partly.endsWith('.'), `${e.path}: one short sentence without a full stop`);
      if (h.values && e.def.kind === 'attrib' && e.def.allowed) for (const v of h.values) assert.ok(e.def.allowed.includes(v), `${e.path}: ${v}`);
    }
  });

  it('the audit: parameters nothing outside src/config/ reads are marked not', () => {
    const byPath = new Map(listRegistry().map((e) => [e.path, e.def.honoured]));
    for (const p of ['near_duplicate_detection', 'mirror_site_files', 'pp.use_dupservers']) {
      assert.equal(byPath.get(p), 'not', p);
    }
    for (const p of ['delay', 'use_cookies', 'cookie_timeout', 'limits.disk_free', 'limits.max_doc', 'trawl_limits.max_crawl_duration', 'trawl_limits.max_unique_urls', 'max_doc', 'trawl_secrets.key_file', 'http_errors.<code>', 'trawl_limits.max_document_bytes', 'proxy', 'key_file', 'cert_file', 'ftp_errors', 'ftp_errors.<code>', 'ftp_acct', 'ftp_passive', 'ftp_searchlinks', 'allowed_schemes', 'logins', 'logins.<login>.autofill', 'login_timeout', 'login_failed_ignore', 'trawl_limits.max_title_bytes', 'trawl_limits.max_headings', 'refresh_mode', 'adaptive', 'adaptive.refresh_count', 'weights.change_history', 'sitemap_weights.default', 'log.scheduler', 'use_javascript', 'javascript_keep_html', 'javascript_delay']) assert.equal(byPath.get(p), 'full', p);
  });
});

describe('every honoured parameter has a test', () => {
  it('each one is in HONOURED_TESTS, or in the (shrinking) KNOWN_UNTESTED list, not both', () => {
    for (const e of honoured) {
      const listed = (HONOURED_TESTS[e.path]?.length ?? 0) > 0;
      assert.ok(listed !== KNOWN_UNTESTED.includes(e.path), `${e.path}: name the test that covers it in test/config/honoured-tests.ts${listed ? ' and drop it from KNOWN_UNTESTED' : ''}`);
    }
    assert.ok(KNOWN_UNTESTED.length <= 25, 'KNOWN_UNTESTED may only shrink');
  });

  it('no entry names a parameter that is unknown or not honoured', () => {
    const paths = new Set(honoured.map((e) => e.path));
    for (const p of [...Object.keys(HONOURED_TESTS), ...KNOWN_UNTESTED]) assert.ok(paths.has(p), `${p} is not an honoured parameter of the registry`);
  });

  it('every test file named exists and mentions the parameter', () => {
    for (const e of honoured) {
      const leaf = e.path.split('.').reverse().find((s) => !s.startsWith('<'))!;
      const word = new RegExp(`\\b(${leaf}|${e.def.key})\\b`);
      for (const f of HONOURED_TESTS[e.path] ?? []) {
        const file = join(ROOT, f);
        assert.ok(existsSync(file), `${e.path}: ${f} does not exist`);
        assert.match(readFileSync(file, 'utf8'), word, `${e.path}: ${f} does not mention ${leaf}`);
      }
    }
  });
});

describe('honouredWarnings', () => {
  it('warns for a not-honoured parameter, naming it, its line and what is missing', () => {
    const ds = honouredWarnings(read(`${SCOPE}\n    <attrib name="mirror_site_files" type="list-string"><member>mirrors.txt</member></attrib>`));
    assert.equal(ds.length, 1);
    assert.equal(ds[0]!.param, 'mirror_site_files');
    assert.equal(ds[0]!.severity, 'warning');
    assert.equal(ds[0]!.code, 'TRAWL_ERR_CONFIG_NOT_HONOURED');
    assert.equal(ds[0]!.location?.line, 5);
    assert.match(ds[0]!.message, /mirror_site_files = mirrors\.txt is not honoured/);
  });

  it('masks secrets in what it quotes', () => {
    // ftp_acct is honoured (the FTP fetcher logs in with it): no warning.
    assert.deepEqual(honouredWarnings(read(`${SCOPE}\n    <section name="ftp_acct"><attrib name="ftp.example.com" type="string">fu:FtpPw</attrib></section>`)), []);
    const ds = honouredWarnings(read(`${SCOPE}\n    <section name="passwd"><attrib name="http://c.example/" type="string">eve:SecretPw:r:ntlmv1</attrib></section>`));
    assert.equal(ds.length, 1);
    assert.doesNotMatch(ds[0]!.message, /SecretPw/);
    assert.match(ds[0]!.message, /passwd/);
  });

  it('stays quiet for honoured parameters and for values equal to the default', () => {
    // info is a description: nothing reads it, and nothing should.
    const c = read(`${SCOPE}\n    <attrib name="info" type="string">news sites</attrib>\n    <attrib name="delay" type="real">2</attrib>\n    <attrib name="use_cookies" type="boolean">no</attrib>\n    <attrib name="refresh_mode" type="string">append</attrib>\n    <section name="http_errors"><attrib name="404" type="string">DELETE:0</attrib></section>`);
    assert.deepEqual(honouredWarnings(c), []);
  });

  it('a partly honoured parameter warns only for the values it ignores', () => {
    const ds = honouredWarnings(read(`${SCOPE}\n    <section name="passwd"><attrib name="http://a.example/" type="string">amy:pw2:r:digest</attrib><attrib name="http://b.example/" type="string">eve:pw3:r:NTLMv1</attrib></section>\n    <attrib name="refresh_mode" type="string">adaptive</attrib>\n    <attrib name="allowed_schemes" type="list-string"><member>http</member><member>https</member></attrib>`));
    assert.deepEqual(ds.map((d) => d.param), ['passwd.http://b.example/']);
    assert.match(ds[0]!.message, /only partly honoured: .*ntlmv1/);
    // ftp is fetched now (the FTP fetcher): allowed_schemes with ftp warns no more.
    const ftp = honouredWarnings(read(`${SCOPE}\n    <attrib name="allowed_schemes" type="list-string"><member>http</member><member>ftp</member></attrib>`));
    assert.deepEqual(ftp.map((d) => d.param), []);
  });

  it('passwd warns only for the entries whose scheme is not spoken (ntlmv1), without their password', () => {
    const ds = honouredWarnings(read(`${SCOPE}\n    <section name="passwd"><attrib name="http://a.example/" type="string">bob:pw1</attrib><attrib name="http://b.example/" type="string">amy:pw2:r:digest</attrib><attrib name="http://c.example/" type="string">eve:pw3:r:NTLMv1</attrib><attrib name="http://d.example/" type="string">al:pw4:CORP:ntlmv2</attrib></section>`));
    assert.deepEqual(ds.map((d) => d.param), ['passwd.http://c.example/']);
    assert.match(ds[0]!.message, /the ntlmv1 scheme is not spoken/);
    assert.doesNotMatch(ds[0]!.message, /pw3/);
  });

  it('a section marked not gives one warning, whatever it holds; logins, honoured, gives none', () => {
    const ds = honouredWarnings(read(`${SCOPE}\n    <section name="logins"><section name="l"><attrib name="site" type="string">example.com</attrib><attrib name="form" type="string">/login</attrib></section></section>\n    <section name="ppdup"><attrib name="format" type="string">hashlog</attrib><attrib name="cachesize" type="integer">64</attrib></section>`));
    assert.deepEqual(ds.map((d) => d.param), ['ppdup']);
  });

  it('looks into sub-collections and <Node> overrides', () => {
    const c = read(`${SCOPE}\n    <SubDomain name="s"><section name="include_domains"><attrib name="exact" type="list-string"><member>a.example.com</member></attrib></section><attrib name="refresh_mode" type="string">adaptive</attrib></SubDomain>\n    <Node name="n1"><attrib name="near_duplicate_detection" type="boolean">yes</attrib></Node>`);
    const ds = honouredWarnings(c);
    assert.deepEqual(ds.map((d) => d.param).sort(), ['near_duplicate_detection', 'subdomains.s.refresh_mode']);
    // A sub-collection's refresh_mode applies to its URIs, but adaptive is the collection's alone: the warning says so.
    assert.match(ds.find((d) => d.param === 'subdomains.s.refresh_mode')!.message, /subdomains\.s\.refresh_mode = adaptive is not applied: with refresh_mode adaptive on one side, the collection's refresh_mode \(scratch\) decides/);
    // Another mode is applied per sub-collection: no warning.
    assert.deepEqual(honouredWarnings(read(`${SCOPE}\n    <SubDomain name="s"><section name="include_domains"><attrib name="exact" type="list-string"><member>a.example.com</member></attrib></section><attrib name="refresh_mode" type="string">append</attrib></SubDomain>`)).map((d) => d.param), []);
    assert.equal(ds.find((d) => d.param === 'near_duplicate_detection')!.location?.line, 6);
    // A crawl as node n2, or as no node, does not use n1's override.
    assert.deepEqual(honouredWarnings(c, 'n2').map((d) => d.param), ['subdomains.s.refresh_mode']);
    assert.deepEqual(honouredWarnings(c, null).map((d) => d.param), ['subdomains.s.refresh_mode']);
    assert.equal(honouredWarnings(c, 'n1').length, 2);
  });
});

describe('scopeWarnings', () => {
  it('warns once for a collection without include rules', () => {
    const ds = scopeWarnings(read('    <attrib name="start_uris" type="list-string"><member>http://example.com/</member></attrib>'));
    assert.equal(ds.length, 1);
    assert.match(ds[0]!.message, /no scope: .*every host .*add an include_domains section/);
    assert.equal(ds[0]!.location?.file, 'c.xml');
  });

  it('include_domains, include_uris or crawlmode fwdlinks no is a scope', () => {
    assert.deepEqual(scopeWarnings(read(SCOPE)), []);
    assert.deepEqual(scopeWarnings(read('    <section name="include_uris"><attrib name="prefix" type="list-string"><member>http://example.com/</member></attrib></section>')), []);
    assert.deepEqual(scopeWarnings(read('    <section name="crawlmode"><attrib name="fwdlinks" type="boolean">no</attrib></section>')), []);
    assert.equal(scopeWarnings(read('    <section name="include_domains"></section>')).length, 1, 'an empty section matches every domain');
  });
});

describe('reference: the Honoured column', () => {
  it('formats each status', () => {
    assert.equal(formatHonoured('full'), '✓');
    assert.equal(formatHonoured('not'), 'no');
    assert.equal(formatHonoured({ partly: 'x is ignored' }), 'partly: x is ignored');
  });

  it('shows it for every parameter', () => {
    const ref = renderConfigReference();
    assert.match(ref, /\| Parameter \| Type \| Default \| Where \| Honoured \| Meaning \|/);
    assert.match(ref, /\| `near_duplicate_detection` \| [^\n]*\| CN \| no \|/);
    assert.match(ref, /\| `delay` \| [^\n]*\| CSN \| ✓ \|/);
    assert.match(ref, /\| `refresh_mode` \| [^\n]*\| CSN \| ✓ \|/);
    assert.match(ref, /### Section `ppdup` [^\n]*\n\n[^\n]*Honoured: no\./);
  });
});
