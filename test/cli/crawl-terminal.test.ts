// `trawl crawl`, the real binary, as a person at a terminal sees it: the exit
// status and reasons of a crawl that stored nothing, the summary's legend and
// paths, standard output kept for the console sink's documents, and a sink
// that is down ending the run after --feed-timeout.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const dir = tempDir('trawl-crawl-terminal-');
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run { code: number | null; out: string; err: string }

/** Asynchronous: the test's own fixture server must keep answering while the crawl runs. */
function trawl(args: string[], timeoutMs = 60_000): Promise<Run> {
  return runTrawl(args, { timeoutMs });
}

/** A collection file: one start URL, its host only, no delay, and the given `trawl_sinks` content. */
function sinkCollection(name: string, start: string, sinks: string): string {
  const file = join(dir, `${name}.xml`);
  writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="${name}">
    <attrib name="start_uris" type="list-string"><member>${start}</member></attrib>
    <attrib name="delay" type="real">0</attrib>
    <section name="include_domains"><attrib name="exact" type="list-string"><member>${new URL(start).hostname}</member></attrib></section>
    <section name="trawl_sinks">${sinks}</section>
  </DomainSpecification></CrawlerConfig>`);
  return file;
}

async function site(ip: string): Promise<FixtureSite> {
  return startFixtureSite([{
    ip,
    routes: {
      '/robots.txt': { kind: 'robots', body: 'User-agent: *\nDisallow: /private/\n' },
      '/': { kind: 'html', body: '<html><head><title>Home</title></head><body><a href="/a.html">a</a> <a href="/private/x">x</a></body></html>' },
      '/a.html': { kind: 'html', body: '<html><head><title>A</title></head><body>A page</body></html>' },
    },
  }]);
}

/** A port on 127.0.0.1 with nothing listening: taken from the system, then let go. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('trawl crawl at the terminal', () => {
  it('a loopback URL without --allow-loopback: exit 1, the start URI and its reason, naming the option, on stderr', async () => {
    const s = await site('127.0.6.1');
    try {
      const url = s.host('127.0.6.1').url('/');
      const r = await trawl(['crawl', '--data', join(dir, 'refused'), url]);
      assert.equal(r.code, 1, r.err);
      assert.ok(r.err.includes(`trawl: ${url}: ot: refused by the egress policy`), r.err);
      assert.match(r.err, /--allow-loopback/);
      assert.match(r.err, /TRAWL_ERR_CRAWL_FAILED: collection crawl-127\.0\.6\.1: nothing was stored: its start URI was refused or failed/);
      assert.equal(s.requests.length, 0, 'nothing reached the site');
    } finally {
      await s.close();
    }
  });

  it('a start URI that cannot be connected to: exit 1 with its reason', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/`;
    const r = await trawl(['crawl', '--data', join(dir, 'down'), '--allow-loopback', url]);
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /TRAWL_ERR_CRAWL_FAILED/);
    assert.ok(r.err.includes(`trawl: ${url}: `), r.err);
  });

  it('a crawl that stored pages: exit 0, a legend line for each skip code printed, and the paths of log, documents and crawl store', async () => {
    const s = await site('127.0.6.2');
    try {
      const data = join(dir, 'ok');
      const r = await trawl(['crawl', '--data', data, '--allow-loopback', s.host('127.0.6.2').url('/')]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /stored 2,/);
      assert.match(r.out, /URIs skipped: ro 1/);
      assert.match(r.out, /^ {4}ro: Robots disallow: refused by robots\.txt; what to do: /m);
      assert.ok(r.out.includes(`  log ${join(data, 'logs', 'crawl.log')}\n`), r.out);
      assert.ok(r.out.includes(`  documents ${join(data, 'content', 'crawl-127.0.6.2')}\n`), r.out);
      assert.ok(r.out.includes(`  crawl store ${join(data, 'trawl.db')}`), r.out);
      assert.doesNotMatch(r.err, /TRAWL_ERR/);
    } finally {
      await s.close();
    }
  });

  it('with a console sink, standard output holds only its documents, one JSON line each; the summary (--json too) is on stderr', async () => {
    const s = await site('127.0.6.3');
    try {
      const config = sinkCollection('screen', s.host('127.0.6.3').url('/'), '<section name="screen"><attrib name="type" type="string">console</attrib></section>');
      for (const json of [false, true]) {
        const r = await trawl(['crawl', '--data', join(dir, `console-${json}`), '--allow-loopback', ...(json ? ['--json'] : []), config]);
        assert.equal(r.code, 0, r.err);
        const docs = r.out.trim().split('\n').map((l) => JSON.parse(l) as { op: string; url: string });
        assert.deepEqual(docs.map((d) => [d.op, d.url]).sort(), [['index', s.host('127.0.6.3').url('/')], ['index', s.host('127.0.6.3').url('/a.html')]]);
        if (json) {
          const summary = JSON.parse(r.err.slice(r.err.indexOf('{\n'))) as { collections: Array<{ stored: number; paths: { log: string } }> };
          assert.equal(summary.collections[0]!.stored, 2);
        } else {
          assert.match(r.err, /collection screen: cycle 1 complete/);
        }
      }
    } finally {
      await s.close();
    }
  });

  it('an Elasticsearch sink with nothing listening: exits 3 after --feed-timeout, saying how many documents wait and that the next run delivers them', async () => {
    const s = await site('127.0.6.4');
    const port = await closedPort();
    try {
      const config = sinkCollection('search', s.host('127.0.6.4').url('/'),
        `<section name="es"><attrib name="type" type="string">elasticsearch</attrib><attrib name="url" type="string">http://127.0.0.1:${port}</attrib></section>`);
      const started = Date.now();
      const r = await trawl(['crawl', '--data', join(dir, 'es'), '--allow-loopback', '--feed-timeout', '2', config]);
      const tookMs = Date.now() - started;
      assert.equal(r.code, 3, r.err);
      assert.ok(tookMs < 30_000, `took ${tookMs} ms`);
      assert.match(r.err, /TRAWL_ERR_FEED_UNDELIVERED: collection search: 2 documents wait in the outbox: the sinks did not take them within 2 s \(.+\); the next `trawl crawl` of this collection on this data directory \(or `trawl serve`\) delivers them/);
      assert.match(r.out, /fed 0 documents .*; 2 waiting for the next run/);
    } finally {
      await s.close();
    }
  });

  it('--feed-timeout must be a number of seconds', async () => {
    const r = await trawl(['crawl', '--feed-timeout', 'soon', 'http://127.0.0.1:9/']);
    assert.equal(r.code, 64);
    assert.match(r.err, /--feed-timeout must be a number of seconds/);
  });
});
