/**
 * A real FTP server for tests: Debian's pyftpdlib (python3-pyftpdlib),
 * started on a loopback address with a directory tree of the test's, an
 * anonymous account (read-only, on `root`) and protected accounts (each
 * with its own home), logging every command and reply at DEBUG level to a
 * file the test reads (`log()`, `retrieved()`).
 *
 *   startFtpServer({ ip, files: { 'a.txt': 'hello', 'sub/b.html': '<a href=…>' }, users: [...] })
 *     └─ /usr/bin/python3 <script> <json>  ── prints its port once listening
 *
 * `masquerade` makes the PASV reply name another address than the one the
 * control connection is on (pyftpdlib's masquerade_address): what an FTP
 * bounce or a hostile server does.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TOOLS, toolPath } from './system-tools.ts';

export interface FtpUser {
  readonly name: string;
  readonly password: string;
  /** The user's home, relative to the server's directory. */
  readonly home: string;
}

export interface FtpServerSpec {
  readonly ip: string;
  /** Where the tree and the log go (a temp directory of the test). */
  readonly dir: string;
  /** Path (relative, "/" separated) → content. Directories are made as needed. */
  readonly files: Readonly<Record<string, string | Buffer>>;
  /** The anonymous account's home, relative to the tree ("" = the tree itself); undefined: no anonymous login. */
  readonly anonymousHome?: string;
  readonly users?: readonly FtpUser[];
  readonly masquerade?: string;
  /** Bytes per second the server sends files at (pyftpdlib's ThrottledDTPHandler): a slow server. */
  readonly throttleBytesPerS?: number;
}

export interface FtpServer {
  readonly ip: string;
  readonly port: number;
  readonly root: string;
  url(path: string): string;
  /** The server's log so far. */
  log(): string;
  /** The paths (from the tree's root) of the files the server sent completely ("RETR … completed=1"), in order. */
  retrieved(): string[];
  /** The commands the server received, e.g. "PASV", "PORT", "RETR /a.txt", "USER anonymous". */
  commands(): string[];
  close(): Promise<void>;
}

const SCRIPT = String.raw`
import json, logging, os, sys, time
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer

spec = json.loads(sys.argv[1])
logging.basicConfig(filename=spec["log"], level=logging.DEBUG, format="%(message)s")
auth = DummyAuthorizer()
if spec.get("anonymous") is not None:
    auth.add_anonymous(os.path.join(spec["root"], spec["anonymous"]), perm="elr")
for u in spec.get("users", []):
    auth.add_user(u["name"], u["password"], os.path.join(spec["root"], u["home"]), perm="elr")
class Handler(FTPHandler):
    pass
Handler.authorizer = auth
Handler.banner = "trawl test server"
Handler.permit_foreign_addresses = False
Handler.auth_failed_timeout = 0.1
if spec.get("masquerade"):
    Handler.masquerade_address = spec["masquerade"]
if spec.get("throttle"):
    from pyftpdlib.handlers import ThrottledDTPHandler
    class Slow(ThrottledDTPHandler):
        write_limit = spec["throttle"]
        ac_out_buffer_size = 256
    Handler.dtp_handler = Slow
server = FTPServer((spec["ip"], 0), Handler)
print(server.address[1], flush=True)
parent = os.getppid()
deadline = time.time() + 600
while time.time() < deadline and os.getppid() == parent:
    server.serve_forever(timeout=0.2, blocking=False)
server.close_all()
`;

export async function startFtpServer(spec: FtpServerSpec): Promise<FtpServer> {
  const python = toolPath(TOOLS.pyftpdlib);
  const root = join(spec.dir, 'tree');
  mkdirSync(root, { recursive: true });
  for (const [path, content] of Object.entries(spec.files)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    if (path.endsWith('/')) continue;
    writeFileSync(full, content);
  }
  for (const u of spec.users ?? []) mkdirSync(join(root, u.home), { recursive: true });
  const logFile = join(spec.dir, 'ftp.log');
  writeFileSync(logFile, '');
  const script = join(spec.dir, 'ftp-server.py');
  writeFileSync(script, SCRIPT);
  const json = JSON.stringify({ ip: spec.ip, root, log: logFile, anonymous: spec.anonymousHome, users: spec.users ?? [], masquerade: spec.masquerade, throttle: spec.throttleBytesPerS });
  const child: ChildProcess = spawn(python, [script, json], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pyftpdlib did not start in 10 s: ${stderr}`)), 10_000);
    child.stdout!.once('data', (d: Buffer) => {
      clearTimeout(timer);
      resolve(Number(d.toString().trim()));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`pyftpdlib exited with ${code}: ${stderr}`));
    });
  });
  const log = (): string => readFileSync(logFile, 'utf8');
  return {
    ip: spec.ip,
    port,
    root,
    url: (path) => `ftp://${spec.ip.includes(':') ? `[${spec.ip}]` : spec.ip}:${port}${path}`,
    log,
    retrieved: () => {
      const out: string[] = [];
      for (const m of log().matchAll(/\bRETR (.+) completed=1 /g)) out.push(m[1]!.slice(root.length));
      return out;
    },
    commands: () => [...log().matchAll(/<- (.+)$/gm)].map((m) => m[1]!.trim()),
    close: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}
