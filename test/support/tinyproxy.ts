// Debian's tinyproxy, started by a test with a configuration of its own on a
// loopback address: its log (LogLevel Connect) names every request it took,
// plain ("GET http://…") or tunnelled ("CONNECT host:port"), and `bind`
// makes its outgoing connections come from an address of the test's choice,
// so the site's own log shows that a request came through the proxy.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { TOOLS, toolPath } from './system-tools.ts';
import { canConnect, freePort } from './ports.ts';

export interface Tinyproxy {
  readonly host: string;
  readonly port: number;
  /** The log's lines so far. */
  log(): string[];
  /** The request lines of the log: "GET http://host:port/path HTTP/1.1", "CONNECT host:port HTTP/1.1". */
  requests(): string[];
  stop(): Promise<void>;
}

/** Resolves once `host:port` takes a connection (at most 5 s, 25 ms apart); stops early when `gone()`. */
export async function waitListening(host: string, port: number, gone: () => boolean): Promise<void> {
  const until = Date.now() + 5000;
  while (!gone()) {
    if (await canConnect(host, port)) return;
    if (Date.now() > until) throw new Error(`nothing listens on ${host}:${port} after 5 s`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Starts tinyproxy on `host` (a 127.0.x.y address) in `dir`. `auth`: the
 * BasicAuth user and password it requires; `bind`: the address its
 * connections to the sites come from.
 */
export async function startTinyproxy(dir: string, host: string, opts: { auth?: { user: string; password: string }; bind?: string } = {}): Promise<Tinyproxy> {
  const bin = toolPath(TOOLS.tinyproxy);
  const port = await freePort(host);
  const logFile = join(dir, `tinyproxy-${port}.log`);
  const conf = join(dir, `tinyproxy-${port}.conf`);
  writeFileSync(conf, [
    `Port ${port}`,
    `Listen ${host}`,
    ...(opts.bind ? [`Bind ${opts.bind}`] : []),
    'Timeout 30',
    `LogFile "${logFile}"`,
    'LogLevel Connect',
    'MaxClients 64',
    'Allow 127.0.0.0/8',
    ...(opts.auth ? [`BasicAuth ${opts.auth.user} ${opts.auth.password}`] : []),
    '',
  ].join('\n'));
  const child: ChildProcess = spawn(bin, ['-d', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const read = (): string[] => (existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').filter(Boolean) : []);
  try {
    await waitListening(host, port, () => child.exitCode !== null);
    if (child.exitCode !== null) throw new Error(`tinyproxy exited ${child.exitCode}: ${stderr}`);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    host,
    port,
    log: read,
    requests: () => read().flatMap((l) => {
      const m = /Request \(file descriptor \d+\): (.*)$/.exec(l);
      return m ? [m[1]!] : [];
    }),
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    }),
  };
}
