// Feeding: the feeder drains the feed outbox of a real SQLite crawl store
// into real sinks (files on disk), and `trawl crawl` feeds what it fetches
// from a real HTTP server on loopback. The one stand-in is FlakySink, a
// wrapper that makes the file sink fail on purpose, because a disk that
// fails on cue cannot be had here.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Feeder } from '../../src/sinks/feeder.ts';
import { FileSink } from '../../src/sinks/file-sink.ts';
import type { Sink, SinkOp, SinkResult } from '../../src/sinks/sink.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { startFixtureSite } from '../support/fixture-site.ts';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import { rec } from '../store/crawl-store-suite.ts';
import { sha1, storeWithDocs } from '../support/feed-store.ts';
import { runTrawl } from '../support/trawl-cli.ts';


/** Runs the CLI without blocking this process (the fixture site answers from it). */
async function trawl(args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const r = await runTrawl(args, { timeoutMs: 120_000 });
  return { status: r.code, stdout: r.out, stderr: r.err };
}

/** Fails the first `failures` batches (after writing them, when `afterWrite`), then passes them through. */
class FlakySink implements Sink {
  readonly type = 'flaky';
  readonly name = 'flaky';
  submits = 0;
  private readonly inner: Sink;
  private failures: number;
  private readonly afterWrite: boolean;
  constructor(inner: Sink, failures: number, afterWrite = false) {
    this.inner = inner;
    this.failures = failures;
    this.afterWrite = afterWrite;
  }
  async submit(batch: readonly SinkOp[]): Promise<SinkResult> {
    this.submits++;
    if (this.failures > 0) {
      this.failures--;
      if (this.afterWrite) await this.inner.submit(batch);
      throw new Error('disk on fire');
    }
    return this.inner.submit(batch);
  }
  async close(): Promise<void> {}
}

function files(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

describe('the feeder', () => {
  it('sends each destination its documents, keeps a paused destination\'s in the outbox, and sends deletions', async () => {
    const dir = tempDir('trawl-feed-');
    const urls = ['http://a.test/1', 'http://a.test/2'];
    const { store, content } = await storeWithDocs(dir, urls);
    const out = join(dir, 'out');
    const paused = new Set(['B']);
    const feeder = new Feeder({
      store, content, collection: 'c', destinations: new Map([['A', 'ccA'], ['B', 'ccB']]), sinks: [new FileSink('f', out)], paused: (d) => paused.has(d),
    });
    try {
      await store.queueFeed('c', urls.flatMap((url) => [{ destination: 'A', url, op: 'add' as const }, { destination: 'B', url, op: 'add' as const }]));
      assert.equal(await feeder.drain(5000), 0);
      assert.deepEqual(files(join(out, 'ccA')), urls.map((u) => `${sha1(u)}.json`).sort());
      assert.deepEqual(files(join(out, 'ccB')), []);
      assert.deepEqual(await store.feedBacklog('c'), { B: 2 });
      const doc = JSON.parse(readFileSync(join(out, 'ccA', `${sha1(urls[0]!)}.json`), 'utf8')) as Record<string, unknown>;
      assert.deepEqual([doc.title, doc.body_content, doc.collection, doc.content_hash], [urls[0], `text of ${urls[0]}`, 'ccA', sha1(urls[0]!)]);
      paused.delete('B');
      feeder.poke();
      assert.equal(await feeder.drain(5000), 0);
      assert.equal(files(join(out, 'ccB')).length, 2);
      // Forgotten in the crawl store: the destinations delete it.
      await store.deleteUris('c', [urls[1]!], ['A', 'B']);
      assert.equal(await feeder.drain(5000), 0);
      assert.deepEqual(files(join(out, 'ccA')), [`${sha1(urls[0]!)}.json`]);
      assert.deepEqual(files(join(out, 'ccB')), [`${sha1(urls[0]!)}.json`]);
      assert.deepEqual(feeder.counters, { PPFed: 4, PPSucceeded: 4, PPFailed: 0, PPDeleted: 2, PPAdded: 4, PPModified: 0 });
    } finally {
      await feeder.stop();
      await content.close();
      await store.close();
    }
  });

  it('keeps a batch its sink failed in the outbox and sends it again (at least once, nothing lost)', async () => {
    const dir = tempDir('trawl-feed-');
    const urls = ['http://a.test/1', 'http://a.test/2', 'http://a.test/3'];
    const { store, content } = await storeWithDocs(dir, urls);
    const out = join(dir, 'out');
    const flaky = new FlakySink(new FileSink('f', out), 1, true);
    const errors: string[] = [];
    const feeder = new Feeder({
      store, content, collection: 'c', destinations: new Map([['default', 'c']]), sinks: [flaky], paused: () => false, onError: (m) => errors.push(m), batchSize: 2,
    });
    try {
      await store.queueFeed('c', urls.map((url) => ({ destination: 'default', url, op: 'update' as const })));
      assert.equal(await feeder.drain(10_000), 0);
      assert.equal(files(join(out, 'c')).length, 3);
      assert.equal(errors.length, 1);
      assert.match(errors[0]!, /disk on fire; trying again in 1 s/);
      // The failed batch of two was written, failed, and sent again; then the third document.
      assert.equal(flaky.submits, 3);
      assert.deepEqual([feeder.counters.PPFed, feeder.counters.PPModified, feeder.counters.PPFailed], [3, 3, 0]);
      assert.equal(feeder.lastError, undefined);
    } finally {
      await feeder.stop();
      await content.close();
      await store.close();
    }
  });

  it('sends a delete for a document whose content is gone, and survives a reopened store', async () => {
    const dir = tempDir('trawl-feed-');
    const { store, content } = await storeWithDocs(dir, ['http://a.test/1']);
    const out = join(dir, 'out');
    const sink = new FileSink('f', out);
    // A stale file at the sink for a URL the store no longer has content for.
    await sink.submit([{ op: 'index', doc: { id: sha1('http://a.test/gone'), url: 'http://a.test/gone', collection: 'c' } as never }]);
    await store.putRecord('c', rec('http://a.test/gone', { status: 'deleted', contentRef: undefined }));
    await store.queueFeed('c', [{ destination: 'default', url: 'http://a.test/gone', op: 'update' }, { destination: 'default', url: 'http://a.test/1', op: 'add' }]);
    await store.close();
    const reopened = new SqliteCrawlStore(join(dir, 'trawl.db'));
    const feeder = new Feeder({ store: reopened, content, collection: 'c', destinations: new Map([['default', 'c']]), sinks: [sink], paused: () => false });
    try {
      assert.equal(await feeder.drain(5000), 0);
      assert.deepEqual(files(join(out, 'c')), [`${sha1('http://a.test/1')}.json`]);
      assert.deepEqual([feeder.counters.PPDeleted, feeder.counters.PPAdded], [1, 1]);
    } finally {
      await feeder.stop();
      await content.close();
      await reopened.close();
    }
  });
});

describe('trawl crawl feeds its sinks', () => {
  it('indexes the pages it stores, updates changed ones, deletes gone ones, and prints them with the console sink', async () => {
    let version = 1;
    const site = await startFixtureSite([{
      ip: '127.0.5.1',
      routes: {
        '/': { kind: 'html', body: '<title>Home</title><a href="/a.html">a</a> <a href="/b.html">b</a> <a href="/doc.pdf">pdf</a>' },
        '/a.html': (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(`<title>A</title><h1>Version ${version}</h1>`);
        },
        '/b.html': (_req, res) => {
          res.writeHead(version === 1 ? 200 : 404, { 'content-type': 'text/html' });
          res.end('<title>B</title>');
        },
        '/doc.pdf': { kind: 'binary', bytes: new TextEncoder().encode('%PDF-1.4 tiny'), contentType: 'application/pdf' },
      },
    }]);
    const dir = tempDir('trawl-feedcli-');
    const out = join(dir, 'out');
    const h = site.host('127.0.5.1');
    const config = join(dir, 'c.xml');
    writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="shop">
      <attrib name="start_uris" type="list-string"><member>${h.url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib>
      <section name="http_errors"><attrib name="404" type="string">DELETE</attrib></section>
      <section name="trawl_sinks">
        <section name="disk"><attrib name="type" type="string">file</attrib><attrib name="output_dir" type="string">${out}</attrib></section>
        <section name="screen"><attrib name="type" type="string">console</attrib></section>
      </section>
    </DomainSpecification></CrawlerConfig>`);
    const crawl = () => trawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', '--json', config]);
    const docFile = (path: string): string => join(out, 'shop', `${sha1(h.url(path))}.json`);
    try {
      const first = await crawl();
      assert.equal(first.status, 0, first.stderr);
      // With a console sink on, standard output holds its documents and nothing else; the summary is on stderr.
      const lines = first.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual(lines.map((l) => [l.op, l.url]).sort(), [['index', h.url('/')], ['index', h.url('/a.html')], ['index', h.url('/b.html')], ['index', h.url('/doc.pdf')]]);
      const summary = JSON.parse(first.stderr.slice(first.stderr.indexOf('{\n'))) as { collections: Array<{ feeding: Record<string, number> }> };
      assert.deepEqual(summary.collections[0]!.feeding, { PPFed: 4, PPSucceeded: 4, PPFailed: 0, PPDeleted: 0, PPAdded: 4, PPModified: 0, waiting: 0 });
      const a1 = JSON.parse(readFileSync(docFile('/a.html'), 'utf8')) as Record<string, unknown>;
      assert.deepEqual([a1.title, a1.headings, a1.body_content], ['A', ['Version 1'], 'Version 1']);
      const pdf = JSON.parse(readFileSync(docFile('/doc.pdf'), 'utf8')) as Record<string, unknown>;
      assert.equal(Buffer.from(pdf.body_base64 as string, 'base64').toString(), '%PDF-1.4 tiny');

      version = 2;
      const second = await crawl();
      assert.equal(second.status, 0, second.stderr);
      const s2 = JSON.parse(second.stderr.slice(second.stderr.indexOf('{\n'))) as { collections: Array<{ feeding: Record<string, number> }> };
      // a.html changed (an update), b.html is 404 with DELETE (a deletion); / and the PDF did not change (nothing sent).
      assert.deepEqual(s2.collections[0]!.feeding, { PPFed: 1, PPSucceeded: 1, PPFailed: 0, PPDeleted: 1, PPAdded: 0, PPModified: 1, waiting: 0 });
      assert.deepEqual((JSON.parse(readFileSync(docFile('/a.html'), 'utf8')) as { headings: string[] }).headings, ['Version 2']);
      assert.equal(existsSync(docFile('/b.html')), false);
      assert.equal(existsSync(docFile('/')), true);
    } finally {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a sink type this version cannot deliver to, naming it, before crawling', async () => {
    const dir = tempDir('trawl-feedcli-');
    const config = join(dir, 'c.xml');
    writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="q">
      <attrib name="start_uris" type="list-string"><member>http://127.0.5.2:9/</member></attrib>
      <section name="trawl_sinks"><section name="bus"><attrib name="type" type="string">warc</attrib></section></section>
    </DomainSpecification></CrawlerConfig>`);
    const r = await trawl(['crawl', '--data', join(dir, 'data'), config]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /trawl_sinks\.bus\.type warc is not available in this version of trawl \(available: console, file, elasticsearch, repository, jms\)/);
    assert.doesNotMatch(r.stdout, /requests/);
  });
});
