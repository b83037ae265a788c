// The multinode scheduler (`trawl serve --role scheduler`) and its node schedulers, driven with Python's
// xmlrpc.client through every MS-FSCADM method whose answer differs by role; a node that joins later takes
// a share of the sites; site_clusters keep a group of sites on one node; the scheduler's statistics are
// the sum of the nodes'. Asserted on the answers, on nginx's access log and on the rows PostgreSQL holds.
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe, TRAWL_BIN } from '../support/daemon.ts';
import { startNginxHosts } from '../support/nginx-hosts.ts';
import { freePort, until } from '../support/ports.ts';
import { pgQuery, startPostgres, type PostgresServer } from '../support/postgres.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';

const dir = tempDir('trawl-multinode-rpc-');
const skip = skipUnless(TOOLS.postgres) ?? skipUnless(TOOLS.nginx);
const server: PostgresServer | undefined = skip ? undefined : await startPostgres();
after(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const HOSTS = Array.from({ length: 8 }, (_, i) => `127.0.34.${i + 1}`);
/** One site_clusters group: these three hosts are always routed to one node. */
const CLUSTER = HOSTS.slice(0, 3);
const PAGES = 12;
const DELAY_S = 0.5;

function sites(port: number): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  HOSTS.forEach((h, k) => {
    const pages: Record<string, string> = {};
    for (let i = 0; i < PAGES; i++) {
      const links = i + 1 < PAGES ? [`/p${i + 1}.html`] : [];
      // The last page links to a page of another site that nothing else links to: found late, when the
      // sites are routed to both nodes, it is queued through the database for the node of its site.
      if (i === PAGES - 1) links.push(`http://${HOSTS[(k + 3) % HOSTS.length]}:${port}/x.html`);
      pages[i === 0 ? '/' : `/p${i}.html`] = `<html><head><title>${h} ${i}</title></head><body>${links.map((l) => `<a href="${l}">x</a>`).join(' ')}</body></html>`;
    }
    pages['/x.html'] = `<html><head><title>${h} x</title></head><body>only linked from another site</body></html>`;
    out[h] = pages;
  });
  return out;
}

/**
 * Runs `calls` (name → Python expression over the proxies `S`, `N1`, `N2`) in one Python process; each
 * answer is JSON, a fault is {"fault": faultString}.
 */
function rpc(proxies: Record<string, string>, calls: Record<string, string>): Record<string, unknown> {
  const script = [
    'import json, xmlrpc.client',
    ...Object.entries(proxies).map(([v, u]) => `${v} = xmlrpc.client.ServerProxy(${JSON.stringify(u)})`),
    'def conv(v):',
    '  if isinstance(v, dict): return {k: conv(x) for k, x in v.items()}',
    '  if isinstance(v, (list, tuple)): return [conv(x) for x in v]',
    '  return v',
    'out = {}',
    ...Object.entries(calls).flatMap(([k, expr]) => [
      'try:',
      `  out[${JSON.stringify(k)}] = conv(${expr})`,
      'except xmlrpc.client.Fault as f:',
      `  out[${JSON.stringify(k)}] = {"fault": f.faultString}`,
    ]),
    'print(json.dumps(out))',
  ].join('\n');
  const r = spawnSync('python3', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('the multinode scheduler and its nodes', { skip }, () => {
  it('answers by role, routes sites (site_clusters together), forwards SetLogLevel, sums the statistics', async (t) => {
    const nginx = await startNginxHosts(join(dir, 'nginx'), HOSTS, sites);
    const url = await server!.createDatabase();
    const daemons: ChildProcess[] = [];
    const addr = new Map<string, { host: string; port: number; rpc: string }>();
    const start = async (name: string, host: string, args: string[]): Promise<void> => {
      const port = await freePort(host);
      addr.set(name, { host, port, rpc: `http://${host}:${port}/RPC2` });
      daemons.push(await spawnServe([...args, '--store', url, '--data', join(dir, name), '--host', host, '--port', String(port), '--allow-loopback', '--node-timeout', '4']));
    };
    try {
      const m = (xs: string[]): string => xs.map((x) => `<member>${x}</member>`).join('');
      const config = join(dir, 'multi.xml');
      writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="multi">
        <attrib name="start_uris" type="list-string">${m(HOSTS.map((h) => `${nginx.origin(h)}/`))}</attrib>
        <attrib name="delay" type="real">${DELAY_S}</attrib><attrib name="max_pending" type="integer">1</attrib>
        <attrib name="refresh" type="real">600</attrib>
        <section name="include_domains"><attrib name="exact" type="list-string">${m(HOSTS)}</attrib></section>
        <section name="site_clusters"><attrib name="group" type="list-string">${m(CLUSTER)}</attrib></section>
        <Node name="n1"><attrib name="headers" type="list-string"><member>User-Agent: trawl-n1</member></attrib></Node>
        <Node name="n2"><attrib name="headers" type="list-string"><member>User-Agent: trawl-n2</member></attrib></Node>
      </DomainSpecification></CrawlerConfig>`);
      await start('scheduler', '127.0.35.1', ['--role', 'scheduler']);
      await start('n1', '127.0.35.2', ['--node', 'n1']);
      const S = addr.get('scheduler')!.rpc;
      const N1 = addr.get('n1')!.rpc;
      // The scheduler takes CollectionAdd without Force: the installation has the collection, and n1 crawls it.
      assert.deepEqual(rpc({ S }, { add: `S.CollectionAdd(open(${JSON.stringify(config)}).read(), 0)` }).add, [1, 'collection multi added or updated']);
      await until('n1 crawling', () => nginx.accessLog().some((l) => l.agent === 'trawl-n1'), 30_000);
      // A node that joins while the crawl runs takes a share of the sites.
      await start('n2', '127.0.35.3', ['--node', 'n2']);
      const N2 = addr.get('n2')!.rpc;
      await until('n2 taking a share', async () => (await pgQuery(url, "SELECT 1 FROM trawl_site_routes WHERE node = 'n2'")).length >= 2, 30_000);

      const routeNow = async (): Promise<string | undefined> => (await pgQuery<{ node: string }>(url, 'SELECT node FROM trawl_site_routes WHERE site = $1', [nginx.origin(HOSTS[5]!)]))[0]?.node;
      const routedBefore = await routeNow();
      const byRole = rpc({ S, N1, N2 }, {
        sMulti: 'S.IsMultiNodeScheduler()', n1Multi: 'N1.IsMultiNodeScheduler()',
        sDist: 'S.IsDistributed()', n1Dist: 'N1.IsDistributed()', n2Dist: 'N2.IsDistributed()',
        sManagers: 'S.GetSiteManagerNum()', n1Managers: 'N1.GetSiteManagerNum()',
        sPorts: 'S.GetNodeSchedulerXmlRpcPorts()', n1Ports: 'N1.GetNodeSchedulerXmlRpcPorts()',
        n2List: 'N2.CollectionGetList()',
        n1Add: `N1.CollectionAdd(open(${JSON.stringify(config)}).read(), 0)`,
        n2Delete: 'N2.CollectionDelete("multi", 0)',
        sRoute: `S.CollectionGetSiteRoutingAddress("multi", ${JSON.stringify(`${HOSTS[5]}:${nginx.port}`)})`,
        n1Route: `N1.CollectionGetSiteRoutingAddress("multi", ${JSON.stringify(`${HOSTS[5]}:${nginx.port}`)})`,
        setLevel: 'S.SetLogLevel(0x04 | 0x08 | 0x10)',
        n1Level: 'N1.GetLogLevel()', n2Level: 'N2.GetLogLevel()',
      });
      assert.equal(byRole.sMulti, 1);
      assert.equal(byRole.n1Multi, 0);
      assert.deepEqual([byRole.sDist, byRole.n1Dist, byRole.n2Dist], [1, 1, 1]);
      assert.deepEqual([byRole.sManagers, byRole.n1Managers], [0, 1]);
      const a1 = addr.get('n1')!;
      const a2 = addr.get('n2')!;
      assert.deepEqual(byRole.sPorts, [[a1.host, a1.port], [a2.host, a2.port]]);
      assert.match(String((byRole.n1Ports as { fault: string }).fault), /not a multinode scheduler/);
      assert.deepEqual(byRole.n2List, ['multi'], 'a node started after CollectionAdd finds the collection in the database');
      assert.match(String((byRole.n1Add as { fault: string }).fault), /node scheduler of a multinode installation.*Force 1/);
      assert.match(String((byRole.n2Delete as { fault: string }).fault), /node scheduler of a multinode installation.*Force 1/);
      // The route as the database held it before or after the calls (the share may still be moving to n2).
      const routedAfter = await routeNow();
      const answerOf = (node: string | undefined): unknown => [1, [(node === 'n1' ? a1 : a2).host, (node === 'n1' ? a1 : a2).port]];
      const expected = [answerOf(routedBefore), answerOf(routedAfter)].map((x) => JSON.stringify(x));
      assert.ok(expected.includes(JSON.stringify(byRole.sRoute)), `${JSON.stringify(byRole.sRoute)}: routed to ${routedBefore}, then ${routedAfter}`);
      assert.ok(expected.includes(JSON.stringify(byRole.n1Route)), `${JSON.stringify(byRole.n1Route)}: routed to ${routedBefore}, then ${routedAfter}`);
      // SetLogLevel: forwarded to each node before the scheduler answers.
      assert.equal(byRole.setLevel, 1);
      assert.deepEqual([byRole.n1Level, byRole.n2Level], [0x04 | 0x08 | 0x10, 0x04 | 0x08 | 0x10]);

      await until('the whole crawl', async () => {
        const n = await pgQuery<{ open: string; records: string }>(url, "SELECT (SELECT count(*) FROM frontier WHERE state IN (0, 1)) AS open, (SELECT count(*) FROM records WHERE status = 'stored') AS records");
        return Number(n[0]!.open) === 0 && Number(n[0]!.records) === HOSTS.length * (PAGES + 1);
      }, 90_000).catch(async (err: unknown) => {
        const open = await pgQuery(url, "SELECT f.url, f.state, f.lease_owner, r.node FROM frontier f LEFT JOIN trawl_site_routes r ON r.site = f.site WHERE f.state IN (0, 1) LIMIT 20");
        const routes = await pgQuery(url, 'SELECT site, cluster, node, free_at_ms FROM trawl_site_routes ORDER BY site');
        throw new Error(`${(err as Error).message}; open: ${JSON.stringify(open)}; routes: ${JSON.stringify(routes)}`);
      });
      const log = nginx.accessLog().filter((l) => l.path !== '/robots.txt');
      for (const h of HOSTS) assert.equal(new Set(log.filter((l) => l.host === h).map((l) => l.path)).size, PAGES + 1, h);
      // site_clusters: the group's sites are routed to one node, and each was fetched by one node at a time.
      const clusterNodes = await pgQuery<{ node: string }>(url, 'SELECT DISTINCT node FROM trawl_site_routes WHERE site = ANY($1::text[])', [CLUSTER.map((h) => nginx.origin(h))]);
      assert.equal(clusterNodes.length, 1, `the cluster is on ${clusterNodes.map((r) => r.node).join(', ')}`);
      // Within the cluster, each site's fetches by one node, then (after a move) by the other: never interleaved.
      for (const h of CLUSTER) {
        const agents = log.filter((l) => l.host === h).sort((a, b) => a.ms - b.ms).map((l) => l.agent);
        const switches = agents.filter((a, i) => i > 0 && a !== agents[i - 1]).length;
        assert.ok(switches <= 1, `${h}: ${agents.join(' ')}`);
      }
      assert.ok(log.some((l) => l.agent === 'trawl-n2'), 'n2 fetched its share');

      // Statistics: the scheduler's are the sum of the nodes'; Sum* on the scheduler.
      const stats = rpc({ S, N1, N2 }, { s: 'S.CollectionGetStatistics2("multi")', n1: 'N1.CollectionGetStatistics2("multi")', n2: 'N2.CollectionGetStatistics2("multi")' });
      type Section = Record<string, number>;
      // complete: the lifetime figures (a node whose cycle has ended already has a new, empty current one).
      const part = (k: string, p: 'cur' | 'complete'): Section => ((stats[k] as [number, Record<string, Section>])[1])[p]!;
      for (const attr of ['Downloaded', 'Stored', 'NodeSchedulerFwd', 'ReadNet']) {
        assert.equal(part('s', 'complete')[attr], part('n1', 'complete')[attr]! + part('n2', 'complete')[attr]!, attr);
      }
      // Each node counts its own share, however often sites moved: the sum is nginx's count of page requests.
      const pageRequests = (agent?: string): number => nginx.accessLog().filter((l) => l.path !== '/robots.txt' && (agent === undefined || l.agent === agent)).length;
      assert.equal(part('n1', 'complete').Downloaded, pageRequests('trawl-n1'), 'n1 counts its own fetches');
      assert.equal(part('n2', 'complete').Downloaded, pageRequests('trawl-n2'), 'n2 counts its own fetches');
      assert.equal(part('s', 'complete').Downloaded, pageRequests(), 'the summed Downloaded is nginx\'s count of page requests');
      assert.ok(part('s', 'complete').NodeSchedulerFwd! > 0, 'links were forwarded between the nodes');
      assert.equal(part('s', 'cur').SumActiveSites, part('n1', 'cur').ActiveSites! + part('n2', 'cur').ActiveSites!);
      assert.equal(part('n1', 'cur').SumActiveSites, undefined, 'a node has no Sum* attributes');
      const cur = (k: string): Section => part(k, 'complete');

      // domain_clustering: the hosts of one domain are routed to one node. A second collection, suspended
      // on the whole installation (CollectionSuspend forwarded to the nodes), so that its URIs are routed
      // but never fetched: these names resolve nowhere, and nothing here may ask a DNS server.
      const DOMAINS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
      const named = DOMAINS.flatMap((d) => ['a', 'b', 'c'].map((h) => `http://${h}.${d}.test/`));
      const domains = join(dir, 'domains.xml');
      writeFileSync(domains, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="domains">
        <attrib name="domain_clustering" type="boolean">yes</attrib><attrib name="refresh" type="real">600</attrib>
        <section name="include_domains"><attrib name="suffix" type="list-string">${m(DOMAINS.map((d) => `.${d}.test`))}</attrib></section>
      </DomainSpecification></CrawlerConfig>`);
      assert.deepEqual(rpc({ S }, { add: `S.CollectionAdd(open(${JSON.stringify(domains)}).read(), 0)` }).add, [1, 'collection domains added or updated']);
      await until('the nodes having the collection', () => {
        const l = rpc({ N1, N2 }, { n1: 'N1.CollectionGetList()', n2: 'N2.CollectionGetList()' });
        return (l.n1 as string[]).includes('domains') && (l.n2 as string[]).includes('domains');
      }, 30_000);
      const suspended = rpc({ S, N1, N2 }, { s: 'S.CollectionSuspend("domains")', n1: 'N1.CollectionGetStatus("domains")', n2: 'N2.CollectionGetStatus("domains")' });
      assert.deepEqual(suspended, { s: [1, 'collection domains suspended'], n1: 'suspended', n2: 'suspended' });
      const added = rpc({ S }, { a: `S.AddURIs("domains", 0, ${JSON.stringify(named)})` });
      assert.equal((added.a as [number, string])[0], 1, JSON.stringify(added));
      await until('the named sites routed', async () => (await pgQuery(url, "SELECT 1 FROM trawl_site_routes WHERE collection = 'domains'")).length === named.length, 30_000)
        .catch(async (err: unknown) => {
          throw new Error(`${(err as Error).message}: ${JSON.stringify(added)} ${JSON.stringify(await pgQuery(url, "SELECT url, state, site FROM frontier WHERE collection = 'domains'"))} ${JSON.stringify(await pgQuery(url, "SELECT * FROM trawl_site_routes WHERE collection = 'domains'"))}`);
        });
      const routes = await pgQuery<{ site: string; node: string }>(url, "SELECT site, node FROM trawl_site_routes WHERE collection = 'domains'");
      for (const d of DOMAINS) {
        const nodes = new Set(routes.filter((r) => r.site.endsWith(`.${d}.test:80`) || r.site.endsWith(`.${d}.test`)).map((r) => r.node));
        assert.equal(nodes.size, 1, `${d}.test on ${[...nodes].join(', ')}: ${JSON.stringify(routes)}`);
      }
      assert.equal(new Set(routes.map((r) => r.node)).size, 2, 'the domains are spread over both nodes');
      // CollectionDelete on the scheduler: gone from every node and from the database.
      assert.deepEqual(rpc({ S }, { d: 'S.CollectionDelete("domains", 0)' }).d, [1, 'collection domains is being deleted']);
      await until('the collection gone everywhere', async () => {
        const l = rpc({ S, N1, N2 }, { s: 'S.CollectionGetList()', n1: 'N1.CollectionGetList()', n2: 'N2.CollectionGetList()' });
        const rows = await pgQuery(url, "SELECT 1 FROM frontier WHERE collection = 'domains' UNION ALL SELECT 1 FROM collections WHERE name = 'domains'");
        return rows.length === 0 && [l.s, l.n1, l.n2].every((x) => JSON.stringify(x) === '["multi"]');
      }, 30_000);
      t.diagnostic(`downloaded: n1 ${cur('n1').Downloaded}, n2 ${cur('n2').Downloaded}; forwarded ${cur('s').NodeSchedulerFwd}`);
    } finally {
      for (const d of daemons) {
        d.kill('SIGTERM');
        await once(d, 'exit');
      }
      await nginx.stop();
    }
  });
});

describe('trawl serve --role, --node on a store that cannot be shared', () => {
  it('refuses a multinode role without a PostgreSQL store, and an unknown role, with exit 64', () => {
    const run = (args: string[]): { status: number | null; stderr: string } => {
      const r = spawnSync(process.execPath, [TRAWL_BIN, 'serve', '--data', join(dir, 'refused'), '--port', '0', ...args], { encoding: 'utf8', timeout: 60_000 });
      return { status: r.status, stderr: r.stderr };
    };
    const sqlite = run(['--role', 'scheduler']);
    assert.equal(sqlite.status, 64, sqlite.stderr);
    assert.match(sqlite.stderr, /--node and --role need a PostgreSQL crawl store \(--store postgres:\/\/…\), not .*trawl\.db/);
    const role = run(['--role', 'leader', '--store', 'postgres://u@127.0.0.1:1/x']);
    assert.equal(role.status, 64, role.stderr);
    assert.match(role.stderr, /--role leader: give node \(with --node NAME\) or scheduler/);
  });
});
