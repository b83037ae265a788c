// What `trawl crawl` puts in its requests besides the URL, asserted on the
// fixture server's own request log: headers (the collection's and a
// sub-collection's), post_payload (a prefix: name and an exact URI, one
// !ENC! encrypted; MS-FSCCFG 2.2.4.29 and the §3.11 example) and the
// Referer of each page (trawl_http send_referer).
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite, type RequestRecord } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { runTrawl, type TrawlRun } from '../support/trawl-cli.ts';

const dir = tempDir('trawl-request-headers-');
after(() => rmSync(dir, { recursive: true, force: true }));
const IP = '127.0.31.30';

function trawl(args: string[], stdin = ''): Promise<TrawlRun> {
  return runTrawl(args, { stdin });
}

/** The bodies the site received, by path. */
const bodies = new Map<string, string>();

/** Reads the request's body, keeps it, and answers with a page. */
function form(title: string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      bodies.set(req.url!, body);
      res.setHeader('content-type', 'text/html');
      res.end(`<html><head><title>${title}</title></head><body>${title}</body></html>`);
    });
  };
}

async function site(): Promise<FixtureSite> {
  const page = (title: string, links: string[] = []): { kind: 'html'; body: string } =>
    ({ kind: 'html', body: `<html><head><title>${title}</title></head><body>${title} ${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>` });
  return startFixtureSite([{
    ip: IP,
    routes: {
      '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
      '/': page('Home', ['/form/a', '/exact', '/plain.html', '/news/1.html']),
      '/form/a': form('Form A'),
      '/exact': form('Exact'),
      '/plain.html': page('Plain', ['/deeper.html']),
      '/deeper.html': page('Deeper'),
      '/news/1.html': page('News 1'),
    },
  }]);
}

function collection(name: string, origin: string, payloadSecret: string, more = ''): string {
  const file = join(dir, `${name}.xml`);
  writeFileSync(file, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="${name}">
    <attrib name="start_uris" type="list-string"><member>${origin}/</member></attrib>
    <attrib name="delay" type="real">0</attrib>
    <section name="include_domains"><attrib name="exact" type="list-string"><member>${IP}</member></attrib></section>
    <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
    <attrib name="headers" type="list-string"><member>X-Trawl-Test: main</member></attrib>
    <section name="post_payload">
      <attrib name="prefix:${origin}/form" type="string">variable1=value1&amp;variableB=valueB</attrib>
      <attrib name="${origin}/exact" type="string">${payloadSecret}</attrib>
    </section>
    <SubDomain name="news">
      <section name="include_uris"><attrib name="prefix" type="list-string"><member>${origin}/news/</member></attrib></section>
      <attrib name="headers" type="list-string"><member>X-Trawl-Test: news</member><member>User-Agent: news-agent/1.0</member></attrib>
    </SubDomain>
    ${more}
  </DomainSpecification></CrawlerConfig>`);
  return file;
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(', ') : v);

describe('trawl crawl: headers, post_payload and Referer as the site sees them', () => {
  it('POSTs the payloads to the URIs they name, sends each sub-collection its own headers, and the parent page as Referer', async () => {
    const s = await site();
    try {
      const h = s.host(IP);
      const data = join(dir, 'data');
      assert.equal((await trawl(['config', 'keygen', '--data', data])).code, 0);
      const enc = await trawl(['config', 'encrypt', '--data', data], 'q=secret&x=1');
      assert.equal(enc.code, 0, enc.err);
      bodies.clear();
      const r = await trawl(['crawl', '--data', data, collection('payload', h.origin, enc.out.trim())]);
      assert.equal(r.code, 0, r.err);
      const by = new Map<string, RequestRecord>(s.requests.map((q) => [q.path, q]));
      assert.deepEqual([...by.keys()].sort(), ['/', '/deeper.html', '/exact', '/form/a', '/news/1.html', '/plain.html', '/robots.txt']);

      // post_payload: the prefix and the exact URI are POSTed their payloads (the encrypted one decrypted), the rest is GET.
      assert.equal(by.get('/form/a')!.method, 'POST');
      assert.equal(bodies.get('/form/a'), 'variable1=value1&variableB=valueB');
      assert.equal(by.get('/form/a')!.headers['content-type'], 'application/x-www-form-urlencoded');
      assert.equal(by.get('/exact')!.method, 'POST');
      assert.equal(bodies.get('/exact'), 'q=secret&x=1');
      for (const p of ['/', '/plain.html', '/deeper.html', '/news/1.html', '/robots.txt']) assert.equal(by.get(p)!.method, 'GET', p);

      // headers: the collection's, and the sub-collection's for its URIs; a list without User-Agent keeps trawl's.
      for (const p of ['/', '/form/a', '/plain.html', '/robots.txt']) {
        assert.equal(by.get(p)!.headers['x-trawl-test'], 'main', p);
        assert.match(one(by.get(p)!.headers['user-agent']) ?? '', /^trawl\//, p);
      }
      assert.equal(by.get('/news/1.html')!.headers['x-trawl-test'], 'news');
      assert.equal(by.get('/news/1.html')!.headers['user-agent'], 'news-agent/1.0');

      // Referer: the page each URI was found on; none for the start URI and robots.txt.
      for (const p of ['/form/a', '/exact', '/plain.html', '/news/1.html']) assert.equal(by.get(p)!.headers.referer, h.url('/'), p);
      assert.equal(by.get('/deeper.html')!.headers.referer, h.url('/plain.html'));
      assert.equal(by.get('/')!.headers.referer, undefined);
      assert.equal(by.get('/robots.txt')!.headers.referer, undefined);
    } finally {
      await s.close();
    }
  });

  it('trawl_http send_referer no: no request carries a Referer', async () => {
    const s = await site();
    try {
      const h = s.host(IP);
      const file = collection('noreferer', h.origin, 'q=plain', '<section name="trawl_http"><attrib name="send_referer" type="boolean">no</attrib></section>');
      const r = await trawl(['crawl', '--data', join(dir, 'noreferer-data'), file]);
      assert.equal(r.code, 0, r.err);
      assert.equal(s.requests.length, 7);
      for (const q of s.requests) assert.equal(q.headers.referer, undefined, q.path);
    } finally {
      await s.close();
    }
  });
});
