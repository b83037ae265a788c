// `trawl inspect`, `trawl export` and `trawl urltest --data` read a crawl made with `--store postgres://…`:
// the records from PostgreSQL, the documents and event logs from the data directory. The real CLI, a fixture
// site on loopback and a PostgreSQL server of the test's own.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { tempDir } from '../support/crawl-harness.ts';
import { generatedSite, generatedSiteExpected, startFixtureSite } from '../support/fixture-site.ts';
import { startPostgres, type PostgresServer } from '../support/postgres.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { runTrawl, type TrawlRun } from '../support/trawl-cli.ts';

const dir = tempDir('trawl-data-pg-');
const skip = skipUnless(TOOLS.postgres);
const server: PostgresServer | undefined = skip ? undefined : await startPostgres();
after(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI, given two minutes: a crawl on a cluster that starts with the test may be slow. */
const trawl = (args: string[]): Promise<TrawlRun> => runTrawl(args, { timeoutMs: 120_000 });

const HOST = '127.0.12.41';
const SITE = { hosts: [HOST], pagesPerHost: 12, linksPerPage: 3, seed: 41 };
/** The advisory lock a crawler holds on its PostgreSQL store (store/postgres/connection.ts EXCLUSIVE_LOCK). */
const EXCLUSIVE_LOCK = 0x747261776c31;

describe('inspect, export and urltest on a PostgreSQL crawl store', { skip }, () => {
  it('read the records from PostgreSQL and the bodies from --data; while a crawler holds the store they say so', async () => {
    const site = await startFixtureSite(generatedSite(SITE));
    const url = await server!.createDatabase();
    const data = join(dir, 'data');
    try {
      const home = site.host(HOST).url('/');
      const crawl = await trawl(['crawl', '--store', url, '--data', data, '--allow-loopback', '--delay', '0', '--json', home]);
      assert.equal(crawl.code, 0, crawl.err);
      const expected = generatedSiteExpected(SITE)[HOST]!.filter((p) => p !== '/robots.txt');
      const requestsBefore = site.requests.length;

      // Without --store the data directory has no crawl store of its own: the error says where it looked.
      const plain = await trawl(['inspect', '--data', data, home]);
      assert.equal(plain.code, 66, plain.err);
      assert.match(plain.err, /there is no crawl store \(.*trawl\.db\)/);

      const inspect = await trawl(['inspect', '--data', data, '--store', url, '--body', '--json', home]);
      assert.equal(inspect.code, 0, inspect.err);
      const rep = JSON.parse(inspect.out) as { known: boolean; record: { status: string; httpStatus: number }; history: Array<{ event: string; status?: number }>; body: { text: string } };
      assert.equal(rep.known, true);
      assert.equal(rep.record.status, 'stored');
      assert.equal(rep.record.httpStatus, 200);
      assert.deepEqual(rep.history.map((h) => [h.event, h.status]), [['fetch', 200]]);
      assert.match(rep.body.text, /<a href=/);
      const unknown = await trawl(['inspect', '--data', data, '--store', url, site.host(HOST).url('/never-linked.html')]);
      assert.equal(unknown.code, 1, unknown.err);
      assert.match(unknown.err, /TRAWL_ERR_URL_UNKNOWN: .*never-linked\.html is not known/);

      const exported = await trawl(['export', '--data', data, '--store', url]);
      assert.equal(exported.code, 0, exported.err);
      const lines = exported.out.trim().split('\n').map((l) => JSON.parse(l) as { url: string; body?: { text?: string } });
      assert.deepEqual(lines.map((l) => new URL(l.url).pathname).sort(), [...expected].sort());
      for (const l of lines) assert.match(l.body?.text ?? '', /<html/i, l.url);

      // The collection `trawl crawl URL` made, as `--crawl-url` builds it again.
      const ut = await trawl(['urltest', '--no-fetch-robots', '--data', data, '--store', url, '--crawl-url', home, home, site.host(HOST).url('/never-linked.html')]);
      assert.equal(ut.code, 0, ut.err);
      assert.match(ut.out, new RegExp(`${home.replace(/[.]/g, '\\.')}[\\s\\S]*stored: stored, HTTP 200, last crawled \\d{4}-`));
      assert.match(ut.out, /never-linked\.html[\s\S]*stored: no record/);
      // Reading asked the site for nothing; the bodies shown are the ones the server sends.
      assert.equal(site.requests.length, requestsBefore);
      const served = await (await fetch(home)).text();
      assert.equal(rep.body.text, served);
      assert.equal(lines.find((l) => new URL(l.url).pathname === '/')?.body?.text, served);

      // A crawler holds the store (its advisory lock): urltest says so, and inspect turns to the admin server, which is not there.
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      try {
        assert.equal((await holder.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [EXCLUSIVE_LOCK])).rows[0]?.ok, true);
        const held = await trawl(['urltest', '--no-fetch-robots', '--data', data, '--store', url, '--crawl-url', home, home]);
        assert.equal(held.code, 66, held.err);
        assert.match(held.err, /the crawl store postgres:\/\/trawl:\*{8}@127\.0\.0\.1:\d+\/t_\d+_\d+ is in use by another process/);
        assert.ok(!held.err.includes(server!.password));
        const viaServer = await trawl(['inspect', '--data', data, '--store', url, '--server', 'http://127.0.0.1:9/', home]);
        assert.equal(viaServer.code, 69, viaServer.err);
        assert.match(viaServer.err, /the crawl store postgres:\/\/trawl:\*{8}@.* is in use by a running trawl; reading through the admin server http:\/\/127\.0\.0\.1:9\//);
        assert.match(viaServer.err, /TRAWL_ERR_DATA_UNAVAILABLE/);
      } finally {
        await holder.end();
      }
    } finally {
      await site.close();
    }
  });
});
