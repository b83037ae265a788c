// The Elastic crawler's event log (event names and ECS fields of the Open Crawler's
// event_generator.rb), written to logs/crawl.log for an Elastic YAML collection and,
// on request (trawl_elastic.events), for an MS-FSCCFG one: read back from the log
// after crawling a loopback site.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite, type RouteSpec } from '../support/fixture-site.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const page = (title: string, links: string[] = [], head = ''): RouteSpec => ({
  kind: 'html',
  body: `<!doctype html><html><head><title>${title}</title>${head}</head><body><h1>${title}</h1>${links.join(' ')}</body></html>`,
});
const a = (href: string, rel = '') => `<a href="${href}"${rel ? ` rel="${rel}"` : ''}>${href}</a>`;

type Ev = Record<string, unknown>;

function elasticEvents(dataDir: string): Ev[] {
  return readFileSync(join(dataDir, 'logs', 'crawl.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Ev).filter((e) => typeof e['event.action'] === 'string');
}

describe('the Elastic event log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-elastic-events-'));
  let site: FixtureSite;
  let origin = '';
  let other = '';
  before(async () => {
    site = await startFixtureSite([
      {
        ip: '127.0.134.21',
        routes: {
          '/': page('home', [a('/a.html'), a('/nf.html', 'nofollow'), a('/private/p.html'), a('/old'), a('/meta-nofollow.html'), a('http://127.0.134.22:{port}/x.html')]),
          '/a.html': page('page a'),
          '/nf.html': page('never followed'),
          '/private/p.html': page('denied by a crawl rule'),
          '/old': { kind: 'redirect', to: '/new.html', status: 301 },
          '/new.html': page('the new place'),
          '/meta-nofollow.html': page('nofollow page', [a('/x.html'), a('/y.html')], '<meta name="robots" content="nofollow">'),
          '/x.html': page('x'),
          '/y.html': page('y'),
        },
      },
      { ip: '127.0.134.22', routes: { '/x.html': page('outside') } },
    ]);
    origin = site.hosts[0]!.origin;
    other = site.hosts[1]!.origin;
    site.setRoute('127.0.134.21', '/robots.txt', { kind: 'robots', body: `User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n` });
    site.setRoute('127.0.134.21', '/sitemap.xml', { kind: 'text', contentType: 'application/xml', body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${origin}/listed.html</loc></url></urlset>` });
    site.setRoute('127.0.134.21', '/listed.html', page('listed in the sitemap'));
    site.setRoute('127.0.134.21', '/', page('home', [a('/a.html'), a('/nf.html', 'nofollow'), a('/private/p.html'), a('/old'), a('/meta-nofollow.html'), a(`${other}/x.html`)]));
  });
  after(async () => {
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an Elastic YAML crawl writes crawl-start, crawl-seed, url-seed, url-discover (allowed and denied, with reasons), url-fetch with redirect targets, url-extracted and crawl-end', async () => {
    const file = join(dir, 'events.yml');
    writeFileSync(file, `domains:\n  - url: ${origin}\n    crawl_rules:\n      - {policy: deny, type: begins, pattern: /private}\nloopback_allowed: true\noutput_sink: console\n`);
    const data = join(dir, 'yaml-data');
    const r = await runTrawl(['crawl', '--data', data, file], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.err);
    const ev = elasticEvents(data);
    const actions = ev.map((e) => e['event.action']);
    assert.equal(actions[0], 'crawl-start');
    // The sinks may take the last documents after the cycle has ended: only url-output and the final crawl-status follow crawl-end.
    assert.equal(actions.filter((x) => x !== 'url-output' && x !== 'crawl-status').at(-1), 'crawl-end');
    // The crawl id is the cycle's ID, as trawl crawl's summary prints it.
    const crawlId = String(ev[0]!['crawler.crawl.id']);
    assert.match(crawlId, /^[0-9a-f]{24}$/);
    assert.match(r.err + r.out, new RegExp(crawlId));
    for (const e of ev) {
      assert.equal(e['crawler.crawl.id'], crawlId);
      assert.equal(e['service.type'], 'crawler');
      assert.match(String(e['@timestamp']), /^\d{4}-\d\d-\d\dT/);
    }
    assert.equal(ev.find((e) => e['event.action'] === 'crawl-end')!['event.outcome'], 'success');
    const one = (action: string, url: string, more: Ev = {}) => ev.filter((e) => e['event.action'] === action && e['url.full'] === url && Object.entries(more).every(([k, v]) => e[k] === v));
    assert.equal(ev.find((e) => e['event.action'] === 'crawl-seed')!['crawler.crawl.seed_urls.count'], 1);
    assert.equal(one('url-seed', `${origin}/`, { 'crawler.url.source_type': 'seed_list', 'crawler.url.crawl_depth': 1 }).length, 1);
    assert.equal(one('url-discover', `${origin}/a.html`, { 'event.type': 'allowed', 'crawler.url.source_url.full': `${origin}/`, 'crawler.url.crawl_depth': 2 }).length, 1);
    assert.equal(one('url-seed', `${origin}/a.html`, { 'crawler.url.source_type': 'organic' }).length, 1);
    // Denials, each with Elastic's reason and the page the link was on.
    const denied = (url: string, reason: string, from: string) => one('url-discover', url, { 'event.type': 'denied', 'crawler.url.deny_reason': reason, 'crawler.url.source_url.full': from }).length;
    assert.equal(denied(`${origin}/nf.html`, 'nofollow', `${origin}/`), 1);
    assert.equal(denied(`${origin}/private/p.html`, 'crawl_rule_denied', `${origin}/`), 1);
    assert.equal(denied(`${other}/x.html`, 'domain_filter_denied', `${origin}/`), 1);
    // One denial per link of a page whose robots meta tag says nofollow.
    assert.equal(denied(`${origin}/x.html`, 'nofollow', `${origin}/meta-nofollow.html`), 1);
    assert.equal(denied(`${origin}/y.html`, 'nofollow', `${origin}/meta-nofollow.html`), 1);
    // Fetches: a redirect names its target.
    assert.equal(one('url-fetch', `${origin}/old`, { 'http.response.status_code': '301', 'event.outcome': 'failure', 'crawler.url.redirect.location': `${origin}/new.html`, 'crawler.url.redirect.count': 1 }).length, 1);
    const fetchA = one('url-fetch', `${origin}/a.html`, { 'http.response.status_code': '200', 'event.outcome': 'success' });
    assert.equal(fetchA.length, 1);
    assert.equal(typeof fetchA[0]!['http.response.body.bytes'], 'number');
    assert.equal(one('url-extracted', `${origin}/a.html`, { 'event.outcome': 'success' }).length, 1);
    assert.equal(one('url-extracted', `${origin}/new.html`, { 'event.outcome': 'success' }).length, 1);
    // Each indexed page went to the console sink.
    for (const p of ['/', '/a.html', '/new.html', '/listed.html']) assert.equal(one('url-output', `${origin}${p}`, { 'event.module': 'console', 'event.outcome': 'success' }).length, 1, p);
    // A redirect's target and a sitemap's URLs are seeded with their source.
    assert.equal(one('url-seed', `${origin}/new.html`, { 'crawler.url.source_type': 'redirect', 'crawler.url.source_url.full': `${origin}/old` }).length, 1);
    assert.equal(one('url-seed', `${origin}/listed.html`, { 'crawler.url.source_type': 'sitemap', 'crawler.url.source_url.full': `${origin}/sitemap.xml` }).length, 1);
    assert.equal(one('url-extracted', `${origin}/listed.html`, { 'event.outcome': 'success' }).length, 1);
    // What the site was asked for agrees with the log.
    assert.ok(!site.fetchedPaths('127.0.134.21').includes('/nf.html'));
    assert.deepEqual(site.host('127.0.134.22').requests, []);
  });

  it('the YAML converted to MS-FSCCFG XML crawls the same: the same events, URLs, outcomes and reasons', async () => {
    const yml = join(dir, 'events.yml');
    const xml = join(dir, 'events.xml');
    const c = await runTrawl(['config', 'convert', yml, '--to', 'xml', '-o', xml]);
    assert.equal(c.code, 0, c.err);
    const data = join(dir, 'xml-converted-data');
    const r = await runTrawl(['crawl', '--data', data, xml], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.err);
    const shape = (ev: Ev[]) => ev.filter((e) => e['event.action'] !== 'crawl-status')
      .map((e) => [e['event.action'], e['url.full'] ?? '', e['event.type'], e['event.outcome'] ?? '', e['crawler.url.deny_reason'] ?? ''].join(' ')).sort();
    assert.deepEqual(shape(elasticEvents(data)), shape(elasticEvents(join(dir, 'yaml-data'))));
  });

  it('an MS-FSCCFG collection writes trawl\'s events, and the Elastic ones when trawl_elastic.events is set', async () => {
    const xml = (events: boolean) => `<?xml version="1.0"?><CrawlerConfig><DomainSpecification name="xml${events}">
<attrib name="start_uris" type="list-string"><member>${origin}/a.html</member></attrib>
<attrib name="delay" type="real">0</attrib>
<section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
${events ? '<section name="trawl_elastic"><attrib name="events" type="boolean">yes</attrib></section>' : ''}
</DomainSpecification></CrawlerConfig>`;
    for (const events of [false, true]) {
      const file = join(dir, `xml-${events}.xml`);
      writeFileSync(file, xml(events));
      const data = join(dir, `xml-${events}-data`);
      const r = await runTrawl(['crawl', '--data', data, file], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      const ev = elasticEvents(data);
      if (!events) {
        assert.deepEqual(ev, []);
        assert.match(readFileSync(join(data, 'logs', 'crawl.log'), 'utf8'), /"event":"fetch"/);
      } else {
        assert.deepEqual(ev.map((e) => e['event.action']).filter((x) => x !== 'crawl-status' && x !== 'url-output' && !String(x).startsWith('trawl-')), ['crawl-start', 'crawl-seed', 'url-seed', 'url-fetch', 'url-extracted', 'crawl-end']);
      }
    }
  });
});
