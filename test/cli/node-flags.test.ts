// bin/trawl.js restarts Node in place with 4 MiB semi-spaces and two malloc
// arenas: the real daemon is started and its /proc entries are read (the
// process id is the one spawn returned, so signals reach the crawler).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { spawnServe } from '../support/daemon.ts';

/** Starts `trawl serve` on a free port; resolves once it listens. */
function serve(env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<ChildProcess> {
  return spawnServe(['--data', tempDir('trawl-flags-'), '--port', '0'], { env, nodeArgs });
}

function procOf(pid: number): { argv: string[]; env: Map<string, string> } {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
  const env = new Map(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter((e) => e.includes('=')).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)] as [string, string]));
  return { argv, env };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

describe('bin/trawl.js Node settings', { skip: !existsSync('/proc/self/cmdline') && 'needs /proc' }, () => {
  it('runs the crawler with --max-semi-space-size=4 and MALLOC_ARENA_MAX=2, in the process it was started as', async () => {
    const env = { ...process.env };
    delete env.MALLOC_ARENA_MAX;
    delete env.TRAWL_NODE_FLAGS;
    const child = await serve(env);
    try {
      const p = procOf(child.pid!);
      assert.equal(p.argv[1], '--max-semi-space-size=4');
      assert.ok(p.argv.includes('serve'));
      assert.equal(p.env.get('MALLOC_ARENA_MAX'), '2');
    } finally {
      await stop(child);
    }
  });

  it('keeps a MALLOC_ARENA_MAX already set, and leaves Node alone with TRAWL_NODE_FLAGS=keep or an explicit flag', async () => {
    const a = await serve({ ...process.env, MALLOC_ARENA_MAX: '4', TRAWL_NODE_FLAGS: '' });
    try {
      assert.equal(procOf(a.pid!).env.get('MALLOC_ARENA_MAX'), '4');
    } finally {
      await stop(a);
    }
    const env: NodeJS.ProcessEnv = { ...process.env, TRAWL_NODE_FLAGS: 'keep' };
    delete env.MALLOC_ARENA_MAX;
    const b = await serve(env);
    try {
      const p = procOf(b.pid!);
      assert.ok(!p.argv.some((x) => x.startsWith('--max-semi-space-size')));
      assert.equal(p.env.get('MALLOC_ARENA_MAX'), undefined);
    } finally {
      await stop(b);
    }
    const c = await serve({ ...process.env, TRAWL_NODE_FLAGS: '' }, ['--max-semi-space-size=8']);
    try {
      const p = procOf(c.pid!);
      assert.deepEqual(p.argv.filter((x) => x.startsWith('--max-semi-space-size')), ['--max-semi-space-size=8']);
    } finally {
      await stop(c);
    }
  });
});
