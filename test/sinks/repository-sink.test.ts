// The CiteSeerX repository and jms sinks: the mirror layout and its name
// rules, the CrawlData sidecar, and real `trawl crawl` runs of a fixture site
// into a repository, announced to a real ActiveMQ broker (Debian's) and
// received by a Java JMS client as javax.jms.MapMessage instances.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { hash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { crawlDataXml, javaDateString } from '../../src/sinks/crawl-data.ts';
import { longPath, mirrorPath, safeName } from '../../src/sinks/repository-layout.ts';
import { brokerAddress, mapMessageXml, StompProducer } from '../../src/sinks/stomp-producer.ts';
import { RepositorySink } from '../../src/sinks/repository-sink.ts';
import { FilteredSink, PROFILE_ACCEPT_PATTERN, sinkFilterOf } from '../../src/sinks/sink-filter.ts';
import type { SinkOp } from '../../src/sinks/sink.ts';
import type { SearchDocument } from '../../src/sinks/document.ts';
import type { UriRecord } from '../../src/store/record-store.ts';
import { ROOT } from '../helpers.ts';
import { compileJmsConsumer, startBroker, type Broker, type JmsConsumer } from '../support/activemq.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { spawnServe } from '../support/daemon.ts';
import { freePort } from '../support/ports.ts';
import { runTrawl } from '../support/trawl-cli.ts';
import { listFiles, readCrawlData } from '../support/repository-files.ts';

const BIN = join(ROOT, 'bin/trawl.js');

async function trawl(args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const r = await runTrawl(args, { timeoutMs: 120_000 });
  return { status: r.code, stdout: r.out, stderr: r.err };
}

const sha1 = (b: Uint8Array | string): string => hash('sha1', b, 'hex');

/** `trawl admin` against the daemon on that port. */
function runAdmin(port: number, args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return trawl(['admin', '--server', `http://127.0.0.1:${port}`, ...args]);
}

/** An index operation as the feeder makes it, for a URL and its bytes. */
function indexOp(url: string, body: string, parent?: string): SinkOp {
  const record = { url, lastCrawledMs: Date.UTC(2026, 10, 28, 12, 0, 0), parent, mime: 'application/pdf' } as unknown as UriRecord;
  return { op: 'index', doc: { crawl_collection: 'c' } as SearchDocument, source: { record, body: new TextEncoder().encode(body), header: 'HTTP/1.1 200 OK\r\nContent-Type: application/pdf; x=1\r\n', mime: 'application/pdf' } };
}

describe('repository layout', () => {
  it('puts a URL whose place is taken under LONG, keeps another URL\'s file, and deletes only the URL\'s own files', async () => {
    const root = tempDir('trawl-repo-unit-');
    const sent: Array<Readonly<Record<string, string | number>>> = [];
    const sink = new RepositorySink('r', root, { queue: 'q', repositoryId: 'rid', jobId: undefined, producer: { sendMaps: async (_q, maps) => void sent.push(...maps), close: async () => {} } });
    try {
      await sink.submit([indexOp('http://h.test/a', 'A'), indexOp('http://h.test/a/b.pdf', 'B'), indexOp('http://h.test/A', 'upper')]);
      assert.equal(readFileSync(join(root, 'h.test/a'), 'utf8'), 'A');
      const long = longPath('http://h.test/a/b.pdf');
      assert.equal(readFileSync(join(root, long), 'utf8'), 'B', 'a file stands where the directory must go');
      assert.equal(readCrawlData(join(root, `${long}.met`)).url, 'http://h.test/a/b.pdf');
      assert.deepEqual(sent.map((m) => m.FILEPATH), ['h.test/a', long, 'h.test/A']);
      assert.deepEqual(sent.map((m) => m.JID), ['c', 'c', 'c']);
      assert.equal(readCrawlData(join(root, 'h.test/a.met')).contentType, 'application/pdf; x=1');
      // Deleting a URL that was never stored leaves the others alone; deleting one removes its file and sidecar.
      await sink.submit([{ op: 'delete', id: 'x', url: 'http://h.test/a/', collection: 'c' }, { op: 'delete', id: 'y', url: 'http://h.test/a/b.pdf', collection: 'c' }]);
      assert.deepEqual(listFiles(root), ['h.test/A', 'h.test/A.met', 'h.test/a', 'h.test/a.met']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('writes only the documents accept_pattern matches and the hubs hub_link_indicator finds, and removes those no longer selected', async () => {
    const root = tempDir('trawl-repo-unit-');
    const sent: Array<Record<string, string>> = [];
    const producer = { sendMaps: async (_q: string, maps: ReadonlyArray<Record<string, string>>) => void sent.push(...maps), close: async () => {} };
    const html = (url: string, body: string): SinkOp => {
      const op = indexOp(url, body) as Extract<SinkOp, { op: 'index' }>;
      return { ...op, source: { ...op.source!, mime: 'text/html', header: 'HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n' } };
    };
    const sink = new FilteredSink(new RepositorySink('r', root, { queue: 'q', repositoryId: 'rid', jobId: 'j', producer }), sinkFilterOf({ type: 'jms', hubLinkIndicator: '.*(\\.(pdf))(\\.(g?z))?', acceptPattern: '.*\\.(pdf|ps)' })!);
    try {
      await sink.submit([
        html('http://h.test/hub.html', '<a href="p.PDF">no: case</a><a href="x/paper.pdf.gz">yes</a>'),
        html('http://h.test/plain.html', '<a href="p.pdf.html">no: not the whole URL</a>'),
        indexOp('http://h.test/p.pdf', 'P'),
        indexOp('http://h.test/p.pdf?x', 'no: the query is part of the URL'),
        indexOp('http://h.test/q.ps', 'Q'),
      ]);
      assert.deepEqual(sent.map((m) => [m.FILEPATH, m.RESOURCETYPE]), [['h.test/hub.html', 'hub'], ['h.test/p.pdf', 'article'], ['h.test/q.ps', 'article']]);
      // The hub no longer links papers: its files go, and nothing is announced.
      await sink.submit([html('http://h.test/hub.html', '<a href="/">home</a>')]);
      assert.deepEqual(listFiles(root), ['h.test/p.pdf', 'h.test/p.pdf.met', 'h.test/q.ps', 'h.test/q.ps.met']);
      assert.equal(sent.length, 3);
      // Without accept_pattern, hub_link_indicator keeps the User Submission profile's articles.
      assert.equal(sinkFilterOf({ type: 'repository', hubLinkIndicator: 'x' })!.accept?.source, `^(?:${PROFILE_ACCEPT_PATTERN})$`);
      assert.equal(sinkFilterOf({ type: 'file', hubLinkIndicator: 'x' })!.accept, undefined, 'other sinks keep only the hubs');
      assert.equal(sinkFilterOf({ type: 'jms' }), undefined);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('lays files out as host, then path, with a directory file, the query before the extension, and safe names', () => {
    const cases: Array<[string, string]> = [
      ['http://Example.ORG/papers/a.pdf', 'example.org/papers/a.pdf'],
      ['http://example.org:8080/', 'example.org%3A8080/index.html'],
      ['http://example.org:80/x', 'example.org/x'],
      ['http://example.org/dir/', 'example.org/dir/index.html'],
      ['http://example.org/get.php?id=1&f=a/b', 'example.org/get%3Fid=1&f=a%2Fb.php'],
      ['http://example.org/paper?id=7', 'example.org/paper%3Fid=7'],
      ['http://example.org/a%20b/c:d.pdf', 'example.org/a%20b/c%3Ad.pdf'],
      ['http://example.org/.hidden/x.', 'example.org/%2Ehidden/x%2E'],
      ['http://example.org/con/aux.txt', 'example.org/%63on/%61ux.txt'],
      ['http://example.org/x.pdf.met', 'example.org/x.pdf%2Emet'],
      ['http://example.org/LONG/x', 'example.org/%4CONG/x'],
      ['http://[::1]:8080/a', '[%3A%3A1]%3A8080/a'],
      ['http://example.org/%C3%A9t%C3%A9.pdf', 'example.org/%C3%A9t%C3%A9.pdf'],
    ];
    for (const [url, path] of cases) assert.equal(mirrorPath(url), path, url);
    // Empty segments, long names and long paths go to LONG, keeping the extension.
    const long = `http://example.org/${'n'.repeat(300)}.PDF`;
    assert.equal(mirrorPath(long), `example.org/LONG/${sha1(long)}.pdf`);
    assert.equal(mirrorPath('http://example.org/a//b.ps'), longPath('http://example.org/a//b.ps'));
    assert.match(longPath('http://example.org/a//b.ps'), /^example\.org\/LONG\/[0-9a-f]{40}\.ps$/);
    const deep = `http://example.org/${Array.from({ length: 120 }, () => 'dddddddd').join('/')}/x.pdf`;
    assert.match(mirrorPath(deep), /^example\.org\/LONG\//);
    for (const name of ['a<b>c', 'q"', 'p|i', 's*', 'b\\s', 'nul.txt', 'x ']) assert.doesNotMatch(safeName(name), /[<>"|*\\]|^nul\.|\s$/i, name);
  });

  it('writes the CrawlData sidecar with the spec\'s elements, a java.util.Date time and escaped text', () => {
    assert.equal(javaDateString(Date.UTC(2007, 7, 22, 19, 54, 32)), 'Wed Aug 22 19:54:32 GMT 2007');
    assert.equal(javaDateString(Date.UTC(2026, 0, 5, 3, 4, 5)), 'Mon Jan 05 03:04:05 GMT 2026');
    const xml = crawlDataXml({ crawlDateMs: Date.UTC(2007, 7, 22, 19, 54, 32), url: 'http://h/p.pdf?a=1&b=<2>', parentUrl: 'http://h/', contentType: 'application/pdf', sha1: 'cf3267bc68816891c2fe5f438e35e12c9375bf13' });
    assert.equal(xml, [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<CrawlData>',
      '  <crawlDate>Wed Aug 22 19:54:32 GMT 2007</crawlDate>',
      '  <url>http://h/p.pdf?a=1&amp;b=&lt;2&gt;</url>',
      '  <parentUrl>http://h/</parentUrl>',
      '  <contentType>application/pdf</contentType>',
      '  <SHA1>cf3267bc68816891c2fe5f438e35e12c9375bf13</SHA1>',
      '</CrawlData>',
      '',
    ].join('\n'));
    // parentUrl and contentType are optional: left out, not empty.
    assert.doesNotMatch(crawlDataXml({ crawlDateMs: 0, url: 'http://h/', sha1: 'x' }), /parentUrl|contentType/);
  });

  it('maps broker URLs: stomp:// as written, OpenWire tcp:// to STOMP on 61613 with a warning, others refused', () => {
    assert.deepEqual(brokerAddress('stomp://127.0.0.1:61999'), { host: '127.0.0.1', port: 61999 });
    assert.deepEqual(brokerAddress('stomp://mq.example'), { host: 'mq.example', port: 61613 });
    const t = brokerAddress('tcp://ACTIVEMQ_HOST:61616');
    assert.ok(!('problem' in t));
    assert.equal(t.port, 61613);
    assert.equal(t.host, 'ACTIVEMQ_HOST');
    assert.match(t.warning ?? '', /OpenWire.*STOMP to ACTIVEMQ_HOST:61613/);
    for (const bad of ['amqp://h:5672', 'ssl://h:61617', 'failover:(tcp://h:61616)', 'h:61613', 'stomp://h:70000']) assert.ok('problem' in brokerAddress(bad), bad);
    assert.equal(mapMessageXml({ JID: 'j&<>', REPID: 'r' }), '<map><entry><string>JID</string><string>j&amp;&lt;&gt;</string></entry><entry><string>REPID</string><string>r</string></entry></map>');
  });
});

const PDF1 = new TextEncoder().encode('%PDF-1.4 first paper\n%%EOF\n');
const PDF2 = new TextEncoder().encode('%PDF-1.4 second paper, linked with a query\n%%EOF\n');
const PSGZ = gzipSync(Buffer.from('%!PS-Adobe-3.0 a gzipped PostScript paper\n'));

async function paperSite(ip: string, state: { gone: boolean }): Promise<FixtureSite> {
  return startFixtureSite([{
    ip,
    routes: {
      '/': { kind: 'html', body: '<title>Papers</title><a href="/pubs/">publications</a>' },
      '/pubs/': { kind: 'html', body: '<title>Pubs</title><a href="paper1.pdf">1</a> <a href="get.php?id=2">2</a> <a href="ps/paper3.ps.gz">3</a> <a href="/old.pdf">old</a>' },
      '/pubs/paper1.pdf': { kind: 'binary', bytes: PDF1, contentType: 'application/pdf' },
      '/pubs/get.php': { kind: 'binary', bytes: PDF2, contentType: 'application/pdf' },
      '/pubs/ps/paper3.ps.gz': { kind: 'binary', bytes: PSGZ, contentType: 'application/x-gzip' },
      '/old.pdf': (_req, res) => {
        res.writeHead(state.gone ? 404 : 200, { 'content-type': 'application/pdf' });
        res.end(state.gone ? 'gone' : '%PDF-1.4 old\n');
      },
    },
  }]);
}

function config(dir: string, name: string, start: string, sink: string): string {
  const path = join(dir, `${name}.xml`);
  writeFileSync(path, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="${name}">
    <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
    <attrib name="delay" type="real">0</attrib>
    <attrib name="allowed_types" type="list-string"><member>text/html</member><member>application/pdf</member><member>application/x-gzip</member></attrib>
    <attrib name="exclude_exts" type="list-string"><member>.jpg</member></attrib>
    <section name="http_errors"><attrib name="404" type="string">DELETE</attrib></section>
    <section name="trawl_sinks"><section name="csx">${sink}</section></section>
  </DomainSpecification></CrawlerConfig>`);
  return path;
}

const attr = (name: string, value: string): string => `<attrib name="${name}" type="string">${value}</attrib>`;

describe('trawl crawl into a CiteSeerX repository', () => {
  it('writes every fed file as fetched with its CrawlData sidecar, and removes both when the URL is gone', async () => {
    const state = { gone: false };
    const site = await paperSite('127.0.41.1', state);
    const h = site.host('127.0.41.1');
    const dir = tempDir('trawl-repo-');
    const repo = join(dir, 'repo');
    const cfg = config(dir, 'papers', h.url('/'), attr('type', 'repository') + attr('repository_root', repo));
    try {
      const r = await trawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', cfg]);
      assert.equal(r.status, 0, r.stderr);
      const host = `127.0.41.1%3A${h.port}`;
      const files = listFiles(repo);
      assert.deepEqual(files, [
        `${host}/index.html`, `${host}/index.html.met`,
        `${host}/old.pdf`, `${host}/old.pdf.met`,
        `${host}/pubs/get%3Fid=2.php`, `${host}/pubs/get%3Fid=2.php.met`,
        `${host}/pubs/index.html`, `${host}/pubs/index.html.met`,
        `${host}/pubs/paper1.pdf`, `${host}/pubs/paper1.pdf.met`,
        `${host}/pubs/ps/paper3.ps.gz`, `${host}/pubs/ps/paper3.ps.gz.met`,
      ]);
      const expect: Array<[string, string, Uint8Array, string, string]> = [
        [`${host}/pubs/paper1.pdf`, h.url('/pubs/paper1.pdf'), PDF1, h.url('/pubs/'), 'application/pdf'],
        [`${host}/pubs/get%3Fid=2.php`, h.url('/pubs/get.php?id=2'), PDF2, h.url('/pubs/'), 'application/pdf'],
        [`${host}/pubs/ps/paper3.ps.gz`, h.url('/pubs/ps/paper3.ps.gz'), PSGZ, h.url('/pubs/'), 'application/x-gzip'],
      ];
      for (const [rel, url, bytes, parent, type] of expect) {
        const body = readFileSync(join(repo, rel));
        assert.equal(body.toString("hex"), Buffer.from(bytes).toString("hex"), `${rel}: the bytes as the server sent them`);
        const meta = readCrawlData(join(repo, `${rel}.met`));
        assert.deepEqual(Object.keys(meta), ['crawlDate', 'url', 'parentUrl', 'contentType', 'SHA1']);
        assert.equal(meta.url, url);
        assert.equal(meta.parentUrl, parent);
        assert.equal(meta.contentType, type);
        assert.equal(meta.SHA1, sha1(body), `${rel}: SHA1 of the file`);
        assert.match(meta.crawlDate!, /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d GMT \d{4}$/);
        assert.ok(Math.abs(Date.parse(meta.crawlDate!) - Date.now()) < 120_000, meta.crawlDate);
      }
      // The start page has no parent; its Content-Type is the header's, parameters and all.
      const home = readCrawlData(join(repo, `${host}/index.html.met`));
      assert.equal(home.parentUrl, undefined);
      assert.match(home.contentType!, /^text\/html/);
      assert.deepEqual(listFiles(repo).filter((f) => f.includes('.trawl-')), [], 'no temporary file is left');

      state.gone = true;
      const again = await trawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', cfg]);
      assert.equal(again.status, 0, again.stderr);
      assert.equal(existsSync(join(repo, `${host}/old.pdf`)), false, 'a 404 with DELETE removes the file');
      assert.equal(existsSync(join(repo, `${host}/old.pdf.met`)), false, 'and its sidecar');
      assert.equal(existsSync(join(repo, `${host}/pubs/paper1.pdf.met`)), true);
    } finally {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a repository sink without repository_root and a jms sink without its broker, naming the parameter', async () => {
    const dir = tempDir('trawl-repo-');
    try {
      const a = await trawl(['crawl', '--data', join(dir, 'data'), config(dir, 'a', 'http://127.0.41.2:9/', attr('type', 'repository'))]);
      assert.notEqual(a.status, 0);
      assert.match(a.stderr, /trawl_sinks\.csx: the repository sink needs repository_root/);
      const b = await trawl(['crawl', '--data', join(dir, 'data'), config(dir, 'b', 'http://127.0.41.2:9/', attr('type', 'jms') + attr('repository_root', dir) + attr('repository_id', 'r1') + attr('broker_url', 'amqp://127.0.0.1:5672'))]);
      assert.notEqual(b.status, 0);
      assert.match(b.stderr, /trawl_sinks\.csx\.broker_url "amqp:\/\/127\.0\.0\.1:5672" has the scheme amqp:\/\//);
      const c = await trawl(['crawl', '--data', join(dir, 'data'), config(dir, 'c', 'http://127.0.41.2:9/', attr('type', 'jms') + attr('repository_root', dir))]);
      assert.notEqual(c.status, 0);
      assert.match(c.stderr, /the jms sink needs repository_id/);
      const d = await trawl(['crawl', '--data', join(dir, 'data'), config(dir, 'd', 'http://127.0.41.2:9/', attr('type', 'repository') + attr('repository_root', dir) + attr('hub_link_indicator', '.*(\\.(pdf)'))]);
      assert.notEqual(d.status, 0);
      assert.match(d.stderr, /trawl_sinks\.csx\.hub_link_indicator \/\.\*\(\\\.\(pdf\)\/ is not a valid regular expression/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const NEEDS = skipUnless(TOOLS.activemq, TOOLS.java, TOOLS.javac);

const BROKER_HOST = `127.0.44.${2 + Math.floor(Math.random() * 250)}`;
const BROKER_HOST_RE = BROKER_HOST.replaceAll('.', '\\.');

describe('trawl crawl announcing to ActiveMQ, read by a Java JMS client', { skip: NEEDS }, () => {
  let broker: Broker;
  let consumer: JmsConsumer;
  let work: string;
  before(async () => {
    work = tempDir('trawl-jms-');
    // STOMP on 61613 of an address of its own, so that the OpenWire URL maps onto it;
    // the address is drawn at random so that two checkouts running this file at once do not collide.
    broker = await startBroker(join(work, 'broker'), { host: BROKER_HOST, stompPort: 61613 });
    consumer = compileJmsConsumer(join(work, 'java'));
  });
  after(async () => {
    await broker?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const QUEUE = 'csx.ingestion.documentsToIngest';

  it('delivers every field value as written, whatever it looks like (null, numbers, XML and JSON characters)', async () => {
    const p = new StompProducer({ sink: 's', host: broker.host, port: broker.stompPort });
    const map = { JID: 'null', REPID: '0042', FILEPATH: 'a&b/<c>/"d\'/{e}:[f]', METAPATH: 'true', RESOURCETYPE: 'é ü 1.50' };
    try {
      await p.sendMaps('csx.test.values', [map]);
    } finally {
      await p.close();
    }
    const got = await consumer.consume(broker.openwireUrl, 'csx.test.values', -1, 2000);
    assert.deepEqual(got.map((m) => m.fields), [map]);
  });

  it('names the likely cause when a broker without XStream drops the connection on a MapMessage', async () => {
    const bare = await startBroker(join(work, 'bare-broker'), { host: '127.0.41.20', withoutXStream: true });
    const p = new StompProducer({ sink: 's', host: bare.host, port: bare.stompPort, timeoutMs: 10_000 });
    try {
      await assert.rejects(p.sendMaps('q', [{ A: 'b' }]), /jms sink s: stomp:\/\/127\.0\.41\.20:\d+: the broker closed the connection on a MapMessage \(transformation jms-map-xml needs XStream/);
    } finally {
      await p.close();
      await bare.stop();
    }
  });

  it('sends one MapMessage per file with JID, REPID, FILEPATH, METAPATH and RESOURCETYPE, the OpenWire URL mapped to STOMP', async () => {
    const state = { gone: false };
    const site = await paperSite('127.0.41.3', state);
    const h = site.host('127.0.41.3');
    const dir = join(work, 'one');
    const repo = join(dir, 'repo');
    mkdirSync(dir, { recursive: true });
    const cfg = config(dir, 'papers', h.url('/'),
      attr('type', 'jms') + attr('repository_root', repo) + attr('repository_id', 'heritrix1') + attr('client_id', 'heritrix1') + attr('broker_url', broker.openwireUrl));
    try {
      const r = await trawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', cfg]);
      assert.equal(r.status, 0, r.stderr);
      // The messages are persistent: they outlive a restart of the broker.
      await broker.stop();
      await broker.start();
      assert.match(r.stderr, new RegExp(`trawl: warning: collection papers: trawl_sinks\\.csx\\.broker_url: tcp://${BROKER_HOST_RE}:${broker.openwirePort} is ActiveMQ's OpenWire protocol.*STOMP to ${BROKER_HOST_RE}:61613`));
      const got = await consumer.consume(broker.openwireUrl, QUEUE, -1, 3000);
      assert.equal(got.length, 6, JSON.stringify(got));
      for (const m of got) {
        assert.equal(m.class, 'org.apache.activemq.command.ActiveMQMapMessage');
        assert.equal(m.map, true);
        assert.deepEqual(Object.keys(m.fields), ['FILEPATH', 'JID', 'METAPATH', 'REPID', 'RESOURCETYPE']);
        assert.equal(m.fields.JID, 'papers');
        assert.equal(m.fields.REPID, 'heritrix1');
        assert.equal(m.fields.RESOURCETYPE, 'article');
        assert.equal(m.fields.METAPATH, `${m.fields.FILEPATH}.met`);
        // The paths are relative to the repository root, and the file is there, whole, when the message is read.
        const meta = readCrawlData(join(repo, m.fields.METAPATH!));
        assert.equal(meta.SHA1, sha1(readFileSync(join(repo, m.fields.FILEPATH!))));
      }
      const host = `127.0.41.3%3A${h.port}`;
      assert.deepEqual(got.map((m) => m.fields.FILEPATH).sort(), [`${host}/index.html`, `${host}/old.pdf`, `${host}/pubs/get%3Fid=2.php`, `${host}/pubs/index.html`, `${host}/pubs/paper1.pdf`, `${host}/pubs/ps/paper3.ps.gz`]);
    } finally {
      await site.close();
    }
  });

  it('reads CiteSeerX\'s csx-heritrix.xml as the document gives it (--citeseerx), warning about each element it does not apply', async () => {
    const site = await paperSite('127.0.41.5', { gone: false });
    const h = site.host('127.0.41.5');
    const dir = join(work, 'csx');
    mkdirSync(dir, { recursive: true });
    const repo = join(dir, 'jobs');
    // The document's file, with ACTIVEMQ_HOST set to the broker's address as its Quick Install says.
    const csxFile = join(dir, 'csx-heritrix.xml');
    writeFileSync(csxFile, readFileSync(join(ROOT, 'test/fixtures/citeseerx/csx-heritrix.xml'), 'utf8').replace('ACTIVEMQ_HOST', broker.host));
    const cfg = config(dir, 'usersub', h.url('/'), attr('type', 'console'));
    try {
      const r = await trawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', '--citeseerx', csxFile, '--repository-root', repo, cfg]);
      assert.equal(r.status, 0, r.stderr);
      // trawl crawl applies the whole file but the submissions channel, which only trawl serve consumes.
      assert.match(r.stderr, new RegExp(`trawl: warning: ${csxFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: /serviceConfiguration/edu/psu/citeseerx/heritrix/jms/newSubmissionsChannel: not applied by trawl crawl`));
      assert.doesNotMatch(r.stderr, /autoSave|ConfigurationManager|documentsToIngest\]|hubLinkIndicator|statusUpdate|submissionProfile|queue\[/);
      assert.match(r.stderr, new RegExp(`trawl_sinks\\.citeseerx\\.broker_url: tcp://${BROKER_HOST_RE}:61616 is ActiveMQ's OpenWire protocol`));
      const got = await consumer.consume(broker.openwireUrl, QUEUE, -1, 3000);
      // As the User Submission profile writes: the PDFs (the profile's .*(\.(pdf))(\.(gz))?) as articles, and the page
      // linking papers (hubLinkIndicator .*(\.(pdf))(\.(g?z))?) as a hub; the start page, get.php and the .ps.gz are not written.
      const host = `127.0.41.5%3A${h.port}`;
      assert.deepEqual(got.map((m) => [m.fields.FILEPATH, m.fields.RESOURCETYPE]).sort(), [
        [`${host}/old.pdf`, 'article'], [`${host}/pubs/index.html`, 'hub'], [`${host}/pubs/paper1.pdf`, 'article'],
      ]);
      for (const m of got) {
        assert.equal(m.map, true);
        assert.deepEqual([m.fields.REPID, m.fields.JID], ['heritrix1', 'usersub']);
        assert.equal(readCrawlData(join(repo, m.fields.METAPATH!)).SHA1, sha1(readFileSync(join(repo, m.fields.FILEPATH!))));
      }
      assert.deepEqual(listFiles(repo).filter((f) => !f.endsWith('.met')), [`${host}/old.pdf`, `${host}/pubs/index.html`, `${host}/pubs/paper1.pdf`]);
      // The collection's own console sink is fed too.
      assert.equal(r.stdout.trim().split('\n').length, 6);
      const usage = await trawl(['crawl', '--data', join(dir, 'data'), '--citeseerx', csxFile, cfg]);
      assert.notEqual(usage.status, 0);
      assert.match(usage.stderr, /--citeseerx needs --repository-root DIR/);
    } finally {
      await site.close();
    }
  });

  it('loses no message while the broker is down: the files wait in the outbox and the next run announces each once', async () => {
    const state = { gone: false };
    const site = await paperSite('127.0.41.4', state);
    const h = site.host('127.0.41.4');
    const dir = join(work, 'outage');
    mkdirSync(dir, { recursive: true });
    const repo = join(dir, 'repo');
    const cfg = config(dir, 'outage', h.url('/'), attr('type', 'jms') + attr('repository_root', repo) + attr('repository_id', 'r2') + attr('job_id', 'job-42') + attr('ingestion_queue', 'csx.test.ingest') + attr('broker_url', broker.stompUrl));
    try {
      await broker.stop();
      const down = await trawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', '--feed-timeout', '2', cfg]);
      assert.equal(down.status, 3, down.stderr);
      assert.match(down.stderr, new RegExp(`jms sink csx: stomp://${BROKER_HOST_RE}:61613: `));
      // The files are written (the batch writes them before it sends), but nothing was announced.
      assert.equal(existsSync(join(repo, `127.0.41.4%3A${h.port}/index.html.met`)), true);
      await broker.start();
      const up = await trawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', cfg]);
      assert.equal(up.status, 0, up.stderr);
      assert.deepEqual(await consumer.consume(broker.openwireUrl, QUEUE, -1, 1000), [], 'nothing on the default queue');
      const got = await consumer.consume(broker.openwireUrl, 'csx.test.ingest', -1, 3000);
      const paths = got.map((m) => m.fields.FILEPATH!).sort();
      assert.equal(paths.length, 6, JSON.stringify(got));
      assert.equal(new Set(paths).size, 6, 'each file announced once');
      for (const m of got) assert.deepEqual([m.fields.JID, m.fields.REPID], ['job-42', 'r2']);
    } finally {
      await site.close();
    }
  });
  it('announces every file after trawl is killed (-9) while its messages wait for a stopped broker', async () => {
    const site = await paperSite('127.0.41.6', { gone: false });
    const h = site.host('127.0.41.6');
    const dir = join(work, 'kill');
    mkdirSync(dir, { recursive: true });
    const repo = join(dir, 'repo');
    const cfg = config(dir, 'killed', h.url('/'), attr('type', 'jms') + attr('repository_root', repo) + attr('repository_id', 'r3') + attr('ingestion_queue', 'csx.test.kill') + attr('broker_url', broker.stompUrl));
    try {
      await broker.stop();
      const child = spawn(process.execPath, [BIN, 'crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', '--feed-timeout', '60', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      // Killed once its feeder has written files and failed to announce them.
      const deadline = Date.now() + 60_000;
      const log = join(dir, 'data', 'logs', 'crawl.log');
      while (Date.now() < deadline && !(existsSync(log) && /jms sink csx: .*trying again/.test(readFileSync(log, 'utf8')))) await new Promise((r) => setTimeout(r, 100));
      assert.ok(Date.now() < deadline, `the feeder never failed: ${stderr}`);
      child.kill('SIGKILL');
      await exited;
      await broker.start();
      const again = await trawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', cfg]);
      assert.equal(again.status, 0, again.stderr);
      const got = await consumer.consume(broker.openwireUrl, 'csx.test.kill', -1, 3000);
      const paths = got.map((m) => m.fields.FILEPATH!);
      assert.equal(new Set(paths).size, paths.length, `no file announced twice: ${paths.join(' ')}`);
      const host = `127.0.41.6%3A${h.port}`;
      assert.deepEqual(paths.sort(), [`${host}/index.html`, `${host}/old.pdf`, `${host}/pubs/get%3Fid=2.php`, `${host}/pubs/index.html`, `${host}/pubs/paper1.pdf`, `${host}/pubs/ps/paper3.ps.gz`]);
      for (const m of got) assert.equal(readCrawlData(join(repo, m.fields.METAPATH!)).SHA1, sha1(readFileSync(join(repo, m.fields.FILEPATH!))));
    } finally {
      await site.close();
    }
  });
  it('trawl serve --citeseerx: the daemon announces each collection\'s files, connected with the file\'s clientID', async () => {
    const site = await paperSite('127.0.41.7', { gone: false });
    const h = site.host('127.0.41.7');
    const dir = join(work, 'serve');
    mkdirSync(dir, { recursive: true });
    const repo = join(dir, 'jobs');
    const csxFile = join(dir, 'csx-heritrix.xml');
    writeFileSync(csxFile, readFileSync(join(ROOT, 'test/fixtures/citeseerx/csx-heritrix.xml'), 'utf8').replace('ACTIVEMQ_HOST', broker.host));
    const cfg = config(dir, 'served', h.url('/'), attr('type', 'console'));
    const port = await freePort('127.0.0.1');
    const daemon = await spawnServe(['--data', join(dir, 'data'), '--port', String(port), '--allow-loopback', '--citeseerx', csxFile, '--repository-root', repo]);
    try {
      const add = await runAdmin(port, ['add', cfg]);
      assert.equal(add.status, 0, add.stderr);
      const got = await consumer.consume(broker.openwireUrl, QUEUE, 3, 30_000);
      assert.deepEqual(got.map((m) => m.fields.RESOURCETYPE).sort(), ['article', 'article', 'hub'], JSON.stringify(got));
      for (const m of got) {
        assert.deepEqual([m.map, m.fields.REPID, m.fields.JID], [true, 'heritrix1', 'served']);
        assert.equal(readCrawlData(join(repo, m.fields.METAPATH!)).SHA1, sha1(readFileSync(join(repo, m.fields.FILEPATH!))));
      }
      // The daemon's connection holds the JMS client ID clientID names: the broker refuses it to anyone else.
      await assert.rejects(consumer.consume(broker.openwireUrl, QUEUE, 0, 100, 'heritrix1'), /InvalidClientIDException/);
      assert.deepEqual(await consumer.consume(broker.openwireUrl, QUEUE, 0, 100, 'someone-else'), []);
    } finally {
      daemon.kill('SIGKILL');
      await site.close();
    }
  });
});
