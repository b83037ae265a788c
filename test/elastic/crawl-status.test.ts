// The Elastic crawler's periodic crawl-status event (the Open Crawler's event_generator.rb
// log_crawl_status / crawl_status, crawl.rb status, stats.rb): with stats_dump_interval 1
// and a page that takes seconds to answer, the event log of an Elastic YAML crawl holds a
// crawl-status when the loop starts, at least one while the slow page is fetched, and one
// after crawl-end, each with crawler.status.* as ECS fields; the last one's counts agree with
// the log's url-fetch and url-discover records and with what the site answered.
// The YAML key becomes trawl_elastic.stats_interval in `config convert`'s XML.
// trawl's own notes are trawl-* events, never crawl-status.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite, type RouteSpec } from '../support/fixture-site.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const page = (title: string, links: string[] = [], delayMs?: number): RouteSpec => ({
  kind: 'html',
  body: `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`,
  ...(delayMs !== undefined ? { delayMs } : {}),
});

type Ev = Record<string, unknown>;

describe('crawl-status: Elastic\'s periodic crawl statistics', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-elastic-status-'));
  let site: FixtureSite;
  let origin = '';
  before(async () => {
    site = await startFixtureSite([{
      ip: '127.0.134.174',
      routes: {
        '/': page('home', ['/slow.html', '/a.html', '/gone.html', '/private/p.html']),
        '/slow.html': page('slow', [], 3500),
        '/a.html': page('a'),
        '/gone.html': { kind: 'status', status: 404 },
        '/private/p.html': page('denied by a crawl rule'),
      },
    }]);
    origin = site.hosts[0]!.origin;
  });
  after(async () => {
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('at the start, every stats_dump_interval, and after crawl-end; the counts agree with the log and the site', async () => {
    const file = join(dir, 'status.yml');
    writeFileSync(file, `domains:\n  - url: ${origin}\n    crawl_rules:\n      - {policy: deny, type: begins, pattern: /private}\nloopback_allowed: true\noutput_sink: console\nstats_dump_interval: 1\n`);
    const data = join(dir, 'data');
    const r = await runTrawl(['crawl', '--data', data, '--feed-timeout', '30', file], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err, /stats_dump_interval/, 'applied, so not warned about');
    const ev = readFileSync(join(data, 'logs', 'crawl.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Ev).filter((e) => typeof e['event.action'] === 'string');
    const actions = ev.map((e) => e['event.action']);
    const statuses = ev.filter((e) => e['event.action'] === 'crawl-status');
    const at = (action: string) => actions.indexOf(action);

    // One when the loop starts (after the seeding), at least one while the slow page is fetched, one after crawl-end.
    assert.ok(statuses.length >= 3, `${statuses.length} crawl-status events`);
    assert.ok(actions.indexOf('crawl-status') > at('crawl-seed'));
    assert.equal(actions.lastIndexOf('crawl-status') > at('crawl-end'), true, 'the final crawl-status follows crawl-end');
    const fetchOfSlow = ev.findIndex((e) => e['event.action'] === 'url-fetch' && e['url.full'] === `${origin}/slow.html`);
    const first = actions.indexOf('crawl-status');
    const periodic = ev.findIndex((e, i) => i > first && i < fetchOfSlow && e['event.action'] === 'crawl-status');
    assert.ok(periodic > 0, 'a crawl-status while /slow.html was being fetched');

    const crawlId = ev.find((e) => e['event.action'] === 'crawl-start')!['crawler.crawl.id'];
    for (const s of statuses) {
      assert.equal(s['event.kind'], 'metric');
      assert.equal(s['event.type'], 'info');
      assert.equal(s['crawler.crawl.id'], crawlId);
      assert.equal(s.message, undefined, 'statistics only, no note');
      for (const f of ['queue_size', 'pages_visited', 'urls_allowed', 'crawling_time_msec', 'avg_response_time_msec', 'active_threads', 'http_client.max_connections', 'http_client.used_connections']) {
        assert.equal(typeof s[`crawler.status.${f}`], 'number', `crawler.status.${f}`);
      }
    }
    // The counts grow: the one during the slow fetch saw fewer pages than the last.
    const last = statuses[statuses.length - 1]!;
    assert.ok((ev[periodic]!['crawler.status.pages_visited'] as number) < (last['crawler.status.pages_visited'] as number));
    assert.ok((ev[periodic]!['crawler.status.queue_size'] as number) + (ev[periodic]!['crawler.status.active_threads'] as number) >= 1, 'the slow page is queued or under way');

    // The last one's figures are the log's and the site's.
    const fetches = ev.filter((e) => e['event.action'] === 'url-fetch');
    const discover = ev.filter((e) => e['event.action'] === 'url-discover');
    assert.equal(last['crawler.status.pages_visited'], fetches.length);
    assert.equal(last['crawler.status.status_codes.404'], 1);
    assert.equal(last['crawler.status.status_codes.200'], fetches.filter((e) => e['http.response.status_code'] === '200').length);
    const pages = site.host('127.0.134.174').requests.filter((q) => q.path !== '/robots.txt');
    assert.equal(last['crawler.status.status_codes.200'], pages.filter((q) => q.status === 200).length);
    assert.equal(last['crawler.status.urls_allowed'], discover.filter((e) => e['event.type'] === 'allowed').length);
    assert.equal(last['crawler.status.urls_denied.crawl_rule_denied'], 1);
    assert.equal(last['crawler.status.queue_size'], 0);
    assert.ok((last['crawler.status.crawl_duration_msec'] as number) >= 3000, 'the crawl took the slow page\'s time at least');
    assert.ok((last['crawler.status.crawling_time_msec'] as number) >= 3000);

    // config convert: stats_dump_interval is trawl_elastic.stats_interval.
    const conv = await runTrawl(['config', 'convert', '--to', 'xml', file], { timeoutMs: 60_000 });
    assert.equal(conv.code, 0, conv.err);
    assert.match(conv.out, /<section name="trawl_elastic">[^]*<attrib name="stats_interval" type="integer"> 1 <\/attrib>/);

    // trawl's notes keep their own names.
    assert.ok(ev.some((e) => e['event.action'] === 'trawl-cycle' && /starting cycle/.test(String(e.message))));
  });
});
