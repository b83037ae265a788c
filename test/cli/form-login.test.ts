// Form logins (logins / <Login>, login_failed_ignore, login_timeout) through
// the real `trawl crawl`, against a login site of the test's own: GET /login
// shows a form with a CSRF token tied to a pre-session cookie; POST /login
// with the right user, password and token gives a session cookie and a 302
// to /; /private/N needs that session (else a 302 to /login), and the
// server ends a session after a few private pages. The server's own request
// log is the truth.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite, type RequestRecord } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { ROOT } from '../helpers.ts';

const BIN = join(ROOT, 'bin/trawl.js');
const dir = tempDir('trawl-form-login-');
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run { code: number | null; out: string; err: string }

function trawl(args: string[], timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TRAWL_KEY_FILE: '' } });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const PAGES = 7;
const USER = 'crawler';
const PASSWORD = 's3cret-pw';

interface LoginSite {
  site: FixtureSite;
  origin: string;
  /** Bodies of the POST /login requests, in order. */
  posts: string[];
}

/**
 * The login site. A session serves `pagesPerSession` private pages; the
 * next private request finds it ended (a 302 to /login, as a server that
 * logged the user out answers).
 */
async function loginSite(ip: string, o: { pagesPerSession?: number; postDelayMs?: number; failFirstPosts?: number } = {}): Promise<LoginSite> {
  const pagesPerSession = o.pagesPerSession ?? 3;
  const tokens = new Map<string, string>(); // pre-session cookie → CSRF token
  const sessions = new Map<string, number>(); // session id → private pages served
  const posts: string[] = [];
  let n = 0;
  const cookie = (req: IncomingMessage, name: string): string | undefined => new RegExp(`(?:^|;\\s*)${name}=([^;]+)`).exec(req.headers.cookie ?? '')?.[1];
  const html = (title: string, body: string): string => `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
  const form = (token: string): string => html('Sign in', `<form method="post" action="/login">
    <input type="hidden" name="csrf" value="${token}">
    <input type="text" name="user" value="">
    <input type="password" name="password">
    <select name="lang"><option value="en" selected>English</option><option value="fr">Français</option></select>
    <input type="checkbox" name="remember" value="1">
    <input type="submit" name="go" value="Sign in">
  </form>`);
  const showForm = (_req: IncomingMessage, res: ServerResponse): void => {
    const pre = `p${++n}`;
    const token = `t${n}x${Math.random().toString(36).slice(2)}`;
    tokens.set(pre, token);
    res.setHeader('set-cookie', `pre=${pre}; Path=/; HttpOnly`);
    res.setHeader('content-type', 'text/html');
    res.end(form(token));
  };
  const site = await startFixtureSite([{
    ip,
    routes: {
      '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
      '/': { kind: 'html', body: html('Home', Array.from({ length: PAGES }, (_, i) => `<a href="/private/${i + 1}">${i + 1}</a>`).join(' ')) },
      // The preload page: a cookie the login requires.
      '/welcome': (_req, res) => {
        res.setHeader('set-cookie', 'seen=1; Path=/');
        res.setHeader('content-type', 'text/html');
        res.end(html('Welcome', '<p>welcome</p>'));
      },
      '/login*': (req, res) => {
        const query = (req.url ?? '').split('?')[1] ?? '';
        const submitted = req.method === 'POST' || new URLSearchParams(query).has('user');
        if (!submitted) return showForm(req, res);
        let body = req.method === 'POST' ? '' : query;
        req.on('data', (d: Buffer) => (body += d.toString()));
        req.on('end', () => setTimeout(() => {
          posts.push(body);
          if (posts.length <= (o.failFirstPosts ?? 0)) {
            res.statusCode = 503;
            res.end('try later');
            return;
          }
          const f = new URLSearchParams(body);
          const pre = cookie(req, 'pre');
          const good = cookie(req, 'seen') === '1' && pre !== undefined && tokens.get(pre) === f.get('csrf') && f.get('user') === USER && f.get('password') === PASSWORD && f.get('lang') === 'en';
          if (!good) {
            showForm(req, res);
            return;
          }
          tokens.delete(pre!);
          const sid = `s${++n}`;
          sessions.set(sid, 0);
          res.statusCode = 302;
          res.setHeader('set-cookie', `sid=${sid}; Path=/; HttpOnly`);
          res.setHeader('location', '/');
          res.end();
        }, o.postDelayMs ?? 0));
      },
      '/private/*': (req, res) => {
        const sid = cookie(req, 'sid');
        const served = sid === undefined ? undefined : sessions.get(sid);
        if (served === undefined || served >= pagesPerSession) {
          if (sid !== undefined) sessions.delete(sid);
          res.statusCode = 302;
          res.setHeader('location', `/login?next=${encodeURIComponent(req.url ?? '/')}`);
          res.end();
          return;
        }
        sessions.set(sid!, served + 1);
        res.setHeader('content-type', 'text/html');
        res.end(html(`Private ${req.url}`, `<p>for members: ${req.url}</p>`));
      },
    },
  }]);
  return { site, origin: site.host(ip).origin, posts };
}

function collection(name: string, ls: LoginSite, opts: { password?: string; attribs?: string; login?: string; starts?: string[]; delay?: number; domains?: string[]; action?: 'GET' | 'POST' } = {}): string {
  const file = join(dir, `${name}-${Math.random().toString(36).slice(2)}.xml`);
  const u = new URL(ls.origin);
  const starts = opts.starts ?? [`${ls.origin}/`];
  writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="${name}">
  <attrib name="start_uris" type="list-string">${starts.map((s) => `<member>${s}</member>`).join('')}</attrib>
  <attrib name="delay" type="real">${opts.delay ?? 0}</attrib>
  <attrib name="max_pending" type="integer">1</attrib>
  <section name="include_domains"><attrib name="exact" type="list-string">${[u.hostname, ...(opts.domains ?? [])].map((d) => `<member>${d}</member>`).join('')}</attrib></section>
  ${opts.attribs ?? ''}
  <Login name="intranet">
    <attrib name="preload" type="string">${ls.origin}/welcome</attrib>
    <attrib name="scheme" type="string">http</attrib>
    <attrib name="site" type="string">${u.host}</attrib>
    <attrib name="form" type="string">/login</attrib>
    <attrib name="action" type="string">${opts.action ?? 'POST'}</attrib>
    <attrib name="html_form" type="string">${ls.origin}/login</attrib>
    <attrib name="autofill" type="boolean">yes</attrib>
    <section name="parameters">
      <attrib name="user" type="string">${USER}</attrib>
      <attrib name="password" type="string">${opts.password ?? PASSWORD}</attrib>
    </section>
    <attrib name="sites" type="list-string"><member>${u.hostname}</member></attrib>
    ${opts.login ?? ''}
  </Login>
</DomainSpecification></CrawlerConfig>`);
  return file;
}

const pagesOf = (s: FixtureSite): RequestRecord[] => s.requests.filter((r) => r.path !== '/robots.txt');
const privateOk = (s: FixtureSite): string[] => s.requests.filter((r) => r.path.startsWith('/private/') && r.status === 200).map((r) => r.path).sort();
const allPrivate = Array.from({ length: PAGES }, (_, i) => `/private/${i + 1}`).sort();
const loginPosts = (s: FixtureSite): number => s.requests.filter((r) => r.method === 'POST' && r.path === '/login').length;
const crawlLog = (data: string): Array<Record<string, unknown>> => readFileSync(join(data, 'logs/crawl.log'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('form logins', () => {
  it('logs in before the first covered fetch, keeps the session, and logs in again each time the server ends it', async () => {
    const ls = await loginSite('127.0.8.1');
    try {
      const data = join(dir, 'ok');
      const r = await trawl(['crawl', '--data', data, '--allow-loopback', collection('ok', ls)]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, new RegExp(`stored ${PAGES + 1},`));
      const pages = pagesOf(ls.site);
      // The login first: the preload page, the form page, then the POST, then the crawl's first page.
      assert.deepEqual(pages.slice(0, 4).map((q) => [q.method, q.path, q.status]), [['GET', '/welcome', 200], ['GET', '/login', 200], ['POST', '/login', 302], ['GET', '/', 200]]);
      // Every private page answered 200 exactly once; a session serves 3, so 3 logins for 7 pages.
      assert.deepEqual(privateOk(ls.site), allPrivate);
      assert.equal(loginPosts(ls.site), Math.ceil(PAGES / 3));
      // The form's hidden token and default values went with the configured ones (which win).
      const first = new URLSearchParams(ls.posts[0]);
      assert.match(first.get('csrf') ?? '', /^t\d+x/);
      assert.deepEqual([first.get('user'), first.get('password'), first.get('lang'), first.has('remember'), first.has('go')], [USER, PASSWORD, 'en', false, false]);
      // The crawl log names each login; no password anywhere in it.
      const text = readFileSync(join(data, 'logs/crawl.log'), 'utf8');
      const logins = crawlLog(data).filter((e) => e.event === 'login');
      assert.equal(logins.length, Math.ceil(PAGES / 3), text);
      assert.match(String(logins[0]!.msg), /login intranet: ok \(first login\)/);
      assert.match(String(logins[1]!.msg), /login intranet: ok \(session lost: .*\/private\/4 redirected to the login page\)/);
      assert.doesNotMatch(text, new RegExp(PASSWORD));
      // urltest --explain names the login that covers a URL, and with --data the session cookie the jar holds for it.
      const config = collection('ok', ls);
      const explain = await trawl(['urltest', '--explain', '--no-fetch-robots', '--data', data, config, `${ls.origin}/private/1`]);
      assert.equal(explain.code, 0, explain.err);
      assert.match(explain.out, /^ {2}login: intranet \(form login: POST http:\/\/127\.0\.8\.1:\d+\/login, autofill\)$/m);
      assert.match(explain.out, /^ {2}cookies: .*\bsid \(127\.0\.8\.1\/, session\)/m);
      assert.doesNotMatch(explain.out, new RegExp(PASSWORD));
    } finally {
      await ls.site.close();
    }
  });

  it('a refused login: every covered URI is skipped with lf and the reason, before any request for it', async () => {
    const ls = await loginSite('127.0.8.2');
    try {
      const starts = [`${ls.origin}/`, ...allPrivate.map((p) => `${ls.origin}${p}`)];
      const data = join(dir, 'refused');
      const r = await trawl(['crawl', '--data', data, '--allow-loopback', collection('refused', ls, { password: 'wrong', starts })]);
      assert.equal(r.code, 1, r.out + r.err);
      assert.match(r.err, /all 8 start URIs were refused or failed/);
      assert.match(r.err, /lf: login intranet failed: POST http:\/\/127\.0\.8\.2:\d+\/login answered 200 with the login form again: the parameters were refused/);
      assert.match(r.out, /URIs skipped: lf 8\n/);
      assert.match(r.out, /^ {4}lf: Login failed: /m);
      // One login attempt; no page of the site was asked for.
      assert.equal(loginPosts(ls.site), 1);
      assert.deepEqual(pagesOf(ls.site).map((q) => [q.method, q.path]), [['GET', '/welcome'], ['GET', '/login'], ['POST', '/login']]);
      assert.doesNotMatch(readFileSync(join(data, 'logs/crawl.log'), 'utf8'), /wrong/);
    } finally {
      await ls.site.close();
    }
  });

  it('login_failed_ignore: the site is crawled after a failed login (its private pages get the 302 to the form)', async () => {
    const ls = await loginSite('127.0.8.3');
    try {
      const starts = [`${ls.origin}/`, ...allPrivate.map((p) => `${ls.origin}${p}`)];
      const r = await trawl(['crawl', '--data', join(dir, 'ignore'), '--allow-loopback', collection('ignore', ls, { password: 'wrong', starts, attribs: '<attrib name="login_failed_ignore" type="boolean">yes</attrib>' })]);
      assert.equal(r.code, 0, r.err);
      assert.doesNotMatch(r.out, /\blf\b/);
      const priv = ls.site.requests.filter((q) => q.path.startsWith('/private/'));
      assert.deepEqual(priv.map((q) => q.path).sort(), allPrivate);
      assert.ok(priv.every((q) => q.status === 302));
      // The failed login is not tried again for every page that finds no session.
      assert.equal(loginPosts(ls.site), 1);
    } finally {
      await ls.site.close();
    }
  });

  it('ttl: the crawler logs in again once ttl seconds have passed, before the next covered fetch', async () => {
    const ls = await loginSite('127.0.8.4', { pagesPerSession: 1000 });
    try {
      const r = await trawl(['crawl', '--data', join(dir, 'ttl'), '--allow-loopback', collection('ttl', ls, { delay: 0.4, login: '<attrib name="ttl" type="integer">1</attrib>' })]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(privateOk(ls.site), allPrivate);
      // 8 pages 0.4 s apart take about 3 s: with ttl 1 s, several logins; the session itself never ends.
      assert.ok(loginPosts(ls.site) >= 2, `${loginPosts(ls.site)} logins`);
      assert.ok(ls.site.requests.every((q) => q.status !== 302 || q.path === '/login'));
    } finally {
      await ls.site.close();
    }
  });

  it('login_timeout bounds each login request: a form that does not answer in time is a failed login', async () => {
    const ls = await loginSite('127.0.8.5', { postDelayMs: 4000 });
    try {
      const started = Date.now();
      const r = await trawl(['crawl', '--data', join(dir, 'timeout'), '--allow-loopback', collection('timeout', ls, { attribs: '<attrib name="login_timeout" type="integer">1</attrib>' })]);
      assert.equal(r.code, 1, r.out + r.err);
      assert.match(r.err, /lf: login intranet failed: POST http:\/\/127\.0\.8\.5:\d+\/login: no answer within login_timeout \(1 s\)/);
      assert.ok(Date.now() - started < 3500, `${Date.now() - started} ms`);
    } finally {
      await ls.site.close();
    }
  });

  it('relogin_if_failed: a failed login is tried again once ttl seconds have passed, for the covered URIs found since', async () => {
    const ls = await loginSite('127.0.8.6', { pagesPerSession: 1000, failFirstPosts: 1 });
    // An uncovered site whose chain of pages, 0.8 s apart, ends with links to the private pages 2..7.
    const pub = await startFixtureSite([{
      ip: '127.0.8.7',
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
        '/a': (_req, res) => {
          res.setHeader('set-cookie', 'track=1; Path=/');
          res.setHeader('content-type', 'text/html');
          res.end('<a href="/b">b</a>');
        },
        '/b': { kind: 'html', body: '<a href="/c">c</a>' },
        '/c': { kind: 'html', body: allPrivate.slice(1).map((p) => `<a href="${ls.origin}${p}">${p}</a>`).join(' ') },
      },
    }]);
    try {
      const starts = [`${ls.origin}/private/1`, pub.host('127.0.8.7').url('/a')];
      const run = async (name: string, login: string): Promise<Run> => trawl(['crawl', '--data', join(dir, name), '--allow-loopback', collection(name, ls, { starts, delay: 0.8, domains: ['127.0.8.7'], login })]);
      const r = await run('relogin', '<attrib name="ttl" type="integer">1</attrib><attrib name="relogin_if_failed" type="boolean">yes</attrib>');
      assert.equal(r.code, 0, r.err);
      // The first POST failed (503), the next (after ttl) succeeded; ttl then renews the session as the crawl goes on.
      const postStatuses = ls.site.requests.filter((q) => q.method === 'POST').map((q) => q.status);
      assert.ok(postStatuses.length >= 2 && postStatuses[0] === 503 && postStatuses.slice(1).every((x) => x === 302), JSON.stringify(postStatuses));
      // The start URI was turned away by the first (failed) login; the pages found later were fetched after the second.
      assert.deepEqual(privateOk(ls.site), allPrivate.slice(1));
      assert.match(r.out, /URIs skipped: lf 1\n/);
      // use_cookies is off: the jar keeps the login's cookies only, not the uncovered site's.
      assert.ok(pub.requests.every((q) => q.headers.cookie === undefined), JSON.stringify(pub.requests.map((q) => q.headers.cookie)));
      assert.ok(ls.site.requests.some((q) => /sid=/.test(String(q.headers.cookie))));
      ls.site.reset();
      pub.reset();
      ls.posts.length = 0;
      // Without relogin_if_failed the failed login stands for the whole cycle.
      const once = await run('no-relogin', '<attrib name="ttl" type="integer">1</attrib>');
      assert.equal(once.code, 0, once.err);
      assert.equal(loginPosts(ls.site), 1);
      assert.deepEqual(privateOk(ls.site), []);
      assert.match(once.out, /URIs skipped: lf 7\n/);
    } finally {
      await ls.site.close();
      await pub.close();
    }
  });

  it('action GET: the form fields go in the query of scheme://site/form', async () => {
    const ls = await loginSite('127.0.8.8', { pagesPerSession: 1000 });
    try {
      const data = join(dir, 'get');
      const r = await trawl(['crawl', '--data', data, '--allow-loopback', collection('get', ls, { action: 'GET' })]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(privateOk(ls.site), allPrivate);
      const submits = ls.site.requests.filter((q) => q.path.startsWith('/login?'));
      assert.equal(submits.length, 1);
      assert.equal(submits[0]!.method, 'GET');
      assert.equal(submits[0]!.status, 302);
      const q = new URLSearchParams(submits[0]!.path.split('?')[1]);
      assert.deepEqual([q.get('user'), q.get('password'), q.get('lang')], [USER, PASSWORD, 'en']);
      assert.equal(loginPosts(ls.site), 0);
      assert.doesNotMatch(readFileSync(join(data, 'logs/crawl.log'), 'utf8'), new RegExp(PASSWORD));
    } finally {
      await ls.site.close();
    }
  });

  it('an !ENC! parameter is decrypted with the data directory\'s key file when sent, and shown nowhere', async () => {
    const ls = await loginSite('127.0.8.9', { pagesPerSession: 1000 });
    try {
      const data = join(dir, 'enc');
      const env = { ...process.env, TRAWL_KEY_FILE: '' };
      assert.equal(spawnSync(process.execPath, [BIN, 'config', 'keygen', '--data', data], { encoding: 'utf8', env }).status, 0);
      const enc = spawnSync(process.execPath, [BIN, 'config', 'encrypt', '--data', data], { encoding: 'utf8', env, input: PASSWORD });
      assert.equal(enc.status, 0, enc.stderr);
      const value = enc.stdout.trim();
      assert.match(value, /^!ENC!/);
      const r = await trawl(['crawl', '--data', data, '--allow-loopback', collection('enc', ls, { password: value })]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(privateOk(ls.site), allPrivate);
      assert.equal(new URLSearchParams(ls.posts[0]).get('password'), PASSWORD);
      assert.doesNotMatch(r.out + r.err + readFileSync(join(data, 'logs/crawl.log'), 'utf8'), new RegExp(PASSWORD));
    } finally {
      await ls.site.close();
    }
  });
});
