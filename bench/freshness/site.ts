/**
 * The freshness benchmark's site: pages that change on a schedule the
 * benchmark knows, served on one loopback address, with a log of every
 * request and the version of the page it answered with.
 *
 *   /                 the index: links to every page (never changes)
 *   /p/NNN.html       page NNN, version v = ⌊(t − t0 + phase) / period⌋ of its group:
 *                       hot   every `hotS` seconds      (a few pages)
 *                       warm  every `warmS` seconds     (some)
 *                       cold  every `coldS` seconds     (most: rarely, or never within a run)
 *                     even pages send Last-Modified (the start of their version) and answer
 *                     If-Modified-Since with 304; odd pages send neither
 *   /sitemap.xml      every page, two in three with a changefreq that tells the truth
 *                     (hot: always, warm: hourly, cold: monthly), the third with none
 *   /robots.txt       names the sitemap
 */

import http from 'node:http';

export type Group = 'hot' | 'warm' | 'cold';

export interface FreshnessSiteOptions {
  readonly ip: string;
  readonly pages: number;
  readonly hot: number;
  readonly warm: number;
  readonly hotS: number;
  readonly warmS: number;
  readonly coldS: number;
}

export interface Served {
  readonly page: number;
  readonly ms: number;
  readonly version: number;
  readonly status: number;
}

export interface FreshnessSite {
  readonly origin: string;
  readonly t0: number;
  readonly groups: readonly Group[];
  /** Page requests (not the index, robots.txt or the sitemap), in order. */
  readonly served: Served[];
  /** Every request, the others included. */
  requests: number;
  version(page: number, ms: number): number;
  /** When version `v` of a page began (ms). */
  versionStart(page: number, v: number): number;
  close(): Promise<void>;
}

const CHANGEFREQ: Readonly<Record<Group, string>> = { hot: 'always', warm: 'hourly', cold: 'monthly' };

export async function startFreshnessSite(o: FreshnessSiteOptions): Promise<FreshnessSite> {
  const t0 = Date.now();
  const groups: Group[] = Array.from({ length: o.pages }, (_, i) => (i < o.hot ? 'hot' : i < o.hot + o.warm ? 'warm' : 'cold'));
  const periodMs = (i: number): number => 1000 * (groups[i] === 'hot' ? o.hotS : groups[i] === 'warm' ? o.warmS : o.coldS);
  // Spread the changes: page i's first change falls at a fixed fraction of its period.
  const phaseMs = (i: number): number => periodMs(i) * (((i * 0.618034) % 1));
  const version = (i: number, ms: number): number => Math.floor((ms - t0 + phaseMs(i)) / periodMs(i));
  const versionStart = (i: number, v: number): number => t0 + v * periodMs(i) - phaseMs(i);
  const name = (i: number): string => `/p/${String(i).padStart(3, '0')}.html`;
  const served: Served[] = [];
  let origin = '';
  const site: FreshnessSite = {
    get origin() {
      return origin;
    },
    t0, groups, served, requests: 0, version, versionStart,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  const server = http.createServer((req, res) => {
    site.requests++;
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n`);
      return;
    }
    if (path === '/sitemap.xml') {
      const urls = groups.map((g, i) => `<url><loc>${origin}${name(i)}</loc>${i % 3 !== 0 ? `<changefreq>${CHANGEFREQ[g]}</changefreq>` : ''}</url>`);
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.join('')}</urlset>`);
      return;
    }
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><head><title>index</title></head><body>${groups.map((_, i) => `<a href="${name(i)}">page ${i}</a>`).join(' ')}</body></html>`);
      return;
    }
    const m = /^\/p\/(\d{3})\.html$/.exec(path);
    const i = m ? Number(m[1]) : -1;
    if (i < 0 || i >= o.pages) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<p>not found</p>');
      return;
    }
    const now = Date.now();
    const v = version(i, now);
    const headers: Record<string, string> = { 'content-type': 'text/html' };
    if (i % 2 === 0) {
      const lm = Math.floor(versionStart(i, v) / 1000) * 1000;
      headers['last-modified'] = new Date(lm).toUTCString();
      const ims = req.headers['if-modified-since'];
      const since = ims !== undefined ? Date.parse(ims) : NaN;
      if (Number.isFinite(since) && lm <= since) {
        served.push({ page: i, ms: now, version: v, status: 304 });
        res.writeHead(304, headers);
        res.end();
        return;
      }
    }
    served.push({ page: i, ms: now, version: v, status: 200 });
    res.writeHead(200, headers);
    res.end(`<html><head><title>page ${i}</title></head><body><p>page ${i} (${groups[i]}), version ${v}</p><a href="/">index</a></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, o.ip, resolve));
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no address');
  origin = `http://${o.ip}:${addr.port}`;
  return site;
}
