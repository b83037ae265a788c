// GET /metrics and GET /healthz on the real daemon (`trawl serve` in a
// child process): a collection crawls a fixture site, and what the
// Prometheus text says is compared with the fixture server's own request
// log; promtool (Debian's prometheus package) checks the text; the admin
// server's Host, Origin and token checks apply to /metrics.
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { Exposition, escapeLabelValue } from '../../src/admin/metrics.ts';
import { buildAdminServer } from '../../src/admin/server.ts';
import { CrawlerService } from '../../src/service/crawler-service.ts';
import type { CrawlStore } from '../../src/store/crawl-store.ts';
import { openThreadedCrawlStore } from '../../src/store/storage-client.ts';
import { ROOT } from '../helpers.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe } from '../support/daemon.ts';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { skipUnless, toolPath, TOOLS } from '../support/system-tools.ts';
import { freePort } from '../support/ports.ts';

const TOKEN = 'metrics-test-token-0123456789';
const IP = '127.0.9.1';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request with exactly these headers (Host included), on a fresh connection. */
function get(port: number, path: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: o.method ?? 'GET', headers: { host: `127.0.0.1:${port}`, ...o.headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(o.body);
  });
}

const auth = { authorization: `Bearer ${TOKEN}` };

function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An XML-RPC call with string parameters (and an int last, when given); returns the response body. */
async function rpc(port: number, method: string, params: Array<string | number>): Promise<string> {
  const ps = params.map((p) => `<param><value>${typeof p === 'number' ? `<int>${p}</int>` : `<string>${xmlEscape(p)}</string>`}</value></param>`).join('');
  const r = await get(port, '/RPC2', { method: 'POST', headers: { ...auth, 'content-type': 'text/xml' }, body: `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params>${ps}</params></methodCall>` });
  assert.equal(r.status, 200, r.text);
  assert.doesNotMatch(r.text, /<fault>/, r.text);
  return r.text;
}

/** The samples of a text exposition: `name{labels}` → value (labels as written). */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\S+?(?:\{.*\})?) (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    out.set(m[1]!, m[2] === '+Inf' ? Infinity : Number(m[2]));
  }
  return out;
}

function sample(s: Map<string, number>, key: string): number {
  const v = s.get(key);
  assert.notEqual(v, undefined, `no sample ${key}`);
  return v!;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function promtool(text: string): { status: number | null; out: string } {
  const r = spawnSync(toolPath(TOOLS.promtool), ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('GET /metrics and /healthz on the real daemon', () => {
  let site: FixtureSite;
  let daemon: ChildProcess;
  let data: string;
  let port: number;
  const C = 'collection="shop"';

  const scrape = async (): Promise<{ text: string; s: Map<string, number> }> => {
    const r = await get(port, '/metrics', { headers: auth });
    assert.equal(r.status, 200, r.text);
    return { text: r.text, s: parse(r.text) };
  };
  /** The fixture server's log of this host. */
  const log = () => site.requests.filter((r) => r.host.startsWith(`${IP}:`));
  const pages = () => log().filter((r) => r.path !== '/robots.txt');

  before(async () => {
    const same = '<html><body><p>the very same words on two pages</p></body></html>';
    site = await startFixtureSite([{
      ip: IP,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nDisallow: /private/\n' },
        '/': { kind: 'html', body: '<a href="/a.html">a</a> <a href="/copy.html">copy</a> <a href="/big.html">big</a> <a href="/missing.html">gone</a> <a href="/private/p.html">p</a>' },
        '/a.html': { kind: 'html', body: same },
        '/copy.html': { kind: 'html', body: same },
        '/big.html': { kind: 'gzip', body: `<p>${'compressible words '.repeat(2000)}</p>` },
      },
    }]);
    data = tempDir('trawl-metrics-');
    port = await freePort();
    const tokenFile = join(data, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    daemon = await spawnServe(['--data', data, '--port', String(port), '--allow-loopback', '--token-file', tokenFile]);
    const config = `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="shop">
      <attrib name="start_uris" type="list-string"><member>${site.host(IP).url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib><attrib name="refresh" type="real">600</attrib>
      <section name="feeding"><section name="main"><attrib name="collection" type="string">shop_index</attrib><attrib name="paused" type="boolean">yes</attrib></section></section>
      <section name="trawl_sinks"><section name="out"><attrib name="type" type="string">file</attrib><attrib name="output_dir" type="string">${join(data, 'out')}</attrib></section></section>
    </DomainSpecification></CrawlerConfig>`;
    await rpc(port, 'CollectionAdd', [config, 0]);
  });
  after(async () => {
    daemon?.kill('SIGKILL');
    await site?.close();
  });

  it('counts what the fixture server says it served, once the cycle has ended', async () => {
    await until(async () => {
      const { s } = await scrape();
      return s.get(`trawl_collection_cycle_running{${C}}`) === 0 && (s.get(`trawl_pages_fetched_total{${C}}`) ?? 0) > 0;
    }, 'the first cycle to end');
    const { text, s } = await scrape();
    // The site as the server saw it: robots.txt, four pages and a 404; the disallowed page never asked for.
    assert.deepEqual([...new Set(pages().map((r) => r.path))].sort(), ['/', '/a.html', '/big.html', '/copy.html', '/missing.html']);
    assert.equal(log().filter((r) => r.path.startsWith('/private/')).length, 0);
    const notFound = pages().filter((r) => r.status === 404).length;
    assert.ok(notFound >= 1);
    assert.equal(sample(s, `trawl_pages_fetched_total{${C}}`), pages().length);
    assert.equal(sample(s, `trawl_robots_fetched_total{${C}}`), log().filter((r) => r.path === '/robots.txt').length);
    // Body bytes as sent (the gzip page's compressed size, not what it inflates to).
    assert.equal(sample(s, `trawl_downloaded_bytes_total{${C}}`), log().reduce((n, r) => n + r.bytesOut, 0));
    assert.ok(log().find((r) => r.path === '/big.html')!.bytesOut < 'compressible words '.repeat(2000).length / 4);
    assert.equal(sample(s, `trawl_http_responses_total{${C},code="404"}`), notFound);
    assert.equal(sample(s, `trawl_http_responses_total{${C},code="200"}`), pages().filter((r) => r.status === 200).length);
    // The 404 is an error (after the retries http_errors asks for), with no skip code; the copy is a duplicate (cs);
    // the disallowed link is refused by robots.txt (ro) without a request.
    assert.equal(sample(s, `trawl_fetch_errors_total{${C}}`), 1);
    assert.equal(sample(s, `trawl_fetch_retries_total{${C}}`), notFound - 1);
    assert.equal(sample(s, `trawl_document_skips_total{${C},code="cs"}`), 1);
    assert.equal(sample(s, `trawl_uri_skips_total{${C},code="ro"}`), 1);
    assert.equal(sample(s, `trawl_document_skips_total{${C},code="ti"}`), 0);
    assert.equal(sample(s, `trawl_documents_stored_total{${C}}`), 3);
    // Every request timed: robots.txt and pages.
    const count = sample(s, `trawl_fetch_duration_seconds_count{${C}}`);
    assert.equal(count, log().length);
    assert.equal(sample(s, `trawl_fetch_duration_seconds_bucket{${C},le="+Inf"}`), count);
    assert.ok(sample(s, `trawl_fetch_duration_seconds_bucket{${C},le="0.005"}`) <= sample(s, `trawl_fetch_duration_seconds_bucket{${C},le="120"}`));
    assert.ok(sample(s, `trawl_fetch_duration_seconds_sum{${C}}`) > 0);
    // Gauges: nothing queued, nothing in flight; the paused destination holds every stored document.
    assert.equal(sample(s, `trawl_uris_queued{${C}}`), 0);
    assert.equal(sample(s, `trawl_requests_in_flight{${C}}`), 0);
    assert.equal(sample(s, `trawl_feed_backlog_documents{${C},destination="main"}`), 3);
    assert.equal(sample(s, `trawl_collection_state{${C},state="crawling"}`), 1);
    assert.equal(sample(s, `trawl_collection_state{${C},state="suspended"}`), 0);
    assert.equal(sample(s, 'trawl_collections'), 1);
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    assert.ok(text.includes(`trawl_build_info{version="${version}",nodejs="${process.versions.node}"} 1`), text);
    // The process: this daemon's, not the test's.
    assert.ok(sample(s, 'process_resident_memory_bytes') > 10 * 1024 * 1024);
    assert.ok(sample(s, 'process_cpu_seconds_total') > 0);
    assert.ok(sample(s, 'process_open_fds') > 3);
    const start = sample(s, 'process_start_time_seconds');
    assert.ok(start <= Date.now() / 1000 && start > Date.now() / 1000 - 600, String(start));
    assert.match(text, /^# HELP trawl_pages_fetched_total .+\n# TYPE trawl_pages_fetched_total counter$/m);
  });

  it('passes promtool check metrics', { skip: skipUnless(TOOLS.promtool) }, async () => {
    const { text } = await scrape();
    const r = promtool(text);
    assert.equal(r.status, 0, r.out);
    assert.equal(r.out.trim(), '', r.out);
  });

  it('keeps counting across cycles, and the backlog drains when feeding resumes', async () => {
    await rpc(port, 'CollectionResumeFeeding', ['shop', 'main']);
    await until(async () => (await scrape()).s.get(`trawl_feed_backlog_documents{${C},destination="main"}`) === 0, 'the backlog to drain');
    const before = (await scrape()).s;
    const firstPages = sample(before, `trawl_pages_fetched_total{${C}}`);
    await rpc(port, 'CollectionRefetch', ['shop', '']);
    await until(async () => {
      const { s } = await scrape();
      return s.get(`trawl_collection_cycle_running{${C}}`) === 0 && sample(s, `trawl_pages_fetched_total{${C}}`) > firstPages;
    }, 'the second cycle to end');
    const { s } = await scrape();
    assert.ok(pages().length > firstPages);
    assert.equal(sample(s, `trawl_pages_fetched_total{${C}}`), pages().length);
    assert.equal(sample(s, `trawl_downloaded_bytes_total{${C}}`), log().reduce((n, r) => n + r.bytesOut, 0));
    assert.equal(sample(s, `trawl_fetch_duration_seconds_count{${C}}`), log().length);
    assert.equal(sample(s, `trawl_http_responses_total{${C},code="404"}`), pages().filter((r) => r.status === 404).length);
    for (const [k, v] of before) if (k.endsWith('_total') || k.includes('_total{')) assert.ok(sample(s, k) >= v, `${k} went down: ${v} → ${sample(s, k)}`);
  });

  it('answers /healthz with 200 and a small JSON body, without the token', async () => {
    const r = await get(port, '/healthz');
    assert.equal(r.status, 200, r.text);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    const body = JSON.parse(r.text) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['collections', 'status', 'uptime_s']);
    assert.equal(body.status, 'ok');
    assert.equal(body.collections, 1);
    assert.ok(typeof body.uptime_s === 'number' && body.uptime_s >= 0);
    assert.equal((await get(port, '/healthz', { headers: { host: `evil.example:${port}` } })).status, 421);
    assert.equal((await get(port, '/healthz', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 405);
  });

  it('refuses /metrics without the token (401), from another Host (421) or Origin (403), and other methods (405)', async () => {
    const none = await get(port, '/metrics');
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], 'Bearer realm="trawl"');
    assert.doesNotMatch(none.text, /trawl_/);
    assert.equal((await get(port, '/metrics', { headers: { authorization: 'Bearer not-the-token-at-all' } })).status, 401);
    assert.equal((await get(port, '/metrics', { headers: { ...auth, host: `rebound.example:${port}` } })).status, 421);
    assert.equal((await get(port, '/metrics', { headers: { ...auth, origin: 'http://evil.example' } })).status, 403);
    const post = await get(port, '/metrics', { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    // Without the token any method is refused for the token first: nothing is said of the path.
    assert.equal((await get(port, '/metrics', { method: 'DELETE' })).status, 401);
    assert.equal((await get(port, '/metrics', { headers: auth })).headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  });
});

describe('the text exposition writer', () => {
  it('escapes label values (backslash, quote, newline) so that promtool reads them back', { skip: skipUnless(TOOLS.promtool) }, () => {
    assert.equal(escapeLabelValue('a\\b"c\nd'), 'a\\\\b\\"c\\nd');
    const x = new Exposition();
    x.family('demo_events_total', 'counter', 'Events with a back\\slash and a\nnewline in the help.', [[{ collection: 'we"ird\\name\nx' }, 3], [{ collection: 'plain' }, 0]]);
    x.histogram('demo_duration_seconds', 'Durations.', [{ labels: { collection: 'we"ird' }, bounds: [0.1, 1], cumulative: [1, 2, 3], sum: 1.7, count: 3 }]);
    const text = x.text();
    assert.ok(text.includes('demo_events_total{collection="we\\"ird\\\\name\\nx"} 3'), text);
    assert.ok(text.includes('# HELP demo_events_total Events with a back\\\\slash and a\\nnewline in the help.'), text);
    assert.ok(text.includes('demo_duration_seconds_bucket{collection="we\\"ird",le="+Inf"} 3'), text);
    const r = promtool(text);
    assert.equal(r.status, 0, r.out);
    assert.equal(r.out.trim(), '', r.out);
  });

  it('refuses a counter whose name does not end in _total, and a family written twice', () => {
    const x = new Exposition();
    assert.throws(() => x.family('demo_events', 'counter', 'x', []), /_total/);
    x.family('demo_g', 'gauge', 'x', []);
    assert.throws(() => x.family('demo_g', 'gauge', 'x', []), /twice/);
  });
});

describe('/healthz answers 503 while the service is not running or its crawl store does not answer', () => {
  it('starting, ok, store unavailable, stopping', async () => {
    const dir = tempDir('trawl-healthz-');
    const real = await openThreadedCrawlStore(join(dir, 'trawl.db'));
    let stalled = false;
    // The crawl store as the service sees it: its reads can be made to never answer.
    const store = new Proxy(real, {
      get(target, key) {
        if (key === 'getCollection' && stalled) return () => new Promise(() => undefined);
        const v = Reflect.get(target, key, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as CrawlStore;
    const log = pino({ level: 'silent' });
    const service = new CrawlerService({ dataDir: dir, store, log, address: { host: '127.0.0.1', port: 0 } });
    const app = buildAdminServer({ service, log, token: TOKEN });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const p = (app.server.address() as { port: number }).port;
    const health = async (): Promise<{ status: number; body: Record<string, unknown> }> => {
      const r = await get(p, '/healthz');
      return { status: r.status, body: JSON.parse(r.text) as Record<string, unknown> };
    };
    try {
      const starting = await health();
      assert.deepEqual([starting.status, starting.body.status, starting.body.collections, typeof starting.body.uptime_s], [503, 'starting', 0, 'number']);
      await service.start();
      assert.equal((await health()).status, 200);
      stalled = true;
      const t0 = Date.now();
      const stuck = await health();
      assert.deepEqual([stuck.status, stuck.body.status], [503, 'store unavailable']);
      assert.ok(Date.now() - t0 < 5_000, `answered after ${Date.now() - t0} ms`);
      stalled = false;
      assert.equal((await health()).status, 200);
      await service.stop();
      assert.deepEqual([(await health()).status, (await health()).body.status], [503, 'stopping']);
    } finally {
      await app.close();
      await real.close();
    }
  });
});
