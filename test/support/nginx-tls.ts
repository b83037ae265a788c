// Debian's nginx as an HTTPS site that requires a client certificate
// (`ssl_verify_client on`), with a CA, a server and a client certificate
// the test makes with openssl in its own folder. nginx runs in the
// foreground with its own configuration, pid file and logs; its access log
// names, for every request, the client address, the certificate's subject
// and nginx's verdict on it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOOLS, toolPath } from './system-tools.ts';
import { freePort } from './ports.ts';
import { waitListening } from './tinyproxy.ts';

export interface TestPki {
  readonly dir: string;
  /** The CA certificate (PEM file): what the crawler must trust (NODE_EXTRA_CA_CERTS). */
  readonly caCert: string;
  readonly serverKey: string;
  readonly serverCert: string;
  readonly clientKey: string;
  readonly clientCert: string;
  /** A key that belongs to no certificate here. */
  readonly strayKey: string;
  /** The client key, encrypted with a passphrase. */
  readonly encryptedKey: string;
}

/** A CA, a server certificate for `ip`, and a client certificate CN=trawl-test-client, made with openssl in `dir`. */
export function makePki(dir: string, ip: string): TestPki {
  const openssl = toolPath(TOOLS.openssl);
  mkdirSync(dir, { recursive: true });
  const f = (name: string): string => join(dir, name);
  const run = (args: string[]): void => {
    execFileSync(openssl, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=trawl-test-ca']);
  writeFileSync(f('server.ext'), `subjectAltName=IP:${ip}\nextendedKeyUsage=serverAuth\n`);
  run(['req', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', `/CN=${ip}`]);
  run(['x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('server.pem'), '-days', '2', '-extfile', f('server.ext')]);
  writeFileSync(f('client.ext'), 'extendedKeyUsage=clientAuth\n');
  run(['req', ...ec, '-keyout', f('client.key'), '-out', f('client.csr'), '-subj', '/CN=trawl-test-client']);
  run(['x509', '-req', '-in', f('client.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('client.pem'), '-days', '2', '-extfile', f('client.ext')]);
  run(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', f('stray.key')]);
  run(['pkey', '-in', f('client.key'), '-aes-128-cbc', '-passout', 'pass:secret', '-out', f('client-encrypted.key')]);
  return {
    dir, caCert: f('ca.pem'), serverKey: f('server.key'), serverCert: f('server.pem'), clientKey: f('client.key'), clientCert: f('client.pem'),
    strayKey: f('stray.key'), encryptedKey: f('client-encrypted.key'),
  };
}

export interface NginxTls {
  readonly ip: string;
  readonly port: number;
  /** https://ip:port */
  readonly origin: string;
  /** The access log's lines: "remote_addr|status|ssl_client_verify|ssl_client_s_dn|request". */
  accessLog(): Array<{ remote: string; status: number; verify: string; subject: string; request: string }>;
  stop(): Promise<void>;
}

/** Writes each page (path → HTML; a path ending in / is its index.html) under `root`. */
export function writePages(root: string, pages: Readonly<Record<string, string>>): void {
  for (const [path, html] of Object.entries(pages)) {
    const file = join(root, path.endsWith('/') ? `${path}index.html` : path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, html);
  }
}

/** An nginx.conf up to inside its http block: everything nginx writes kept in `dir`, the types the test sites serve. */
export function nginxPreamble(dir: string, errorLevel: string, connections: number): string {
  // Run as root in a test container, nginx would hand its workers to "nobody": keep the caller's user.
  const user = process.getuid?.() === 0 ? 'user root root;' : '';
  return `${user}
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} ${errorLevel};
events { worker_connections ${connections}; }
http {
  client_body_temp_path ${join(dir, 'tmp-body')};
  proxy_temp_path ${join(dir, 'tmp-proxy')};
  fastcgi_temp_path ${join(dir, 'tmp-fastcgi')};
  uwsgi_temp_path ${join(dir, 'tmp-uwsgi')};
  scgi_temp_path ${join(dir, 'tmp-scgi')};
  types { text/html html; text/plain txt; }`;
}

/**
 * nginx on `ip` (HTTPS, a client certificate from the PKI's CA required),
 * serving `pages` (path → HTML) from a folder of its own.
 */
export async function startNginxTls(dir: string, ip: string, pki: TestPki, pages: Record<string, string>): Promise<NginxTls> {
  const port = await freePort(ip);
  const root = join(dir, 'www');
  writePages(root, pages);
  const access = join(dir, 'access.log');
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, `${nginxPreamble(dir, 'info', 64)}
  log_format trawl '$remote_addr|$status|$ssl_client_verify|$ssl_client_s_dn|$request';
  access_log ${access} trawl;
  server {
    listen ${ip}:${port} ssl;
    server_name ${ip};
    ssl_certificate ${pki.serverCert};
    ssl_certificate_key ${pki.serverKey};
    ssl_client_certificate ${pki.caCert};
    ssl_verify_client on;
    root ${root};
    location / { try_files $uri $uri/ =404; }
  }
}
`);
  const nginx = await runNginx(dir, conf, access, [ip], port);
  return {
    ip,
    port,
    origin: `https://${ip}:${port}`,
    accessLog: () => nginx.accessLines().map((l) => {
      const [remote, status, verify, subject, ...request] = l.split('|');
      return { remote: remote!, status: Number(status), verify: verify!, subject: subject!, request: request.join('|') };
    }),
    stop: nginx.stop,
  };
}

/** A running nginx: its access log's lines, and a graceful stop. */
export interface RunningNginx {
  /** The access log's lines so far (none before the first request). */
  readonly accessLines: () => string[];
  readonly stop: () => Promise<void>;
}

/**
 * Runs Debian's nginx on `conf` (written under `dir`) in the foreground and
 * resolves once it listens on `port` of every address in `hosts`; rejects
 * with its stderr when it exits first. `stop` sends SIGQUIT, a graceful stop
 * that lets the access log be written out (SIGKILL after 5 s).
 */
export async function runNginx(dir: string, conf: string, access: string, hosts: readonly string[], port: number): Promise<RunningNginx> {
  const child: ChildProcess = spawn(toolPath(TOOLS.nginx), ['-e', join(dir, 'error.log'), '-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    for (const h of hosts) await waitListening(h, port, () => child.exitCode !== null);
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${stderr}`);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    accessLines: () => (existsSync(access) ? readFileSync(access, 'utf8').split('\n').filter(Boolean) : []),
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGQUIT');
    }),
  };
}
