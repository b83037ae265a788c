// The Open Crawler's domains[].exclude_tags and full_html_extraction_enabled (its config.rb,
// crawl_result/html.rb and document_mapper.rb; docs/features/CRAWLER_DIRECTIVES.md), crawling
// loopback pages and reading the documents from a file sink: the body text of a domain's
// pages leaves out the tags its exclude_tags names, whatever data-elastic-include says inside
// them (the directives' example: "test1 test7"), and only for that domain; with
// full_html_extraction_enabled each HTML document carries the page's HTML as full_html.
// Both survive `config convert` (trawl_elastic.exclude_tags, trawl_elastic.full_html).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { runTrawl } from '../support/trawl-cli.ts';

// CRAWLER_DIRECTIVES.md's mixed example, with the page's own header and footer around it
// (each domain's page titled apart, so that they are not duplicates).
const mixed = (title: string): string => `<!doctype html><html><head><title>${title}</title></head><body>
<header>Site header</header>
test1
<div data-elastic-exclude>
  test2
  <p data-elastic-include>
    test3
    <span data-elastic-exclude>
      test4
      <span data-elastic-include>test5</span>
    </span>
  </p>
  test6
</div>
test7
<h2>Kept heading</h2>
<FOOTER>Site footer</FOOTER>
</body></html>`;
const MIXED_A = mixed('Mixed A');
const MIXED_B = mixed('Mixed B');

type Doc = Record<string, unknown> & { url: string };

function documents(dir: string): Map<string, Doc> {
  const out = new Map<string, Doc>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.json')) {
        const doc = JSON.parse(readFileSync(join(d, e.name), 'utf8')) as Doc;
        out.set(doc.url, doc);
      }
    }
  };
  walk(dir);
  return out;
}

describe('exclude_tags and full_html_extraction_enabled', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-elastic-tags-'));
  let site: FixtureSite;
  let a = '';
  let b = '';
  before(async () => {
    site = await startFixtureSite([
      { ip: '127.0.134.172', routes: { '/': { kind: 'html', body: MIXED_A } } },
      { ip: '127.0.134.173', routes: { '/': { kind: 'html', body: MIXED_B } } },
    ]);
    [a, b] = site.hosts.map((h) => h.origin) as [string, string];
  });
  after(async () => {
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const yaml = (out: string, more: string): string => `domains:
  - url: ${a}
    exclude_tags:
      - p
      - HEADER
      - footer
  - url: ${b}
loopback_allowed: true
output_sink: file
output_dir: ${out}
${more}`;

  it('the body leaves out the excluded tags on their domain only; full_html off: no such field', async () => {
    const out = join(dir, 'off');
    const file = join(dir, 'off.yml');
    writeFileSync(file, yaml(out, ''));
    const r = await runTrawl(['crawl', '--data', join(dir, 'off-data'), '--feed-timeout', '30', file], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err, /exclude_tags|full_html/, 'no warning about them');
    const docs = documents(out);
    assert.deepEqual([...docs.keys()].sort(), [`${a}/`, `${b}/`].sort(), r.err);
    const da = docs.get(`${a}/`)!;
    const db = docs.get(`${b}/`)!;
    assert.equal(da.body, 'test1 test7 Kept heading', 'the whole <p> is left out, its data-elastic-include too; header and footer with it');
    assert.equal(db.body, 'Site header test1 test3 test5 test7 Kept heading Site footer', 'the other domain: only the include/exclude regions');
    assert.deepEqual(da.headings, ['Kept heading']);
    assert.equal(da.title, 'Mixed A');
    assert.equal('full_html' in da, false);
    assert.equal('full_html' in db, false);
  });

  it('full_html_extraction_enabled: the page\'s HTML in full_html; converted to XML, the same documents (app_search schema too)', async () => {
    const out = join(dir, 'on');
    const file = join(dir, 'on.yml');
    writeFileSync(file, yaml(out, 'full_html_extraction_enabled: true\n'));
    const r = await runTrawl(['crawl', '--data', join(dir, 'on-data'), '--feed-timeout', '30', file], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.err);
    const docs = documents(out);
    assert.equal(docs.get(`${a}/`)!.full_html, MIXED_A, 'the whole page, excluded tags, scripts and all');
    assert.equal(docs.get(`${b}/`)!.full_html, MIXED_B);
    assert.equal(docs.get(`${a}/`)!.body, 'test1 test7 Kept heading');

    // config convert: the two settings as trawl_elastic parameters; crawled with the app_search schema.
    const conv = await runTrawl(['config', 'convert', '--to', 'xml', file], { timeoutMs: 60_000 });
    assert.equal(conv.code, 0, conv.err);
    assert.match(conv.out, /<attrib name="exclude_tags" type="list-string">\s*<member> http:\/\/127\.0\.134\.172:\d+ p header footer <\/member>\s*<\/attrib>/);
    assert.match(conv.out, /<attrib name="full_html" type="boolean"> yes <\/attrib>/);
    const out2 = join(dir, 'xml-out');
    const xml = join(dir, 'on.xml');
    writeFileSync(xml, conv.out.replace('<attrib name="schema" type="string"> open_crawler </attrib>', '<attrib name="schema" type="string"> app_search </attrib>').replace(`<attrib name="output_dir" type="string"> ${out} </attrib>`, `<attrib name="output_dir" type="string"> ${out2} </attrib>`));
    const v = await runTrawl(['config', 'validate', xml], { timeoutMs: 60_000 });
    assert.equal(v.code, 0, v.out + v.err);
    assert.doesNotMatch(v.out + v.err, /exclude_tags|full_html/, 'no warning: both are honoured');
    const r2 = await runTrawl(['crawl', '--data', join(dir, 'xml-data'), '--feed-timeout', '30', xml], { timeoutMs: 120_000 });
    assert.equal(r2.code, 0, r2.err);
    const docs2 = documents(out2);
    assert.equal(docs2.get(`${a}/`)!.body_content, 'test1 test7 Kept heading');
    assert.equal(docs2.get(`${b}/`)!.body_content, 'Site header test1 test3 test5 test7 Kept heading Site footer');
    assert.equal(docs2.get(`${a}/`)!.full_html, MIXED_A);
  });
});
