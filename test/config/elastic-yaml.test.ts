// The Elastic Open Crawler's YAML, read into the MS-FSCCFG model: values, warnings, errors and write-back.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Diagnostic } from '../../src/config/diagnostics.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { readElasticYaml } from '../../src/config/elastic-yaml.ts';
import { locationOf, type CollectionConfig, type SectionNode } from '../../src/config/model.ts';
import type { ParamValue } from '../../src/config/schema.ts';
import { writeConfigXml } from '../../src/config/writer.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { FIXTURES } from '../helpers.ts';

const DIR = 'elastic-yaml/';
const validFiles = readdirSync(`${FIXTURES}${DIR}valid`).filter((f) => f.endsWith('.yml')).sort();
const invalidFiles = readdirSync(`${FIXTURES}${DIR}invalid`).filter((f) => f.endsWith('.yml')).sort();

function readFixture(name: string) {
  const path = `${DIR}${name}`;
  return { path, ...readElasticYaml(readFileSync(FIXTURES + path, 'utf8'), path) };
}

const errorsOf = (ds: readonly Diagnostic[]) => ds.filter((d) => d.severity === 'error');
const warningsOf = (ds: readonly Diagnostic[]) => ds.filter((d) => d.severity === 'warning');

/** Reads a valid fixture: no errors, one collection. */
function load(name: string) {
  const r = readFixture(`valid/${name}`);
  assert.deepEqual(errorsOf(r.diagnostics), [], `${name} has errors`);
  assert.equal(r.document.collections.length, 1);
  return { ...r, c: r.document.collections[0]! };
}

/** Reads YAML given inline. */
function yaml(text: string, file = 'inline.yml') {
  const r = readElasticYaml(text, file);
  return { ...r, c: r.document.collections[0] };
}

function at(c: CollectionConfig | undefined, path: string): ParamValue | undefined {
  const names = path.split('|');
  let node: SectionNode | undefined = c?.root;
  for (const n of names.slice(0, -1)) node = node?.sections.get(n);
  return node?.attribs.get(names[names.length - 1]!);
}

/** The errors as "code line:column param". */
const brief = (ds: readonly Diagnostic[]) => ds.map((d) => `${d.code} ${d.location?.line}:${d.location?.column} ${d.param ?? ''}`.trim());

describe('Elastic crawler YAML: valid files', () => {
  it('has the fixtures this test expects', () => {
    assert.deepEqual(validFiles, ['flat-keys.yml', 'full.yml', 'minimal.yml']);
    assert.ok(invalidFiles.length >= 8, `${invalidFiles.length} invalid fixtures`);
  });

  for (const f of validFiles) {
    it(`${f} writes out as MS-FSCCFG XML that reads back with no errors and the same model`, () => {
      const { document } = load(f);
      const back = readConfigXml(writeConfigXml(document), `${f}.xml`);
      assert.deepEqual(back.diagnostics, []);
      assert.deepStrictEqual(back.document.collections, document.collections);
      for (const mode of ['complete', 'changed'] as const) {
        const again = readConfigXml(writeConfigXml(document, { mode }), mode);
        assert.deepEqual(errorsOf(again.diagnostics), [], mode);
        assert.deepStrictEqual(resolveSettings(again.document.collections[0]!), resolveSettings(document.collections[0]!), mode);
      }
    });
  }

  it('full.yml: domains become scope rules, start URIs, sitemaps and crawl rules', () => {
    const { c } = load('full.yml');
    assert.equal(c.name, 'acme-public-sites'); // crawl_id
    assert.deepEqual(at(c, 'start_uris'), [
      'https://www.acme.example/',
      'https://www.acme.example/products',
      'https://docs.acme.example:8443/guide/',
      'http://blog.acme.example/', // no seed_urls: the domain URL + "/"
    ]);
    assert.deepEqual(at(c, 'include_domains|exact'), ['www.acme.example', 'docs.acme.example', 'blog.acme.example']);
    assert.deepEqual(at(c, 'include_uris|prefix'), ['https://www.acme.example/', 'https://docs.acme.example:8443/', 'http://blog.acme.example/']);
    assert.deepEqual(at(c, 'allowed_schemes'), ['https', 'http']);
    assert.deepEqual(at(c, 'trawl_sitemaps|urls'), ['https://www.acme.example/sitemap.xml', 'https://docs.acme.example:8443/sitemap-index.xml']);
    assert.equal(at(c, 'use_sitemaps'), true);
    const rules = c.root.sections.get('trawl_crawl_rules')!;
    assert.deepEqual([...rules.sections.keys()], ['https://www.acme.example', 'https://docs.acme.example:8443']);
    assert.deepEqual(at(c, 'trawl_crawl_rules|https://www.acme.example|rules'), [
      'disallow begins /admin',
      'disallow ends .pdf',
      'disallow contains sessionid=',
      'allow regex \\/products\\/[0-9]+',
    ]);
    assert.deepEqual(at(c, 'trawl_crawl_rules|https://docs.acme.example:8443|rules'), ['allow begins /guide', 'disallow regex .*']);
  });

  it('full.yml: depth, limits, timeouts, headers, proxy and egress', () => {
    const { c } = load('full.yml');
    assert.equal(at(c, 'crawlmode|mode'), 'DEPTH:3'); // Elastic depth 4 = seeds + 3 hops
    assert.deepEqual(Object.fromEntries(c.root.sections.get('trawl_limits')!.attribs), {
      max_url_length: 1024,
      max_url_segments: 12,
      max_url_params: 8,
      max_links_per_page: 500,
      connect_timeout: 5,
      max_crawl_duration: 7200,
      max_unique_urls: 50000,
      max_title_bytes: 512,
      max_body_bytes: 5242880, // 5_242_880 in YAML 1.1
      max_keywords_bytes: 256,
      max_description_bytes: 512,
      max_indexed_links: 20,
      max_headings: 30,
      socket_timeout: 10, // Elastic's default, written where the YAML does not set it
    });
    assert.equal(at(c, 'cut_off'), 20971520);
    assert.equal(at(c, 'truncate'), false);
    assert.equal(at(c, 'max_redirects'), 5);
    assert.equal(at(c, 'fetch_timeout'), 30);
    assert.equal(at(c, 'accept_compression'), true);
    assert.deepEqual(at(c, 'headers'), ['User-Agent: AcmeBot/2.1 (+https://www.acme.example/bot)']);
    assert.deepEqual(at(c, 'proxy'), ['http://crawler:proxy-pass@proxy.acme.example:3128']);
    assert.equal(at(c, 'trawl_egress|allow_loopback'), false);
    assert.equal(at(c, 'trawl_egress|allow_private_networks'), true);
    const s = resolveSettings(c);
    assert.equal(s.trawlLimits.maxUrlLength, 1024);
    assert.equal(s.crawlmode.mode, 'DEPTH:3');
    assert.equal(s.fetchTimeoutS, 30);
    assert.deepEqual(s.crawlRules['https://docs.acme.example:8443']!.rules, ['allow begins /guide', 'disallow regex .*']);
  });

  it('full.yml: the elasticsearch sink', () => {
    const { c } = load('full.yml');
    const sinks = c.root.sections.get('trawl_sinks')!;
    assert.deepEqual([...sinks.sections.keys()], ['elasticsearch']);
    assert.deepEqual(Object.fromEntries(sinks.sections.get('elasticsearch')!.attribs), {
      type: 'elasticsearch',
      index: 'acme-web',
      url: 'https://search.acme.example:9243',
      username: 'crawler',
      password: 's3cret-pass',
      pipeline: 'acme-web-pipeline',
      schema: 'open_crawler',
      pipeline_params: ['_reduce_whitespace=true', '_run_ml_inference=true', '_extract_binary_content=true'],
      bulk_max_items: 50,
      bulk_max_bytes: 2097152,
    });
  });

  it('full.yml: extraction_rulesets become trawl_extraction_rulesets, one section per ruleset, rules as JSON members', () => {
    const { c } = load('full.yml');
    const sets = c.root.sections.get('trawl_extraction_rulesets')!;
    assert.deepEqual([...sets.sections.keys()], ['www.acme.example_443_1']);
    const rs = Object.fromEntries(sets.sections.get('www.acme.example_443_1')!.attribs);
    assert.deepEqual(rs, {
      domain: 'https://www.acme.example',
      url_filters: ['begins /products'],
      rules: [JSON.stringify({ action: 'extract', field_name: 'price', selector: '.price', join_as: 'string', source: 'html' })],
    });
  });

  it('full.yml: one TRAWL_ERR_CONFIG_UNSUPPORTED warning per setting without an equivalent, in file order', () => {
    const { diagnostics, path } = load('full.yml');
    const warnings = warningsOf(diagnostics);
    assert.equal(warnings.length, 2, JSON.stringify(warnings, null, 1));
    assert.deepEqual(
      warnings.map((w) => w.param),
      [
        'schedule.pattern',
        'log_level',
      ],
    );
    for (const w of warnings) {
      assert.equal(w.code, 'TRAWL_ERR_CONFIG_UNSUPPORTED');
      assert.equal(w.collection, 'acme-public-sites');
      assert.equal(w.location?.file, path);
    }
    assert.match(warnings[1]!.message, /^log_level has no trawl equivalent and is not applied/);
    // The daily pattern keeps its period, not its time.
    assert.match(warnings[0]!.message, /^schedule\.pattern "0 3 \* \* \*": trawl serve starts a refresh cycle every 1440 minutes \(refresh\), counted from the collection's start; the time the pattern names is not applied$/);
    assert.deepEqual(warnings[0]!.location, { file: path, line: 96, column: 3 });
  });

  it('full.yml: the locations of the values are kept for later checks', () => {
    const { c, path } = load('full.yml');
    assert.deepEqual(locationOf(c, 'crawlmode.mode'), { file: path, line: 66, column: 18 });
    assert.deepEqual(locationOf(c, 'trawl_limits.max_body_bytes'), { file: path, line: 77, column: 16 });
  });

  it('minimal.yml: one domain, and Elastic\'s defaults where they differ from MS-FSCCFG\'s', () => {
    const { c, diagnostics } = load('minimal.yml');
    assert.deepEqual(diagnostics, []);
    assert.equal(c.name, 'minimal'); // from the file name
    assert.deepEqual(Object.fromEntries(c.root.attribs), {
      allowed_schemes: ['https'],
      // The Elastic crawlers have no per-site delay: the converted collection says 1 s, not MS-FSCCFG's minute.
      delay: 1,
      start_uris: ['https://www.example.com/'],
      // config.rb's DEFAULTS and the crawler's behaviour (docs/elastic-migration.md, Defaults).
      exclude_exts: [],
      allowed_types: ['text/html'],
      use_sitemaps: true,
      robots_ttl: 0,
      cut_off: 10485760,
      truncate: false,
      fetch_timeout: 60,
      // The Open Crawler indexes each page under its own URL, same content or not.
      diffcheck: false,
    });
    // The Elastic crawler's content deletion: a purge phase after each cycle, and a 5xx deletes after three failing cycles.
    assert.equal(at(c, 'trawl_purge|enabled'), true);
    assert.equal(at(c, 'http_errors|5xx'), 'DELETE:3');
    assert.equal(at(c, 'crawlmode|mode'), 'DEPTH:9');
    assert.equal(at(c, 'trawl_sitemaps|robots_discovery'), true);
    assert.equal(at(c, 'trawl_limits|max_unique_urls'), 100000);
    assert.equal(at(c, 'trawl_limits|max_crawl_duration'), 86400);
    assert.equal(at(c, 'trawl_elastic|events'), true);
    assert.deepEqual([...c.root.sections.keys()].sort(), ['crawlmode', 'http_errors', 'include_domains', 'include_uris', 'trawl_elastic', 'trawl_limits', 'trawl_purge', 'trawl_sitemaps']);
    assert.deepEqual(at(c, 'include_domains|exact'), ['www.example.com']);
    assert.deepEqual(at(c, 'include_uris|prefix'), ['https://www.example.com/']);
    assert.equal(c.nodes.size, 0);
  });

  it('flat-keys.yml: dotted keys, a file sink, no robots.txt sitemaps, a default proxy port and basic auth', () => {
    const { c, diagnostics, path } = load('flat-keys.yml');
    assert.deepEqual(at(c, 'start_uris'), ['https://intranet.example.org/']); // seed_urls: [] → the domain URL
    assert.deepEqual(Object.fromEntries(c.root.sections.get('trawl_sinks')!.sections.get('file')!.attribs), { type: 'file', schema: 'open_crawler', output_dir: '/var/crawl/out', file_naming: 'url' });
    assert.equal(at(c, 'trawl_sitemaps|robots_discovery'), false);
    assert.equal(at(c, 'use_sitemaps'), true); // sitemap_urls are given
    assert.deepEqual(at(c, 'trawl_crawl_rules|https://intranet.example.org|rules'), ['disallow begins /private']);
    assert.deepEqual(at(c, 'proxy'), ['http://10.0.0.8:8080']);
    assert.deepEqual(at(c, 'subdomains|elastic_auth_1|headers'), ['Authorization: Basic cmVhZGVyOmh1bnRlcjI=']);
    assert.deepEqual(at(c, 'subdomains|elastic_auth_1|include_uris|prefix'), ['https://intranet.example.org/']);
    assert.deepEqual(brief(diagnostics), ['TRAWL_ERR_CONFIG_YAML 17:1 elasticsearch']);
    assert.match(diagnostics[0]!.message, /not applied: output_sink is file/);
    assert.equal(diagnostics[0]!.location?.file, path);
  });
});

describe('Elastic crawler YAML: invalid files', () => {
  /** file → the errors expected, as "code line:column param", and a message each must match. */
  const expected: Record<string, { errors: string[]; messages?: RegExp[]; collections?: number }> = {
    'syntax.yml': { errors: ['TRAWL_ERR_CONFIG_YAML 4:1'], messages: [/^malformed YAML: Flow sequence/], collections: 0 },
    'duplicate-key.yml': { errors: ['TRAWL_ERR_CONFIG_YAML 4:1'], messages: [/Map keys must be unique/], collections: 0 },
    'empty.yml': { errors: ['TRAWL_ERR_CONFIG_YAML 1:1'], messages: [/empty/], collections: 0 },
    'not-a-mapping.yml': { errors: ['TRAWL_ERR_CONFIG_YAML 1:1'], messages: [/must be a mapping/], collections: 0 },
    'no-domains.yml': { errors: ['TRAWL_ERR_CONFIG_YAML 1:1'], messages: [/needs at least one domain/] },
    'domains-not-list.yml': { errors: ['TRAWL_ERR_CONFIG_YAML 2:3 domains'], messages: [/expected a list, got a mapping/] },
    'bad-depth.yml': { errors: ['TRAWL_ERR_CONFIG_YAML 3:18 max_crawl_depth'], messages: [/at least 1, got 0/] },
    'bad-sink.yml': { errors: ['TRAWL_ERR_CONFIG_YAML 3:14 output_sink'], messages: [/unknown output_sink "kafka"/] },
    'unknown-keys.yml': {
      errors: [
        'TRAWL_ERR_CONFIG_YAML 3:5 domains[0].seed_url',
        'TRAWL_ERR_CONFIG_YAML 6:9 domains[0].crawl_rules[0]',
        'TRAWL_ERR_CONFIG_YAML 7:9 domains[0].crawl_rules[0].typ',
        'TRAWL_ERR_CONFIG_YAML 9:1 max_crawl_dept',
        'TRAWL_ERR_CONFIG_YAML 10:1 frobnicate',
        'TRAWL_ERR_CONFIG_YAML 12:3 elasticsearch.hots',
      ],
      messages: [
        /did you mean "seed_urls"\?/,
        /needs type/,
        /did you mean "type"\?/,
        /unknown key "max_crawl_dept".*did you mean "max_crawl_depth"\?/,
        /unknown key "frobnicate".*does not define it/,
        /did you mean "host"\?/,
      ],
    },
    'bad-rules.yml': {
      errors: [
        'TRAWL_ERR_CONFIG_YAML 4:17 domains[0].crawl_rules[0].policy',
        'TRAWL_ERR_CONFIG_YAML 8:15 domains[0].crawl_rules[1].type',
        'TRAWL_ERR_CONFIG_YAML 15:18 domains[0].crawl_rules[3].pattern',
        'TRAWL_ERR_CONFIG_YAML 16:9 domains[0].crawl_rules[4]',
        'TRAWL_ERR_CONFIG_YAML 18:9 domains[0].crawl_rules[5]',
        'TRAWL_ERR_CONFIG_YAML 19:5 domains[0].crawl_rules_extra',
      ],
      messages: [/unknown policy "block"/, /unknown rule type "startswith"/, /valid regular expression/, /needs pattern/, /expected a mapping/, /unknown key/],
    },
    'bad-types.yml': {
      errors: [
        'TRAWL_ERR_CONFIG_YAML 3:18 max_crawl_depth',
        'TRAWL_ERR_CONFIG_YAML 4:16 max_body_size',
        'TRAWL_ERR_CONFIG_YAML 5:19 loopback_allowed',
        'TRAWL_ERR_CONFIG_YAML 6:16 max_redirects',
        'TRAWL_ERR_CONFIG_YAML 7:18 request_timeout',
        'TRAWL_ERR_CONFIG_YAML 9:3 user_agent',
        'TRAWL_ERR_CONFIG_YAML 10:17 max_url_length',
        'TRAWL_ERR_CONFIG_YAML 11:17 max_title_size',
      ],
      messages: [
        /whole number, got the string "3" \(write it without quotes\)/,
        /at least 0 \(bytes\) for trawl_limits.max_body_bytes, got -1/,
        /true or false, got the string "yes"/,
        /whole number, got 2.5/,
        /whole number, got a list/,
        /expected a string, got a mapping/,
        /at least 1 .* got 0/,
        /INT32/,
      ],
    },
    'bad-domains.yml': {
      errors: [
        'TRAWL_ERR_CONFIG_YAML 2:10 domains[0].url',
        'TRAWL_ERR_CONFIG_YAML 3:10 domains[1].url',
        'TRAWL_ERR_CONFIG_YAML 4:5 domains[2]',
        'TRAWL_ERR_CONFIG_YAML 7:10 domains[4].url',
        'TRAWL_ERR_CONFIG_YAML 8:10 domains[5].url',
        'TRAWL_ERR_CONFIG_YAML 9:5 domains[6]',
      ],
      messages: [/cannot have a path/, /scheme ftp/, /needs a url/, /given twice \(first on line 6\)/, /absolute http or https URL/, /expected a mapping/],
    },
    'bad-urls.yml': {
      errors: [
        'TRAWL_ERR_CONFIG_YAML 3:16 domains[0].seed_urls',
        'TRAWL_ERR_CONFIG_YAML 6:9 domains[1].seed_urls[0]',
        'TRAWL_ERR_CONFIG_YAML 8:9 domains[1].seed_urls[2]',
        'TRAWL_ERR_CONFIG_YAML 10:9 domains[1].sitemap_urls[0]',
      ],
      messages: [/expected a list/, /scheme mailto/, /absolute http or https URL, got the string "42"/, /absolute http or https URL/],
    },
    'bad-elasticsearch.yml': {
      errors: ['TRAWL_ERR_CONFIG_YAML 3:14 output_sink', 'TRAWL_ERR_CONFIG_YAML 6:9 elasticsearch.port', 'TRAWL_ERR_CONFIG_YAML 8:21 elasticsearch.pipeline_enabled'],
      messages: [/needs output_index/, /contradicts the port 9200/, /true or false/],
    },
    'bad-proxy.yml': {
      errors: ['TRAWL_ERR_CONFIG_YAML 3:18 http_proxy_host', 'TRAWL_ERR_CONFIG_YAML 4:18 http_proxy_port', 'TRAWL_ERR_CONFIG_YAML 5:22 http_proxy_protocol'],
      messages: [/without scheme or port/, /1 to 65535, got 70000/, /http or https, got the string "socks"/],
    },
  };

  it('every invalid fixture has its expectations here', () => {
    assert.deepEqual(invalidFiles, Object.keys(expected).sort());
  });

  for (const [file, want] of Object.entries(expected)) {
    it(`${file}: ${want.errors.length} error(s) with code, line, column and key path`, () => {
      const { diagnostics, document, path } = readFixture(`invalid/${file}`);
      const errors = errorsOf(diagnostics);
      assert.deepEqual(brief(errors), want.errors);
      want.messages?.forEach((re, i) => assert.match(errors[i]!.message, re));
      for (const d of diagnostics) assert.equal(d.location?.file, path);
      assert.equal(document.collections.length, want.collections ?? 1);
    });
  }

  it('bad-urls.yml: a seed outside every domain is a warning', () => {
    const { diagnostics } = readFixture('invalid/bad-urls.yml');
    assert.deepEqual(brief(warningsOf(diagnostics)), ['TRAWL_ERR_CONFIG_YAML 7:9 domains[1].seed_urls[1]']);
    assert.match(warningsOf(diagnostics)[0]!.message, /outside every domain/);
  });

  it('keeps the good values of a file with errors', () => {
    const { document } = readFixture('invalid/bad-rules.yml');
    const c = document.collections[0]!;
    assert.deepEqual(at(c, 'include_domains|exact'), ['www.example.com']);
    // The one rule that is right: a begins pattern without "/", accepted (with a warning) and never matching.
    assert.deepEqual(at(c, 'trawl_crawl_rules|https://www.example.com|rules'), ['allow begins docs']);
  });
});

describe('Elastic crawler YAML: mapping details', () => {
  const one = 'domains:\n  - url: https://a.example\n';

  it('names the collection after crawl_id, else the file, else "default", sanitized', () => {
    assert.equal(yaml(`${one}crawl_id: "My Crawl #1"\n`).c!.name, 'My_Crawl_1');
    assert.equal(yaml(`${one}crawl_id: 42\n`).c!.name, '42');
    assert.equal(yaml(one, 'conf/site.crawler.yaml').c!.name, 'site.crawler');
    assert.equal(readElasticYaml(one).document.collections[0]!.name, 'default');
    assert.equal(yaml(`${one}crawl_id: "%%%"\n`, '&&&.yml').c!.name, 'default');
  });

  it('max_crawl_depth 1 crawls the seeds only: DEPTH:0', () => {
    assert.equal(at(yaml(`${one}max_crawl_depth: 1\n`).c, 'crawlmode|mode'), 'DEPTH:0');
  });

  it('accepts the App Search policy "disallow" and writes both deny spellings as disallow', () => {
    const { c, diagnostics } = yaml(`domains:
  - url: https://a.example
    crawl_rules:
      - {policy: disallow, type: begins, pattern: /x}
      - {policy: deny, type: ends, pattern: .zip}
      - {policy: allow, type: contains, pattern: "*"}
`);
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(at(c, 'trawl_crawl_rules|https://a.example|rules'), ['disallow begins /x', 'disallow ends .zip', 'allow contains *']);
  });

  it('sitemap_discovery_disabled: false turns sitemaps on; true without sitemap_urls leaves them off', () => {
    const on = yaml(`${one}sitemap_discovery_disabled: false\n`).c;
    assert.equal(at(on, 'use_sitemaps'), true);
    assert.equal(at(on, 'trawl_sitemaps|robots_discovery'), true);
    const off = yaml(`${one}sitemap_discovery_disabled: true\n`).c;
    assert.equal(at(off, 'use_sitemaps'), undefined);
    assert.equal(at(off, 'trawl_sitemaps|robots_discovery'), false);
  });

  it('the elasticsearch sink: the default sink, the default pipeline, host without scheme, pipeline_enabled false', () => {
    const a = yaml(`${one}output_index: idx\nelasticsearch.host: es.local\nelasticsearch.port: 9201\n`);
    assert.deepEqual(a.diagnostics, []);
    assert.deepEqual(Object.fromEntries(a.c!.root.sections.get('trawl_sinks')!.sections.get('elasticsearch')!.attribs), {
      type: 'elasticsearch',
      schema: 'open_crawler',
      index: 'idx',
      url: 'http://es.local:9201',
      pipeline: 'ent-search-generic-ingestion',
      pipeline_params: ['_reduce_whitespace=true', '_run_ml_inference=true', '_extract_binary_content=true'],
    });
    const b = yaml(`${one}output_sink: elasticsearch\noutput_index: idx\nelasticsearch:\n  host: https://es.example\n  api_key: 1234\n  pipeline: p\n  pipeline_enabled: false\n`);
    assert.deepEqual(brief(b.diagnostics), ['TRAWL_ERR_CONFIG_YAML 8:3 elasticsearch.pipeline']);
    const es = b.c!.root.sections.get('trawl_sinks')!.sections.get('elasticsearch')!;
    assert.equal(es.attribs.get('api_key'), '1234'); // a number in YAML, a key for the sink
    assert.equal(es.attribs.has('pipeline'), false);
  });

  it('the elasticsearch sink without a host is a warning; settings of an unused sink are reported', () => {
    const a = yaml(`${one}output_index: idx\n`);
    assert.deepEqual(brief(a.diagnostics), ['TRAWL_ERR_CONFIG_YAML 3:1 output_index']);
    assert.match(a.diagnostics[0]!.message, /no elasticsearch.host/);
    const b = yaml(`${one}output_sink: console\noutput_dir: out\noutput_index: idx\n`);
    assert.deepEqual(brief(b.diagnostics), ['TRAWL_ERR_CONFIG_YAML 4:1 output_dir', 'TRAWL_ERR_CONFIG_YAML 5:1 output_index']);
    assert.ok(b.diagnostics.every((d) => d.severity === 'warning' && /not applied/.test(d.message)));
    assert.deepEqual(Object.fromEntries(b.c!.root.sections.get('trawl_sinks')!.sections.get('console')!.attribs), { type: 'console', schema: 'open_crawler', console_format: 'open_crawler' });
    const file = yaml(`${one}output_sink: file\n`);
    assert.equal(at(file.c, 'trawl_sinks|file|output_dir'), './crawled_docs');
  });

  it('a dotted key and its block form are merged; the same leaf twice is an error', () => {
    const a = yaml(`${one}output_index: i\nelasticsearch:\n  host: h.example\nelasticsearch.port: 9200\n`);
    assert.equal(at(a.c, 'trawl_sinks|elasticsearch|url'), 'http://h.example:9200');
    const b = yaml(`${one}output_index: i\nelasticsearch:\n  host: h.example\nelasticsearch.host: g.example\n`);
    assert.deepEqual(brief(errorsOf(b.diagnostics)), ['TRAWL_ERR_CONFIG_YAML 6:1 elasticsearch.host']);
    assert.match(errorsOf(b.diagnostics)[0]!.message, /given twice \(first on line 5\)/);
  });

  it('reads anchors, aliases and << merge keys, as YAML 1.1 does', () => {
    const { c, diagnostics } = yaml(`domains:
  - &a
    url: https://a.example
    crawl_rules: &rules
      - {policy: deny, type: begins, pattern: /tmp}
  - <<: *a
    url: https://b.example
    seed_urls: [https://b.example/start]
`);
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(at(c, 'start_uris'), ['https://a.example/', 'https://b.example/start']);
    assert.deepEqual(at(c, 'trawl_crawl_rules|https://b.example|rules'), ['disallow begins /tmp']);
  });

  it('a proxy over https, or proxy settings without a host, are reported and not applied', () => {
    const a = yaml(`${one}http_proxy_host: p.example\nhttp_proxy_protocol: https\n`);
    assert.deepEqual(brief(a.diagnostics), ['TRAWL_ERR_CONFIG_UNSUPPORTED 4:1 http_proxy_protocol']);
    assert.equal(at(a.c, 'proxy'), undefined);
    const b = yaml(`${one}http_proxy_port: 3128\nhttp_proxy_password: x\n`);
    assert.deepEqual(brief(b.diagnostics), ['TRAWL_ERR_CONFIG_YAML 3:1 http_proxy_port', 'TRAWL_ERR_CONFIG_YAML 4:1 http_proxy_password']);
    const c = yaml(`${one}http_proxy_host: p.example\nhttp_proxy_username: a:b\nhttp_proxy_password: x\n`);
    assert.deepEqual(brief(c.diagnostics), ['TRAWL_ERR_CONFIG_UNSUPPORTED 4:1 http_proxy_username']);
    assert.equal(at(c.c, 'proxy'), undefined);
  });

  it('auth: basic and raw become the Authorization header of a sub-collection of the domain; credentials over plain http without http_auth_allowed are reported', () => {
    const text = (allowed: string) => `domains:
  - url: http://a.example
  - url: https://b.example
auth:
  - {domain: https://b.example, type: basic, username: u, password: p}
  - {domain: http://a.example, type: basic, username: v, password: q}
  - {domain: https://b.example, type: raw, header: "Bearer xyz"}
${allowed}`;
    const a = yaml(text(''));
    assert.equal(a.c!.root.sections.get('passwd'), undefined);
    assert.deepEqual(brief(a.diagnostics), ['TRAWL_ERR_CONFIG_YAML 6:5 auth[1]']);
    assert.deepEqual(at(a.c, 'subdomains|elastic_auth_1|include_uris|prefix'), ['https://b.example/']);
    assert.deepEqual(at(a.c, 'subdomains|elastic_auth_1|headers'), ['Authorization: Basic dTpw']);
    assert.deepEqual(at(a.c, 'subdomains|elastic_auth_2|headers'), ['Authorization: Bearer xyz']);
    assert.ok(!JSON.stringify(a.diagnostics).includes('xyz'));
    const b = yaml(text('http_auth_allowed: true\n'));
    assert.deepEqual(at(b.c, 'subdomains|elastic_auth_2|headers'), ['Authorization: Basic djpx']);
    assert.deepEqual(at(b.c, 'subdomains|elastic_auth_2|include_uris|prefix'), ['http://a.example/']);
  });

  it('a domain URL ending in "/" is read with a warning; seeds and hosts are normalised and listed once', () => {
    const { c, diagnostics } = yaml(`domains:
  - url: https://A.Example/
    seed_urls: [https://a.example/x, HTTPS://a.example/x]
  - url: http://a.example:8080
`);
    assert.deepEqual(brief(diagnostics), ['TRAWL_ERR_CONFIG_YAML 2:10 domains[0].url']);
    assert.equal(diagnostics[0]!.severity, 'warning');
    assert.deepEqual(at(c, 'start_uris'), ['https://a.example/x', 'http://a.example:8080/']);
    assert.deepEqual(at(c, 'include_domains|exact'), ['a.example']);
    assert.deepEqual(at(c, 'include_uris|prefix'), ['https://a.example/', 'http://a.example:8080/']);
  });

  it('schedule.pattern: refresh is the cron expression\'s period; a pinned time is a warning, a pattern without one period is not applied', () => {
    const cases: Array<[string, number | undefined, boolean]> = [
      ['* * * * *', 1, false], ['*/30 * * * *', 30, false], ['15 * * * *', 60, true], ['0 */6 * * *', 360, true],
      ['0 12 * * *', 1440, true], ['30 2 * * 1', 10080, true], ['@daily', 1440, true], ['@hourly', 60, true],
      ['0 12 1 * *', undefined, true], ['0,30 * * * *', undefined, true], ['0 9-17 * * *', undefined, true], ['0 12 * * 1-5', undefined, true],
    ];
    for (const [pattern, minutes, warned] of cases) {
      const { document, diagnostics } = yaml(`${one}schedule:\n  pattern: "${pattern}"\n`);
      const c = document.collections[0]!;
      assert.equal(c.root.attribs.get('refresh'), minutes, pattern);
      const w = diagnostics.filter((d) => d.param === 'schedule.pattern');
      assert.equal(w.length, warned ? 1 : 0, `${pattern}: ${JSON.stringify(w)}`);
      if (minutes === undefined) assert.match(w[0]!.message, /is not applied: trawl serve recrawls every refresh minutes/);
      assert.ok(diagnostics.every((d) => d.severity === 'warning'), pattern);
    }
    const other = yaml(`${one}schedule:\n  pattern: "*/5 * * * *"\n  timezone: UTC\n`);
    assert.deepEqual(brief(other.diagnostics), ['TRAWL_ERR_CONFIG_UNSUPPORTED 5:3 schedule.timezone']);
  });

  it('one warning for an unsupported key, however much it holds; a null value is a warning too', () => {
    const { diagnostics } = yaml(`${one}url_queue:\n  pattern: "0 * * * *"\n  extra: [1, 2, 3]\nmax_redirects:\n`);
    assert.deepEqual(brief(diagnostics), ['TRAWL_ERR_CONFIG_UNSUPPORTED 3:1 url_queue', 'TRAWL_ERR_CONFIG_YAML 6:1 max_redirects']);
    assert.match(diagnostics[1]!.message, /has no value and is not applied/);
  });

  it('top-level seed_urls and friends are not applied: they belong under domains', () => {
    const { diagnostics } = yaml(`${one}seed_urls: [https://a.example/x]\ndomain_allowlist: [https://a.example]\n`);
    assert.deepEqual(brief(diagnostics), ['TRAWL_ERR_CONFIG_UNSUPPORTED 3:1 seed_urls', 'TRAWL_ERR_CONFIG_UNSUPPORTED 4:1 domain_allowlist']);
    assert.match(diagnostics[0]!.message, /per domain under domains\[\]/);
  });

  it('warns that ERB templates are not evaluated', () => {
    const { diagnostics, c } = yaml(`${one}output_index: idx\nelasticsearch:\n  host: http://es\n  api_key: <%= ENV['ES_API_KEY'] %>\n`);
    assert.deepEqual(brief(diagnostics), ['TRAWL_ERR_CONFIG_UNSUPPORTED 6:12 elasticsearch.api_key']);
    assert.equal(diagnostics[0]!.collection, 'inline');
    assert.equal(at(c, 'trawl_sinks|elasticsearch|api_key'), "<%= ENV['ES_API_KEY'] %>");
  });

  it('never echoes a secret in a message', () => {
    const { diagnostics } = yaml(`${one}output_index: i\nelasticsearch:\n  host: h\n  password: [topsecret]\n`);
    assert.deepEqual(brief(errorsOf(diagnostics)), ['TRAWL_ERR_CONFIG_YAML 6:13 elasticsearch.password']);
    assert.ok(!JSON.stringify(diagnostics).includes('topsecret'));
  });

  it('never throws: garbage, alias bombs, deep nesting and odd keys are diagnostics', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...'bcdef'.split('').map((k, i) => `${k}: &${k} [${Array(10).fill(`*${'abcdef'[i]}`).join(', ')}]`)].join('\n');
    const inputs = ['\u0000\u0001[', bomb, `a: ${'['.repeat(300)}${']'.repeat(300)}`, '? [a, b]\n: c\n', '"x": 1\n1: 2\n', 'domains: *nope\n', '---\na: 1\n---\nb: 2\n', '\t- x'];
    for (const input of inputs) {
      const r = readElasticYaml(input, 'odd.yml');
      assert.ok(errorsOf(r.diagnostics).length > 0, JSON.stringify(input.slice(0, 40)));
      for (const d of r.diagnostics) {
        assert.equal(d.location?.file, 'odd.yml');
        assert.ok((d.location?.line ?? 0) >= 1 && (d.location?.column ?? 0) >= 1);
      }
    }
  });
});
