// What a cycle's requests carry, made once from the settings: the Referer
// from a parent URL, post_payload's matcher, and the proxies' targets with
// their !ENC! passwords decrypted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encryptSecret, type SecretKey } from '../../src/config/secrets.ts';
import { postPayloads, proxyTargets, refererFor } from '../../src/engine/request-setup.ts';
import { parseHeaders } from '../../src/engine/runtime.ts';

const KEY: SecretKey = { key: Buffer.alloc(16, 1), iv: Buffer.alloc(16, 2) };
const noKey = (): SecretKey => {
  throw new Error('the key file was read without an !ENC! value');
};

describe('refererFor (trawl_http send_referer)', () => {
  it('is the parent URL; none for a start URI', () => {
    assert.equal(refererFor('http://a.test/list?page=2', new URL('http://a.test/item')), 'http://a.test/list?page=2');
    assert.equal(refererFor(undefined, new URL('http://a.test/')), undefined);
  });
  it('drops the user name, password and fragment, and is not sent from https to http (RFC 9110 10.1.3)', () => {
    assert.equal(refererFor('http://user:pw@a.test/p#top', new URL('http://a.test/q')), 'http://a.test/p');
    assert.equal(refererFor('https://a.test/p', new URL('http://b.test/')), undefined);
    assert.equal(refererFor('https://a.test/p', new URL('https://b.test/')), 'https://a.test/p');
    assert.equal(refererFor('http://a.test/p', new URL('https://a.test/')), 'http://a.test/p');
  });
});

describe('postPayloads (MS-FSCCFG 2.2.4.29)', () => {
  it('is nothing for an empty section, and reads no key file', () => {
    assert.equal(postPayloads({}, noKey), undefined);
  });
  it('matches an exact URI as queued (WHATWG form), a prefix: name by its start, the longest prefix first', () => {
    const f = postPayloads({
      'http://Example.com': 'root=1',
      'prefix:http://example.com/secure': 'wide=1',
      'prefix:http://example.com/secure/inner': 'narrow=1',
    }, noKey)!;
    assert.equal(f('http://example.com/'), 'root=1');
    assert.equal(f('http://example.com/secure'), 'wide=1');
    assert.equal(f('http://example.com/secure/x?y=1'), 'wide=1');
    assert.equal(f('http://example.com/secure/inner/z'), 'narrow=1');
    assert.equal(f('http://example.com/other'), undefined);
    assert.equal(f('http://example.com/secur'), undefined);
  });
  it('decrypts an !ENC! payload', () => {
    const f = postPayloads({ 'prefix:http://a.test/': encryptSecret('user=me&pass=s3cret', KEY) }, () => KEY)!;
    assert.equal(f('http://a.test/login'), 'user=me&pass=s3cret');
  });
});

describe('proxyTargets (MS-FSCCFG 2.2.3 proxy)', () => {
  it('reads every form of "(http://)(username:password@)hostname(:port)", port 80 when absent', () => {
    assert.deepEqual(proxyTargets(['proxy.test', 'http://proxy.test:3128', 'u:p@10.0.0.1:8080', 'http://[::1]:3128/'], noKey), [
      { host: 'proxy.test', port: 80, username: undefined, password: undefined },
      { host: 'proxy.test', port: 3128, username: undefined, password: undefined },
      { host: '10.0.0.1', port: 8080, username: 'u', password: 'p' },
      { host: '::1', port: 3128, username: undefined, password: undefined },
    ]);
  });
  it('decrypts an !ENC! password, which may hold what the syntax cannot (@, :, spaces)', () => {
    const enc = encryptSecret('p@ss: word', KEY);
    assert.deepEqual(proxyTargets([`http://crawler:${enc}@proxy.test:3128`], () => KEY), [{ host: 'proxy.test', port: 3128, username: 'crawler', password: 'p@ss: word' }]);
  });
});

describe('headers (MS-FSCCFG 2.2.3): parseHeaders', () => {
  it('keeps trawl\'s User-Agent when the list names none, and the list\'s own when it does', () => {
    assert.match(parseHeaders(['Accept-Language: fr'])['user-agent']!, /^trawl\//);
    assert.equal(parseHeaders(['Accept-Language: fr'])['accept-language'], 'fr');
    assert.equal(parseHeaders(['user-agent: probe/1'])['user-agent'], 'probe/1');
  });
});

describe('an !ENC! value that does not decrypt', () => {
  it('names the parameter it is in', () => {
    const other: SecretKey = { key: Buffer.alloc(16, 9), iv: Buffer.alloc(16, 8) };
    const enc = encryptSecret('pw', KEY);
    assert.throws(() => proxyTargets([`u:${enc}@proxy.test:3128`], () => other), (e: Error & { code?: string }) => e.code === 'TRAWL_ERR_SECRET_DECRYPT' && /^proxy: an !ENC! value does not decrypt/.test(e.message));
    assert.throws(() => postPayloads({ 'http://a.test/': enc }, () => other), /^TrawlError: post_payload: an !ENC! value does not decrypt|post_payload: an !ENC! value/);
  });
});
