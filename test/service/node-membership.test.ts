// The cluster a site is routed with in a multinode installation (MS-FSCCFG site_clusters, domain_clustering).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveSettings } from '../../src/config/effective.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { clusterOf, heldWithRoutes } from '../../src/service/node-membership.ts';

function settingsOf(inner: string): ReturnType<typeof resolveSettings> {
  const r = readConfigXml(`<?xml version="1.0"?><CrawlerConfig><DomainSpecification name="c">${inner}</DomainSpecification></CrawlerConfig>`, 'test');
  return resolveSettings(r.document.collections[0]!);
}

describe('clusterOf', () => {
  it('is the site itself without site_clusters or domain_clustering', () => {
    assert.equal(clusterOf(settingsOf(''), 'http://www.example.com:80'), 'http://www.example.com:80');
  });
  it('domain_clustering: the hosts of a domain (public suffix and one label) are one cluster; an address is its own', () => {
    const s = settingsOf('<attrib name="domain_clustering" type="boolean">yes</attrib>');
    assert.equal(clusterOf(s, 'http://www.a.example.com:80'), 'domain:example.com');
    assert.equal(clusterOf(s, 'https://b.example.com:443'), 'domain:example.com');
    assert.equal(clusterOf(s, 'http://www.example.co.uk:80'), 'domain:example.co.uk');
    assert.equal(clusterOf(s, 'http://a.alpha.test:80'), 'domain:alpha.test');
    assert.equal(clusterOf(s, 'http://127.0.0.1:8080'), 'domain:127.0.0.1');
    assert.notEqual(clusterOf(s, 'http://other.com:80'), clusterOf(s, 'http://example.com:80'));
  });
  it('site_clusters: the hosts a group lists are one cluster, before domain_clustering', () => {
    const s = settingsOf(`<attrib name="domain_clustering" type="boolean">yes</attrib>
      <section name="site_clusters"><attrib name="mycluster" type="list-string"><member> site1.contoso.com </member><member>site2.other.org</member></attrib></section>`);
    assert.equal(clusterOf(s, 'http://site1.contoso.com:80'), 'cluster:mycluster');
    assert.equal(clusterOf(s, 'https://site2.other.org:443'), 'cluster:mycluster');
    assert.equal(clusterOf(s, 'http://site3.contoso.com:80'), 'domain:contoso.com');
  });
});

describe('heldWithRoutes', () => {
  it('keeps the later of an operator hold and a route hand-over', () => {
    const held = new Map([['a', 5], ['b', 9]]);
    assert.equal(heldWithRoutes(held, new Map()), held);
    assert.deepEqual([...heldWithRoutes(held, new Map([['b', 7], ['c', 3]]))], [['a', 5], ['b', 9], ['c', 3]]);
  });
});
