// The parent URL: a document found through a redirect keeps the page whose
// link led to it, across a kill -9 and the run that resumes the crawl, in
// the Referer the server sees, the CrawlData sidecar, the search document
// and `trawl inspect`. Real `trawl crawl` processes against a loopback site.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { tempDir } from '../support/crawl-harness.ts';
import { startFixtureSite } from '../support/fixture-site.ts';
import { runTrawl, TRAWL_CLI } from '../support/trawl-cli.ts';

const PDF = new TextEncoder().encode('%PDF-1.4 a paper behind a redirect\n%%EOF\n');
const IP = '127.0.31.31';

describe('the parent URL', () => {
  it('follows a document through a redirect and a kill -9 into the Referer, the sidecar, the search document and inspect', async () => {
    const state = { hang: true };
    const site = await startFixtureSite([{
      ip: IP,
      routes: {
        '/': { kind: 'html', body: '<a href="/list.html">papers</a>' },
        '/list.html': { kind: 'html', body: '<a href="/go/paper">the paper</a>' },
        '/go/paper': { kind: 'redirect', to: '/papers/p.pdf', status: 301 },
        '/papers/p.pdf': (_req, res) => {
          if (state.hang) return; // never answers: the crawl is killed with the fetch in flight
          res.writeHead(200, { 'content-type': 'application/pdf' });
          res.end(PDF);
        },
      },
    }]);
    const h = site.host(IP);
    const dir = tempDir('trawl-parent-');
    const repo = join(dir, 'repo');
    const out = join(dir, 'out');
    const cfg = join(dir, 'parent.xml');
    writeFileSync(cfg, `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="parent">
      <attrib name="start_uris" type="list-string"><member>${h.url('/')}</member></attrib>
      <attrib name="delay" type="real">0</attrib>
      <attrib name="fetch_timeout" type="integer">120</attrib>
      <section name="trawl_sinks">
        <section name="repo"><attrib name="type" type="string">repository</attrib><attrib name="repository_root" type="string">${repo}</attrib></section>
        <section name="docs"><attrib name="type" type="string">file</attrib><attrib name="output_dir" type="string">${out}</attrib></section>
      </section>
    </DomainSpecification></CrawlerConfig>`);
    const data = join(dir, 'data');
    try {
      // First run: killed while the PDF's fetch hangs.
      const child = spawn(process.execPath, [TRAWL_CLI, 'crawl', '--data', data, '--allow-loopback', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      const deadline = Date.now() + 90_000;
      while (!h.requests.some((q) => q.path === '/papers/p.pdf') && Date.now() < deadline) await sleep(50);
      assert.ok(h.requests.some((q) => q.path === '/papers/p.pdf'), `the PDF was requested before the kill: ${err}`);
      child.kill('SIGKILL');
      await exited;

      // Second run: the same data directory resumes the crawl; the PDF answers now.
      state.hang = false;
      const r = await runTrawl(['crawl', '--data', data, '--allow-loopback', cfg], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.err);
      const pdfs = h.requests.filter((q) => q.path === '/papers/p.pdf');
      assert.ok(pdfs.length >= 2, 'fetched again after the kill');
      for (const q of pdfs) assert.equal(q.headers.referer, h.url('/list.html'), 'the Referer is the linking page, not the redirecting URL');
      assert.equal(h.requests.find((q) => q.path === '/go/paper')!.headers.referer, h.url('/list.html'));

      const sidecar = readFileSync(join(repo, `${IP}%3A${h.port}`, 'papers', 'p.pdf.met'), 'utf8');
      assert.match(sidecar, new RegExp(`<parentUrl>${h.url('/list.html').replace(/\./g, '\\.')}</parentUrl>`));
      const docs = readdirSync(join(out, 'parent')).map((n) => JSON.parse(readFileSync(join(out, 'parent', n), 'utf8')) as { url: string; parent_url?: string });
      assert.equal(docs.find((d) => d.url === h.url('/papers/p.pdf'))?.parent_url, h.url('/list.html'), 'the search document');
      assert.equal(docs.find((d) => d.url === h.url('/list.html'))?.parent_url, h.url('/'));
      assert.equal(docs.find((d) => d.url === h.url('/'))?.parent_url, undefined, 'a start URI has none');

      const inspect = await runTrawl(['inspect', h.url('/papers/p.pdf'), '--data', data, '--json'], { timeoutMs: 60_000 });
      assert.equal(inspect.code, 0, inspect.err);
      assert.equal((JSON.parse(inspect.out) as { parent?: string }).parent, h.url('/list.html'));
      const text = await runTrawl(['inspect', h.url('/papers/p.pdf'), '--data', data], { timeoutMs: 60_000 });
      assert.match(text.out, new RegExp(`parent\\s+${h.url('/list.html').replace(/\./g, '\\.')}`));
    } finally {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
