// The search document's settings as the configuration readers take them:
// the Open Crawler's YAML keys mapped (extraction_rulesets, the binary
// content keys, max_elastic_tag_size, max_data_attribute_size, the sink's
// schema), what Elastic accepts but trawl does not apply reported as a
// warning, and the MS-FSCCFG sections checked with their file and line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readElasticYaml } from '../../src/config/elastic-yaml.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { checkRules } from '../../src/config/rules.ts';
import type { Diagnostic } from '../../src/config/diagnostics.ts';

const one = 'domains:\n  - url: https://a.example\n';

describe('the search document\'s settings', () => {
  it('YAML: binary content, the custom field limits and the sink\'s schema', () => {
    const r = readElasticYaml(`${one}output_sink: console\nbinary_content_extraction_enabled: true\nbinary_content_extraction_mime_types:\n  - application/pdf\n  - application/msword\nmax_elastic_tag_size: 100\nmax_data_attribute_size: 200\n`, 'b.yml');
    assert.deepEqual(r.diagnostics, []);
    const s = resolveSettings(r.document.collections[0]!);
    assert.deepEqual(s.extraction.binaryMimeTypes, ['application/pdf', 'application/msword']);
    assert.equal(s.trawlLimits.maxElasticTagBytes, 100);
    assert.equal(s.trawlLimits.maxDataAttributeBytes, 200);
    assert.equal(s.sinks.console!.schema, 'open_crawler');
  });

  it('YAML: mime types without binary_content_extraction_enabled are a warning, and nothing is indexed', () => {
    const r = readElasticYaml(`${one}binary_content_extraction_mime_types: [application/pdf]\n`, 'b.yml');
    assert.deepEqual(r.diagnostics.map((d) => [d.severity, d.param]), [['warning', 'binary_content_extraction_mime_types']]);
    assert.deepEqual(resolveSettings(r.document.collections[0]!).extraction.binaryMimeTypes, []);
  });

  it('YAML: an XPath rule, valid for the Open Crawler, is a warning naming it; a CSS one beside it is kept', () => {
    const r = readElasticYaml(`${one}    extraction_rulesets:
      - rules:
          - action: extract
            field_name: t
            selector: //a/text()
            join_as: string
            source: html
          - action: extract
            field_name: u
            selector: .ok
            join_as: array
            source: html
`, 'x.yml');
    assert.deepEqual(r.diagnostics.map((d) => [d.severity, d.location?.line, d.param]), [['warning', 5, 'domains[0].extraction_rulesets[0].rules[0]']]);
    assert.match(r.diagnostics[0]!.message, /XPath/);
    const sets = resolveSettings(r.document.collections[0]!).extractionRulesets;
    assert.deepEqual(Object.values(sets).map((x) => [x.domain, x.rules!.map((m) => (JSON.parse(m) as { field_name: string }).field_name)]), [['https://a.example', ['u']]]);
  });

  it('YAML: a rule the Open Crawler refuses is an error at its line', () => {
    const r = readElasticYaml(`${one}    extraction_rulesets:\n      - rules:\n          - action: copy\n            field_name: t\n            selector: p\n            source: html\n`, 'x.yml');
    assert.deepEqual(r.diagnostics.map((d) => [d.severity, d.location?.line]), [['error', 5]]);
    assert.match(r.diagnostics[0]!.message, /action must be extract or set/);
  });

  it('XML: a ruleset without a domain, and a rule without the value a set needs, are errors naming the parameter', () => {
    const xml = (rules: string) => `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="x">
      <section name="trawl_extraction_rulesets"><section name="r">
        <attrib name="rules" type="list-string"><member>${rules}</member></attrib>
      </section></section></DomainSpecification></CrawlerConfig>`;
    const bad = readConfigXml(xml('{&quot;action&quot;:&quot;set&quot;,&quot;field_name&quot;:&quot;t&quot;,&quot;selector&quot;:&quot;p&quot;,&quot;source&quot;:&quot;html&quot;}'), 'r.xml');
    assert.deepEqual(bad.diagnostics.map((d) => [d.severity, d.param]), [['error', 'trawl_extraction_rulesets.r.rules']]);
    assert.match(bad.diagnostics[0]!.message, /a set rule needs a value/);
    const ok = readConfigXml(xml('{&quot;action&quot;:&quot;set&quot;,&quot;field_name&quot;:&quot;t&quot;,&quot;selector&quot;:&quot;p&quot;,&quot;source&quot;:&quot;html&quot;,&quot;value&quot;:1}'), 'r.xml');
    const out: Diagnostic[] = [];
    checkRules(ok.document.collections[0]!, out);
    assert.deepEqual(out.map((d) => [d.severity, d.param]), [['error', 'trawl_extraction_rulesets.r']]);
    assert.match(out[0]!.message, /names no domain/);
  });
});
