// Drives the real `trawl` binary (bin/trawl.js) in a child process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { FIXTURES, ROOT } from '../helpers.ts';

const BIN = join(ROOT, 'bin/trawl.js');
const tmp = mkdtempSync(join(tmpdir(), 'trawl-cli-'));

function trawl(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: tmp, encoding: 'utf8', input, env: { ...process.env, TRAWL_KEY_FILE: '' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function write(name: string, body: string): string {
  const p = join(tmp, name);
  writeFileSync(p, body);
  return p;
}

const collection = (body: string, name = 'c') => `<?xml version="1.0" encoding="utf-8"?>\n<CrawlerConfig>\n  <DomainSpecification name="${name}">\n${body}\n  </DomainSpecification>\n</CrawlerConfig>\n`;

describe('trawl CLI', () => {
  it('--version prints the package version', () => {
    const r = trawl(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.out.trim(), JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  });

  it('--help lists the config commands', () => {
    const r = trawl(['config', '--help']);
    assert.equal(r.code, 0);
    for (const cmd of ['validate', 'show', 'convert', 'encrypt', 'keygen']) assert.match(r.out, new RegExp(`\\b${cmd}\\b`));
  });

  it('an unknown command is a usage error (exit 64)', () => {
    const r = trawl(['frobnicate']);
    assert.equal(r.code, 64);
    assert.match(r.err, /unknown command 'frobnicate'/);
  });

  it('config validate accepts every §3 example', () => {
    const files = ['3.1-simple.xml', '3.2-typical.xml', '3.3-subcollection-element.xml', '3.12-feeding.xml'].map((f) => join(FIXTURES, 'fsccfg-examples', f));
    const r = trawl(['config', 'validate', ...files]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.trim().split('\n').filter((l) => l.includes(': OK (1 collection')).length, 4);
  });

  it('config validate lists every error with file, line and column, and exits 65', () => {
    const bad = write('bad.xml', collection('    <attrib name="dealy" type="real"> 2 </attrib>\n    <attrib name="max_pending" type="integer"> two </attrib>\n    <section name="storage"><attrib name="datastore" type="string">tape</attrib></section>'));
    // With a scope: a collection without include rules is warned about (issue 29).
    const good = write('good.xml', collection('    <attrib name="delay" type="real"> 2 </attrib>\n    <section name="include_domains"><attrib name="suffix" type="list-string"><member>example.com</member></attrib></section>'));
    const r = trawl(['config', 'validate', bad, good]);
    assert.equal(r.code, 65);
    const lines = r.err.trim().split('\n');
    assert.equal(lines.length, 3, r.err);
    assert.match(lines[0]!, /bad\.xml:4:5: error TRAWL_ERR_CONFIG_UNKNOWN: collection "c", dealy: .*did you mean "delay"\?/);
    assert.match(lines[1]!, /bad\.xml:5:5: error TRAWL_ERR_CONFIG_TYPE: collection "c", max_pending: expected a whole number/);
    assert.match(lines[2]!, /bad\.xml:6:29: error TRAWL_ERR_CONFIG_VALUE: collection "c", storage\.datastore: expected one of flatfile, bstore, got "tape"/);
    assert.match(r.out, /bad\.xml: INVALID \(3 errors\)/);
    assert.match(r.out, /good\.xml: OK \(1 collection: c\)/);
  });

  it('config validate --json gives machine-readable diagnostics', () => {
    const bad = write('bad2.xml', collection('    <attrib name="delay" type="real">-1</attrib>'));
    const r = trawl(['config', 'validate', '--json', bad]);
    assert.equal(r.code, 65);
    const [result] = JSON.parse(r.out);
    assert.equal(result.valid, false);
    assert.equal(result.diagnostics[0].code, 'TRAWL_ERR_CONFIG_RANGE');
    assert.equal(result.diagnostics[0].location.line, 4);
  });

  it('config validate reports a missing file', () => {
    const r = trawl(['config', 'validate', join(tmp, 'nope.xml')]);
    assert.equal(r.code, 65);
    assert.match(r.err, /nope\.xml: error TRAWL_ERR_IO: cannot read the configuration: no such file/);
  });

  it('config show prints the effective configuration, with the node override and secrets redacted', () => {
    const f = write('show.xml', collection(`    <attrib name="delay" type="real">10</attrib>
    <attrib name="proxy" type="list-string"><member>http://u:hunter2@proxy.example:3128</member></attrib>
    <section name="passwd"><attrib name="http://a.example/" type="string">bob:hunter2</attrib></section>
    <Node name="n1"><attrib name="delay" type="real">90</attrib></Node>`));
    const xml = trawl(['config', 'show', f]);
    assert.equal(xml.code, 0, xml.err);
    assert.doesNotMatch(xml.out, /hunter2/);
    const shown = readConfigXml(xml.out);
    assert.deepEqual(shown.diagnostics, []);
    const root = shown.document.collections[0]!.root;
    assert.equal(root.attribs.get('delay'), 10);
    assert.equal(root.attribs.get('max_pending'), 2); // complete: defaults included
    const node = trawl(['config', 'show', f, '--node', 'n1', '--mode', 'changed']);
    assert.match(node.out, /<attrib name="delay" type="real"> 90\.0 <\/attrib>/);
    assert.doesNotMatch(node.out, /max_pending/);
    const json = trawl(['config', 'show', f, '--format', 'json', '--node', 'n1']);
    const parsed = JSON.parse(json.out);
    assert.equal(parsed.settings.delayS, 90);
    assert.equal(parsed.settings.storage.datastore, 'bstore');
    assert.deepEqual(parsed.settings.passwd, { 'http://a.example/': 'bob:********' });
    assert.doesNotMatch(json.out, /hunter2/);
  });

  it('config show names the collections when the file has several', () => {
    const f = write('two.xml', '<CrawlerConfig><DomainSpecification name="a"/><DomainSpecification name="b"/></CrawlerConfig>');
    const r = trawl(['config', 'show', f]);
    assert.equal(r.code, 64);
    assert.match(r.err, /defines 2 collections \(a, b\); choose one with --collection/);
    assert.equal(trawl(['config', 'show', f, '--collection', 'b']).code, 0);
    const missing = trawl(['config', 'show', f, '--collection', 'z']);
    assert.equal(missing.code, 65);
    assert.match(missing.err, /TRAWL_ERR_CONFIG_NOT_FOUND: .*no collection "z" \(it has: a, b\)/);
  });

  it('crawl refuses a bad configuration with its location and crawls nothing (exit 65)', () => {
    const bad = write('crawl-bad.xml', collection('    <attrib name="start_uris" type="list-string"><member>http://127.0.0.1:9/</member></attrib>\n    <attrib name="delay" type="real">soon</attrib>'));
    const r = trawl(['crawl', '--data', join(tmp, 'data-bad'), bad]);
    assert.equal(r.code, 65);
    assert.match(r.err, /crawl-bad\.xml:5:5: error TRAWL_ERR_CONFIG_TYPE: collection "c", delay: expected a number \(real\), got "soon"/);
    assert.match(r.err, /nothing was crawled/);
  });

  it('crawl refuses a bad URL and a bad --max-pages (exit 64)', () => {
    assert.equal(trawl(['crawl', 'http://[::1']).code, 64);
    const r = trawl(['crawl', '--max-pages', '0', 'http://127.0.0.1:9/']);
    assert.equal(r.code, 64);
    assert.match(r.err, /--max-pages must be a whole number of at least 1/);
  });

  it('config keygen and encrypt produce an !ENC! value that the reader accepts and show keeps', () => {
    const key = join(tmp, 'key.dat');
    assert.equal(trawl(['config', 'keygen', '--key-file', key]).code, 0);
    assert.equal(readFileSync(key).length, 32);
    const again = trawl(['config', 'keygen', '--key-file', key]);
    assert.equal(again.code, 64);
    assert.match(again.err, /exists; pass --force/);
    const enc = trawl(['config', 'encrypt', '--key-file', key], 'hunter2\n');
    assert.equal(enc.code, 0, enc.err);
    const value = enc.out.trim();
    assert.match(value, /^!ENC![A-Za-z0-9+/=]+$/);
    const f = write('enc.xml', collection(`    <section name="passwd"><attrib name="realm1" type="string">bob:${value}:realm1:digest</attrib></section>`));
    const shown = trawl(['config', 'show', f, '--mode', 'changed']);
    assert.equal(shown.code, 0, shown.err);
    assert.ok(shown.out.includes(`bob:${value}:realm1:digest`));
    const noKey = trawl(['config', 'encrypt', '--key-file', join(tmp, 'none.dat')], 'x');
    assert.equal(noKey.code, 78);
    assert.match(noKey.err, /TRAWL_ERR_SECRET_KEY: cannot read key file .*none\.dat/);
  });
});
