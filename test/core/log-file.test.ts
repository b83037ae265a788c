import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pino from 'pino';
import { LogFile, isoTimeEachMs } from '../../src/core/log-file.ts';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'trawl-logfile-'));
const MODULE = new URL('../../src/core/log-file.ts', import.meta.url).pathname;

/** Runs a script in a child node (this one) with LogFile imported; returns its stderr and exit status. */
function child(script: string): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `import { LogFile } from ${JSON.stringify(MODULE)};\n${script}`], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

describe('LogFile (the crawl log\'s destination)', () => {
  it('writes every line pino logs, in order, by the time close() resolves', async () => {
    const path = join(tmp(), 'logs', 'crawl.log');
    const file = new LogFile(path);
    const log = pino({ base: undefined }, file);
    for (let i = 0; i < 1000; i++) log.info({ event: 'fetch', url: `http://127.0.0.1/p${i}` }, `line ${i}`);
    await file.close();
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { msg: string });
    assert.deepEqual(lines.map((l) => l.msg), Array.from({ length: 1000 }, (_, i) => `line ${i}`));
  });

  it('keeps every byte of lines that cross its 64 KiB chunks, lines longer than a chunk, and multi-byte text', async () => {
    const path = join(tmp(), 'crawl.log');
    const file = new LogFile(path);
    const expected: string[] = [];
    for (let i = 0; i < 3000; i++) {
      // Lengths that do not divide the chunk, some characters of 2, 3 and 4 bytes, and now and then a line of 100,000 characters.
      const line = i % 500 === 7 ? `${'x'.repeat(100_000)}\n` : `${i} é ✓ 𝄞 ${'y'.repeat(i % 97)}\n`;
      expected.push(line);
      file.write(line);
    }
    await file.close();
    assert.equal(readFileSync(path, 'utf8'), expected.join(''));
  });

  it('writes what waits at exit synchronously, across chunks', () => {
    const path = join(tmp(), 'crawl.log');
    const r = child(`const f = new LogFile(${JSON.stringify(path)}); for (let i = 0; i < 200; i++) f.write('z'.repeat(1000) + ' ' + i + '\\n'); process.exit(0);`);
    assert.equal(r.status, 0, r.stderr);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    assert.deepEqual(lines.map((l) => l.slice(1001)), Array.from({ length: 200 }, (_, i) => String(i)));
  });

  it('appends to a log that is already there', async () => {
    const path = join(tmp(), 'crawl.log');
    for (const word of ['first', 'second']) {
      const file = new LogFile(path);
      file.write(`${word}\n`);
      await file.close();
    }
    assert.equal(readFileSync(path, 'utf8'), 'first\nsecond\n');
  });

  it('writes a few lines within about a second without being asked, so that tail -f follows the crawl', async () => {
    const path = join(tmp(), 'crawl.log');
    const file = new LogFile(path);
    try {
      file.write('one\n');
      file.write('two\n');
      assert.equal(readFileSync(path, 'utf8'), '');
      await new Promise((r) => setTimeout(r, 1300));
      assert.equal(readFileSync(path, 'utf8'), 'one\ntwo\n');
    } finally {
      await file.close();
    }
  });

  it('flush(done) calls back once what was logged before it is on disk', async () => {
    const path = join(tmp(), 'crawl.log');
    const file = new LogFile(path);
    try {
      for (let i = 0; i < 300; i++) file.write(`${i}\n`);
      await new Promise<void>((resolve) => file.flush(resolve));
      assert.equal(readFileSync(path, 'utf8').split('\n').length - 1, 300);
    } finally {
      await file.close();
    }
  });

  it('writes what is still waiting when the process exits (process.exit, as a forced stop does)', () => {
    const path = join(tmp(), 'crawl.log');
    const r = child(`const f = new LogFile(${JSON.stringify(path)}); for (let i = 0; i < 10; i++) f.write('line ' + i + '\\n'); process.exit(3);`);
    assert.equal(r.status, 3, r.stderr);
    assert.equal(readFileSync(path, 'utf8'), Array.from({ length: 10 }, (_, i) => `line ${i}\n`).join(''));
  });

  it('many open logs (trawl serve: one per collection) write at exit through one listener, without Node\'s listener warning', () => {
    const dir = tmp();
    const r = child(`const files = Array.from({ length: 15 }, (_, i) => new LogFile(${JSON.stringify(dir)} + '/c' + i + '.log'));
if (process.listenerCount('exit') !== 1) throw new Error('exit listeners: ' + process.listenerCount('exit'));
files.forEach((f, i) => f.write('{"msg":"last of ' + i + '"}\\n'));
process.exit(0);`);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /MaxListenersExceeded/);
    for (let i = 0; i < 15; i++) assert.equal(readFileSync(join(dir, `c${i}.log`), 'utf8'), `{"msg":"last of ${i}"}\n`);
  });

  it('reports a failing write once on stderr, naming the file, and does not stop the process', () => {
    // /dev/full answers every write with ENOSPC.
    const r = child(`const f = new LogFile('/dev/full'); for (let i = 0; i < 600; i++) f.write('x\\n'); await f.close(); f.write('after close\\n'); console.error('still running');`);
    assert.equal(r.status, 0, r.stderr);
    const reports = r.stderr.split('\n').filter((l) => l.includes('cannot write the log /dev/full'));
    assert.equal(reports.length, 1, r.stderr);
    assert.match(reports[0]!, /ENOSPC/);
    assert.match(r.stderr, /still running/);
  });

  it('names the path when the file cannot be opened', () => {
    const dir = tmp();
    assert.throws(() => new LogFile(dir), (err: Error) => err.message.includes(dir));
  });
});

describe('isoTimeEachMs (the crawl log\'s time field)', () => {
  it('writes what pino\'s isoTime writes, made again only when the millisecond changes', () => {
    let now = Date.UTC(2026, 10, 26, 12, 0, 0, 5);
    let made = 0;
    const time = isoTimeEachMs(() => {
      made++;
      return now;
    });
    const first = time();
    assert.equal(first, ',"time":"2026-11-26T12:00:00.005Z"');
    assert.equal(time(), first);
    assert.equal(made, 2, 'the clock is read for every line');
    now += 1;
    assert.equal(time(), ',"time":"2026-11-26T12:00:00.006Z"');
    // The same shape as pino's own: the line parses, with the time where pino puts it.
    const lines: string[] = [];
    const log = pino({ base: undefined, timestamp: isoTimeEachMs() }, { write: (l: string) => void lines.push(l) });
    log.info({ url: 'http://a.test/' }, 'fetched');
    const line = JSON.parse(lines[0]!) as { time: string; url: string };
    assert.ok(Math.abs(Date.parse(line.time) - Date.now()) < 5_000, line.time);
    assert.equal(line.url, 'http://a.test/');
    assert.equal(lines[0]!.indexOf('"time"'), lines[0]!.indexOf(',') + 1, 'time follows level, as with stdTimeFunctions.isoTime');
  });
});
