// Property-based tests of the Elastic crawler YAML reader (src/config/elastic-yaml.ts, load.ts):
// arbitrary text and bytes, generated documents with the crawler's real keys,
// anchors, aliases and merge keys, and alias bombs.
// Properties: never throws nor fails internally, every diagnostic names its
// file and line, no hang and linear cost on large inputs; an alias bomb is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Alias } from 'yaml';
import type { Diagnostic } from '../../src/config/diagnostics.ts';
import { readElasticYaml } from '../../src/config/elastic-yaml.ts';
import { readConfigBytes } from '../../src/config/load.ts';

const FILE = 'generated.yml';

function assertLocated(ds: readonly Diagnostic[], file: string): void {
  for (const d of ds) {
    assert.notEqual(d.code, 'TRAWL_ERR_INTERNAL', d.message);
    assert.ok(d.location, `no location: ${d.code} ${d.message}`);
    assert.equal(d.location.file, file, `wrong file: ${d.code} ${d.message}`);
    assert.ok(Number.isInteger(d.location.line) && d.location.line! >= 1, `no line: ${d.code} ${d.message}`);
    assert.ok(d.message.length > 0);
  }
}

/** Reads and checks the diagnostics; the time bound only catches a hang (a generous 5 s, the machine may be loaded). */
function readChecked(text: string): ReturnType<typeof readElasticYaml> {
  const t0 = performance.now();
  const r = readElasticYaml(text, FILE);
  const ms = performance.now() - t0;
  assert.ok(ms < 5000, `read took ${ms.toFixed(0)} ms`);
  assertLocated(r.diagnostics, FILE);
  return r;
}

/**
 * Reads make(n) and make(n / 10) and asserts the cost grows about linearly:
 * a tenfold input may cost at most 40 times as much (linear is 10, quadratic
 * 100). A ratio, not a time bound, so that a loaded machine slows both sides
 * alike. Returns the large input's result.
 */
function readLinear(make: (n: number) => string, n: number): ReturnType<typeof readElasticYaml> {
  const timed = (text: string): { ms: number; r: ReturnType<typeof readElasticYaml> } => {
    const t0 = performance.now();
    const r = readElasticYaml(text, FILE);
    return { ms: performance.now() - t0, r };
  };
  const smallText = make(n / 10);
  timed(smallText); // warm-up: the first read compiles the reader
  const small = Math.min(timed(smallText).ms, timed(smallText).ms);
  const large = timed(make(n));
  assert.ok(large.ms < 40 * small + 20, `${n} took ${large.ms.toFixed(0)} ms, ${n / 10} took ${small.toFixed(1)} ms`);
  assertLocated(large.r.diagnostics, FILE);
  return large.r;
}

// ------------------------------------------------------------ generators

const TOP_KEYS = ['domains', 'crawl_id', 'max_crawl_depth', 'sitemap_discovery_disabled', 'max_duration', 'max_unique_url_count', 'max_url_length', 'max_redirects',
  'max_response_size', 'request_timeout', 'compression_enabled', 'user_agent', 'max_title_size', 'max_extracted_links_count', 'loopback_allowed', 'output_sink',
  'output_dir', 'output_index', 'elasticsearch', 'elasticsearch.host', 'elasticsearch.port', 'http_proxy_host', 'http_proxy_port', 'http_proxy_protocol',
  'http_proxy_username', 'http_proxy_password', 'auth', 'http_auth_allowed', 'schedule', 'log_level', 'extraction_rulesets', 'typo_key'];
const DOMAIN_KEYS = ['url', 'seed_urls', 'sitemap_urls', 'crawl_rules', 'extraction_rulesets', 'exclude_tags', 'other'];
const RULE_KEYS = ['policy', 'type', 'pattern'];
const ES_KEYS = ['host', 'port', 'username', 'password', 'api_key', 'pipeline', 'pipeline_enabled', 'bulk_api'];
const AUTH_KEYS = ['domain', 'type', 'username', 'password', 'header'];

/** A YAML tree before it is written: scalars as they are written, maps, lists. */
type Tree = { s: string } | { m: [string, Tree][] } | { l: Tree[] };

const scalar: fc.Arbitrary<Tree> = fc.oneof(
  fc.constantFrom('https://a.example', 'http://b.example:8080', 'https://a.example/x', 'ftp://c.example', '/path', 'allow', 'deny', 'disallow', 'begins', 'ends',
    'contains', 'regex', 'basic', 'raw', 'file', 'console', 'elasticsearch', 'yes', 'no', 'true', 'false', '~', 'null', '0', '-1', '5_242_880', '0x1F', '1e3',
    '2147483648', '.inf', '.nan', "''", '""', '"\\u0000"', '"a\\nb"', "'<%= ENV['X'] %>'", '2024-01-01', '12:30:00', '!!str 5', '!!binary aGk=', '!custom x', '[]', '{}'),
  fc.integer().map(String),
  fc.string({ maxLength: 20 }).map((s) => JSON.stringify(s)),
).map((s) => ({ s }));

function mapOf(keys: readonly string[], value: fc.Arbitrary<Tree>): fc.Arbitrary<Tree> {
  return fc.array(fc.tuple(fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }).map((k) => JSON.stringify(k)) }), value), { maxLength: 6 }).map((m) => ({ m }));
}

const { tree } = fc.letrec<{ tree: Tree; rule: Tree; domain: Tree }>((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, mapOf(TOP_KEYS, tie('tree')), fc.array(tie('tree'), { maxLength: 4 }).map((l) => ({ l })),
    fc.array(tie('domain'), { maxLength: 3 }).map((l) => ({ l })), mapOf(ES_KEYS, scalar), fc.array(mapOf(AUTH_KEYS, scalar), { maxLength: 2 }).map((l) => ({ l }))),
  rule: mapOf(RULE_KEYS, scalar),
  domain: mapOf(DOMAIN_KEYS, fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }).map((l) => ({ l })), fc.array(tie('rule'), { maxLength: 3 }).map((l) => ({ l })))),
}));

const topLevel = mapOf(TOP_KEYS, tree);

/**
 * Writes a tree as block YAML. `marks` decides, node by node, whether it gets
 * an anchor, or is replaced by an alias to an earlier anchor, or (in a map)
 * gains a merge key; so aliases name anchors that exist, and now and then one that does not.
 */
function emit(t: Tree, marks: number[]): string {
  let anchors = 0;
  let i = 0;
  const next = (): number => marks[i++ % marks.length] ?? 0;
  const node = (n: Tree, indent: string): string => {
    const mark = next();
    if (mark === 1 && anchors > 0) return ` *a${next() % (anchors + 1)}`; // may name the one not yet defined
    const anchor = mark === 2 ? ` &a${anchors++}` : '';
    if ('s' in n) return `${anchor} ${n.s}`;
    if ('l' in n) {
      if (n.l.length === 0) return `${anchor} []`;
      return `${anchor}\n${n.l.map((x) => `${indent}-${node(x, `${indent}  `)}`).join('\n')}`;
    }
    if (n.m.length === 0) return `${anchor} {}`;
    const merge = mark === 3 && anchors > 0 ? `\n${indent}<<: *a${next() % anchors}` : '';
    return `${anchor}${merge}\n${n.m.map(([k, v]) => `${indent}${k}:${node(v, `${indent}  `)}`).join('\n')}`;
  };
  if ('m' in t) return t.m.map(([k, v]) => `${k}:${node(v, '  ')}`).join('\n') + '\n';
  return `${node(t, '')}\n`;
}

const yamlDoc = fc.tuple(topLevel, fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 30 })).map(([t, marks]) => emit(t, marks));

/** YAML-ish text: the characters and tokens of YAML's syntax in random order. */
const yamlSoup = fc.array(fc.constantFrom('domains:', '- url: ', 'https://a.example', '\n', '  ', '- ', ': ', '&a ', '*a', '<<: ', '{', '}', '[', ']', ',', '"', "'", '#', '---\n',
  '...\n', '!!map ', '!tag ', '|\n', '>-\n', '? ', '%YAML 1.1\n', '%TAG ! x\n', '\t', 'seed_urls:', 'x', '\uFEFF', '\u0000', '\r'), { maxLength: 60 }).map((a) => a.join(''));

// ------------------------------------------------------------ properties

describe('Elastic YAML reader: generated input', () => {
  it('arbitrary strings: never throws, every diagnostic located', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => {
      readChecked(s);
    }), { numRuns: 300 });
  });

  it('YAML-ish token soup: never throws, every diagnostic located', () => {
    fc.assert(fc.property(yamlSoup, (s) => {
      readChecked(s);
    }), { numRuns: 400 });
  });

  it('arbitrary bytes through the loader: every diagnostic located', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), fc.constantFrom(...([[], [0xef, 0xbb, 0xbf]] as number[][])), (bytes, bom) => {
      const r = readConfigBytes(new Uint8Array([...bom, ...bytes]), FILE, 'yaml');
      assertLocated(r.diagnostics, FILE);
    }), { numRuns: 300 });
  });

  it('regression: a YAML file that is not UTF-8 names the line of its first bad byte', () => {
    const bytes = new Uint8Array([...Buffer.from('domains:\n  - url: https://a.example\ncrawl_id: caf'), 0xe9, 0x0a]);
    const r = readConfigBytes(bytes, FILE, 'yaml');
    assert.deepEqual(r.diagnostics.map((d) => [d.code, d.location?.file, d.location?.line]), [['TRAWL_ERR_CONFIG_ENCODING', FILE, 3]]);
    assert.match(r.diagnostics[0]!.message, /first bad byte at offset 49/);
  });

  it('generated crawler configurations with anchors, aliases and merge keys: never throws, every diagnostic located', () => {
    fc.assert(fc.property(yamlDoc, (text) => {
      const r = readChecked(text);
      assert.ok(r.document.collections.length <= 1);
    }), { numRuns: 250 });
  });

  it('a valid generated configuration reads without errors, and its seeds become start_uris', () => {
    const host = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}\.example$/);
    const path = fc.stringMatching(/^(\/[a-z0-9._~-]{1,8}){0,3}$/);
    const domain = fc.record({ scheme: fc.constantFrom('http', 'https'), host, paths: fc.uniqueArray(path, { maxLength: 4 }) });
    const config = fc.record({
      domains: fc.uniqueArray(domain, { minLength: 1, maxLength: 3, selector: (d) => `${d.scheme}://${d.host}` }),
      depth: fc.option(fc.integer({ min: 1, max: 100 })),
    });
    fc.assert(fc.property(config, (g) => {
      const lines = ['domains:'];
      const seeds: string[] = [];
      for (const d of g.domains) {
        lines.push(`  - url: ${d.scheme}://${d.host}`);
        if (d.paths.length > 0) lines.push('    seed_urls:');
        for (const p of d.paths) {
          lines.push(`      - ${d.scheme}://${d.host}${p}`);
          seeds.push(`${d.scheme}://${d.host}${p}`);
        }
        if (d.paths.length === 0) seeds.push(`${d.scheme}://${d.host}/`);
      }
      if (g.depth !== null) lines.push(`max_crawl_depth: ${g.depth}`);
      const r = readChecked(lines.join('\n'));
      assert.deepEqual(r.diagnostics.filter((d) => d.severity === 'error'), [], lines.join('\n'));
      const c = r.document.collections[0]!;
      assert.deepEqual([...(c.root.attribs.get('start_uris') as string[])].sort(), [...new Set(seeds.map((u) => new URL(u).href))].sort());
    }), { numRuns: 150 });
  });
});

describe('Elastic YAML reader: alias bombs and size', () => {
  /** Billion laughs: each level a list of `width` aliases to the one before. */
  function bomb(levels: number, width: number): string {
    const lines = ['domains:', '  - url: https://a.example', 'l0: &l0 ["lol", "lol", "lol"]'];
    for (let i = 1; i <= levels; i++) lines.push(`l${i}: &l${i} [${Array.from({ length: width }, () => `*l${i - 1}`).join(', ')}]`);
    return lines.join('\n');
  }

  it('an alias bomb is refused with a located error, in bounded time', () => {
    fc.assert(fc.property(fc.integer({ min: 4, max: 30 }), fc.integer({ min: 5, max: 12 }), (levels, width) => {
      // Only bombs that expand beyond the reader's node budget (100,000) must be refused.
      fc.pre(3 * width ** levels > 200_000);
      const r = readChecked(bomb(levels, width));
      assert.equal(r.document.collections.length, 0);
      assert.ok(r.diagnostics.some((d) => d.severity === 'error' && /aliases are expanded/.test(d.message)), JSON.stringify(r.diagnostics));
    }), { numRuns: 20 });
  });

  it('regression: the classic nine-level billion laughs is refused, each alias resolved once', () => {
    // Alias.resolve walks the whole document; called for every expanded alias,
    // a wide bomb took seconds to reach the node budget.
    const resolve = Alias.prototype.resolve;
    let calls = 0;
    Alias.prototype.resolve = function (this: Alias, ...args: Parameters<Alias['resolve']>) {
      calls++;
      return resolve.apply(this, args);
    };
    let r;
    try {
      r = readChecked(bomb(9, 9));
    } finally {
      Alias.prototype.resolve = resolve;
    }
    assert.ok(calls <= 81, `${calls} alias resolutions for 81 aliases`);
    assert.equal(r.document.collections.length, 0);
    assert.match(r.diagnostics[0]!.message, /too large or too deeply nested once aliases are expanded/);
    assert.deepEqual([r.diagnostics[0]!.location?.file, r.diagnostics[0]!.location?.line], [FILE, 1]);
  });

  it('merge keys that repeat a large mapping are bounded too', () => {
    const big = Array.from({ length: 2000 }, (_, i) => `  k${i}: ${i}`).join('\n');
    const merges = Array.from({ length: 200 }, (_, i) => `m${i}:\n  <<: *big`).join('\n');
    const r = readChecked(`big: &big\n${big}\n${merges}\n`);
    assert.ok(r.diagnostics.some((d) => /aliases are expanded/.test(d.message)));
  });

  it('regression: many keys are read in linear time (duplicate keys found without comparing each pair)', () => {
    // 20,000 keys took seconds when the yaml package checked unique keys pair by pair.
    const keys = (n: number): string => Array.from({ length: n }, (_, i) => `k${i}: ${i}`).join('\n');
    const r = readLinear((n) => `domains:\n  - url: https://a.example\n${keys(n)}\n`, 20_000);
    assert.equal(r.diagnostics.filter((d) => /unknown key/.test(d.message)).length, 20_000);
  });

  it('a repeated key is still an error at its line, naming the first', () => {
    const r = readChecked('domains:\n  - url: https://a.example\nmax_redirects: 3\nmax_redirects: 4\n');
    const e = r.diagnostics.filter((d) => d.severity === 'error');
    assert.equal(e.length, 1);
    assert.equal(e[0]!.location?.line, 4);
    assert.match(e[0]!.message, /Map keys must be unique; "max_redirects" is given twice \(first on line 3\)/);
  });

  it('a huge unknown key costs no quadratic "did you mean"', () => {
    // An explicit key (?): a plain implicit key is at most 1024 characters in YAML.
    const r = readLinear((n) => `? ${'q'.repeat(n)}\n: 1\ndomains:\n  - url: https://a.example\n`, 500_000);
    assert.ok(r.diagnostics.some((d) => /unknown key/.test(d.message)));
  });
});
