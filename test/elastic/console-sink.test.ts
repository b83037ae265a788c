// The console sink as the Elastic Open Crawler prints crawl results (lib/crawler/output_sink/console.rb):
// an Elastic YAML collection with `output_sink: console` prints, per document, "# <id>, <url>, <status>"
// and then the page as the site sent it, or for a binary file the "Content extractable file" line;
// an MS-FSCCFG collection's console sink keeps trawl's JSON lines.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { consoleEntries } from '../support/open-crawler-console.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const HOME = '<!doctype html>\n<html><head><title>Home</title></head>\n<body><h1>Home</h1>\n<p>caf\u00e9 &amp; <b>bar</b></p>\n<a href="/a.html">a</a> <a href="/doc.pdf">pdf</a> <a href="/notes.txt">notes</a> <a href="/gone.html">gone</a>\n</body></html>';
const A = '<!doctype html><html><head><title>A</title></head><body><p>Page A</p></body></html>';
const PDF = new Uint8Array(Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n', 'latin1'));

describe('console sink: the Open Crawler\'s output for an Elastic YAML collection', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-elastic-console-'));
  let site: FixtureSite;
  let origin = '';
  before(async () => {
    site = await startFixtureSite([{
      ip: '127.0.134.171',
      routes: {
        '/': { kind: 'html', body: HOME },
        '/a.html': { kind: 'html', body: A },
        '/doc.pdf': { kind: 'binary', bytes: PDF, contentType: 'application/pdf' },
        '/notes.txt': { kind: 'text', body: 'not indexed by the Open Crawler\n' },
        '/gone.html': { kind: 'status', status: 404 },
      },
    }]);
    origin = site.hosts[0]!.origin;
  });
  after(async () => {
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('"# id, url, status", then the page as fetched; a binary file as its content-type line; nothing else', async () => {
    const file = join(dir, 'console.yml');
    writeFileSync(file, `domains:\n  - url: ${origin}\nloopback_allowed: true\noutput_sink: console\nbinary_content_extraction_enabled: true\nbinary_content_extraction_mime_types:\n  - application/pdf\n`);
    const r = await runTrawl(['crawl', '--data', join(dir, 'data'), '--feed-timeout', '30', file], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.err);
    const entries = consoleEntries(r.out);
    const byUrl = new Map(entries.map((e) => [e.url, e]));
    // The 404 and the text file (not among the binary types) are not printed; each document once.
    assert.deepEqual(entries.map((e) => e.url).sort(), [`${origin}/`, `${origin}/a.html`, `${origin}/doc.pdf`]);
    for (const e of entries) {
      assert.equal(e.status, '200');
      assert.equal(e.id, createHash('sha1').update(e.url).digest('hex'), 'the id of the document in the other sinks');
    }
    assert.equal(byUrl.get(`${origin}/`)!.content, HOME, 'the page exactly as the site sent it');
    assert.equal(byUrl.get(`${origin}/a.html`)!.content, A);
    assert.equal(byUrl.get(`${origin}/doc.pdf`)!.content, `** [Content extractable file (content type: application/pdf, content length: ${PDF.length})] **`);
    assert.doesNotMatch(r.out, /^\{/m, 'no JSON lines');
  });

  it('the same collection converted to MS-FSCCFG XML keeps the format; console_format json prints JSON lines', async () => {
    const yml = join(dir, 'conv.yml');
    writeFileSync(yml, `domains:\n  - url: ${origin}\nloopback_allowed: true\noutput_sink: console\n`);
    const conv = await runTrawl(['config', 'convert', '--to', 'xml', yml], { timeoutMs: 60_000 });
    assert.equal(conv.code, 0, conv.err);
    assert.match(conv.out, /<attrib name="console_format" type="string"> open_crawler <\/attrib>/);
    const xml = join(dir, 'conv.xml');
    writeFileSync(xml, conv.out.replace('<attrib name="console_format" type="string"> open_crawler </attrib>', '<attrib name="console_format" type="string"> json </attrib>'));
    const r = await runTrawl(['crawl', '--data', join(dir, 'data-json'), '--feed-timeout', '30', xml], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trim().split('\n').map((l) => JSON.parse(l) as { op: string; url: string; body?: string });
    assert.deepEqual(lines.map((l) => l.url).sort(), [`${origin}/`, `${origin}/a.html`]);
    assert.ok(lines.every((l) => l.op === 'index'));
    assert.equal(lines.find((l) => l.url === `${origin}/a.html`)!.body, 'Page A', 'the open_crawler schema, as JSON');
  });
});
