// The run-time view of a collection: canonicalization as configured (trawl_urls, sort_query_params, rewrite_rules).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { buildRuntime } from '../../src/engine/runtime.ts';

const collection = (body: string) => {
  const r = readConfigXml(`<CrawlerConfig><DomainSpecification name="c">${body}</DomainSpecification></CrawlerConfig>`, 'c.xml');
  return r;
};

describe('canonicalization as configured', () => {
  it('applies the default rules, and only those', () => {
    const rt = buildRuntime(collection('').document.collections[0]!);
    assert.equal(rt.canon.canonicalize('HTTP://WWW.Example.COM:80/a?jsessionid=0123456789abcdef0123456789abcdef&b=2#top'), 'http://www.example.com/a?b=2');
  });
  it('takes the rules of trawl_urls, sort_query_params and rewrite_rules', () => {
    const r = collection(`<attrib name="sort_query_params" type="boolean">yes</attrib>
      <attrib name="rewrite_rules" type="list-string"><member>#/old/#/new/#</member></attrib>
      <section name="trawl_urls"><attrib name="canonicalization" type="list-string"><member>strip-www</member><member>drop-fragment</member></attrib></section>`);
    assert.deepEqual(r.diagnostics, []);
    const rt = buildRuntime(r.document.collections[0]!);
    assert.equal(rt.canon.canonicalize('http://www.example.com/old/x?b=2&a=1#f'), 'http://example.com/new/x?a=1&b=2');
  });
  it('refuses an unknown rule name with the list of known ones', () => {
    const r = collection('<section name="trawl_urls"><attrib name="canonicalization" type="list-string"><member>strip-everything</member></attrib></section>');
    assert.equal(r.diagnostics[0]!.code, 'TRAWL_ERR_CONFIG_VALUE');
    assert.match(r.diagnostics[0]!.message, /expected one of lowercase-scheme-host, .*strip-www/);
  });
});
