// bin/trawl.js restarts Node in place with 8 MiB semi-spaces, an old
// generation that grows at most 2.5-fold between major GCs, and two malloc
// arenas: the real daemon is started and its /proc entries are read (the
// process id is the one spawn returned, so signals reach the crawler).
import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
  it('runs the crawler with --max-semi-space-size=8, --heap-growing-percent=150 and MALLOC_ARENA_MAX=2, in the process it was started as', async () => {
    const env = { ...process.env };
    delete env.MALLOC_ARENA_MAX;
    delete env.TRAWL_NODE_FLAGS;
    const child = await serve(env);
    try {
      const p = procOf(child.pid!);
      assert.deepEqual(p.argv.slice(1, 3), ['--max-semi-space-size=8', '--heap-growing-percent=150']);
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
      assert.ok(!p.argv.some((x) => x.startsWith('--max-semi-space-size') || x.startsWith('--heap-growing-percent')));
      assert.equal(p.env.get('MALLOC_ARENA_MAX'), undefined);
    } finally {
      await stop(b);
    }
    // A flag given explicitly wins over trawl's value for it, in either spelling; the other is still added.
    const c = await serve({ ...process.env, TRAWL_NODE_FLAGS: '' }, ['--max-semi-space-size=6', '--heap_growing_percent=30']);
    try {
      const p = procOf(c.pid!);
      assert.deepEqual(p.argv.filter((x) => /^--max.semi.space.size|^--heap.growing.percent/.test(x)), ['--max-semi-space-size=6', '--heap_growing_percent=30']);
    } finally {
      await stop(c);
    }
    const d = await serve({ ...process.env, TRAWL_NODE_FLAGS: '' }, ['--max-semi-space-size=6']);
    try {
      const p = procOf(d.pid!);
      assert.deepEqual(p.argv.filter((x) => /^--max.semi.space.size|^--heap.growing.percent/.test(x)), ['--heap-growing-percent=150', '--max-semi-space-size=6']);
    } finally {
      await stop(d);
    }
  });
});

describe('bin/trawl.js: sources or dist/', () => {
  // A copy of the real bin/trawl.js in a scratch checkout whose src/ and
  // dist/ entry points only say which one ran; their times are set by hand.
  const root = tempDir('trawl-bin-');
  mkdirSync(join(root, 'bin'));
  copyFileSync('bin/trawl.js', join(root, 'bin', 'trawl.js'));
  writeFileSync(join(root, 'package.json'), '{ "type": "module" }');
  const entry = (which: string): string => `export async function main(): Promise<number> { process.stdout.write('${which}'); return 0; }\n`;
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  mkdirSync(join(root, 'src', 'store'));
  writeFileSync(join(root, 'src', 'cli', 'main.ts'), entry('src'));
  writeFileSync(join(root, 'src', 'store', 'other.ts'), '');
  mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
  writeFileSync(join(root, 'dist', 'cli', 'main.js'), entry('dist').replace(': Promise<number>', ''));
  const at = (file: string, seconds: number): void => utimesSync(join(root, file), seconds, seconds);
  const run = (extra: NodeJS.ProcessEnv = {}): string =>
    execFileSync(process.execPath, [join(root, 'bin', 'trawl.js')], { encoding: 'utf8', env: { ...process.env, TRAWL_NODE_FLAGS: 'keep', TRAWL_RUN: '', ...extra } });

  it('runs dist/ when it was built after the last change to src/, else the sources', () => {
    at('src/cli/main.ts', 1_000);
    at('src/store/other.ts', 1_000);
    at('dist/cli/main.js', 2_000);
    assert.equal(run(), 'dist');
    assert.equal(run({ TRAWL_RUN: 'source' }), 'src');
    at('src/store/other.ts', 3_000); // any file under src/ counts, not only the entry point
    assert.equal(run(), 'src');
    assert.equal(run({ TRAWL_RUN: 'dist' }), 'dist');
    assert.throws(() => run({ TRAWL_RUN: 'js' }), (e: { status?: number; stderr?: string }) => e.status === 2 && /TRAWL_RUN must be "source" or "dist", not "js"/.test(String(e.stderr)));
    rmSync(join(root, 'dist'), { recursive: true });
    assert.equal(run(), 'src');
    assert.throws(() => run({ TRAWL_RUN: 'dist' }), (e: { status?: number; stderr?: string }) => e.status === 2 && /TRAWL_RUN=dist but .*dist\/cli\/main\.js does not exist \(run npm run build\)/.test(String(e.stderr)));
  });

  it('runs dist/ when there are no sources (the published package)', () => {
    mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
    writeFileSync(join(root, 'dist', 'cli', 'main.js'), entry('dist').replace(': Promise<number>', ''));
    rmSync(join(root, 'src'), { recursive: true });
    assert.equal(run(), 'dist');
    assert.throws(() => run({ TRAWL_RUN: 'source' }), (e: { status?: number; stderr?: string }) => e.status === 2 && /TRAWL_RUN=source but .*src\/cli\/main\.ts does not exist\n/.test(String(e.stderr)));
  });
});
