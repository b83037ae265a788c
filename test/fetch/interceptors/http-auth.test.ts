import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeFetch, type FetchCall } from '../../../src/fetch/interceptor.ts';
import { HttpAuth } from '../../../src/fetch/interceptors/http-auth.ts';
import { PasswdTable, type AuthCredentials } from '../../../src/fetch/passwd.ts';
import type { FetchOutcome, ResponseOutcome } from '../../../src/fetch/fetch-types.ts';
import { parseChallenges } from '../../../src/fetch/digest.ts';
import { call, fakeCore, response } from '../fake-core.ts';

const cred = (username: string, password: string, realm?: string, scheme: AuthCredentials['scheme'] = 'basic'): AuthCredentials => ({ username, password, realm, scheme });
const BOB = 'Basic Ym9iOnMzY3JldA=='; // bob:s3cret

function table(entries: Array<[string, AuthCredentials]>, realmOrigins: string[] = [], reveal = (v: string) => v): PasswdTable {
  return new PasswdTable(entries, realmOrigins, reveal);
}

/** A server that wants `expected` as Authorization and says so with `challenge`. */
function server(challenge: string | string[], ok: (auth: string | undefined) => boolean): (c: FetchCall) => FetchOutcome {
  return (c) => (ok(c.headers.authorization) ? response(200) : response(401, { 'www-authenticate': challenge }));
}

async function fetchVia(auth: HttpAuth, answer: (c: FetchCall) => FetchOutcome, url: string) {
  const { core, reached } = fakeCore(answer);
  const send = composeFetch(core, [auth.interceptor]);
  const o = await send(call({ url: new URL(url) }));
  return { o, reached };
}

describe('httpAuth interceptor: Basic', () => {
  it('answers a Basic challenge under a configured prefix, then sends Basic at once in that directory', async () => {
    const auth = new HttpAuth(table([['http://site.test/a/', cred('bob', 's3cret')]]));
    const srv = server('Basic realm="r"', (a) => a === BOB);
    const first = await fetchVia(auth, srv, 'http://site.test/a/page');
    assert.equal((first.o as ResponseOutcome).status, 200);
    assert.deepEqual(first.reached.map((r) => r.headers.authorization), [undefined, BOB]);
    assert.equal(first.o.bytesIn, 40, 'the 401 dropped is counted');
    const second = await fetchVia(auth, srv, 'http://site.test/a/other?x=1');
    assert.deepEqual(second.reached.map((r) => r.headers.authorization), [BOB], 'preemptive: one request');
    const elsewhere = await fetchVia(auth, srv, 'http://site.test/b/x');
    assert.deepEqual(elsewhere.reached.map((r) => r.headers.authorization), [undefined], 'outside the prefix: nothing, and the 401 stays');
    assert.equal((elsewhere.o as ResponseOutcome).authFailure, undefined);
  });

  it('never sends credentials to another origin, even one whose name starts like the prefix', async () => {
    const auth = new HttpAuth(table([['http://site.test/', cred('bob', 's3cret')]]));
    for (const url of ['http://site.test.evil.example/', 'https://site.test/', 'http://site.test:8080/']) {
      const { reached, o } = await fetchVia(auth, server('Basic realm="r"', () => false), url);
      assert.deepEqual(reached.map((r) => r.headers.authorization), [undefined], url);
      assert.equal((o as ResponseOutcome).authFailure, undefined);
    }
  });

  it('refused credentials: the 401 comes back with authFailure naming the entry and realm, no third request', async () => {
    const auth = new HttpAuth(table([['http://site.test/', cred('bob', 'wrong')]]));
    const { o, reached } = await fetchVia(auth, server('Basic realm="staff"', (a) => a === BOB), 'http://site.test/a');
    assert.equal(reached.length, 2);
    assert.match((o as ResponseOutcome).authFailure!, /refused passwd entry http:\/\/site\.test\/ \(user bob, basic, realm "staff"\)/);
    assert.doesNotMatch((o as ResponseOutcome).authFailure!, /wrong/);
  });

  it('a realm in the entry must be the challenge\'s; a realm entry answers on the start URIs\' origins only', async () => {
    const auth = new HttpAuth(table([['http://site.test/', cred('bob', 's3cret', 'other', 'basic')], ['staff', cred('amy', 'pw')]], ['http://site.test']));
    const { reached } = await fetchVia(auth, server('Basic realm="staff"', () => false), 'http://site.test/a');
    assert.equal(reached[1]!.headers.authorization, 'Basic ' + Buffer.from('amy:pw').toString('base64'));
    const far = await fetchVia(auth, server('Basic realm="staff"', () => false), 'http://far.test/a');
    assert.equal(far.reached.length, 1);
  });

  it('an entry for ntlmv1, ntlmv2 without an NTLM dispatcher, or a scheme the server does not offer: authFailure says why, one request', async () => {
    const auth = new HttpAuth(table([['http://site.test/', cred('bob', 'pw', '', 'ntlmv1')]]));
    const { o, reached } = await fetchVia(auth, server(['NTLM', 'Negotiate'], () => false), 'http://site.test/');
    assert.equal(reached.length, 1);
    assert.match((o as ResponseOutcome).authFailure!, /asks for ntlmv1, which this version does not speak \(use ntlmv2/);
    const v2 = new HttpAuth(table([['http://site.test/', cred('bob', 'pw', '', 'ntlmv2')]]));
    const r1 = await fetchVia(v2, server(['NTLM', 'Negotiate'], () => false), 'http://site.test/');
    assert.equal(r1.reached.length, 1);
    assert.match((r1.o as ResponseOutcome).authFailure!, /NTLM needs a connection of its own/);
    const d = new HttpAuth(table([['http://site.test/', cred('bob', 'pw', '', 'digest')]]));
    const r2 = await fetchVia(d, server('Basic realm="x"', () => false), 'http://site.test/');
    assert.match((r2.o as ResponseOutcome).authFailure!, /no passwd entry .* answers what the server offers \(basic realm "x"\)/);
  });

  it('an !ENC! password is revealed when it is sent; one that does not decrypt is a clear authFailure', async () => {
    const revealed: string[] = [];
    const auth = new HttpAuth(table([['http://site.test/', cred('bob', '!ENC!abc')]], [], (v) => {
      revealed.push(v);
      if (v === '!ENC!abc') return 's3cret';
      return v;
    }));
    const { reached } = await fetchVia(auth, server('Basic realm="r"', (a) => a === BOB), 'http://site.test/');
    assert.equal(reached[1]!.headers.authorization, BOB);
    assert.deepEqual(revealed, ['!ENC!abc']);
    const broken = new HttpAuth(table([['http://site.test/', cred('bob', '!ENC!zz')]], [], () => {
      throw new Error('no key');
    }));
    const r = await fetchVia(broken, server('Basic realm="r"', () => false), 'http://site.test/');
    assert.match((r.o as ResponseOutcome).authFailure!, /cannot be decrypted/);
  });

  it('describe() names entries, users and realms, never the password', () => {
    const auth = new HttpAuth(table([['http://site.test/a/', cred('bob', 's3cret', 'staff', 'auto')]]));
    assert.equal(auth.describe(new URL('http://site.test/a/x')), 'http://site.test/a/ as bob (auto, realm "staff")');
    assert.equal(auth.describe(new URL('http://site.test/b')), undefined);
  });
});

describe('httpAuth interceptor: Digest', () => {
  /** A Digest server of the test's: checks the response with the RFC's formula, counts nonces. */
  function digestServer(opts: { algorithm?: string; staleAfter?: number; qop?: boolean } = {}) {
    let nonce = 0;
    let used = 0;
    return (c: FetchCall): FetchOutcome => {
      const a = c.headers.authorization;
      const alg = opts.algorithm ?? 'MD5';
      const challenge = (stale: boolean) => `Digest realm="dig", nonce="n${nonce}", algorithm=${alg}${opts.qop === false ? '' : ', qop="auth"'}${stale ? ', stale=true' : ''}`;
      if (!a) return response(401, { 'www-authenticate': [challenge(false), 'Basic realm="dig"'] });
      const p = parseChallenges([a])[0]!.params;
      if (p.get('nonce') !== `n${nonce}`) return response(401, { 'www-authenticate': challenge(false) });
      if (opts.staleAfter !== undefined && ++used > opts.staleAfter) {
        nonce++;
        used = 0;
        return response(401, { 'www-authenticate': challenge(true) });
      }
      return p.get('username') === 'bob' && p.get('uri') === c.path ? response(200) : response(401, { 'www-authenticate': challenge(false) });
    };
  }

  it('auto prefers Digest over Basic, with SHA-256 when offered; the next page reuses the nonce with nc 2', async () => {
    const auth = new HttpAuth(table([['http://site.test/', cred('bob', 'pw', '', 'auto')]]));
    const srv = digestServer({ algorithm: 'SHA-256' });
    const { o, reached } = await fetchVia(auth, srv, 'http://site.test/d/p?q=1');
    assert.equal((o as ResponseOutcome).status, 200);
    const sent = parseChallenges([reached[1]!.headers.authorization!])[0]!;
    assert.equal(sent.scheme, 'digest');
    assert.equal(sent.params.get('algorithm'), 'SHA-256');
    assert.equal(sent.params.get('uri'), '/d/p?q=1');
    assert.equal(sent.params.get('nc'), '00000001');
    const again = await fetchVia(auth, srv, 'http://site.test/d/q');
    assert.equal(again.reached.length, 1);
    assert.equal(parseChallenges([again.reached[0]!.headers.authorization!])[0]!.params.get('nc'), '00000002');
  });

  it('stale=true: answered again with the new nonce, and the page gets through', async () => {
    const auth = new HttpAuth(table([['http://site.test/', cred('bob', 'pw', 'dig', 'digest')]]));
    const srv = digestServer({ staleAfter: 1 });
    assert.equal(((await fetchVia(auth, srv, 'http://site.test/1')).o as ResponseOutcome).status, 200);
    const second = await fetchVia(auth, srv, 'http://site.test/2');
    assert.equal((second.o as ResponseOutcome).status, 200);
    assert.equal(second.reached.length, 2, 'preemptive with the old nonce, then the new one');
    assert.equal(parseChallenges([second.reached[1]!.headers.authorization!])[0]!.params.get('nonce'), 'n1');
  });

  it('without qop (RFC 2617 compatibility): no nc or cnonce is sent', async () => {
    const auth = new HttpAuth(table([['http://site.test/', cred('bob', 'pw', undefined, 'digest')]]));
    const { o, reached } = await fetchVia(auth, digestServer({ qop: false }), 'http://site.test/');
    assert.equal((o as ResponseOutcome).status, 200);
    assert.doesNotMatch(reached[1]!.headers.authorization!, /nc=|cnonce=|qop=/);
  });
});
