// `trawl crawl` (the real binary) of MS-FSCCFG collections with ftp:// start
// URIs, against real FTP servers (pyftpdlib) on loopback: what the servers
// sent (their own logs), the documents stored (a console sink's JSON lines),
// allowed_schemes with ftp, ftp_acct with an !ENC! password made by
// `trawl config encrypt`, ftp_searchlinks, ftp_passive and ftp_errors.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startFtpServer } from '../support/ftp-server.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-crawl-ftp-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run { code: number | null; out: string; err: string }

function trawl(args: string[], stdin = '', timeoutMs = 60_000): Promise<Run> {
  return runTrawl(args, { stdin, timeoutMs });
}

interface Doc { op: string; url: string; title?: string; body_content?: string }

function collection(name: string, starts: readonly string[], hosts: readonly string[], body: string): string {
  const file = join(dir, `${name}.xml`);
  writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="${name}">
    <attrib name="start_uris" type="list-string">${starts.map((s) => `<member>${s}</member>`).join('')}</attrib>
    <attrib name="allowed_schemes" type="list-string"><member>ftp</member></attrib>
    <attrib name="delay" type="real">0</attrib>
    <section name="include_domains"><attrib name="exact" type="list-string">${hosts.map((h) => `<member>${h}</member>`).join('')}</attrib></section>
    <section name="trawl_sinks"><section name="screen"><attrib name="type" type="string">console</attrib></section></section>
    ${body}
  </DomainSpecification></CrawlerConfig>`);
  return file;
}

const docsOf = (r: Run): Doc[] => r.out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Doc);

describe('trawl crawl of ftp:// collections', { skip: skipUnless(TOOLS.pyftpdlib) }, () => {
  it('follows listings and links across FTP sites, logs in with an !ENC! ftp_acct password, fetches no robots.txt, and stores what it fetched', async () => {
    const a = await startFtpServer({
      ip: '127.0.9.41', dir: join(dir, 'a'), anonymousHome: 'pub',
      files: {
        'pub/readme.txt': 'read me first\n',
        'pub/page.html': '<html><head><title>Links</title></head><body><a href="docs/">docs</a> <a href="ftp://127.0.9.42:{{B}}/secret.txt">secret</a> <a href="missing.txt">gone</a></body></html>',
        'pub/docs/guide.txt': 'the guide\n',
        'pub/docs/archive.zip': 'PK not really',
      },
    });
    const b = await startFtpServer({ ip: '127.0.9.42', dir: join(dir, 'b'), files: { 'alice/secret.txt': 'only for alice\n' }, users: [{ name: 'alice', password: 'pw:with-colon', home: 'alice' }] });
    try {
      // The link to the other server names its port, known only now.
      const page = join(a.root, 'pub/page.html');
      writeFileSync(page, readFileSync(page, 'utf8').replace('{{B}}', String(b.port)));
      const data = join(dir, 'data-links');
      assert.equal((await trawl(['config', 'keygen', '--data', data])).code, 0);
      const enc = await trawl(['config', 'encrypt', '--data', data], 'pw:with-colon');
      assert.equal(enc.code, 0, enc.err);
      const secret = enc.out.trim();
      assert.match(secret, /^!ENC!/);
      const config = collection('ftplinks', [a.url('/')], ['127.0.9.41', '127.0.9.42'], `<section name="ftp_acct"><attrib name="127.0.9.42" type="string">alice:${secret}</attrib></section>`);
      const r = await trawl(['crawl', '--data', data, '--allow-loopback', config]);
      assert.equal(r.code, 0, r.err);
      assert.doesNotMatch(r.err, /TRAWL_ERR_CONFIG_NOT_HONOURED/, 'allowed_schemes ftp and ftp_acct are honoured');

      // What the servers sent.
      assert.deepEqual(a.retrieved().sort(), ['/pub/docs/guide.txt', '/pub/page.html', '/pub/readme.txt']);
      assert.deepEqual(b.retrieved(), ['/alice/secret.txt']);
      assert.match(b.log(), /USER 'alice' logged in/);
      const cmds = a.commands();
      assert.equal(cmds.filter((c) => c === 'USER anonymous').length, 1, 'one control connection for the whole site');
      assert.ok(cmds.includes('PASV'), 'ftp_passive defaults to yes');
      assert.ok(!cmds.some((c) => /robots\.txt/.test(c)), 'no robots.txt is asked of an FTP server');
      assert.ok(!cmds.some((c) => /archive\.zip/.test(c)), 'exclude_exts applies to the links of a listing');
      assert.ok(cmds.includes('SIZE /missing.txt'));

      // What was stored and fed.
      const docs = docsOf(r);
      const byUrl = new Map(docs.map((d) => [d.url, d]));
      assert.deepEqual([...byUrl.keys()].sort(), [a.url('/'), a.url('/docs/'), a.url('/docs/guide.txt'), a.url('/page.html'), a.url('/readme.txt'), b.url('/secret.txt')].sort());
      assert.equal(byUrl.get(a.url('/readme.txt'))!.body_content, 'read me first\n');
      assert.equal(byUrl.get(b.url('/secret.txt'))!.body_content, 'only for alice\n');
      assert.equal(byUrl.get(a.url('/'))!.title, 'Index of /');
      assert.equal(byUrl.get(a.url('/page.html'))!.title, 'Links');
      // The summary: six 200s and the 550 as a 404; the missing file is an error, not a document.
      assert.match(r.err, /HTTP status: 200 6, 404 1/);

      // The crawl log says, once per site, that robots.txt does not apply; the password is in no log.
      const log = readFileSync(join(data, 'logs/crawl.log'), 'utf8');
      assert.equal(log.match(/robots\.txt does not apply to FTP/g)?.length, 2);
      assert.ok(!log.includes('pw:with-colon') && !r.err.includes('pw:with-colon'));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('trawl crawl ftp://… (a URL, no configuration) allows ftp for that crawl and stays on the URL\'s site', async () => {
    const s = await startFtpServer({ ip: '127.0.9.44', dir: join(dir, 'd'), anonymousHome: 'pub', files: { 'pub/one.txt': 'one\n', 'pub/sub/two.txt': 'two\n' } });
    try {
      const r = await trawl(['crawl', '--data', join(dir, 'data-url'), '--allow-loopback', '--delay', '0', s.url('/')]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(s.retrieved().sort(), ['/pub/one.txt', '/pub/sub/two.txt']);
      assert.match(r.out + r.err, /stored 4\b/);
    } finally {
      await s.close();
    }
  });

  it('ftp_searchlinks no: listings are stored but their links not followed; ftp_passive no: PORT; ftp_errors 550 RETRY:2 fetches a missing file three times', async () => {
    const s = await startFtpServer({ ip: '127.0.9.43', dir: join(dir, 'c'), anonymousHome: 'pub', files: { 'pub/one.txt': 'one\n', 'pub/sub/two.txt': 'two\n' } });
    try {
      const config = collection('ftpplain', [s.url('/'), s.url('/one.txt'), s.url('/absent.txt')], ['127.0.9.43'], `
        <attrib name="ftp_searchlinks" type="boolean">no</attrib>
        <attrib name="ftp_passive" type="boolean">no</attrib>
        <section name="ftp_errors"><attrib name="550" type="string">KEEP:0, RETRY:2</attrib></section>`);
      const data = join(dir, 'data-plain');
      const r = await trawl(['crawl', '--data', data, '--allow-loopback', config]);
      assert.equal(r.code, 0, r.err);
      const docs = docsOf(r);
      assert.deepEqual(docs.map((d) => d.url).sort(), [s.url('/'), s.url('/one.txt')]);
      // The listing names sub/ and one.txt; nothing it links to was asked for but the start URIs.
      assert.deepEqual(s.retrieved(), ['/pub/one.txt']);
      const cmds = s.commands();
      assert.ok(!cmds.some((c) => c.includes('sub')), cmds.join('\n'));
      assert.ok(cmds.some((c) => c.startsWith('PORT ')) && !cmds.includes('PASV'), cmds.join('\n'));
      // ftp_errors, not http_errors (whose 4xx is DELETE:0, no retry), decided about the 550.
      assert.equal(cmds.filter((c) => c === 'SIZE /absent.txt').length, 3);
    } finally {
      await s.close();
    }
  });
});
