// Secrets never leak: one configuration sets every secret-bearing parameter,
// each with a clear text found nowhere else, and every printer is searched
// for them: `trawl config show` and `validate`, the JSON log of a real
// `trawl crawl` against loopback servers (with an Elasticsearch stand-in
// that first answers an error quoting the credentials back), the JSON log
// of `trawl serve`, CollectionGetConfigurationXML through Python's
// xmlrpc.client and through `trawl admin config`, and error messages. Then
// the get-then-add round trip keeps the real secrets in the crawl store, and
// the files that hold them are their owner's only.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { MASK } from '../../src/config/secrets.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { TRAWL_BIN } from '../support/daemon.ts';

/** Clear texts of every secret in the configuration: none may be printed. */
const CLEAR = {
  passwd1: 'PasswdPw1x', passwd2: 'PasswdPw2x', encrypted: 'EncPw3x', loginPw: 'LoginPw4x', loginUser: 'LoginUser4x',
  authorization: 'HdrAuth5x', cookie: 'HdrCookie6x', apiKey: 'HdrKey7x', payload: 'PayloadPw8x', ftp: 'FtpPw9x',
  proxy: 'ProxyPw10x', startUri: 'StartPw11x', esUrl: 'EsPw12x', preload: 'PreloadPw13x',
} as const;
const ALL_CLEAR = Object.values(CLEAR);

function assertNoSecret(where: string, text: string): void {
  for (const s of ALL_CLEAR) assert.ok(!text.includes(s), `${where} contains the clear-text secret ${s}:\n${text.slice(Math.max(0, text.indexOf(s) - 300), text.indexOf(s) + 100)}`);
}

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function trawl(args: readonly string[], input?: string): Run {
  const r = spawnSync(process.execPath, [TRAWL_BIN, ...args], { encoding: 'utf8', timeout: 120_000, ...(input !== undefined ? { input } : {}) });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same without blocking this process, whose loopback servers must answer the child. */
function trawlAsync(args: readonly string[]): Promise<Run> {
  const child = spawn(process.execPath, [TRAWL_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) => child.on('close', (status) => {
    clearTimeout(timer);
    resolve({ status, stdout, stderr });
  }));
}

/** Runs a Python script with `s` = ServerProxy(url); the script prints one JSON document. */
function python(url: string, body: string): unknown {
  const script = `import json, sys, xmlrpc.client\ns = xmlrpc.client.ServerProxy(${JSON.stringify(url)})\n${body}`;
  const r = spawnSync('python3', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

interface Seen {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A loopback HTTP server that records every request and answers with `answer`. */
async function recordingServer(answer: (r: Seen, n: number) => { status: number; type?: string; body: string }): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // The site is also the collection's proxy: what comes through it has an absolute-form target.
      const r: Seen = { method: req.method ?? '', path: (req.url ?? '').replace(/^http:\/\/[^/]*/, ''), headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(r);
      const a = answer(r, seen.length);
      res.writeHead(a.status, { 'content-type': a.type ?? 'text/html' });
      res.end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function configXml(o: { name: string; site: string; es: string; enc: string }): string {
  const host = new URL(o.site).host;
  return `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig>
  <DomainSpecification name="${o.name}">
    <attrib name="start_uris" type="list-string"><member>${o.site.replace('http://', `http://su:${CLEAR.startUri}@`)}/</member></attrib>
    <attrib name="delay" type="real">0</attrib>
    <attrib name="headers" type="list-string">
      <member>User-Agent: trawl-secrets-test</member>
      <member>Authorization: Bearer ${CLEAR.authorization}</member>
      <member>Cookie: session=${CLEAR.cookie}</member>
      <member>X-Api-Key: ${CLEAR.apiKey}</member>
    </attrib>
    <attrib name="proxy" type="list-string"><member>http://pu:${CLEAR.proxy}@${host}</member></attrib>
    <section name="include_domains"><attrib name="exact" type="list-string"><member>127.0.0.1</member></attrib></section>
    <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
    <section name="passwd">
      <attrib name="${o.site}/private/" type="string">bob:${CLEAR.passwd1}:realm1:basic</attrib>
      <attrib name="realm2" type="string">amy:${CLEAR.passwd2}</attrib>
      <attrib name="realm3" type="string">carl:${o.enc}:realm3:digest</attrib>
    </section>
    <section name="ftp_acct"><attrib name="ftp.example.com" type="string">ftpuser:${CLEAR.ftp}</attrib></section>
    <section name="post_payload"><attrib name="prefix:${o.site}/form" type="string">user=x&amp;pass=${CLEAR.payload}</attrib></section>
    <section name="trawl_sinks">
      <section name="es">
        <attrib name="type" type="string">elasticsearch</attrib>
        <attrib name="url" type="string">${o.es.replace('http://', `http://elastic:${CLEAR.esUrl}@`)}</attrib>
      </section>
    </section>
    <attrib name="login_failed_ignore" type="boolean">yes</attrib>
    <Login name="site">
      <attrib name="scheme" type="string">http</attrib>
      <attrib name="site" type="string">${host}</attrib>
      <attrib name="form" type="string">/login</attrib>
      <attrib name="preload" type="string">http://pl:${CLEAR.preload}@${host}/login</attrib>
      <attrib name="sites" type="list-string"><member>${host}</member></attrib>
      <section name="parameters">
        <attrib name="user" type="string">${CLEAR.loginUser}</attrib>
        <attrib name="password" type="string">${CLEAR.loginPw}</attrib>
      </section>
    </Login>
  </DomainSpecification>
</CrawlerConfig>
`;
}

/** The masked forms that must stand where the values are. */
function assertMasked(where: string, text: string, enc: string): void {
  const has = (s: string): void => assert.ok(text.includes(s), `${where} lacks ${s}:\n${text}`);
  has(`su:${MASK}@127.0.0.1`);
  has(`Authorization: ${MASK}`);
  has(`Cookie: ${MASK}`);
  has(`X-Api-Key: ${MASK}`);
  has('User-Agent: trawl-secrets-test');
  has(`http://pu:${MASK}@127.0.0.1:`);
  has(`bob:${MASK}:realm1:basic`);
  has(`amy:${MASK}`);
  has(`carl:${enc}:realm3:digest`); // ciphertext is kept, so the value can be read back
  has(`ftpuser:${MASK}`);
  has(`elastic:${MASK}@127.0.0.1`);
  has(`pl:${MASK}@127.0.0.1`);
}

const mode = (p: string): number => statSync(p).mode & 0o777;

describe('secrets never leak', () => {
  let dir: string;
  let site: Awaited<ReturnType<typeof recordingServer>>;
  let es: Awaited<ReturnType<typeof recordingServer>>;
  let enc: string;
  let configFile: string;

  before(async () => {
    dir = tempDir('trawl-secrets-');
    site = await recordingServer((r) => (r.path === '/robots.txt'
      ? { status: 404, body: '' }
      : { status: 200, body: `<html><head><title>${r.path}</title></head><body><a href="/a">a</a> <a href="http://${String(r.headers.host)}/form">form</a></body></html>` }));
    // The Elasticsearch stand-in refuses the first batch, quoting the credentials back as a careless server might.
    es = await recordingServer((r, n) => (n === 1
      ? { status: 401, type: 'text/plain', body: `missing authentication credentials: authorization: ${String(r.headers.authorization)}` }
      : { status: 200, type: 'application/json', body: JSON.stringify({ errors: false, items: [] }) }));
    const data = join(dir, 'data');
    const keygen = trawl(['config', 'keygen', '--data', data]);
    assert.equal(keygen.status, 0, keygen.stderr);
    const e = trawl(['config', 'encrypt', '--data', data], CLEAR.encrypted);
    assert.equal(e.status, 0, e.stderr);
    enc = e.stdout.trim();
    assert.match(enc, /^!ENC!/);
    configFile = join(dir, 'secrets.xml');
    writeFileSync(configFile, configXml({ name: 'sec', site: site.url, es: es.url, enc }));
  });

  after(async () => {
    await new Promise<void>((resolve) => site.server.close(() => resolve()));
    await new Promise<void>((resolve) => es.server.close(() => resolve()));
  });

  it('trawl config show masks every secret, in XML and JSON', () => {
    for (const args of [[], ['--mode', 'explicit'], ['--format', 'json']]) {
      const r = trawl(['config', 'show', configFile, ...args]);
      assert.equal(r.status, 0, r.stderr);
      assertNoSecret(`config show ${args.join(' ')}`, r.stdout + r.stderr);
      if (args[0] !== '--format') assertMasked(`config show ${args.join(' ')}`, r.stdout, enc);
      else {
        assert.match(r.stdout, /"Authorization: \*{8}"/);
        assert.match(r.stdout, /bob:\*{8}:realm1:basic/);
      }
    }
  });

  it('trawl config validate quotes a wrong value near a secret with the secret masked', () => {
    const bad = join(dir, 'bad.xml');
    writeFileSync(bad, readFileSync(configFile, 'utf8')
      .replace(`Authorization: Bearer ${CLEAR.authorization}`, `Authorization Bearer ${CLEAR.authorization}`)
      .replace(`http://pl:${CLEAR.preload}@`, `gopher://pl:${CLEAR.preload}@`)
      .replace(`bob:${CLEAR.passwd1}:realm1:basic`, `bob:${CLEAR.passwd1}:realm1:kerberos`));
    for (const json of [false, true]) {
      const r = trawl(['config', 'validate', bad, ...(json ? ['--json'] : [])]);
      assert.equal(r.status, 65, r.stderr);
      const text = r.stdout + r.stderr;
      assertNoSecret(`config validate${json ? ' --json' : ''}`, text);
      assert.match(text, /headers/);
      assert.match(text, /passwd/);
      assert.ok(text.includes(`gopher://pl:${MASK}@`), text); // the wrong URL is shown, its password masked
    }
  });

  it('a short trawl crawl logs no secret, while the secrets are used: headers, payload, the sink\'s credentials', async () => {
    const data = join(dir, 'data');
    const r = await trawlAsync(['crawl', configFile, '--data', data, '--allow-loopback', '--max-pages', '5']);
    assert.equal(r.status, 0, r.stderr);
    assertNoSecret('trawl crawl output', r.stdout + r.stderr);
    const log = readFileSync(join(data, 'logs', 'crawl.log'), 'utf8');
    assertNoSecret('crawl.log', log);
    // The crawl happened and its log names the start URI, masked.
    assert.ok(site.seen.some((s) => s.path === '/a'), JSON.stringify(site.seen.map((s) => s.path)));
    assert.ok(log.includes(`"url":"http://su:${MASK}@127.0.0.1`), log);
    // The sink's refusal is in the log, with the credentials it quoted masked.
    assert.match(log, /_bulk answered 401: missing authentication credentials: authorization: \*{8}/);
    // …and the secrets were used for real.
    const page = site.seen.find((s) => s.path === '/')!;
    assert.equal(page.headers.authorization, `Bearer ${CLEAR.authorization}`);
    assert.equal(page.headers.cookie, `session=${CLEAR.cookie}`);
    assert.equal(page.headers['x-api-key'], CLEAR.apiKey);
    // The site is the proxy too: the proxy password went to it, as Basic Proxy-Authorization.
    assert.equal(page.headers['proxy-authorization'], `Basic ${Buffer.from(`pu:${CLEAR.proxy}`).toString('base64')}`);
    const form = site.seen.find((s) => s.path === '/form');
    assert.equal(form?.method, 'POST');
    assert.equal(form?.body, `user=x&pass=${CLEAR.payload}`);
    assert.ok(es.seen.length >= 2);
    assert.equal(es.seen[0]!.headers.authorization, `Basic ${Buffer.from(`elastic:${CLEAR.esUrl}`).toString('base64')}`);

    // The files that hold the secrets are their owner's only.
    assert.equal(mode(data), 0o700);
    assert.equal(mode(join(data, 'trawl.db')), 0o600);
    for (const f of ['trawl.db-wal', 'trawl.db-journal']) if (existsSync(join(data, f))) assert.equal(mode(join(data, f)), 0o600, f);
    assert.equal(mode(join(data, 'CrawlerEncryptionKey.dat')), 0o600);
    assert.equal(mode(join(data, 'logs')), 0o700);
    assert.equal(mode(join(data, 'logs', 'crawl.log')), 0o600);
    const content = join(data, 'content');
    assert.equal(mode(content), 0o700);
    const walk = (p: string, depth: number): number => {
      let files = 0;
      for (const e of readdirSync(p, { withFileTypes: true })) {
        const q = join(p, e.name);
        if (e.isDirectory()) {
          assert.equal(mode(q), 0o700, q);
          if (depth < 6) files += walk(q, depth + 1);
        } else {
          assert.equal(mode(q), 0o600, q);
          files++;
        }
      }
      return files;
    };
    assert.ok(walk(content, 0) > 0, 'the content store holds files');
  });

  it('an error message quoting a URL masks its password', () => {
    const r = trawl(['admin', '--server', `http://admin:${CLEAR.passwd1}@127.0.0.1:1`, 'list']);
    assert.notEqual(r.status, 0);
    assertNoSecret('admin error', r.stdout + r.stderr);
    assert.ok(r.stderr.includes(`admin:${MASK}@127.0.0.1:1`), r.stderr);
  });

  describe('through the admin server', () => {
    let daemon: ChildProcess;
    let daemonOut = '';
    let url: string;
    let port: number;
    let data: string;

    before(async () => {
      data = join(dir, 'serve-data');
      port = await freePort();
      daemon = spawn(process.execPath, [TRAWL_BIN, 'serve', '--data', data, '--port', String(port), '--allow-loopback'], { stdio: ['ignore', 'pipe', 'pipe'] });
      daemon.stdout!.on('data', (d: Buffer) => {
        daemonOut += d.toString();
      });
      await new Promise<void>((resolve, reject) => {
        let err = '';
        const t = setTimeout(() => reject(new Error(`trawl serve did not start: ${err}`)), 30_000);
        daemon.stderr!.on('data', (d: Buffer) => {
          err += d.toString();
          if (err.includes('serving MS-FSCADM')) {
            clearTimeout(t);
            resolve();
          }
        });
        daemon.on('exit', (code) => reject(new Error(`trawl serve exited ${code}: ${err}`)));
      });
      url = `http://127.0.0.1:${port}/RPC2`;
    });

    after(async () => {
      if (daemon.exitCode === null) {
        daemon.kill('SIGTERM');
        await new Promise((r) => daemon.once('exit', r));
      }
    });

    it('CollectionGetConfigurationXML and trawl admin config mask every secret; adding the reply back keeps the stored secrets', async () => {
      const xml = readFileSync(configFile, 'utf8');
      const got = python(url, `print(json.dumps([s.CollectionAdd(${JSON.stringify(xml)}, 0), s.CollectionGetConfigurationXML('sec')]))`) as [unknown, string];
      assert.equal((got[0] as unknown[])[0], 1, JSON.stringify(got[0]));
      assertNoSecret('CollectionGetConfigurationXML', got[1]);
      assertMasked('CollectionGetConfigurationXML', got[1], enc);
      assert.match(got[1], new RegExp(`<attrib name="user" type="string"> \\*{8} </attrib>`));
      assert.match(got[1], new RegExp(`<attrib name="prefix:${site.url.replace(/[.:/]/g, '\\$&')}/form" type="string"> \\*{8} </attrib>`));

      const cli = trawl(['admin', '--server', `http://127.0.0.1:${port}`, 'config', 'sec']);
      assert.equal(cli.status, 0, cli.stderr);
      assertNoSecret('trawl admin config', cli.stdout + cli.stderr);
      assertMasked('trawl admin config', cli.stdout, enc);

      // The round trip: the masked reply goes back, once through Python and once through trawl admin add.
      const back = python(url, `print(json.dumps(s.CollectionAdd(${JSON.stringify(got[1])}, 0)))`) as unknown[];
      assert.equal(back[0], 1, JSON.stringify(back));
      const file = join(dir, 'got.xml');
      writeFileSync(file, cli.stdout);
      const add = trawl(['admin', '--server', `http://127.0.0.1:${port}`, 'add', file]);
      assert.equal(add.status, 0, add.stderr);
      // The reply after the round trip is still the same masked text.
      const again = python(url, `print(json.dumps(s.CollectionGetConfigurationXML('sec')))`) as string;
      assert.equal(again, got[1]);

      // A mask where nothing is stored is refused, naming the parameter.
      const fresh = got[1].replace('name="sec"', 'name="fresh"');
      const fault = python(url, `try:\n    s.CollectionAdd(${JSON.stringify(fresh)}, 0)\n    print(json.dumps(None))\nexcept xmlrpc.client.Fault as e:\n    print(json.dumps(e.faultString))`) as string | null;
      assert.ok(fault !== null, 'CollectionAdd of a masked configuration for a new collection must fail');
      assert.match(fault, /TRAWL_ERR_CONFIG_MASKED|holds the mask/);
      assert.match(fault, /passwd|headers|start_uris|proxy|post_payload|logins|ftp_acct|trawl_sinks/);
      assertNoSecret('CollectionAdd fault', fault);

      // Stopped, the daemon lets go of its store: the stored configuration still holds the real secrets.
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.once('exit', r));
      assertNoSecret('trawl serve JSON log', daemonOut);
      assert.equal(mode(data), 0o700);
      assert.equal(mode(join(data, 'trawl.db')), 0o600);
      const db = new DatabaseSync(join(data, 'trawl.db'), { readOnly: true });
      try {
        const row = db.prepare('SELECT config_xml FROM collections WHERE name = ?').get('sec') as { config_xml: string } | undefined;
        assert.ok(row, 'the collection is stored');
        for (const s of ALL_CLEAR.filter((x) => x !== CLEAR.encrypted)) assert.ok(row.config_xml.includes(s), `the stored configuration lost ${s}`);
        assert.ok(row.config_xml.includes(enc), 'the stored !ENC! value is unchanged');
        assert.ok(!row.config_xml.includes(MASK), 'no mask was stored');
        assert.equal(db.prepare('SELECT count(*) AS n FROM collections WHERE name = ?').get('fresh')!.n, 0);
      } finally {
        db.close();
      }
    });
  });
});
