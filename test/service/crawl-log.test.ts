// Reading the event logs back (src/service/crawl-log.ts): from the end, across chunk boundaries, merged by time.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { collectionLogPath, readLogLines } from '../../src/service/crawl-log.ts';
import { tempDir } from '../support/crawl-harness.ts';

const dir = tempDir('trawl-crawl-log-');
after(() => rmSync(dir, { recursive: true, force: true }));

const line = (i: number, url: string, collection = 'c', extra = ''): string =>
  `${JSON.stringify({ level: 30, time: `2026-01-01T00:00:${String(Math.floor(i / 1000)).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}Z`, collection, event: 'fetch', url, status: 200, msg: `line ${i}${extra}` })}\n`;

describe('readLogLines', () => {
  it('returns the last lines about a URL, oldest first, across 64 KiB chunks and multibyte characters', async () => {
    const f = join(dir, 'a.log');
    let text = '';
    // Lines of varying length with 3-byte characters, so that chunk boundaries fall inside lines and characters.
    for (let i = 0; i < 5000; i++) text += line(i, i % 7 === 0 ? 'http://a.test/x' : `http://a.test/${i}`, i % 11 === 0 ? 'other' : 'c', '€'.repeat(i % 13));
    writeFileSync(f, `not json\n${text}{"broken": `);
    const want = [];
    for (let i = 0; i < 5000; i++) if (i % 7 === 0 && i % 11 !== 0) want.push(`line ${i}${'€'.repeat(i % 13)}`);
    const got = await readLogLines([f], { collection: 'c', url: 'http://a.test/x', lines: 10_000 });
    assert.deepEqual(got.map((l) => l.msg), want);
    const last = await readLogLines([f], { collection: 'c', url: 'http://a.test/x', lines: 3 });
    assert.deepEqual(last.map((l) => l.msg), want.slice(-3));
    const tail = await readLogLines([f], { collection: 'c', lines: 2 });
    assert.deepEqual(tail.map((l) => l.msg), [`line 4998${'€'.repeat(4998 % 13)}`, `line 4999${'€'.repeat(4999 % 13)}`]);
  });

  it('merges several files by time and skips missing ones', async () => {
    const a = join(dir, 'm1.log');
    const b = join(dir, 'm2.log');
    writeFileSync(a, line(1, 'http://u/') + line(5, 'http://u/'));
    writeFileSync(b, line(3, 'http://u/') + line(7, 'http://u/'));
    const got = await readLogLines([a, join(dir, 'missing.log'), b], { collection: 'c', url: 'http://u/', lines: 3 });
    assert.deepEqual(got.map((l) => l.msg), ['line 3', 'line 5', 'line 7']);
    assert.deepEqual(await readLogLines([a], { collection: 'c', lines: 0 }), []);
  });

  it('names a collection log file that a collection name cannot escape', () => {
    assert.equal(collectionLogPath('/d', 'web'), join('/d', 'logs', 'collections', 'web.log'));
    assert.equal(collectionLogPath('/d', '../x/y'), join('/d', 'logs', 'collections', '..%2Fx%2Fy.log'));
    assert.equal(collectionLogPath('/d', '..'), join('/d', 'logs', 'collections', '%2E%2E.log'));
  });
});
