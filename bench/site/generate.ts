/**
 * Generates a large static multi-host site for the end-to-end crawl
 * benchmark (bench/crawl.ts), served by nginx (bench/nginx.sh).
 *
 *   node bench/site/generate.ts [--hosts 50] [--pages 2000] [--seed 1] [--out DIR] [--port 8080]
 *
 * Host k (1-based) is 127.0.1.k:PORT. Each host has:
 *   /                                  the home page (page 0)
 *   /docs/sNN/page-I.html              pages 1 … P-1 (~8 KB, ~30 links each)
 *   /private/doc-J.html                disallowed by robots.txt, linked from pages
 *   /gone/page-J.html                  linked from some pages, never written (404)
 *   /static/site.css, /static/*.png    assets: <link rel=stylesheet>, <img src>, some <a href>
 *   /robots.txt                        User-agent: * / Disallow: /private/ / Sitemap:
 *   /sitemap.xml                       every allowed page of the host
 *
 * Links come in every form a crawler must normalise: absolute paths,
 * relative paths, absolute URLs, fragments. Some point to other hosts'
 * pages. Every page is reachable from its own host's home page (page i
 * links to page i+1), so a crawler that stays on one host at a time reaches
 * as much as one that follows cross-host links.
 *
 * Output (DIR, default bench/.work/site-<hosts>x<pages>):
 *   hosts/<ip>/…        document roots, one per host
 *   manifest.json       parameters and, per host, the reachable allowed pages
 *                       (the coverage denominator), private and missing paths
 *   config.xml          the trawl collection for the benchmark (delay 0, robots on)
 *   seeds.txt           the start URLs, one per line
 *
 * Deterministic: the same parameters and seed give byte-identical files.
 */

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { prng as rng } from '../../test/support/prng.ts';

export interface SiteOptions {
  readonly hosts: number;
  readonly pages: number;
  readonly seed: number;
  readonly port: number;
  readonly out: string;
  /** trawl's max_pending for the generated config.xml. */
  readonly maxPending?: number;
}

export interface HostManifest {
  readonly host: string;
  readonly origin: string;
  /** Request paths of the allowed pages reachable from the start URLs (HTML, status 200). */
  readonly reachable: readonly string[];
  /** Disallowed by robots.txt (and linked to). */
  readonly privatePaths: readonly string[];
  /** Linked to but missing (404). */
  readonly missingPaths: readonly string[];
  readonly assetPaths: readonly string[];
}

export interface SiteManifest {
  readonly generator: 1;
  readonly hosts: number;
  readonly pages: number;
  readonly seed: number;
  readonly port: number;
  readonly bytes: number;
  readonly files: number;
  readonly links: number;
  readonly seeds: readonly string[];
  readonly perHost: readonly HostManifest[];
}

export const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

export function defaultSiteDir(hosts: number, pages: number): string {
  return join(BENCH_DIR, '.work', `site-${hosts}x${pages}`);
}


const WORDS = (
  'crawler frontier politeness robots sitemap fetch parse link anchor queue host site page document index store ' +
  'refresh cycle delay schedule lease commit record checksum duplicate redirect status header content archive ' +
  'the of and to in a is that for it as was with be by on not he this are or his from at which but have an they ' +
  'you were her all she there would their we him been has when who will more no if out so said what up its about ' +
  'into than them can only other new some could time these two may then do first any my now such like our over'
).split(' ');

export const HOST_PREFIX = '127.0.1.';

export function hostName(k: number): string {
  return `${HOST_PREFIX}${k}`;
}

export function pagePath(i: number): string {
  return i === 0 ? '/' : `/docs/s${String(Math.floor(i / 100)).padStart(2, '0')}/page-${i}.html`;
}

/** The file under the host's document root that serves a request path. */
function fileOf(path: string): string {
  return path.endsWith('/') ? `${path}index.html` : path;
}

const PRIVATE_DOCS = (pages: number): number => Math.max(5, Math.ceil(pages / 100));
const MISSING_DOCS = (pages: number): number => Math.max(5, Math.ceil(pages / 80));
const IMAGES = 20;
const TARGET_BYTES = 8 * 1024;
const SAME_HOST_LINKS = 24;
const CROSS_HOST_LINKS = 3;

/** A 1×1 PNG (valid file; its bytes vary with n so no two assets are alike). */
function png(n: number): Buffer {
  const b = Buffer.from(
    '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
      '1f15c4890000000d49444154789c6360f8cfc0f01f0005000201' +
      'e221bc330000000049454e44ae426082',
    'hex',
  );
  return Buffer.concat([b, Buffer.from(`\n${n}\n`)]);
}

/** The href text of a link from `fromPath` on `fromHost` to `toPath` on `toHost`, in one of several forms. */
function hrefFor(r: () => number, origin: (k: number) => string, fromHost: number, fromPath: string, toHost: number, toPath: string): string {
  if (toHost !== fromHost) return `${origin(toHost)}${toPath}`;
  const x = r();
  if (x < 0.55) return toPath;
  if (x < 0.7) return `${origin(toHost)}${toPath}`;
  if (x < 0.8) return `${toPath}#sec-${Math.floor(r() * 5)}`;
  // Relative to the page's directory.
  const fromDir = fromPath.slice(0, fromPath.lastIndexOf('/') + 1);
  if (toPath.startsWith(fromDir) && toPath !== fromDir) return toPath.slice(fromDir.length);
  if (fromDir.startsWith('/docs/s') && toPath.startsWith('/docs/s')) return `..${toPath.slice('/docs'.length)}`;
  return toPath;
}

interface PageLinks {
  readonly pages: Array<[host: number, page: number]>;
  readonly privateDoc: number | undefined;
  readonly missing: number | undefined;
  readonly imageLink: number | undefined;
}

function linksOf(r: () => number, o: SiteOptions, host: number, page: number): PageLinks {
  const pages: Array<[number, number]> = [[host, 0]];
  if (page + 1 < o.pages) pages.push([host, page + 1]);
  for (let n = 0; n < SAME_HOST_LINKS; n++) pages.push([host, Math.floor(r() * o.pages)]);
  if (o.hosts > 1) {
    for (let n = 0; n < CROSS_HOST_LINKS; n++) {
      let h = 1 + Math.floor(r() * (o.hosts - 1));
      if (h >= host) h++;
      pages.push([h, Math.floor(r() * o.pages)]);
    }
  }
  return {
    pages,
    privateDoc: r() < 0.5 ? Math.floor(r() * PRIVATE_DOCS(o.pages)) : undefined,
    missing: r() < 0.2 ? Math.floor(r() * MISSING_DOCS(o.pages)) : undefined,
    imageLink: r() < 0.3 ? Math.floor(r() * IMAGES) : undefined,
  };
}

function words(r: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]!);
  return out.join(' ');
}

function renderPage(r: () => number, o: SiteOptions, origin: (k: number) => string, host: number, page: number, links: PageLinks): string {
  const path = pagePath(page);
  const title = `Host ${host} page ${page}: ${words(r, 4)}`;
  const anchors: string[] = links.pages.map(([h, p]) => `<a href="${hrefFor(r, origin, host, path, h, pagePath(p))}">${words(r, 2 + Math.floor(r() * 3))}</a>`);
  if (links.privateDoc !== undefined) anchors.push(`<a href="/private/doc-${links.privateDoc}.html">internal notes</a>`);
  if (links.missing !== undefined) anchors.push(`<a href="/gone/page-${links.missing}.html">${words(r, 2)}</a>`);
  if (links.imageLink !== undefined) anchors.push(`<a href="/static/img-${links.imageLink}.png">full-size figure</a>`);
  // Shuffle the in-text links (the nav keeps the first one, home).
  for (let i = anchors.length - 1; i > 1; i--) {
    const j = 1 + Math.floor(r() * i);
    [anchors[i], anchors[j]] = [anchors[j]!, anchors[i]!];
  }
  const head =
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${title}</title>\n` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n` +
    `<link rel="stylesheet" href="/static/site.css">\n<link rel="icon" href="/static/favicon.png">\n</head>\n<body>\n` +
    `<header><nav>${anchors[0]}</nav></header>\n<main>\n<h1>${title}</h1>\n`;
  const tail = `</main>\n<footer><p>Generated benchmark site, host ${host}.</p></footer>\n</body>\n</html>\n`;
  const img = `<figure><img src="/static/img-${Math.floor(r() * IMAGES)}.png" alt="figure"><figcaption>${words(r, 5)}</figcaption></figure>\n`;
  // Paragraphs carrying the links, then filler text up to the target size.
  const body: string[] = [];
  let size = head.length + tail.length + img.length;
  let next = 1;
  let para = 0;
  while (next < anchors.length || size < TARGET_BYTES) {
    const parts: string[] = [];
    const inThis = next < anchors.length ? 2 + Math.floor(r() * 3) : 0;
    for (let i = 0; i < 6; i++) {
      parts.push(words(r, 6 + Math.floor(r() * 8)));
      if (i < inThis && next < anchors.length) parts.push(anchors[next++]!);
    }
    const p = `<p id="sec-${para}">${parts.join(' ')}.</p>\n`;
    if (next >= anchors.length && size + p.length > TARGET_BYTES + 256) break;
    body.push(p);
    if (para === 1) body.push(img);
    size += p.length;
    para++;
  }
  return head + body.join('') + tail;
}

function renderPrivate(r: () => number, host: number, j: number, pages: number): string {
  return `<!doctype html>\n<html><head><title>Private ${host}/${j}</title></head><body><h1>Private document ${j}</h1><p>${words(r, 200)}</p><p><a href="/private/doc-${(j + 1) % PRIVATE_DOCS(pages)}.html">next</a> <a href="/">home</a></p></body></html>\n`;
}

function renderSitemap(origin: string, paths: readonly string[]): string {
  const urls = paths.map((p) => `  <url><loc>${origin}${p}</loc></url>`).join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls}\n</urlset>\n`;
}

const CSS = `body{font-family:sans-serif;max-width:48rem;margin:auto;line-height:1.5}nav a{margin-right:1rem}figure{margin:1rem 0}\n`;

/**
 * One page as the generator writes them (same size, link mix and link
 * forms), without writing a site: for the micro-benchmarks.
 */
export function samplePage(seed = 1, hosts = 50, pages = 2000, host = 7, page = 150, port = 8080): { url: string; html: string } {
  const o: SiteOptions = { hosts, pages, seed, port, out: '' };
  const r = rng(seed * 31 + host * 1009 + page);
  const origin = (k: number): string => `http://${hostName(k)}:${port}`;
  return { url: `${origin(host)}${pagePath(page)}`, html: renderPage(r, o, origin, host, page, linksOf(r, o, host, page)) };
}

/** The trawl collection for the benchmark: all hosts as start URIs and as the only domains in scope. */
export function trawlConfigXml(seeds: readonly string[], hosts: readonly string[], maxPending: number): string {
  const m = (xs: readonly string[]): string => xs.map((x) => `                <member> ${x} </member>`).join('\n');
  return `<?xml version="1.0" encoding="utf-8"?>
<!-- The crawl benchmark's collection (bench/site/generate.ts). -->
<CrawlerConfig>
    <DomainSpecification name="bench">
        <attrib name="start_uris" type="list-string">
${m(seeds)}
        </attrib>
        <attrib name="delay" type="real"> 0 </attrib>
        <attrib name="max_pending" type="integer"> ${maxPending} </attrib>
        <attrib name="robots" type="boolean"> yes </attrib>
        <section name="include_domains">
            <attrib name="exact" type="list-string">
${m(hosts)}
            </attrib>
        </section>
    </DomainSpecification>
</CrawlerConfig>
`;
}

export function generateSite(o: SiteOptions): SiteManifest {
  if (!Number.isInteger(o.hosts) || o.hosts < 1 || o.hosts > 254) throw new Error('--hosts must be 1…254');
  if (!Number.isInteger(o.pages) || o.pages < 2) throw new Error('--pages must be at least 2');
  rmSync(o.out, { recursive: true, force: true });
  const origin = (k: number): string => `http://${hostName(k)}:${o.port}`;
  let bytes = 0;
  let files = 0;
  let linkCount = 0;
  const made = new Set<string>();
  const write = (file: string, data: string | Buffer): void => {
    const dir = dirname(file);
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    writeFileSync(file, data);
    bytes += data.length;
    files++;
  };

  // Links first (one PRNG stream per host), so reachability can be computed over all hosts.
  const graph: PageLinks[][] = [];
  for (let h = 1; h <= o.hosts; h++) {
    const r = rng(o.seed * 7919 + h);
    const row: PageLinks[] = [];
    for (let p = 0; p < o.pages; p++) row.push(linksOf(r, o, h, p));
    graph.push(row);
  }
  // Reachable allowed pages: BFS from every host's home page over page links.
  const seen = graph.map(() => new Uint8Array(o.pages));
  const queue: Array<[number, number]> = [];
  for (let h = 1; h <= o.hosts; h++) {
    seen[h - 1]![0] = 1;
    queue.push([h, 0]);
  }
  for (let qi = 0; qi < queue.length; qi++) {
    const [h, p] = queue[qi]!;
    for (const [th, tp] of graph[h - 1]![p]!.pages) {
      if (!seen[th - 1]![tp]) {
        seen[th - 1]![tp] = 1;
        queue.push([th, tp]);
      }
    }
  }

  const perHost: HostManifest[] = [];
  for (let h = 1; h <= o.hosts; h++) {
    const host = hostName(h);
    const root = join(o.out, 'hosts', host);
    const r = rng(o.seed * 104729 + h);
    const reachable: string[] = [];
    for (let p = 0; p < o.pages; p++) {
      const links = graph[h - 1]![p]!;
      linkCount += links.pages.length + (links.privateDoc !== undefined ? 1 : 0) + (links.missing !== undefined ? 1 : 0) + (links.imageLink !== undefined ? 1 : 0);
      write(join(root, fileOf(pagePath(p))), renderPage(r, o, origin, h, p, links));
      if (seen[h - 1]![p]) reachable.push(pagePath(p));
    }
    const privatePaths: string[] = [];
    for (let j = 0; j < PRIVATE_DOCS(o.pages); j++) {
      privatePaths.push(`/private/doc-${j}.html`);
      write(join(root, 'private', `doc-${j}.html`), renderPrivate(r, h, j, o.pages));
    }
    const missingPaths = Array.from({ length: MISSING_DOCS(o.pages) }, (_, j) => `/gone/page-${j}.html`);
    const assetPaths = ['/static/site.css', '/static/favicon.png'];
    write(join(root, 'static', 'site.css'), CSS);
    write(join(root, 'static', 'favicon.png'), png(h * 1000));
    for (let i = 0; i < IMAGES; i++) {
      assetPaths.push(`/static/img-${i}.png`);
      write(join(root, 'static', `img-${i}.png`), png(h * 1000 + i + 1));
    }
    write(join(root, 'robots.txt'), `# Benchmark host ${host}\nUser-agent: *\nDisallow: /private/\n\nSitemap: ${origin(h)}/sitemap.xml\n`);
    write(join(root, 'sitemap.xml'), renderSitemap(origin(h), Array.from({ length: o.pages }, (_, p) => pagePath(p))));
    perHost.push({ host, origin: origin(h), reachable, privatePaths, missingPaths, assetPaths });
  }

  const seeds = perHost.map((p) => `${p.origin}/`);
  const manifest: SiteManifest = {
    generator: 1, hosts: o.hosts, pages: o.pages, seed: o.seed, port: o.port, bytes, files, links: linkCount, seeds, perHost,
  };
  writeFileSync(join(o.out, 'manifest.json'), JSON.stringify(manifest));
  writeFileSync(join(o.out, 'seeds.txt'), `${seeds.join('\n')}\n`);
  writeFileSync(join(o.out, 'config.xml'), trawlConfigXml(seeds, perHost.map((p) => p.host), o.maxPending ?? 8));
  return manifest;
}

// ------------------------------------------------------------ command line

export function parseFlags(argv: readonly string[], known: Record<string, 'string' | 'boolean'>): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') {
      out.help = true;
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    const kind = m ? known[m[1]!] : undefined;
    if (!m || !kind) throw new Error(`unknown argument ${a}`);
    if (kind === 'boolean') out[m[1]!] = true;
    else {
      const v = m[2] ?? argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      out[m[1]!] = v;
    }
  }
  return out;
}

function num(v: string | boolean | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`not a number: ${String(v)}`);
  return n;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const f = parseFlags(process.argv.slice(2), { hosts: 'string', pages: 'string', seed: 'string', out: 'string', port: 'string', 'max-pending': 'string' });
  if (f.help) {
    console.log('usage: node bench/site/generate.ts [--hosts 50] [--pages 2000] [--seed 1] [--port 8080] [--max-pending 8] [--out DIR]');
    process.exit(0);
  }
  const hosts = num(f.hosts, 50);
  const pages = num(f.pages, 2000);
  const out = resolve(typeof f.out === 'string' ? f.out : defaultSiteDir(hosts, pages));
  const t0 = performance.now();
  const m = generateSite({ hosts, pages, seed: num(f.seed, 1), port: num(f.port, 8080), out, maxPending: num(f['max-pending'], 8) });
  const reachable = m.perHost.reduce((n, h) => n + h.reachable.length, 0);
  console.log(`${out}: ${m.hosts} hosts × ${m.pages} pages, ${m.files} files, ${(m.bytes / 1048576).toFixed(1)} MiB, ${m.links} links, ${reachable} reachable allowed pages, in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
