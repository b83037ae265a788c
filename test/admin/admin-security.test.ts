// The admin server under attack, on loopback: the real `trawl serve` child
// process, raw HTTP requests and Python's xmlrpc.client. Each block is one
// attack that once worked: reading server files through AddURIFile,
// cross-site and DNS-rebinding requests, slow clients, huge bodies, method
// names from Object.prototype, and guessing the bearer token.
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe } from '../support/daemon.ts';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { freePort } from '../support/ports.ts';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request on a fresh connection, with exactly the headers given (Host included). */
function raw(port: number, o: { method?: string; headers?: Record<string, string>; body?: string | Buffer; localAddress?: string }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/RPC2', method: o.method ?? 'POST', headers: { host: `127.0.0.1:${port}`, 'content-type': 'text/xml', ...o.headers }, agent: false, ...(o.localAddress ? { localAddress: o.localAddress } : {}) }, (res) => {
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

const call = (method: string, params = ''): string => `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params>${params}</params></methodCall>`;
const str = (s: string): string => `<param><value><string>${s}</string></value></param>`;

/** Runs a Python script with `s` = ServerProxy(url); the script prints one JSON document. */
function python(url: string, body: string): unknown {
  const script = `import json, sys, xmlrpc.client\ns = xmlrpc.client.ServerProxy(${JSON.stringify(url)})\ndef fault(f, *a):\n    try:\n        f(*a)\n        return None\n    except xmlrpc.client.Fault as e:\n        return [e.faultCode, e.faultString]\n${body}`;
  const r = spawnSync('python3', ['-c', script], { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A socket that opened, and when the server closed it (if it did). */
interface Watched {
  sock: Socket;
  closedAt?: number;
  got: string;
}

function watch(port: number, first: string): Promise<Watched> {
  return new Promise((resolve, reject) => {
    const w: Watched = { sock: connect(port, '127.0.0.1'), got: '' };
    w.sock.on('connect', () => {
      w.sock.write(first);
      resolve(w);
    });
    w.sock.on('data', (d: Buffer) => {
      w.got += d.toString();
    });
    w.sock.on('error', () => undefined); // a reset counts as a close
    w.sock.on('close', () => {
      w.closedAt ??= Date.now();
    });
    w.sock.on('error', (err) => {
      if (w.closedAt === undefined && !w.sock.remoteAddress) reject(err);
    });
  });
}

describe('the admin server refuses what it must, and keeps answering', () => {
  let site: FixtureSite;
  let daemon: ChildProcess;
  let data: string;
  let port: number;
  let url: string;
  let log = '';
  const MAX_CONNECTIONS = 20;

  before(async () => {
    site = await startFixtureSite([{ ip: '127.0.4.2', routes: { '/': { kind: 'html', body: '<p>home</p>' }, '/one.html': { kind: 'html', body: '<p>1</p>' }, '/two.html': { kind: 'html', body: '<p>2</p>' } } }]);
    data = tempDir('trawl-admin-sec-');
    port = await freePort();
    url = `http://127.0.0.1:${port}/RPC2`;
    daemon = await spawnServe(['--data', data, '--port', String(port), '--allow-loopback', '--max-connections', String(MAX_CONNECTIONS),
      '--headers-timeout-ms', '500', '--request-timeout-ms', '1000', '--keep-alive-timeout-ms', '500', '--max-request-bytes', String(10 * 1024 * 1024)]);
    daemon.stdout!.on('data', (d: Buffer) => {
      log += d.toString();
    });
    const xml = `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="web">
      <attrib name="start_uris" type="list-string"><member>${site.host('127.0.4.2').url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib><attrib name="refresh" type="real">600</attrib></DomainSpecification></CrawlerConfig>`;
    assert.deepEqual(python(url, `print(json.dumps(s.CollectionAdd(${JSON.stringify(xml)}, 0)))`), [1, 'collection web added or updated']);
  });
  after(async () => {
    daemon?.kill('SIGKILL');
    await site?.close();
  });

  it('AddURIFile reads only regular files inside the URI file folder and never echoes their content', () => {
    const folder = join(data, 'uri-files');
    assert.equal(statSync(folder).mode & 0o777, 0o700, 'the default folder is owner-only');
    const h = site.host('127.0.4.2');
    writeFileSync(join(folder, 'good.txt'), `# queued by the test\n${h.url('/one.html')}\n\n${h.url('/two.html')}\n`);
    const secret = join(data, 'secret.txt');
    writeFileSync(secret, 'root:SECRET-HASH:19000:0:99999:7:::\nhttp://127.0.4.2/\n');
    symlinkSync(secret, join(folder, 'link.txt'));
    writeFileSync(join(folder, 'notes.txt'), `${h.url('/one.html')}\nroot:SECRET-HASH:19000\nnot a uri either\n`);
    mkdirSync(join(folder, 'sub'));
    writeFileSync(join(folder, 'latin1.txt'), Buffer.from([0x68, 0x74, 0x74, 0x70, 0x0a, 0xe9, 0x0a]));
    const r = python(url, `
print(json.dumps({
  'good': s.AddURIFile('web', 0, ${JSON.stringify(join(folder, 'good.txt'))}),
  'shadow': fault(s.AddURIFile, 'web', 0, '/etc/shadow'),
  'dotdot': fault(s.AddURIFile, 'web', 0, ${JSON.stringify(`${folder}/../secret.txt`)}),
  'link': fault(s.AddURIFile, 'web', 0, ${JSON.stringify(join(folder, 'link.txt'))}),
  'relative': fault(s.AddURIFile, 'web', 0, 'good.txt'),
  'notes': fault(s.AddURIFile, 'web', 0, ${JSON.stringify(join(folder, 'notes.txt'))}),
  'dir': fault(s.AddURIFile, 'web', 0, ${JSON.stringify(join(folder, 'sub'))}),
  'latin1': fault(s.AddURIFile, 'web', 0, ${JSON.stringify(join(folder, 'latin1.txt'))}),
  'missing': fault(s.AddURIFile, 'web', 0, ${JSON.stringify(join(folder, 'nope.txt'))}),
  'delete': fault(s.CollectionDeleteURIFile, 'web', ${JSON.stringify(secret)}),
}))`) as Record<string, [number, string] | null>;
    // MS-FSCADM 2.2.9.2: a cresult, and the URIs of an allowed file are queued.
    assert.deepEqual(r.good, [1, '2 URIs added']);
    for (const k of ['shadow', 'dotdot', 'link', 'delete']) {
      assert.equal(r[k]![0], 1, k);
      assert.match(r[k]![1], /^TRAWL_ERR_URI_FILE_PLACE: the URI file ".*" is not inside the URI file folder/, k);
    }
    assert.match(r.relative![1], /TRAWL_ERR_XMLRPC_PARAMS: the URI file must be an absolute path/);
    assert.match(r.notes![1], /^TRAWL_ERR_URI_FILE: .* line 2, 3$/);
    assert.match(r.dir![1], /^TRAWL_ERR_URI_FILE: .* is not a regular file/);
    assert.match(r.latin1![1], /^TRAWL_ERR_URI_FILE: .* is not UTF-8 .* line 2/);
    assert.match(r.missing![1], /^TRAWL_ERR_IO: cannot read the URI file .*: ENOENT/);
    for (const [k, v] of Object.entries(r)) assert.ok(!JSON.stringify(v).includes('SECRET') && !JSON.stringify(v).includes('root:'), `${k} echoes file content: ${JSON.stringify(v)}`);
  });

  it('refuses cross-site and non-XML requests before they act, and checks Host against DNS rebinding', async () => {
    const suspend = call('CollectionSuspend', str('web'));
    // The attack: a page elsewhere POSTs text/plain, which needs no CORS preflight.
    const plain = await raw(port, { headers: { 'content-type': 'text/plain', origin: 'http://attacker.example' }, body: suspend });
    assert.equal(plain.status, 403);
    const plainNoOrigin = await raw(port, { headers: { 'content-type': 'text/plain;charset=UTF-8' }, body: suspend });
    assert.equal(plainNoOrigin.status, 415);
    assert.match(plainNoOrigin.text, /text\/xml or application\/xml/);
    const form = await raw(port, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: suspend });
    assert.equal(form.status, 415);
    const none = await raw(port, { headers: { 'content-type': '' }, body: suspend });
    assert.equal(none.status, 415);
    const xmlOtherOrigin = await raw(port, { headers: { origin: 'http://attacker.example' }, body: suspend });
    assert.equal(xmlOtherOrigin.status, 403);
    const nullOrigin = await raw(port, { headers: { origin: 'null' }, body: suspend });
    assert.equal(nullOrigin.status, 403);
    // DNS rebinding: the attacker's name resolves to 127.0.0.1, and the browser sends it as Host.
    const rebound = await raw(port, { headers: { host: `attacker.example:${port}` }, body: suspend });
    assert.equal(rebound.status, 421);
    const otherPort = await raw(port, { headers: { host: `127.0.0.1:${port + 1}` }, body: suspend });
    assert.equal(otherPort.status, 421);
    // The log reaches this process through a pipe: wait for the line rather than race it.
    await until(() => /Host is not a name this server answers to/.test(log), 3000, 'the Host refusal in the log');
    // None of them reached the method: the collection still crawls.
    assert.equal(python(url, `print(json.dumps(s.CollectionGetStatus('web')))`), 'crawling');
    // What is accepted: the loopback names with the port, XML with a charset, the server's own origin.
    for (const [host, type, origin] of [[`localhost:${port}`, 'application/xml; charset=utf-8', undefined], [`127.0.0.1:${port}`, 'text/xml', `http://127.0.0.1:${port}`], [`LOCALHOST:${port}`, 'Text/XML;charset="utf-8"', `http://localhost:${port}`]] as const) {
      const ok = await raw(port, { headers: { host, 'content-type': type, ...(origin ? { origin } : {}) }, body: call('CollectionGetList') });
      assert.equal(ok.status, 200, `${host} ${type}`);
      assert.match(ok.text, /<string>web<\/string>/);
    }
  });

  it('method names from Object.prototype are unknown methods, never dispatched', async () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__']) {
      const r = await raw(port, { body: call(name) });
      assert.equal(r.status, 200, name);
      assert.match(r.text, new RegExp(`<int>1</int>[\\s\\S]*TRAWL_ERR_XMLRPC_PARAMS: unknown method "${name}"`), name);
    }
  });

  it('caps request bodies while they stream, and decodes a 6 MiB base64 value to the exact bytes', async () => {
    // Declared too large: refused from the header, before any body byte.
    const declared = await new Promise<string>((resolve, reject) => {
      const w = connect(port, '127.0.0.1', () => w.write(`POST /RPC2 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/xml\r\nContent-Length: ${15 * 1000 * 1000}\r\n\r\n<methodCall>`));
      let got = '';
      w.on('data', (d: Buffer) => {
        got += d.toString();
        if (got.includes('\r\n\r\n')) w.destroy();
      });
      w.on('close', () => resolve(got));
      w.on('error', reject);
    });
    assert.match(declared, /^HTTP\/1\.1 413/);
    // Chunked, length unknown: refused once 10 MiB have arrived.
    const streamed = await new Promise<{ head: string; sentBytes: number }>((resolve) => {
      const w = connect(port, '127.0.0.1');
      let sent = 0;
      let head = '';
      let closed = false;
      const chunk = Buffer.alloc(256 * 1024, 'a');
      w.on('data', (d: Buffer) => {
        head += d.toString();
      });
      // The server closes the connection after its 413; writes after that may fail with a reset.
      w.on('error', () => undefined);
      w.on('close', () => {
        closed = true;
        resolve({ head, sentBytes: sent });
      });
      w.on('connect', async () => {
        w.write(`POST /RPC2 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/xml\r\nTransfer-Encoding: chunked\r\n\r\n`);
        // 256 KiB every 5 ms, at most 100 MiB: a server that kept reading would take it all.
        for (let i = 0; i < 400 && !closed && head === ''; i++) {
          await new Promise((r) => setTimeout(r, 5));
          sent += chunk.length;
          w.write(`${chunk.length.toString(16)}\r\n`);
          w.write(chunk);
          if (!w.write('\r\n')) {
            await Promise.race([new Promise((r) => w.once('drain', r)), new Promise((r) => w.once('close', r))]);
          }
        }
        w.end();
      });
    });
    assert.match(streamed.head, /^HTTP\/1\.1 413/, `after ${streamed.sentBytes} bytes`);
    assert.ok(streamed.sentBytes > 10 * 1024 * 1024 && streamed.sentBytes < 20 * 1024 * 1024, `answered after ${streamed.sentBytes} bytes`);
    // Inside the cap: 6 MiB of bytes (8 MiB of base64) echoed by validator1.manyTypesTest.
    const r = python(url, `
import hashlib
data = bytes((i * 31 + (i >> 8)) & 255 for i in range(6 * 1024 * 1024))
out = s.validator1.manyTypesTest(1, True, 's', 1.5, xmlrpc.client.DateTime('19980717T14:08:55'), xmlrpc.client.Binary(data))
print(json.dumps({'sent': hashlib.sha256(data).hexdigest(), 'back': hashlib.sha256(out[5].data).hexdigest(), 'n': len(out[5].data)}))`) as Record<string, string | number>;
    assert.equal(r.n, 6 * 1024 * 1024);
    assert.equal(r.back, r.sent);
    const expected = createHash('sha256').update(Buffer.from(Array.from({ length: 16 }, (_, i) => (i * 31) & 255))).digest('hex');
    assert.notEqual(expected, r.back); // the hashes compare real content, not a constant
    // Many small values inside the byte cap: refused by count, quickly, and the server answers on.
    const many = `<value><int>1</int></value>`.repeat(150_000);
    const t0 = Date.now();
    const big = await raw(port, { body: call('validator1.arrayOfStructsTest', `<param><value><array><data>${many}</data></array></value></param>`) });
    assert.ok(Date.now() - t0 < 3_000, `${Date.now() - t0} ms`);
    assert.match(big.text, /TRAWL_ERR_XMLRPC_PARSE: the body has more than 400000 tags/);
    assert.equal((await raw(port, { body: call('CollectionGetList') })).status, 200);
  });

  it('closes stalled and trickling requests within the timeouts, and idle keep-alive connections', async () => {
    const t0 = Date.now();
    const noHeaders = await watch(port, `POST /RPC2 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    const stalledBody = await watch(port, `POST /RPC2 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/xml\r\nContent-Length: 1000\r\n\r\n<methodCall>`);
    const trickle = await watch(port, `POST /RPC2 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/xml\r\nContent-Length: 1000\r\n\r\n`);
    const keepAlive = await watch(port, `POST /RPC2 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/xml\r\nContent-Length: ${call('GetLogLevel').length}\r\n\r\n${call('GetLogLevel')}`);
    const drip = setInterval(() => trickle.sock.write('<'), 100);
    try {
      await until(() => [noHeaders, stalledBody, trickle, keepAlive].every((w) => w.closedAt !== undefined), 5_000, 'the server to close the slow connections');
    } finally {
      clearInterval(drip);
    }
    // headers 0.5 s, request 1 s, keep-alive 0.5 s after the answer (Node adds up to 1 s
    // to the keep-alive timeout, keepAliveTimeoutBuffer); Node checks every 125 ms here.
    for (const [name, w, maxMs] of [['no headers', noHeaders, 1_500], ['stalled body', stalledBody, 2_000], ['trickled body', trickle, 2_000], ['idle keep-alive', keepAlive, 2_500]] as const) {
      assert.ok(w.closedAt! - t0 <= maxMs, `${name} closed after ${w.closedAt! - t0} ms`);
    }
    assert.ok(stalledBody.closedAt! - t0 >= 900, `the stalled body was closed after ${stalledBody.closedAt! - t0} ms, before its time`);
    assert.match(keepAlive.got, /^HTTP\/1\.1 200[\s\S]*<int>/);
  });

  it('300 slow clients beyond the connection cap do not keep a normal client out', async () => {
    const slow: Watched[] = [];
    try {
      for (let i = 0; i < 300; i++) slow.push(await watch(port, 'POST /RPC2 HTTP/1.1\r\n'));
      // Those over the cap are closed at once.
      await until(() => slow.filter((w) => w.closedAt !== undefined).length >= 300 - MAX_CONNECTIONS, 2_000, 'the connections over the cap to be closed');
      // The others go at the headers timeout; a normal client is answered at the latest then.
      const t0 = Date.now();
      let answered: Reply | undefined;
      for (let i = 0; i < 100 && answered === undefined && Date.now() - t0 < 5_000; i++) {
        try {
          answered = await raw(port, { body: call('CollectionGetList') });
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      assert.ok(answered, 'a normal client was never answered');
      assert.equal(answered.status, 200);
      assert.match(answered.text, /<string>web<\/string>/);
      assert.ok(Date.now() - t0 < 2_500, `answered after ${Date.now() - t0} ms`);
      await until(() => slow.every((w) => w.closedAt !== undefined), 3_000, 'every slow client to be closed');
    } finally {
      for (const w of slow) w.sock.destroy();
    }
  });
});

describe('failed token checks are logged and rate-limited per address', () => {
  let daemon: ChildProcess;
  let port: number;
  let log = '';
  const TOKEN = 'a-long-enough-secret-token';

  before(async () => {
    const data = tempDir('trawl-admin-token-');
    writeFileSync(join(data, 'token'), `${TOKEN}\n`);
    port = await freePort();
    daemon = await spawnServe(['--data', data, '--port', String(port), '--token-file', join(data, 'token')]);
    daemon.stdout!.on('data', (d: Buffer) => {
      log += d.toString();
    });
  });
  after(() => {
    daemon?.kill('SIGKILL');
  });

  it('locks out an address after 10 failures in a minute, and only that address', async () => {
    const body = call('GetLogLevel');
    const guess = (i: number, localAddress = '127.0.0.1'): Promise<Reply> => raw(port, { body, localAddress, headers: { authorization: `Bearer wrong-guess-number-${i}` } });
    for (let i = 0; i < 10; i++) assert.equal((await guess(i)).status, 401, `guess ${i}`);
    const locked = await guess(10);
    assert.equal(locked.status, 429);
    assert.ok(Number(locked.headers['retry-after']) > 0);
    // Even the right token waits out the lockout from that address...
    assert.equal((await raw(port, { body, localAddress: '127.0.0.1', headers: { authorization: `Bearer ${TOKEN}` } })).status, 429);
    // ...while another address is answered.
    const other = await raw(port, { body, localAddress: '127.0.0.2', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(other.status, 200);
    assert.match(other.text, /<int>116<\/int>/);
    assert.equal((await guess(11, '127.0.0.3')).status, 401);
    // Logged with the peer, never with the token that was tried.
    const failures = (): string[] => log.split('\n').filter((l) => l.includes('admin token check failed'));
    // The log arrives through a pipe: wait for all eleven lines, then look at them.
    await until(() => log.includes('address locked out') && failures().length >= 11, 2_000, 'the failures to be logged');
    const lines = failures();
    assert.equal(lines.length, 11, lines.join('\n'));
    assert.ok(lines.every((l) => /"peer":"(?:::ffff:)?127\.0\.0\.[13]"/.test(l)), lines[0]);
    assert.ok(!log.includes('wrong-guess'), 'a tried token reached the log');
  });
});
