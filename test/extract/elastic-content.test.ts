// The search document's content as the Elastic crawlers extract it. Each
// case is written here from what the Elastic web crawler reference and the
// Open Crawler's specifications (spec/lib/crawler/content_engine/*,
// spec/lib/crawler/data/crawl_result/html_spec.rb, document_mapper_spec.rb,
// extraction/*) state a page yields; the pages are our own. Documents are
// built by buildDocument, the feeder's builder, in the open_crawler form;
// test/sinks/elastic-document.test.ts crawls real pages into file sinks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeText, readElasticPage, bodyOf } from '../../src/extract/elastic-content.ts';
import { applyRulesets, compileRulesets, parseExtractionRule, parseUrlFilter } from '../../src/extract/extraction-rules.ts';
import { buildDocument, documentId, type DocumentOptions, type ExtractionLimits } from '../../src/sinks/document.ts';
import { parseDocument } from 'htmlparser2';
import { rec } from '../store/crawl-store-suite.ts';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const page = (html: string, url = 'https://example.com/') => readElasticPage(html, url, { maxLinks: 1000, maxHeadings: 25 });
/** The text of the body after the include/exclude regions, as the Open Crawler's transformer spec reads it. */
const bodyText = (html: string): string => nodeText(bodyOf(parseDocument(html)), true);
const ocDoc = (url: string, html: string | Uint8Array, mime = 'text/html', o: Partial<DocumentOptions> = {}): Record<string, unknown> => {
  const doc = buildDocument({ record: rec(url, { lastCrawledMs: Date.UTC(2026, 0, 2, 3, 4, 5) }), body: typeof html === 'string' ? enc(html) : html, mime }, { collection: 'c', crawlCollection: 'c', openCrawler: true, ...o });
  return doc.openCrawler as Record<string, unknown>;
};
const rulesets = (domain: string, sets: Array<{ url_filters?: string[]; rules: object[] }>) =>
  compileRulesets(Object.fromEntries(sets.map((s, i) => [`r${i}`, { domain, urlFilters: s.url_filters ?? [], rules: s.rules.map((r) => JSON.stringify(r)) }])));

describe('content inclusion and exclusion (data-elastic-include / -exclude)', () => {
  it('an include region alone changes nothing', () => {
    assert.equal(bodyText('<body> test1 <div data-elastic-include>test2</div> test3 </body>'), 'test1 test2 test3');
  });
  it('an exclude region is left out', () => {
    assert.equal(bodyText('<body> test1 <div data-elastic-exclude>test2</div> test3 </body>'), 'test1 test3');
  });
  it('an exclude then an include region', () => {
    assert.equal(bodyText('<body>test1<div data-elastic-exclude>test2</div><div data-elastic-include>test3</div>test4</body>'), 'test1 test3 test4');
  });
  it('an include then an exclude region', () => {
    assert.equal(bodyText('<body>test1<div data-elastic-include>test2</div><div data-elastic-exclude>test3</div>test4</body>'), 'test1 test2 test4');
  });
  it('nested include regions', () => {
    assert.equal(bodyText('<body>test1<div data-elastic-include>test2<span data-elastic-include>test21</span>test3</div>test4</body>'), 'test1 test2 test21 test3 test4');
  });
  it('an include inside an exclude', () => {
    assert.equal(bodyText('<body>test1<div data-elastic-exclude>test2<span data-elastic-include>test3</span>test4</div>test5</body>'), 'test1 test3 test5');
  });
  it('the reference\'s nested example: "test1 test3 test5 test7"', () => {
    const html = `<body>
      test1
      <div data-elastic-exclude>
        test2
        <div data-elastic-include>
          test3
          <div data-elastic-exclude>
            test4
            <div data-elastic-include>test5</div>
          </div>
        </div>
        test6
      </div>
      test7
    </body>`;
    assert.equal(bodyText(html), 'test1 test3 test5 test7');
  });
  it('an include deep inside an exclude, with lists and a comment around it', () => {
    const html = `<body><div data-elastic-exclude><div><ul><li> Why <div><ul><li></li></ul></div></li><li> Two? </li></ul>
      TROUBLE STARTS <div data-elastic-include> !! THIS SHOULD BE INCLUDED !! </div> <!-- end --></div> !! EXCLUDED</div></body>`;
    assert.equal(bodyText(html), '!! THIS SHOULD BE INCLUDED !!');
  });
  it('a wrapping exclude sets the default, an inner include keeps its part', () => {
    assert.equal(bodyText('<body><span data-elastic-exclude><menu>menu</menu><main data-elastic-include>content</main><footer>footer</footer></span></body>'), 'content');
  });
  it('an exclude on <body> itself', () => {
    assert.equal(bodyText('<body data-elastic-exclude><menu>menu</menu><main data-elastic-include>content</main><footer>footer</footer></body>'), 'content');
  });
  it('the links of an excluded region are still the page\'s links', () => {
    const p = page('<body>test1<div data-elastic-exclude><a href="http://elastic.co">Elastic</a></div>test3</body>');
    assert.equal(p.body, 'test1 test3');
    assert.deepEqual(p.links, ['http://elastic.co/']);
  });
});

// The page of the Open Crawler's HTML crawl-result spec, in our words.
const RICH = `<html><head>
  <title>Under construction...</title>
  <link rel="canonical" href="https://example.com/canonical" />
  <meta name="keywords" content="keywords, stuffing, SEO" />
  <meta name="description" content="The best site in the universe!" />
  <meta class="elastic" name="number_value_tag" content="0451">
  <meta class="elastic" name="string_value_tag" content="elastician">
  <meta class="elastic" name="domains" content="reserved_should_not_appear">
  <meta class="elastic" name="_Does Not Meet Field Name Rules" content="invalid_should_not_appear">
</head><body>
  <h1><span data-elastic-include>Page</span> header</h1>
  Something
  something   else
  <div data-elastic-exclude><a href="https://google.com">google</a></div>
  <!-- a comment is not text -->
  <script>alert("hello from Javascript")</script>
  <div data-elastic-name="in_body_tag">Elasticize</div>
  <div data-elastic-name="in_body_tag_two">ELK</div>
  <div data-elastic-name="headings">reserved_should_not_appear</div>
  <div data-elastic-name="_Does Not Meet Field Name Rules">invalid_should_not_appear</div>
  <svg height="130" width="500"><text x="50" y="86">SVG</text> Sorry, no inline SVG.</svg>
  <h2>Links section</h2>
  <a class="linkedin" href="https://www.linkedin.com/company/swiftype">LinkedIn</a><span>or</span><a class="instagram" href="https://www.instagram.com/swiftype.search">Instagram</a>
  <li><a class="twitter" href="https://twitter.com/swiftype">Twitter</a><li><a class="facebook" href="https://facebook.com/swiftype">Facebook</a>
  <a href=" https://swiftype.com/site-search ">Swiftype</a>
  <a :href="url" class="x">View product details</a>
</body></html>`;

describe('an HTML page\'s fields', () => {
  it('base URL: the first <base href>, spaces trimmed; the page URL when it is absent, empty or unusable; relative ones resolved', () => {
    const link = (head: string): string => page(`<html><head>${head}</head><body><a href="x">x</a></body></html>`, 'https://example.com/p/q').links[0]!;
    assert.equal(link('<base href="  https://example.com/hello/  ">'), 'https://example.com/hello/x');
    assert.equal(link('<base href="http://[bad">'), 'https://example.com/p/x');
    assert.equal(link('<base target="_blank">'), 'https://example.com/p/x');
    assert.equal(link('<base href="">'), 'https://example.com/p/x');
    assert.equal(link('<base href="/hello/">'), 'https://example.com/hello/x');
    assert.equal(link('<base target="_blank"><base href="https://example.com/hello/"><base href="https://example.com/world/">'), 'https://example.com/hello/x', 'the first href wins');
  });
  it('links: every a[href] with a URL, once, sorted in the open_crawler document, up to the limit', () => {
    const doc = ocDoc('https://example.com/', RICH, 'text/html');
    const links = doc.links as string[];
    assert.equal(links.length, 6);
    assert.deepEqual(links, [...links].sort());
    assert.ok(links.includes('https://swiftype.com/site-search'), 'the href is trimmed');
    const limited = ocDoc('https://example.com/', RICH, 'text/html', { limits: { ...limits(), indexedLinks: 5 } });
    assert.equal((limited.links as string[]).length, 5);
  });
  it('title: the <title> of the head, else the first anywhere, else none', () => {
    assert.equal(page(RICH).title, 'Under construction...');
    assert.equal(page('<html><body><title>HTML5, yo!</title></body>').title, 'HTML5, yo!');
    assert.equal(ocDoc('https://example.com/', '').title, undefined, 'an empty title is left out');
    assert.equal(Buffer.byteLength(ocDoc('https://example.com/', RICH, 'text/html', { limits: { ...limits(), titleBytes: 10 } }).title as string), 10);
  });
  it('body: text squished, no script, svg or comments, a space around elements and for <li>, the exclude region out, cut to the limit', () => {
    const body = page(RICH).body;
    assert.match(body, /Something something else/);
    assert.doesNotMatch(body, /<\/a>|alert|svg|comment/i);
    assert.match(body, /Twitter Facebook/);
    assert.match(body, /LinkedIn or Instagram/);
    assert.doesNotMatch(body, /google/i);
    assert.equal(page('').body, '');
    assert.equal(Buffer.byteLength(ocDoc('https://example.com/', RICH, 'text/html', { limits: { ...limits(), bodyBytes: 10 } }).body as string), 10);
  });
  it('HTML5 sectioning elements are body text', () => {
    const b = page('<!DOCTYPE html><html><head><title>t</title></head><body><header><h1>Welcome</h1></header><nav><a href="/home">Home</a></nav><main><article><section><p>This is a test of HTML5 parsing.</p></section></article></main><footer>Contact info here</footer></body></html>').body;
    for (const t of ['Welcome', 'Home', 'This is a test of HTML5 parsing.', 'Contact info here']) assert.ok(b.includes(t), t);
  });
  it('meta keywords and description, cut to their limits', () => {
    const d = ocDoc('https://example.com/', RICH);
    assert.equal(d.meta_keywords, 'keywords, stuffing, SEO');
    assert.equal(d.meta_description, 'The best site in the universe!');
    const cut = ocDoc('https://example.com/', RICH, 'text/html', { limits: { ...limits(), keywordsBytes: 10, descriptionBytes: 10 } });
    assert.equal(Buffer.byteLength(cut.meta_keywords as string), 10);
    assert.equal(Buffer.byteLength(cut.meta_description as string), 10);
  });
  it('<meta class="elastic"> fields: valid, unreserved names only, cut to max_elastic_tag_size', () => {
    const d = ocDoc('https://example.com/', RICH);
    assert.equal(d.number_value_tag, '0451');
    assert.equal(d.string_value_tag, 'elastician');
    assert.notEqual(d.domains, 'reserved_should_not_appear');
    assert.ok(!Object.values(d).includes('invalid_should_not_appear'));
    const cut = ocDoc('https://example.com/', RICH.replace('elastician', 'elastician and more'), 'text/html', { limits: { ...limits(), elasticTagBytes: 10 } });
    assert.equal(Buffer.byteLength(cut.string_value_tag as string), 10);
  });
  it('data-elastic-name fields of the body: valid, unreserved names only, cut to max_data_attribute_size', () => {
    const d = ocDoc('https://example.com/', RICH);
    assert.equal(d.in_body_tag, 'Elasticize');
    assert.equal(d.in_body_tag_two, 'ELK');
    assert.ok(Array.isArray(d.headings), 'the reserved headings field keeps the headings');
    const cut = ocDoc('https://example.com/', RICH.replace('Elasticize', 'Elasticize everything'), 'text/html', { limits: { ...limits(), dataAttributeBytes: 10 } });
    assert.equal(Buffer.byteLength(cut.in_body_tag as string), 10);
  });
  it('headings: h1…h6 of the body, each once, up to the limit', () => {
    assert.deepEqual(page(RICH).headings, ['Page header', 'Links section']);
    assert.deepEqual(readElasticPage(RICH, 'https://example.com/', { maxLinks: 0, maxHeadings: 1 }).headings, ['Page header']);
  });
  it('the App Search schema also reads the Site Search forms (class swiftype, data-swiftype-name); the Open Crawler\'s does not', () => {
    const html = '<head><meta class="swiftype" name="price" data-type="float" content="3.99"></head><body><span data-swiftype-name="maker">Acme</span></body>';
    const doc = buildDocument({ record: rec('http://a.test/p'), body: enc(html), mime: 'text/html' }, { collection: 'c', crawlCollection: 'c', openCrawler: true });
    assert.deepEqual(doc.custom, { price: '3.99', maker: 'Acme' });
    assert.equal((doc.openCrawler as Record<string, unknown>).price, undefined);
  });
});

function limits(): ExtractionLimits {
  return { titleBytes: 1024, bodyBytes: 5_242_880, keywordsBytes: 512, descriptionBytes: 1024, indexedLinks: 25, headings: 25, elasticTagBytes: 512, dataAttributeBytes: 512 };
}

// The page of the Open Crawler's document mapper spec, in our words.
const MAPPER = `<html><head>
  <meta name="description" content="An apt description!">
  <meta name="keywords" content="foo, faa, fee">
  <meta class="elastic" name="number_value_tag" content="0451">
  <meta class="elastic" name="string_value_tag" content="elastician">
</head><body>
  <title>A website!</title>
  <h1>Main heading</h1><h2>Subheading</h2>
  <a href="/link1">Hello</a><a href="/link2">Goodbye</a>
  <p class="chosen">Chosen 1</p><div class="chosen">Chosen 2</div>
  <div data-elastic-name="in_body_tag">Elasticize</div>
  <div data-elastic-name="in_body_tag_two">ELK</div>
</body></html>`;

describe('the open_crawler document (DocumentMapper)', () => {
  const url = 'https://example.com/';
  it('an HTML page: exactly the Open Crawler\'s fields, url_port an integer, empty ones left out', () => {
    const d = ocDoc(url, MAPPER);
    assert.deepEqual(d, {
      id: documentId(url), last_crawled_at: '2026-01-02T03:04:05Z',
      title: 'A website!', body: d.body, meta_keywords: 'foo, faa, fee', meta_description: 'An apt description!',
      links: ['https://example.com/link1', 'https://example.com/link2'], headings: ['Main heading', 'Subheading'],
      url, url_scheme: 'https', url_host: 'example.com', url_port: 443, url_path: '/',
      number_value_tag: '0451', string_value_tag: 'elastician', in_body_tag: 'Elasticize', in_body_tag_two: 'ELK',
    });
    assert.match(d.body as string, /^A website! Main heading Subheading Hello Goodbye Chosen 1 Chosen 2 Elasticize ELK$/);
  });
  it('with an extraction ruleset: the extracted field as an array', () => {
    const d = ocDoc(url, MAPPER, 'text/html', { rulesets: rulesets('https://example.com', [{ url_filters: ['regex .*'], rules: [{ action: 'extract', field_name: 'chosen_fields', selector: '.chosen', join_as: 'array', source: 'html' }] }]) });
    assert.deepEqual(d.chosen_fields, ['Chosen 1', 'Chosen 2']);
  });
  it('with small limits: each text field cut with a final "…" inside its limit, links and headings counted', () => {
    const d = ocDoc(url, MAPPER, 'text/html', { limits: { ...limits(), titleBytes: 5, bodyBytes: 10, keywordsBytes: 10, descriptionBytes: 10, indexedLinks: 1, headings: 1 } });
    assert.deepEqual([d.title, d.body, d.meta_keywords, d.meta_description, d.links, d.headings], ['A …', 'A websi…', 'foo, fa…', 'An apt …', ['https://example.com/link1'], ['Main heading']]);
  });
  it('a file of a type binary_mime_types names: file_name, content_length, content_type, _attachment, url_path_dir1 the file name', () => {
    const bytes = enc('A PDF for ants');
    const d = ocDoc('https://example.com/ant-file.pdf', bytes, 'application/pdf', { binaryMime: ['application/pdf'] });
    assert.deepEqual(d, {
      id: documentId('https://example.com/ant-file.pdf'), last_crawled_at: '2026-01-02T03:04:05Z',
      file_name: 'ant-file.pdf', content_length: bytes.length, content_type: 'application/pdf', _attachment: Buffer.from(bytes).toString('base64'),
      url: 'https://example.com/ant-file.pdf', url_scheme: 'https', url_host: 'example.com', url_port: 443, url_path: '/ant-file.pdf', url_path_dir1: 'ant-file.pdf',
    });
  });
  it('a file with a url set rule gets the set field', () => {
    const d = ocDoc('https://example.com/ant-file.pdf', enc('x'), 'application/pdf', {
      binaryMime: ['application/*'],
      rulesets: rulesets('https://example.com', [{ url_filters: ['regex .*'], rules: [{ action: 'set', field_name: 'is_pdf', selector: '(?i)^.*\\.PDF$', value: 'yes', source: 'url' }] }]),
    });
    assert.equal(d.is_pdf, 'yes');
  });
  it('a file of a type binary_mime_types does not name is not indexed (and text is not either)', () => {
    const doc = buildDocument({ record: rec('https://example.com/a.pdf'), body: enc('x'), mime: 'application/pdf' }, { collection: 'c', crawlCollection: 'c', openCrawler: true });
    assert.equal(doc.openCrawler, null);
    assert.equal(buildDocument({ record: rec('https://example.com/a.txt'), body: enc('x'), mime: 'text/plain' }, { collection: 'c', crawlCollection: 'c', openCrawler: true }).openCrawler, null);
    assert.ok(doc.body_base64, 'the app_search form keeps it');
  });
});

describe('extraction rulesets (Extractor)', () => {
  const html = `<html><head>©<title>Under construction...</title></head><body>Hello, World!
    <div id="need_to_be_extracted"> Random container </div><body></html>`;
  const url = 'http://example.com/foo/faa/fum';
  const dom = parseDocument(html);
  const setRules = [
    { action: 'set', field_name: 'set_html_field', selector: '#need_to_be_extracted', source: 'html', value: 'set_html_value' },
    { action: 'set', field_name: 'set_url_field', selector: 'foo\\/([a-zA-Z0-9]{3})', source: 'url', value: 'set_url_value' },
  ];
  const extractRules = [
    { action: 'extract', field_name: 'extracted_html_field', join_as: 'string', selector: '#need_to_be_extracted', source: 'html' },
    { action: 'extract', field_name: 'extracted_url_field', join_as: 'string', selector: 'foo\\/([a-zA-Z0-9]{3})', source: 'url' },
  ];
  const run = (rules: object[], filters = ['begins /']) => Object.fromEntries(applyRulesets(rulesets('http://example.com', [{ url_filters: filters, rules }]), url, dom));
  it('set: the value when the selector finds something', () => {
    assert.deepEqual(run(setRules), { set_html_field: 'set_html_value', set_url_field: 'set_url_value' });
  });
  it('extract: the text, the URL expression\'s group', () => {
    assert.deepEqual(run(extractRules), { extracted_html_field: 'Random container', extracted_url_field: 'faa' });
  });
  it('several rules together', () => {
    assert.deepEqual(run([...setRules, ...extractRules]), { set_html_field: 'set_html_value', set_url_field: 'set_url_value', extracted_html_field: 'Random container', extracted_url_field: 'faa' });
  });
  it('extract that finds nothing: an empty string', () => {
    assert.deepEqual(run([{ ...extractRules[0], selector: '#doesnt_exist' }, { ...extractRules[1], selector: 'baa\\/([a-zA-Z0-9]{3})' }]), { extracted_html_field: '', extracted_url_field: '' });
  });
  it('join_as array', () => {
    assert.deepEqual(run(extractRules.map((r) => ({ ...r, join_as: 'array' }))), { extracted_html_field: ['Random container'], extracted_url_field: ['faa'] });
  });
  it('url filters that match nothing: no field', () => {
    assert.deepEqual(run([...setRules, ...extractRules], ['begins /does_not_exist']), {});
  });
  it('no url filters: every URL', () => {
    assert.deepEqual(run(setRules, []), { set_html_field: 'set_html_value', set_url_field: 'set_url_value' });
  });
  it('only the rulesets of the document\'s domain apply', () => {
    assert.deepEqual(Object.fromEntries(applyRulesets(rulesets('http://other.example', [{ rules: setRules }]), url, dom)), {});
  });
  it('the documented examples: cities as an array from /cities, the year of a blog post from its URL', () => {
    const sets = rulesets('https://totally-real-rpg.com', [
      { url_filters: ['ends /cities'], rules: [{ action: 'extract', field_name: 'cities', selector: '.city', join_as: 'array', source: 'html' }] },
      { url_filters: ['begins /blog'], rules: [{ action: 'extract', field_name: 'publish_year', selector: 'blog\\/([0-9]{4})', join_as: 'string', source: 'url' }] },
    ]);
    const cities = parseDocument('<body><div>Cities:</div><div class="city">Summerstay</div><div class="city">Drenchwell</div><div class="city">Mezzoterran</div></body>');
    assert.deepEqual(Object.fromEntries(applyRulesets(sets, 'https://totally-real-rpg.com/cities', cities)), { cities: ['Summerstay', 'Drenchwell', 'Mezzoterran'] });
    assert.deepEqual(Object.fromEntries(applyRulesets(sets, 'https://totally-real-rpg.com/blog/2024/01/07/patch-1.0-changes', undefined)), { publish_year: '2024' });
  });
  it('a rule may select a <script>: nothing is left out of what a rule selects', () => {
    const d = parseDocument('<html><head><script type="application/ld+json">{"name": "Printer"}</script></head><body><div id="d"><script>Script body</script><p>P body</p></div></body></html>');
    const sets = rulesets('http://example.com', [{ rules: [
      { action: 'extract', field_name: 'ld', selector: 'script[type="application/ld+json"]', join_as: 'string', source: 'html' },
      { action: 'extract', field_name: 'div', selector: '#d', join_as: 'string', source: 'html' },
    ] }]);
    assert.deepEqual(Object.fromEntries(applyRulesets(sets, 'http://example.com/', d)), { ld: '{"name": "Printer"}', div: 'Script body P body' });
  });
  it('the text of a node: scripts left out, <br> a space, a <meta>\'s content read', () => {
    assert.equal(nodeText(parseDocument('<div><script>Script body</script><p>P body</p></div>')), 'P body');
    assert.equal(nodeText(parseDocument('<p>one<br>two<hr>three</p>')), 'one two three');
    assert.equal(nodeText(parseDocument('<div><meta name="tag name" content="This is the content"></div>').children[0]!), 'This is the content');
  });
  it('refuses what the Open Crawler refuses, saying what is wrong', () => {
    assert.throws(() => parseExtractionRule('{"action":"copy","field_name":"a","selector":"p","source":"html"}'), /action must be extract or set/);
    assert.throws(() => parseExtractionRule('{"action":"extract","field_name":"title","selector":"p","join_as":"string","source":"html"}'), /one of the document's own fields/);
    assert.throws(() => parseExtractionRule('{"action":"extract","field_name":"a","selector":"p","join_as":"list","source":"html"}'), /join_as must be array or string/);
    assert.throws(() => parseExtractionRule('{"action":"set","field_name":"a","selector":"p","source":"html"}'), /needs a value/);
    assert.throws(() => parseExtractionRule('{"action":"extract","field_name":"a","selector":"p","join_as":"string","source":"body"}'), /source must be html or url/);
    assert.throws(() => parseExtractionRule('{"action":"extract","field_name":"a","selector":"","join_as":"string","source":"html"}'), /selector must be a non-empty string/);
    assert.throws(() => parseExtractionRule('{"action":"extract","field_name":"a","selector":"(","join_as":"string","source":"url"}'), /not a valid regular expression/);
    assert.throws(() => parseExtractionRule('{"action":"extract","field_name":"a","selector":"//a/text()","join_as":"string","source":"html"}'), /XPath/);
    assert.throws(() => parseUrlFilter('begins blog'), /must start with \//);
    assert.throws(() => parseUrlFilter('starts /blog'), /begins\|ends\|contains\|regex/);
  });
});
