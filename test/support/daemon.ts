// Starts the real `trawl serve` (bin/trawl.js in a child process) and
// resolves once it listens; the daemon tests share it.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../helpers.ts';

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
