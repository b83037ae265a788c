// `npm run demo`: serves the bundled sample site on loopback, crawls it with
// `trawl crawl` (the real CLI, in a child process) and prints the summary.
// Needs no network beyond 127.0.0.1.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../examples/sample-site/', import.meta.url));
const moved = new Map(readFileSync(join(root, 'moved.txt'), 'utf8').trim().split('\n').map((l) => l.split(' ') as [string, string]));
const types: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.txt': 'text/plain; charset=utf-8' };

const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
  const to = moved.get(path);
  if (to) {
    res.writeHead(301, { location: to }).end();
    return;
  }
  let file = normalize(join(root, path));
  if (!file.startsWith(root) || path === '/moved.txt') {
    res.writeHead(404).end();
    return;
  }
  try {
    if (statSync(file).isDirectory()) file = join(file, 'index.html');
    const body = readFileSync(file);
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'content-length': body.length }).end(body);
  } catch {
    res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>Not found</title><h1>Not found</h1>');
  }
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  const data = mkdtempSync(join(tmpdir(), 'trawl-demo-'));
  const url = `http://127.0.0.1:${port}/`;
  console.log(`Serving examples/sample-site at ${url}; crawling it into ${data}\n`);
  console.log(`$ trawl crawl --data ${data} --allow-loopback ${url}`);
  // Asynchronous: this process must keep serving while trawl crawls it.
  const child = spawn(process.execPath, [fileURLToPath(new URL('../bin/trawl.js', import.meta.url)), 'crawl', '--data', data, '--allow-loopback', url], { stdio: 'inherit' });
  child.on('exit', (code) => {
    server.close();
    process.exitCode = code ?? 1;
  });
});
