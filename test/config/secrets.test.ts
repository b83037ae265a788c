// !ENC! secrets (MS-FSCCFG 2.2.4.20): AES-128-CBC under a key file, and redaction.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createDecipheriv } from 'node:crypto';
import type { TrawlError } from '../../src/core/errors.ts';
import { encryptSecret, generateKeyBytes, keyFilePath, loadKeyFile, parseKeyFile, redactCollection, revealSecret } from '../../src/config/secrets.ts';
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
});
