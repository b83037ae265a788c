import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { basicAuthorization, DigestSession, digestStrength, parseChallenges } from '../../src/fetch/digest.ts';

/** The fields of an Authorization: Digest value. */
function fields(value: string): Map<string, string> {
  assert.match(value, /^Digest /);
  const c = parseChallenges([value]);
  return c[0]!.params as Map<string, string>;
}

describe('WWW-Authenticate challenges', () => {
  it('reads several challenges in one value, quoted strings with escapes, and token68', () => {
    const c = parseChallenges(['Newauth realm="apps", type=1, title="Login to \\"apps\\"", Basic realm="simple"', 'NTLM', 'Negotiate YII=, Bearer realm="x"']);
    assert.deepEqual(c.map((x) => x.scheme), ['newauth', 'basic', 'ntlm', 'negotiate', 'bearer']);
    assert.equal(c[0]!.params.get('title'), 'Login to "apps"');
    assert.equal(c[0]!.params.get('type'), '1');
    assert.equal(c[1]!.params.get('realm'), 'simple');
    assert.equal(c[3]!.token68, 'YII=');
    assert.equal(c[4]!.params.get('realm'), 'x');
  });

  it('reads a Digest challenge with a comma inside a quoted qop', () => {
    const [d] = parseChallenges(['Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"']);
    assert.equal(d!.params.get('qop'), 'auth, auth-int');
    assert.equal(d!.params.get('algorithm'), 'SHA-256');
    assert.equal(digestStrength(d!), 2);
  });

  it('a Digest challenge this client cannot answer has no strength: auth-int only, an unknown algorithm, no nonce', () => {
    for (const v of ['Digest realm="r", nonce="n", qop="auth-int"', 'Digest realm="r", nonce="n", algorithm=SHA-1', 'Digest realm="r"']) {
      assert.equal(digestStrength(parseChallenges([v])[0]!), undefined, v);
    }
  });

  it('does not loop or throw on garbage', () => {
    for (const v of ['', ',,,', '=', '"', 'Basic realm="unterminated', 'Basic realm=', '\u0000\u0001', 'a=b=c', 'Basic ,,, realm = "x" , ,']) {
      assert.doesNotThrow(() => parseChallenges([v]));
    }
    assert.equal(parseChallenges(['Basic ,,, realm = "x" , ,'])[0]!.params.get('realm'), 'x');
  });
});

describe('Basic (RFC 7617)', () => {
  it('is base64 of user:password in UTF-8 (RFC 7617 2 and 2.1 examples)', () => {
    assert.equal(basicAuthorization('Aladdin', 'open sesame'), 'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==');
    assert.equal(basicAuthorization('test', '123\u00A3'), 'Basic dGVzdDoxMjPCow==');
  });
});

describe('Digest (RFC 7616, RFC 2617)', () => {
  const rfc7616 = (alg: string): DigestSession => new DigestSession(parseChallenges([
    `Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=${alg}, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`,
  ])[0]!, () => 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ');

  it('RFC 7616 3.9.1 with MD5', () => {
    const f = fields(rfc7616('MD5').authorization('GET', '/dir/index.html', 'Mufasa', 'Circle of Life'));
    assert.equal(f.get('response'), '8ca523f5e9506fed4657c9700eebdbec');
    assert.equal(f.get('nc'), '00000001');
    assert.equal(f.get('qop'), 'auth');
    assert.equal(f.get('opaque'), 'FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS');
    assert.equal(f.get('uri'), '/dir/index.html');
  });

  it('RFC 7616 3.9.1 with SHA-256', () => {
    const f = fields(rfc7616('SHA-256').authorization('GET', '/dir/index.html', 'Mufasa', 'Circle of Life'));
    assert.equal(f.get('response'), '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1');
    assert.equal(f.get('algorithm'), 'SHA-256');
  });

  it('RFC 2617 3.5, and nc counts the requests made with one nonce', () => {
    const s = new DigestSession(parseChallenges(['Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"'])[0]!, () => '0a4f113b');
    const f = fields(s.authorization('GET', '/dir/index.html', 'Mufasa', 'Circle Of Life'));
    assert.equal(f.get('response'), '6629fae49393a05397450978507c4ef1');
    assert.equal(f.get('algorithm'), 'MD5');
    assert.equal(fields(s.authorization('GET', '/dir/index.html', 'Mufasa', 'Circle Of Life')).get('nc'), '00000002');
  });

  it('without qop (RFC 2069 form, kept by RFC 2617): response = H(HA1:nonce:HA2), no nc or cnonce', () => {
    const s = new DigestSession(parseChallenges(['Digest realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093"'])[0]!);
    // RFC 2069 2.4's example (password "CircleOfLife"), with the response its errata corrects
    const f = fields(s.authorization('GET', '/dir/index.html', 'Mufasa', 'CircleOfLife'));
    assert.equal(f.get('response'), '1949323746fe6a43ef61f9606e7febea');
    assert.equal(f.has('nc'), false);
    assert.equal(f.has('cnonce'), false);
    assert.equal(f.has('qop'), false);
  });
});
