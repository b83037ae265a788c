// The Elastic Open Crawler's own example configurations (test/fixtures/elastic-open-crawler,
// see its README): each validates with `trawl config validate`, with warnings only for
// what trawl says it does not apply, and `trawl config convert` turns it into MS-FSCCFG
// XML that validates and holds the same crawl.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readElasticYaml } from '../../src/config/elastic-yaml.ts';
import { writeConfigXml } from '../../src/config/writer.ts';
import { FIXTURES } from '../helpers.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const DIR = join(FIXTURES, 'elastic-open-crawler');
const files = readdirSync(DIR).filter((f) => f.endsWith('.yml')).sort();

interface Validated {
  file: string;
  valid: boolean;
  collections: string[];
  diagnostics: Array<{ severity: string; code: string; message: string; param?: string }>;
}

async function validate(...paths: string[]): Promise<Validated[]> {
  const r = await runTrawl(['config', 'validate', '--json', ...paths]);
  return JSON.parse(r.out) as Validated[];
}

/** A warning that states what trawl does not apply (or how it reads a value differently). */
const STATES_NOT_APPLIED = /not applied|not honoured|never matches|not evaluated/;

describe('the Open Crawler example configurations', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'trawl-oc-examples-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('are all here, as the README lists them', () => {
    const listed = [...readFileSync(join(DIR, 'README.md'), 'utf8').matchAll(/^\| ([\w.-]+\.yml) \|/gm)].map((m) => m[1]).sort();
    assert.deepEqual(listed, files);
    assert.equal(files.length, 21);
  });

  it('each validates: no errors, and every warning says what is not applied', async () => {
    const results = await validate(...files.map((f) => join(DIR, f)));
    assert.equal(results.length, files.length);
    for (const v of results) {
      const errors = v.diagnostics.filter((d) => d.severity === 'error');
      assert.deepEqual(errors, [], `${v.file} has errors`);
      assert.equal(v.valid, true, v.file);
      for (const d of v.diagnostics) assert.match(d.message, STATES_NOT_APPLIED, `${v.file}: ${d.code} ${d.message}`);
    }
  });

  it('each converts to MS-FSCCFG XML that validates', async () => {
    // Converted as `trawl config convert` does (the YAML reader, then the XML writer); the XML is checked by the CLI, all files at once.
    const outs = files.map((f) => {
      const read = readElasticYaml(readFileSync(join(DIR, f), 'utf8'), f);
      const out = join(tmp, `${f}.xml`);
      writeFileSync(out, writeConfigXml(read.document));
      return out;
    });
    const results = await validate(...outs);
    assert.equal(results.length, files.length);
    for (const v of results) {
      assert.deepEqual(v.diagnostics.filter((d) => d.severity === 'error'), [], v.file);
      assert.equal(v.valid, true, v.file);
      // The converted file has no YAML left to warn about: only what the registry says is not honoured, and
      // crawler.yml.example's placeholder CA certificates (ssl_ca_certificates), which cannot be read.
      for (const d of v.diagnostics) {
        if (d.param === 'trawl_tls.ca_certificates' && /not applied/.test(d.message)) continue;
        assert.equal(d.code, 'TRAWL_ERR_CONFIG_NOT_HONOURED', `${v.file}: ${d.message}`);
      }
    }
  });

  it('dotted keys at every level mean the same as nested ones (the three forms of the spec fixtures)', async () => {
    const sinkOf = async (f: string): Promise<string> => {
      const r = await runTrawl(['config', 'convert', join(DIR, f), '--to', 'xml']);
      assert.equal(r.code, 0, r.err);
      return /<section name="trawl_sinks">[\s\S]*?<\/section>\s*<\/section>/.exec(r.out)![0];
    };
    const flat = await sinkOf('spec-elasticsearch-flat-format.yml');
    const partly = await sinkOf('spec-elasticsearch-partially-flat-format.yml');
    assert.equal(partly, flat);
    assert.match(flat, /<member> _reduce_whitespace=true <\/member>/);
    assert.match(flat, /<attrib name="bulk_max_items" type="integer"> 10 <\/attrib>/);
    assert.match(flat, /<attrib name="bulk_max_bytes" type="integer"> 1048576 <\/attrib>/);
  });

  it('crawler.yml.example: its auth, size limits, extraction rulesets and elasticsearch settings become trawl parameters', async () => {
    const r = await runTrawl(['config', 'convert', join(DIR, 'crawler-yml-example.yml'), '--to', 'xml']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /<attrib name="max_elastic_tag_bytes" type="integer"> 512 <\/attrib>/);
    assert.match(r.out, /<attrib name="max_data_attribute_bytes" type="integer"> 512 <\/attrib>/);
    assert.match(r.out.replaceAll('&quot;', '"'), /<section name="trawl_extraction_rulesets">\s*<section name="localhost_8000_1">\s*<attrib name="domain" type="string"> http:\/\/localhost:8000 <\/attrib>\s*<attrib name="url_filters" type="list-string">\s*<member> begins \/blog <\/member>\s*<\/attrib>\s*<attrib name="rules" type="list-string">\s*<member> \{"action":"extract","field_name":"author"/);
    assert.match(r.out, /<attrib name="url" type="string"> http:\/\/localhost:9200 <\/attrib>/);
    // http_auth_allowed is false and the domain is http: the crawler sends no credentials, and says so.
    assert.doesNotMatch(r.out, /name="passwd"/);
    const [v] = await validate(join(DIR, 'crawler-yml-example.yml'));
    assert.ok(v!.diagnostics.some((d) => d.param === 'domains[0].auth' && /http_auth_allowed/.test(d.message)));
    for (const key of ['log_level', 'event_logs_to_file', 'system_logs_to_file', 'log_file_directory', 'log_file_rotation_policy']) {
      assert.ok(v!.diagnostics.some((d) => d.param === key && d.code === 'TRAWL_ERR_CONFIG_UNSUPPORTED'), `no warning names ${key}`);
    }
  });
});
