// Issue 29: the warnings for parameters this version does not honour, as a
// user sees them through the real `trawl` binary (bin/trawl.js).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers.ts';

const BIN = join(ROOT, 'bin/trawl.js');
const tmp = mkdtempSync(join(tmpdir(), 'trawl-honoured-'));

function trawl(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: tmp, encoding: 'utf8', timeout: 60_000, env: { ...process.env, TRAWL_KEY_FILE: '' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function write(name: string, body: string): string {
  const p = join(tmp, name);
  writeFileSync(p, `<?xml version="1.0" encoding="utf-8"?>\n<CrawlerConfig>\n  <DomainSpecification name="c">\n${body}\n  </DomainSpecification>\n</CrawlerConfig>\n`);
  return p;
}

const SCOPE = '    <section name="include_domains"><attrib name="exact" type="list-string"><member>127.0.0.1</member></attrib></section>';
const START = '    <attrib name="start_uris" type="list-string"><member>http://127.0.0.1:9/</member></attrib>';

describe('warnings for parameters this version does not honour', () => {
  const ignored = write('ignored.xml', `${SCOPE}\n    <attrib name="mirror_site_files" type="list-string"><member>mirrors.txt</member></attrib>`);

  it('config validate names the parameter, its file and line, and what is missing; it still passes', () => {
    const r = trawl(['config', 'validate', ignored]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /ignored\.xml:5:5: warning TRAWL_ERR_CONFIG_NOT_HONOURED: collection "c", mirror_site_files: mirror_site_files = mirrors\.txt is not honoured: this version reads and checks it, then ignores it/);
    assert.match(r.out, /ignored\.xml: OK \(1 collection: c; 1 warning\)/);
  });

  it('--strict turns them into errors and exits 65', () => {
    const r = trawl(['config', 'validate', '--strict', ignored]);
    assert.equal(r.code, 65);
    assert.match(r.err, /error TRAWL_ERR_CONFIG_NOT_HONOURED: collection "c", mirror_site_files:/);
    assert.match(r.out, /INVALID \(1 error\)/);
  });

  it('a configuration of honoured parameters only gets no such warning', () => {
    const r = trawl(['config', 'validate', '--strict', write('ok.xml', `${SCOPE}\n    <attrib name="delay" type="real">2</attrib>\n    <attrib name="use_cookies" type="boolean">no</attrib>`)]);
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err, /NOT_HONOURED/);
  });

  it('config validate warns about a collection without scope, naming the file and what to add', () => {
    const r = trawl(['config', 'validate', write('noscope.xml', START)]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /noscope\.xml:3:3: warning TRAWL_ERR_CONFIG_RULE: collection "c", include_domains: the collection has no scope: .*add an include_domains section/);
  });

  it('Elastic YAML keys all map onto parameters this version honours: the limits a YAML sets give no warning', () => {
    const yml = join(tmp, 'elastic.yml');
    writeFileSync(yml, 'domains:\n  - url: https://example.com\nmax_duration: 3600\nmax_title_size: 100\nmax_unique_url_count: 50\n');
    const r = trawl(['config', 'validate', yml, '--strict']);
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err, /NOT_HONOURED/);
  });

  it('trawl crawl prints them on stderr when the collection starts', () => {
    const file = write('crawl.xml', `${START}\n    <attrib name="near_duplicate_detection" type="boolean">yes</attrib>\n${SCOPE}`);
    const r = trawl(['crawl', file, '--data', join(tmp, 'data'), '--max-pages', '1']);
    assert.match(r.err, /crawl\.xml:5:5: warning TRAWL_ERR_CONFIG_NOT_HONOURED: collection "c", near_duplicate_detection: near_duplicate_detection = yes is not honoured/);
    assert.doesNotMatch(r.out, /NOT_HONOURED/);
  });

  it('trawl crawl URL builds its own scope and warns about nothing', () => {
    const r = trawl(['crawl', 'http://127.0.0.1:9/', '--data', join(tmp, 'data2'), '--max-pages', '1']);
    assert.doesNotMatch(r.err, /warning TRAWL_ERR/);
  });
});
