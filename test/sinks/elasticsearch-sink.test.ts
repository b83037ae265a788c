// The Elasticsearch sink against a stand-in for Elasticsearch's _bulk API: a
// real HTTP server on loopback that parses the NDJSON it receives and
// answers the way Elasticsearch documents it (an `errors` flag and one item
// per action, each with its own status). Elasticsearch itself is not in
// Debian's archive nor on npm, so it cannot run here; the stand-in is the
// one mock in this file, and everything the sink sent is asserted on the
// bytes that reached it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ElasticsearchSink, indexNameOf } from '../../src/sinks/elasticsearch-sink.ts';
import { Feeder } from '../../src/sinks/feeder.ts';
import { openSinks } from '../../src/sinks/open-sinks.ts';
import type { SinkOp } from '../../src/sinks/sink.ts';
import type { SearchDocument } from '../../src/sinks/document.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { sha1, storeWithDocs } from '../support/feed-store.ts';

import { actions, allOk, StandIn } from '../support/es-standin.ts';

const doc = (url: string, collection = 'Web News'): SearchDocument => ({
  id: sha1(url), url, url_scheme: 'http', url_host: 'a.test', url_port: '80', url_path: new URL(url).pathname,
  last_crawled_at: '2026-01-01T00:00:00.000Z', collection, crawl_collection: 'c', content_length: 3, body_content: 'abc',
});

describe('the elasticsearch sink', () => {
  const es = new StandIn();
  before(() => es.start());
  after(() => es.stop());

  it('posts NDJSON to _bulk: index with the document, delete by id, the index named after the content collection', async () => {
    es.received.length = 0;
    es.answer = allOk;
    const sink = new ElasticsearchSink('es', { type: 'elasticsearch', url: `${es.url}/` });
    const ops: SinkOp[] = [
      { op: 'index', doc: doc('http://a.test/1') },
      { op: 'delete', id: sha1('http://a.test/2'), url: 'http://a.test/2', collection: 'Web News' },
    ];
    assert.deepEqual(await sink.submit(ops), { rejected: [] });
    assert.equal(es.received.length, 1);
    const r = es.received[0]!;
    assert.equal(r.method, 'POST');
    assert.equal(r.path, '/_bulk');
    assert.equal(r.headers['content-type'], 'application/x-ndjson');
    assert.equal(r.headers.authorization, undefined);
    assert.ok(r.raw.endsWith('\n'), 'the bulk body ends with a newline, as _bulk requires');
    assert.deepEqual(r.lines, [
      { index: { _index: 'web-news', _id: sha1('http://a.test/1') } },
      doc('http://a.test/1'),
      { delete: { _index: 'web-news', _id: sha1('http://a.test/2') } },
    ]);
    // An empty batch sends nothing.
    assert.deepEqual(await sink.submit([]), { rejected: [] });
    assert.equal(es.received.length, 1);
  });

  it('writes the schema it is set to: open_crawler documents as they are, one that schema does not index as a delete', async () => {
    es.received.length = 0;
    es.answer = allOk;
    const sink = new ElasticsearchSink('es', { type: 'elasticsearch', url: es.url, schema: 'open_crawler' });
    const oc = { id: sha1('http://a.test/1'), url: 'http://a.test/1', body: 'abc', url_port: 80 };
    await sink.submit([
      { op: 'index', doc: { ...doc('http://a.test/1'), openCrawler: oc } },
      { op: 'index', doc: { ...doc('http://a.test/f.png'), openCrawler: null } },
    ]);
    assert.deepEqual(es.received[0]!.lines, [
      { index: { _index: 'web-news', _id: sha1('http://a.test/1') } },
      oc,
      { delete: { _index: 'web-news', _id: sha1('http://a.test/f.png') } },
    ]);
  });

  it('uses the configured index and pipeline, and authenticates with an API key or a user', async () => {
    es.received.length = 0;
    es.answer = allOk;
    await new ElasticsearchSink('es', { url: es.url, index: 'crawl', pipeline: 'my pipe', apiKey: 'S2V5' }).submit([{ op: 'index', doc: doc('http://a.test/1') }]);
    await new ElasticsearchSink('es', { url: es.url, username: 'elastic', password: 'pä:ss' }).submit([{ op: 'index', doc: doc('http://a.test/1') }]);
    const [a, b] = es.received;
    assert.equal(a!.path, '/_bulk?pipeline=my%20pipe');
    assert.equal(a!.headers.authorization, 'ApiKey S2V5');
    assert.deepEqual(a!.lines[0], { index: { _index: 'crawl', _id: sha1('http://a.test/1') } });
    assert.equal(b!.headers.authorization, `Basic ${Buffer.from('elastic:pä:ss').toString('base64')}`);
  });

  it('opens from trawl_sinks settings with the password revealed only at use', async () => {
    es.received.length = 0;
    es.answer = allOk;
    const [sink] = openSinks({ es: { type: 'elasticsearch', url: es.url, username: 'u', password: '!ENC!x' } }, (v) => v.replace('!ENC!', 'clear-'));
    await sink!.submit([{ op: 'index', doc: doc('http://a.test/1') }]);
    assert.equal(es.received[0]!.headers.authorization, `Basic ${Buffer.from('u:clear-x').toString('base64')}`);
    assert.throws(() => openSinks({ es: { type: 'elasticsearch' } }), /url/);
  });

  it('refuses for good the items Elasticsearch refused with a 4xx, and takes a delete of a missing document as done', async () => {
    es.answer = (r) => ({
      status: 200,
      body: JSON.stringify({
        errors: true,
        items: [
          { index: { status: 201 } },
          { index: { status: 400, error: { type: 'mapper_parsing_exception', reason: 'failed to parse field [title]' } } },
          { delete: { status: 404, error: 'not_found' } },
        ].slice(0, actions(r).length),
      }),
    });
    const sink = new ElasticsearchSink('es', { url: es.url });
    const res = await sink.submit([
      { op: 'index', doc: doc('http://a.test/1') },
      { op: 'index', doc: doc('http://a.test/2') },
      { op: 'delete', id: 'x', url: 'http://a.test/3', collection: 'c' },
    ]);
    assert.deepEqual(res.rejected, [{ index: 1, reason: '400 mapper_parsing_exception: failed to parse field [title]' }]);
  });

  it('rejects the whole batch, to be retried, on 429, 5xx, an item 429, a body that is not JSON, or no server', async () => {
    const sink = new ElasticsearchSink('es', { url: es.url });
    const one: SinkOp[] = [{ op: 'index', doc: doc('http://a.test/1') }];
    es.answer = () => ({ status: 429, body: '{"error":"too many requests"}' });
    await assert.rejects(sink.submit(one), /answered 429: \{"error":"too many requests"\}/);
    es.answer = () => ({ status: 503, body: 'unavailable' });
    await assert.rejects(sink.submit(one), /answered 503/);
    es.answer = () => ({ status: 200, body: JSON.stringify({ errors: true, items: [{ index: { status: 429, error: { type: 'es_rejected_execution_exception', reason: 'queue full' } } }] }) });
    await assert.rejects(sink.submit(one), /bulk item failed with 429: es_rejected_execution_exception: queue full/);
    es.answer = () => ({ status: 200, body: '<html>proxy</html>' });
    await assert.rejects(sink.submit(one), /not JSON/);
    const gone = new StandIn();
    await gone.start();
    const url = gone.url;
    await gone.stop();
    await assert.rejects(new ElasticsearchSink('down', { url }).submit(one), (err: Error) => err.message.includes('down') && err.message.includes(`${url}/_bulk`));
  });

  it('sends the credentials of a URL with userinfo as Basic authentication, and never quotes its password', async () => {
    es.answer = allOk;
    const withUser = es.url.replace('http://', 'http://elastic:s3cr%40t@');
    await new ElasticsearchSink('es', { url: withUser }).submit([{ op: 'index', doc: doc('http://a.test/1') }]);
    const r = es.received.at(-1)!;
    assert.equal(r.headers.authorization, `Basic ${Buffer.from('elastic:s3cr@t').toString('base64')}`);
    assert.equal(r.path, '/_bulk');
    // A server that refuses, and one that answers an error quoting a header back.
    const gone = new StandIn();
    await gone.start();
    const down = gone.url.replace('http://', 'http://elastic:s3cr%40t@');
    await gone.stop();
    await assert.rejects(new ElasticsearchSink('down', { url: down }).submit([{ op: 'index', doc: doc('http://a.test/1') }]), (err: Error) => {
      assert.doesNotMatch(err.message, /s3cr/);
      assert.ok(err.message.includes(`${gone.url}/_bulk`), err.message);
      return true;
    });
    es.answer = (x) => ({ status: 401, body: `bad credentials for authorization: ${String(x.headers.authorization)}` });
    await assert.rejects(new ElasticsearchSink('es', { url: withUser }).submit([{ op: 'index', doc: doc('http://a.test/1') }]), (err: Error) => {
      assert.match(err.message, /answered 401: bad credentials for authorization: \*{8}/);
      assert.doesNotMatch(err.message, /ZWxhc3RpYzpzM2NyQHQ/);
      return true;
    });
    es.answer = allOk;
  });

  it('derives valid index names from content collections', () => {
    assert.equal(indexNameOf('News'), 'news');
    assert.equal(indexNameOf('_a/b*c?d'), 'a-b-c-d');
    assert.equal(indexNameOf('+-_'), 'trawl');
  });

  it('takes the feeder\'s documents, counts the refused ones as failed, and retries a batch answered 503', async () => {
    es.received.length = 0;
    let calls = 0;
    es.answer = (r) => {
      calls++;
      if (calls === 1) return { status: 503, body: 'warming up' };
      // The document for /bad is refused for good; the others are indexed.
      const items = actions(r).map((a, i) => {
        const url = (r.lines[i * 2 + 1] as SearchDocument).url;
        return url.endsWith('/bad') ? { [a]: { status: 400, error: { type: 'strict_dynamic_mapping_exception', reason: 'no' } } } : { [a]: { status: 201 } };
      });
      return { status: 200, body: JSON.stringify({ errors: items.some((i) => Object.values(i)[0]!.status === 400), items }) };
    };
    const dir = tempDir('trawl-es-');
    const urls = ['http://a.test/1', 'http://a.test/bad', 'http://a.test/3'];
    const { store, content } = await storeWithDocs(dir, urls);
    const rejected: string[] = [];
    const errors: string[] = [];
    const feeder = new Feeder({
      store, content, collection: 'c', destinations: new Map([['default', 'Docs']]), sinks: [new ElasticsearchSink('es', { url: es.url })], paused: () => false,
      onRejected: (url, sink, reason) => rejected.push(`${url} ${sink} ${reason}`), onError: (m) => errors.push(m),
    });
    try {
      await store.queueFeed('c', urls.map((url) => ({ destination: 'default', url, op: 'add' as const })));
      assert.equal(await feeder.drain(10_000), 0);
      assert.equal(calls, 2, 'the batch answered 503 was sent again');
      assert.match(errors[0]!, /answered 503: warming up/);
      assert.deepEqual(rejected, ['http://a.test/bad es 400 strict_dynamic_mapping_exception: no']);
      const sent = es.received[1]!.lines.filter((_, i) => i % 2 === 1) as SearchDocument[];
      assert.deepEqual(sent.map((d) => [d.url, d.title, d.collection, d.content_hash]), urls.map((u) => [u, u, 'Docs', sha1(u)]));
      assert.deepEqual(es.received[1]!.lines[0], { index: { _index: 'docs', _id: sha1(urls[0]!) } });
      // PPFed counts URIs submitted successfully (MS-FSCADM 2.2.4.10): the refused one is PPFailed only.
      assert.deepEqual([feeder.counters.PPFed, feeder.counters.PPSucceeded, feeder.counters.PPFailed], [2, 2, 1]);
      assert.deepEqual(await store.feedBacklog('c'), {});
    } finally {
      await feeder.stop();
      await content.close();
      await store.close();
    }
  });
});
