// Runs the real `trawl` command (bin/trawl.js in a child process) without
// blocking the test's process, which usually serves the fixture site the
// command crawls. Every CLI test goes through this one runner.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../helpers.ts';

export const TRAWL_CLI = join(ROOT, 'bin/trawl.js');

export interface TrawlRun {
  /** The exit status; null when the process was ended by a signal (the timeout's SIGKILL among them). */
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

export interface TrawlRunOptions {
  /** Written to standard input, which is then closed; without it, standard input is empty. */
  readonly stdin?: string;
  /** The process is killed after this long (default 60 s). */
  readonly timeoutMs?: number;
  /** Added to this process's environment. */
  readonly env?: NodeJS.ProcessEnv;
  /** Checked every 100 ms; once true, the process gets one SIGINT, as Ctrl-C would send (a second would force the stop). */
  readonly stopWhen?: () => boolean;
}

export function runTrawl(args: readonly string[], o: TrawlRunOptions = {}): Promise<TrawlRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [TRAWL_CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...o.env } });
    let out = '';
    let err = '';
    const kill = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 60_000);
    const poll = o.stopWhen ? setInterval(() => {
      if (o.stopWhen!()) {
        clearInterval(poll);
        child.kill('SIGINT');
      }
    }, 100) : undefined;
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdin.on('error', () => undefined); // a command that exits before reading its input
    child.stdin.end(o.stdin ?? '');
    child.on('exit', (code) => {
      clearTimeout(kill);
      if (poll) clearInterval(poll);
      resolve({ code, out, err });
    });
  });
}
