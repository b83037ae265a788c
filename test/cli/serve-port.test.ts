// `trawl serve` on a port another process holds: a clear error naming host and port, its own exit status, no stack trace.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../support/crawl-harness.ts';
import { ROOT } from '../helpers.ts';

const BIN = join(ROOT, 'bin/trawl.js');
const dir = tempDir('trawl-serve-port-');
after(() => rmSync(dir, { recursive: true, force: true }));

describe('trawl serve on a port in use', () => {
  it('exits 69 with TRAWL_ERR_ADDRESS_IN_USE naming host and port', async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as { port: number }).port;
    try {
      const r = await new Promise<{ code: number | null; err: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, 'serve', '--data', join(dir, 'data'), '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, err });
        });
      });
      assert.equal(r.code, 69, r.err);
      assert.match(r.err, new RegExp(`trawl: TRAWL_ERR_ADDRESS_IN_USE: cannot listen on 127\\.0\\.0\\.1 port ${port}: another process uses that address`));
      assert.doesNotMatch(r.err, /TRAWL_ERR_INTERNAL|\n\s+at /);
    } finally {
      await new Promise<void>((r) => holder.close(() => r()));
    }
  });
});
