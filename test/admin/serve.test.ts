// The real daemon (`trawl serve` in a child process) driven by Python's
// standard xmlrpc.client, a client nobody here wrote, through every
// MS-FSCADM method; then malformed input, persistence across kill -9, and
// the bearer token.
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe, TRAWL_BIN as BIN } from '../support/daemon.ts';
import { freePort } from '../support/ports.ts';


function startDaemon(data: string, port: number, extra: string[] = []): Promise<ChildProcess> {
  return spawnServe(['--data', data, '--port', String(port), '--allow-loopback', ...extra]);
}

/** Runs a Python script with `s` = ServerProxy(url); the script prints one JSON document. */
function python(url: string, body: string): unknown {
  const script = `import json, sys, xmlrpc.client\ns = xmlrpc.client.ServerProxy(${JSON.stringify(url)})\ndef fault(f, *a):\n    try:\n        f(*a)\n        return None\n    except xmlrpc.client.Fault as e:\n        return [e.faultCode, e.faultString]\n${body}`;
  const r = spawnSync('python3', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** Where the file sink keeps a document: <output_dir>/<content collection>/<sha1 of the URL>.json */
function sinkFile(data: string, url: string): string {
  return join(data, 'out', 'news_index', `${createHash('sha1').update(url).digest('hex')}.json`);
}

async function until(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('trawl serve over XML-RPC', () => {
  let site: FixtureSite;
  let daemon: ChildProcess;
  let url: string;
  let data: string;
  let port: number;
  let config: string;

  before(async () => {
    site = await startFixtureSite([{
      ip: '127.0.4.1',
      routes: {
        '/': { kind: 'html', body: '<a href="/a.html">a</a> <a href="/b.html">b</a> <a href="/news/1.html">n</a>' },
        '/a.html': { kind: 'html', body: '<p>a</p>' }, '/b.html': { kind: 'html', body: '<p>b</p>' }, '/news/1.html': { kind: 'html', body: '<p>n1</p>' },
        '/added.html': { kind: 'html', body: '<p>added by AddURIs</p>' },
      },
    }]);
    data = tempDir('trawl-serve-');
    port = await freePort();
    daemon = await startDaemon(data, port);
    url = `http://127.0.0.1:${port}/RPC2`;
    config = join(data, 'c.xml');
    writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="web">
      <attrib name="start_uris" type="list-string"><member>${site.host('127.0.4.1').url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib><attrib name="refresh" type="real">600</attrib>
      <section name="feeding"><section name="news"><attrib name="collection" type="string">news_index</attrib></section></section>
      <section name="passwd"><attrib name="http://127.0.4.1/" type="string">bob:hunter2</attrib></section>
      <section name="trawl_sinks"><section name="out"><attrib name="type" type="string">file</attrib><attrib name="output_dir" type="string">${join(data, 'out')}</attrib></section></section>
      <SubDomain name="newsroom"><attrib name="refresh" type="real">60</attrib><section name="include_uris"><attrib name="prefix" type="list-string"><member>${site.host('127.0.4.1').url('/news/')}</member></attrib></section></SubDomain>
    </DomainSpecification></CrawlerConfig>`);
  });
  after(async () => {
    daemon?.kill('SIGKILL');
    await site?.close();
  });

  it('answers every management method as the spec says', () => {
    const r = python(url, `
print(json.dumps({
  'log': s.GetLogLevel(), 'setlog': s.SetLogLevel(0x04 | 0x08 | 0x10), 'log2': s.GetLogLevel(), 'badlog': fault(s.SetLogLevel, 0x1000),
  'managers': s.GetSiteManagerNum(), 'distributed': s.IsDistributed(), 'multi': s.IsMultiNodeScheduler(),
  'ports': fault(s.GetNodeSchedulerXmlRpcPorts),
  'empty': s.CollectionGetList(),
}))`) as Record<string, unknown>;
    assert.equal(r.log, 0x04 | 0x10 | 0x20 | 0x40);
    assert.equal(r.setlog, 1);
    assert.equal(r.log2, 0x1c);
    assert.equal((r.badlog as [number, string])[0], 1);
    assert.deepEqual([r.managers, r.distributed, r.multi], [1, 0, 0]);
    assert.deepEqual((r.ports as [number, string])[0], 1);
    assert.match((r.ports as [number, string])[1], /not a multinode scheduler/);
    assert.deepEqual(r.empty, []);
  });

  it('adds a collection, crawls it, and reports status and statistics', async () => {
    const r = python(url, `print(json.dumps({'add': s.CollectionAdd(open(${JSON.stringify(config)}).read(), 0), 'list': s.CollectionGetList(), 'status': s.CollectionGetStatus('web')}))`) as Record<string, unknown>;
    assert.deepEqual(r.add, [1, 'collection web added or updated']);
    assert.deepEqual(r.list, ['web']);
    assert.equal(r.status, 'crawling');
    await until(() => site.fetchedPaths('127.0.4.1').length >= 5);
    assert.deepEqual(site.fetchedPaths('127.0.4.1').sort(), ['/', '/a.html', '/b.html', '/news/1.html', '/robots.txt']);
    // Statistics: the 4.3 shape (cur/complete with the flattened keys) once the cycle is merged.
    await until(() => {
      const st = python(url, `print(json.dumps(s.CollectionGetStatistics2('web'), default=str))`) as [number, Record<string, Record<string, unknown>>];
      return st[0] === 1 && (st[1].complete?.Stored as number | undefined) === 4;
    });
    const st = python(url, `
r = s.CollectionGetStatistics2('web')
r[1]['cur'] = r[1]['complete']  # the finished cycle is in complete (cur is the next, empty cycle)
g = s.GetGlobalStatistics()
full = s.CollectionGetStatistics('web')
site = s.CollectionGetSiteStatistics('web', '127.0.4.1:${site.host('127.0.4.1').port}')
print(json.dumps({'keys': sorted(r[1]['cur'].keys()), 'cur': {k: r[1]['cur'][k] for k in ['Processed', 'Downloaded', 'Stored', 'DocumentStore', 'Status']}, 'progress': r[1]['cur']['Progress'],
  'types': {k: type(r[1]['cur'][k]).__name__ for k in ['Downloaded', 'Epoch', 'MimeType', 'Progress', 'Status']},
  'global': sorted(g[1].keys()), 'full': sorted(full.keys()), 'site': sorted(site.keys())}))`) as Record<string, Record<string, unknown> | string[]>;
    assert.deepEqual(st.cur, { Processed: 4, Downloaded: 4, Stored: 4, DocumentStore: 4, Status: 'Crawling' });
    // Every stored page went to the file sink, for the destination's content collection.
    const h = site.host('127.0.4.1');
    await until(() => ['/', '/a.html', '/b.html', '/news/1.html'].every((p) => existsSync(sinkFile(data, h.url(p)))));
    const doc = JSON.parse(readFileSync(sinkFile(data, h.url('/news/1.html')), 'utf8')) as Record<string, unknown>;
    assert.deepEqual([doc.url, doc.body_content, doc.collection, doc.crawl_collection, doc.url_path_dir1, doc.http_status], [h.url('/news/1.html'), 'n1', 'news_index', 'web', 'news', 200]);
    await until(() => {
      const pp = python(url, `print(json.dumps(s.CollectionGetStatistics2('web')[1]['complete'], default=str))`) as Record<string, unknown>;
      return pp.PPFed === 4 && pp.PPAdded === 4;
    });
    for (const k of ['DocSizeAvg', 'DocSizeMax', 'DLTimeAvg', 'DLTimeMax', 'DocRate', 'DataRateIn', 'DataRateOut', 'HTTPResponse', 'URISkip', 'DocSkip', 'FirstUpdate']) assert.ok((st.keys as string[]).includes(k), k);
    assert.deepEqual(st.types, { Downloaded: 'float', Epoch: 'int', MimeType: 'dict', Progress: 'list', Status: 'str' });
    assert.deepEqual(st.global, ['complete', 'delta']);
    assert.deepEqual(st.full, ['dspec', 'global', 'web']);
    assert.equal((st.site as string[]).includes('dspec'), true);
  });

  it('changes state with suspend, resume, refresh-only and feeding, with faults for the wrong state', () => {
    const r = python(url, `
print(json.dumps({
  'suspend': s.CollectionSuspend('web'), 'again': fault(s.CollectionSuspend, 'web'), 'status': s.CollectionGetStatus('web'),
  'resume': s.CollectionResume('web'), 'resume2': fault(s.CollectionResume, 'web'), 'status2': s.CollectionGetStatus('web'),
  'ro': s.CollectionEnableRefreshOnly('web'), 'mode': s.CollectionGetStatistics2('web')[1].get('cur', {}).get('CrawlMode'), 'rw': s.CollectionDisableRefreshOnly('web'),
  'sfeed': s.CollectionSuspendFeeding('web', 'news'), 'sfeed2': fault(s.CollectionSuspendFeeding, 'web', 'news'), 'rfeed': s.CollectionResumeFeeding('web', 'news'),
  'nodest': fault(s.CollectionSuspendFeeding, 'web', 'nowhere'),
  'routing': s.CollectionGetSiteRoutingAddress('web', '127.0.4.1:80'), 'badhp': fault(s.CollectionGetSiteRoutingAddress, 'web', 'no port'),
  'nocoll': fault(s.CollectionGetStatus, 'nope'),
}))`) as Record<string, unknown>;
    assert.deepEqual(r.suspend, [1, 'collection web suspended']);
    assert.equal((r.again as [number, string])[0], 1);
    assert.equal(r.status, 'suspended');
    assert.deepEqual(r.resume, [1, 'collection web resumed']);
    assert.match((r.resume2 as [number, string])[1], /not suspended/);
    assert.equal(r.status2, 'crawling');
    assert.equal((r.ro as [number, string])[0], 1);
    assert.equal((r.rw as [number, string])[0], 1);
    assert.deepEqual([(r.sfeed as number[])[0], (r.rfeed as number[])[0]], [1, 1]);
    assert.match((r.sfeed2 as [number, string])[1], /already suspended/);
    assert.match((r.nodest as [number, string])[1], /no content destination "nowhere"/);
    assert.deepEqual(r.routing, [1, ['127.0.0.1', port]]);
    assert.match((r.badhp as [number, string])[1], /not a hostport/);
    assert.match((r.nocoll as [number, string])[1], /no collection named "nope"/);
  });

  it('feeds its sinks: reprocess re-sends stored documents, paused feeding waits, refeed and deletes reach the sink', async () => {
    const h = site.host('127.0.4.1');
    const news = sinkFile(data, h.url('/news/1.html'));
    const a = sinkFile(data, h.url('/a.html'));
    rmSync(news);
    rmSync(a);
    const r = python(url, `print(json.dumps({
  'suspend': s.CollectionSuspendFeeding('web', ''),
  'prefix': s.CollectionReprocessSitePrefix('web', '127.0.4.1:${h.port}', ${JSON.stringify(h.url('/news/'))}, 'news'),
  'unknown': fault(s.CollectionReprocessSite, 'web', 'elsewhere', '127.0.4.1:${h.port}'),
  'bycc': s.CollectionReprocessURI('web', 'default:news_index', [${JSON.stringify(h.url('/a.html'))}, 'not a url', 7]),
  'nocc': fault(s.CollectionReprocessURI, 'web', 'default:other', []),
  'badhp': fault(s.CollectionReprocessSite, 'web', '', 'nohostport'),
  'fd': dict(s.CollectionGetStatistics('web')['web'][1]['cOmPIEtE']['multidimension'])['FeedingDestinations'][0], 'feeding': s.CollectionGetStatistics2('web')[1]['cur'].get('Feeding'),
}))`) as Record<string, unknown>;
    assert.deepEqual(r.suspend, [1, 'feeding to news suspended; documents wait in the feed outbox until it resumes']);
    assert.deepEqual(r.prefix, [1, `1 documents of 127.0.4.1:${h.port} under ${JSON.stringify(h.url('/news/'))} queued for news`]);
    assert.match((r.unknown as [number, string])[1], /no content destination "elsewhere" \(it has: news\)/);
    assert.deepEqual(r.bycc, [1, '1 of 1 URIs queued for default:news_index; not absolute URIs, skipped: "not a url", a int']);
    assert.match((r.nocc as [number, string])[1], /feeds content collection "other"/);
    assert.match((r.badhp as [number, string])[1], /not a hostport/);
    assert.deepEqual([r.fd, r.feeding], [{ news: [0] }, 0]); // 2.2.4.6.4: a paused destination's row is [0]
    // Suspended: nothing reaches the sink (the feeder looks at least once a second).
    await new Promise((res) => setTimeout(res, 1500));
    assert.equal(existsSync(news) || existsSync(a), false);
    python(url, `s.CollectionResumeFeeding('web', 'news'); print(1)`);
    await until(() => existsSync(news) && existsSync(a));
    // Refeed: an unchanged page is fed again after its refetch.
    rmSync(a);
    const fetches = site.fetchedPaths('127.0.4.1').filter((p) => p === '/a.html').length;
    assert.deepEqual(python(url, `print(json.dumps(s.CollectionRefetchURI('web', ${JSON.stringify(h.url('/a.html'))}, 1, 0, 1)))`), [1, '1 URIs queued again']);
    await until(() => existsSync(a));
    assert.equal(site.fetchedPaths('127.0.4.1').filter((p) => p === '/a.html').length, fetches + 1);
    // A deleted URI is deleted at the sink.
    const b = sinkFile(data, h.url('/b.html'));
    assert.equal(existsSync(b), true);
    assert.deepEqual(python(url, `print(json.dumps(s.CollectionDeleteURIs('web', [${JSON.stringify(h.url('/b.html'))}])))`), [1, '1 documents deleted']);
    await until(() => !existsSync(b));
  });

  it('adds URIs that are crawled at once, refetches, and deletes URIs and sites', async () => {
    const h = site.host('127.0.4.1');
    const r = python(url, `print(json.dumps({'add': s.AddURIs('web', 1, [${JSON.stringify(h.url('/added.html'))}, 'not a url']), 'bad': fault(s.AddURIs, 'web', 2, [])}))`) as Record<string, unknown>;
    assert.match((r.add as [number, string])[1], /^1 URIs added; 1 refused/);
    assert.match((r.bad as [number, string])[1], /Urgent must be 0 or 1/);
    await until(() => site.fetchedPaths('127.0.4.1').includes('/added.html'));
    const before = site.fetchedPaths('127.0.4.1').filter((p) => p === '/a.html').length;
    const r2 = python(url, `print(json.dumps({'uri': s.CollectionRefetchURI('web', ${JSON.stringify(h.url('/a.html'))}, 0, 0, 1), 'sub': s.CollectionRefetch('web', 'newsroom'), 'nosub': fault(s.CollectionRefetch, 'web', 'nosuch')}))`) as Record<string, unknown>;
    assert.deepEqual(r2.uri, [1, '1 URIs queued again']);
    assert.deepEqual(r2.sub, [1, '1 URIs of sub-collection newsroom queued again']);
    assert.match((r2.nosub as [number, string])[1], /no sub-collection "nosuch"/);
    await until(() => site.fetchedPaths('127.0.4.1').filter((p) => p === '/a.html').length > before);
    const uriFile = join(data, 'uri-files', 'uris.txt'); // the default URI file folder
    writeFileSync(uriFile, `${h.url('/a.html')}\n# a comment\n${h.url('/added.html')}\n`);
    const r4 = python(url, `print(json.dumps({'file': s.AddURIFile('web', 0, ${JSON.stringify(uriFile)}), 'relative': fault(s.AddURIFile, 'web', 0, 'uris.txt'), 'nocoll': fault(s.AddURIFile, 'nope', 0, ${JSON.stringify(uriFile)}),
      'delfile': s.CollectionDeleteURIFile('web', ${JSON.stringify(uriFile)})}))`) as Record<string, unknown>;
    assert.deepEqual(r4.file, [1, '0 URIs added; 2 already in this cycle']); // both already queued or crawled in this cycle: not a failure
    assert.match((r4.relative as [number, string])[1], /absolute path/);
    assert.match((r4.nocoll as [number, string])[1], /no collection named "nope"/);
    assert.deepEqual(r4.delfile, [1, '2 documents deleted']);
    const r3 = python(url, `print(json.dumps({'uris': s.CollectionDeleteURIs('web', [${JSON.stringify(h.url('/news/1.html'))}]), 'site': s.CollectionDeleteSite('web', '127.0.4.1:${h.port}'), 'pre': s.CollectionPreemptSite('web', '127.0.4.1:${h.port}'), 'q': s.CollectionQuarantineSite('web', '127.0.4.1:${h.port}', 5),
      'rep': s.CollectionReprocessURI('web', '', []), 'reps': s.CollectionReprocessSite('web', 'news', '127.0.4.1:${h.port}'), 'repp': s.CollectionReprocessSitePrefix('web', '127.0.4.1:${h.port}', '/news/', 'news'),
      'refetch': s.CollectionRefetch('web', '')}))`) as Record<string, unknown>;
    assert.deepEqual(r3.reps, [1, `0 documents of 127.0.4.1:${h.port} queued for news`]); // the site was deleted just before
    assert.deepEqual(r3.repp, [1, `0 documents of 127.0.4.1:${h.port} under "/news/" queued for news`]);
    assert.deepEqual(r3.refetch, [1, 'a new refresh cycle starts now']);
    assert.deepEqual(r3.uris, [1, '1 documents deleted']);
    assert.match((r3.site as [number, string])[1], /^[1-9]\d* documents of 127\.0\.4\.1:\d+ deleted$/);
    assert.equal((r3.pre as number[])[0], 1);
    assert.equal((r3.q as number[])[0], 1);
    assert.deepEqual(r3.rep, [1, '0 of 0 URIs queued for every destination']);
    // The site's documents are gone from the sink too.
    await until(() => !existsSync(sinkFile(data, h.url('/'))));
  });

  it('returns the configuration with secrets masked, merges a partial CollectionAdd', () => {
    const r = python(url, `
x = s.CollectionGetConfigurationXML('web')
s.CollectionAdd('<CrawlerConfig><DomainSpecification name="web"><attrib name="max_pending" type="integer">3</attrib></DomainSpecification></CrawlerConfig>', 0)
y = s.CollectionGetConfigurationXML('web')
print(json.dumps({'secret': 'hunter2' in x, 'masked': 'bob:********' in x, 'merged': '<attrib name="max_pending" type="integer"> 3 </attrib>' in y, 'kept': 'news_index' in y,
  'bad': fault(s.CollectionAdd, '<CrawlerConfig><DomainSpecification name="web"><attrib name="delay" type="real">soon</attrib></DomainSpecification></CrawlerConfig>', 0)}))`) as Record<string, unknown>;
    assert.deepEqual([r.secret, r.masked, r.merged, r.kept], [false, true, true, true]);
    assert.match((r.bad as [number, string])[1], /TRAWL_ERR_CONFIG_TYPE: line 1: delay: expected a number/);
  });

  it('faults on malformed calls and keeps answering', async () => {
    const post = async (body: string | Buffer, headers: Record<string, string> = {}) => {
      const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'text/xml', ...headers } });
      return { status: res.status, text: await res.text() };
    };
    const bodies: Array<[string, string | Buffer, RegExp]> = [
      ['garbage', 'this is not xml', /<name>faultCode<\/name><value><int>1<\/int>[\s\S]*TRAWL_ERR_XMLRPC_PARSE/],
      ['truncated', '<?xml version="1.0"?><methodCall><methodName>CollectionGetList</methodName><params>', /TRAWL_ERR_XMLRPC_PARSE/],
      ['xxe', '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><methodCall><methodName>&e;</methodName></methodCall>', /TRAWL_ERR_XMLRPC_DTD/],
      ['billion laughs', `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><methodCall><methodName>&b;</methodName></methodCall>`, /TRAWL_ERR_XMLRPC_DTD/],
      ['unknown method', '<?xml version="1.0"?><methodCall><methodName>Nope</methodName><params/></methodCall>', /unknown method "Nope"/],
      ['wrong type', '<?xml version="1.0"?><methodCall><methodName>CollectionGetStatus</methodName><params><param><value><int>5</int></value></param></params></methodCall>', /Collection must be a string, not int/],
      ['missing param', '<?xml version="1.0"?><methodCall><methodName>AddURIs</methodName><params><param><value>web</value></param></params></methodCall>', /takes 3 parameters, not 1/],
      ['bad int', '<?xml version="1.0"?><methodCall><methodName>SetLogLevel</methodName><params><param><value><int>99999999999</int></value></param></params></methodCall>', /TRAWL_ERR_XMLRPC_TYPE/],
    ];
    for (const [name, body, want] of bodies) {
      const r = await post(body);
      assert.equal(r.status, 200, name);
      assert.match(r.text, want, name);
      assert.match(r.text, /<fault>/, name);
    }
    // A body over the limit is refused from its Content-Length, before it is read.
    const huge = await new Promise<string>((resolve, reject) => {
      const sock = connect(port, '127.0.0.1', () => sock.write(`POST /RPC2 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/xml\r\nContent-Length: ${17 * 1024 * 1024}\r\n\r\n<methodCall>`));
      let got = '';
      sock.on('data', (d) => {
        got += d.toString();
        if (got.includes('\r\n\r\n')) sock.destroy();
      });
      sock.on('close', () => resolve(got));
      sock.on('error', reject);
    });
    assert.match(huge, /^HTTP\/1\.1 413/);
    const get = await fetch(url);
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    // Still answering.
    assert.deepEqual(python(url, 'print(json.dumps(s.CollectionGetList()))'), ['web']);
  });

  it('keeps collections, state and statistics across kill -9, and deletes collections (zombie, then gone)', async () => {
    // Two changes to the collection's persisted state at the same moment, from two connections: both must survive.
    python(url, `
import threading
s.CollectionSuspend('web')
def call(m, *a):
    getattr(xmlrpc.client.ServerProxy(${JSON.stringify(url)}), m)(*a)
ts = [threading.Thread(target=call, args=('CollectionSuspendFeeding', 'web', 'news')), threading.Thread(target=call, args=('CollectionEnableRefreshOnly', 'web'))]
[t.start() for t in ts]
[t.join() for t in ts]
print('1')`);
    const stored = (python(url, `print(json.dumps(s.CollectionGetStatistics('web')['web'][1]['cOmPIEtE']['continuous'], default=str))`) as unknown[]).length;
    assert.ok(stored > 0);
    daemon.kill('SIGKILL');
    await new Promise((r) => daemon.once('exit', r));
    daemon = await startDaemon(data, port);
    const r = python(url, `
st = s.CollectionGetStatistics2('web')
print(json.dumps({'list': s.CollectionGetList(), 'status': s.CollectionGetStatus('web'), 'stored': st[1]['complete'].get('Stored'), 'fed': st[1]['complete'].get('PPFed'),
  'mode': st[1].get('cur', {}).get('CrawlMode'), 'rw': s.CollectionDisableRefreshOnly('web'),
  'feeding': fault(s.CollectionSuspendFeeding, 'web', 'news')}))`) as Record<string, unknown>;
    assert.deepEqual(r.list, ['web']);
    assert.equal(r.status, 'suspended');
    assert.match((r.feeding as [number, string] | null)?.[1] ?? 'feeding was running again', /already suspended/);
    assert.match(String(r.mode), /^Refreshing/);
    // The same call twice at once: one resumes, the other is told feeding already runs.
    const twice = python(url, `
import threading
out = []
def resume():
    try:
        xmlrpc.client.ServerProxy(${JSON.stringify(url)}).CollectionResumeFeeding('web', 'news')
        out.append('ok')
    except xmlrpc.client.Fault as e:
        out.append(e.faultString)
ts = [threading.Thread(target=resume) for _ in range(2)]
[t.start() for t in ts]
[t.join() for t in ts]
print(json.dumps(sorted(out)))`) as string[];
    assert.equal(twice.filter((x) => x === 'ok').length, 1, JSON.stringify(twice));
    assert.match(twice.find((x) => x !== 'ok') ?? '', /already running/);
    assert.ok((r.fed as number) >= 4, JSON.stringify(r));
    assert.ok((r.stored as number) >= 4, JSON.stringify(r));
    // Right after the call the collection is a zombie, or already gone when its deletion was quick.
    const d = python(url, `
deleted = s.CollectionDelete('web', 0)
try:
    status = s.CollectionGetStatus('web')
except xmlrpc.client.Fault as e:
    status = [e.faultCode, e.faultString]
print(json.dumps({'del': deleted, 'status': status}))`) as Record<string, unknown>;
    assert.deepEqual(d.del, [1, 'collection web is being deleted']);
    const status = d.status;
    assert.ok(status === 'zombie' || (Array.isArray(status) && /no collection named "web"/.test(String(status[1]))), JSON.stringify(status));
    await until(() => (python(url, 'print(json.dumps(s.CollectionGetList()))') as string[]).length === 0);
    // The name is free again.
    const again = python(url, `print(json.dumps(s.CollectionAdd(open(${JSON.stringify(config)}).read(), 0)))`);
    assert.deepEqual(again, [1, 'collection web added or updated']);
  });

  it('trawl admin speaks to the daemon: tables by default, JSON on request', () => {
    const admin = (...args: string[]) => spawnSync(process.execPath, [BIN, 'admin', '--server', `http://127.0.0.1:${port}`, ...args], { encoding: 'utf8' });
    const list = admin('list');
    assert.equal(list.status, 0, list.stderr);
    assert.equal(list.stdout.trim(), 'web');
    const status = admin('--json', 'status', 'web');
    assert.equal((JSON.parse(status.stdout) as { status: string }).status, 'crawling');
    const info = admin('info');
    assert.match(info.stdout, /distributed\s+0/);
    const added = admin('add-uris', 'web', site.host('127.0.4.1').url('/added.html'));
    assert.match(added.stdout, /^ok: /);
    const bad = admin('suspend', 'nope');
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /no collection named "nope"/);
    const stats = admin('stats', 'web');
    assert.equal(stats.status, 0, stats.stderr);
  });

  it('requires the bearer token when one is set, and a token to listen off loopback', async () => {
    const tokenFile = join(data, 'token');
    writeFileSync(tokenFile, 'a-long-enough-secret-token\n');
    const p2 = await freePort();
    const d2 = await startDaemon(tempDir(), p2, ['--token-file', tokenFile]);
    try {
      const noToken = await fetch(`http://127.0.0.1:${p2}/RPC2`, { method: 'POST', body: '<methodCall><methodName>GetLogLevel</methodName></methodCall>', headers: { 'content-type': 'text/xml' } });
      assert.equal(noToken.status, 401);
      const withToken = await fetch(`http://127.0.0.1:${p2}/RPC2`, { method: 'POST', body: '<methodCall><methodName>GetLogLevel</methodName></methodCall>', headers: { 'content-type': 'text/xml', authorization: 'Bearer a-long-enough-secret-token' } });
      assert.match(await withToken.text(), /<int>116<\/int>/);
    } finally {
      d2.kill('SIGKILL');
    }
    const open = spawnSync(process.execPath, [BIN, 'serve', '--host', '0.0.0.0', '--data', tempDir()], { encoding: 'utf8' });
    assert.equal(open.status, 64);
    assert.match(open.stderr, /needs --token-file/);
  });
});
