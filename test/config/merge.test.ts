// CollectionAdd's merge (MS-FSCADM 2.2.9.3): what the partial names is overridden, the rest is kept.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveSettings } from '../../src/config/effective.ts';
import { mergeCollections } from '../../src/config/merge.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { checkRules } from '../../src/config/rules.ts';
import type { Diagnostic } from '../../src/config/diagnostics.ts';

function one(xml: string, partial = false) {
  const r = readConfigXml(`<CrawlerConfig><DomainSpecification name="c">${xml}</DomainSpecification></CrawlerConfig>`, 'c.xml', { partial });
  assert.deepEqual(r.diagnostics, []);
  return r.document.collections[0]!;
}

describe('merge', () => {
  const base = one(`
    <attrib name="delay" type="real">60</attrib>
    <attrib name="start_uris" type="list-string"><member>http://a.example/</member><member>http://b.example/</member></attrib>
    <section name="storage"><attrib name="compress" type="boolean">no</attrib><attrib name="clusters" type="integer">8</attrib></section>
    <section name="http_errors"><attrib name="404" type="string">KEEP</attrib></section>
    <SubDomain name="news"><attrib name="delay" type="real">5</attrib><attrib name="refresh" type="real">30</attrib>
      <section name="include_uris"><attrib name="prefix" type="list-string"><member>http://a.example/news/</member></attrib></section></SubDomain>
    <Node name="n1"><attrib name="delay" type="real">90</attrib></Node>`);

  it('overrides what the partial names and keeps the rest', () => {
    const partial = one(`
      <attrib name="delay" type="real">10</attrib>
      <attrib name="start_uris" type="list-string"><member>http://c.example/</member></attrib>
      <section name="storage"><attrib name="clusters" type="integer">4</attrib></section>
      <section name="http_errors"><attrib name="410" type="string">DELETE</attrib></section>
      <SubDomain name="news"><attrib name="delay" type="real">7</attrib></SubDomain>
      <Node name="n2"><attrib name="max_pending" type="integer">4</attrib></Node>`, true);
    const merged = mergeCollections(base, partial);
    const problems: Diagnostic[] = [];
    checkRules(merged, problems);
    assert.deepEqual(problems, []);
    const s = resolveSettings(merged);
    assert.equal(s.delayS, 10);
    assert.deepEqual(s.startUris, ['http://c.example/']); // a list is one setting: replaced, not appended
    assert.equal(s.storage.compress, false); // kept
    assert.equal(s.storage.clusters, 4);
    assert.deepEqual(s.httpErrors, { '4xx': 'DELETE:0', '5xx': 'DELETE:10', int: 'KEEP:0', net: 'DELETE:3, RETRY:1', ttl: 'DELETE:3', '404': 'KEEP', '410': 'DELETE' });
    const news = resolveSettings(merged, { subcollection: 'news' });
    assert.equal(news.delayS, 7);
    assert.equal(news.refreshMin, 30); // kept from the base sub-collection
    assert.deepEqual(news.includeUris.prefix, ['http://a.example/news/']);
    assert.equal(resolveSettings(merged, { node: 'n1' }).delayS, 90); // the base node override is kept
    assert.equal(resolveSettings(merged, { node: 'n2' }).maxPending, 4);
    assert.equal(resolveSettings(merged, { node: 'n2' }).delayS, 10);
  });

  it('checks the rules on the merged result: a partial cannot break them', () => {
    const partial = one('<SubDomain name="news"><attrib name="refresh" type="real">2000</attrib></SubDomain>', true);
    const problems: Diagnostic[] = [];
    checkRules(mergeCollections(base, partial), problems);
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.code, 'TRAWL_ERR_CONFIG_RULE');
    assert.equal(problems[0]!.param, 'subdomains.news.refresh');
  });

  it('changes neither input', () => {
    const before = JSON.stringify(resolveSettings(base));
    mergeCollections(base, one('<attrib name="delay" type="real">1</attrib>'));
    assert.equal(JSON.stringify(resolveSettings(base)), before);
  });

  it('a new collection merged into an empty one gets the MS-FSCCFG defaults', () => {
    const s = resolveSettings(mergeCollections(one(''), one('<attrib name="max_pending" type="integer">3</attrib>')));
    assert.equal(s.maxPending, 3);
    assert.equal(s.delayS, 60);
    assert.equal(s.refreshMin, 1500);
    assert.equal(s.storage.datastore, 'bstore');
    assert.deepEqual(s.allowedSchemes, ['http']);
  });
});
