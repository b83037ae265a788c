// Elastic Open Crawler YAML, crawled: what the configuration keys do to a real crawl
// of a loopback site (domains[].auth, a begins pattern without "/"), read from the
// site's own request log and from what `trawl crawl` prints.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../support/fixture-site.ts';
import { consoleEntries } from '../support/open-crawler-console.ts';
import { runTrawl } from '../support/trawl-cli.ts';

const page = (title: string, links: string[] = []) => ({
  kind: 'html' as const,
  body: `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`,
});

describe('Elastic YAML crawled', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-elastic-yaml-'));
  const sites: FixtureSite[] = [];
  after(async () => {
    for (const s of sites) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function crawl(name: string, yaml: string): Promise<{ code: number | null; out: string; err: string }> {
    const file = join(dir, `${name}.yml`);
    writeFileSync(file, yaml);
    return runTrawl(['crawl', '--data', join(dir, `${name}-data`), file], { timeoutMs: 90_000 });
  }

  it('domains[].auth: basic sends the domain\'s user and password, raw sends its header as Authorization; a domain without auth gets none', async () => {
    const guarded = (want: string) => (req: IncomingMessage, res: ServerResponse) => {
      const ok = req.headers.authorization === want;
      res.writeHead(ok ? 200 : 401, { 'content-type': 'text/html', ...(ok ? {} : { 'www-authenticate': 'Basic realm="x"' }) });
      res.end(ok ? `<html><head><title>in</title></head><body>in with ${want}</body></html>` : 'no');
    };
    const basic = `Basic ${Buffer.from('alice:wonder land').toString('base64')}`;
    const site = await startFixtureSite([
      { ip: '127.0.134.1', routes: { '/': guarded(basic) } },
      { ip: '127.0.134.2', routes: { '/': guarded('Bearer tok-123') } },
      { ip: '127.0.134.3', routes: { '/': page('open') } },
    ]);
    sites.push(site);
    const [a, b, c] = site.hosts;
    const r = await crawl('auth', `domains:
  - url: ${a!.origin}
    auth:
      type: basic
      username: alice
      password: wonder land
  - url: ${b!.origin}
    auth:
      type: raw
      header: Bearer tok-123
  - url: ${c!.origin}
http_auth_allowed: true
loopback_allowed: true
output_sink: console
`);
    assert.equal(r.code, 0, r.err);
    const auth = (h: typeof a) => h!.requests.filter((q) => q.path === '/').map((q) => [q.status, q.headers.authorization]);
    assert.deepEqual(auth(a), [[200, basic]]);
    assert.deepEqual(auth(b), [[200, 'Bearer tok-123']]);
    assert.deepEqual(auth(c), [[200, undefined]]);
    const docs = consoleEntries(r.out);
    assert.deepEqual(docs.map((d) => d.url).sort(), [`${a!.origin}/`, `${b!.origin}/`, `${c!.origin}/`]);
  });

  it('a begins pattern without "/" is accepted with a warning and never matches: the path it names is crawled', async () => {
    const site = await startFixtureSite([{ ip: '127.0.134.4', routes: { '/': page('home', ['/private/a.html', '/public/b.html']), '/private/a.html': page('a'), '/public/b.html': page('b') } }]);
    sites.push(site);
    const h = site.hosts[0]!;
    const r = await crawl('begins', `domains:
  - url: ${h.origin}
    crawl_rules:
      - {policy: deny, type: begins, pattern: private}
      - {policy: deny, type: begins, pattern: /public}
loopback_allowed: true
output_sink: console
`);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /begins\.yml:4:\d+: warning TRAWL_ERR_CONFIG_YAML: .*"private" never matches/);
    assert.deepEqual(site.fetchedPaths().filter((p) => p !== '/robots.txt').sort(), ['/', '/private/a.html']);
  });
});
