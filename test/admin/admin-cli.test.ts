// `trawl admin` against the real daemon, as an operator reads it: status says
// idle (with the next refresh) between cycles while CollectionGetStatus keeps
// its MS-FSCADM value; stats shows the current and the last finished cycle
// side by side; add-uris says why each URI was not added; add takes an
// Elastic Open Crawler YAML file, converted as `trawl config convert` does.
import assert from 'node:assert/strict';
import { type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe } from '../support/daemon.ts';
import { runTrawl } from '../support/trawl-cli.ts';
import { freePort } from '../support/ports.ts';

const IP = '127.0.8.11';

interface Run { code: number | null; out: string; err: string }

/** Asynchronous: the fixture site in this process must keep answering while the command runs. */
function trawl(args: string[]): Promise<Run> {
  return runTrawl(args, { timeoutMs: 30_000 });
}

async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('trawl admin, as an operator reads it', () => {
  let site: FixtureSite;
  let daemon: ChildProcess;
  let data: string;
  let port: number;
  const admin = (...args: string[]): Promise<Run> => trawl(['admin', '--server', `http://127.0.0.1:${port}`, ...args]);
  const statsOf = async (): Promise<{ cur: Record<string, unknown>; prev?: Record<string, unknown> }> => {
    const r = await admin('--json', 'stats', 'web');
    assert.equal(r.code, 0, r.err);
    return (JSON.parse(r.out) as [number, { cur: Record<string, unknown>; prev?: Record<string, unknown> }])[1];
  };

  before(async () => {
    site = await startFixtureSite([{
      ip: IP,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
        '/': { kind: 'html', body: '<a href="/a.html">a</a>' },
        '/a.html': { kind: 'html', body: '<p>a</p>' },
        '/new.html': { kind: 'html', body: '<p>new</p>' },
      },
    }]);
    data = tempDir('trawl-admin-cli-');
    port = await freePort();
    daemon = await spawnServe(['--data', data, '--port', String(port), '--allow-loopback']);
  });
  after(async () => {
    daemon?.kill('SIGKILL');
    await site?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('status: idle with the next refresh between cycles; CollectionGetStatus still answers crawling', async () => {
    const xml = join(data, 'web.xml');
    writeFileSync(xml, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="web">
      <attrib name="start_uris" type="list-string"><member>${site.host(IP).url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib><attrib name="refresh" type="real">600</attrib>
      <section name="include_domains"><attrib name="exact" type="list-string"><member>${IP}</member></attrib></section>
    </DomainSpecification></CrawlerConfig>`);
    const add = await admin('add', xml);
    assert.equal(add.code, 0, add.err);
    assert.equal(add.out.trim(), 'ok: collection web added or updated');
    const addedAt = Date.now();
    // The cycle crawls / and /a.html, then the runner waits 600 minutes from the cycle's start.
    await until(async () => (JSON.parse((await admin('--json', 'status', 'web')).out) as { activity: string }).activity === 'idle');
    assert.deepEqual(site.fetchedPaths(IP).sort(), ['/', '/a.html', '/robots.txt']);
    const json = JSON.parse((await admin('--json', 'status', 'web')).out) as Record<string, string>;
    assert.deepEqual([json.status, json.activity, json.waitingFor], ['crawling', 'idle', 'refresh']);
    const next = Date.parse(json.nextCycle!);
    assert.ok(Math.abs(next - (addedAt + 600 * 60_000)) < 60_000, `next refresh ${json.nextCycle}`);

    const human = await admin('status', 'web');
    assert.equal(human.code, 0, human.err);
    const [activity, cycle] = human.out.trim().split('\n');
    assert.match(activity!, /^idle, next refresh at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in (9 h 59|10 h 0) min\)$/);
    // The cycle's ID and Elastic status (trawl.CollectionGetStatus: cycleId, cycleStatus).
    assert.equal(cycle, `cycle 1 ${json.cycleId}: success (done)`);
    assert.match(json.cycleId!, /^[0-9a-f]{24}$/);
    assert.equal(json.cycleStatus, 'success');
    assert.ok(human.out.includes(new Date(next).toISOString().slice(0, 16)), human.out);
    // The MS-FSCADM method itself keeps a 2.2.3.4 value.
    const std = await admin('--json', 'call', 'CollectionGetStatus', '"web"');
    assert.equal(JSON.parse(std.out), 'crawling');

    const suspended = await admin('suspend', 'web');
    assert.equal(suspended.code, 0, suspended.err);
    assert.match((await admin('status', 'web')).out, /^suspended: nothing is crawled until `trawl admin resume`/);
    assert.equal((await admin('resume', 'web')).code, 0);
    await until(async () => (await admin('status', 'web')).out.startsWith('idle, next refresh at'));
  });

  it('stats: the current and the last finished cycle in two columns', async () => {
    // The finished cycle is "prev" once its statistics are merged.
    await until(async () => (await statsOf()).prev?.Stored === 2);
    const r = await admin('stats', 'web');
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trimEnd().split('\n');
    assert.match(lines[0]!, /^\s+current cycle\s+last finished cycle$/);
    const row = (k: string): string[] => lines.find((l) => l.startsWith(`${k} `))!.trim().split(/\s{2,}/);
    // Between cycles the current one has counted nothing yet.
    assert.deepEqual(row('Stored'), ['Stored', '0', '2']);
    assert.deepEqual(row('Downloaded'), ['Downloaded', '0', '2']);
    assert.deepEqual(row('HTTPResponse'), ['HTTPResponse', '-', '200 2']);
    assert.deepEqual(row('Status'), ['Status', 'Crawling', 'Crawling']);
    assert.match(row('Progress')[1]!, /^0%, 9h 5\dm \d+s until scratch refresh$/);
  });

  it('add-uris: one line per URI not added, with why and what to do', async () => {
    const h = site.host(IP);
    const r = await admin('add-uris', 'web', h.url('/new.html'), h.url('/a.html'), 'http://elsewhere.test/x', 'not a url', h.url('/new.html'));
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trimEnd().split('\n');
    assert.equal(lines[0], 'ok: 1 URIs added; 2 refused (http://elsewhere.test/x: do: elsewhere.test matches no include rule; not a url: not a valid absolute URL); 2 already in this cycle');
    assert.equal(lines[1], 'not added:');
    assert.deepEqual(lines.slice(2).sort(), [
      `  ${h.url('/a.html')}: already crawled in this cycle, at ${lines.find((l) => l.includes('/a.html'))!.match(/at (\S+);/)![1]}; to fetch it again now: trawl admin refetch-uri --now web ${h.url('/a.html')}`,
      `  ${h.url('/new.html')}: given more than once in this call; added once`,
      '  http://elsewhere.test/x: out of scope: rule include_domains/exclude_domains refuses it (do: elsewhere.test matches no include rule); `trawl admin config web` shows the rules, `trawl urltest FILE URL --explain` each one consulted',
      '  not a url: malformed: not a valid absolute URL; give an absolute http(s) URL',
    ].sort());
    await until(() => site.fetchedPaths(IP).includes('/new.html'));
    // The finished cycle was reopened for it: its statistics count it; the next cycle's stay empty.
    await until(async () => (await statsOf()).prev?.Stored === 3);
    assert.deepEqual((await admin('stats', 'web')).out.split('\n').find((l) => l.startsWith('Stored '))!.trim().split(/\s{2,}/), ['Stored', '0', '3']);
    // The refetch the line names does fetch it again.
    const before = site.fetchedPaths(IP).filter((p) => p === '/a.html').length;
    const again = await admin('refetch-uri', '--now', 'web', h.url('/a.html'));
    assert.equal(again.code, 0, again.err);
    await until(() => site.fetchedPaths(IP).filter((p) => p === '/a.html').length > before);

    // Only refused URIs: the cresult fails, and so does the command.
    const none = await admin('add-uris', 'web', 'http://elsewhere.test/y');
    assert.equal(none.code, 1);
    assert.match(none.out, /^failed: 0 URIs added; 1 refused/);
    // Scripts get the extension's structure.
    const json = JSON.parse((await admin('--json', 'add-uris', 'web', 'not a url')).out) as { result: unknown[]; added: number; notAdded: Array<Record<string, string>> };
    assert.deepEqual(json, { result: [0, '0 URIs added; 1 refused (not a url: not a valid absolute URL)'], added: 0, notAdded: [{ uri: 'not a url', kind: 'malformed', reason: 'not a valid absolute URL' }] });
  });

  it('add FILE.yml: converts the Elastic YAML, says what it set and warned, and adds it; a file that does not convert says how to fix it', async () => {
    const h = site.host(IP);
    const yml = join(data, 'elastic.yml');
    // A seed that takes its time to answer keeps the first cycle running while the checks below look at it.
    site.setRoute(IP, '/slow-seed', { kind: 'html', body: '<p>slow</p>', delayMs: 20_000 });
    writeFileSync(yml, `crawl_id: from-elastic\ndomains:\n  - url: http://${IP}:${h.port}\n    seed_urls:\n      - ${h.url('/slow-seed')}\nmax_crawl_depth: 3\nhead_requests_enabled: true\n`);
    const r = await admin('add', yml);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.trim(), 'ok: collection from-elastic added or updated');
    assert.match(r.err, /elastic\.yml:7:1: warning TRAWL_ERR_CONFIG_UNSUPPORTED: .*head_requests_enabled/);
    assert.match(r.err, /trawl: .*elastic\.yml: Elastic Open Crawler YAML converted to MS-FSCCFG collection "from-elastic", setting [^;]*start_uris[^;]*crawlmode[^;]* \(1 warning above\); `trawl config convert .*elastic\.yml --to xml` prints the XML/);
    const list = await admin('--json', 'list');
    assert.deepEqual((JSON.parse(list.out) as string[]).sort(), ['from-elastic', 'web']);
    // Its first cycle runs (the seed answers in 20 s): no cycle has finished yet.
    const st = await admin('stats', 'from-elastic');
    assert.equal(st.code, 0, st.err);
    assert.match(st.out.split('\n')[0]!, /^\s+current cycle\s+last finished cycle \(none yet\)$/);
    const [activity, cycle] = (await admin('status', 'from-elastic')).out.trim().split('\n');
    assert.equal(activity, 'crawling: a refresh cycle runs');
    assert.match(cycle!, /^cycle 1 [0-9a-f]{24}: (pending|starting|running)$/);
    const cfg = await admin('config', 'from-elastic');
    assert.match(cfg.out, /<attrib name="mode" type="string"> DEPTH:2 <\/attrib>/);
    assert.match(cfg.out, new RegExp(`<member> http://${IP.replace(/\./g, '\\.')}:${h.port}/ </member>`));

    const bad = join(data, 'bad.yml');
    writeFileSync(bad, `crawl_id: broken\ndomains:\n  - url: http://${IP}:${h.port}\nmax_crawl_dept: 3\n`);
    const b = await admin('add', bad);
    assert.equal(b.code, 65, b.err);
    assert.match(b.err, /bad\.yml:4:1: error TRAWL_ERR_CONFIG_YAML: .*max_crawl_dept.*did you mean "max_crawl_depth"/);
    assert.match(b.err, /bad\.yml does not convert to MS-FSCCFG \(1 error above\); nothing was added\. Fix each line named above \(`trawl config validate .*bad\.yml` checks the file again\), or convert it with `trawl config convert .*bad\.yml --to xml -o .*bad\.xml`/);
    assert.deepEqual((JSON.parse((await admin('--json', 'list')).out) as string[]).sort(), ['from-elastic', 'web']);
  });
});
