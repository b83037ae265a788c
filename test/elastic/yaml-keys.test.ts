// Open Crawler keys that once were warned about and are now applied, each shown by its
// effect on a crawl of a loopback site through the real CLI (the site's own request log,
// the console sink's documents, logs/crawl.log), or on the Elasticsearch stand-in:
// purge_crawl_enabled (trawl_purge.enabled), event_logs (trawl_elastic.events),
// content_extraction_enabled/_mime_types (the earlier names of binary_content_extraction_*),
// elasticsearch.request_timeout, compression, retry_on_failure and delay_on_retry
// (trawl_sinks.<sink>.request_timeout, compression, retries, retry_delay), default_encoding
// (trawl_extraction.default_charset), ssl_ca_certificates and ssl_verification_mode (trawl_tls,
// against an HTTPS server with a certificate of a CA made with openssl), socket_timeout
// (trawl_limits.socket_timeout), threads_per_crawl (max_sites), elasticsearch.ca_fingerprint.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { SearchDocument } from '../../src/sinks/document.ts';
import { ElasticsearchSink } from '../../src/sinks/elasticsearch-sink.ts';
import { allOk, StandIn } from '../support/es-standin.ts';
import { startFixtureSite, type FixtureSite, type RouteSpec } from '../support/fixture-site.ts';
import { makePki } from '../support/nginx-tls.ts';
import { consoleEntries } from '../support/open-crawler-console.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const page = (title: string, links: string[] = []): RouteSpec => ({
  kind: 'html',
  body: `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`,
});

describe('Open Crawler keys applied by trawl', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-elastic-keys-'));
  const sites: FixtureSite[] = [];
  after(async () => {
    for (const s of sites) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function crawl(name: string, yaml: string, data = join(dir, `${name}-data`)) {
    const file = join(dir, `${name}.yml`);
    writeFileSync(file, yaml);
    const r = await runTrawl(['crawl', '--data', data, file], { timeoutMs: 120_000 });
    return { ...r, data, docs: /^output_sink: console$/m.test(yaml) ? consoleEntries(r.out).map((e) => new URL(e.url).pathname).sort() : [] };
  }
  const yamlFor = (origin: string, more = '') => `domains:\n  - url: ${origin}\nloopback_allowed: true\noutput_sink: console\n${more}`;
  const events = (data: string) => readFileSync(join(data, 'logs', 'crawl.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

  it('no warning names an applied key; config convert carries each into the XML', async () => {
    const file = join(dir, 'convert.yml');
    writeFileSync(file, `domains:\n  - url: https://example.com\npurge_crawl_enabled: false\nevent_logs: false\ncontent_extraction_enabled: true\ncontent_extraction_mime_types: [application/pdf]\ndefault_encoding: Windows-1252\nssl_verification_mode: certificate\nssl_ca_certificates: [ca.pem]\nsocket_timeout: 7\nthreads_per_crawl: 3\n`);
    // (validated without the CA file, which does not exist: config validate reads it)
    const checked = join(dir, 'convert-checked.yml');
    writeFileSync(checked, readFileSync(file, 'utf8').replace('ssl_ca_certificates: [ca.pem]\n', ''));
    const v = await runTrawl(['config', 'validate', checked], { timeoutMs: 60_000 });
    assert.equal(v.code, 0, v.err);
    for (const key of ['purge_crawl_enabled', 'event_logs', 'content_extraction_enabled', 'content_extraction_mime_types', 'default_encoding', 'ssl_verification_mode', 'ssl_ca_certificates', 'socket_timeout', 'threads_per_crawl']) assert.doesNotMatch(v.err, new RegExp(`${key} has no trawl equivalent|${key} is not applied`));
    const c = await runTrawl(['config', 'convert', file, '--to', 'xml'], { timeoutMs: 60_000 });
    assert.equal(c.code, 0, c.err);
    assert.doesNotMatch(c.err, /ssl_ca_certificates/);
    assert.match(c.out, /<section name="trawl_purge">\s*<attrib name="enabled" type="boolean">\s*no\s*<\/attrib>/);
    assert.match(c.out, /<section name="trawl_elastic">[\s\S]*?<attrib name="events" type="boolean">\s*no\s*<\/attrib>/);
    assert.match(c.out, /<attrib name="binary_mime_types" type="list-string">\s*<member>\s*application\/pdf\s*<\/member>/);
    assert.match(c.out, /<attrib name="default_charset" type="string">\s*windows-1252\s*<\/attrib>/);
    assert.match(c.out, /<section name="trawl_limits">[\s\S]*?<attrib name="socket_timeout" type="integer">\s*7\s*<\/attrib>/);
    assert.match(c.out, /<attrib name="max_sites" type="integer">\s*3\s*<\/attrib>/);
    assert.match(c.out, /<section name="trawl_tls">\s*<attrib name="ca_certificates" type="list-string">\s*<member>\s*ca\.pem\s*<\/member>\s*<\/attrib>\s*<attrib name="verification" type="string">\s*certificate\s*<\/attrib>/);
    // A CA file that cannot be read: config validate warns, naming it and where the YAML gives it; the crawl stops on it, as the Open Crawler does.
    const missing = join(dir, 'missing-ca.yml');
    writeFileSync(missing, `domains:\n  - url: http://127.0.134.75\nloopback_allowed: true\nssl_ca_certificates:\n  - ${join(dir, 'no-such-ca.pem')}\n`);
    const m = await runTrawl(['config', 'validate', missing], { timeoutMs: 60_000 });
    assert.equal(m.code, 0, m.err);
    assert.match(m.err, /missing-ca\.yml:5:5: warning TRAWL_ERR_CLIENT_CERT: collection "missing-ca", trawl_tls\.ca_certificates: ".*no-such-ca\.pem" cannot be read: ENOENT; the CAs are not applied/);
    const k = await runTrawl(['crawl', '--data', join(dir, 'missing-ca-data'), missing], { timeoutMs: 60_000 });
    assert.notEqual(k.code, 0);
    assert.match(k.err, /TRAWL_ERR_CLIENT_CERT: .*no-such-ca\.pem" cannot be read: ENOENT/);
  });

  it('event_logs: false writes trawl\'s own events, not the Elastic crawler\'s', async () => {
    const site = await startFixtureSite([{ ip: '127.0.134.61', routes: { '/': page('home', ['/a.html']), '/a.html': page('a') } }]);
    sites.push(site);
    const origin = site.hosts[0]!.origin;
    // (test/elastic/event-log.test.ts shows the Elastic events, the default.)
    const off = await crawl('events-off', yamlFor(origin, 'event_logs: false\n'));
    assert.equal(off.code, 0, off.err);
    assert.deepEqual(off.docs, ['/', '/a.html']);
    const lines = events(off.data);
    assert.ok(lines.length > 0);
    assert.equal(lines.filter((e) => 'event.action' in e).length, 0);
    assert.ok(lines.some((e) => e.event === 'fetch'), 'trawl\'s fetch events are there');
  });

  it('content_extraction_enabled and _mime_types: the files of those types are indexed, as with binary_content_extraction_*', async () => {
    const site = await startFixtureSite([{
      ip: '127.0.134.62',
      routes: {
        '/': page('home', ['/report.pdf', '/photo.png']),
        '/report.pdf': { kind: 'binary', bytes: new TextEncoder().encode('%PDF-1.4 not really'), contentType: 'application/pdf' },
        '/photo.png': { kind: 'binary', bytes: new Uint8Array([137, 80, 78, 71]), contentType: 'image/png' },
      },
    }]);
    sites.push(site);
    const origin = site.hosts[0]!.origin;
    const r = await crawl('earlier-names', yamlFor(origin, 'content_extraction_enabled: true\ncontent_extraction_mime_types:\n  - application/pdf\n'));
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.docs, ['/', '/report.pdf']);
  });

  it('purge_crawl_enabled: false: no purge phase; the next crawl fetches every known URL again, following a redirect the purge would not', async () => {
    const site = await startFixtureSite([{
      ip: '127.0.134.63',
      routes: { '/': page('home', ['/moved.html']), '/moved.html': page('moved'), '/elsewhere.html': page('elsewhere') },
    }]);
    sites.push(site);
    const h = site.hosts[0]!;
    const cycles = async (name: string, more: string) => {
      const data = join(dir, `${name}-data`);
      const first = await crawl(name, yamlFor(h.origin, more), data);
      assert.equal(first.code, 0, first.err);
      assert.deepEqual(first.docs, ['/', '/moved.html']);
      // The site stops linking to /moved.html, which now redirects.
      site.setRoute(h.ip, '/', page('home'));
      site.setRoute(h.ip, '/moved.html', { kind: 'redirect', to: '/elsewhere.html' });
      site.reset();
      const second = await crawl(name, yamlFor(h.origin, more), data);
      assert.equal(second.code, 0, second.err);
      const fetched = site.fetchedPaths();
      site.setRoute(h.ip, '/', page('home', ['/moved.html']));
      site.setRoute(h.ip, '/moved.html', page('moved'));
      return fetched;
    };
    // The purge (the default) fetches /moved.html once more, deletes it on its 3xx, and does not follow it.
    const purged = await cycles('purge-on', '');
    assert.ok(purged.includes('/moved.html'));
    assert.ok(!purged.includes('/elsewhere.html'), purged.join(' '));
    // Without it, /moved.html is a known URL fetched again as any other, its redirect followed.
    const kept = await cycles('purge-off', 'purge_crawl_enabled: false\n');
    assert.ok(kept.includes('/moved.html'));
    assert.ok(kept.includes('/elsewhere.html'), kept.join(' '));
  });

  it('elasticsearch.compression, retry_on_failure, delay_on_retry: gzip bodies, and a request answered 503 is sent again before the feed fails', async () => {
    const site = await startFixtureSite([{ ip: '127.0.134.64', routes: { '/': page('home', ['/a.html']), '/a.html': page('a') } }]);
    sites.push(site);
    const es = new StandIn();
    await es.start('127.0.134.65');
    let failures = 2;
    es.answer = (r) => (failures-- > 0 ? { status: 503, body: '{"error":"unavailable"}' } : allOk(r));
    try {
      const yaml = `domains:\n  - url: ${site.hosts[0]!.origin}\nloopback_allowed: true\noutput_index: web\nelasticsearch:\n  host: ${es.url}\n  pipeline_enabled: false\n  compression: true\n  retry_on_failure: 2\n  delay_on_retry: 1\n  request_timeout: 30\n`;
      const file = join(dir, 'es-retry.yml');
      writeFileSync(file, yaml);
      const v = await runTrawl(['config', 'convert', file, '--to', 'xml'], { timeoutMs: 60_000 });
      assert.equal(v.code, 0, v.err);
      assert.doesNotMatch(v.err, /elasticsearch\.(compression|retry_on_failure|delay_on_retry|request_timeout)/);
      for (const [name, type, value] of [['compression', 'boolean', 'yes'], ['retries', 'integer', '2'], ['retry_delay', 'real', '1'], ['request_timeout', 'integer', '30']]) {
        assert.match(v.out, new RegExp(`<attrib name="${name}" type="${type}">\\s*${value}(\\.0)?\\s*</attrib>`), name);
      }
      const r = await runTrawl(['crawl', '--data', join(dir, 'es-retry-data'), '--feed-timeout', '60', file], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      // Twice 503, then the same request again, accepted: the feed saw no failure.
      assert.ok(es.received.length >= 3, `${es.received.length} requests`);
      assert.equal(es.received[1]!.raw, es.received[0]!.raw);
      assert.equal(es.received[2]!.raw, es.received[0]!.raw);
      assert.doesNotMatch(r.err, /answered 503/);
      for (const q of es.received) {
        assert.equal(q.headers['content-encoding'], 'gzip');
        assert.deepEqual([...q.bytes.subarray(0, 2)], [0x1f, 0x8b]);
      }
      const urls = es.received.slice(2).flatMap((q) => q.lines.filter((_, i) => i % 2 === 1).map((d) => new URL((d as { url: string }).url).pathname)).sort();
      assert.deepEqual(urls, ['/', '/a.html']);
    } finally {
      await es.stop();
    }
  });

  it('the elasticsearch sink: no retry for a 4xx; none at all with retries 0; request_timeout bounds a request that gets no answer', { timeout: 60_000 }, async () => {
    const es = new StandIn();
    await es.start('127.0.134.66');
    const doc = { op: 'index' as const, doc: { id: 'id1', url: 'http://a.test/', collection: 'c', body: 'x' } as unknown as SearchDocument };
    try {
      es.answer = () => ({ status: 400, body: '{"error":"bad"}' });
      const fourxx = new ElasticsearchSink('es', { url: es.url, index: 'web', retries: 3, retryDelayS: 0 });
      await assert.rejects(fourxx.submit([doc]), /answered 400/);
      assert.equal(es.received.length, 1);
      await fourxx.close();
      es.answer = () => ({ status: 503, body: '{"error":"unavailable"}' });
      const none = new ElasticsearchSink('es', { url: es.url, index: 'web', retries: 0 });
      await assert.rejects(none.submit([doc]), /answered 503/);
      assert.equal(es.received.length, 2);
      await none.close();
      const some = new ElasticsearchSink('es', { url: es.url, index: 'web', retries: 2, retryDelayS: 0 });
      await assert.rejects(some.submit([doc]), /answered 503/);
      assert.equal(es.received.length, 5);
      await some.close();
    } finally {
      await es.stop();
    }
    // A server that reads the request and never answers.
    const held: ServerResponse[] = [];
    const silent = createServer((req, res) => {
      req.resume();
      held.push(res);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.134.67', resolve));
    try {
      const sink = new ElasticsearchSink('es', { url: `http://127.0.134.67:${(silent.address() as AddressInfo).port}`, index: 'web', requestTimeoutS: 1 });
      await assert.rejects(sink.submit([doc]), /elasticsearch sink es: .*[Tt]imeout/);
      await sink.close();
    } finally {
      for (const res of held) res.destroy();
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('default_encoding: a page whose response and markup name no encoding is read in it; one that names its own is not', async () => {
    const latin1 = (text: string) => Uint8Array.from(Buffer.from(text, 'latin1'));
    const site = await startFixtureSite([{
      ip: '127.0.134.68',
      routes: {
        '/': { kind: 'binary', contentType: 'text/html', bytes: latin1('<!doctype html><html><head><title>Caf\u00e9</title></head><body><p>cr\u00e8me br\u00fbl\u00e9e</p><a href="/u.html">u</a></body></html>') },
        '/u.html': { kind: 'binary', contentType: 'text/html; charset=utf-8', bytes: Uint8Array.from(Buffer.from('<!doctype html><html><head><title>na\u00efve</title></head><body><p>d\u00e9j\u00e0 vu</p></body></html>', 'utf8')) },
      },
    }]);
    sites.push(site);
    const origin = site.hosts[0]!.origin;
    const titles = async (name: string, more: string) => {
      const out = join(dir, `${name}-docs`);
      const r = await crawl(name, `domains:\n  - url: ${origin}\nloopback_allowed: true\noutput_sink: file\noutput_dir: ${out}\n${more}`);
      assert.equal(r.code, 0, r.err);
      return { err: r.err, docs: readdirSync(out).map((f) => JSON.parse(readFileSync(join(out, f), 'utf8')) as { title: string; body: string }).sort((a, b) => a.title.localeCompare(b.title)) };
    };
    const plain = await titles('encoding-default', '');
    assert.deepEqual(plain.docs.map((d) => d.title), ['Caf\ufffd', 'na\u00efve']);
    const latin = await titles('encoding-latin1', 'default_encoding: ISO-8859-1\n');
    assert.deepEqual(latin.docs.map((d) => [d.title, d.body]), [['Caf\u00e9', 'cr\u00e8me br\u00fbl\u00e9e u'], ['na\u00efve', 'd\u00e9j\u00e0 vu']]);
    const file = join(dir, 'encoding-unknown.yml');
    writeFileSync(file, `domains:\n  - url: ${origin}\ndefault_encoding: ASCII-8BIT\n`);
    const unknown = await runTrawl(['config', 'convert', file, '--to', 'xml'], { timeoutMs: 60_000 });
    assert.equal(unknown.code, 0, unknown.err);
    assert.match(unknown.err, /warning TRAWL_ERR_CONFIG_UNSUPPORTED: .*default_encoding is not applied: trawl cannot read the encoding "ASCII-8BIT"/);
    assert.doesNotMatch(unknown.out, /default_charset/);
  });

  it('ssl_ca_certificates and ssl_verification_mode: a site whose CA is named is crawled; certificate skips the host name check, none every check', { skip: skipUnless(TOOLS.openssl) }, async () => {
    const ip = '127.0.134.69';
    const other = '127.0.134.70'; // the same certificate, which names ${ip} only
    const pki = makePki(join(dir, 'pki'), ip);
    const requests: string[] = [];
    const server = createHttpsServer({ key: readFileSync(pki.serverKey), cert: readFileSync(pki.serverCert) }, (req, res) => {
      requests.push(`${req.socket.localAddress} ${req.url}`);
      res.writeHead(req.url === '/' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html><head><title>tls</title></head><body>tls</body></html>');
    });
    await new Promise<void>((resolve) => server.listen(0, ip, resolve));
    const port = (server.address() as AddressInfo).port;
    const second = createHttpsServer({ key: readFileSync(pki.serverKey), cert: readFileSync(pki.serverCert) }, (req, res) => {
      requests.push(`${req.socket.localAddress} ${req.url}`);
      res.writeHead(req.url === '/' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html><head><title>tls</title></head><body>tls</body></html>');
    });
    await new Promise<void>((resolve) => second.listen(port, other, resolve));
    const pem = readFileSync(pki.caCert, 'utf8');
    const yaml = (host: string, more: string) => `domains:\n  - url: https://${host}:${port}\nloopback_allowed: true\noutput_sink: console\n${more}`;
    const pages = (host: string) => requests.filter((r) => r === `${host} /`).length;
    try {
      const unknown = await crawl('tls-unknown-ca', yaml(ip, ''));
      assert.deepEqual(unknown.docs, []); // (the crawl fails: nothing was stored)
      assert.equal(pages(ip), 0);
      const trusted = await crawl('tls-ca-file', yaml(ip, `ssl_ca_certificates:\n  - ${pki.caCert}\n`));
      assert.equal(trusted.code, 0, trusted.err);
      assert.deepEqual(trusted.docs, ['/']);
      assert.equal(pages(ip), 1);
      // The certificate does not name ${other}: refused in full mode, crawled with certificate.
      const inline = `ssl_ca_certificates:\n  - |\n${pem.trim().split('\n').map((l) => `    ${l}`).join('\n')}\n`;
      const full = await crawl('tls-full', yaml(other, `${inline}ssl_verification_mode: full\n`));
      assert.deepEqual(full.docs, []);
      assert.equal(pages(other), 0);
      const chain = await crawl('tls-certificate', yaml(other, `${inline}ssl_verification_mode: certificate\n`));
      assert.equal(chain.code, 0, chain.err);
      assert.deepEqual(chain.docs, ['/']);
      assert.equal(pages(other), 1);
      const none = await crawl('tls-none', yaml(other, 'ssl_verification_mode: none\n'));
      assert.equal(none.code, 0, none.err);
      assert.deepEqual(none.docs, ['/']);
      assert.equal(pages(other), 2);
    } finally {
      server.closeAllConnections();
      second.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => second.close(() => resolve()));
    }
  });

  it('socket_timeout: a page whose response does not start within it fails with ti; request_timeout alone would have waited', async () => {
    const site = await startFixtureSite([{
      ip: '127.0.134.71',
      routes: { '/': page('home', ['/slow.html', '/fast.html']), '/slow.html': { ...page('slow'), delayMs: 4000 } as RouteSpec, '/fast.html': page('fast') },
    }]);
    sites.push(site);
    const r = await crawl('socket-timeout', yamlFor(site.hosts[0]!.origin, 'socket_timeout: 1\nrequest_timeout: 60\n'));
    assert.equal(r.code, 0, r.err);
    assert.ok(site.fetchedPaths().includes('/slow.html'), 'the slow page was asked for');
    assert.deepEqual(r.docs, ['/', '/fast.html']);
    assert.match(r.out + r.err, /\bti\b/);
  });

  it('threads_per_crawl: 1 fetches one page at a time over all the domains: no two requests in the sites\' logs overlap', async () => {
    const slow = (title: string, links: string[] = []): RouteSpec => ({ ...page(title, links), delayMs: 600 } as RouteSpec);
    const routes = (n: string) => ({ '/': slow(`home ${n}`, ['/a.html']), '/a.html': slow(`a ${n}`) });
    const site = await startFixtureSite([{ ip: '127.0.134.72', routes: routes('x') }, { ip: '127.0.134.73', routes: routes('y') }]);
    sites.push(site);
    const [x, y] = site.hosts as [typeof site.hosts[0], typeof site.hosts[0]];
    const r = await crawl('threads', `domains:\n  - url: ${x.origin}\n  - url: ${y.origin}\nloopback_allowed: true\noutput_sink: console\nthreads_per_crawl: 1\n`);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.docs.length, 4);
    // Each page takes 600 ms to answer: two sites crawled at once would have requests in flight together.
    const all = [...x.requests, ...y.requests].filter((q) => q.path !== '/robots.txt').sort((a, b) => a.startMs - b.startMs);
    assert.equal(all.length, 4);
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]!.endMs! <= all[i]!.startMs, JSON.stringify(all.map((q) => [q.host, q.path, q.startMs, q.endMs])));
  });

  it('elasticsearch.ca_fingerprint: the endpoint whose chain holds that certificate is trusted without a CA file; another is refused', { skip: skipUnless(TOOLS.openssl) }, async () => {
    const ip = '127.0.134.74';
    const pki = makePki(join(dir, 'pki-es'), ip);
    const es = new StandIn();
    // As Elasticsearch does, the server sends its certificate and the CA's.
    await es.start(ip, { key: readFileSync(pki.serverKey, 'utf8'), cert: readFileSync(pki.serverCert, 'utf8') + readFileSync(pki.caCert, 'utf8') });
    const fp = new X509Certificate(readFileSync(pki.caCert)).fingerprint256;
    const doc = { op: 'index' as const, doc: { id: 'id1', url: 'http://a.test/', collection: 'c', body: 'x' } as unknown as SearchDocument };
    try {
      const file = join(dir, 'es-fp.yml');
      writeFileSync(file, `domains:\n  - url: https://example.com\noutput_index: web\nelasticsearch:\n  host: ${es.url}\n  ca_fingerprint: "${fp}"\n`);
      const c = await runTrawl(['config', 'convert', file, '--to', 'xml'], { timeoutMs: 60_000 });
      assert.equal(c.code, 0, c.err);
      assert.doesNotMatch(c.err, /ca_fingerprint/);
      assert.match(c.out, new RegExp(`<attrib name="ca_fingerprint" type="string">\\s*${fp}\\s*</attrib>`));
      // Without it the certificate is unknown.
      const plain = new ElasticsearchSink('es', { url: es.url, index: 'web' });
      await assert.rejects(plain.submit([doc]), /certificate/i);
      await plain.close();
      assert.equal(es.received.length, 0);
      for (const pin of [fp, fp.replace(/:/g, '').toLowerCase()]) {
        const sink = new ElasticsearchSink('es', { url: es.url, index: 'web', caFingerprint: pin });
        assert.deepEqual((await sink.submit([doc])).rejected, []);
        await sink.close();
      }
      assert.equal(es.received.length, 2);
      const wrong = new ElasticsearchSink('es', { url: es.url, index: 'web', caFingerprint: 'AB'.repeat(32) });
      await assert.rejects(wrong.submit([doc]), /holds no certificate of the ca_fingerprint/);
      await wrong.close();
      assert.equal(es.received.length, 2);
    } finally {
      await es.stop();
    }
  });
});
