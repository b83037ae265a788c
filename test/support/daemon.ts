// Starts the real `trawl serve` (bin/trawl.js in a child process) and
// resolves once it listens; the daemon tests share it.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import { ROOT } from '../helpers.ts';
import type { FixtureSite } from './fixture-site.ts';

export const TRAWL_BIN = join(ROOT, 'bin/trawl.js');

export async function spawnServe(args: readonly string[], opts: { env?: NodeJS.ProcessEnv; nodeArgs?: readonly string[] } = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), TRAWL_BIN, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? process.env });
  child.stdout!.resume();
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('serving MS-FSCADM')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`trawl serve exited ${code}: ${err}`)));
  });
  return child;
}

/** What a daemon test started, killed, closed and removed after its suite (registered with `after` where this is called). */
export interface DaemonTestParts {
  readonly daemons: ChildProcess[];
  readonly sites: FixtureSite[];
  readonly dirs: string[];
}

export function daemonTestParts(): DaemonTestParts {
  const parts: DaemonTestParts = { daemons: [], sites: [], dirs: [] };
  after(async () => {
    for (const d of parts.daemons) d.kill('SIGKILL');
    for (const s of parts.sites) await s.close();
    for (const d of parts.dirs) rmSync(d, { recursive: true, force: true });
  });
  return parts;
}
