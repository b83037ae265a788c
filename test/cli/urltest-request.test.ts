// `trawl urltest --explain` tells how an allowed URL would be requested:
// the proxy (user name and address, never the password), the sub-collection
// whose settings apply, GET or POST (post_payload), the client certificate
// and whether a Referer goes with it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { ROOT } from '../helpers.ts';

const BIN = join(ROOT, 'bin/trawl.js');
const dir = tempDir('trawl-urltest-request-');
after(() => rmSync(dir, { recursive: true, force: true }));
const config = join(dir, 'c.xml');
writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="t">
  <section name="include_domains"><attrib name="suffix" type="list-string"><member>example.com</member></attrib></section>
  <attrib name="proxy" type="list-string"><member>http://crawler:Pr0xyPw@proxy.example.com:3128</member><member>backup.example.com</member></attrib>
  <attrib name="key_file" type="string">certs/crawler.key</attrib>
  <attrib name="cert_file" type="string">certs/crawler.pem</attrib>
  <section name="post_payload"><attrib name="prefix:http://www.example.com/secure" type="string">user=me&amp;pass=PayloadPw</attrib></section>
  <SubDomain name="partners">
    <section name="include_domains"><attrib name="suffix" type="list-string"><member>partner.example.com</member></attrib></section>
    <attrib name="proxy" type="list-string"><member>gateway.example.com:8080</member></attrib>
  </SubDomain>
</DomainSpecification></CrawlerConfig>`);

function urltest(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'urltest', config, '--no-fetch-robots', ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('trawl urltest --explain: how the URL would be requested', () => {
  it('names the proxies, the method, the sub-collection and the client certificate, never a secret', () => {
    const r = urltest('--explain', 'http://www.example.com/page', 'http://www.example.com/secure/form', 'http://a.partner.example.com/x');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /request: GET through proxy crawler@proxy\.example\.com:3128 or backup\.example\.com:80; client certificate certs\/crawler\.pem; Referer: the page it was found on/);
    assert.match(r.out, /request: POST \(post_payload\) through proxy crawler@proxy\.example\.com:3128/);
    assert.match(r.out, /request: GET through proxy gateway\.example\.com:8080; settings of sub-collection partners;/);
    assert.doesNotMatch(r.out + r.err, /Pr0xyPw|PayloadPw/);
  });

  it('--json carries the same as request', () => {
    const r = urltest('--json', 'http://a.partner.example.com/x', 'http://elsewhere.org/');
    const [partner, other] = r.out.trim().split('\n').map((l) => JSON.parse(l) as { allowed: boolean; request?: unknown });
    assert.deepEqual(partner!.request, {
      subcollection: 'partners', proxies: ['gateway.example.com:8080'], method: 'GET',
      clientCert: { keyFile: 'certs/crawler.key', certFile: 'certs/crawler.pem' }, referer: true,
    });
    assert.equal(other!.allowed, false);
    assert.equal(other!.request, undefined);
  });
});
