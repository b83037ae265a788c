// `trawl export --document --schema`: the search document in either schema, the
// default being the one the collection's sinks write (open_crawler for Elastic
// YAML, app_search for MS-FSCCFG), checked against what the file sink wrote.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { runTrawl } from '../support/trawl-cli.ts';

interface Line { url: string; document?: Record<string, unknown>; documentMissing?: string }

const PAGE = '<!doctype html><html><head><title>Guide</title><meta name="description" content="How to"></head><body><h1>Guide</h1><p>Read the guide.</p><a href="/b.html">b</a> <a href="/f.pdf">f</a></body></html>';

describe('trawl export --document --schema', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-export-schema-'));
  let site: FixtureSite;
  let origin = '';
  after(async () => {
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  before(async () => {
    site = await startFixtureSite([{ ip: '127.0.172.1', routes: { '/a.html': { kind: 'html', body: PAGE }, '/b.html': { kind: 'html', body: '<html><head><title>B</title></head><body>bee</body></html>' }, '/f.pdf': { kind: 'binary', bytes: Buffer.from('%PDF-1.4 not much'), contentType: 'application/pdf' } } }]);
    origin = site.hosts[0]!.origin;
    writeFileSync(join(dir, 'c.yml'), `domains:
  - url: ${origin}
    seed_urls: [${origin}/a.html]
loopback_allowed: true
output_sink: file
output_dir: ${join(dir, 'out')}
`);
    const yaml = await runTrawl(['crawl', '--data', join(dir, 'yaml'), join(dir, 'c.yml')], { timeoutMs: 90_000 });
    assert.equal(yaml.code, 0, yaml.err);
    const xml = await runTrawl(['crawl', '--allow-loopback', '--data', join(dir, 'xml'), `${origin}/a.html`], { timeoutMs: 90_000 });
    assert.equal(xml.code, 0, xml.err);
  });

  const exported = async (data: string, ...args: string[]): Promise<Map<string, Line>> => {
    const r = await runTrawl(['export', '--data', join(dir, data), '--document', '--no-body', ...args], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.err);
    return new Map(r.out.trim().split('\n').map((l) => JSON.parse(l) as Line).map((l) => [l.url, l]));
  };

  it('an Elastic YAML collection exports the open_crawler document by default: the one its file sink wrote, field for field', async () => {
    const got = await exported('yaml');
    assert.deepEqual([...got.keys()].sort(), [`${origin}/a.html`, `${origin}/b.html`]);
    const doc = got.get(`${origin}/a.html`)!.document!;
    assert.equal(doc.body, 'Guide Read the guide. b f');
    assert.equal(doc.url_port, site.hosts[0]!.port);
    assert.equal(doc.body_content, undefined);
    // The file sink's document for the same page (its own file under output_dir).
    const files = readdirSync(join(dir, 'out'), { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
    const written = files.map((f) => JSON.parse(readFileSync(join(f.parentPath, f.name), 'utf8')) as Record<string, unknown>).find((d) => d.url === `${origin}/a.html`);
    assert.ok(written, `no file sink document for a.html among ${files.map((f) => f.name).join(', ')}`);
    const { last_crawled_at: _a, ...mine } = doc;
    const { last_crawled_at: _b, ...theirs } = written;
    assert.deepEqual(mine, theirs);
  });

  it('--schema app_search gives the same Elastic YAML collection\'s pages in the App Search schema', async () => {
    const doc = (await exported('yaml', '--schema', 'app_search')).get(`${origin}/a.html`)!.document!;
    assert.match(String(doc.body_content), /Read the guide\./);
    assert.equal(doc.url_port, String(site.hosts[0]!.port));
    assert.equal(doc.body, undefined);
    assert.equal(doc.meta_description, 'How to');
  });

  it('an MS-FSCCFG collection exports app_search by default, and open_crawler with --schema open_crawler', async () => {
    const plain = (await exported('xml')).get(`${origin}/a.html`)!.document!;
    assert.match(String(plain.body_content), /Read the guide\./);
    assert.equal(plain.body, undefined);
    assert.equal(typeof (await exported('xml')).get(`${origin}/f.pdf`)!.document!.body_base64, 'string');
    const ocs = await exported('xml', '--schema', 'open_crawler');
    const oc = ocs.get(`${origin}/a.html`)!.document!;
    assert.equal(oc.body, 'Guide Read the guide. b f');
    assert.equal(oc.url_port, site.hosts[0]!.port);
    assert.equal(oc.title, 'Guide');
    // A file the open_crawler schema does not index (no binary_mime_types): no document, and why.
    const pdf = ocs.get(`${origin}/f.pdf`)!;
    assert.equal(pdf.document, undefined);
    assert.match(pdf.documentMissing!, /open_crawler schema does not index application\/pdf/);
  });

  it('an unknown --schema is a usage error naming the schemas', async () => {
    const r = await runTrawl(['export', '--data', join(dir, 'xml'), '--document', '--schema', 'solr'], { timeoutMs: 60_000 });
    assert.notEqual(r.code, 0);
    assert.match(r.err, /--schema "solr": expected one of app_search, open_crawler/);
    assert.equal(r.out, '');
  });
});
