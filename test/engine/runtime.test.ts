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

describe('scope refusals by the URL alone (ScopeDecision.byUrlAlone)', () => {
  const rt = buildRuntime(collection(`<attrib name="exclude_exts" type="list-string"><member>.css</member></attrib>
    <section name="exclude_uris"><attrib name="prefix" type="list-string"><member>http://a.test/private/</member></attrib></section>
    <section name="crawlmode"><attrib name="mode" type="string">DEPTH:1</attrib><attrib name="fwdlinks" type="boolean">no</attrib></section>`).document.collections[0]!);
  const decide = (url: string, parent: string, hops: number) => rt.scope.decide({ url: new URL(url), parent: new URL(parent), hops, viaRedirect: false, seed: false });

  it('holds for refusals by scheme, extension, URL limits and URI rules, wherever the link is found', () => {
    for (const [url, code] of [['ftp://a.test/x', 'ch'], ['http://a.test/s.css', 'ur'], ['http://a.test/private/x', 'ur'], [`http://a.test/${'x'.repeat(3000)}`, 'ur']] as const) {
      for (const hops of [0, 5]) {
        const d = decide(url, 'http://a.test/', hops);
        assert.equal(d.allowed, false, url);
        assert.equal(d.code, code, url);
        assert.equal(d.byUrlAlone, true, `${url}: ${d.decidedBy}`);
      }
    }
  });

  it('does not hold for refusals that depend on where the link was found (depth, another domain)', () => {
    const deep = decide('http://a.test/page', 'http://a.test/', 2);
    assert.deepEqual([deep.allowed, deep.code, deep.byUrlAlone], [false, 'de', false]);
    assert.equal(decide('http://a.test/page', 'http://a.test/', 0).allowed, true);
    const fwd = decide('http://b.test/page', 'http://a.test/', 0);
    assert.deepEqual([fwd.allowed, fwd.code, fwd.byUrlAlone], [false, 'do', false]);
    assert.equal(decide('http://a.test/s.css', 'http://a.test/', 0).byUrlAlone, true);
  });

  it('is false for an allowed URL', () => {
    assert.equal(decide('http://a.test/page', 'http://a.test/', 0).byUrlAlone, false);
  });
});
