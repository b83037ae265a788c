// The robots.txt product token: derived from a `compatible;` User-Agent as
// crawlers present themselves (CiteSeerBot, not Mozilla), or set with
// trawl_robots.product_token; used for robots.txt groups and robots meta
// tags. Real `trawl crawl` runs; the assertions are on the server's log.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { productTokenOf } from '../../src/engine/runtime.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { startFixtureSite } from '../support/fixture-site.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const IP = '127.0.31.41';
const UA = 'Mozilla/5.0 (compatible; CiteSeerBot/1.12.1 +http://citeseerx.ist.psu.edu/bot.html)';

const ROBOTS = [
  'User-agent: Mozilla', 'Disallow: /', '',
  'User-agent: CiteSeerBot', 'Disallow: /private/', '',
  'User-agent: OtherBot', 'Disallow: /public.html', '',
  'User-agent: *', 'Disallow: /',
].join('\n');

function config(dir: string, name: string, start: string, extra: string): string {
  const path = join(dir, `${name}.xml`);
  writeFileSync(path, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="${name}">
    <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
    <attrib name="delay" type="real">0</attrib>
    <attrib name="headers" type="list-string"><member>User-Agent: ${UA}</member></attrib>
    ${extra}
  </DomainSpecification></CrawlerConfig>`);
  return path;
}

describe('the robots.txt product token', () => {
  it('is the name after "compatible;" in a browser-style User-Agent', () => {
    assert.equal(productTokenOf(UA), 'CiteSeerBot');
    assert.equal(productTokenOf('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'), 'Googlebot');
    assert.equal(productTokenOf('Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0'), 'Mozilla');
    assert.equal(productTokenOf('trawl/1.0 (+https://example.org)'), 'trawl');
  });

  it('chooses the CiteSeerBot group over Mozilla\'s, obeys <meta name="CiteSeerBot">, and can be set with trawl_robots.product_token', async () => {
    const site = await startFixtureSite([{
      ip: IP,
      routes: {
        '/robots.txt': { kind: 'robots', body: ROBOTS },
        '/': { kind: 'html', body: '<a href="/public.html">public</a> <a href="/private/x.html">private</a> <a href="/meta.html">meta</a>' },
        '/public.html': { kind: 'html', body: '<p>public</p>' },
        '/private/x.html': { kind: 'html', body: '<p>private</p>' },
        '/meta.html': { kind: 'html', body: '<meta name="citeseerbot" content="nofollow"><meta name="mozilla" content="noindex"><a href="/not-followed.html">x</a>' },
        '/not-followed.html': { kind: 'html', body: '<p>x</p>' },
      },
    }]);
    const h = site.host(IP);
    const dir = tempDir('trawl-token-');
    try {
      const r = await runTrawl(['crawl', '--data', join(dir, 'a'), '--allow-loopback', '--json', config(dir, 'derived', h.url('/'), '')], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      const paths = new Set(h.requests.map((q) => q.path));
      assert.deepEqual([...paths].sort(), ['/', '/meta.html', '/public.html', '/robots.txt'], 'the CiteSeerBot group, not Mozilla\'s or *');
      for (const q of h.requests) assert.equal(q.headers['user-agent'], UA);
      const summary = (JSON.parse(r.out) as { collections: Array<{ stored: number }> }).collections[0]!;
      assert.equal(summary.stored, 3, `<meta name="mozilla" content="noindex"> is not for this crawler: ${r.out}`);

      h.requests.length = 0;
      const set = config(dir, 'set', h.url('/'), '<section name="trawl_robots"><attrib name="product_token" type="string">OtherBot</attrib></section>');
      const s = await runTrawl(['crawl', '--data', join(dir, 'b'), '--allow-loopback', set], { timeoutMs: 120_000 });
      assert.equal(s.code, 0, s.err);
      assert.deepEqual([...new Set(h.requests.map((q) => q.path))].sort(), ['/', '/meta.html', '/not-followed.html', '/private/x.html', '/robots.txt'], 'the OtherBot group; the CiteSeerBot meta tag no longer applies');

      const bad = config(dir, 'bad', h.url('/'), '<section name="trawl_robots"><attrib name="product_token" type="string">CiteSeerBot/1.12</attrib></section>');
      const b = await runTrawl(['crawl', '--data', join(dir, 'c'), '--allow-loopback', bad], { timeoutMs: 120_000 });
      assert.notEqual(b.code, 0);
      assert.match(b.err, /product_token/);
    } finally {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
