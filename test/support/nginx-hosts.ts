// Debian's nginx serving many sites at once, one per loopback address
// (127.0.x.y), each from a folder of its own, on one port. Its access log
// names, for every request, when nginx logged it (ms), the address asked,
// the User-Agent, the status and the path: a multinode test tells its
// nodes apart by their User-Agent (a <Node> override of `headers`).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { nginxPreamble, runNginx, writePages } from './nginx-tls.ts';

export interface AccessLine {
  /** When nginx logged the request, in ms since the epoch. */
  readonly ms: number;
  readonly host: string;
  readonly agent: string;
  readonly status: number;
  readonly path: string;
}

export interface NginxHosts {
  readonly port: number;
  /** http://host:port */
  origin(host: string): string;
  accessLog(): AccessLine[];
  stop(): Promise<void>;
}

/**
 * nginx in `dir` serving `sitesFor(port)` (host → path → HTML) over plain
 * HTTP, every host on one port (pages that link to other hosts name it).
 */
export async function startNginxHosts(dir: string, hosts: readonly string[], sitesFor: (port: number) => Readonly<Record<string, Readonly<Record<string, string>>>>): Promise<NginxHosts> {
  const port = await freePort(hosts[0]);
  const sites = sitesFor(port);
  const root = join(dir, 'www');
  for (const [host, pages] of Object.entries(sites)) writePages(join(root, host), pages);
  const access = join(dir, 'access.log');
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, `${nginxPreamble(dir, 'warn', 512)}
  log_format hosts '$msec|$server_addr|$http_user_agent|$status|$request_uri';
  access_log ${access} hosts;
  server {
${hosts.map((h) => `    listen ${h}:${port};`).join('\n')}
    root ${root}/$server_addr;
    location / { try_files $uri $uri/ =404; }
  }
}
`);
  const nginx = await runNginx(dir, conf, access, hosts, port);
  return {
    port,
    origin: (host) => `http://${host}:${port}`,
    accessLog: () => nginx.accessLines().map((l) => {
      const [ms, host, agent, status, ...path] = l.split('|');
      return { ms: Math.round(Number(ms) * 1000), host: host!, agent: agent!, status: Number(status), path: path.join('|') };
    }),
    stop: nginx.stop,
  };
}
