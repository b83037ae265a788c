// Real authenticating servers for the access tests, each with a config,
// pid file and logs of the test's own in a temporary directory: nginx with
// auth_basic, and Apache httpd with mod_auth_digest. Their access logs
// (user and status of every request) are what the tests assert on.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { TOOLS, toolPath } from './system-tools.ts';

export interface LogLine {
  readonly user: string;
  readonly path: string;
  readonly status: number;
}

export interface AuthServer {
  readonly origin: string;
  /** Every request the server logged so far: user ("-" for none), path, status. */
  log(): LogLine[];
  stop(): Promise<void>;
}

/** Resolves when something accepts on ip:port; rejects after `ms`. */
async function listening(ip: string, port: number, ms: number, exited: () => string | undefined): Promise<void> {
  const until = Date.now() + ms;
  for (let i = 0; i < 200; i++) {
    const why = exited();
    if (why !== undefined) throw new Error(why);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ host: ip, port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${ip}:${port} after ${ms} ms`);
}

function readLog(file: string): LogLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => {
    const m = /^(\S+) "GET (\S+) HTTP\/1\.[01]" (\d{3})$/.exec(l);
    if (!m) throw new Error(`unexpected access log line: ${l}`);
    return { user: m[1]!, path: m[2]!, status: Number(m[3]) };
  });
}

function stopChild(child: ChildProcess, pid: number | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => {
      try {
        if (pid) process.kill(pid, 'SIGKILL');
        child.kill('SIGKILL');
      } catch {
        // gone
      }
      resolve();
    }, 5000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    try {
      if (pid) process.kill(pid, 'SIGTERM');
      else child.kill('SIGTERM');
    } catch {
      clearTimeout(t);
      resolve();
    }
  });
}

/** Files under `root` (path → content), readable by every user (Apache's workers run as nobody). */
function writeSite(root: string, files: Readonly<Record<string, string>>): void {
  for (const [path, body] of Object.entries(files)) {
    const file = join(root, path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, body);
  }
}

/**
 * nginx serving `files` from `dir`/www on ip:80, with `auth_basic "realm"`
 * on `protectedPrefix` and an htpasswd file of `users` (SHA-1 hashed).
 */
export async function startNginxBasic(dir: string, ip: string, opts: { realm: string; protectedPrefix: string; users: Readonly<Record<string, string>>; files: Readonly<Record<string, string>> }): Promise<AuthServer> {
  const nginx = toolPath(TOOLS.nginx);
  writeSite(join(dir, 'www'), opts.files);
  const htpasswd = Object.entries(opts.users).map(([u, p]) => `${u}:{SHA}${createHash('sha1').update(p).digest('base64')}`).join('\n');
  writeFileSync(join(dir, 'htpasswd'), `${htpasswd}\n`);
  const conf = `daemon off;
master_process off;
user root;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 64; }
http {
  log_format plain '$remote_user "$request" $status';
  access_log ${dir}/access.log plain;
  client_body_temp_path ${dir}/t-body; proxy_temp_path ${dir}/t-proxy; fastcgi_temp_path ${dir}/t-fcgi; uwsgi_temp_path ${dir}/t-uwsgi; scgi_temp_path ${dir}/t-scgi;
  types { text/html html; }
  default_type text/plain;
  server {
    listen ${ip}:80;
    root ${dir}/www;
    location ${opts.protectedPrefix} { auth_basic "${opts.realm}"; auth_basic_user_file ${dir}/htpasswd; }
  }
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = spawn(nginx, ['-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await listening(ip, 80, 10_000, () => (child.exitCode !== null ? `nginx exited ${child.exitCode}: ${stderr}${existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''}` : undefined));
  return {
    origin: `http://${ip}`,
    log: () => readLog(join(dir, 'access.log')),
    stop: () => stopChild(child, child.pid),
  };
}

/**
 * Apache httpd serving `files` from `dir`/www on ip:80, with Digest
 * authentication (mod_auth_digest, MD5, qop=auth) for realm `realm` on
 * `protectedPrefix`; the user file is htdigest's format, made here.
 * Started in its own session (detached = setsid): Apache signals its
 * process group when it stops.
 */
export async function startApacheDigest(dir: string, ip: string, opts: { realm: string; protectedPrefix: string; users: Readonly<Record<string, string>>; files: Readonly<Record<string, string>>; nonceLifetimeS?: number }): Promise<AuthServer> {
  const apache = toolPath(TOOLS.apache);
  const mods = '/usr/lib/apache2/modules';
  writeSite(join(dir, 'www'), opts.files);
  const md5 = (s: string): string => createHash('md5').update(s).digest('hex');
  writeFileSync(join(dir, 'htdigest'), Object.entries(opts.users).map(([u, p]) => `${u}:${opts.realm}:${md5(`${u}:${opts.realm}:${p}`)}`).join('\n') + '\n');
  const conf = `ServerRoot ${dir}
Listen ${ip}:80
PidFile ${dir}/httpd.pid
ErrorLog ${dir}/error.log
LoadModule mpm_event_module ${mods}/mod_mpm_event.so
LoadModule authn_core_module ${mods}/mod_authn_core.so
LoadModule authn_file_module ${mods}/mod_authn_file.so
LoadModule authz_core_module ${mods}/mod_authz_core.so
LoadModule authz_user_module ${mods}/mod_authz_user.so
LoadModule auth_digest_module ${mods}/mod_auth_digest.so
LoadModule mime_module ${mods}/mod_mime.so
User nobody
Group nogroup
ServerName ${ip}
DocumentRoot ${dir}/www
TypesConfig /dev/null
AddType text/html .html
LogFormat "%u \\"%r\\" %>s" plain
CustomLog ${dir}/access.log plain
<Location ${opts.protectedPrefix}>
  AuthType Digest
  AuthName "${opts.realm}"
  AuthDigestProvider file
  AuthUserFile ${dir}/htdigest
  AuthDigestNonceLifetime ${opts.nonceLifetimeS ?? 300}
  Require valid-user
</Location>
`;
  writeFileSync(join(dir, 'httpd.conf'), conf);
  // Apache's workers (nobody) read the site and the user file.
  chmodSync(dir, 0o755);
  for (const f of ['htdigest', 'httpd.conf']) chmodSync(join(dir, f), 0o644);
  const child = spawn(apache, ['-f', join(dir, 'httpd.conf'), '-DFOREGROUND'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await listening(ip, 80, 10_000, () => (child.exitCode !== null ? `apache2 exited ${child.exitCode}: ${stderr}${existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''}` : undefined));
  return {
    origin: `http://${ip}`,
    log: () => readLog(join(dir, 'access.log')).map((l) => l),
    stop: () => stopChild(child, child.pid),
  };
}

/** Where Debian's python3-ntlm-auth puts its module (the NTLM server imports it). */
export const NTLM_AUTH_MODULE = '/usr/lib/python3/dist-packages/ntlm_auth';

/**
 * A server of the test's (test/support/ntlm-server.py, Debian's Python with
 * python3-ntlm-auth) that requires NTLMv2 on /private/ and checks each
 * AUTHENTICATE with ntlm_auth's own NTLMv2 computation, per connection.
 */
export async function startNtlmServer(dir: string, ip: string, opts: { user: string; password: string; domain: string }): Promise<AuthServer> {
  const python = toolPath(TOOLS.debianPython);
  mkdirSync(dir, { recursive: true });
  const log = join(dir, 'access.log');
  const script = join(import.meta.dirname, 'ntlm-server.py');
  // ntlm_auth hashes with hashlib's MD4, which OpenSSL 3 keeps in its legacy provider: this process's OpenSSL loads it.
  const conf = join(dir, 'openssl.cnf');
  writeFileSync(conf, 'openssl_conf = init\n[init]\nproviders = providers\n[providers]\ndefault = on\nlegacy = on\n[on]\nactivate = 1\n');
  const child = spawn(python, [script, ip, '80', opts.user, opts.password, opts.domain, log], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, OPENSSL_CONF: conf } });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await listening(ip, 80, 10_000, () => (child.exitCode !== null ? `ntlm-server.py exited ${child.exitCode}: ${out}` : undefined));
  return { origin: `http://${ip}`, log: () => readLog(log), stop: () => stopChild(child, child.pid) };
}
