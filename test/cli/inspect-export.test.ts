// `trawl export` and `trawl inspect`, the real binary, on what `trawl crawl` stored of a fixture site; then the
// same against a running `trawl serve` (which holds the store: both go through its admin server), with
// `trawl admin inspect`, `trawl admin log`, and the trawl.* methods called from Python's xmlrpc.client.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite, type HostSpec } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe, TRAWL_BIN as BIN } from '../support/daemon.ts';
import { freePort } from '../support/ports.ts';

const dir = tempDir('trawl-inspect-');
after(() => rmSync(dir, { recursive: true, force: true }));

function trawl(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const PAGES: Record<string, string> = {
  '/': '<html><head><title>Home</title></head><body><a href="/a.html">a</a> <a href="/docs/guide.html">guide</a> <a href="/dup.html">dup</a> <a href="/missing.html">gone</a> <a href="/notes.txt">notes</a> <a href="/docs">docs, no slash</a> <a href="http://127.0.9.3/elsewhere.html">off site</a></body></html>',
  '/a.html': '<html><head><title>Café</title></head><body><p>Crème brûlée — ünïcödé</p></body></html>',
  '/docs/guide.html': '<html><head><title>Guide</title></head><body><h1>Guide</h1><a href="/docs/">docs</a></body></html>',
  '/docs/': '<html><body>docs index</body></html>',
  '/docs': '<html><body>docs without the slash</body></html>',
  '/notes.txt': 'plain notes\nline two\n',
};

function siteSpec(ip: string): HostSpec[] {
  return [{
    ip,
    routes: {
      '/': { kind: 'html', body: PAGES['/']! },
      '/a.html': { kind: 'html', body: PAGES['/a.html']! },
      '/docs/guide.html': { kind: 'html', body: PAGES['/docs/guide.html']! },
      '/docs/': { kind: 'html', body: PAGES['/docs/']! },
      '/docs': { kind: 'html', body: PAGES['/docs']! },
      // The same bytes as /a.html: a duplicate (skip code cs).
      '/dup.html': { kind: 'html', body: PAGES['/a.html']! },
      '/notes.txt': { kind: 'text', body: PAGES['/notes.txt']! },
      '/missing.html': { kind: 'status', status: 404, body: 'no' },
    },
  }];
}

interface Item { url: string; status: string; httpStatus?: number; body?: { text?: string; base64?: string; mime: string }; document?: { title?: string }; parent?: string }

function lines(out: string): Item[] {
  return out.trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Item);
}

describe('trawl export and trawl inspect on a crawled data directory', () => {
  let site: FixtureSite;
  let data: string;
  let origin: string;

  before(async () => {
    site = await startFixtureSite(siteSpec('127.0.9.1'));
    origin = site.host('127.0.9.1').origin;
    data = join(dir, 'crawl');
    const r = await trawl(['crawl', '--data', data, '--allow-loopback', '--delay', '0', `${origin}/`]);
    assert.equal(r.code, 0, r.err);
  });
  after(async () => site?.close());

  it('exports every stored document as JSON lines whose bodies are what the site served', async () => {
    const r = await trawl(['export', '--data', data]);
    assert.equal(r.code, 0, r.err);
    const items = lines(r.out);
    const served = new Map(site.host('127.0.9.1').requests.map((q) => [q.path, q.status]));
    assert.equal(served.get('/a.html'), 200);
    // Stored: the pages and the text; not the duplicate, not the 404.
    assert.deepEqual(items.map((i) => i.url.slice(origin.length)).sort(), ['/', '/a.html', '/docs', '/docs/', '/docs/guide.html', '/notes.txt']);
    for (const i of items) {
      assert.equal(i.status, 'stored');
      assert.equal(i.body!.text, PAGES[i.url.slice(origin.length)], i.url);
    }
    assert.equal(items.find((i) => i.url === `${origin}/a.html`)!.parent, `${origin}/`);
  });

  it('--site and --prefix narrow the export; --document adds the search document; --no-body leaves bodies out', async () => {
    const host = new URL(origin).host;
    const r = await trawl(['export', '--data', data, '--site', host, '--prefix', `${origin}/docs/`, '--document', '--no-body']);
    assert.equal(r.code, 0, r.err);
    const items = lines(r.out);
    assert.deepEqual(items.map((i) => i.url).sort(), [`${origin}/docs/`, `${origin}/docs/guide.html`]);
    assert.equal(items.find((i) => i.url.endsWith('guide.html'))!.document!.title, 'Guide');
    assert.ok(items.every((i) => i.body === undefined));
    const other = await trawl(['export', '--data', data, '--site', '127.0.9.99']);
    assert.equal(other.code, 0, other.err);
    assert.equal(other.out, '');
    const all = await trawl(['export', '--data', data, '--all', '--no-body']);
    const byUrl = new Map(lines(all.out).map((i) => [i.url, i]));
    assert.equal(byUrl.get(`${origin}/dup.html`)!.status, 'duplicate');
    assert.equal(byUrl.get(`${origin}/missing.html`)!.httpStatus, 404);
  });

  it('--format files writes each body under host/path, and index.jsonl names them', async () => {
    const out = join(dir, 'files');
    const r = await trawl(['export', '--data', data, '--format', 'files', '--out', out]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /6 documents exported to/);
    const hostDir = new URL(origin).host.replace(':', '_');
    assert.equal(readFileSync(join(out, hostDir, 'a.html'), 'utf8'), PAGES['/a.html']);
    assert.equal(readFileSync(join(out, hostDir, 'index.html'), 'utf8'), PAGES['/']);
    assert.equal(readFileSync(join(out, hostDir, 'notes.txt'), 'utf8'), PAGES['/notes.txt']);
    // /docs is a page, and a folder of /docs/ and /docs/guide.html: whichever needs the name second goes under _/,
    // by the digest of its URL (which depends on the order they were crawled in).
    const index = readFileSync(join(out, 'index.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { url: string; file: string });
    assert.equal(index.length, 6);
    const moved = index.filter((i) => i.file.startsWith(join(hostDir, '_') + '/')).map((i) => i.url.slice(origin.length));
    assert.ok(moved.length >= 1 && moved.every((p) => p.startsWith('/docs')), JSON.stringify(index));
    for (const i of index) assert.equal(readFileSync(join(out, i.file), 'utf8'), PAGES[i.url.slice(origin.length)], i.url);
    const guide = index.find((i) => i.url === `${origin}/docs/guide.html`)!.file;
    if (!moved.includes('/docs/guide.html')) assert.equal(guide, join(hostDir, 'docs', 'guide.html'));
    const jsonl = join(dir, 'export.jsonl');
    const toFile = await trawl(['export', '--data', data, '--out', jsonl]);
    assert.equal(toFile.code, 0, toFile.err);
    assert.equal(toFile.out, '');
    assert.equal(readFileSync(jsonl, 'utf8').trim().split('\n').length, 6);
    const nowhere = await trawl(['export', '--data', data, '--out', join(dir, 'no', 'such', 'x.jsonl')]);
    assert.equal(nowhere.code, 66);
    assert.match(nowhere.err, /TRAWL_ERR_IO: cannot write .*x\.jsonl: ENOENT/);
    const bad = await trawl(['export', '--data', data, '--format', 'files']);
    assert.equal(bad.code, 64);
    assert.match(bad.err, /--format files .*--out DIR/);
  });

  it('inspect shows the record, the parent, the frontier state, the history from the crawl log and the body', async () => {
    const r = await trawl(['inspect', `${origin}/a.html#frag`, '--data', data, '--json', '--body']);
    assert.equal(r.code, 0, r.err);
    const rep = JSON.parse(r.out) as {
      url: string; input: string; known: boolean; parent: string; record: { status: string; httpStatus: number; checksum: string; size: number; mime: string };
      frontier: { state: string; crashSuspect: boolean; depth: number }; history: Array<{ event: string; status?: number; time: string }>; body: { text: string };
    };
    assert.equal(rep.url, `${origin}/a.html`);
    assert.equal(rep.input, `${origin}/a.html#frag`);
    assert.equal(rep.record.status, 'stored');
    assert.equal(rep.record.httpStatus, 200);
    assert.equal(rep.record.size, Buffer.byteLength(PAGES['/a.html']!));
    assert.match(rep.record.checksum, /^[0-9a-f]{16,}$/);
    assert.equal(rep.parent, `${origin}/`);
    assert.deepEqual([rep.frontier.state, rep.frontier.crashSuspect, rep.frontier.depth], ['done', false, 1]);
    assert.deepEqual(rep.history.map((h) => [h.event, h.status]), [['fetch', 200]]);
    assert.equal(rep.body.text, PAGES['/a.html']);

    const dup = await trawl(['inspect', `${origin}/dup.html`, '--data', data]);
    assert.equal(dup.code, 0, dup.err);
    assert.match(dup.out, /record +duplicate, HTTP 200/);
    assert.match(dup.out, /skip code +cs: Duplicate: the same content as another URI/);
    assert.match(dup.out, new RegExp(`duplicate +of ${origin}/a\\.html`));
    assert.match(dup.out, new RegExp(`parent +${origin}/\\n`));
    assert.match(dup.out, /history +2 events[\s\S]*fetch +200[\s\S]*skip +cs/);

    const gone = await trawl(['inspect', `${origin}/missing.html`, '--data', data, '--json']);
    const g = JSON.parse(gone.out) as { record: { httpStatus: number }; history: Array<{ event: string; status?: number }> };
    assert.equal(g.record.httpStatus, 404);
    assert.ok(g.history.some((h) => h.status === 404), JSON.stringify(g.history));
  });

  it('an unknown URL, or one not a URL, is said clearly', async () => {
    const r = await trawl(['inspect', `${origin}/never.html`, '--data', data]);
    assert.equal(r.code, 1);
    assert.match(r.err, new RegExp(`TRAWL_ERR_URL_UNKNOWN: ${origin}/never\\.html is not known to collection`));
    assert.equal(r.out, '');
    const bad = await trawl(['inspect', 'not a url', '--data', data]);
    assert.equal(bad.code, 64);
    assert.match(bad.err, /not an absolute URL: "not a url"/);
    const none = await trawl(['inspect', `${origin}/`, '--data', join(dir, 'nothing-here')]);
    assert.equal(none.code, 66);
    assert.match(none.err, /there is no crawl store/);
  });

  it('decodes a flatfile store of zstd frames as well; a data directory of two collections needs --collection', async () => {
    const config = join(dir, 'flat.xml');
    writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="flat">
      <attrib name="start_uris" type="list-string"><member>${origin}/</member></attrib>
      <attrib name="delay" type="real">0</attrib>
      <section name="include_domains"><attrib name="exact" type="list-string"><member>127.0.9.1</member></attrib></section>
      <section name="storage"><attrib name="datastore" type="string">flatfile</attrib><attrib name="compress" type="boolean">yes</attrib><attrib name="store_http_header" type="boolean">yes</attrib></section>
    </DomainSpecification></CrawlerConfig>`);
    const crawl = await trawl(['crawl', '--data', data, '--allow-loopback', config]);
    assert.equal(crawl.code, 0, crawl.err);
    // The documents really are zstd frames on disk (magic 28 b5 2f fd).
    const bodies = readdirSync(join(data, 'content', 'flat'), { recursive: true, encoding: 'utf8' }).filter((f) => /-\d+$/.test(f));
    assert.equal(bodies.length, 6);
    for (const f of bodies) assert.equal(readFileSync(join(data, 'content', 'flat', f)).subarray(0, 4).toString('hex'), '28b52ffd', f);
    const two = await trawl(['export', '--data', data]);
    assert.equal(two.code, 64);
    assert.match(two.err, /holds 2 collections \(.*flat.*\); choose one with --collection/);
    const r = await trawl(['export', '--data', data, '--collection', 'flat']);
    assert.equal(r.code, 0, r.err);
    const items = lines(r.out);
    assert.equal(items.length, 6);
    for (const i of items) assert.equal(i.body!.text, PAGES[i.url.slice(origin.length)], i.url);
    const ins = await trawl(['inspect', `${origin}/a.html`, '--data', data, '--collection', 'flat', '--body', '--json']);
    const rep = JSON.parse(ins.out) as { body: { text: string; header: string }; history: Array<{ event: string }> };
    assert.equal(rep.body.text, PAGES['/a.html']);
    assert.match(rep.body.header, /^HTTP\/1\.1 200/);
    // Each collection's history is its own, though both runs wrote to logs/crawl.log.
    assert.deepEqual(rep.history.map((h) => h.event), ['fetch']);
    // trawl urltest --data reads the record with the same store access.
    const ut = await trawl(['urltest', config, `${origin}/dup.html`, '--data', data, '--json', '--no-fetch-robots']);
    assert.equal(ut.code, 0, ut.err);
    const rec = (JSON.parse(ut.out) as { record: { status: string; skipCode: string; skipReason: string; httpStatus: number } }).record;
    assert.deepEqual([rec.status, rec.skipCode, rec.httpStatus], ['duplicate', 'cs', 200]);
    assert.match(rec.skipReason, /^Duplicate: the same content as another URI/);
    const missing = await trawl(['export', '--data', data, '--collection', 'nope']);
    assert.equal(missing.code, 65);
    assert.match(missing.err, /has no collection named "nope"/);
  });
});

async function until(check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('trawl inspect, export and admin log while trawl serve holds the data directory', () => {
  let site: FixtureSite;
  let daemon: ChildProcess;
  let data: string;
  let server: string;
  let origin: string;

  before(async () => {
    site = await startFixtureSite(siteSpec('127.0.9.2'));
    origin = site.host('127.0.9.2').origin;
    data = join(dir, 'serve');
    const port = await freePort();
    server = `http://127.0.0.1:${port}`;
    daemon = await spawnServe(['--data', data, '--port', String(port), '--allow-loopback']);
    const config = join(dir, 'web.xml');
    writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="web">
      <attrib name="start_uris" type="list-string"><member>${origin}/</member></attrib>
      <attrib name="delay" type="real">0</attrib><attrib name="refresh" type="real">600</attrib>
      <section name="include_domains"><attrib name="exact" type="list-string"><member>127.0.9.2</member></attrib></section>
      <section name="log"><attrib name="screened" type="string">text</attrib></section>
    </DomainSpecification></CrawlerConfig>`);
    const add = await trawl(['admin', '--server', server, 'add', config]);
    assert.equal(add.code, 0, add.err);
    await until(() => site.fetchedPaths('127.0.9.2').includes('/notes.txt') && site.fetchedPaths('127.0.9.2').includes('/docs/'));
    // Fetched is not yet committed: wait until the daemon's own store has the last record.
    await until(async () => (await trawl(['admin', '--server', server, 'inspect', 'web', `${origin}/docs/`, '--json'])).out.includes('"status": "stored"'));
  });
  after(async () => {
    daemon?.kill('SIGKILL');
    await site?.close();
  });

  it('trawl inspect and trawl export read through the admin server, and say so', async () => {
    const r = await trawl(['inspect', `${origin}/a.html`, '--data', data, '--server', server, '--json', '--body']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, new RegExp(`in use by a running trawl; reading through the admin server ${server}`));
    const rep = JSON.parse(r.out) as { record: { status: string }; parent: string; history: Array<{ event: string; status: number }>; body: { text: string } };
    assert.equal(rep.record.status, 'stored');
    assert.equal(rep.parent, `${origin}/`);
    assert.deepEqual(rep.history.map((h) => [h.event, h.status]), [['fetch', 200]]);
    assert.equal(rep.body.text, PAGES['/a.html']);

    // Pages of two: the cursor is followed to the end.
    const e = await trawl(['export', '--data', data, '--server', server, '--page-size', '2']);
    assert.equal(e.code, 0, e.err);
    const items = lines(e.out);
    assert.deepEqual(items.map((i) => i.url.slice(origin.length)).sort(), ['/', '/a.html', '/docs', '/docs/', '/docs/guide.html', '/notes.txt']);
    for (const i of items) assert.equal(i.body!.text, PAGES[i.url.slice(origin.length)]);

    const unknown = await trawl(['inspect', `${origin}/never.html`, '--data', data, '--server', server]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /TRAWL_ERR_URL_UNKNOWN/);
  });

  it('trawl urltest --data, which cannot read the held store, points to trawl inspect', async () => {
    const r = await trawl(['urltest', join(dir, 'web.xml'), `${origin}/a.html`, '--data', data, '--no-fetch-robots']);
    assert.equal(r.code, 66);
    assert.match(r.err, /is in use by another process .*`trawl inspect URL --data /);
  });

  it('a daemon that serves another data directory is not asked for this one', async () => {
    const other = join(dir, 'other');
    mkdirSync(other, { recursive: true });
    // Another process holds this store (as a trawl crawl would): SQLite's exclusive lock, from Python.
    const holder = spawn('python3', ['-c', `import sqlite3, time
c = sqlite3.connect(${JSON.stringify(join(other, 'trawl.db'))}, isolation_level=None)
c.execute('PRAGMA locking_mode=EXCLUSIVE'); c.execute('CREATE TABLE IF NOT EXISTS t (x)'); c.execute('BEGIN EXCLUSIVE')
print('held', flush=True); time.sleep(60)`], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.once('data', () => resolve());
        holder.once('exit', (code) => reject(new Error(`the lock holder exited ${code}`)));
      });
      const r = await trawl(['inspect', `${origin}/a.html`, '--data', other, '--server', server]);
      assert.equal(r.code, 69, r.err);
      assert.match(r.err, new RegExp(`TRAWL_ERR_DATA_UNAVAILABLE: .*--data ${other} is in use .*${server} serves another data directory \\(${realpathSync(data)}\\)`));
      assert.equal(r.out, '');
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('with the store held and no admin server answering, the error names both', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const r = await trawl(['inspect', `${origin}/a.html`, '--data', data, '--server', nobody]);
    assert.equal(r.code, 69);
    assert.match(r.err, new RegExp(`TRAWL_ERR_DATA_UNAVAILABLE: the crawl store of --data ${data} is in use .* the admin server ${nobody} does not answer`));
  });

  it('serve writes the collection\'s event log; trawl admin log and trawl admin inspect read it', async () => {
    const file = join(data, 'logs', 'collections', 'web.log');
    await until(() => existsSync(file) && readFileSync(file, 'utf8').includes('/notes.txt'), 10_000);
    const log = await trawl(['admin', '--server', server, 'log', 'web', '--url', `${origin}/dup.html`]);
    assert.equal(log.code, 0, log.err);
    assert.match(log.out, new RegExp(`fetch +${origin}/dup\\.html 200`));
    assert.match(log.out, new RegExp(`skip +${origin}/dup\\.html cs`));
    const tail = await trawl(['admin', '--server', server, '--json', 'log', 'web', '--lines', '3']);
    assert.equal(tail.out.trim().split('\n').length, 3);
    // log.screened text: the link the domain rules refused is logged, and its history tells why, though the store never held it.
    const off = await trawl(['admin', '--server', server, '--json', 'inspect', 'web', 'http://127.0.9.3/elsewhere.html']);
    assert.equal(off.code, 0, off.err);
    const o = JSON.parse(off.out) as { known: boolean; history: Array<{ event: string; code: string; meaning: string }> };
    assert.equal(o.known, false);
    assert.deepEqual(o.history.map((h) => [h.event, h.code]), [['skip', 'do']]);
    assert.match(o.history[0]!.meaning, /Hostname exclusion/);
    const ins = await trawl(['admin', '--server', server, 'inspect', 'web', `${origin}/dup.html`]);
    assert.equal(ins.code, 0, ins.err);
    assert.match(ins.out, /skip code +cs: Duplicate/);
    assert.match(ins.out, /frontier +done/);
  });

  it('the trawl.* methods answer Python\'s xmlrpc.client', () => {
    const script = `import json, xmlrpc.client
s = xmlrpc.client.ServerProxy(${JSON.stringify(`${server}/RPC2`)})
page = s.trawl.ExportDocuments('web', {'prefix': ${JSON.stringify(`${origin}/docs/`)}, 'body': True}, '', 10)
ins = s.trawl.InspectURI('web', ${JSON.stringify(`${origin}/notes.txt`)}, 0)
log = s.trawl.GetLog('web', 5, '')
try:
    s.trawl.InspectURI('nope', 'http://x/', 0)
    fault = None
except xmlrpc.client.Fault as f:
    fault = f.faultString
print(json.dumps({'page': page, 'ins': ins, 'log': log, 'fault': fault}))`;
    const r = spawnSync('python3', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    const got = JSON.parse(r.stdout) as { page: { documents: Item[]; cursor: string }; ins: { record: { mime: string }; parent: string }; log: unknown[]; fault: string };
    assert.deepEqual(got.page.documents.map((d) => d.url).sort(), [`${origin}/docs/`, `${origin}/docs/guide.html`]);
    assert.equal(got.page.cursor, '');
    assert.equal(got.page.documents.find((d) => d.url.endsWith('guide.html'))!.body!.text, PAGES['/docs/guide.html']);
    assert.match(got.ins.record.mime, /^text\/plain/);
    assert.equal(got.ins.parent, `${origin}/`);
    assert.equal(got.log.length, 5);
    assert.match(got.fault, /no collection named "nope"/);
  });
});
