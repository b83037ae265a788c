// Whole-crawl conformance with the Elastic Open Crawler: each case of its
// spec/integration/ suite (github.com/elastic/crawler at commit a0534b3), written
// here from what the case specifies: the site it serves, the configuration it
// crawls with, and the documents it expects (`have_only_these_results`: the
// URLs the output sink received, no more, no fewer, and their content where
// the case checks it). Each case's site is built on its own loopback address,
// crawled by the real `trawl crawl` from an Elastic YAML configuration with a
// file sink, and its documents read from the sink's files.
//
// Cases whose configuration is the same crawl as another's share one YAML file
// (one domain each), so that the 27 cases are 7 crawls run side by side.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { startFixtureSite, type FixtureSite, type Handler, type HostHandle } from '../support/fixture-site.ts';
import { runTrawl, type TrawlRun } from '../support/trawl-cli.ts';

const SPEC = 'elastic/crawler spec/integration';

/**
 * The settings a crawl adds to its YAML (besides domains, sink and loopback_allowed).
 * default_encoding is trawl_extraction.default_charset, socket_timeout trawl_limits.socket_timeout.
 */
const CRAWLS = {
  plain: 'http_auth_allowed: true\n',
  'ua-elastic': 'user_agent: Elastic Crawler\n',
  'ua-other': 'user_agent: This Does Not Match\n',
  encoding: 'default_encoding: ISO-8859-1\n',
  binary: 'binary_content_extraction_enabled: true\nbinary_content_extraction_mime_types: [application/pdf, application/vnd.ms-powerpoint]\n',
  'request-timeout': 'request_timeout: 2\n',
  'socket-timeout': 'socket_timeout: 2\n',
} as const;
type Crawl = keyof typeof CRAWLS;

interface Doc { readonly url: string; readonly body?: string; readonly [k: string]: unknown }

interface Case {
  /** The spec file and the example's description. */
  readonly source: string;
  readonly name: string;
  readonly crawl: Crawl;
  readonly routes: Record<string, Handler>;
  /** Seed paths (default: the domain's own "/"). */
  readonly seeds?: readonly string[];
  readonly sitemaps?: readonly string[];
  /** YAML lines of the domain's `auth:` mapping. */
  readonly auth?: string;
  /** The paths of the documents the case expects, and only those. */
  readonly expect: readonly string[];
  /** What the case checks of the documents beyond their URLs. */
  readonly check?: (docs: ReadonlyMap<string, Doc>, h: HostHandle) => void;
}

// ------------------------------------------------------------ a Faux-like site

/** A response as the Open Crawler's test server (vendor/faux) makes it: text/html unless the headers say otherwise. */
function serve(body: string | Buffer, headers: OutgoingHttpHeaders = {}, status = 200): Handler {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'text/html', ...headers });
    res.end(body);
  };
}
/** Faux's page: `<html><body>` with one `<a>` a line (rel when given), or `<html></html>`. */
function page(links: ReadonlyArray<string | [string, string]> = [], opts: { head?: string; text?: string; headers?: OutgoingHttpHeaders } = {}): Handler {
  const a = links.map((l) => (typeof l === 'string' ? `<a href="${l}">${l}</a>` : `<a href="${l[0]}" rel='${l[1]}'>${l[0]}</a>`));
  const body = [...a, ...(opts.text !== undefined ? [opts.text] : [])];
  const head = opts.head !== undefined ? `<head>${opts.head}</head>` : '';
  return serve(`<html>${head}${body.length > 0 || opts.text !== undefined ? `<body>${body.join('\n')}</body>` : ''}</html>`, opts.headers);
}
/** Faux's redirect: 302 with an absolute Location on the same host. */
function redirect(path: string): Handler {
  return (req, res) => {
    res.writeHead(302, { 'content-type': 'text/html', location: `http://${req.headers.host}${path}` });
    res.end();
  };
}
/** Faux's robots.txt: text/plain lines; a relative Sitemap stays relative, as Faux writes it. */
function robots(lines: readonly string[], contentType: string | undefined = 'text/plain'): Handler {
  return serve(lines.map((l) => `${l}\n`).join(''), contentType === undefined ? {} : { 'content-type': contentType });
}
function urlset(paths: readonly string[], index = false): (req: IncomingMessage) => string {
  return (req) => {
    const loc = (p: string) => `<loc>http://${req.headers.host}${p}</loc>`;
    return index
      ? `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths.map((p) => `<sitemap>${loc(p)}</sitemap>`).join('')}</sitemapindex>`
      : `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths.map((p) => `<url>${loc(p)}</url>`).join('')}</urlset>`;
  };
}
/** Faux's sitemap: application/xml; gzip compresses the body itself (no Content-Encoding). */
function sitemap(paths: readonly string[], o: { index?: boolean; gzip?: boolean } = {}): Handler {
  const xml = urlset(paths, o.index);
  return (req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml' });
    res.end(o.gzip ? gzipSync(xml(req)) : xml(req));
  };
}
function status(code: number): Handler {
  return serve(`<html><body>${code}</body></html>`, {}, code);
}

// ------------------------------------------------------------ the cases

const MANANA = 'ma\u00F1ana ol\u00E9';
const MULTI_CHUNK = Array.from({ length: 12_345 }, (_, i) => 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'[(i * 7919 + 13) % 62]).join('');
const DO_NOT_VISIT = join(tmpdir(), `trawl-do-not-visit-${process.pid}.txt`);
const xxe = (req: IncomingMessage): string => `<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE urlset [
  <!ENTITY test SYSTEM "file:///${DO_NOT_VISIT}">
]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://${req.headers.host}/</loc><lastmod>2019-06-19</lastmod><changefreq>daily</changefreq></url>
  <url><loc>http://${req.headers.host}/visit-here</loc><lastmod>2019-06-19</lastmod><changefreq>daily</changefreq></url>
  <url><loc>&test;</loc><lastmod>2019-06-19</lastmod><changefreq>daily</changefreq></url>
</urlset>`;
const xxeSitemap = (gz: boolean): Handler => (req, res) => {
  res.writeHead(200, { 'content-type': 'application/xml' });
  res.end(gz ? gzipSync(xxe(req)) : xxe(req));
};

const ROBOTS_SITE = (robotsTxt: Handler): Record<string, Handler> => ({
  '/robots.txt': robotsTxt,
  '/': page(['/hey', '/no-elastic-crawler', '/sekret-stuff']),
  '/hey': page(),
  '/no-elastic-crawler': page(),
  '/sekret-stuff': page(),
});
const ROBOTS_UA = ['User-agent: Elastic Crawler', 'Disallow: /no-elastic-crawler', 'User-agent: *', 'Disallow: /sekret-stuff'];
const HEY_SITE = (robotsRoutes: Record<string, Handler>): Record<string, Handler> => ({ ...robotsRoutes, '/': page(['/hey', '/sekret-stuff']), '/hey': page(), '/sekret-stuff': page() });

/** A slow body: one line a second, for 20 s, without Content-Length (request_timeout_spec's server). */
const trickle: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  let n = 0;
  const t = setInterval(() => {
    if (++n > 20 || res.destroyed) {
      clearInterval(t);
      res.end();
    } else res.write('no\r\n');
  }, 1000);
  res.on('close', () => clearInterval(t));
};
/** Nothing for 5 s, then the body (socket_timeout_spec's page). */
const silent: Handler = (_req, res, ctx) => {
  const t = setTimeout(() => void serve('Output')(_req, res, ctx), 5000);
  res.on('close', () => clearTimeout(t));
};

const redirectChain: Record<string, Handler> = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`/redirect-${i}`, redirect(`/redirect-${i + 1}`)]));
const robotsChain: Record<string, Handler> = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`/robots-redirect-${i}.txt`, redirect(`/robots-redirect-${i + 1}.txt`)]));

const bodyOf = (docs: ReadonlyMap<string, Doc>, h: HostHandle, path: string): string | undefined => docs.get(h.url(path))?.body;

/** charset_spec.rb's site: the same UTF-8 text, once with the charset in Content-Type and once without. */
const CHARSET_SITE = {
  routes: {
    '/': page(['/utf8-without-charset', '/utf8-with-charset']),
    '/utf8-with-charset': page([], { text: MANANA, headers: { 'content-type': 'text/html; charset=UTF-8' } }),
    '/utf8-without-charset': page([], { text: MANANA, headers: { 'content-type': 'text/html' } }),
  },
  expect: ['/', '/utf8-with-charset', '/utf8-without-charset'],
} as const;

const CASES: readonly Case[] = [
  {
    source: 'charset_spec.rb', name: 'defaults to UTF-8', crawl: 'plain',
    ...CHARSET_SITE,
    check: (docs, h) => {
      assert.equal(bodyOf(docs, h, '/utf8-with-charset'), MANANA);
      assert.equal(bodyOf(docs, h, '/utf8-without-charset'), MANANA);
    },
  },
  {
    source: 'charset_spec.rb', name: 'can override fallback encoding (default_encoding: ISO-8859-1)', crawl: 'encoding',
    ...CHARSET_SITE,
    check: (docs, h) => {
      assert.equal(bodyOf(docs, h, '/utf8-with-charset'), MANANA);
      // The UTF-8 bytes read as ISO-8859-1: one character per byte.
      assert.equal(bodyOf(docs, h, '/utf8-without-charset'), Buffer.from(MANANA, 'utf8').toString('latin1'));
    },
  },
  {
    source: 'content_extraction_spec.rb', name: 'binary content extraction indexes the MIME types it names', crawl: 'binary',
    routes: {
      '/': page(['/html', '/pdf', '/powerpoint', '/word']),
      '/html': page([], { headers: { 'content-type': 'text/html; charset=UTF-8' } }),
      '/pdf': page([], { headers: { 'content-type': 'application/pdf' } }),
      '/powerpoint': page([], { headers: { 'content-type': 'application/vnd.ms-powerpoint' } }),
      '/word': page([], { headers: { 'content-type': 'application/msword' } }),
    },
    expect: ['/', '/html', '/pdf', '/powerpoint'],
  },
  {
    source: 'headers_spec.rb', name: 'supports basic auth', crawl: 'plain',
    routes: { '/': (req, res, ctx) => (req.headers.authorization === 'Basic YmFuYW5hOlNFQ1JFVA==' ? page() : status(404))(req, res, ctx) },
    auth: 'type: basic\n      username: banana\n      password: SECRET',
    expect: ['/'],
  },
  {
    source: 'headers_spec.rb', name: 'supports raw Authorization header', crawl: 'plain',
    routes: { '/': (req, res, ctx) => (req.headers.authorization === 'Bearer xyz' ? page() : status(404))(req, res, ctx) },
    auth: 'type: raw\n      header: Bearer xyz',
    expect: ['/'],
  },
  {
    source: 'legacy_sitemaps_spec.rb', name: 'sitemap with links: extracts links from the sitemap robots.txt names', crawl: 'plain',
    routes: { '/robots.txt': robots(['User-agent: *', 'Sitemap: /sitemap.xml']), '/sitemap.xml': sitemap(['/bar']), '/foo': page(), '/bar': page() },
    expect: ['/bar'],
  },
  {
    source: 'legacy_sitemaps_spec.rb', name: 'index of other sitemaps: discovers links in the sitemaps', crawl: 'plain',
    routes: {
      '/robots.txt': robots(['User-agent: *', 'Sitemap: /sitemap.xml']),
      '/sitemap.xml': sitemap(['/sitemap_1.xml', '/sitemap_2.xml'], { index: true }),
      '/sitemap_1.xml': sitemap(['/foo']), '/sitemap_2.xml': sitemap(['/bar']),
      '/foo': page(), '/bar': page(),
    },
    expect: ['/foo', '/bar'],
  },
  {
    source: 'legacy_sitemaps_spec.rb', name: 'with gzipped sitemap: extracts links from the sitemap', crawl: 'plain',
    routes: { '/robots.txt': robots(['User-agent: *', 'Sitemap: /sitemap.xml']), '/sitemap.xml': sitemap(['/bar'], { gzip: true }), '/': page(), '/bar': page() },
    expect: ['/', '/bar'],
  },
  {
    source: 'nofollow_spec.rb', name: 'crawls all pages given the constraints specified by robots meta tags', crawl: 'plain',
    routes: {
      '/': page(['/noindex', '/nofollow', ['/unreachable', 'nofollow']]),
      '/noindex': page(['/foo'], { head: '<meta name="robots" content="noindex">' }),
      '/nofollow': page(['/unreachable'], { head: '<meta name="robots" content="nofollow">' }),
      '/foo': page(), '/unreachable': page(),
    },
    expect: ['/', '/nofollow', '/foo'],
  },
  {
    source: 'redirects_spec.rb', name: 'crawls all pages following redirects as needed', crawl: 'plain',
    routes: {
      '/': page(['/simple-redirect', '/circular-redirect', '/infinite-redirect', '/redirect-0']),
      '/simple-redirect': redirect('/hello'), '/hello': page(),
      '/circular-redirect': redirect('/circular-redirect'),
      '/infinite-redirect': redirect('/infinite-redirect-step2'), '/infinite-redirect-step2': redirect('/infinite-redirect'),
      ...redirectChain, '/redirect-20': page(),
    },
    expect: ['/', '/hello'],
  },
  {
    source: 'response_content_type_spec.rb', name: 'supports single and multiple Content-Type headers', crawl: 'plain',
    routes: {
      '/': page(['/html', '/pdf', '/pdf-multi-header']),
      '/html': page([], { headers: { 'content-type': 'text/html; charset=UTF-8' } }),
      '/pdf': page([], { headers: { 'content-type': 'application/pdf' } }),
      // Two Content-Type lines, the first one application/pdf.
      '/pdf-multi-header': (_req, res) => {
        res.setHeader('content-type', ['application/pdf', 'text/html; charset=UTF-8']);
        res.end('<html></html>');
      },
    },
    expect: ['/', '/html'],
  },
  {
    source: 'response_limits_spec.rb', name: 'crawls all pages given the constraints specified by resource limits', crawl: 'plain',
    routes: { '/': page(['/multi-chunk', '/too-big']), '/multi-chunk': serve(MULTI_CHUNK), '/too-big': serve('x'.repeat(11_000_000)) },
    expect: ['/', '/multi-chunk'],
  },
  {
    source: 'response_limits_spec.rb', name: 'should correctly download multi-chunk responses', crawl: 'plain',
    routes: { '/': page(['/multi-chunk']), '/multi-chunk': serve(MULTI_CHUNK) },
    expect: ['/', '/multi-chunk'],
    check: (docs, h) => assert.equal(bodyOf(docs, h, '/multi-chunk'), MULTI_CHUNK),
  },
  {
    source: 'robots_txt_spec.rb', name: 'should respect robots.txt disallow rules for matching User-Agent', crawl: 'ua-elastic',
    routes: ROBOTS_SITE(robots(ROBOTS_UA)),
    expect: ['/', '/hey', '/sekret-stuff'],
  },
  {
    source: 'robots_txt_spec.rb', name: 'should respect robots.txt disallow rules for wildcard User-Agent', crawl: 'ua-other',
    routes: ROBOTS_SITE(robots(ROBOTS_UA)),
    expect: ['/', '/hey', '/no-elastic-crawler'],
  },
  {
    source: 'robots_txt_spec.rb', name: 'without content type: should respect robots.txt disallow rules for matching User-Agent', crawl: 'ua-elastic',
    routes: ROBOTS_SITE(robots(ROBOTS_UA, undefined)),
    expect: ['/', '/hey', '/sekret-stuff'],
  },
  {
    source: 'robots_txt_spec.rb', name: 'redirects with a reasonably long redirect chain: should follow the redirect and apply the rules', crawl: 'plain',
    routes: HEY_SITE({ '/robots.txt': redirect('/robots-redirect.txt'), '/robots-redirect.txt': robots(['User-agent: *', 'Disallow: /sekret-stuff']) }),
    expect: ['/', '/hey'],
  },
  {
    source: 'robots_txt_spec.rb', name: 'redirects with a very long redirect chain: robots.txt treated as missing, all allowed', crawl: 'plain',
    routes: HEY_SITE({ '/robots.txt': redirect('/robots-redirect-0.txt'), ...robotsChain, '/robots-redirect-20.txt': robots(['User-agent: *', 'Disallow: /sekret-stuff']) }),
    expect: ['/', '/hey', '/sekret-stuff'],
  },
  {
    source: 'robots_txt_spec.rb', name: 'failure status 4xx: should allow all URLs', crawl: 'plain',
    routes: HEY_SITE({ '/robots.txt': status(404) }),
    expect: ['/', '/hey', '/sekret-stuff'],
  },
  {
    source: 'robots_txt_spec.rb', name: 'failure status 5xx: should deny all URLs', crawl: 'plain',
    routes: HEY_SITE({ '/robots.txt': status(500) }),
    expect: [],
  },
  {
    source: 'seed_spec.rb', name: 'crawls all of the seed urls specified by the config', crawl: 'plain',
    routes: { '/foo': page(), '/baz': page() },
    seeds: ['/foo', '/baz'],
    expect: ['/foo', '/baz'],
  },
  {
    source: 'sitemap_spec.rb', name: 'makes it possible to use sitemap seed URLs for discovering links on a site', crawl: 'plain',
    routes: { '/': page(['/foo']), '/foo': page(), '/bar': page(['/baz']), '/baz': page(), '/sitemap.xml': sitemap(['/', '/foo', '/bar']) },
    seeds: ['/'], sitemaps: ['/sitemap.xml'],
    expect: ['/', '/foo', '/bar', '/baz'],
  },
  {
    source: 'sitemap_xxe_spec.rb', name: 'sitemap: extracts links but does not look up files', crawl: 'plain',
    routes: { '/robots.txt': robots(['User-agent: *', 'Sitemap: /sitemap.xml']), '/sitemap.xml': xxeSitemap(false), '/visit-here': page() },
    expect: ['/visit-here'],
  },
  {
    source: 'sitemap_xxe_spec.rb', name: 'gzipped sitemap: extracts links but does not look up files', crawl: 'plain',
    routes: { '/robots.txt': robots(['User-agent: *', 'Sitemap: /sitemap.xml']), '/sitemap.xml': xxeSitemap(true), '/visit-here': page() },
    expect: ['/visit-here'],
  },
  {
    source: 'timeouts/request_timeout_spec.rb', name: 'times out (request_timeout: 2, a body sent a line a second)', crawl: 'request-timeout',
    routes: { '/': page(['/timeout']), '/timeout': trickle },
    expect: ['/'],
  },
  {
    source: 'timeouts/socket_timeout_spec.rb', name: 'times out (socket_timeout: 2, nothing sent for 5 s)', crawl: 'socket-timeout',
    routes: { '/': page(['/timeout']), '/timeout': silent },
    expect: ['/'],
  },
  {
    source: 'url_fragments_spec.rb', name: 'crawls discovered URLs while stripping out the fragments', crawl: 'plain',
    routes: { '/': page(['/foo', '/foo#bar', '/baz#hello']), '/foo': page(), '/baz': page() },
    expect: ['/', '/foo', '/baz'],
  },
];

// ------------------------------------------------------------ the crawls

function readDocs(dir: string): Doc[] {
  let files: string[];
  try {
    files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  return files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Doc);
}

describe(`the Open Crawler's whole-crawl cases (${SPEC})`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-oc-crawls-'));
  let site: FixtureSite;
  const runs = new Map<Crawl, TrawlRun>();
  const docs = new Map<string, Doc>();
  after(async () => {
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(DO_NOT_VISIT, { force: true });
  });

  before(async () => {
    writeFileSync(DO_NOT_VISIT, 'the crawler must never read this file\n');
    site = await startFixtureSite(CASES.map((c, i) => ({ ip: `127.0.171.${i + 1}`, routes: c.routes })));
    const crawls = [...new Set(CASES.map((c) => c.crawl))];
    await Promise.all(crawls.map(async (crawl) => {
      const domains = CASES.map((c, i) => [c, site.hosts[i]!] as const).filter(([c]) => c.crawl === crawl).map(([c, h]) => [
        `  - url: ${h.origin}`,
        ...(c.seeds ? [`    seed_urls: [${c.seeds.map((p) => h.url(p)).join(', ')}]`] : []),
        ...(c.sitemaps ? [`    sitemap_urls: [${c.sitemaps.map((p) => h.url(p)).join(', ')}]`] : []),
        ...(c.auth ? [`    auth:\n      ${c.auth}`] : []),
      ].join('\n'));
      const file = join(dir, `${crawl}.yml`);
      writeFileSync(file, `crawl_id: ${crawl}\ndomains:\n${domains.join('\n')}\nloopback_allowed: true\noutput_sink: file\noutput_dir: ${join(dir, `out-${crawl}`)}\n${CRAWLS[crawl]}`);
      const r = await runTrawl(['crawl', '--data', join(dir, `data-${crawl}`), file], { timeoutMs: 120_000 });
      runs.set(crawl, r);
      for (const d of readDocs(join(dir, `out-${crawl}`))) docs.set(d.url, d);
    }));
  });

  CASES.forEach((c, i) => {
    it(`${c.source}: ${c.name}`, () => {
      const r = runs.get(c.crawl)!;
      assert.notEqual(r.code, null, `the ${c.crawl} crawl did not finish: ${r.err}`);
      const h = site.hosts[i]!;
      assert.ok(h.requests.length > 0, `the crawl made no request to ${h.origin}`);
      const got = [...docs.keys()].filter((u) => u.startsWith(`${h.origin}/`)).sort();
      assert.deepEqual(got, c.expect.map((p) => h.url(p)).sort(), `documents of ${h.origin}; the crawl said:\n${r.err.split('\n').filter((l) => l.includes(h.origin) || /warning|error/i.test(l)).slice(0, 40).join('\n')}`);
      c.check?.(docs, h);
    });
  });

  it('timeouts/request_timeout_spec.rb: the page that timed out was requested once (its stats: 599 once), robots.txt and the home page once each', () => {
    for (const c of ['request-timeout', 'socket-timeout'] as const) {
      const h = site.hosts[CASES.findIndex((x) => x.crawl === c)]!;
      assert.deepEqual(h.requests.map((q) => q.path).sort(), ['/', '/robots.txt', '/timeout'], c);
    }
  });

  it('sitemap_xxe_spec.rb: the entry whose <loc> is the external entity is dropped: nothing but the other entries is requested', () => {
    const xxeHosts = CASES.flatMap((c, i) => (c.source === 'sitemap_xxe_spec.rb' ? [site.hosts[i]!] : []));
    assert.equal(xxeHosts.length, 2);
    for (const h of xxeHosts) assert.deepEqual([...new Set(h.requests.map((q) => q.path))].sort(), ['/', '/robots.txt', '/sitemap.xml', '/visit-here']);
  });
});
