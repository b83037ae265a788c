// Every example of MS-FSCCFG §3 loads, validates and round-trips.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { resolveSettings } from '../../src/config/effective.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { writeConfigXml } from '../../src/config/writer.ts';
import { parseCredentials, parseErrorPolicy, parseTimeSlot } from '../../src/config/values.ts';
import { FIXTURES, fixture } from '../helpers.ts';

const DIR = 'fsccfg-examples/';
const files = readdirSync(FIXTURES + DIR).filter((f) => f.endsWith('.xml')).sort();

function load(name: string) {
  const r = readConfigXml(fixture(DIR + name), name);
  const errors = r.diagnostics.filter((d) => d.severity === 'error');
  assert.deepEqual(errors, [], `${name} has errors`);
  assert.equal(r.document.collections.length, 1);
  return { ...r, c: r.document.collections[0]! };
}

describe('MS-FSCCFG §3 examples', () => {
  it('has all twelve examples, with both forms of 3.3', () => {
    assert.equal(files.length, 13);
    for (const n of ['3.1', '3.2', '3.3', '3.4', '3.5', '3.6', '3.7', '3.8', '3.9', '3.10', '3.11', '3.12']) {
      assert.ok(files.some((f) => f.startsWith(`${n}-`)), n);
    }
  });

  for (const f of files) {
    it(`${f} validates and round-trips in every write mode`, () => {
      const { document, diagnostics, c } = load(f);
      // Only 3.11 warns: its payload has a bare "&".
      assert.equal(diagnostics.length, f.startsWith('3.11') ? 1 : 0, JSON.stringify(diagnostics));
      const explicit = readConfigXml(writeConfigXml(document), 'explicit');
      assert.deepEqual(explicit.diagnostics, []);
      assert.deepStrictEqual(explicit.document, document);
      for (const mode of ['complete', 'changed'] as const) {
        const again = readConfigXml(writeConfigXml(document, { mode }), mode);
        assert.deepEqual(again.diagnostics, [], mode);
        const c2 = again.document.collections[0]!;
        assert.deepStrictEqual(resolveSettings(c2), resolveSettings(c), mode);
        for (const node of c.nodes.keys()) assert.deepStrictEqual(resolveSettings(c2, { node }), resolveSettings(c, { node }));
      }
    });
  }

  it('3.1: crawlmode and start URIs', () => {
    const s = resolveSettings(load('3.1-simple.xml').c);
    assert.equal(s.crawlmode.fwdlinks, false);
    assert.equal(s.crawlmode.resetLevel, false);
    assert.equal(s.crawlmode.mode, 'FULL');
    assert.deepEqual(s.startUris, ['http://www.contoso.com']);
    assert.equal(s.delayS, 60); // a default
  });

  it('3.2: the typical configuration, including the spec\'s alternate spellings', () => {
    const { c } = load('3.2-typical.xml');
    const s = resolveSettings(c);
    assert.equal(s.cutOffBytes, 5000000);
    assert.equal(s.htmlRedirThreshS, 3);
    assert.equal(s.extractLinksFromDupes, false);
    assert.equal(s.loginFailedIgnore, false);
    assert.equal(s.refreshMin, 1440);
    assert.equal(s.truncate, false);
    assert.equal(s.excludeExts.length, 45);
    assert.equal(s.ftpErrors['550'], 'DELETE:0');
    assert.equal(s.httpErrors['5xx'], 'DELETE:10');
    assert.equal(s.storage.datastore, 'bstore');
    assert.equal(s.cachesize.ppPendingBytes, 131072);
    assert.deepEqual(s.pp.dsMetaInfo, ['duplicates', 'redirects', 'mirrors', 'metadata']);
    assert.equal(s.rss.followLinks, false);
    assert.equal(s.workqueuePriority.popScheme, 'default');
    assert.deepEqual(s.headers, ['User-Agent: FAST Search Web Crawler']);
  });

  it('3.3: the SubDomain element and the subdomains section give the same model', () => {
    const a = load('3.3-subcollection-element.xml');
    const b = load('3.3-subcollection-section.xml');
    assert.deepStrictEqual(a.document, b.document);
    const sub = resolveSettings(a.c, { subcollection: 'subdomain_1' });
    assert.equal(sub.delayS, 10);
    assert.equal(sub.refreshMin, 60);
    assert.deepEqual(sub.includeUris.prefix, ['http://www.contoso.com/index']);
    assert.equal(sub.maxPending, 2); // inherited from the collection (default)
    assert.equal(resolveSettings(a.c).delayS, 60);
  });

  it('3.4: a Login element becomes a login of the logins section', () => {
    const s = resolveSettings(load('3.4-login.xml').c);
    const login = s.logins.mytestlogin!;
    assert.equal(login.preload, 'http://preload.contoso.com/');
    assert.equal(login.scheme, 'https');
    assert.equal(login.action, 'POST');
    assert.deepEqual(login.sites, ['site1.contoso.com', 'site2.contoso.com']);
    assert.equal(login.ttlS, 7200);
    assert.equal(login.htmlForm, 'http://login.contoso.com/login.html');
    assert.equal(login.autofill, true);
    assert.deepEqual(login.parameters, { user: 'username', password: 'password' });
  });

  it('3.5: the Node override applies to its node only', () => {
    const { c } = load('3.5-node.xml');
    assert.equal(c.name, 'node_example'); // the spec writes name="node_example " with a trailing space
    assert.equal(resolveSettings(c).delayS, 60);
    assert.equal(resolveSettings(c, { node: 'crawler_node1' }).delayS, 90);
    assert.equal(resolveSettings(c, { node: 'crawler_node2' }).delayS, 60);
  });

  it('3.6: two priority levels with shares and include rules', () => {
    const wq = resolveSettings(load('3.6-workqueue.xml').c).workqueuePriority;
    assert.equal(wq.levels, 2);
    assert.equal(wq.popScheme, 'wrr');
    assert.equal(wq.putScheme, 'include');
    assert.equal(wq.priorityLevels['1']!.share, 10);
    assert.deepEqual(wq.priorityLevels['1']!.includeDomains.suffix, ['web005.contoso.com']);
    assert.equal(wq.priorityLevels['2']!.share, 5);
  });

  it('3.7: variable delay slots in the short form', () => {
    const s = resolveSettings(load('3.7-variable-delay.xml').c);
    assert.deepEqual(s.variableDelay, { 'Wed:09-Wed:19': '20', 'Mon:09-Mon:17': 'suspend' });
    const slot = parseTimeSlot('Wed:09-Wed:19');
    assert.ok(slot.ok);
    assert.deepEqual(slot.value, { from: { day: 2, minuteOfDay: 540 }, to: { day: 2, minuteOfDay: 1140 } });
  });

  it('3.8: http_errors overrides merge with the 2.2.4.12 defaults', () => {
    const e = resolveSettings(load('3.8-http-errors.xml').c).httpErrors;
    assert.deepEqual(e, { '4xx': 'DELETE', '5xx': 'DELETE:10, RETRY:3', int: 'KEEP', net: 'DELETE:3', ttl: 'DELETE:3', '408': 'KEEP' });
    const p = parseErrorPolicy(e['5xx']!);
    assert.ok(p.ok);
    assert.deepEqual(p.value, { action: 'delete', afterFailures: 10, retries: 3 });
  });

  it('3.9: passwd credentials with realm and scheme', () => {
    const s = resolveSettings(load('3.9-passwd.xml').c);
    const cred = parseCredentials(s.passwd['http://www.contoso.com/confidential1/']!);
    assert.ok(cred.ok);
    assert.deepEqual(cred.value, { username: 'user', password: 'password', realm: 'contoso', scheme: 'auto' });
  });

  it('3.10 – 3.12: site clusters, post payload, feeding', () => {
    assert.deepEqual(resolveSettings(load('3.10-site-clustering.xml').c).siteClusters, { mycluster: ['site1.constoso.com', 'site2.constoso.com', 'site3.constoso.com'] });
    assert.deepEqual(resolveSettings(load('3.11-post-payload.xml').c).postPayload, { 'prefix:http://www.contoso.com/secure': 'variable1=value1&variableB=valueB' });
    const feeding = resolveSettings(load('3.12-feeding.xml').c).feeding;
    assert.deepEqual(Object.keys(feeding), ['Global_News', 'Local_News']);
    assert.equal(feeding.Global_News!.collection, 'collection_A');
    assert.equal(feeding.Local_News!.primary, false);
  });
});
