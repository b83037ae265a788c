// A rendered page's own requests and failures, through the real `trawl
// crawl` and Debian's Chromium: the bodies a script POSTs (JSON, text,
// binary, form, multipart) reach the server with the bytes and the
// Content-Type the page sent; a render that fails goes back to the queue and
// is tried again later in the cycle, after other pages of the site; a page
// that fails twice is skipped with js. Asserted from the server's own log
// and the crawl store.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SqliteCrawlStore } from '../../src/store/sqlite/sqlite-crawl-store.ts';
import type { UriRecord } from '../../src/store/crawl-store.ts';
import { startFixtureSite, type FixtureSite, type Handler } from '../support/fixture-site.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { skipUnless, TOOLS, toolPath } from '../support/system-tools.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const IP = '127.0.35.11';
const skip = skipUnless(TOOLS.chromium);

/** The bodies the page's script POSTs: what the server must receive, byte for byte, with this Content-Type. */
const BINARY = [0, 255, 1, 128, 10, 13, 0, 34];
const SENT = {
  '/echo/json': { contentType: 'application/json', body: Buffer.from('{"a":1,"text":"ü €","list":[true,null]}', 'utf8') },
  '/echo/text': { contentType: 'text/plain;charset=UTF-8', body: Buffer.from('line one\nline two ü', 'utf8') },
  '/echo/binary': { contentType: 'application/octet-stream', body: Buffer.from(BINARY) },
  '/echo/form': { contentType: 'application/x-www-form-urlencoded;charset=UTF-8', body: Buffer.from('q=a+b&x=%C3%BC%26', 'utf8') },
} as const;

const POST_JS = `
const app = document.getElementById('app');
const post = (path, init) => fetch(path, { method: 'POST', ...init }).then((r) => r.json());
post('/echo/json', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: 1, text: 'ü €', list: [true, null] }) })
  .then((j) => app.insertAdjacentHTML('beforeend', '<a href="' + j.href + '">from the JSON answer</a>'));
post('/echo/text', { body: 'line one\\nline two ü' });
post('/echo/binary', { headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(${JSON.stringify(BINARY)}) });
post('/echo/form', { body: new URLSearchParams({ q: 'a b', x: 'ü&' }) });
const fd = new FormData(); fd.append('field', 'value ü');
post('/echo/multipart', { body: fd });
`;

interface Received { path: string; contentType: string | undefined; body: Buffer }

function html(title: string, body = ''): { kind: 'html'; body: string } {
  return { kind: 'html', body: `<!doctype html><html><head><title>${title}</title></head><body><p>${title}</p>${body}</body></html>` };
}

/** A script that exhausts the JavaScript heap (page_memory): the renderer crashes. */
const CRASH = '<script>const keep = []; for (;;) keep.push(new Array(1e6).fill(keep.length));</script>';
const OTHERS = Array.from({ length: 10 }, (_, i) => `/p${i}.html`);

function site(received: Received[]): Promise<FixtureSite> {
  const echo: Handler = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', contentType: req.headers['content-type'], body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"href":"/after-json.html"}');
    });
  };
  // Crashes the renderer the first time it is served, renders the second.
  let onceServed = 0;
  const once: Handler = (_req, res) => {
    onceServed++;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><body><p>once</p>${onceServed === 1 ? CRASH : '<a href="/after-retry.html">after retry</a>'}</body></html>`);
  };
  const routes: Record<string, Handler | ReturnType<typeof html> | { kind: 'robots'; body: string } | { kind: 'text'; body: string; contentType: string }> = {
    '/robots.txt': { kind: 'robots', body: 'User-agent: *\nAllow: /\n' },
    '/': html('home', `<a href="/once.html">once</a> <a href="/post.html">post</a> ${OTHERS.map((p) => `<a href="${p}">${p}</a>`).join(' ')} <a href="/always.html">always</a>`),
    '/post.html': html('post', '<div id="app"></div><script src="/post.js"></script>'),
    '/post.js': { kind: 'text', body: POST_JS, contentType: 'application/javascript' },
    '/echo/json': echo, '/echo/text': echo, '/echo/binary': echo, '/echo/form': echo, '/echo/multipart': echo,
    '/after-json.html': html('after json'),
    '/once.html': once,
    '/after-retry.html': html('after retry'),
    '/always.html': html('always', CRASH),
  };
  for (const p of OTHERS) routes[p] = html(p);
  return startFixtureSite([{ ip: IP, routes }]);
}

function writeConfig(s: FixtureSite): string {
  const config = join(tempDir('trawl-render-req-cfg-'), 'render.xml');
  writeFileSync(config, `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="js">
  <attrib name="start_uris" type="list-string"><member>${s.host(IP).url('/')}</member></attrib>
  <attrib name="delay" type="real">0</attrib>
  <attrib name="max_pending" type="integer">2</attrib>
  <attrib name="use_javascript" type="boolean">yes</attrib><attrib name="javascript_delay" type="real">0</attrib>
  <section name="include_domains"><attrib name="exact" type="list-string"><member>${IP}</member></attrib></section>
  <section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
  <section name="trawl_render"><attrib name="browser" type="string">${toolPath(TOOLS.chromium)}</attrib><attrib name="page_timeout" type="integer">8</attrib><attrib name="page_memory" type="integer">32</attrib><attrib name="network_idle" type="integer">300</attrib></section>
</DomainSpecification></CrawlerConfig>`);
  return config;
}

async function records(data: string): Promise<UriRecord[]> {
  const store = new SqliteCrawlStore(join(data, 'trawl.db'));
  try {
    return await store.listRecords('js');
  } finally {
    await store.close();
  }
}

describe('a rendered page\'s requests and failed renders', { skip, timeout: 120_000 }, () => {
  it('sends a script\'s POST bodies as the page made them; a failed render is queued again and tried after other pages; a page failing twice is skipped with js', async () => {
    const received: Received[] = [];
    const s = await site(received);
    try {
      const data = tempDir();
      const r = await runTrawl(['crawl', '--data', data, '--json', writeConfig(s)], { timeoutMs: 100_000 });
      assert.equal(r.code, 0, r.err);

      // Each body reached the server once, with the bytes and the Content-Type the script sent.
      for (const [path, want] of Object.entries(SENT)) {
        const got = received.filter((x) => x.path === path);
        assert.equal(got.length, 1, `${path} received once`);
        assert.equal(got[0]!.contentType, want.contentType, path);
        assert.deepEqual([...got[0]!.body], [...want.body], `${path}: ${got[0]!.body.toString('latin1')}`);
      }
      const multipart = received.find((x) => x.path === '/echo/multipart');
      const boundary = /^multipart\/form-data; boundary=(\S+)$/.exec(multipart?.contentType ?? '')?.[1];
      assert.ok(boundary, String(multipart?.contentType));
      assert.ok(multipart!.body.toString('utf8').includes(`--${boundary}\r\nContent-Disposition: form-data; name="field"\r\n\r\nvalue ü\r\n--${boundary}--`), multipart!.body.toString('utf8'));
      // The JSON answer went back to the page: the link it made was crawled.
      const paths = s.fetchedPaths(IP);
      assert.ok(paths.includes('/after-json.html'), paths.join(' '));

      // once.html crashed its renderer the first time: fetched again later in the cycle, with
      // other pages of the site fetched in between, and rendered then (its link crawled).
      const log = s.host(IP).requests.map((q) => q.path);
      const attempts = log.flatMap((p, i) => (p === '/once.html' ? [i] : []));
      assert.equal(attempts.length, 2, log.join(' '));
      const between = log.slice(attempts[0]! + 1, attempts[1]!).filter((p) => OTHERS.includes(p));
      assert.ok(between.length >= 1, `pages fetched between the two attempts: ${log.join(' ')}`);
      assert.ok(paths.includes('/after-retry.html'), paths.join(' '));
      const recs = await records(data);
      const rec = (p: string): UriRecord | undefined => recs.find((x) => x.url === s.host(IP).url(p));
      assert.equal(rec('/once.html')?.status, 'stored', JSON.stringify(rec('/once.html')));
      // always.html crashed both times: skipped with js, fetched twice, and the rest of the site completed.
      assert.equal(rec('/always.html')?.skipCode, 'js', JSON.stringify(rec('/always.html')));
      assert.equal(log.filter((p) => p === '/always.html').length, 2);
      for (const p of OTHERS) assert.equal(rec(p)?.status, 'stored', p);
    } finally {
      await s.close();
    }
  });
});
