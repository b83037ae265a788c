// Output sinks as an Elastic Open Crawler YAML configures them, crawling a loopback site:
// `output_sink: file` writes the Open Crawler's file names under output_dir;
// `output_sink: elasticsearch` sends to the _bulk stand-in (test/support/es-standin.ts)
// with the pipeline, pipeline_params, credentials and bulk_api sizes, over HTTPS
// with ca_path or ssl_verify false. (The YAML sets the trawl_sinks parameters file_naming url,
// pipeline_params, bulk_max_items, bulk_max_bytes, ssl_verify and ca_path.)
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SearchDocument } from '../../src/sinks/document.ts';
import { ElasticsearchSink } from '../../src/sinks/elasticsearch-sink.ts';
import { elasticFileName } from '../../src/sinks/file-sink.ts';
import { actions, StandIn } from '../support/es-standin.ts';
import { startFixtureSite, type FixtureSite, type RouteSpec } from '../support/fixture-site.ts';
import { makePki } from '../support/nginx-tls.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const page = (title: string, links: string[] = []): RouteSpec => ({
  kind: 'html',
  body: `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`,
});

describe('Elastic YAML output sinks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-elastic-sinks-'));
  let site: FixtureSite;
  let origin = '';
  before(async () => {
    site = await startFixtureSite([{ ip: '127.0.134.31', routes: { '/': page('home', ['/a.html', '/b/c.html?x=1']), '/a.html': page('a'), '/b/c.html?x=1': page('c') } }]);
    origin = site.hosts[0]!.origin;
  });
  after(async () => {
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function crawl(name: string, yaml: string) {
    const file = join(dir, `${name}.yml`);
    writeFileSync(file, `domains:\n  - url: ${origin}\nloopback_allowed: true\n${yaml}`);
    return runTrawl(['crawl', '--data', join(dir, `${name}-data`), '--feed-timeout', '30', file], { timeoutMs: 120_000 });
  }

  it('the Open Crawler\'s file names', () => {
    assert.equal(elasticFileName('https://www.example.com/'), 'example_com');
    assert.equal(elasticFileName('http://example.com/a/b.html?q=1&r=2'), 'example_com_a_b_html_q_1_r_2');
    assert.equal(elasticFileName('https://example.com/--x__y'), 'example_com_--x_y');
    const long = elasticFileName(`https://example.com/${'a'.repeat(400)}`);
    assert.equal(long.length, 250);
    assert.ok(long.startsWith('example_com_aaa'));
  });

  it('output_sink file: one <name from the URL>.json per page, directly under output_dir', async () => {
    const out = join(dir, 'crawled');
    const r = await crawl('file', `output_sink: file\noutput_dir: ${out}\n`);
    assert.equal(r.code, 0, r.err);
    const host = new URL(origin).host.replace(/[.:]/g, '_');
    assert.deepEqual(readdirSync(out).sort(), [`${host}.json`, `${host}_a_html.json`, `${host}_b_c_html_x_1.json`]);
    const doc = JSON.parse(readFileSync(join(out, `${host}_a_html.json`), 'utf8')) as { url: string };
    assert.equal(doc.url, `${origin}/a.html`);
  });

  it('output_sink elasticsearch: the pipeline with its params, the api key, and bulk_api.max_items requests', async () => {
    const es = new StandIn();
    await es.start('127.0.134.32');
    try {
      const r = await crawl('es', `output_sink: elasticsearch\noutput_index: web\nelasticsearch:\n  host: ${es.url}\n  api_key: a2V5\n  pipeline: my-pipe\n  pipeline_params:\n    _run_ml_inference: false\n    my_flag: 3\n    custom.flag: on\n  bulk_api:\n    max_items: 1\n    max_size_bytes: 1_000_000\n`);
      assert.equal(r.code, 0, r.err);
      const docs = es.received.flatMap((q) => q.lines.filter((_, i) => i % 2 === 1)) as Array<Record<string, unknown>>;
      assert.equal(docs.length, 3);
      // bulk_api.max_items 1: one request per document, each through the pipeline, with the key.
      assert.ok(es.received.length >= 3);
      for (const q of es.received) {
        assert.equal(actions(q).length, 1);
        assert.equal(q.path, '/_bulk?pipeline=my-pipe');
        assert.equal(q.headers.authorization, 'ApiKey a2V5');
        assert.equal((q.lines[0] as { index: { _index: string } }).index._index, 'web');
      }
      for (const d of docs) {
        assert.equal(d._reduce_whitespace, true);
        assert.equal(d._run_ml_inference, false);
        assert.equal(d._extract_binary_content, true);
        assert.equal(d.my_flag, 3);
        assert.equal(d['custom.flag'], true); // a dotted key: a field of an object, as Elasticsearch reads the name
      }
    } finally {
      await es.stop();
    }
  });

  it('bulk_api.max_size_bytes: a batch is split so that no request is larger, one document at least per request', async () => {
    const es = new StandIn();
    await es.start('127.0.134.35');
    try {
      const sink = new ElasticsearchSink('es', { url: es.url, index: 'web', bulkMaxBytes: 600 });
      const mk = (n: number) => ({ op: 'index' as const, doc: { id: `id${n}`, url: `http://a.test/${n}`, collection: 'c', body: 'x'.repeat(200) } as unknown as SearchDocument });
      const r = await sink.submit([mk(1), mk(2), mk(3), mk(4)]);
      assert.deepEqual(r.rejected, []);
      assert.ok(es.received.length >= 2, `${es.received.length} requests`);
      for (const q of es.received) assert.ok(Buffer.byteLength(q.raw) <= 600 || actions(q).length === 1, `${Buffer.byteLength(q.raw)} bytes`);
      assert.deepEqual(es.received.flatMap((q) => q.lines.filter((_, i) => i % 2 === 0).map((l) => (l as { index: { _id: string } }).index._id)), ['id1', 'id2', 'id3', 'id4']);
      await sink.close();
    } finally {
      await es.stop();
    }
  });

  it('pipeline_enabled false: no pipeline and no pipeline params; username and password as Basic', async () => {
    const es = new StandIn();
    await es.start('127.0.134.33');
    try {
      const r = await crawl('es-nopipe', `output_index: web\nelasticsearch.host: ${es.url}\nelasticsearch.username: elastic\nelasticsearch.password: changeme\nelasticsearch.pipeline_enabled: false\n`);
      assert.equal(r.code, 0, r.err);
      assert.ok(es.received.length >= 1);
      for (const q of es.received) {
        assert.equal(q.path, '/_bulk');
        assert.equal(q.headers.authorization, `Basic ${Buffer.from('elastic:changeme').toString('base64')}`);
        for (const d of q.lines.filter((_, i) => i % 2 === 1) as Array<Record<string, unknown>>) assert.equal('_reduce_whitespace' in d, false);
      }
    } finally {
      await es.stop();
    }
  });

  it('over HTTPS: ca_path trusts the CA; without it the certificate is refused; ssl_verify false sends anyway', { skip: skipUnless(TOOLS.openssl) }, async () => {
    const pki = makePki(join(dir, 'pki'), '127.0.134.34');
    const es = new StandIn();
    await es.start('127.0.134.34', { key: readFileSync(pki.serverKey, 'utf8'), cert: readFileSync(pki.serverCert, 'utf8') });
    try {
      const base = `output_index: web\nelasticsearch.host: ${es.url}\nelasticsearch.pipeline_enabled: false\n`;
      const trusted = await crawl('es-ca', `${base}elasticsearch.ca_path: ${pki.caCert}\n`);
      assert.equal(trusted.code, 0, trusted.err);
      const afterTrusted = es.received.length;
      assert.ok(afterTrusted >= 1);

      const untrusted = await runTrawl(['crawl', '--data', join(dir, 'es-noca-data'), '--feed-timeout', '2', (writeFileSync(join(dir, 'es-noca.yml'), `domains:\n  - url: ${origin}\nloopback_allowed: true\n${base}`), join(dir, 'es-noca.yml'))], { timeoutMs: 120_000 });
      assert.equal(untrusted.code, 3, untrusted.err);
      assert.match(untrusted.err, /certificate/i);
      assert.equal(es.received.length, afterTrusted);

      const unverified = await crawl('es-noverify', `${base}elasticsearch.ssl_verify: false\n`);
      assert.equal(unverified.code, 0, unverified.err);
      assert.ok(es.received.length > afterTrusted);
    } finally {
      await es.stop();
    }
  });
});
