// The purge phase (trawl_purge; the Elastic crawler's purge crawl), through
// the real CLI: each `trawl crawl` is one refresh cycle of the same data
// directory. The site stops linking to some pages; the cycle crawls from its
// start URI, then the purge fetches what it did not reach, and the file
// sink loses the documents that answer 3xx or 4xx. Fetches are read from
// the server's own log.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { sha1 } from '../support/feed-store.ts';
import { StandIn } from '../support/es-standin.ts';
import { startFixtureSite } from '../support/fixture-site.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const IP = '127.0.133.41';
const PAGES = ['/keep.html', '/gone.html', '/moved.html', '/stays.html', '/flaky.html'];

describe('the purge phase', () => {
  it('deletes from the file sink the documents the cycle did not reach that answer 3xx or 4xx; a 5xx after three failing cycles', async () => {
    let version = 1;
    const html = (res: ServerResponse, status: number, body: string): void => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body);
    };
    const site = await startFixtureSite([{
      ip: IP,
      routes: {
        '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
        // Version 1 links every page; from version 2 on, only /keep.html.
        '/': (_req, res) => html(res, 200, (version === 1 ? PAGES : ['/keep.html']).map((p) => `<a href="${p}">${p}</a>`).join(' ')),
        '/keep.html': (_req, res) => html(res, 200, '<p>keep</p>'),
        '/gone.html': (_req, res) => html(res, version === 1 ? 200 : 404, '<p>gone</p>'),
        '/moved.html': (_req, res) => {
          if (version === 1) return html(res, 200, '<p>moved</p>');
          res.writeHead(301, { location: '/elsewhere.html' });
          res.end();
        },
        '/elsewhere.html': (_req, res) => html(res, 200, '<p>elsewhere</p>'),
        '/stays.html': (_req, res) => html(res, 200, '<p>stays, no longer linked</p>'),
        '/flaky.html': (_req, res) => html(res, version === 1 ? 200 : 503, '<p>flaky</p>'),
      },
    }]);
    // The Elasticsearch sink's _bulk requests, on a stand-in.
    const es = new StandIn();
    await es.start();
    const dir = tempDir('trawl-purge-');
    const out = join(dir, 'out');
    const h = site.host(IP);
    const config = join(dir, 'c.xml');
    writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="site">
      <attrib name="start_uris" type="list-string"><member>${h.url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib>
      <section name="http_errors"><attrib name="5xx" type="string">DELETE:3</attrib></section>
      <section name="trawl_purge"><attrib name="enabled" type="boolean">yes</attrib></section>
      <section name="trawl_sinks">
        <section name="disk"><attrib name="type" type="string">file</attrib><attrib name="output_dir" type="string">${out}</attrib></section>
        <section name="es"><attrib name="type" type="string">elasticsearch</attrib><attrib name="url" type="string">${es.url}</attrib><attrib name="index" type="string">web</attrib></section>
      </section>
    </DomainSpecification></CrawlerConfig>`);
    const crawl = async (): Promise<string[]> => {
      site.reset();
      es.received.length = 0;
      const r = await runTrawl(['crawl', '--data', join(dir, 'data'), '--allow-loopback', config], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      return site.fetchedPaths(IP).filter((p) => p !== '/robots.txt');
    };
    const inSink = (path: string): boolean => existsSync(join(out, 'site', `${sha1(h.url(path))}.json`));
    const sinkDoc = (path: string): Record<string, unknown> => JSON.parse(readFileSync(join(out, 'site', `${sha1(h.url(path))}.json`), 'utf8')) as Record<string, unknown>;
    /** What this cycle sent the Elasticsearch sink for a document: each action, with the mark of an index. */
    const esSent = (path: string): unknown[][] => {
      const id = sha1(h.url(path));
      const out: unknown[][] = [];
      for (const r of es.received) {
        for (let i = 0; i < r.lines.length; i++) {
          const [action, meta] = Object.entries(r.lines[i] as Record<string, { _id: string }>)[0]!;
          const doc = action === 'index' ? (r.lines[++i] as Record<string, unknown>) : undefined;
          if (meta._id === id) out.push(doc ? [action, doc.http_status, doc.inaccessible, doc.inaccessible_crawls] : [action]);
        }
      }
      return out;
    };
    /** What the file sink holds of a document: its status and the inaccessible mark. */
    const mark = (path: string): unknown[] => {
      const d = sinkDoc(path);
      return [d.http_status, d.inaccessible, d.inaccessible_crawls, d.body_content];
    };
    try {
      assert.deepEqual((await crawl()).sort(), ['/', ...PAGES].sort());
      assert.deepEqual(PAGES.map(inSink), [true, true, true, true, true]);

      version = 2;
      // The cycle reaches / and /keep.html; the purge fetches the four it did not reach, once each,
      // and follows nothing (the redirect's target is not fetched).
      const second = await crawl();
      assert.deepEqual(second.slice(0, 2), ['/', '/keep.html']);
      assert.deepEqual(second.slice(2).sort(), ['/flaky.html', '/gone.html', '/moved.html', '/stays.html']);
      assert.deepEqual(Object.fromEntries(PAGES.map((p) => [p, inSink(p)])), { '/keep.html': true, '/gone.html': false, '/moved.html': false, '/stays.html': true, '/flaky.html': true });
      assert.equal(inSink('/'), true);
      // The 503 (first failing cycle): the document is kept, as last fetched, and marked inaccessible.
      assert.deepEqual(mark('/flaky.html'), [503, true, 1, 'flaky']);
      assert.deepEqual(esSent('/flaky.html'), [['index', 503, true, 1]]);
      assert.deepEqual(mark('/stays.html'), [200, undefined, undefined, 'stays, no longer linked']);

      // 503 in a second and a third cycle in a row: deleted at the third.
      const third = await crawl();
      assert.deepEqual(third.slice(2).sort(), ['/flaky.html', '/stays.html']);
      assert.equal(inSink('/flaky.html'), true);
      assert.deepEqual(mark('/flaky.html'), [503, true, 2, 'flaky']);
      assert.deepEqual(esSent('/flaky.html'), [['index', 503, true, 2]]);
      const fourth = await crawl();
      assert.deepEqual(esSent('/flaky.html'), [['delete']]);
      assert.deepEqual(fourth.slice(2).sort(), ['/flaky.html', '/stays.html']);
      assert.equal(inSink('/flaky.html'), false);
      assert.equal(inSink('/stays.html'), true);
      // Once deleted, a document is not purged again.
      assert.deepEqual((await crawl()).slice(2), ['/stays.html']);
    } finally {
      await site.close();
      await es.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('trawl_purge with another refresh_mode', () => {
  it('config validate warns that the purge is off', async () => {
    const dir = tempDir('trawl-purge-');
    const config = join(dir, 'c.xml');
    writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="site">
      <attrib name="refresh_mode" type="string">append</attrib>
      <section name="include_domains"><attrib name="suffix" type="list-string"><member>example.com</member></attrib></section>
      <section name="trawl_purge"><attrib name="enabled" type="boolean">yes</attrib></section>
    </DomainSpecification></CrawlerConfig>`);
    try {
      const r = await runTrawl(['config', 'validate', config], { timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /warning TRAWL_ERR_CONFIG_RULE: collection "site", trawl_purge\.enabled: the purge phase runs only with refresh_mode scratch; with append it is off/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
