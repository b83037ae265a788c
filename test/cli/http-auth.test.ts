// passwd (MS-FSCCFG 2.2.4.20) through the real `trawl crawl`, against real
// servers on loopback: nginx with auth_basic and Apache httpd with
// mod_auth_digest. What is asserted is what each server logged (user and
// status of every request) and what the user sees (exit status, summary,
// crawl log).
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { NTLM_AUTH_MODULE, startApacheDigest, startNginxBasic, startNtlmServer, type LogLine } from '../support/auth-servers.ts';
import { startFixtureSite } from '../support/fixture-site.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const dir = tempDir('trawl-http-auth-');
chmodSync(dir, 0o755); // Apache's workers run as nobody
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run { code: number | null; out: string; err: string }

function trawl(args: string[], input?: string, timeoutMs = 60_000): Promise<Run> {
  return runTrawl(args, { stdin: input ?? '', timeoutMs });
}

const page = (title: string, links: string[] = []): string => `<html><head><title>${title}</title></head><body>${title} ${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;

/** The site both servers serve: a public home page linking into a protected folder of three pages. */
const FILES = {
  'index.html': page('Home', ['/private/a.html', '/private/b.html', '/private/c.html']),
  'private/a.html': page('A'),
  'private/b.html': page('B'),
  'private/c.html': page('C'),
};

function collection(name: string, origin: string, passwd: string, more = ''): string {
  const file = join(dir, `${name}.xml`);
  writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="${name}">
  <attrib name="start_uris" type="list-string"><member>${origin}/index.html</member></attrib>
  <attrib name="delay" type="real">0</attrib>
  <attrib name="max_pending" type="integer">1</attrib>
  <section name="include_domains"><attrib name="exact" type="list-string"><member>${new URL(origin).hostname}</member></attrib></section>
  <section name="passwd">${passwd}</section>
  ${more}
</DomainSpecification></CrawlerConfig>`);
  return file;
}

const pages = (log: LogLine[]): LogLine[] => log.filter((l) => l.path.startsWith('/private/'));

describe('passwd: Basic against nginx auth_basic', { skip: skipUnless(TOOLS.nginx) }, () => {
  it('the protected pages are stored; one 401, then Basic is sent at once for the rest of the folder', async () => {
    const ip = '127.0.31.11';
    const srv = await startNginxBasic(join(dir, 'nginx-ok'), ip, { realm: 'staff', protectedPrefix: '/private/', users: { bob: 's3cret' }, files: FILES });
    try {
      const config = collection('basic', srv.origin, `<attrib name="${srv.origin}/private/" type="string">bob:s3cret</attrib>`);
      const r = await trawl(['crawl', '--data', join(dir, 'data-basic'), '--allow-loopback', config]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /stored 4,/);
      const log = pages(srv.log());
      assert.equal(log.filter((l) => l.status === 200 && l.user === 'bob').length, 3, JSON.stringify(log));
      assert.equal(log.filter((l) => l.status === 401).length, 1, `one challenge, then preemptive Basic: ${JSON.stringify(log)}`);
      assert.equal(log.filter((l) => l.status === 401)[0]!.user, '-', 'nothing sent before the first challenge');
      // The home page is outside the prefix: no credentials went with it.
      assert.deepEqual(srv.log().filter((l) => l.path === '/index.html').map((l) => l.user), ['-']);
    } finally {
      await srv.stop();
    }
  });

  it('a password the server refuses: the pages are skipped (ot) with the reason in the crawl log, and the stored ones are not deleted', async () => {
    const ip = '127.0.31.12';
    const srv = await startNginxBasic(join(dir, 'nginx-bad'), ip, { realm: 'staff', protectedPrefix: '/private/', users: { bob: 's3cret' }, files: FILES });
    try {
      const data = join(dir, 'data-wrong');
      const good = await trawl(['crawl', '--data', data, '--allow-loopback', collection('wrong', srv.origin, `<attrib name="${srv.origin}/" type="string">bob:s3cret:staff:basic</attrib>`)]);
      assert.match(good.out, /stored 4,/);
      const before = srv.log().length;
      // The same collection again, its password changed to one the server refuses.
      const r = await trawl(['crawl', '--data', data, '--allow-loopback', collection('wrong', srv.origin, `<attrib name="${srv.origin}/" type="string">bob:guess:staff:basic</attrib>`)]);
      assert.match(r.out, /documents skipped: ot 3/);
      assert.match(r.out, /errors 0, deleted 0,/);
      const crawlLog = readFileSync(join(data, 'logs', 'crawl.log'), 'utf8');
      assert.match(crawlLog, /the server refused passwd entry http:\/\/127\.0\.31\.12\/ \(user bob, basic, realm \\?"staff\\?"\)/);
      assert.doesNotMatch(crawlLog, /guess|s3cret/, 'a password is never logged');
      assert.doesNotMatch(r.out + r.err, /guess/);
      const log = pages(srv.log().slice(before));
      // each page: once without, once with the refused credentials; never a third time
      assert.equal(log.length, 6, JSON.stringify(log));
      assert.equal(log.filter((l) => l.user === 'bob' && l.status === 401).length, 3);
    } finally {
      await srv.stop();
    }
  });

  it('an !ENC! password made with `trawl config keygen` and `trawl config encrypt` is decrypted when it is sent', async () => {
    const ip = '127.0.31.13';
    const srv = await startNginxBasic(join(dir, 'nginx-enc'), ip, { realm: 'staff', protectedPrefix: '/private/', users: { bob: 'pa:ss word' }, files: FILES });
    try {
      const data = join(dir, 'data-enc');
      mkdirSync(data, { recursive: true });
      assert.equal((await trawl(['config', 'keygen', '--data', data])).code, 0);
      const enc = await trawl(['config', 'encrypt', '--data', data], 'pa:ss word');
      assert.equal(enc.code, 0, enc.err);
      const value = enc.out.trim();
      assert.match(value, /^!ENC!/);
      const config = collection('enc', srv.origin, `<attrib name="${srv.origin}/private/" type="string">bob:${value}:staff:auto</attrib>`);
      const r = await trawl(['crawl', '--data', data, '--allow-loopback', config]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /stored 4,/);
      assert.equal(pages(srv.log()).filter((l) => l.status === 200 && l.user === 'bob').length, 3);
      // urltest --explain names the entry, user, scheme and realm a URL would use: never the password.
      const explain = await trawl(['urltest', '--explain', '--no-fetch-robots', config, `${srv.origin}/private/a.html`, `${srv.origin}/index.html`]);
      assert.equal(explain.code, 0, explain.err);
      assert.ok(explain.out.includes(`  credentials: ${srv.origin}/private/ as bob (auto, realm "staff")`), explain.out);
      assert.equal(explain.out.match(/credentials:/g)?.length, 1, 'none for the page outside the prefix');
      assert.doesNotMatch(explain.out, /!ENC!|pa:ss/);
    } finally {
      await srv.stop();
    }
  });
});

describe('passwd: Digest against Apache httpd mod_auth_digest', { skip: skipUnless(TOOLS.apache) }, () => {
  it('the protected pages are stored with Digest (realm and scheme from the entry; auto picks Digest)', async () => {
    const ip = '127.0.31.21';
    const srv = await startApacheDigest(join(dir, 'apache'), ip, { realm: 'vault', protectedPrefix: '/private/', users: { bob: 's3cret' }, files: FILES });
    try {
      for (const scheme of ['digest', 'auto']) {
        const before = pages(srv.log()).length;
        const config = collection(`digest-${scheme}`, srv.origin, `<attrib name="${srv.origin}/" type="string">bob:s3cret:vault:${scheme}</attrib>`);
        const r = await trawl(['crawl', '--data', join(dir, `data-digest-${scheme}`), '--allow-loopback', config]);
        assert.equal(r.code, 0, r.err);
        assert.match(r.out, /stored 4,/);
        const log = pages(srv.log()).slice(before);
        assert.equal(log.filter((l) => l.status === 200 && l.user === 'bob').length, 3, JSON.stringify(log));
        assert.equal(log.filter((l) => l.status === 401).length, 1, `one challenge; the nonce is used again with nc counting: ${JSON.stringify(log)}`);
      }
    } finally {
      await srv.stop();
    }
  });

  it('an entry for another realm is not sent: the pages are skipped with the reason', async () => {
    const ip = '127.0.31.22';
    const srv = await startApacheDigest(join(dir, 'apache-realm'), ip, { realm: 'vault', protectedPrefix: '/private/', users: { bob: 's3cret' }, files: FILES });
    try {
      const config = collection('realm', srv.origin, `<attrib name="${srv.origin}/" type="string">bob:s3cret:elsewhere:auto</attrib>`);
      const data = join(dir, 'data-realm');
      const r = await trawl(['crawl', '--data', data, '--allow-loopback', config]);
      assert.match(r.out, /documents skipped: ot 3/);
      assert.match(readFileSync(join(data, 'logs', 'crawl.log'), 'utf8'), /no passwd entry for http:\/\/127\.0\.31\.22 answers what the server offers \(digest realm \\?"vault\\?"/);
      assert.deepEqual(pages(srv.log()).map((l) => l.status), [401, 401, 401]);
    } finally {
      await srv.stop();
    }
  });
});

describe('passwd: credentials stay on their origin', () => {
  it('a protected page that redirects to another origin: the target is fetched without the Authorization header', async () => {
    const a = '127.0.31.51';
    const b = '127.0.31.52';
    const basic = `Basic ${Buffer.from('bob:s3cret').toString('base64')}`;
    const s = await startFixtureSite([
      {
        ip: a,
        routes: {
          '/robots.txt': { kind: 'robots', body: '' },
          '/index.html': { kind: 'html', body: page('Home', ['/private/go']) },
          '/private/go': (req, res, { site }) => {
            if (req.headers.authorization !== basic) {
              res.writeHead(401, { 'www-authenticate': 'Basic realm="staff"' });
              res.end();
              return;
            }
            res.writeHead(302, { location: site.host(b).url('/landing.html') });
            res.end();
          },
        },
      },
      { ip: b, routes: { '/robots.txt': { kind: 'robots', body: '' }, '/landing.html': { kind: 'html', body: page('Landing') } } },
    ]);
    try {
      const origin = s.host(a).origin;
      const file = join(dir, 'redirect.xml');
      writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="redirect">
  <attrib name="start_uris" type="list-string"><member>${origin}/index.html</member></attrib>
  <attrib name="delay" type="real">0</attrib>
  <section name="include_domains"><attrib name="exact" type="list-string"><member>${a}</member><member>${b}</member></attrib></section>
  <section name="crawlmode"><attrib name="fwdredirects" type="boolean">yes</attrib></section>
  <section name="passwd"><attrib name="${origin}/" type="string">bob:s3cret:staff:auto</attrib></section>
</DomainSpecification></CrawlerConfig>`);
      const r = await trawl(['crawl', '--data', join(dir, 'data-redirect'), '--allow-loopback', file]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(s.host(a).requests.filter((q) => q.path === '/private/go').map((q) => [q.status, q.headers.authorization]), [[401, undefined], [302, basic]]);
      const landing = s.host(b).requests.filter((q) => q.path === '/landing.html');
      assert.equal(landing.length, 1, `the redirect was followed: ${r.out}`);
      assert.ok(s.host(b).requests.every((q) => q.headers.authorization === undefined), 'no credentials to the other origin');
    } finally {
      await s.close();
    }
  });
});

/** Skipped on a machine without python3-ntlm-auth, saying what to install; in CI it runs (and fails without it). */
const ntlmSkip = skipUnless(TOOLS.debianPython) || (existsSync(NTLM_AUTH_MODULE) || process.env.CI === 'true' ? false : 'needs python3-ntlm-auth (apt-get install python3-ntlm-auth)');

describe('passwd: NTLMv2 against a server that checks it with python3-ntlm-auth', { skip: ntlmSkip }, () => {
  it('the protected pages are stored: NEGOTIATE and AUTHENTICATE on the connection that got the CHALLENGE, which then answers the next pages', async () => {
    const ip = '127.0.31.61';
    const srv = await startNtlmServer(join(dir, 'ntlm'), ip, { user: 'bob', password: 's3cret', domain: 'CORP' });
    try {
      for (const [name, value] of [['ntlm-domain-field', 'bob:s3cret:CORP:ntlmv2'], ['ntlm-auto', 'CORP\\bob:s3cret::auto']] as const) {
        const before = srv.log().length;
        const config = collection(name, srv.origin, `<attrib name="${srv.origin}/private/" type="string">${value}</attrib>`);
        const r = await trawl(['crawl', '--data', join(dir, `data-${name}`), '--allow-loopback', config]);
        assert.equal(r.code, 0, r.err);
        assert.match(r.out, /stored 4,/, name);
        // One handshake on the NTLM connection; the next pages go to it at once and, authenticated, it answers them.
        const log = pages(srv.log().slice(before));
        assert.deepEqual(log.map((l) => [l.user, l.status]), [['-', 401], ['negotiate', 401], ['bob', 200], ['bob', 200], ['bob', 200]], name);
      }
    } finally {
      await srv.stop();
    }
  });

  it('a wrong NTLM password: the pages are skipped (ot) with the reason', async () => {
    const ip = '127.0.31.62';
    const srv = await startNtlmServer(join(dir, 'ntlm-bad'), ip, { user: 'bob', password: 's3cret', domain: 'CORP' });
    try {
      const data = join(dir, 'data-ntlm-bad');
      const r = await trawl(['crawl', '--data', data, '--allow-loopback', collection('ntlmbad', srv.origin, `<attrib name="${srv.origin}/" type="string">bob:guess:CORP:ntlmv2</attrib>`)]);
      assert.match(r.out, /documents skipped: ot 3/);
      assert.match(readFileSync(join(data, 'logs', 'crawl.log'), 'utf8'), /the server refused passwd entry http:\/\/127\.0\.31\.62\/ \(user bob, ntlmv2\)/);
      assert.equal(pages(srv.log()).filter((l) => l.status === 200).length, 0);
    } finally {
      await srv.stop();
    }
  });
});
