/**
 * The floor under any Node crawler on this machine: the bench site's
 * reachable pages fetched with undici (trawl's HTTP client), 64 at once
 * with 8 connections per host as in the crawl benchmark, each body read
 * into one Buffer and dropped. No parsing, no storage, no politeness.
 * bench/README.md (*Where the time goes*) sets trawl's CPU per page
 * against this one.
 *
 *   node bench/fetch-floor.ts [--site DIR] [--mode request|dispatch|http]     (nginx must be serving DIR: bash bench/nginx.sh start DIR)
 *
 * `--mode request` (the default, which the figures in bench/README.md
 * used) reads each body through undici's `request()` and its body stream,
 * as trawl's fetcher did before 6d4d483. `--mode dispatch` hands undici a
 * handler of its own (`Dispatcher.dispatch`) that gathers the chunks as
 * they arrive, with no stream, as trawl's fetcher does now (without its
 * limits): what the stream cost. `--mode http` uses Node's own HTTP
 * client (`node:http`, its parser native rather than WebAssembly) with a
 * keep-alive agent of 8 sockets per host: what another client would cost.
 */

import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, get as httpGet } from 'node:http';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { defaultSiteDir, parseFlags, type SiteManifest } from './site/generate.ts';

const f = parseFlags(process.argv.slice(2), { site: 'string', mode: 'string' });
if (f.help) {
  console.log('usage: node bench/fetch-floor.ts [--site DIR] [--mode request|dispatch|http]   (start nginx first: bash bench/nginx.sh start DIR)');
  process.exit(0);
}
const site = typeof f.site === 'string' ? f.site : defaultSiteDir(50, 2000);
let manifest: SiteManifest;
try {
  manifest = JSON.parse(readFileSync(join(site, 'manifest.json'), 'utf8')) as SiteManifest;
} catch (err) {
  console.error(`fetch-floor: cannot read ${join(site, 'manifest.json')} (${(err as Error).message}); generate the site with npm run bench:crawl first`);
  process.exit(2);
}
const urls = manifest.perHost.flatMap((h) => h.reachable.map((p) => `${h.origin}${p}`));

const mode = f.mode ?? 'request';
if (mode !== 'request' && mode !== 'dispatch' && mode !== 'http') {
  console.error(`fetch-floor: --mode takes request, dispatch or http, not ${String(mode)}`);
  process.exit(2);
}

/** One GET through a handler of our own: the chunks gathered into one Buffer. */
function dispatchGet(url: URL): Promise<{ statusCode: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let statusCode = 0;
    // undici 7's Agent takes the handler methods of its core Request (onConnect, onHeaders, …).
    agent.dispatch({ origin: url.origin, path: url.pathname + url.search, method: 'GET', headers: { 'user-agent': 'trawl-fetch-floor' } }, {
      onConnect: () => {},
      onHeaders: (status: number) => {
        statusCode = status;
        return true;
      },
      onData: (chunk: Buffer) => {
        chunks.push(chunk);
        return true;
      },
      onComplete: () => resolve({ statusCode, body: Buffer.concat(chunks) }),
      onError: (err: Error) => reject(err),
    } as unknown as Parameters<typeof agent.dispatch>[1]);
  });
}

/** One GET through node:http, the body gathered into one Buffer. */
function httpGetBody(url: string): Promise<{ statusCode: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: httpAgent, headers: { 'user-agent': 'trawl-fetch-floor' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const CONCURRENCY = 64;
const agent = new Agent({ connections: 8 });
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 8 });
let next = 0;
let bytes = 0;
let failures = 0;
const t0 = performance.now();
const cpu0 = process.cpuUsage();
await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
  while (next < urls.length) {
    const url = urls[next++]!;
    if (mode === 'dispatch' || mode === 'http') {
      const res = mode === 'http' ? await httpGetBody(url) : await dispatchGet(new URL(url));
      bytes += res.body.length;
      if (res.statusCode !== 200) failures++;
      continue;
    }
    const res = await request(url, { dispatcher: agent, headers: { 'user-agent': 'trawl-fetch-floor' } });
    const chunks: Buffer[] = [];
    for await (const chunk of res.body) chunks.push(chunk as Buffer);
    bytes += Buffer.concat(chunks).length;
    if (res.statusCode !== 200) failures++;
  }
}));
const cpu = process.cpuUsage(cpu0);
const s = (performance.now() - t0) / 1000;
await agent.close();
httpAgent.destroy();
const perPage = (us: number): string => (us / 1000 / urls.length).toFixed(3);
console.log(`${mode}: ${urls.length.toLocaleString('en-US')} pages (${failures} not 200), ${(bytes / 1048576).toFixed(0)} MiB in ${s.toFixed(1)} s: ${Math.round(urls.length / s).toLocaleString('en-US')} pages/s, ` +
  `${perPage(cpu.user + cpu.system)} CPU ms/page (user ${perPage(cpu.user)}, sys ${perPage(cpu.system)})`);
if (failures > 0) process.exitCode = 1;
