// `trawl crawl --store postgres://…` and `trawl serve --store postgres://…`: the real CLI crawls a fixture
// site with its crawl store on a PostgreSQL server the test starts; asserted on the site's log and on the
// rows PostgreSQL holds.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { COMMIT_BACKLOG } from '../../src/frontier/site-scheduler.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe } from '../support/daemon.ts';
import { generatedSite, generatedSiteExpected, startFixtureSite } from '../support/fixture-site.ts';
import { pgQuery as query, startPostgres, type PostgresServer } from '../support/postgres.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { ROOT } from '../helpers.ts';
import { runTrawl, type TrawlRun } from '../support/trawl-cli.ts';

const BIN = join(ROOT, 'bin/trawl.js');
const dir = tempDir('trawl-store-pg-');
const skip = skipUnless(TOOLS.postgres);
const server: PostgresServer | undefined = skip ? undefined : await startPostgres();
after(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI, given two minutes: a crawl on a cluster that starts with the test may be slow. */
const trawl = (args: string[]): Promise<TrawlRun> => runTrawl(args, { timeoutMs: 120_000 });

async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

// A URL crawl stays within the URL's own site: one host.
const HOSTS = ['127.0.12.1'];
const SITE = { hosts: HOSTS, pagesPerHost: 80, linksPerPage: 5, seed: 12 };

describe('the crawl store on PostgreSQL', { skip }, () => {
  it('trawl crawl --store postgres://… fetches every page once, over two runs, and the records are in PostgreSQL', async () => {
    const site = await startFixtureSite(generatedSite(SITE));
    const url = await server!.createDatabase();
    const data = join(dir, 'crawl');
    try {
      const start = site.host(HOSTS[0]!).url('/');
      const common = ['crawl', '--store', url, '--data', data, '--allow-loopback', '--delay', '0', '--json'];
      // The first run stops early with its cycle open; the second resumes it from what PostgreSQL holds.
      const first = await trawl([...common, '--max-pages', '30', start]);
      assert.equal(first.code, 0, first.err);
      const afterFirst = site.fetchedPaths(HOSTS[0]).filter((p) => p !== '/robots.txt').length;
      assert.ok(afterFirst >= 30 && afterFirst < SITE.pagesPerHost + 1, `the first run fetched ${afterFirst} pages`);
      const second = await trawl([...common, start]);
      assert.equal(second.code, 0, second.err);
      // The summary names the store by its URL, the password masked.
      const summary = JSON.parse(second.out) as { collections: Array<{ paths: { store: string } }> };
      assert.equal(summary.collections[0]?.paths.store, url.replace(`:${encodeURIComponent(server!.password)}@`, ':********@'));
      assert.ok(!second.out.includes(server!.password));
      const expected = generatedSiteExpected(SITE);
      for (const ip of HOSTS) {
        assert.deepEqual(site.duplicates(ip).filter((p) => p !== '/robots.txt'), [], `${ip} fetched twice`);
        assert.deepEqual(new Set(site.fetchedPaths(ip)), new Set(expected[ip]), ip);
      }
      const pages = HOSTS.length * (SITE.pagesPerHost + 1);
      const rows = await query<{ status: string; n: string }>(url, 'SELECT status, count(*) AS n FROM records GROUP BY status');
      assert.deepEqual(rows.map((r) => [r.status, Number(r.n)]), [['stored', pages]]);
      const frontier = await query<{ state: number; n: string }>(url, 'SELECT state, count(*) AS n FROM frontier GROUP BY state ORDER BY state');
      assert.deepEqual(frontier.map((r) => [r.state, Number(r.n)]), [[2, pages]]);
      const [collection] = await query<{ name: string; epoch: number }>(url, 'SELECT name, epoch FROM collections');
      assert.equal(collection?.epoch, 1);
      // Nothing of the crawl store went to the data directory; the documents did.
      assert.equal(existsSync(join(data, 'trawl.db')), false);
      assert.ok(existsSync(join(data, 'content', collection!.name)));
    } finally {
      await site.close();
    }
  });

  // Regression: answered side by side on two connections, a lease could read the frontier before a
  // completion committed and answer after it, and the crawler took the site for drained with URIs queued.
  it('a crawl of several hosts at full speed leaves nothing queued: every page fetched once', async () => {
    const hosts = ['127.0.12.11', '127.0.12.12', '127.0.12.13', '127.0.12.14', '127.0.12.15', '127.0.12.16'];
    const opts = { hosts, pagesPerHost: 300, linksPerPage: 6, seed: 7 };
    const site = await startFixtureSite(generatedSite(opts));
    const url = await server!.createDatabase();
    try {
      const config = join(dir, 'multi.xml');
      const m = (xs: string[]): string => xs.map((x) => `<member>${x}</member>`).join('');
      writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="multi">
        <attrib name="start_uris" type="list-string">${m(hosts.map((h) => site.host(h).url('/')))}</attrib>
        <attrib name="delay" type="real">0</attrib><attrib name="max_pending" type="integer">8</attrib>
        <section name="include_domains"><attrib name="exact" type="list-string">${m(hosts)}</attrib></section>
      </DomainSpecification></CrawlerConfig>`);
      const r = await trawl(['crawl', '--store', url, '--data', join(dir, 'multi'), '--allow-loopback', '--json', config]);
      assert.equal(r.code, 0, r.err);
      const queued = await query<{ url: string }>(url, 'SELECT url FROM frontier WHERE state <> 2 ORDER BY url');
      assert.deepEqual(queued.map((q) => q.url), []);
      const expected = generatedSiteExpected(opts);
      for (const ip of hosts) {
        assert.deepEqual(site.duplicates(ip).filter((p) => p !== '/robots.txt'), [], `${ip} fetched twice`);
        assert.deepEqual(new Set(site.fetchedPaths(ip)), new Set(expected[ip]), ip);
      }
    } finally {
      await site.close();
    }
  });

  it('survives kill -9: resumed from PostgreSQL, every page fetched, nothing refetched but what was in flight', async (t) => {
    const hosts = ['127.0.12.21', '127.0.12.22'];
    const maxPending = 2;
    const opts = { hosts, pagesPerHost: 150, linksPerPage: 6, seed: 9 };
    // A little server time per page so that the crawl lasts long enough to be killed.
    const site = await startFixtureSite(generatedSite(opts).map((h) => ({
      ...h, routes: Object.fromEntries(Object.entries(h.routes).map(([k, v]) => [k, typeof v === 'object' && v.kind === 'html' ? { ...v, delayMs: 20 } : v])),
    })));
    const url = await server!.createDatabase();
    try {
      const config = join(dir, 'crash.xml');
      const m = (xs: string[]): string => xs.map((x) => `<member>${x}</member>`).join('');
      writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="crash">
        <attrib name="start_uris" type="list-string">${m([site.host(hosts[0]!).url('/')])}</attrib>
        <attrib name="delay" type="real">0.01</attrib><attrib name="max_pending" type="integer">${maxPending}</attrib>
        <section name="include_domains"><attrib name="exact" type="list-string">${m(hosts)}</attrib></section>
      </DomainSpecification></CrawlerConfig>`);
      const args = ['crawl', '--store', url, '--data', join(dir, 'crash'), '--allow-loopback', '--json', config];
      let kills = 0;
      for (const delayMs of [900, 1300, 1100]) {
        const child = spawn(process.execPath, [BIN, ...args], { stdio: 'ignore' });
        const timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
        const [code] = (await once(child, 'exit')) as [number | null];
        clearTimeout(timer);
        if (code === 0) break;
        kills++;
      }
      assert.ok(kills >= 2, `the crawl finished after ${kills} kills: make the site slower`);
      const last = await trawl(args);
      assert.equal(last.code, 0, last.err);
      assert.deepEqual(await query(url, 'SELECT url, state FROM frontier WHERE state <> 2'), []);
      const setAside = (await query<{ url: string }>(url, "SELECT url FROM records WHERE skip_code = 'cr'")).map((r) => new URL(r.url).pathname);
      const expected = generatedSiteExpected(opts);
      let refetched = 0;
      for (const ip of hosts) {
        const fetched = site.fetchedPaths(ip);
        assert.deepEqual(new Set([...fetched, ...setAside.filter((p) => !fetched.includes(p))]), new Set(expected[ip]), ip);
        refetched += fetched.length - new Set(fetched).size;
      }
      // Per site and kill, at most max_pending requests and COMMIT_BACKLOG × max_pending pages waiting for their commit.
      assert.ok(refetched <= kills * maxPending * (1 + COMMIT_BACKLOG) * hosts.length, `${refetched} refetches after ${kills} kills`);
      t.diagnostic(`${kills} kills, ${refetched} refetches, ${setAside.length} set aside`);
      const stored = Number((await query<{ n: string }>(url, "SELECT count(*) AS n FROM records WHERE status = 'stored'"))[0]?.n);
      assert.equal(stored + setAside.length, hosts.length * (opts.pagesPerHost + 1));
    } finally {
      await site.close();
    }
  });

  it('a server that cannot be reached or refuses the login stops trawl crawl with exit 69, the password masked', async () => {
    const unreachable = await trawl(['crawl', '--store', `postgres://trawl:s3cret-word@127.0.0.1:${await closedPort()}/x`, '--data', join(dir, 'x'), 'http://127.0.12.9/']);
    assert.equal(unreachable.code, 69, unreachable.err);
    assert.match(unreachable.err, /TRAWL_ERR_STORE_UNAVAILABLE: cannot reach the crawl store postgres:\/\/trawl:\*{8}@127\.0\.0\.1:\d+\/x: /);
    assert.doesNotMatch(unreachable.err, /s3cret-word/);
    const login = await trawl(['crawl', '--store', server!.url('postgres').replace(encodeURIComponent(server!.password), 's3cret-word'), '--data', join(dir, 'x'), 'http://127.0.12.9/']);
    assert.equal(login.code, 69, login.err);
    assert.match(login.err, /refused the login: password authentication failed for user "trawl"/);
    assert.doesNotMatch(login.err, /s3cret-word/);
    const bad = await trawl(['crawl', '--store', 'mysql://h/db', '--data', join(dir, 'x'), 'http://127.0.12.9/']);
    assert.equal(bad.code, 64, bad.err);
    assert.match(bad.err, /--store mysql:\/\/h\/db: not a crawl store/);
  });

  it('trawl serve --store postgres://… keeps its collections in PostgreSQL across a restart', async () => {
    const site = await startFixtureSite(generatedSite({ ...SITE, hosts: ['127.0.12.5'], pagesPerHost: 10 }));
    const url = await server!.createDatabase();
    const data = join(dir, 'serve');
    let daemon: ChildProcess | undefined;
    try {
      const port = await closedPort();
      const config = join(dir, 'serve.xml');
      writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="pgweb">
        <attrib name="start_uris" type="list-string"><member>${site.host('127.0.12.5').url('/')}</member></attrib>
        <attrib name="delay" type="real">0</attrib><attrib name="refresh" type="real">600</attrib>
      </DomainSpecification></CrawlerConfig>`);
      const args = ['--store', url, '--data', data, '--port', String(port), '--allow-loopback'];
      daemon = await spawnServe(args);
      const rpc = `http://127.0.0.1:${port}/RPC2`;
      const py = (body: string): unknown => {
        const r = spawnSync('python3', ['-c', `import json, xmlrpc.client\ns = xmlrpc.client.ServerProxy(${JSON.stringify(rpc)})\n${body}`], { encoding: 'utf8', timeout: 60_000 });
        assert.equal(r.status, 0, r.stderr);
        return JSON.parse(r.stdout);
      };
      py(`print(json.dumps(s.CollectionAdd(open(${JSON.stringify(config)}).read(), 0)))`);
      await until(async () => Number((await query<{ n: string }>(url, 'SELECT count(*) AS n FROM records'))[0]?.n) === 11, 60_000);
      assert.deepEqual(site.duplicates('127.0.12.5'), []);
      // While the daemon holds the store, a crawl on the same database is refused, as on a SQLite data directory.
      const second = await trawl(['crawl', '--store', url, '--data', join(dir, 'second'), '--allow-loopback', site.host('127.0.12.5').url('/')]);
      assert.equal(second.code, 66, second.err);
      assert.match(second.err, /TRAWL_ERR_IO: the crawl store postgres:\/\/trawl:\*{8}@127\.0\.0\.1:\d+\/t_\d+_\d+ is in use by another process/);
      daemon.kill('SIGTERM');
      await once(daemon, 'exit');
      daemon = undefined;
      // The service's own row (its global statistics) beside the collection's.
      assert.deepEqual((await query<{ name: string }>(url, 'SELECT name FROM collections ORDER BY name')).map((r) => r.name), ['\u0001\u0001global', 'pgweb']);
      // A new daemon on an empty data directory finds the collection in the database.
      rmSync(data, { recursive: true, force: true });
      daemon = await spawnServe(args);
      assert.deepEqual(py('print(json.dumps(s.CollectionGetList()))'), ['pgweb']);
    } finally {
      if (daemon) {
        daemon.kill('SIGTERM');
        await once(daemon, 'exit');
      }
      await site.close();
    }
  });
});

/** A loopback port nothing listens on now. */
async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
