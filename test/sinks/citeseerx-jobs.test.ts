// CiteSeerX submitted jobs and URL Status Messages: URL Submission Messages
// produced by a Java JMS client (javac against Debian's ActiveMQ jars) are
// consumed by `trawl serve --citeseerx` as the document's csx-heritrix.xml
// configures it; each becomes a job (a collection) whose files are announced
// on documentsToIngest and whose failed URIs are reported on statusUpdates,
// read back by the Java client as javax.jms.MapMessage getters. Also: the
// acknowledgement rule against the real broker, and a kill -9 of the daemon
// with a broker outage.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { hash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { heritrixStatus, statusToReport } from '../../src/core/heritrix-status.ts';
import { readCsxHeritrix } from '../../src/config/csx-heritrix.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { SubmissionConsumer, SubmissionRefused } from '../../src/service/submission-consumer.ts';
import { jobCollectionName, jobConfig, parseSubmission, userSubmissionProfile, USER_SUBMISSION_AGENT, USER_SUBMISSION_FROM } from '../../src/service/submission-job.ts';
import { mapMessageXml } from '../../src/sinks/stomp-producer.ts';
import { ROOT } from '../helpers.ts';
import { compileJmsConsumer, startBroker, type Broker, type JmsConsumer, type JmsMessage } from '../support/activemq.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { TRAWL_BIN } from '../support/daemon.ts';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { freePort } from '../support/ports.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';
import { runTrawl } from '../support/trawl-cli.ts';
import { listFiles, readCrawlData } from '../support/repository-files.ts';

const sha1 = (b: Uint8Array | string): string => hash('sha1', b, 'hex');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
// Drawn at random so that two checkouts running this file at once do not take each other's STOMP port 61613.
const BROKER_HOST = `127.0.45.${2 + Math.floor(Math.random() * 250)}`;
const INGEST = 'csx.ingestion.documentsToIngest';
const STATUS = 'csx.ingestion.statusUpdates';
const SUBMIT = 'csx.ingestion.newSubmissions';

describe('submitted jobs and status codes, without a broker', () => {
  it('reads a URL Submission Message (JID, URL one a line, DESC) and refuses one without JID or with a bad URL', () => {
    const ok = parseSubmission(mapMessageXml({ JID: 'USUB-a1', URL: 'http://a.test/x.html\n\n  https://b.test/y.pdf\r\n', DESC: 'two' }));
    assert.deepEqual(ok, { jid: 'USUB-a1', urls: ['http://a.test/x.html', 'https://b.test/y.pdf'], desc: 'two' });
    assert.deepEqual(parseSubmission('<map><entry><string>JID</string><int>7</int></entry><entry><string>URL</string><string>http://a.test/</string></entry><entry><string>DESC</string><null/></entry></map>'), { jid: '7', urls: ['http://a.test/'], desc: '' });
    assert.match((parseSubmission(mapMessageXml({ URL: 'http://a.test/' })) as { problem: string }).problem, /no JID/);
    assert.match((parseSubmission(mapMessageXml({ JID: 'j', URL: ' ' })) as { problem: string }).problem, /job j has no URL/);
    assert.match((parseSubmission(mapMessageXml({ JID: 'j', URL: 'ftp://a.test/\nhttp://b.test/' })) as { problem: string }).problem, /not an absolute http\(s\) URL: "ftp:\/\/a\.test\/"/);
    assert.match((parseSubmission('plain text') as { problem: string }).problem, /not a MapMessage/);
  });

  it('names a job after its JID when the JID is a safe name, and makes its configuration from the profile', () => {
    assert.equal(jobCollectionName('USUB-alice1188'), 'USUB-alice1188');
    assert.equal(jobCollectionName('../etc'), `job-${sha1('../etc')}`);
    assert.equal(jobCollectionName('a b'), `job-${sha1('a b')}`);
    const job = jobConfig(userSubmissionProfile(), 'USUB-j', { jid: 'USUB-j', urls: ['http://a.test/'], desc: 'd' });
    const s = resolveSettings(job, {});
    assert.deepEqual(s.startUris, ['http://a.test/']);
    assert.deepEqual([s.submission.jobId, s.submission.description], ['USUB-j', 'd']);
    assert.equal(s.crawlmode.mode, 'DEPTH:1');
    assert.equal(s.crawlmode.resetLevel, false);
    assert.equal(s.delayS, 2);
    assert.deepEqual(s.headers, [`User-Agent: ${USER_SUBMISSION_AGENT}`, `From: ${USER_SUBMISSION_FROM}`]);
    assert.ok(s.urls.canonicalization.includes('strip-wwwn') && s.urls.canonicalization.includes('strip-userinfo'));
    assert.ok(!s.excludeExts.includes('.gz'));
  });

  it('maps failures to Heritrix\'s fetch status codes and leaves out the codes never reported', () => {
    const failed = (httpStatus: number | undefined, code: string | undefined, reason = ''): number => heritrixStatus({ kind: 'failed', httpStatus, code, reason });
    assert.equal(failed(404, undefined), 404);
    assert.equal(failed(503, undefined), 503);
    assert.equal(failed(undefined, 'co', 'connect ECONNREFUSED 127.0.0.1:9'), -2);
    assert.equal(failed(undefined, 'co', 'getaddrinfo ENOTFOUND nowhere.test'), -6);
    assert.equal(failed(undefined, 'co', 'site unreachable (robots.txt: DNS: no address for nowhere.test)'), -6);
    assert.equal(failed(undefined, 'co', 'site unreachable (robots.txt: 10.0.0.1 is a private address; refused unless --allow-private-networks)'), -5001);
    assert.equal(failed(undefined, 'ct'), -2);
    assert.equal(failed(undefined, 'ti'), -4);
    assert.equal(failed(undefined, 'ne'), -3);
    assert.equal(failed(undefined, 'ot'), -5);
    assert.equal(heritrixStatus({ kind: 'refused', code: 'ro' }), -9998);
    assert.equal(heritrixStatus({ kind: 'refused', code: 'rl' }), -5003);
    assert.equal(heritrixStatus({ kind: 'refused', code: 'de' }), -5000);
    assert.equal(heritrixStatus({ kind: 'blocked' }), -5001);
    for (const c of [301, 302, 303, 304, 307, 300, 100, 101]) assert.equal(statusToReport({ kind: 'failed', httpStatus: c, code: undefined, reason: '' }), undefined, String(c));
    assert.equal(statusToReport({ kind: 'failed', httpStatus: 410, code: undefined, reason: '' }), 410);
  });

  it('reads csx-heritrix.xml\'s channels, roles and acknowledge modes, refusing a queue with the wrong role', () => {
    const dir = tempDir('trawl-csx-');
    try {
      const doc = readFileSync(join(ROOT, 'test/fixtures/citeseerx/csx-heritrix.xml'), 'utf8');
      const file = join(dir, 'csx.xml');
      writeFileSync(file, doc);
      const served = readCsxHeritrix(file, dir, true);
      assert.deepEqual(served.warnings, []);
      assert.deepEqual(served.submissions, { queue: SUBMIT, profile: 'CSX_User_Submission' });
      assert.equal(served.sink.statusQueue, STATUS);
      const crawl = readCsxHeritrix(file, dir, false);
      assert.equal(crawl.submissions, undefined);
      assert.deepEqual(crawl.warnings.map((w) => w.replace(`${file}: `, '')), [`/serviceConfiguration/edu/psu/citeseerx/heritrix/jms/newSubmissionsChannel: not applied by trawl crawl: only trawl serve consumes URL Submission Messages (${SUBMIT})`]);
      writeFileSync(file, doc.replace(/(<name>csx\.ingestion\.newSubmissions<\/name>\s*<role>)consumer/, '$1producer'));
      assert.throws(() => readCsxHeritrix(file, dir, true), /queue\[name=csx\.ingestion\.newSubmissions\]\/role: the newSubmissionsChannel queue must have the role consumer, not "producer"/);
      writeFileSync(file, doc.replace(/(<name>csx\.ingestion\.newSubmissions<\/name>\s*<role>consumer<\/role>\s*<acknowledgeMode>)CLIENT_ACKNOWLEDGE/, '$1AUTO_ACKNOWLEDGE'));
      assert.match(readCsxHeritrix(file, dir, true).warnings.join('\n'), /acknowledgeMode: AUTO_ACKNOWLEDGE not applied: trawl acknowledges each URL Submission Message once its job is stored/);
      writeFileSync(file, doc.replace(/(<name>csx\.ingestion\.statusUpdates<\/name>\s*<role>)producer/, '$1consumer'));
      assert.throws(() => readCsxHeritrix(file, dir, true), /the statusUpdateChannel queue must have the role producer/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const NEEDS = skipUnless(TOOLS.activemq, TOOLS.java, TOOLS.javac);

const PDF1 = new TextEncoder().encode('%PDF-1.4 a submitted paper\n%%EOF\n');
const PDF3 = new TextEncoder().encode('%PDF-1.4 the paper a 301 leads to\n%%EOF\n');
const PDFGZ = gzipSync(Buffer.from('%PDF-1.4 a gzipped paper\n%%EOF\n'));
const PDFB = new TextEncoder().encode('%PDF-1.4 a paper on the second host\n%%EOF\n');

const PUBS_HTML = '<title>Pubs</title><a href="paper1.pdf">1</a> <a href="paper2.pdf.gz">2</a> <a href="missing.pdf">gone</a> <a href="moved.pdf">moved</a> <a href="about.html">about</a>';
const LIST_HTML = '<title>List</title><a href="b.pdf">b</a> <a href="gone.html">gone</a> <a href="/private/p.pdf">private</a>';

/** Host A: a publications page (a hub) linking PDFs, a .pdf.gz, a 404 and a 301; host B: a list with a 404 and a page robots.txt forbids. */
async function submissionSite(a: string, b: string): Promise<FixtureSite> {
  return startFixtureSite([
    {
      ip: a,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nDisallow:\n' },
        '/pubs.html': { kind: 'html', body: PUBS_HTML },
        '/about.html': { kind: 'html', body: '<title>About</title><a href="deeper.pdf">a paper, too deep for depth 1</a>' },
        '/paper1.pdf': { kind: 'binary', bytes: PDF1, contentType: 'application/pdf' },
        '/paper2.pdf.gz': { kind: 'binary', bytes: PDFGZ, contentType: 'application/x-gzip' },
        '/paper3.pdf': { kind: 'binary', bytes: PDF3, contentType: 'application/pdf' },
        '/moved.pdf': { kind: 'redirect', to: '/paper3.pdf', status: 301 },
        '/missing.pdf': { kind: 'status', status: 404 },
      },
    },
    {
      ip: b,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nDisallow: /private/\n' },
        '/list.html': { kind: 'html', body: LIST_HTML },
        '/b.pdf': { kind: 'binary', bytes: PDFB, contentType: 'application/pdf' },
        '/gone.html': { kind: 'status', status: 404 },
      },
    },
  ]);
}

interface Daemon {
  child: ChildProcess;
  port: number;
  /** The daemon's log lines (pino JSON on stdout) and stderr so far. */
  log(): string;
  exited: Promise<void>;
}

/** `trawl serve --citeseerx` with its log kept; resolves once it listens. */
async function serve(dir: string, csxFile: string, repo: string, port: number): Promise<Daemon> {
  const child = spawn(process.execPath, [TRAWL_BIN, 'serve', '--data', join(dir, 'data'), '--port', String(port), '--allow-loopback', '--citeseerx', csxFile, '--repository-root', repo], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 60_000;
  while (!out.includes('serving MS-FSCADM')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`trawl serve did not start: ${out}`);
    await sleep(100);
  }
  return { child, port, log: () => out, exited };
}

async function waitFor(what: string, test: () => boolean | Promise<boolean>, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** The document's csx-heritrix.xml, its ACTIVEMQ_HOST set to the broker's address (its Quick Install's one edit). */
function csxFileIn(dir: string): string {
  const file = join(dir, 'csx-heritrix.xml');
  writeFileSync(file, readFileSync(join(ROOT, 'test/fixtures/citeseerx/csx-heritrix.xml'), 'utf8').replace('ACTIVEMQ_HOST', BROKER_HOST));
  return file;
}

describe('CiteSeerX submissions over a real ActiveMQ broker, with a Java JMS client', { skip: NEEDS }, () => {
  let broker: Broker;
  let java: JmsConsumer;
  let work: string;
  before(async () => {
    work = tempDir('trawl-csx-jobs-');
    // STOMP on 61613 of an address of its own, where the document's tcp://ACTIVEMQ_HOST:61616 is mapped to.
    broker = await startBroker(join(work, 'broker'), { host: BROKER_HOST, stompPort: 61613 });
    java = compileJmsConsumer(join(work, 'java'));
  });
  after(async () => {
    await broker?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('acknowledges a submission only once its job is stored: one not stored is redelivered, one that can never be a job goes to the dead-letter queue', async () => {
    const log = pino({ level: 'silent' });
    const endpoint = { host: broker.host, port: broker.stompPort };
    const queue = 'csx.test.ackrule';
    // A job that cannot be stored yet: the message must stay with the broker.
    let attempts = 0;
    const failing = new SubmissionConsumer({ label: 'test', endpoint, queue, profile: 'p' }, { log, retryMs: 100, createJob: async () => {
      attempts++;
      throw new Error('the crawl store is unavailable');
    } });
    failing.start();
    await java.produce(broker.openwireUrl, queue, { JID: 'USUB-ack1', URL: 'http://a.test/', DESC: 'not stored' });
    await waitFor('the consumer to try the job', () => attempts >= 2, 30_000);
    await failing.stop();
    const back = await java.consume(broker.openwireUrl, queue, -1, 2000);
    assert.deepEqual(back.map((m) => m.fields.JID), ['USUB-ack1'], 'the message was not acknowledged');

    // Stored: acknowledged, so nothing is left; refused for good: to ActiveMQ.DLQ.
    const made: string[] = [];
    const storing = new SubmissionConsumer({ label: 'test', endpoint, queue, profile: 'p' }, { log, createJob: async (s) => {
      if (s.jid === 'USUB-bad') throw new SubmissionRefused('a rule refuses it');
      made.push(s.jid);
      return { name: s.jid, created: true };
    } });
    storing.start();
    await java.produce(broker.openwireUrl, queue, { JID: 'USUB-ack2', URL: 'http://a.test/', DESC: 'stored' });
    await java.produce(broker.openwireUrl, queue, { JID: 'USUB-bad', URL: 'http://a.test/', DESC: '' });
    await java.produce(broker.openwireUrl, queue, { URL: 'http://a.test/', DESC: 'no JID' });
    await waitFor('the job', () => made.length === 1, 30_000);
    await sleep(1000);
    await storing.stop();
    assert.deepEqual(made, ['USUB-ack2']);
    assert.deepEqual(await java.consume(broker.openwireUrl, queue, -1, 1500), [], 'the stored job\'s message was acknowledged, the others NACKed');
    const dead = await java.consume(broker.openwireUrl, 'ActiveMQ.DLQ', -1, 2000);
    assert.deepEqual(dead.map((m) => m.fields.JID ?? '(none)').sort(), ['(none)', 'USUB-bad']);
  });

  it('trawl serve --citeseerx: a Java producer\'s submission becomes a job whose files and failed URIs are announced', async () => {
    const site = await submissionSite('127.0.43.1', '127.0.43.2');
    const a = site.host('127.0.43.1');
    const b = site.host('127.0.43.2');
    const dir = join(work, 'e2e');
    mkdirSync(dir, { recursive: true });
    const repo = join(dir, 'jobs');
    const csx = csxFileIn(dir);
    const port = await freePort('127.0.0.1');
    const daemon = await serve(dir, csx, repo, port);
    try {
      assert.doesNotMatch(daemon.log(), /newSubmissionsChannel|statusUpdateChannel|submissionProfile|not applied/, 'the document\'s file is applied whole');
      await java.produce(broker.openwireUrl, SUBMIT, { JID: 'USUB-alice1', URL: `${a.url('/pubs.html')}\n${b.url('/list.html')}`, DESC: 'Alice\'s pages' });
      const docs = await java.consume(broker.openwireUrl, INGEST, 7, 90_000);
      const statuses = await java.consume(broker.openwireUrl, STATUS, 3, 30_000);
      const hostA = `127.0.43.1%3A${a.port}`;
      const hostB = `127.0.43.2%3A${b.port}`;
      assert.deepEqual(docs.map((m) => [m.fields.FILEPATH, m.fields.RESOURCETYPE]).sort(), [
        // about.html (depth 1) links a PDF: a hub, though the PDF itself lies beyond depth 1.
        [`${hostA}/about.html`, 'hub'], [`${hostA}/paper1.pdf`, 'article'], [`${hostA}/paper2.pdf.gz`, 'article'], [`${hostA}/paper3.pdf`, 'article'], [`${hostA}/pubs.html`, 'hub'],
        [`${hostB}/b.pdf`, 'article'], [`${hostB}/list.html`, 'hub'],
      ]);
      for (const m of docs) {
        assert.equal(m.map, true);
        assert.deepEqual(Object.keys(m.fields), ['FILEPATH', 'JID', 'METAPATH', 'REPID', 'RESOURCETYPE']);
        assert.deepEqual([m.fields.JID, m.fields.REPID, m.fields.METAPATH], ['USUB-alice1', 'heritrix1', `${m.fields.FILEPATH}.met`]);
        const meta = readCrawlData(join(repo, m.fields.METAPATH!));
        assert.deepEqual(Object.keys(meta).filter((k) => k !== 'parentUrl'), ['crawlDate', 'url', 'contentType', 'SHA1']);
        assert.equal(meta.SHA1, sha1(readFileSync(join(repo, m.fields.FILEPATH!))), m.fields.FILEPATH);
      }
      assert.equal(readCrawlData(join(repo, `${hostA}/paper2.pdf.gz.met`)).SHA1, sha1(PDFGZ), 'the gzipped paper as the server sent it');
      // One message per 404 and for the URI robots.txt forbids; none for the 301, the 200s, or what lies deeper than depth 1.
      assert.deepEqual(statuses.map((m) => [m.fields.URL, m.fields.STATUS]).sort(), [
        [a.url('/missing.pdf'), '404'], [b.url('/gone.html'), '404'], [b.url('/private/p.pdf'), '-9998'],
      ]);
      for (const m of statuses) {
        assert.equal(m.map, true);
        assert.deepEqual(Object.keys(m.fields), ['JID', 'STATUS', 'TYPE', 'URL']);
        assert.deepEqual([m.fields.TYPE, m.fields.JID], ['1', 'USUB-alice1']);
        assert.deepEqual([m.types.TYPE, m.types.STATUS, m.types.JID, m.types.URL], ['Integer', 'Integer', 'String', 'String']);
      }
      assert.deepEqual(await java.consume(broker.openwireUrl, STATUS, -1, 1500), [], 'nothing more');
      assert.ok(!site.fetchedPaths('127.0.43.1').includes('/deeper.pdf'), 'depth 1 from the seeds');
      const req = site.requests.find((r) => r.path === '/paper1.pdf')!;
      assert.equal(req.headers['user-agent'], USER_SUBMISSION_AGENT);
      assert.equal(req.headers.from, USER_SUBMISSION_FROM);

      // The job is a collection: trawl admin sees and steers it.
      const list = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'list'], { timeoutMs: 60_000 });
      assert.match(list.out, /USUB-alice1/);
      const cfg = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'config', 'USUB-alice1'], { timeoutMs: 60_000 });
      assert.match(cfg.out, /<section name="trawl_submission">[\s\S]*USUB-alice1[\s\S]*Alice's pages/);
      const suspend = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'suspend', 'USUB-alice1'], { timeoutMs: 60_000 });
      assert.equal(suspend.code, 0, suspend.err);
      const status = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'status', 'USUB-alice1'], { timeoutMs: 60_000 });
      assert.match(status.out, /suspended/);

      // The same JID again (a redelivery): acknowledged, no second job, nothing fetched again.
      const before = site.requests.length;
      await java.produce(broker.openwireUrl, SUBMIT, { JID: 'USUB-alice1', URL: a.url('/pubs.html'), DESC: 'again' });
      await waitFor('the repeated submission', () => /submitted job already exists/.test(daemon.log()), 30_000);
      assert.deepEqual(await java.consume(broker.openwireUrl, SUBMIT, -1, 1000), [], 'acknowledged');
      assert.equal(site.requests.length, before);
      const del = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'delete', 'USUB-alice1'], { timeoutMs: 60_000 });
      assert.equal(del.code, 0, del.err);
    } finally {
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      await site.close();
    }
  });

  it('the same from trawl_sinks: a collection whose jms sink has submission_queue is the profile of the jobs, which report on its status_queue', async () => {
    const site = await submissionSite('127.0.43.5', '127.0.43.6');
    const a = site.host('127.0.43.5');
    const b = site.host('127.0.43.6');
    const dir = join(work, 'sections');
    mkdirSync(dir, { recursive: true });
    const repo = join(dir, 'repo');
    const attr = (n: string, v: string): string => `<attrib name="${n}" type="string">${v}</attrib>`;
    // The profile crawls a page of its own that is a 404: it is no submitted job, so that failure is not reported.
    writeFileSync(join(dir, 'profile.xml'), `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="csxprofile">
      <attrib name="start_uris" type="list-string"><member>${b.url('/gone.html')}</member></attrib>
      <attrib name="delay" type="real">0</attrib>
      <attrib name="allowed_types" type="list-string"><member>*/*</member></attrib>
      <attrib name="exclude_exts" type="list-string"><member>.jpg</member></attrib>
      <section name="crawlmode"><attrib name="mode" type="string">DEPTH:1</attrib><attrib name="reset_level" type="boolean">no</attrib></section>
      <section name="trawl_sinks"><section name="csx">${attr('type', 'jms') + attr('repository_root', repo) + attr('repository_id', 'r9') + attr('broker_url', broker.stompUrl)
        + attr('ingestion_queue', 'csx.test.ingest9') + attr('status_queue', 'csx.test.status9') + attr('submission_queue', 'csx.test.submit9') + attr('hub_link_indicator', '.*(\\.(pdf))(\\.(g?z))?')}</section></section>
    </DomainSpecification></CrawlerConfig>`);
    const port = await freePort('127.0.0.1');
    const child = spawn(process.execPath, [TRAWL_BIN, 'serve', '--data', join(dir, 'data'), '--port', String(port), '--allow-loopback'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      await waitFor('the daemon', () => out.includes('serving MS-FSCADM'), 60_000);
      const add = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'add', join(dir, 'profile.xml')], { timeoutMs: 60_000 });
      assert.equal(add.code, 0, add.err);
      await waitFor('the consumer', () => out.includes('consuming URL Submission Messages'), 30_000);
      await java.produce(broker.openwireUrl, 'csx.test.submit9', { JID: 'USUB-carol3', URL: a.url('/pubs.html'), DESC: 'from the sections' });
      const docs = await java.consume(broker.openwireUrl, 'csx.test.ingest9', 5, 60_000);
      const hostA = `127.0.43.5%3A${a.port}`;
      assert.deepEqual(docs.map((m) => m.fields.FILEPATH).sort(), [`${hostA}/about.html`, `${hostA}/paper1.pdf`, `${hostA}/paper2.pdf.gz`, `${hostA}/paper3.pdf`, `${hostA}/pubs.html`]);
      for (const m of docs) assert.deepEqual([m.fields.JID, m.fields.REPID], ['USUB-carol3', 'r9']);
      const statuses = await java.consume(broker.openwireUrl, 'csx.test.status9', -1, 3000);
      assert.deepEqual(statuses.map((m) => [m.fields.JID, m.fields.URL, m.fields.STATUS]), [['USUB-carol3', a.url('/missing.pdf'), '404']], 'the job\'s 404 only: not the profile\'s own');
      const cfg = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'config', 'USUB-carol3'], { timeoutMs: 60_000 });
      assert.match(cfg.out, /<section name="trawl_submission">\s*<attrib name="job_id" type="string">\s*USUB-carol3\s*<\/attrib>\s*<attrib name="description" type="string">\s*from the sections\s*<\/attrib>/);
      assert.match(cfg.out, /status_queue/);
      assert.doesNotMatch(cfg.out, /submission_queue/, 'a job takes no submissions itself');
      // A graceful stop ends the consumer and the shared connection: the daemon exits by itself.
      child.kill('SIGTERM');
      const code = await Promise.race([new Promise<number | null>((r) => child.once('exit', (c) => r(c))), sleep(60_000).then(() => 'hung' as const)]);
      assert.equal(code, 0, out.slice(-2000));
    } finally {
      child.kill('SIGKILL');
      await exited;
      await site.close();
    }
  });

  it('announces every file of a job once trawl serve, killed (-9) while its messages wait for a stopped broker, runs again', async () => {
    const site = await submissionSite('127.0.43.3', '127.0.43.4');
    const a = site.host('127.0.43.3');
    const b = site.host('127.0.43.4');
    // The seeds answer only once the broker is down, so that every message of the job waits for it.
    let openGate: () => void = () => {};
    const gate = new Promise<void>((r) => (openGate = r));
    for (const [ip, path, body] of [['127.0.43.3', '/pubs.html', PUBS_HTML], ['127.0.43.4', '/list.html', LIST_HTML]] as const) {
      site.setRoute(ip, path, (_req, res) => void gate.then(() => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(body);
      }));
    }
    const dir = join(work, 'kill');
    mkdirSync(dir, { recursive: true });
    const repo = join(dir, 'jobs');
    const csx = csxFileIn(dir);
    const port = await freePort('127.0.0.1');
    let daemon = await serve(dir, csx, repo, port);
    try {
      // The profile is the daemon's collection named as submissionProfile when there is one: here without delay, and crawling nothing itself.
      writeFileSync(join(dir, 'profile.xml'), `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="CSX_User_Submission">
        <attrib name="delay" type="real">0</attrib>
        <attrib name="allowed_types" type="list-string"><member>*/*</member></attrib>
        <attrib name="exclude_exts" type="list-string"><member>.jpg</member></attrib>
        <section name="crawlmode"><attrib name="mode" type="string">DEPTH:1</attrib><attrib name="reset_level" type="boolean">no</attrib></section>
      </DomainSpecification></CrawlerConfig>`);
      const add = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'add', join(dir, 'profile.xml')], { timeoutMs: 60_000 });
      assert.equal(add.code, 0, add.err);
      await java.produce(broker.openwireUrl, SUBMIT, { JID: 'USUB-bob2', URL: `${a.url('/pubs.html')}\n${b.url('/list.html')}`, DESC: 'killed' });
      await waitFor('the job', () => /submitted job created/.test(daemon.log()), 60_000);
      const cfg = await runTrawl(['admin', '--server', `http://127.0.0.1:${port}`, 'config', 'USUB-bob2'], { timeoutMs: 60_000 });
      assert.match(cfg.out, /<attrib name="delay" type="real">\s*0(\.0)?\s*<\/attrib>/, 'made from the CSX_User_Submission collection');
      // The broker goes away: the job's files are written, their messages wait in the outbox.
      await broker.stop();
      openGate();
      await waitFor('files written and not announced', () => listFiles(repo).filter((f) => !f.endsWith('.met')).length >= 3 && /jms sink citeseerx: .*trying again/.test(daemon.log()), 90_000);
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      await broker.start();
      daemon = await serve(dir, csx, repo, port);
      const docs = await java.consume(broker.openwireUrl, INGEST, 7, 120_000);
      const more = await java.consume(broker.openwireUrl, INGEST, -1, 3000);
      const all = [...docs, ...more];
      const hostA = `127.0.43.3%3A${a.port}`;
      const hostB = `127.0.43.4%3A${b.port}`;
      assert.deepEqual([...new Set(all.map((m) => m.fields.FILEPATH))].sort(), [`${hostA}/about.html`, `${hostA}/paper1.pdf`, `${hostA}/paper2.pdf.gz`, `${hostA}/paper3.pdf`, `${hostA}/pubs.html`, `${hostB}/b.pdf`, `${hostB}/list.html`]);
      // At least once: a file announced twice is the same file (same sidecar SHA1), never two contents.
      const seen = new Map<string, string>();
      for (const m of all) {
        assert.equal(m.fields.JID, 'USUB-bob2');
        const sum = readCrawlData(join(repo, m.fields.METAPATH!)).SHA1!;
        assert.equal(sum, sha1(readFileSync(join(repo, m.fields.FILEPATH!))));
        assert.equal(seen.get(m.fields.FILEPATH!) ?? sum, sum);
        seen.set(m.fields.FILEPATH!, sum);
      }
      const statuses: JmsMessage[] = await java.consume(broker.openwireUrl, STATUS, 3, 60_000);
      assert.deepEqual([...new Set(statuses.map((m) => `${m.fields.URL} ${m.fields.STATUS}`))].sort(), [`${a.url('/missing.pdf')} 404`, `${b.url('/gone.html')} 404`, `${b.url('/private/p.pdf')} -9998`].sort());
      assert.deepEqual(await java.consume(broker.openwireUrl, SUBMIT, -1, 1000), [], 'the submission was acknowledged once its job was stored');
      assert.equal((daemon.log().match(/submitted job created/g) ?? []).length, 0, 'the restarted daemon made no second job');
    } finally {
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      await site.close();
    }
  });
});
