/**
 * The JavaScript site of the render benchmark (bench/render.ts): N pages on
 * one loopback host, in four kinds by their index (i mod 4), each linking to
 * three others (i+1, 7i+1, 13i+2, mod N):
 *
 *   /p/i  plain: the links are in the HTML as served
 *   /j/i  script: the links are inserted by a shared script (/static/app.js) from data in the page
 *   /f/i  fetch: the script fetches /api/i.json, which lists the links
 *   /r/i  client-side routing: the script pushes /r/… onto the history (history.pushState)
 *         for its first link and inserts the others
 *
 * Every page, whatever its kind, carries a paragraph of text written by the
 * script (the plain ones in the HTML). The server logs every request; the
 * coverage is the share of the N pages requested.
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface JsSite {
  readonly origin: string;
  readonly pages: number;
  /** Requests by path since the last reset. */
  readonly log: string[];
  pagePaths(): Set<string>;
  reset(): void;
  close(): Promise<void>;
}

const KINDS = ['p', 'j', 'f', 'r'] as const;

export function pagePath(i: number): string {
  return `/${KINDS[i % 4]}/${i}`;
}

function targets(i: number, n: number): number[] {
  return [(i + 1) % n, (7 * i + 1) % n, (13 * i + 2) % n];
}

const APP_JS = `(() => {
  const d = JSON.parse(document.getElementById('data').textContent);
  const out = document.getElementById('out');
  const add = (links) => {
    out.insertAdjacentHTML('beforeend', '<p>' + d.text + '</p>' + links.map((l) => '<a href="' + l + '">' + l + '</a>').join(' '));
  };
  if (d.kind === 'j') add(d.links);
  if (d.kind === 'f') fetch('/api/' + d.i + '.json').then((r) => r.json()).then((j) => add(j.links));
  if (d.kind === 'r') {
    history.pushState({ from: d.i }, '', d.links[0]);
    add(d.links.slice(1));
  }
})();`;

function text(i: number): string {
  return `Page ${i} of the render benchmark: some words that only appear once the script ran, number ${(i * 2654435761) % 1000}.`;
}

function html(i: number, n: number): string {
  const kind = KINDS[i % 4]!;
  const links = targets(i, n).map(pagePath);
  const head = `<!doctype html><html><head><meta charset="utf-8"><title>page ${i}</title><link rel="stylesheet" href="/static/site.css"></head><body><h1>page ${i}</h1>`;
  if (kind === 'p') return `${head}<p>${text(i)}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;
  const data = JSON.stringify({ kind, i, text: text(i), links: kind === 'f' ? [] : links });
  return `${head}<div id="out"></div><script type="application/json" id="data">${data}</script><script src="/static/app.js"></script></body></html>`;
}

export async function startJsSite(opts: { ip: string; port?: number; pages: number }): Promise<JsSite> {
  const n = opts.pages;
  const log: string[] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    log.push(path);
    const send = (status: number, type: string, body: string): void => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (path === '/robots.txt') return send(200, 'text/plain', 'User-agent: *\nDisallow:\n');
    if (path === '/') return send(200, 'text/html; charset=utf-8', html(0, n).replace('<h1>page 0</h1>', '<h1>home</h1>'));
    if (path === '/static/app.js') return send(200, 'application/javascript', APP_JS);
    if (path === '/static/site.css') return send(200, 'text/css', 'body { font-family: sans-serif; }');
    let m = /^\/api\/(\d+)\.json$/.exec(path);
    if (m) {
      const i = Number(m[1]);
      if (i < n) return send(200, 'application/json', JSON.stringify({ links: targets(i, n).map(pagePath) }));
    }
    m = /^\/([pjfr])\/(\d+)$/.exec(path);
    if (m) {
      const i = Number(m[2]);
      if (i < n && KINDS[i % 4] === m[1]) return send(200, 'text/html; charset=utf-8', html(i, n));
    }
    return send(404, 'text/html', '<p>not found</p>');
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.ip, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://${opts.ip}:${port}`,
    pages: n,
    log,
    pagePaths: () => new Set(log.filter((p) => /^\/[pjfr]\/\d+$/.test(p) || p === '/')),
    reset: () => {
      log.length = 0;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
