// A multinode installation as separate processes: three `trawl serve --node NAME --store postgres://…`
// on their own loopback addresses crawl 20 sites nginx serves; one node is killed with kill -9 in the
// middle. Asserted on nginx's access log (each node sends its own User-Agent, a <Node> override) and on
// the rows PostgreSQL holds: every page fetched, no site crawled by two nodes at once, refetches only
// of what the dead node had in flight, and the dead node's sites routed to the others.
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe } from '../support/daemon.ts';
import { startNginxHosts, type AccessLine } from '../support/nginx-hosts.ts';
import { freePort, until } from '../support/ports.ts';
import { pgQuery, startPostgres, type PostgresServer } from '../support/postgres.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';

const dir = tempDir('trawl-multinode-');
const skip = skipUnless(TOOLS.postgres) ?? skipUnless(TOOLS.nginx);
const server: PostgresServer | undefined = skip ? undefined : await startPostgres();
after(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const HOSTS = Array.from({ length: 20 }, (_, i) => `127.0.32.${i + 1}`);
const PAGES = 10;
const DELAY_S = 0.4;
const NODE_TIMEOUT_S = 4;
const NODES = ['n1', 'n2', 'n3'];

/** Page i of host k links to page i+1, and page 5 to page 7 of another host (a link routed to another node, most often). */
function sites(port: number): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  HOSTS.forEach((h, k) => {
    const pages: Record<string, string> = {};
    for (let i = 0; i < PAGES; i++) {
      const links = i + 1 < PAGES ? [`/p${i + 1}.html`] : [];
      if (i === 5) links.push(`http://${HOSTS[(k + 7) % HOSTS.length]}:${port}/p7.html`);
      pages[i === 0 ? '/' : `/p${i}.html`] = `<html><head><title>${h} ${i}</title></head><body>${links.map((l) => `<a href="${l}">next</a>`).join(' ')}</body></html>`;
    }
    out[h] = pages;
  });
  return out;
}

function py(rpc: string, body: string): unknown {
  const r = spawnSync('python3', ['-c', `import json, xmlrpc.client\ns = xmlrpc.client.ServerProxy(${JSON.stringify(rpc)})\n${body}`], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const pagesOf = (log: readonly AccessLine[]): AccessLine[] => log.filter((l) => l.path !== '/robots.txt');

describe('a multinode installation on PostgreSQL', { skip }, () => {
  it('three nodes crawl 20 sites; one killed with kill -9: its sites move, every page is fetched, no site by two nodes at once', async (t) => {
    // nginx first: the pages link to each other with its port in their URLs.
    const nginx = await startNginxHosts(join(dir, 'nginx'), HOSTS, (port) => sites(port));
    const url = await server!.createDatabase();
    const daemons = new Map<string, ChildProcess>();
    try {
      const m = (xs: string[]): string => xs.map((x) => `<member>${x}</member>`).join('');
      const config = join(dir, 'multi.xml');
      writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="multi">
        <attrib name="start_uris" type="list-string">${m(HOSTS.map((h) => `${nginx.origin(h)}/`))}</attrib>
        <attrib name="delay" type="real">${DELAY_S}</attrib><attrib name="max_pending" type="integer">1</attrib>
        <attrib name="refresh" type="real">600</attrib>
        <section name="include_domains"><attrib name="exact" type="list-string">${m(HOSTS)}</attrib></section>
        ${NODES.map((n) => `<Node name="${n}"><attrib name="headers" type="list-string"><member>User-Agent: trawl-${n}</member></attrib></Node>`).join('')}
      </DomainSpecification></CrawlerConfig>`);
      const admin = new Map<string, string>();
      for (const [i, n] of NODES.entries()) {
        const host = `127.0.33.${i + 1}`;
        const port = await freePort(host);
        admin.set(n, `http://${host}:${port}/RPC2`);
        daemons.set(n, await spawnServe(['--node', n, '--store', url, '--data', join(dir, n), '--host', host, '--port', String(port), '--allow-loopback', '--node-timeout', String(NODE_TIMEOUT_S)]));
      }
      const live = async (): Promise<string[]> => (await pgQuery<{ name: string }>(url, "SELECT name FROM trawl_nodes WHERE role = 'node' AND heartbeat > now() - interval '4 seconds' ORDER BY name")).map((r) => r.name);
      await until('three live nodes', async () => (await live()).length === 3, 30_000);
      // A node refuses CollectionAdd without Force (MS-FSCADM 2.2.9.3); with Force 1 the installation has the collection.
      const refused = spawnSync('python3', ['-c', `import xmlrpc.client\ns = xmlrpc.client.ServerProxy(${JSON.stringify(admin.get('n1'))})\ntry:\n  s.CollectionAdd(open(${JSON.stringify(config)}).read(), 0)\n  print('accepted')\nexcept xmlrpc.client.Fault as f:\n  print('fault', f.faultCode, f.faultString)`], { encoding: 'utf8' });
      assert.match(refused.stdout, /^fault 1 .*node scheduler of a multinode installation.*Force 1/);
      assert.deepEqual(py(admin.get('n1')!, `print(json.dumps(s.CollectionAdd(open(${JSON.stringify(config)}).read(), 1)))`), [1, 'collection multi added or updated']);

      // kill -9 the third node once it has fetched a share, well before the crawl ends.
      const byAgent = (agent: string): number => pagesOf(nginx.accessLog()).filter((l) => l.agent === agent).length;
      await until('n3 fetching', () => byAgent('trawl-n3') >= 12, 60_000);
      const victim = daemons.get('n3')!;
      victim.kill('SIGKILL');
      await once(victim, 'exit');
      daemons.delete('n3');
      const killedAt = Date.now();
      // What the dead node had in flight: leased by it, never completed. Nothing else may be fetched twice.
      const inFlight = (await pgQuery<{ url: string }>(url, "SELECT url FROM frontier WHERE state = 1 AND lease_owner = 'n3'")).map((r) => new URL(r.url).pathname);
      const total = HOSTS.length * PAGES;
      assert.ok(pagesOf(nginx.accessLog()).length < total, 'the crawl was not over at the kill');

      await until('the whole crawl', async () => {
        const n = await pgQuery<{ open: string; records: string }>(url, "SELECT (SELECT count(*) FROM frontier WHERE state IN (0, 1)) AS open, (SELECT count(*) FROM records WHERE status = 'stored') AS records");
        return Number(n[0]!.open) === 0 && Number(n[0]!.records) === total;
      }, 90_000);
      const log = pagesOf(nginx.accessLog());

      // Every page of every site, by the three nodes' User-Agents only.
      for (const h of HOSTS) {
        const paths = new Set(log.filter((l) => l.host === h).map((l) => l.path));
        assert.deepEqual([...paths].sort(), ['/', ...Array.from({ length: PAGES - 1 }, (_, i) => `/p${i + 1}.html`)].sort(), h);
      }
      assert.deepEqual([...new Set(log.map((l) => l.agent))].sort(), ['trawl-n1', 'trawl-n2', 'trawl-n3']);

      // Refetches: only URIs the dead node held, at most as many as it held.
      const seen = new Map<string, number>();
      for (const l of log) seen.set(`${l.host}${l.path}`, (seen.get(`${l.host}${l.path}`) ?? 0) + 1);
      const twice = [...seen].filter(([, n]) => n > 1).map(([k]) => k);
      assert.ok(twice.length <= inFlight.length, `refetched ${twice.join(', ')}; in flight on n3 at the kill: ${inFlight.join(', ')}`);

      // Politeness across nodes: per site, the nodes take turns at most twice (the kill, a rebalancing),
      // and never without the delay between them; the dead node's sites went to the others after the timeout.
      let moved = 0;
      for (const h of HOSTS) {
        const lines = log.filter((l) => l.host === h).sort((a, b) => a.ms - b.ms);
        let switches = 0;
        for (let i = 1; i < lines.length; i++) {
          if (lines[i]!.agent === lines[i - 1]!.agent) continue;
          switches++;
          const gap = lines[i]!.ms - lines[i - 1]!.ms;
          assert.ok(gap >= (DELAY_S * 1000) / 2, `${h}: ${lines[i - 1]!.agent} then ${lines[i]!.agent} ${gap} ms apart`);
          if (lines[i - 1]!.agent === 'trawl-n3') {
            moved++;
            assert.ok(lines[i]!.ms >= killedAt - 1000, `${h} moved from n3 before it died`);
          }
        }
        assert.ok(switches <= 2, `${h} went from node to node ${switches} times: ${lines.map((l) => l.agent).join(' ')}`);
      }
      assert.ok(moved >= 1, 'some site of the dead node was finished by another node');
      assert.deepEqual(await pgQuery(url, "SELECT site FROM trawl_site_routes WHERE node = 'n3'"), [], 'no site stays routed to the dead node');
      const routed = await pgQuery<{ node: string; n: string }>(url, 'SELECT node, count(*) AS n FROM trawl_site_routes GROUP BY node ORDER BY node');
      t.diagnostic(`routes at the end: ${routed.map((r) => `${r.node} ${r.n}`).join(', ')}; ${inFlight.length} in flight on n3 at the kill, ${twice.length} refetched`);
    } finally {
      for (const d of daemons.values()) {
        d.kill('SIGTERM');
        await once(d, 'exit');
      }
      await nginx.stop();
    }
  });
});
