// !ENC! secrets (MS-FSCCFG 2.2.4.20): AES-128-CBC under a key file, and redaction.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createDecipheriv } from 'node:crypto';
import type { TrawlError } from '../../src/core/errors.ts';
import { encryptSecret, generateKeyBytes, keyFilePath, loadKeyFile, maskText, maskUrl, maskValue, MASK, parseKeyFile, redactCollection, restoreMasked, revealSecret } from '../../src/config/secrets.ts';
import { COLLECTION, findAttrib, LOGIN } from '../../src/config/registry.ts';
import type { AttribDef } from '../../src/config/schema.ts';
import { maskFields } from '../../src/cli/logging.ts';
import { readConfigXml } from '../../src/config/xml-reader.ts';
import { writeConfigXml } from '../../src/config/writer.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-secrets-'));
const keyBytes = Buffer.from('000102030405060708090a0b0c0d0e0f' + 'f0e0d0c0b0a090807060504030201000', 'hex');

describe('!ENC! secrets', () => {
  it('reads a key file as 32 raw bytes or 64 hex digits', () => {
    writeFileSync(join(dir, 'raw.dat'), keyBytes);
    writeFileSync(join(dir, 'hex.dat'), '000102030405060708090a0b0c0d0e0f\nf0e0d0c0b0a090807060504030201000\n');
    assert.deepEqual(loadKeyFile(join(dir, 'raw.dat')), loadKeyFile(join(dir, 'hex.dat')));
    assert.equal(loadKeyFile(join(dir, 'raw.dat')).key.toString('hex'), '000102030405060708090a0b0c0d0e0f');
    assert.equal(loadKeyFile(join(dir, 'raw.dat')).iv.toString('hex'), 'f0e0d0c0b0a090807060504030201000');
  });

  it('refuses a key file of the wrong size, naming the file', () => {
    assert.throws(() => parseKeyFile(Buffer.alloc(16), '/k.dat'), (e: TrawlError) => e.code === 'TRAWL_ERR_SECRET_KEY' && /\/k\.dat/.test(e.message));
    assert.throws(() => loadKeyFile(join(dir, 'missing.dat')), (e: TrawlError) => e.code === 'TRAWL_ERR_SECRET_KEY' && /ENOENT/.test(e.message));
  });

  it('encrypts with AES-128-CBC under the file\'s key and IV, and decrypts', () => {
    const key = parseKeyFile(keyBytes, 'k');
    const enc = encryptSecret('s3cret:pä$$', key);
    assert.match(enc, /^!ENC![A-Za-z0-9+/]+=*$/);
    // Independent check of the cipher: decrypt with node:crypto directly.
    const d = createDecipheriv('aes-128-cbc', keyBytes.subarray(0, 16), keyBytes.subarray(16));
    assert.equal(Buffer.concat([d.update(Buffer.from(enc.slice(5), 'base64')), d.final()]).toString('utf8'), 's3cret:pä$$');
    assert.equal(revealSecret(enc, key), 's3cret:pä$$');
    assert.equal(revealSecret('plain', key), 'plain');
  });

  it('fails clearly with the wrong key', () => {
    const enc = encryptSecret('x', parseKeyFile(keyBytes, 'k'));
    assert.throws(() => revealSecret(enc, parseKeyFile(generateKeyBytes(), 'other')), (e: TrawlError) => e.code === 'TRAWL_ERR_SECRET_DECRYPT');
  });

  it('decrypts only when asked: a loader is not called for plain values', () => {
    let loads = 0;
    const loader = () => {
      loads++;
      return parseKeyFile(keyBytes, 'k');
    };
    revealSecret('plain', loader);
    assert.equal(loads, 0);
  });

  it('finds the key file: $TRAWL_KEY_FILE, then the configured name, then the spec name in the data directory', () => {
    assert.equal(keyFilePath('/data', undefined, {}), '/data/CrawlerEncryptionKey.dat');
    assert.equal(keyFilePath('/data', 'k.dat', {}), '/data/k.dat');
    assert.equal(keyFilePath('/data', '/etc/k.dat', {}), '/etc/k.dat');
    assert.equal(keyFilePath('/data', 'k.dat', { TRAWL_KEY_FILE: '/run/k' }), '/run/k');
  });

  it('redacts clear-text secrets and keeps !ENC! values', () => {
    const enc = encryptSecret('pw', parseKeyFile(keyBytes, 'k'));
    const r = readConfigXml(`<CrawlerConfig><DomainSpecification name="c">
      <attrib name="proxy" type="list-string"><member>http://u:hunter2@proxy.example:3128</member><member>http://v:${enc}@p2.example</member></attrib>
      <section name="passwd"><attrib name="http://a.example/" type="string">bob:hunter2:realm:basic</attrib><attrib name="r2" type="string">amy:${enc}</attrib></section>
      <section name="ftp_acct"><attrib name="ftp.example" type="string">ftpuser:hunter2</attrib></section>
      <section name="trawl_sinks"><section name="es"><attrib name="type" type="string">elasticsearch</attrib><attrib name="api_key" type="string">hunter2</attrib></section></section>
    </DomainSpecification></CrawlerConfig>`);
    assert.deepEqual(r.diagnostics, []);
    const xml = writeConfigXml(redactCollection(r.document.collections[0]!));
    assert.doesNotMatch(xml, /hunter2/);
    assert.match(xml, /http:\/\/u:\*{8}@proxy\.example:3128/);
    assert.match(xml, /bob:\*{8}:realm:basic/);
    assert.match(xml, /ftpuser:\*{8}/);
    assert.ok(xml.includes(`amy:${enc}`));
    assert.ok(xml.includes(`v:${enc}@p2.example`));
    // The writer's own redact option does the same.
    assert.doesNotMatch(writeConfigXml(r.document, { redact: true }), /hunter2/);
  });

  it('never echoes a secret in a validation error', () => {
    const r = readConfigXml('<CrawlerConfig><DomainSpecification name="c"><section name="passwd"><attrib name="http://a/" type="string">bob:hunter2:realm:kerberos</attrib></section></DomainSpecification></CrawlerConfig>');
    assert.equal(r.diagnostics.length, 1);
    assert.doesNotMatch(r.diagnostics[0]!.message, /hunter2/);
  });

  it('masks each kind of secret parameter as the registry marks it', () => {
    const a = (name: string): AttribDef => findAttrib(COLLECTION, name)!;
    assert.deepEqual(maskValue(a('headers'), ['User-Agent: x', 'Authorization: Basic dXNlcjpwdw==', 'cookie:sid=1', 'X-Auth-Token: t0k', 'Proxy-Authorization: Bearer q']),
      ['User-Agent: x', `Authorization: ${MASK}`, `cookie: ${MASK}`, `X-Auth-Token: ${MASK}`, `Proxy-Authorization: ${MASK}`]);
    assert.deepEqual(maskValue(a('start_uris'), ['http://u:pw@a.example/x', 'http://a.example/@x', 'https://tok@b.example/']),
      [`http://u:${MASK}@a.example/x`, 'http://a.example/@x', 'https://tok@b.example/']);
    assert.equal(maskValue(a('delay'), 5), 5);
    const post = COLLECTION.sections.find((x) => x.name === 'post_payload')!.dynamicAttrib!;
    assert.equal(maskValue(post, 'user=a&pass=b'), MASK);
    const params = LOGIN.sections.find((x) => x.name === 'parameters')!.dynamicAttrib!;
    assert.equal(maskValue(params, 'hunter2'), MASK);
    const passwd = COLLECTION.sections.find((x) => x.name === 'passwd')!.dynamicAttrib!;
    assert.equal(maskValue(passwd, 'bob:pw'), `bob:${MASK}`);
    assert.equal(maskValue(passwd, 'bob'), MASK, 'a malformed credential is masked whole');
  });

  it('masks URL passwords and secret header values in free text, and leaves other text alone', () => {
    assert.equal(maskText('cannot reach http://u:p%40ss@h.example:9/RPC2: ECONNREFUSED'), `cannot reach http://u:${MASK}@h.example:9/RPC2: ECONNREFUSED`);
    // A header value runs to the end of the line (or a quote, &, ; or ,): what follows it is masked too.
    assert.equal(maskText('sent Authorization: Bearer abc.def and more'), `sent Authorization: ${MASK}`);
    assert.equal(maskText('{"h":"Cookie: a=b","n":1}'), `{"h":"Cookie: ${MASK}","n":1}`);
    assert.equal(maskText('{"password":"x"} api_key=k1&user=u'), `{"password":"x"} api_key=${MASK}&user=u`);
    for (const plain of ['TRAWL_ERR_SECRET_KEY: cannot read key file k.dat', 'X-Token-Count: 3', '200 98 bytes in 19 ms', 'unexpected token at line 3', 'http://a.example/x?y=1', 'see https://a.example/login']) assert.equal(maskText(plain), plain);
    assert.equal(maskUrl('ftp://anon@h/'), 'ftp://anon@h/');
  });

  it('masks log fields: secret-named fields whole, URLs, errors and nested values; unchanged objects are not copied', () => {
    const plain = { event: 'fetch', url: 'http://a.example/', status: 200 };
    assert.equal(maskFields(plain), plain);
    const err = new Error('GET http://u:pw1@a.example/ failed');
    const m = maskFields({ url: 'http://u:pw2@a.example/', headers: { authorization: 'Basic x', accept: '*/*' }, err, list: ['Cookie: c=1'] }) as Record<string, unknown>;
    assert.doesNotMatch(JSON.stringify(m), /pw1|pw2|Basic x|c=1/);
    assert.equal((m.headers as Record<string, string>).accept, '*/*');
    assert.equal(m.url, `http://u:${MASK}@a.example/`);
  });

  it('puts the stored secrets back where a configuration sent back holds the mask', () => {
    const read = (body: string) => {
      const r = readConfigXml(`<CrawlerConfig><DomainSpecification name="c">${body}</DomainSpecification></CrawlerConfig>`, 'c.xml', { partial: true });
      assert.deepEqual(r.diagnostics.filter((d) => d.severity === 'error'), []);
      return r.document.collections[0]!;
    };
    const stored = read(`
      <attrib name="headers" type="list-string"><member>Authorization: Bearer real1</member><member>User-Agent: x</member></attrib>
      <section name="passwd"><attrib name="r1" type="string">bob:real2:r1:basic</attrib><attrib name="r2" type="string">amy:real3</attrib></section>
      <Login name="l1"><section name="parameters"><attrib name="password" type="string">real4</attrib></section></Login>
      <Node name="n1"><attrib name="proxy" type="list-string"><member>http://p:real5@proxy.example:3128</member></attrib></Node>`);
    const sentBack = read(writeConfigXml(redactCollection(stored)).replace(/^[\s\S]*?<DomainSpecification name="c">|<\/DomainSpecification>[\s\S]*$/g, ''));
    const restored = writeConfigXml(restoreMasked(sentBack, stored));
    for (const s of ['real1', 'real2', 'real3', 'real4', 'real5']) assert.ok(restored.includes(s), s);
    assert.ok(!restored.includes(MASK));
    // A new user name with the mask, a mask at another path, or no stored value: refused, naming the parameter.
    const bad: Array<[string, RegExp]> = [
      ['<section name="passwd"><attrib name="r1" type="string">eve:********:r1:basic</attrib></section>', /passwd\.r1/],
      ['<section name="passwd"><attrib name="r9" type="string">bob:********:r1:basic</attrib></section>', /passwd\.r9/],
      ['<Login name="l2"><section name="parameters"><attrib name="password" type="string">********</attrib></section></Login>', /logins\.l2\.parameters\.password/],
      ['<attrib name="headers" type="list-string"><member>Cookie: ********</member></attrib>', /headers/],
    ];
    for (const [body, param] of bad) {
      assert.throws(() => restoreMasked(read(body), stored), (e: TrawlError) => e.code === 'TRAWL_ERR_CONFIG_MASKED' && param.test(e.message) && !/real\d/.test(e.message), body);
      assert.throws(() => restoreMasked(read(body), undefined), (e: TrawlError) => e.code === 'TRAWL_ERR_CONFIG_MASKED');
    }
    // A clear value that is sent is taken as it is.
    assert.ok(writeConfigXml(restoreMasked(read('<section name="passwd"><attrib name="r1" type="string">bob:new:r1:basic</attrib></section>'), stored)).includes('bob:new:r1:basic'));
  });
});

