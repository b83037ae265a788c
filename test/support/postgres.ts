/**
 * A PostgreSQL server of the test's own: a new cluster in a temporary
 * directory, listening on a loopback address and a free port, with a
 * password login, stopped and removed by `stop()`.
 *
 *   const pg = await startPostgres();        initdb + pg_ctl start (as the postgres user when run as root)
 *   const url = await pg.createDatabase();   a fresh, empty database: postgres://trawl:…@127.0.0.1:PORT/t_N
 *   await pg.stop();                         pg_ctl stop, the directory removed
 *
 * Root cannot run the server: as root, initdb and pg_ctl run as the
 * `postgres` user (runuser), in a directory that user owns. Tests that
 * need it take `{ skip: skipUnless(TOOLS.postgres) }`.
 */

import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { TOOLS, toolPath } from './system-tools.ts';
import { freePort } from './ports.ts';

const run = promisify(execFile);

export interface PostgresServer {
  readonly host: string;
  readonly port: number;
  /** The login every database of this server is reached with. */
  readonly user: string;
  readonly password: string;
  /** The URL of database `db` (the maintenance database `postgres` by default). */
  url(db?: string): string;
  /** Creates a new empty database owned by `user` and returns its URL. */
  createDatabase(): Promise<string>;
  /** The server's log so far (for a failing test's message). */
  log(): string;
  /** Stops the server (fast shutdown) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL program, as the postgres user when this process is root. */
async function pgRun(bin: string, args: string[], timeoutMs = 60_000): Promise<void> {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  await run(cmd, argv, { timeout: timeoutMs, env: { ...process.env, LC_ALL: 'C' } });
}

let databases = 0;

/**
 * `durable`: keep PostgreSQL's own durability settings (fsync, synchronous
 * commits) for measurements; by default a test server skips them, since
 * its data is thrown away.
 */
export async function startPostgres(opts: { host?: string; durable?: boolean } = {}): Promise<PostgresServer> {
  const initdb = toolPath(TOOLS.postgres);
  const bin = dirname(initdb);
  const host = opts.host ?? '127.0.0.1';
  const dir = mkdtempSync(join(tmpdir(), 'trawl-pg-'));
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const user = 'trawl';
  const password = `pw-${process.pid}-${Date.now().toString(36)}`;
  if (asRoot) chownSync(dir, ...uidGid('postgres'));
  let started = false;
  const stop = async (): Promise<void> => {
    if (started) {
      started = false;
      await pgRun(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop'], 30_000).catch(() => {});
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const pwFile = join(dir, 'pw');
    writeFileSync(pwFile, `${password}\n`);
    if (asRoot) chownSync(pwFile, ...uidGid('postgres'));
    await pgRun(initdb, ['-D', data, '-U', user, `--pwfile=${pwFile}`, '--auth-local=scram-sha-256', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const port = await freePort(host);
    writeFileSync(join(data, 'postgresql.conf'), [
      '', `listen_addresses = '${host}'`, `port = ${port}`, `unix_socket_directories = '${dir}'`,
      ...(opts.durable ? [] : ['fsync = off', 'synchronous_commit = off', 'full_page_writes = off']), 'max_connections = 100', 'shared_buffers = 128MB', '',
    ].join('\n'), { flag: 'a' });
    await pgRun(join(bin, 'pg_ctl'), ['-D', data, '-l', logFile, '-w', '-t', '60', 'start']);
    started = true;
    const url = (db = 'postgres'): string => `postgres://${user}:${encodeURIComponent(password)}@${host}:${port}/${db}`;
    return {
      host, port, user, password, url, stop,
      log: () => {
        try {
          return readFileSync(logFile, 'utf8');
        } catch {
          return '';
        }
      },
      async createDatabase() {
        const name = `t_${process.pid}_${databases++}`;
        const c = new pg.Client({ connectionString: url() });
        await c.connect();
        try {
          await c.query(`CREATE DATABASE ${name}`);
        } finally {
          await c.end();
        }
        return url(name);
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function uidGid(name: string): [number, number] {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${name}:`));
  if (!line) throw new Error(`no user ${name} (apt-get install postgresql creates it)`);
  const f = line.split(':');
  return [Number(f[2]), Number(f[3])];
}

/** One query on a connection of its own (a test reading what the nodes wrote). */
export async function pgQuery<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql, values)).rows;
  } finally {
    await c.end();
  }
}
