// The PostgreSQL dialect against the CrawlStore contract, on a real server the test starts (test/support/postgres.ts).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { isTrawlError } from '../../src/core/errors.ts';
import type { CrawlStore, LeasedUri } from '../../src/store/crawl-store.ts';
import { PostgresCrawlStore } from '../../src/store/postgres/postgres-crawl-store.ts';
import { STATEMENTS } from '../../src/store/postgres/statements.ts';
import { startPostgres, type PostgresServer } from '../support/postgres.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { crawlStoreSuite, q, rec } from './crawl-store-suite.ts';

const skip = skipUnless(TOOLS.postgres);
const server: PostgresServer | undefined = skip ? undefined : await startPostgres();
after(() => server?.stop());

const urls = new WeakMap<CrawlStore, string>();

if (server) {
  crawlStoreSuite({
    name: 'postgres',
    async open() {
      const url = await server.createDatabase();
      const s = await PostgresCrawlStore.open(url);
      urls.set(s, url);
      return s;
    },
    async reopen(store) {
      const url = urls.get(store)!;
      await store.close();
      const s = await PostgresCrawlStore.open(url);
      urls.set(s, url);
      return s;
    },
  });
}

test('two stores on one database (two processes\' pools) leasing one site at once never lease a URI twice', { skip }, async () => {
  const url = await server!.createDatabase();
  const [a, b] = [await PostgresCrawlStore.open(url, { owner: 'node-a' }), await PostgresCrawlStore.open(url, { owner: 'node-b' })];
  try {
    const N = 2000;
    const site = 'http://a.test:80';
    await a.enqueue('c', 1, Array.from({ length: N }, (_, i) => q(`http://a.test/${i}`)));
    const taken = new Map<string, string[]>();
    // Each store runs four leasers side by side, as a node's crawl loop leases for several sites' tasks at once.
    const leaser = async (store: PostgresCrawlStore): Promise<void> => {
      for (let round = 0; round < N; round++) {
        const got = await store.lease('c', site, 1 + (round % 5));
        if (got.length === 0) return;
        for (const l of got) taken.set(l.url, [...(taken.get(l.url) ?? []), store.owner]);
        // Half are completed, discovering nothing; the rest stay leased.
        if (round % 2 === 0) await Promise.all(got.map((l) => store.complete('c', 1, { leaseId: l.id, site, record: rec(l.url), discovered: [] })));
      }
    };
    await Promise.all([a, a, a, a, b, b, b, b].map(leaser));
    const twice = [...taken].filter(([, by]) => by.length > 1);
    assert.deepEqual(twice, []);
    assert.equal(taken.size, N);
    const byOwner = (o: string): number => [...taken.values()].filter((by) => by[0] === o).length;
    assert.ok(byOwner('node-a') > 0 && byOwner('node-b') > 0, `a ${byOwner('node-a')}, b ${byOwner('node-b')}`);
    const counts = await a.counts('c');
    assert.equal(counts.queued, 0);
    assert.equal(counts.leased + counts.done, N);
    // Every leased row names its holder and an expiry in the future.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const rows = (await db.query<{ lease_owner: string; n: string; future: boolean }>(
        'SELECT lease_owner, count(*) AS n, bool_and(lease_expires > now()) AS future FROM frontier WHERE state = 1 GROUP BY lease_owner ORDER BY 1',
      )).rows;
      assert.deepEqual(rows.map((r) => r.lease_owner), ['node-a', 'node-b'].filter((o) => rows.some((r) => r.lease_owner === o)));
      assert.equal(rows.reduce((n, r) => n + Number(r.n), 0), counts.leased);
      assert.ok(rows.every((r) => r.future));
    } finally {
      await db.end();
    }
  } finally {
    await a.close();
    await b.close();
  }
});

test('an expired lease goes back to the queue with a crash strike; a renewed one stays', { skip }, async () => {
  const url = await server!.createDatabase();
  const dead = await PostgresCrawlStore.open(url, { owner: 'dead', leaseTtlMs: 50 });
  const live = await PostgresCrawlStore.open(url, { owner: 'live', leaseTtlMs: 50 });
  try {
    await dead.enqueue('c', 1, [q('http://a.test/1'), q('http://a.test/2')]);
    const [d] = await dead.lease('c', 'http://a.test:80', 1);
    const [l] = await live.lease('c', 'http://a.test:80', 1);
    assert.deepEqual([d!.url, l!.url], ['http://a.test/1', 'http://a.test/2']);
    await new Promise((r) => setTimeout(r, 120));
    const renewing = await PostgresCrawlStore.open(url, { owner: 'live', leaseTtlMs: 60_000 });
    assert.equal(await renewing.renewLeases('c'), 1);
    await renewing.close();
    assert.equal(await live.recoverExpiredLeases('c'), 1);
    const again = await live.lease('c', 'http://a.test:80', 5);
    assert.deepEqual(again.map((u) => [u.url, (u.flags ?? 0) >> 16]), [['http://a.test/1', 1]]);
    assert.deepEqual(await live.counts('c'), { queued: 0, leased: 2, done: 0 });
  } finally {
    await dead.close();
    await live.close();
  }
});

test('a server that cannot be reached, a wrong password and a missing database are clear errors, the password masked', { skip }, async () => {
  const wrong = server!.url('postgres').replace(encodeURIComponent(server!.password), 'not-the-password');
  await assert.rejects(PostgresCrawlStore.open(wrong), (err: unknown) => {
    assert.ok(isTrawlError(err));
    assert.equal(err.code, 'TRAWL_ERR_STORE_UNAVAILABLE');
    assert.match(err.message, /^the crawl store postgres:\/\/trawl:\*{8}@127\.0\.0\.1:\d+\/postgres refused the login: .*password authentication failed/);
    assert.doesNotMatch(err.message, /not-the-password/);
    return true;
  });
  await assert.rejects(PostgresCrawlStore.open(server!.url('no_such_db')), (err: unknown) => {
    assert.ok(isTrawlError(err) && err.code === 'TRAWL_ERR_STORE_UNAVAILABLE');
    assert.match(err.message, /\/no_such_db has no such database/);
    assert.ok(!err.message.includes(server!.password));
    return true;
  });
  // A port nothing listens on.
  const closed = server!.url('postgres').replace(`:${server!.port}/`, ':1/');
  await assert.rejects(PostgresCrawlStore.open(closed), (err: unknown) => {
    assert.ok(isTrawlError(err) && err.code === 'TRAWL_ERR_STORE_UNAVAILABLE');
    assert.match(err.message, /^cannot reach the crawl store postgres:\/\/trawl:\*{8}@127\.0\.0\.1:1\/postgres: .*ECONNREFUSED/);
    assert.ok(!err.message.includes(server!.password));
    return true;
  });
});

test('a store of a later schema version is refused and left as it was', { skip }, async () => {
  const url = await server!.createDatabase();
  await (await PostgresCrawlStore.open(url)).close();
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query("UPDATE trawl_meta SET value = '9' WHERE key = 'schema'");
    await assert.rejects(PostgresCrawlStore.open(url), (err: unknown) => {
      assert.ok(isTrawlError(err) && err.code === 'TRAWL_ERR_IO');
      assert.match(err.message, /has schema version 9; this trawl reads versions 1 to 2/);
      assert.ok(!err.message.includes(server!.password));
      return true;
    });
    assert.equal((await db.query("SELECT value FROM trawl_meta WHERE key = 'schema'")).rows[0]?.value, '9');
  } finally {
    await db.end();
  }
});

test('stores opened at the same moment on a new database create the schema once', { skip }, async () => {
  const url = await server!.createDatabase();
  const stores = await Promise.all(Array.from({ length: 4 }, () => PostgresCrawlStore.open(url)));
  await stores[0]!.putCollection('c', '<x/>', 1);
  for (const s of stores) assert.equal((await s.getCollection('c'))?.configXml, '<x/>');
  await Promise.all(stores.map((s) => s.close()));
});

test('collection names PostgreSQL text cannot hold (U+0000, the service\'s own rows) are kept as given', { skip }, async () => {
  const s = await PostgresCrawlStore.open(await server!.createDatabase());
  try {
    const names = ['\u0000global', 'a\u0001b', 'a\u0001\u0001b', 'plain'];
    for (const n of names) await s.putCollection(n, '<x/>', 1);
    await s.updateCollection('\u0000global', { extra: { stats: 'x\u0000y' } });
    assert.deepEqual((await s.getCollection('\u0000global'))?.extra, { stats: 'x\u0000y' });
    assert.deepEqual((await s.listCollections()).map((c) => c.name).sort(), [...names].sort());
    await s.enqueue('\u0000global', 1, [q('http://a.test/')]);
    const [l] = await s.lease('\u0000global', 'http://a.test:80', 1);
    assert.deepEqual(await s.complete('\u0000global', 1, { leaseId: l!.id, site: l!.site, record: rec(l!.url), discovered: [q('http://a.test/x')], siteStats: '{}' }), [q('http://a.test/x')]);
    assert.equal((await s.getRecord('\u0000global', 'http://a.test/'))?.status, 'stored');
    assert.equal(await s.getRecord('a\u0001b', 'http://a.test/'), undefined);
    await s.deleteCollection('\u0000global');
    assert.equal(await s.getCollection('\u0000global'), undefined);
    assert.equal(await s.countRecords('\u0000global'), 0);
  } finally {
    await s.close();
  }
});

// Regression: a completion that linked again to a URI already queued locked its row until it committed,
// and a lease beside it skipped the row (SKIP LOCKED) and came back short, which the crawler reads as
// "nothing more queued for this site": the URI was never fetched (the bench crawl missed 3 to 8 pages of 5,000).
test('a lease does not come back short while a completion that links again to a queued URI is being written', { skip }, async () => {
  const url = await server!.createDatabase();
  const s = await PostgresCrawlStore.open(url);
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  try {
    await s.enqueue('c', 1, [q('http://a.test/1'), q('http://a.test/2')]);
    // Another transaction queues the same URIs (the seen set's statements, as a completion runs them) and stays open.
    await other.query('BEGIN');
    const arrays = [['c', 'c'], ['http://a.test/1', 'http://a.test/2'], ['http://a.test:80', 'http://a.test:80'], [1, 1], [1, 1], [1, 1], [0, 0], [null, null], [null, null], [0, 0], [1, 1], [0, 1]];
    const first = await other.query(STATEMENTS.enqueueBack, arrays);
    assert.deepEqual(first.rows.map((r: { url: string | null }) => r.url), [null]);
    await other.query(STATEMENTS.enqueueAgain, [...arrays, Number(first.rows[0].base)]);
    const leased = await Promise.race([s.lease('c', 'http://a.test:80', 5), new Promise<'waited'>((r) => setTimeout(() => r('waited'), 5000))]);
    assert.notEqual(leased, 'waited');
    assert.deepEqual((leased as LeasedUri[]).map((u) => u.url), ['http://a.test/1', 'http://a.test/2']);
    await other.query('COMMIT');
  } finally {
    await other.query('ROLLBACK').catch(() => {});
    await other.end();
    await s.close();
  }
});

test('a store opened exclusive (as trawl crawl and trawl serve open it) refuses a second process until the first closes it', { skip }, async () => {
  const url = await server!.createDatabase();
  const first = await PostgresCrawlStore.open(url, { exclusive: true });
  await assert.rejects(PostgresCrawlStore.open(url, { exclusive: true }), (err: unknown) => {
    assert.ok(isTrawlError(err) && err.code === 'TRAWL_ERR_IO');
    assert.match(err.message, /^the crawl store postgres:\/\/trawl:\*{8}@127\.0\.0\.1:\d+\/t_\d+_\d+ is in use by another process/);
    return true;
  });
  // Another database of the same server is another store.
  const elsewhere = await PostgresCrawlStore.open(await server!.createDatabase(), { exclusive: true });
  await elsewhere.close();
  await first.close();
  const again = await PostgresCrawlStore.open(url, { exclusive: true });
  await again.close();
});

// What the crawler relies on (see inOrder in postgres-crawl-store.ts): answered side by side on the pool's
// connections, a lease could read the frontier before a completion committed and answer after it, and the
// crawler took the site for drained with URIs queued (a crawl left some pages unfetched).
test('frontier calls made without waiting take effect and answer in the order they were made, as on SQLite', { skip }, async () => {
  const s = await PostgresCrawlStore.open(await server!.createDatabase());
  try {
    const answered: number[] = [];
    const calls: Array<Promise<unknown>> = [];
    const sites = ['http://a.test:80', 'http://b.test:80', 'http://c.test:80'];
    const leased: string[] = [];
    for (let i = 0; i < 90; i++) {
      const site = sites[i % 3]!;
      const call = i % 5 === 0 ? s.counts('c')
        : i % 5 === 1 ? s.sitesWithWork('c')
          : i % 5 === 2 ? s.lease('c', site, 2).then((l) => leased.push(...l.map((u) => u.url)))
            : s.enqueue('c', 1, [q(`${site.replace(':80', '')}/${i}`)]);
      calls.push(call.then(() => answered.push(i)));
    }
    await Promise.all(calls);
    assert.deepEqual(answered, Array.from({ length: 90 }, (_, i) => i));
    // Each lease took exactly what the calls before it had queued, as if the calls ran one after the other.
    const queues = new Map<string, string[]>(sites.map((x) => [x, []]));
    const expected: string[] = [];
    for (let i = 0; i < 90; i++) {
      const site = sites[i % 3]!;
      if (i % 5 === 2) expected.push(...queues.get(site)!.splice(0, 2));
      else if (i % 5 >= 3) queues.get(site)!.push(`${site.replace(':80', '')}/${i}`);
    }
    assert.deepEqual(leased, expected);
    assert.deepEqual(await s.counts('c'), { queued: 36 - expected.length, leased: expected.length, done: 0 });
  } finally {
    await s.close();
  }
});

test('a batch is written as if its completions were written in order: one statement, or statement by statement when a feed key repeats', { skip }, async () => {
  const s = await PostgresCrawlStore.open(await server!.createDatabase());
  try {
    for (const repeatFeed of [false, true]) {
      const c = repeatFeed ? 'repeat' : 'plain';
      await s.enqueue(c, 1, [q('http://a.test/1'), q('http://a.test/2')]);
      const [one, two] = await s.lease(c, 'http://a.test:80', 2);
      const answers = await s.completeMany([
        { collection: c, epoch: 1, writeSiteStats: false, completion: { leaseId: one!.id, site: one!.site, record: rec(one!.url), discovered: [q('http://a.test/x'), q('http://a.test/2')], siteStats: '{"n":1}', feed: [{ destination: 'A', url: one!.url, op: 'add' }] } },
        { collection: c, epoch: 1, writeSiteStats: true, completion: { leaseId: two!.id, site: two!.site, record: rec(two!.url, { checksum: 'two' }), discovered: [q('http://a.test/x'), q('http://a.test/y')], siteStats: '{"n":2}', feed: [{ destination: 'A', url: repeatFeed ? one!.url : two!.url, op: 'update' }] } },
      ]);
      assert.deepEqual(answers.map((a) => a.map((u) => u.url)), [['http://a.test/x'], ['http://a.test/y']], c);
      assert.equal(await s.getSiteStats(c, 'http://a.test:80'), '{"n":2}');
      assert.equal((await s.getRecord(c, 'http://a.test/2'))?.checksum, 'two');
      assert.deepEqual(await s.counts(c), { queued: 2, leased: 0, done: 2 });
      assert.deepEqual((await s.pendingFeed(c, 'A', 0, 10)).map((p) => [p.url, p.op]), repeatFeed ? [['http://a.test/1', 'add']] : [['http://a.test/1', 'add'], ['http://a.test/2', 'update']]);
    }
  } finally {
    await s.close();
  }
});
