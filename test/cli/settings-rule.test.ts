// One rule for what a configuration means, in every command: a FILE means
// MS-FSCCFG's defaults (trawl crawl, config show, urltest agree), and only the
// collection built from command-line URLs has the one-shot defaults, which
// `config show --url` and `urltest --crawl-url` show and judge. Asserted on
// the real binary's output and on what the fixture site saw.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const dir = tempDir('trawl-settings-rule-');
const IP = '127.0.8.1';

interface Run { code: number | null; out: string; err: string }

/** Runs trawl; `stopWhen` (checked every 100 ms) sends SIGINT, as Ctrl-C would. */
function trawl(args: string[], o: { stopWhen?: () => boolean; timeoutMs?: number } = {}): Promise<Run> {
  return runTrawl(args, o);
}

interface Shown { settings: { delayS: number; fetchTimeoutS: number; robotsTimeoutS: number; allowedSchemes: string[]; startUris: string[] } }

describe('a configuration file means MS-FSCCFG in every command; URLs get the one-shot defaults', () => {
  let site: FixtureSite;
  let file: string;
  let start: string;

  before(async () => {
    site = await startFixtureSite([{
      ip: IP,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
        '/': { kind: 'html', body: '<html><head><title>Home</title></head><body><a href="/a.html">a</a></body></html>' },
        '/a.html': { kind: 'html', body: '<html><head><title>A</title></head><body>A</body></html>' },
      },
    }]);
    start = site.host(IP).url('/');
    // Neither delay nor allowed_schemes nor the timeouts: the defaults decide.
    file = join(dir, 'plain.xml');
    writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="plain">
      <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
      <section name="include_domains"><attrib name="exact" type="list-string"><member>${IP}</member></attrib></section>
    </DomainSpecification></CrawlerConfig>`);
  });
  after(async () => {
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('config show FILE gives MS-FSCCFG\'s defaults; config show --url gives what trawl crawl URL applies', async () => {
    const fromFile = await trawl(['config', 'show', '--format', 'json', file]);
    assert.equal(fromFile.code, 0, fromFile.err);
    const f = (JSON.parse(fromFile.out) as Shown).settings;
    assert.deepEqual([f.delayS, f.fetchTimeoutS, f.robotsTimeoutS, f.allowedSchemes], [60, 300, 300, ['http']]);

    const fromUrl = await trawl(['config', 'show', '--format', 'json', '--url', start]);
    assert.equal(fromUrl.code, 0, fromUrl.err);
    const u = (JSON.parse(fromUrl.out) as Shown).settings;
    assert.deepEqual([u.delayS, u.fetchTimeoutS, u.robotsTimeoutS, u.allowedSchemes, u.startUris], [1, 30, 30, ['http', 'https'], [start]]);

    // The crawl's own options apply there too; the XML form names the values.
    const xml = await trawl(['config', 'show', '--mode', 'explicit', '--url', start, '--delay', '0.25', '--depth', '2']);
    assert.equal(xml.code, 0, xml.err);
    assert.match(xml.out, /<attrib name="delay" type="real"> 0\.25 <\/attrib>/);
    assert.match(xml.out, /<attrib name="mode" type="string"> DEPTH:2 <\/attrib>/);

    const both = await trawl(['config', 'show', file, '--url', start]);
    assert.equal(both.code, 64);
    assert.match(both.err, /give a configuration file or --url URL/);
    const stray = await trawl(['config', 'show', '--delay', '1', file]);
    assert.equal(stray.code, 64);
    assert.match(stray.err, /--delay apply to --url/);
  });

  it('urltest FILE refuses https as the file\'s crawl would; urltest --crawl-url allows it as trawl crawl URL does', async () => {
    const https = site.host(IP).url('/x').replace(/^http:/, 'https:');
    const fromFile = await trawl(['urltest', '--json', '--no-fetch-robots', file, https]);
    assert.equal(fromFile.code, 0, fromFile.err);
    const judged = JSON.parse(fromFile.out) as { allowed: boolean; code: string; reason: string };
    assert.deepEqual([judged.allowed, judged.code, judged.reason], [false, 'ch', 'scheme https is not in allowed_schemes (http)']);

    const fromUrl = await trawl(['urltest', '--json', '--no-fetch-robots', '--crawl-url', start, https, 'http://elsewhere.test/']);
    assert.equal(fromUrl.code, 0, fromUrl.err);
    const rows = fromUrl.out.trim().split('\n').map((l) => JSON.parse(l) as { allowed: boolean; code: string | null });
    assert.deepEqual(rows.map((r) => [r.allowed, r.code]), [[true, null], [false, 'do']]);

    const none = await trawl(['urltest', '--crawl-url', start]);
    assert.equal(none.code, 64);
    assert.match(none.err, /no URL to test/);
  });

  it('trawl crawl FILE waits MS-FSCCFG\'s 60 s between two requests to the site, and says so on stderr', async () => {
    site.reset();
    let robotsAt = 0;
    const r = await trawl(['crawl', '--data', join(dir, 'file'), '--allow-loopback', file], {
      // Stopped 3 s after robots.txt: with the one-shot 1 s delay, / and /a.html would have been fetched by then.
      stopWhen: () => {
        if (robotsAt === 0 && site.fetchedPaths(IP).includes('/robots.txt')) robotsAt = Date.now();
        return robotsAt > 0 && Date.now() - robotsAt > 3000;
      },
      timeoutMs: 50_000,
    });
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /trawl: note: collection plain \(.*plain\.xml\): delay is 60 s, MS-FSCCFG's default: each site gets one request a minute; set <attrib name="delay" type="real"> in the file/);
    assert.match(r.out, /stopped \(signal\)/);
    // robots.txt, then a minute before the next request to the site.
    assert.deepEqual(site.fetchedPaths(IP), ['/robots.txt']);

    // The same start URL given on the command line: the one-shot 1 s delay, no note.
    site.reset();
    const u = await trawl(['crawl', '--data', join(dir, 'url'), '--allow-loopback', start]);
    assert.equal(u.code, 0, u.err);
    assert.doesNotMatch(u.err, /note: .*delay/);
    assert.deepEqual(site.fetchedPaths(IP).filter((p) => p !== '/robots.txt'), ['/', '/a.html']);
    assert.ok(site.minStartGapMs(IP, (p) => p === '/robots.txt') >= 900, `pages ${site.minStartGapMs(IP, (p) => p === '/robots.txt')} ms apart`);
  });
});
