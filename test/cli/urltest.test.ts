// `trawl urltest`, the real binary: decisions, skip codes, --explain and --json, robots.txt from a file or from the site.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startFixtureSite } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { ROOT } from '../helpers.ts';

const BIN = join(ROOT, 'bin/trawl.js');
const dir = tempDir('trawl-urltest-');
const config = join(dir, 'c.xml');
writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="t">
  <attrib name="allowed_schemes" type="list-string"><member>http</member><member>https</member></attrib>
  <section name="include_domains"><attrib name="suffix" type="list-string"><member>example.com</member><member>127.0.5.1</member></attrib></section>
  <section name="exclude_uris"><attrib name="regexp" type="list-string"><member>(?i)/admin/</member></attrib></section>
  <section name="trawl_crawl_rules"><section name="https://docs.example.com"><attrib name="rules" type="list-string"><member>disallow begins /drafts</member></attrib></section></section>
</DomainSpecification></CrawlerConfig>`);
const robots = join(dir, 'robots.txt');
writeFileSync(robots, 'User-agent: *\nDisallow: /private\n');

function urltest(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'urltest', ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Asynchronous: the test's own fixture server must keep answering while urltest runs. */
function urltestAsync(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'urltest', ...args]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

describe('trawl urltest', () => {
  it('tells allowed or denied with the skip code and the rule that decided', () => {
    const r = urltest(config, '--json', '--robots', robots,
      'https://docs.example.com/guide', 'ftp://docs.example.com/x', 'https://other.org/', 'https://docs.example.com/ADMIN/x',
      'https://docs.example.com/drafts/1', 'https://docs.example.com/private/x', 'not a url');
    assert.equal(r.code, 0, r.err);
    const rows = r.out.trim().split('\n').map((l) => JSON.parse(l) as { url: string; allowed: boolean; code: string | null; decidedBy: string; trace: unknown[] });
    assert.deepEqual(rows.map((x) => [x.allowed, x.code, x.decidedBy]), [
      [true, null, 'trawl_crawl_rules'], // the Elastic dialect's implicit last rule allows it
      [false, 'ch', 'allowed_schemes'],
      [false, 'do', 'include_domains/exclude_domains'],
      [false, 'ur', 'include_uris/exclude_uris'],
      [false, 'ur', 'trawl_crawl_rules'],
      [false, 'ro', 'robots.txt'],
      [false, null, 'url'],
    ]);
    assert.ok(rows[0]!.trace.length >= 9);
  });

  it('for an ftp:// URL, --explain names the ftp_acct account it would log in with (never its password) and consults no robots.txt', () => {
    const ftp = join(dir, 'ftp.xml');
    writeFileSync(ftp, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="f">
      <attrib name="allowed_schemes" type="list-string"><member>ftp</member></attrib>
      <section name="include_domains"><attrib name="suffix" type="list-string"><member>example.com</member></attrib></section>
      <section name="ftp_acct"><attrib name="files.example.com" type="string">reports:plain-secret-pw</attrib></section>
    </DomainSpecification></CrawlerConfig>`);
    const r = urltest(ftp, '--explain', '--robots', robots, 'ftp://files.example.com/private/a.txt', 'ftp://other.example.com/pub/');
    assert.equal(r.code, 0, r.err);
    const [first, second] = r.out.split(/\n(?=allowed|denied)/);
    assert.match(first!, /^allowed ftp:\/\/files\.example\.com\/private\/a\.txt/);
    assert.match(first!, /ftp_acct: pass \(logs in as reports, the ftp_acct account for files\.example\.com\)/);
    assert.match(first!, /robots\.txt: pass \(not consulted: robots\.txt does not apply to FTP\)/);
    assert.match(second!, /ftp_acct: pass \(logs in as anonymous: no ftp_acct account for other\.example\.com\)/);
    assert.ok(!r.out.includes('plain-secret-pw') && !r.err.includes('plain-secret-pw'));
  });

  it('--explain prints every rule consulted, in order', () => {
    const r = urltest(config, '--explain', '--robots', robots, 'https://docs.example.com/drafts/1');
    assert.match(r.out, /^denied {2}https:\/\/docs\.example\.com\/drafts\/1 \(ur\): Elastic crawl rule #1 "disallow begins \/drafts"/);
    assert.match(r.out, /1\. allowed_schemes: pass[\s\S]*4\. include_domains\/exclude_domains: allow[\s\S]*trawl_crawl_rules: deny[\s\S]*decided by: trawl_crawl_rules/);
  });

  it('reads robots.txt from the site when it is reachable', async () => {
    const site = await startFixtureSite([{ ip: '127.0.5.1', routes: { '/robots.txt': { kind: 'robots', body: 'User-agent: trawl\nDisallow: /secret\n' } } }]);
    try {
      const h = site.host('127.0.5.1');
      const r = await urltestAsync(config, '--allow-loopback', h.url('/secret/a'), h.url('/open'));
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /denied {2}http:\/\/127\.0\.5\.1:\d+\/secret\/a \(ro\): Disallow: \/secret \(line 2\)/);
      assert.match(r.out, /allowed http:\/\/127\.0\.5\.1:\d+\/open/);
      assert.deepEqual(site.fetchedPaths(), ['/robots.txt']);
    } finally {
      await site.close();
    }
  });

  it('fails clearly on a bad configuration', () => {
    const r = urltest(join(dir, 'missing.xml'), 'https://x/');
    assert.equal(r.code, 66);
    assert.match(r.err, /missing\.xml: error TRAWL_ERR_IO/);
  });

  // Regression: a catastrophic rule regex hung urltest (and would hang a crawl).
  it('returns at once for catastrophic rule regexes on a long URL (linear-time fallback)', () => {
    const slow = join(dir, 'slow.xml');
    writeFileSync(slow, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="t">
  <section name="include_domains"><attrib name="suffix" type="list-string"><member>example.com</member></attrib></section>
  <section name="exclude_uris"><attrib name="regexp" type="list-string"><member>^http://docs\\.example\\.com/(a+)+$</member><member>(?i)/(A|a)*$</member></attrib></section>
  <section name="trawl_crawl_rules"><section name="http://docs.example.com"><attrib name="rules" type="list-string"><member>disallow regex /(a*)*$</member></attrib></section></section>
  <attrib name="rewrite_rules" type="list-string"><member>#^(.*a)*x$#y#</member></attrib>
</DomainSpecification></CrawlerConfig>`);
    const url = `http://docs.example.com/${'a'.repeat(40)}b`;
    const started = Date.now();
    const r = spawnSync(process.execPath, [BIN, 'urltest', slow, '--no-fetch-robots', url], { encoding: 'utf8', timeout: 30_000 });
    const tookMs = Date.now() - started;
    assert.equal(r.signal, null, `urltest was killed after ${tookMs} ms: it stalled`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), `allowed ${url}`);
    assert.ok(tookMs < 10_000, `took ${tookMs} ms`);
  });

  it('judges the URL as the crawl normalises it, and shows the normalised form', () => {
    const canon = join(dir, 'canon.xml');
    writeFileSync(canon, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="t">
  <section name="include_domains"><attrib name="suffix" type="list-string"><member>example.com</member></attrib></section>
  <section name="exclude_uris"><attrib name="prefix" type="list-string"><member>http://docs.example.com/new/</member></attrib></section>
  <attrib name="sort_query_params" type="boolean">yes</attrib>
  <attrib name="rewrite_rules" type="list-string"><member>#/old/#/new/#</member></attrib>
</DomainSpecification></CrawlerConfig>`);
    const r = urltest(canon, '--no-fetch-robots', 'http://DOCS.example.com/old/page?z=1&a=2#top', 'http://docs.example.com/kept?a=1');
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.out.trim().split('\n'), [
      'http://DOCS.example.com/old/page?z=1&a=2#top normalises to http://docs.example.com/new/page?a=2&z=1',
      'denied  http://docs.example.com/new/page?a=2&z=1 (ur): ' + r.out.split('\n')[1]!.split('(ur): ')[1],
      'allowed http://docs.example.com/kept?a=1',
    ]);
    const j = urltest(canon, '--no-fetch-robots', '--json', 'http://docs.example.com/old/x#f');
    const row = JSON.parse(j.out) as { url: string; input?: string; allowed: boolean };
    assert.deepEqual([row.url, row.input, row.allowed], ['http://docs.example.com/new/x', 'http://docs.example.com/old/x#f', false]);
  });
});
