// The search documents `trawl crawl` writes to file sinks from real pages on
// loopback, in each schema: app_search (an MS-FSCCFG collection's default)
// and open_crawler (an Elastic YAML collection's), with the content rules,
// custom fields, extraction rulesets and binary files of the Elastic
// crawlers. What the crawl fetched is read from the site's own request log.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { runTrawl } from '../support/trawl-cli.ts';

/** Every JSON document under a sink's directory, by its url. */
function documents(dir: string): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  const walk = (d: string, depth: number): void => {
    if (!existsSync(d) || depth > 4) return;
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p, depth + 1);
      else if (name.endsWith('.json')) {
        const doc = JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;
        out.set(doc.url as string, doc);
      }
    }
  };
  walk(dir, 0);
  return out;
}

const PDF = new TextEncoder().encode('%PDF-1.4 a tiny file');
const DOC = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

function site(ip: string): Promise<FixtureSite> {
  return startFixtureSite([{
    ip,
    routes: {
      '/': {
        kind: 'html', body: `<html><head><title>Home</title>
        <base href="/docs/"><base href="/elsewhere/">
        <meta name="description" content="The  home page">
        <meta class="elastic" name="product_price" content="99.99">
        <meta class="swiftype" name="maker" content="Acme">
        </head><body>
        test1
        <div data-elastic-exclude>
          test2 <a href="hidden.html">hidden</a>
          <div data-elastic-include>test3
            <div data-elastic-exclude>test4 <div data-elastic-include>test5</div></div>
          </div>
          test6
        </div>
        test7
        <h1 data-elastic-name="product_name">Printer</h1>
        <a href="a.html">a</a> <a href="/cities">cities</a> <a href="/files/manual.pdf">pdf</a> <a href="/files/logo">logo</a> <a href="/files/slides">slides</a>
        </body></html>`,
      },
      '/docs/a.html': { kind: 'html', body: '<title>A</title><h1>Alpha</h1><p>alpha text</p>' },
      '/docs/hidden.html': { kind: 'html', body: '<title>Hidden</title><p>reached through an excluded region</p>' },
      '/cities': { kind: 'html', body: '<title>Cities</title><div>Cities:</div><div class="city">Summerstay</div><div class="city">Drenchwell</div>' },
      '/files/manual.pdf': { kind: 'binary', bytes: PDF, contentType: 'application/pdf' },
      '/files/logo': { kind: 'binary', bytes: DOC, contentType: 'application/msword' },
      '/files/slides': { kind: 'binary', bytes: DOC.map((b) => b ^ 0x55), contentType: 'application/vnd.ms-powerpoint' },
    },
  }]);
}

describe('search documents in file sinks, per schema', () => {
  it('an MS-FSCCFG collection: the App Search schema, custom fields and rulesets; a second sink in the open_crawler schema', async () => {
    const s = await site('127.0.34.1');
    const h = s.host('127.0.34.1');
    const dir = tempDir('trawl-esdoc-');
    const app = join(dir, 'app');
    const oc = join(dir, 'oc');
    const config = join(dir, 'c.xml');
    const rule = JSON.stringify({ action: 'extract', field_name: 'cities', selector: '.city', join_as: 'array', source: 'html' }).replace(/"/g, '&quot;');
    const setRule = JSON.stringify({ action: 'set', field_name: 'is_pdf', selector: '\\.pdf$', value: 'yes', source: 'url' }).replace(/"/g, '&quot;');
    writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="shop">
      <attrib name="start_uris" type="list-string"><member>${h.url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib>
      <section name="trawl_limits"><attrib name="max_elastic_tag_bytes" type="integer">4</attrib><attrib name="max_data_attribute_bytes" type="integer">5</attrib></section>
      <section name="trawl_extraction"><attrib name="binary_mime_types" type="list-string"><member>application/pdf</member></attrib></section>
      <section name="trawl_extraction_rulesets">
        <section name="cities"><attrib name="domain" type="string">${h.origin}</attrib>
          <attrib name="url_filters" type="list-string"><member>ends /cities</member></attrib>
          <attrib name="rules" type="list-string"><member>${rule}</member></attrib></section>
        <section name="files"><attrib name="domain" type="string">${h.origin}</attrib>
          <attrib name="url_filters" type="list-string"><member>begins /files/</member></attrib>
          <attrib name="rules" type="list-string"><member>${setRule}</member></attrib></section>
      </section>
      <section name="trawl_sinks">
        <section name="app"><attrib name="type" type="string">file</attrib><attrib name="output_dir" type="string">${app}</attrib></section>
        <section name="oc"><attrib name="type" type="string">file</attrib><attrib name="schema" type="string">open_crawler</attrib><attrib name="output_dir" type="string">${oc}</attrib></section>
      </section>
    </DomainSpecification></CrawlerConfig>`);
    try {
      const r = await runTrawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', config], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      // The link inside the excluded region was crawled (base: the first <base href>, /docs/).
      assert.ok(h.requests.some((q) => q.path === '/docs/hidden.html'), 'the excluded region\'s link is fetched');
      assert.ok(!h.requests.some((q) => q.path.startsWith('/elsewhere/')), 'the second <base> is not the base');

      const docs = documents(app);
      const home = docs.get(h.url('/'))!;
      assert.ok(home, [...docs.keys()].join(' '));
      assert.equal(home.body_content, 'test1 test3 test5 test7 Printer a cities pdf logo slides');
      assert.equal(home.url_port, String(h.port));
      assert.deepEqual(home.domains, [h.origin]);
      assert.equal(home.meta_description, 'The home page');
      // Cut to max_elastic_tag_bytes and max_data_attribute_bytes, with a final "…" inside the limit.
      assert.equal(home.product_price, '9…');
      assert.equal(home.product_name, 'Pr…');
      assert.equal(home.maker, 'Acme', 'the Site Search meta class');
      assert.deepEqual(home.links, [h.url('/docs/hidden.html'), h.url('/docs/a.html'), h.url('/cities'), h.url('/files/manual.pdf'), h.url('/files/logo'), h.url('/files/slides')]);
      assert.equal(docs.has(h.url('/files/slides')), false, 'allowed_types keeps no PowerPoint file here');
      assert.equal(home.custom, undefined);
      const a = docs.get(h.url('/docs/a.html'))!;
      assert.deepEqual([a.url_path_dir1, a.url_path_dir2, a.url_path_dir3], ['docs', 'a.html', undefined]);
      assert.deepEqual(docs.get(h.url('/cities'))!.cities, ['Summerstay', 'Drenchwell']);
      const pdf = docs.get(h.url('/files/manual.pdf'))!;
      assert.equal(Buffer.from(pdf.body_base64 as string, 'base64').toString(), '%PDF-1.4 a tiny file');
      assert.equal(pdf.is_pdf, 'yes');
      assert.ok(docs.get(h.url('/files/logo'))!.body_base64, 'app_search keeps every stored file');

      const ocDocs = documents(oc);
      const ocHome = ocDocs.get(h.url('/'))!;
      assert.equal(ocHome.body, 'test1 test3 test5 test7 Printer a cities pdf logo slides');
      assert.equal(ocHome.body_content, undefined);
      assert.equal(ocHome.url_port, h.port);
      assert.equal(ocHome.maker, undefined, 'the Open Crawler reads no swiftype class');
      assert.equal(ocHome.collection, undefined);
      assert.deepEqual(ocHome.links, [...(home.links as string[])].sort());
      const ocPdf = ocDocs.get(h.url('/files/manual.pdf'))!;
      assert.deepEqual([ocPdf.file_name, ocPdf.content_type, ocPdf.content_length, ocPdf.is_pdf, ocPdf.url_path_dir2], ['manual.pdf', 'application/pdf', PDF.length, 'yes', 'manual.pdf']);
      assert.equal(Buffer.from(ocPdf._attachment as string, 'base64').toString(), '%PDF-1.4 a tiny file');
      assert.equal(ocDocs.has(h.url('/files/logo')), false, 'a type binary_mime_types does not name is not indexed');
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an Elastic YAML collection: the Open Crawler\'s documents, its extraction_rulesets and binary content settings', async () => {
    const s = await site('127.0.34.2');
    const h = s.host('127.0.34.2');
    const dir = tempDir('trawl-esdoc-yml-');
    const out = join(dir, 'docs');
    const yml = join(dir, 'crawl.yml');
    writeFileSync(yml, `domains:
  - url: ${h.origin}
    seed_urls: [${h.url('/')}]
    extraction_rulesets:
      - url_filters:
          - type: "ends"
            pattern: "/cities"
        rules:
          - action: "extract"
            field_name: "cities"
            selector: ".city"
            join_as: "string"
            source: "html"
output_sink: file
output_dir: ${out}
binary_content_extraction_enabled: true
binary_content_extraction_mime_types: [application/pdf, application/vnd.ms-powerpoint]
max_elastic_tag_size: 3
max_indexed_links_count: 2
`);
    try {
      const r = await runTrawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', yml], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      const docs = documents(out);
      const home = docs.get(h.url('/'))!;
      assert.ok(home, `${[...docs.keys()].join(' ')}\n${r.err}`);
      assert.equal(home.body, 'test1 test3 test5 test7 Printer a cities pdf logo slides');
      assert.equal(home.url_port, h.port);
      assert.equal(home.product_price, '…', 'cut to max_elastic_tag_size with the Open Crawler\'s omission mark');
      assert.equal((home.links as string[]).length, 2);
      assert.equal(home.meta_description, 'The  home page', 'as written');
      assert.match(home.last_crawled_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(docs.get(h.url('/cities'))!.cities, 'Summerstay Drenchwell');
      assert.equal(docs.get(h.url('/files/manual.pdf'))!.file_name, 'manual.pdf');
      // A type binary_content_extraction_mime_types names is indexed even where allowed_types would not keep it.
      const ins = await runTrawl(['inspect', '--data', join(dir, 'data'), '--json', h.url('/files/slides')]);
      assert.equal(docs.get(h.url('/files/slides'))?.content_type, 'application/vnd.ms-powerpoint', ins.out + ins.err);
      assert.equal(docs.has(h.url('/files/logo')), false);
      assert.ok(h.requests.some((q) => q.path === '/files/logo'), 'the file was fetched (allowed_types keeps Word files), and not indexed');
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('duplicate content is one document whose additional_urls lists the other URLs, and domains every domain it appears on', async () => {
    const same = '<title>Same</title><p>the same words on three pages</p>';
    // The first crawl finds one page with the content; the second, two copies more: the document already fed is fed again.
    let round = 1;
    // (The two home pages differ in each round: a home page that duplicated the other would have its links ignored.)
    const home = (first: string, links: string) => (_req: unknown, res: ServerResponse): void => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(round === 1 ? first : links);
    };
    const s = await startFixtureSite([
      { ip: '127.0.34.3', routes: { '/': home('<a href="/one.html">1</a>', '<a href="/one.html">1</a> <a href="/two.html">2</a>'), '/one.html': { kind: 'html', body: same }, '/two.html': { kind: 'html', body: same } } },
      { ip: '127.0.34.4', routes: { '/': home('<p>nothing yet</p>', '<a href="/copy.html">c</a>'), '/copy.html': { kind: 'html', body: same } } },
    ]);
    const a = s.host('127.0.34.3');
    const b = s.host('127.0.34.4');
    const dir = tempDir('trawl-esdoc-dup-');
    const out = join(dir, 'out');
    const config = join(dir, 'c.xml');
    writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="dups">
      <attrib name="start_uris" type="list-string"><member>${a.url('/')}</member><member>${b.url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib>
      <section name="trawl_sinks"><section name="disk"><attrib name="type" type="string">file</attrib><attrib name="output_dir" type="string">${out}</attrib></section></section>
    </DomainSpecification></CrawlerConfig>`);
    try {
      const crawl = () => runTrawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', config], { timeoutMs: 120_000 });
      const first = await crawl();
      assert.equal(first.code, 0, first.err);
      assert.ok(documents(out).has(a.url('/one.html')));
      assert.equal(documents(out).get(a.url('/one.html'))!.additional_urls, undefined);
      round = 2;
      const r = await crawl();
      assert.equal(r.code, 0, r.err);
      const docs = [...documents(out).values()].filter((d) => d.title === 'Same');
      assert.equal(docs.length, 1, JSON.stringify(docs.map((d) => d.url)));
      const doc = docs[0]!;
      // one.html, fed in the first crawl (unchanged since), is fed again with the other two.
      assert.equal(doc.url, a.url('/one.html'), JSON.stringify(doc));
      assert.deepEqual(doc.additional_urls, [a.url('/two.html'), b.url('/copy.html')].sort());
      assert.deepEqual((doc.domains as string[]).sort(), [a.origin, b.origin].sort());
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('content_hash_include: pages whose named fields are equal are duplicates, whatever else differs', async () => {
    const page = (script: string, link: string): string => `<title>T</title><script>var stamp = ${script};</script><p>the same words</p><a href="${link}">x</a>`;
    const s = await startFixtureSite([{
      ip: '127.0.34.5',
      routes: {
        '/': { kind: 'html', body: '<a href="/p1.html">1</a> <a href="/p2.html">2</a> <a href="/p3.html">3</a>' },
        '/p1.html': { kind: 'html', body: page('1', '/x') },
        '/p2.html': { kind: 'html', body: page('2', '/x') },
        '/p3.html': { kind: 'html', body: page('3', '/y') },
        '/x': { kind: 'html', body: 'x' },
        '/y': { kind: 'html', body: 'y' },
      },
    }]);
    const h = s.host('127.0.34.5');
    const dir = tempDir('trawl-esdoc-hash-');
    const run = async (name: string, include: string[]): Promise<Record<string, unknown>[]> => {
      const out = join(dir, name);
      const config = join(dir, `${name}.xml`);
      writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="${name}">
        <attrib name="start_uris" type="list-string"><member>${h.url('/')}</member></attrib>
        <attrib name="delay" type="real">0</attrib>
        <section name="trawl_extraction"><attrib name="content_hash_include" type="list-string">${include.map((f) => `<member>${f}</member>`).join('')}</attrib></section>
        <section name="trawl_sinks"><section name="disk"><attrib name="type" type="string">file</attrib><attrib name="output_dir" type="string">${out}</attrib></section></section>
      </DomainSpecification></CrawlerConfig>`);
      const r = await runTrawl(['crawl', '--data', join(dir, `data-${name}`), '--allow-loopback', '--json', config], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      return [...documents(out).values()].filter((d) => d.title === 'T').sort((a, b) => String(a.url).localeCompare(String(b.url)));
    };
    try {
      assert.equal((await run('bytes', [])).length, 3, 'without it, the bytes decide');
      const titleBody = await run('titlebody', ['document_title', 'document_body']);
      assert.equal(titleBody.length, 1);
      assert.equal(titleBody[0]!.additional_urls && (titleBody[0]!.additional_urls as string[]).length, 2);
      const withLinks = await run('withlinks', ['document_body', 'links']);
      // p1 and p2 (the same link) are one document, whichever was fetched first; p3 links elsewhere.
      assert.deepEqual(withLinks.map((d) => [d.url, ...((d.additional_urls as string[] | undefined) ?? [])].sort()), [[h.url('/p1.html'), h.url('/p2.html')], [h.url('/p3.html')]]);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
