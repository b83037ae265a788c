// FormLogins' own rules, with a fetcher of the test's that answers like a
// login site: the form a login reads, one login shared by the tasks that
// wait for it, a re-login once per lost session, ttl on the crawl's clock.
// (test/cli/form-login.test.ts drives the whole crawl against a real server.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FetchOutcome, FetchRequest } from '../../src/fetch/http-fetcher.ts';
import { CrawlEvents } from '../../src/engine/crawl-events.ts';
import type { CrawlEvent } from '../../src/engine/crawl-types.ts';
import { FormLogins, formLoginsOf, readForms } from '../../src/engine/form-logins.ts';

const FORM = '<form action="/session" method="post"><input type="hidden" name="csrf" value="a&amp;b"><input name="user"><input type="password" name="pw"></form>';

function response(status: number, body = '', headers: Record<string, string> = {}): FetchOutcome {
  return { kind: 'response', status, headers, headerBlock: '', body: new TextEncoder().encode(body), truncated: false, bytesIn: body.length, bytesOut: 0, durationMs: 1, address: '127.0.0.1' };
}

function setup(opts: { ttlS?: number; reloginIfFailed?: boolean; answer?: (req: FetchRequest) => FetchOutcome } = {}) {
  const requests: FetchRequest[] = [];
  const events: CrawlEvent[] = [];
  let now = 1_000_000;
  const answer = opts.answer ?? ((req: FetchRequest) => (req.postBody !== undefined ? response(302, '', { location: '/' }) : response(200, FORM)));
  const fetcher = {
    fetch: async (req: FetchRequest): Promise<FetchOutcome> => {
      requests.push(req);
      await new Promise((r) => setTimeout(r, 5));
      return answer(req);
    },
  };
  const [login] = formLoginsOf({
    l: {
      scheme: 'http', site: 'login.test', form: '/session', htmlForm: 'http://login.test/signin', autofill: true,
      parameters: { user: 'bob', pw: 'secret' }, sites: ['docs.test'], ...(opts.ttlS !== undefined ? { ttlS: opts.ttlS } : {}), ...(opts.reloginIfFailed ? { reloginIfFailed: true } : {}),
    } as never,
  });
  const logins = new FormLogins([login!], {
    fetcher, events: new CrawlEvents((e) => events.push(e)), now: () => now, timeoutMs: 5000, connectTimeoutMs: 5000, headers: {}, reveal: (v) => v, signal: new AbortController().signal,
  });
  return { logins, login: login!, requests, events, tick: (ms: number) => (now += ms) };
}

const posts = (reqs: FetchRequest[]): number => reqs.filter((r) => r.postBody !== undefined).length;

describe('readForms', () => {
  it('reads each form with the values a browser would send untouched', () => {
    const forms = readForms(`<form action="/search"><input name="q" value="x"></form>
      <form method=POST action="login?x=1"><input type=hidden name=t value="a&amp;b"><input type=checkbox name=c1><input type=checkbox name=c2 value=v checked>
      <input name=d value=1 disabled><select name=s><option>one<option value=2 selected>two</select><select name=s2><option value=f>first</select>
      <textarea name=ta>hi</textarea><input type=submit name=go value=Go><input type=password name=pw></form>`, new URL('http://h.test/a/b'));
    assert.equal(forms.length, 2);
    assert.deepEqual([forms[0]!.action?.href, forms[0]!.method, forms[0]!.hasPassword], ['http://h.test/search', 'GET', false]);
    assert.deepEqual([forms[1]!.action?.href, forms[1]!.method, forms[1]!.hasPassword], ['http://h.test/a/login?x=1', 'POST', true]);
    assert.deepEqual(forms[1]!.fields, [['t', 'a&b'], ['c2', 'v'], ['s', '2'], ['s2', 'f'], ['ta', 'hi'], ['pw', '']]);
  });
});

describe('formLoginsOf: the defaults trawl decides (docs/configuration.md, Spec decisions)', () => {
  it('scheme http, no action (the form\'s method with autofill, else POST), the own site covered without sites, ttl 0', () => {
    const [l] = formLoginsOf({ l: { site: 'Login.test:8080', form: 'in', parameters: {} } as never });
    assert.equal(l!.target?.href, 'http://login.test:8080/in');
    assert.equal(l!.method, undefined);
    assert.deepEqual(l!.sites, ['login.test:8080']);
    assert.equal(l!.ttlMs, 0);
    const [m] = formLoginsOf({ m: { site: 'login.test', form: '/in', sites: ['a.test', 'B.test:81'], action: 'GET', parameters: {} } as never });
    assert.deepEqual(m!.sites, ['a.test', 'b.test:81']);
    assert.equal(m!.method, 'GET');
    const logins = new FormLogins([l!, m!], {
      fetcher: { fetch: () => Promise.reject(new Error('no request expected')) }, events: new CrawlEvents(undefined), now: () => 0, timeoutMs: 1, connectTimeoutMs: 1, headers: {}, reveal: (v) => v, signal: new AbortController().signal,
    });
    assert.equal(logins.covering(new URL('http://login.test:8080/x')), l);
    assert.equal(logins.covering(new URL('http://login.test/x')), undefined);
    assert.equal(logins.covering(new URL('http://a.test:9/x')), m);
    assert.equal(logins.covering(new URL('http://b.test:81/x')), m);
    assert.equal(logins.covering(new URL('http://b.test:82/x')), undefined);
  });
});

describe('FormLogins', () => {
  it('covers the hosts of sites only; tasks that ask at once share one login', async () => {
    const t = setup();
    assert.equal(t.logins.covering(new URL('http://login.test/x')), undefined);
    assert.equal(t.logins.covering(new URL('http://docs.test:8080/x')), t.login);
    const results = await Promise.all([t.logins.ensure(t.login), t.logins.ensure(t.login), t.logins.ensure(t.login)]);
    assert.ok(results.every((r) => r.ok && r.generation === 1));
    assert.deepEqual(t.requests.map((r) => `${r.postBody !== undefined ? 'POST' : 'GET'} ${r.url.href}`), ['GET http://login.test/signin', 'POST http://login.test/session']);
    assert.equal(t.requests[1]!.postBody, 'csrf=a%26b&user=bob&pw=secret');
    assert.match(t.events[0]!.message, /^login l: ok \(first login\)$/);
  });

  it('a lost session: one re-login for the pages fetched under the same session, and none for a page fetched under an older one', async () => {
    const t = setup();
    const first = await t.logins.ensure(t.login);
    const lost = t.logins.sessionLost(t.login, new URL('http://docs.test/p'), response(302, '', { location: 'http://login.test/signin?next=/p' }));
    assert.match(lost ?? '', /redirected to the login page/);
    assert.equal(t.logins.sessionLost(t.login, new URL('http://docs.test/p'), response(302, '', { location: '/elsewhere' })), undefined);
    const [a, b] = await Promise.all([t.logins.relogin(t.login, first.generation, 'lost'), t.logins.relogin(t.login, first.generation, 'lost')]);
    assert.ok(a.ok && b.ok && a.generation === 2 && b.generation === 2);
    const stale = await t.logins.relogin(t.login, first.generation, 'lost');
    assert.equal(stale.generation, 2);
    assert.equal(posts(t.requests), 2);
  });

  it('ttl: logged in again once it is over; a failed login stands unless relogin_if_failed, then after ttl', async () => {
    const t = setup({ ttlS: 60 });
    await t.logins.ensure(t.login);
    t.tick(59_000);
    await t.logins.ensure(t.login);
    assert.equal(posts(t.requests), 1);
    t.tick(1_000);
    await t.logins.ensure(t.login);
    assert.equal(posts(t.requests), 2);

    for (const relogin of [false, true]) {
      const f = setup({ ttlS: 60, reloginIfFailed: relogin, answer: (req) => (req.postBody !== undefined ? response(200, FORM) : response(200, FORM)) });
      const r = await f.logins.ensure(f.login);
      assert.equal(r.ok, false);
      assert.match(r.ok ? '' : r.reason, /login l failed: POST http:\/\/login\.test\/session answered 200 with the login form again/);
      assert.doesNotMatch(f.events.map((e) => e.message).join('\n'), /secret/);
      f.tick(61_000);
      await f.logins.ensure(f.login);
      assert.equal(posts(f.requests), relogin ? 2 : 1);
    }
  });
});
