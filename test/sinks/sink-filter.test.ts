// Every sink's filter (accept_pattern, accept_types, hub_link_indicator):
// the crawl fetches and parses every page, a filtered sink keeps only what
// matches and the hubs. Real `trawl crawl` runs against a loopback site.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { startFixtureSite } from '../support/fixture-site.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const pdf = (name: string): Uint8Array => new TextEncoder().encode(`%PDF-1.4 paper ${name}\n%%EOF\n`);

function config(dir: string, start: string, sinks: string): string {
  const path = join(dir, 'filtered.xml');
  writeFileSync(path, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="filtered">
    <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
    <attrib name="delay" type="real">0</attrib>
    <attrib name="allowed_types" type="list-string"><member>text/html</member><member>text/plain</member><member>application/pdf</member></attrib>
    <section name="trawl_sinks">${sinks}</section>
  </DomainSpecification></CrawlerConfig>`);
  return path;
}

const str = (name: string, value: string): string => `<attrib name="${name}" type="string">${value}</attrib>`;
const list = (name: string, ...values: string[]): string => `<attrib name="${name}" type="list-string">${values.map((v) => `<member>${v}</member>`).join('')}</attrib>`;

/** The URLs of the documents a file sink holds. */
function urlsIn(dir: string): string[] {
  const coll = join(dir, 'filtered');
  if (!existsSync(coll)) return [];
  return readdirSync(coll).filter((n) => n.endsWith('.json')).map((n) => (JSON.parse(readFileSync(join(coll, n), 'utf8')) as { url: string }).url).sort();
}

describe('sink filters', () => {
  it('keep in a sink only the documents that match and the hubs, while the crawl still fetches and parses every page', async () => {
    const site = await startFixtureSite([{
      ip: '127.0.31.21',
      routes: {
        '/': { kind: 'html', body: '<a href="/list.html">papers</a> <a href="/about.html">about</a>' },
        '/list.html': { kind: 'html', body: '<a href="/papers/a.pdf">a</a> <a href="/notes.txt">notes</a>' },
        '/about.html': { kind: 'html', body: '<a href="/deep.html">deeper</a>' },
        '/deep.html': { kind: 'html', body: '<a href="/papers/b.pdf">b</a>' },
        '/papers/a.pdf': { kind: 'binary', bytes: pdf('/papers/a.pdf'), contentType: 'application/pdf' },
        '/papers/b.pdf': { kind: 'binary', bytes: pdf('/papers/b.pdf'), contentType: 'application/pdf' },
        '/notes.txt': { kind: 'text', body: 'notes' },
      },
    }]);
    const h = site.host('127.0.31.21');
    const dir = tempDir('trawl-sink-filter-');
    const kept = join(dir, 'kept');
    const all = join(dir, 'all');
    const cfg = config(dir, h.url('/'),
      `<section name="kept">${str('type', 'file')}${str('output_dir', kept)}${list('accept_types', 'application/pdf')}${str('hub_link_indicator', '.*\\.pdf')}</section>`
      + `<section name="all">${str('type', 'file')}${str('output_dir', all)}</section>`);
    try {
      const r = await runTrawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', cfg], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      // Every page was fetched: the PDF behind two HTML pages no sink keeps too.
      assert.deepEqual([...new Set(h.requests.map((q) => q.path))].sort(), ['/', '/about.html', '/deep.html', '/list.html', '/notes.txt', '/papers/a.pdf', '/papers/b.pdf', '/robots.txt']);
      assert.deepEqual(urlsIn(kept), [h.url('/deep.html'), h.url('/list.html'), h.url('/papers/a.pdf'), h.url('/papers/b.pdf')], 'the PDFs and the pages linking them');
      assert.equal(urlsIn(all).length, 7, 'a sink without a filter keeps every document');

      // A hub that stops linking papers is removed from the filtered sink only.
      site.setRoute('127.0.31.21', '/list.html', { kind: 'html', body: '<a href="/notes.txt">notes</a>' });
      const again = await runTrawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', cfg], { timeoutMs: 120_000 });
      assert.equal(again.code, 0, again.err);
      assert.deepEqual(urlsIn(kept), [h.url('/deep.html'), h.url('/papers/a.pdf'), h.url('/papers/b.pdf')]);
      assert.equal(urlsIn(all).length, 7);
    } finally {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('accept_pattern and accept_types together: a document must match both; bad values are refused naming the parameter', async () => {
    const site = await startFixtureSite([{
      ip: '127.0.31.22',
      routes: {
        '/': { kind: 'html', body: '<a href="/a.pdf">a</a> <a href="/x/b.pdf">b</a> <a href="/x/c.txt">c</a>' },
        '/a.pdf': { kind: 'binary', bytes: pdf('/a.pdf'), contentType: 'application/pdf' },
        '/x/b.pdf': { kind: 'binary', bytes: pdf('/x/b.pdf'), contentType: 'application/pdf' },
        '/x/c.txt': { kind: 'text', body: 'c' },
      },
    }]);
    const h = site.host('127.0.31.22');
    const dir = tempDir('trawl-sink-filter-');
    const out = join(dir, 'out');
    try {
      const cfg = config(dir, h.url('/'), `<section name="s">${str('type', 'file')}${str('output_dir', out)}${str('accept_pattern', '.*/x/.*')}${list('accept_types', 'application/*')}</section>`);
      const r = await runTrawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', cfg], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(urlsIn(out), [h.url('/x/b.pdf')]);

      const bad = config(dir, h.url('/'), `<section name="s">${str('type', 'file')}${str('output_dir', out)}${str('hub_link_indicator', '(pdf')}</section>`);
      const b = await runTrawl(['crawl', '--data', join(dir, 'data2'), '--allow-loopback', bad], { timeoutMs: 120_000 });
      assert.notEqual(b.code, 0);
      assert.match(b.err, /trawl_sinks\.s\.hub_link_indicator \/\(pdf\/ is not a valid regular expression/);
      const badType = config(dir, h.url('/'), `<section name="s">${str('type', 'file')}${str('output_dir', out)}${list('accept_types', 'pdf')}</section>`);
      const c = await runTrawl(['crawl', '--data', join(dir, 'data3'), '--allow-loopback', badType], { timeoutMs: 120_000 });
      assert.notEqual(c.code, 0);
      assert.match(c.err, /accept_types/);
    } finally {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
