// `trawl crawl` of an HTTPS site that requires a client certificate (Debian's
// nginx with ssl_verify_client on; the CA, server and client certificates
// made by openssl here): key_file and cert_file offered directly and
// through a proxy's CONNECT tunnel (tinyproxy), asserted on nginx's access
// log; and `config validate` / `trawl crawl` naming a file that cannot be used.
import assert from 'node:assert/strict';
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { makePki, startNginxTls, type NginxTls, type TestPki } from '../support/nginx-tls.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { startTinyproxy } from '../support/tinyproxy.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const dir = tempDir('trawl-client-cert-');
const IP = '127.0.31.20';
const PROXY_IP = '127.0.31.21';
/** Where tinyproxy's connections to the site come from: nginx's log tells them apart. */
const PROXY_OUT = '127.0.31.22';

interface Run { code: number | null; out: string; err: string }

function trawl(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return runTrawl(args, { env });
}

/** A collection file in `dir` crawling `start` (https allowed), with more attribs. */
function collection(name: string, start: string, more: string): string {
  const file = join(dir, `${name}.xml`);
  writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="${name}">
    <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
    <attrib name="allowed_schemes" type="list-string"><member>http</member><member>https</member></attrib>
    <attrib name="delay" type="real">0</attrib>
    <section name="include_domains"><attrib name="exact" type="list-string"><member>${new URL(start).hostname}</member></attrib></section>
    <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
    ${more}
  </DomainSpecification></CrawlerConfig>`);
  return file;
}

const certFiles = (key = 'client.key', cert = 'client.pem'): string =>
  `<attrib name="key_file" type="string">${key}</attrib><attrib name="cert_file" type="string">${cert}</attrib>`;

describe('client certificates (key_file, cert_file) against nginx with ssl_verify_client on', { skip: skipUnless(TOOLS.nginx, TOOLS.openssl) }, () => {
  let pki: TestPki;
  let site: NginxTls;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    pki = makePki(join(dir, 'pki'), IP);
    // The collection files name the key and certificate relative to their own folder.
    copyFileSync(pki.clientKey, join(dir, 'client.key'));
    copyFileSync(pki.clientCert, join(dir, 'client.pem'));
    copyFileSync(pki.strayKey, join(dir, 'stray.key'));
    copyFileSync(pki.encryptedKey, join(dir, 'encrypted.key'));
    site = await startNginxTls(join(dir, 'nginx'), IP, pki, {
      '/': '<html><head><title>Home</title></head><body><a href="/a.html">a</a></body></html>',
      '/a.html': '<html><head><title>A</title></head><body>A page behind a client certificate</body></html>',
    });
    env = { NODE_EXTRA_CA_CERTS: pki.caCert };
  });
  after(async () => {
    await site?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('offers the certificate to the site, which answers; without it the site refuses every request', async () => {
    const withCert = await trawl(['crawl', '--data', join(dir, 'direct-data'), collection('direct', `${site.origin}/`, certFiles())], env);
    assert.equal(withCert.code, 0, withCert.err);
    const log = site.accessLog();
    assert.deepEqual(log.map((l) => l.request).sort(), ['GET / HTTP/1.1', 'GET /a.html HTTP/1.1', 'GET /robots.txt HTTP/1.1']);
    for (const l of log) {
      assert.equal(l.verify, 'SUCCESS', l.request);
      assert.equal(l.subject, 'CN=trawl-test-client', l.request);
      assert.notEqual(l.status, 400, l.request);
    }

    const before = log.length;
    const without = await trawl(['crawl', '--data', join(dir, 'nocert-data'), collection('nocert', `${site.origin}/`, '')], env);
    assert.notEqual(without.code, 0);
    const refused = site.accessLog().slice(before);
    assert.ok(refused.length > 0);
    for (const l of refused) assert.deepEqual([l.status, l.verify], [400, 'NONE'], l.request);
  });

  it('offers it through a proxy\'s CONNECT tunnel: nginx sees the proxy\'s address and the certificate', { skip: skipUnless(TOOLS.tinyproxy) }, async () => {
    const proxy = await startTinyproxy(dir, PROXY_IP, { bind: PROXY_OUT });
    try {
      const before = site.accessLog().length;
      const file = collection('tunnel', `${site.origin}/`, `${certFiles()}<attrib name="proxy" type="list-string"><member>${proxy.host}:${proxy.port}</member></attrib>`);
      const r = await trawl(['crawl', '--data', join(dir, 'tunnel-data'), file], env);
      assert.equal(r.code, 0, r.err);
      const log = site.accessLog().slice(before);
      assert.deepEqual(log.map((l) => l.request).sort(), ['GET / HTTP/1.1', 'GET /a.html HTTP/1.1', 'GET /robots.txt HTTP/1.1']);
      for (const l of log) assert.deepEqual([l.remote, l.verify, l.subject], [PROXY_OUT, 'SUCCESS', 'CN=trawl-test-client'], l.request);
      assert.ok(proxy.requests().includes(`CONNECT ${IP}:${site.port} HTTP/1.1`), proxy.requests().join(' | '));
      assert.ok(!proxy.requests().some((l) => l.startsWith('GET')), 'an https request went to the proxy in the clear');
    } finally {
      await proxy.stop();
    }
  });

  it('config validate names the parameter and the file that cannot be used; trawl crawl stops before any request', async () => {
    const start = `${site.origin}/`;
    const cases: Array<[string, string, RegExp]> = [
      ['mismatch', certFiles('stray.key'), /key_file: key_file ".*stray\.key" is not the key of the certificate in cert_file ".*client\.pem" \(CN=trawl-test-client\)/],
      ['missing', certFiles('client.key', 'nowhere.pem'), /cert_file: cert_file ".*nowhere\.pem" cannot be read: ENOENT/],
      ['encrypted', certFiles('encrypted.key'), /key_file: key_file ".*encrypted\.key" does not hold a usable PEM private key: the key is encrypted/],
      ['half', '<attrib name="cert_file" type="string">client.pem</attrib>', /cert_file: cert_file is set without key_file/],
      ['notpem', certFiles('client.key', 'client.key'), /cert_file: cert_file ".*client\.key" does not hold a PEM X\.509 certificate/],
    ];
    for (const [name, more, expected] of cases) {
      const file = collection(`bad-${name}`, start, more);
      const v = await trawl(['config', 'validate', file]);
      assert.equal(v.code, 65, `${name}: ${v.out}${v.err}`);
      assert.match(v.err, new RegExp(`bad-${name}\\.xml:\\d+:\\d+: error TRAWL_ERR_CLIENT_CERT: collection "bad-${name}", ${expected.source}`), name);
    }
    const ok = await trawl(['config', 'validate', collection('good', start, certFiles())]);
    assert.equal(ok.code, 0, ok.err);

    const before = site.accessLog().length;
    const c = await trawl(['crawl', '--data', join(dir, 'bad-data'), join(dir, 'bad-mismatch.xml')], env);
    assert.equal(c.code, 78, c.err);
    assert.match(c.err, /TRAWL_ERR_CLIENT_CERT: key_file ".*stray\.key" is not the key of the certificate/);
    assert.equal(site.accessLog().length, before, 'a request was made with an unusable certificate');
  });
});
