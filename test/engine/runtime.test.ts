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

describe('variable_delay (MS-FSCCFG 2.2.4.22, the example of 3.7)', () => {
  // Local times: the slots are judged in the machine's time zone, as the spec's schedule is.
  const at = (y: number, m: number, d: number, h: number, min = 0): number => new Date(y, m - 1, d, h, min).getTime();
  const rt = buildRuntime(collection(`<attrib name="delay" type="real">60.0</attrib>
    <section name="variable_delay">
      <attrib name="Wed:09-Wed:19" type="string">20</attrib>
      <attrib name="Mon:09-Mon:17" type="string">suspend</attrib>
    </section>`).document.collections[0]!);

  it('gives the slot\'s delay, suspends in a suspend slot, and the collection\'s delay elsewhere', () => {
    // 2026-11-25 is a Wednesday, 2026-11-23 a Monday.
    assert.equal(rt.delayNow(undefined, at(2026, 11, 25, 10, 30)), 20_000);
    assert.equal(rt.delayNow(undefined, at(2026, 11, 25, 8, 59)), 60_000);
    assert.equal(rt.delayNow(undefined, at(2026, 11, 23, 9, 0)), 'suspend');
    assert.equal(rt.delayNow(undefined, at(2026, 11, 23, 17, 30)), 60_000);
    assert.equal(rt.delayNow(undefined, at(2026, 11, 24, 12, 0)), 60_000);
  });

  it('without slots, is the collection\'s delay at any time', () => {
    const plain = buildRuntime(collection('<attrib name="delay" type="real">2.5</attrib>').document.collections[0]!);
    assert.equal(plain.delayNow(undefined, at(2026, 11, 23, 10)), 2500);
    assert.equal(plain.delayNow(undefined, 0), 2500);
  });
});
