// The ContentStore contract as one suite that takes the implementation, run for flatfile and bstore
// on real files; then what only the bstore has: torn writes and compaction.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { constants as zlibConstants, crc32, gzipSync, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { isTrawlError } from '../../src/core/errors.ts';
import type { ContentStore, StoredDocument } from '../../src/store/content-store.ts';
import { BstoreContentStore, isCompactable } from '../../src/store/bstore-content-store.ts';
import { compressBytes, decompressBytes, ReusedZstd } from '../../src/store/content-store-common.ts';
import { openContentStore, type ContentStoreOptions } from '../../src/store/open-content-store.ts';

const scratch = mkdtempSync(join(tmpdir(), 'trawl-content-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const freshDir = (): string => join(scratch, `store-${dirs++}`);

const HTML = Buffer.from('<!doctype html><html><head><title>t</title></head><body>'
  + '<p>The quick brown fox jumps over the lazy dog.</p>\n'.repeat(1000) + '</body></html>');
const BINARY = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(20_000)]);
const HEADER = 'HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nX-Note: caf\u00e9 \u2713\r\n';

const doc = (body: Uint8Array, mime = 'text/html', header: string | undefined = HEADER): StoredDocument => ({ body, header, mime });

function expectedCluster(url: string, clusters: number): number {
  return createHash('sha1').update(url).digest().readUInt32BE(0) % clusters;
}

function assertSameDoc(got: StoredDocument | undefined, want: StoredDocument, what = ''): void {
  assert.ok(got, `document missing ${what}`);
  assert.ok(Buffer.from(got.body).equals(Buffer.from(want.body)), `body differs ${what}`);
  assert.equal(got.mime, want.mime, what);
  assert.equal(got.header, want.header, what);
}

interface ContentStoreTarget {
  readonly datastore: 'flatfile' | 'bstore';
  /** The bytes the body takes on disk (after gzip), read from the on-disk format. */
  storedBodyBytes(dir: string, ref: string): Promise<number>;
  /** The cluster a ref's document is stored in, and the file or directory on disk that holds that cluster. */
  clusterOf(dir: string, ref: string): { cluster: number; path: string };
  /** Refs of the right shape that were never handed out. */
  readonly unknownRefs: readonly string[];
}

const flatfile: ContentStoreTarget = {
  datastore: 'flatfile',
  async storedBodyBytes(dir, ref) {
    return (await stat(flatfilePath(dir, ref))).size;
  },
  clusterOf(dir, ref) {
    const cluster = Number(/^ff:(\d+)\//.exec(ref)![1]);
    return { cluster, path: join(dir, 'flatfile', String(cluster)) };
  },
  unknownRefs: [`ff:0/ab/ab${'0'.repeat(38)}-999999`, `ff:0/ab/cd${'0'.repeat(38)}-1`, 'ff:../../etc/passwd'],
};

function flatfilePath(dir: string, ref: string): string {
  const m = /^ff:(\d+)\/([0-9a-f]{2})\/([0-9a-f]{40}-\d+)$/.exec(ref);
  assert.ok(m, `not a flatfile ref: ${ref}`);
  return join(dir, 'flatfile', m[1]!, m[2]!, m[3]!);
}

interface BsRef {
  cluster: number;
  epoch: number;
  offset: number;
  length: number;
}
function bsRef(ref: string): BsRef {
  const m = /^bs:(\d+):(\d+):(\d+):(\d+):[0-9a-f]{8}$/.exec(ref);
  assert.ok(m, `not a bstore ref: ${ref}`);
  return { cluster: Number(m[1]), epoch: Number(m[2]), offset: Number(m[3]), length: Number(m[4]) };
}
const blockFile = (dir: string, cluster: number): string => join(dir, 'bstore', `cluster-${cluster}.blk`);

const bstore: ContentStoreTarget = {
  datastore: 'bstore',
  async storedBodyBytes(dir, ref) {
    const r = bsRef(ref);
    const fh = await open(blockFile(dir, r.cluster), 'r');
    try {
      const head = Buffer.alloc(32);
      await fh.read(head, 0, 32, r.offset);
      assert.equal(head.toString('latin1', 0, 4), 'TRec');
      return head.readUInt32LE(16); // body length, as stored
    } finally {
      await fh.close();
    }
  },
  clusterOf(dir, ref) {
    const { cluster } = bsRef(ref);
    return { cluster, path: blockFile(dir, cluster) };
  },
  unknownRefs: ['bs:0:1:4096:100:deadbeef', 'bs:0:7:4096:100:deadbeef', 'bs:3:1:409600:5000:00000000', 'bs:0:1:4097:100:deadbeef'],
};

function contentStoreSuite(t: ContentStoreTarget): void {
  const options = (extra: Partial<ContentStoreOptions> = {}): ContentStoreOptions => ({
    datastore: t.datastore, compress: true, compressExcludeMime: [], storeHttpHeader: true, clusters: 8, ...extra,
  });
  const openStore = (dir: string, extra: Partial<ContentStoreOptions> = {}): ContentStore => openContentStore(dir, options(extra));

  describe(`ContentStore contract: ${t.datastore}`, () => {
    for (const compress of [false, true]) {
      it(`round-trips text, binary and empty bodies (compress ${compress ? 'on' : 'off'})`, async () => {
        const s = openStore(freshDir(), { compress });
        const docs = [
          ['http://a.test/page', doc(HTML)],
          ['http://a.test/blob.bin', doc(BINARY, 'application/octet-stream')],
          ['http://a.test/empty', doc(new Uint8Array(0), 'text/plain')],
          ['http://a.test/\u00fcml\u00e4ut?q=\u2713', doc(Buffer.from('x'), 'text/plain; charset=utf-8')],
        ] as const;
        const refs = await Promise.all(docs.map(([url, d]) => s.put(url, d)));
        for (const [i, [url, d]] of docs.entries()) assertSameDoc(await s.get(refs[i]!), d, url);
        await s.close();
      });
    }

    it('compresses on disk unless compress is off or the MIME is excluded', async () => {
      const dir = freshDir();
      const on = openStore(dir, { compress: true, compressExcludeMime: ['image/*'] });
      const zipped = await on.put('http://a.test/zipped', doc(HTML));
      assert.ok((await t.storedBodyBytes(dir, zipped)) < HTML.length / 10, 'a repetitive page shrinks');
      assertSameDoc(await on.get(zipped), doc(HTML));
      await on.close();

      const cases: Array<[Partial<ContentStoreOptions>, string]> = [
        [{ compress: false }, 'text/html'],
        [{ compress: true, compressExcludeMime: ['text/*'] }, 'text/html'],
        [{ compress: true, compressExcludeMime: ['image/png', 'TEXT/HTML'] }, 'text/html; charset=UTF-8'],
        [{ compress: true, compressExcludeMime: ['*/*'] }, 'text/html'],
      ];
      for (const [extra, mime] of cases) {
        const d = freshDir();
        const s = openStore(d, extra);
        const ref = await s.put('http://a.test/raw', doc(HTML, mime));
        assert.equal(await t.storedBodyBytes(d, ref), HTML.length, `${JSON.stringify(extra)} ${mime}`);
        assertSameDoc(await s.get(ref), doc(HTML, mime));
        await s.close();
      }
    });

    it('keeps the HTTP header only when store_http_header is on', async () => {
      const withHeader = openStore(freshDir(), { storeHttpHeader: true });
      assert.equal((await withHeader.get(await withHeader.put('http://a.test/', doc(HTML))))!.header, HEADER);
      assert.equal((await withHeader.get(await withHeader.put('http://a.test/n', { body: HTML, mime: 'text/html', header: undefined })))!.header, undefined);
      assert.equal((await withHeader.get(await withHeader.put('http://a.test/e', doc(HTML, 'text/html', ''))))!.header, '');
      await withHeader.close();
      const without = openStore(freshDir(), { storeHttpHeader: false });
      const got = await without.get(await without.put('http://a.test/', doc(HTML)));
      assert.equal(got!.header, undefined);
      assert.ok(Buffer.from(got!.body).equals(HTML));
      await without.close();
    });

    it('replacing a URL gives a new ref; the old one stays readable until deleted', async () => {
      const s = openStore(freshDir());
      const v1 = doc(Buffer.from('version 1'), 'text/plain');
      const v2 = doc(Buffer.from('version 2'), 'text/plain');
      const r1 = await s.put('http://a.test/x', v1);
      const r2 = await s.put('http://a.test/x', v2);
      assert.notEqual(r1, r2);
      assertSameDoc(await s.get(r1), v1);
      assertSameDoc(await s.get(r2), v2);
      await s.delete(r1);
      assert.equal(await s.get(r1), undefined);
      assertSameDoc(await s.get(r2), v2);
      const r3 = await s.put('http://a.test/x', v1);
      assert.ok(r3 !== r1 && r3 !== r2, 'a deleted ref is not handed out again');
      assert.equal(await s.get(r1), undefined);
      await s.close();
    });

    it('delete makes get return undefined; deleting twice or an unknown ref is a no-op', async () => {
      const s = openStore(freshDir());
      const keep = await s.put('http://a.test/keep', doc(HTML));
      const gone = await s.put('http://a.test/gone', doc(BINARY, 'application/octet-stream'));
      await s.delete(gone);
      assert.equal(await s.get(gone), undefined);
      await s.delete(gone);
      const other = t.datastore === 'bstore' ? flatfile.unknownRefs[0]! : bstore.unknownRefs[0]!;
      for (const ref of ['', 'garbage', other, ...t.unknownRefs]) {
        await s.delete(ref);
        assert.equal(await s.get(ref), undefined, ref);
      }
      assertSameDoc(await s.get(keep), doc(HTML));
      await s.close();
    });

    it('spreads documents over the clusters by a hash of the URL', async () => {
      const dir = freshDir();
      const s = openStore(dir, { clusters: 4 });
      const urls = Array.from({ length: 40 }, (_, i) => `http://h${i % 7}.test/page/${i}`);
      const refs = await Promise.all(urls.map((u) => s.put(u, doc(Buffer.from(u), 'text/plain'))));
      const used = new Set<number>();
      for (const [i, ref] of refs.entries()) {
        const { cluster, path } = t.clusterOf(dir, ref);
        assert.equal(cluster, expectedCluster(urls[i]!, 4), urls[i]);
        assert.ok(existsSync(path), path);
        used.add(cluster);
      }
      assert.deepEqual([...used].sort(), [0, 1, 2, 3]);
      await s.close();
    });

    it('reads old refs after the store is reopened, and never reissues them', async () => {
      const dir = freshDir();
      const s1 = openStore(dir);
      const docs = Array.from({ length: 5 }, (_, i) => doc(Buffer.from(`document ${i} `.repeat(100 * (i + 1))), 'text/plain'));
      const refs = await Promise.all(docs.map((d, i) => s1.put(`http://a.test/${i}`, d)));
      const usage = await s1.diskUsage();
      assert.ok(usage > 0);
      await s1.close();
      await assert.rejects(s1.get(refs[0]!), (e) => isTrawlError(e) && e.code === 'TRAWL_ERR_IO');

      const s2 = openStore(dir);
      for (const [i, ref] of refs.entries()) assertSameDoc(await s2.get(ref), docs[i]!);
      assert.equal(await s2.diskUsage(), usage);
      const again = await s2.put('http://a.test/0', docs[1]!);
      assert.ok(!refs.includes(again));
      assertSameDoc(await s2.get(refs[0]!), docs[0]!);
      assertSameDoc(await s2.get(again), docs[1]!);
      assert.ok((await s2.diskUsage()) > usage);
      await s2.close();
    });

    it('takes many concurrent puts, gets and deletes', async () => {
      const s = openStore(freshDir(), { clusters: 3 });
      const n = 300;
      const docs = Array.from({ length: n }, (_, i) => doc(Buffer.from(`body ${i} `.repeat(i % 50 + 1)), i % 3 ? 'text/plain' : 'image/png'));
      // Some URLs repeat: each put is still a separate document.
      const refs = await Promise.all(docs.map((d, i) => s.put(`http://c${i % 5}.test/${i % 120}`, d)));
      assert.equal(new Set(refs).size, n);
      const half = refs.filter((_, i) => i % 2 === 0);
      const [got] = await Promise.all([Promise.all(refs.map((r) => s.get(r))), ...half.map((r) => s.delete(r))]);
      for (const [i, g] of got.entries()) if (i % 2 === 1) assertSameDoc(g, docs[i]!, `#${i}`); // deleted ones may or may not be seen
      for (const [i, ref] of refs.entries()) {
        if (i % 2 === 0) assert.equal(await s.get(ref), undefined, `#${i} deleted`);
        else assertSameDoc(await s.get(ref), docs[i]!, `#${i}`);
      }
      await s.close();
    });
  });
}

contentStoreSuite(flatfile);
contentStoreSuite(bstore);

describe('flatfile on disk', () => {
  it('stores the body as a plain file (a zstd frame when compressed) and leaves nothing in tmp/', async () => {
    const dir = freshDir();
    const s = openContentStore(dir, { datastore: 'flatfile', compress: true, compressExcludeMime: ['application/*'], storeHttpHeader: true, clusters: 2 });
    const zipped = await s.put('http://a.test/', doc(HTML));
    const raw = await s.put('http://a.test/b', doc(BINARY, 'application/octet-stream'));
    assert.ok(zstdDecompressSync(readFileSync(flatfilePath(dir, zipped))).equals(HTML));
    assert.equal(JSON.parse(readFileSync(`${flatfilePath(dir, zipped)}.meta`, 'utf8')).zstd, true);
    assert.ok(readFileSync(flatfilePath(dir, raw)).equals(BINARY));
    assert.deepEqual(readdirSync(join(dir, 'flatfile', 'tmp')), []);
    await s.close();
  });

  it('reads a gzip body written by an earlier version', async () => {
    const dir = freshDir();
    const options = { datastore: 'flatfile', compress: true, compressExcludeMime: [], storeHttpHeader: true, clusters: 2 } as const;
    let s = openContentStore(dir, options);
    const ref = await s.put('http://a.test/', doc(HTML));
    await s.close();
    // Rewrite the document the way the earlier format had it: a gzip stream, meta {gzip: true} without zstd.
    const path = flatfilePath(dir, ref);
    const gz = gzipSync(HTML);
    writeFileSync(path, gz);
    const meta = JSON.parse(readFileSync(`${path}.meta`, 'utf8')) as Record<string, unknown>;
    delete meta.zstd;
    writeFileSync(`${path}.meta`, JSON.stringify({ ...meta, gzip: true, bytes: gz.length, crc32: crc32(gz) }));
    s = openContentStore(dir, options);
    assertSameDoc(await s.get(ref), doc(HTML));
    await s.close();
  });
});

describe('bstore on disk', () => {
  const options = { datastore: 'bstore', compress: true, compressExcludeMime: [], storeHttpHeader: true, clusters: 1 } as const;

  it('writes zstd bodies and reads a gzip record written by an earlier version', async () => {
    const dir = freshDir();
    let s = openContentStore(dir, options);
    const ref = await s.put('http://a.test/', doc(HTML));
    await s.close();
    const r = bsRef(ref);
    const file = readFileSync(blockFile(dir, r.cluster));
    const rec = file.subarray(r.offset, r.offset + r.length);
    assert.equal(rec[4], 4 | 2, 'flags: zstd body, header kept');
    const bodyAt = r.length - rec.readUInt32LE(16);
    assert.ok(zstdDecompressSync(rec.subarray(bodyAt)).equals(HTML));
    // The same record as the earlier format wrote it (flags bit0: gzip), appended on the next block boundary.
    const gz = gzipSync(HTML);
    const old = Buffer.concat([rec.subarray(0, bodyAt), gz]);
    old[4] = 1 | 2;
    old.writeUInt32LE(gz.length, 16);
    const crc = crc32(old.subarray(28), crc32(old.subarray(6, 24), crc32(old.subarray(0, 5))));
    old.writeUInt32LE(crc, 24);
    const at = file.length;
    assert.equal(at % 4096, 0);
    appendFileSync(blockFile(dir, r.cluster), Buffer.concat([old, Buffer.alloc(4096 - (old.length % 4096))]));
    s = openContentStore(dir, options);
    assertSameDoc(await s.get(`bs:${r.cluster}:${r.epoch}:${at}:${old.length}:${crc.toString(16).padStart(8, '0')}`), doc(HTML));
    assertSameDoc(await s.get(ref), doc(HTML));
    await s.close();
  });
  const bodyOf = (i: number): StoredDocument => doc(Buffer.from(`document number ${i}\n`.repeat(200 + i)), 'text/plain', `HTTP/1.1 200 OK\r\nX-N: ${i}\r\n`);

  /** A crawl store stand-in: url → ref, updated by relocate the way an UPDATE … WHERE content_ref = old would be. */
  function refTable(entries: Array<[string, string]>): { table: Map<string, string>; relocate: (o: string, n: string) => void; calls: Array<[string, string]> } {
    const table = new Map(entries);
    const calls: Array<[string, string]> = [];
    return {
      table, calls,
      relocate(oldRef, newRef) {
        calls.push([oldRef, newRef]);
        for (const [url, ref] of table) if (ref === oldRef) table.set(url, newRef);
      },
    };
  }

  it('aligns records to 4 KiB blocks after a 4 KiB file header', async () => {
    const dir = freshDir();
    const s = new BstoreContentStore(dir, options);
    const refs: string[] = [];
    for (let i = 0; i < 3; i++) refs.push(await s.put(`http://a.test/${i}`, bodyOf(i)));
    const offsets = refs.map((r) => bsRef(r).offset);
    assert.equal(offsets[0], 4096);
    for (const o of offsets) assert.equal(o % 4096, 0);
    assert.equal(statSync(blockFile(dir, 0)).size % 4096, 0);
    assert.equal(readFileSync(blockFile(dir, 0)).toString('latin1', 0, 8), 'TRAWLBS1');
    await s.close();
  });

  it('ignores a torn or garbage tail: earlier records read, new appends land after it', async () => {
    const dir = freshDir();
    const s1 = new BstoreContentStore(dir, options);
    const refs: string[] = [];
    for (let i = 0; i < 3; i++) refs.push(await s1.put(`http://a.test/${i}`, bodyOf(i)));
    await s1.close();
    const file = blockFile(dir, 0);
    // A torn write: a real record but its last byte (valid header, CRC cannot match), then unaligned noise.
    const first = readFileSync(file).subarray(4096, 4096 + bsRef(refs[0]!).length - 1);
    appendFileSync(file, first);
    appendFileSync(file, randomBytes(5000));
    const tornSize = statSync(file).size;

    const s2 = new BstoreContentStore(dir, options);
    for (let i = 0; i < 3; i++) assertSameDoc(await s2.get(refs[i]!), bodyOf(i), `old #${i}`);
    for (let i = 3; i < 5; i++) refs.push(await s2.put(`http://a.test/${i}`, bodyOf(i)));
    assert.ok(bsRef(refs[3]!).offset >= tornSize && bsRef(refs[3]!).offset % 4096 === 0);
    for (let i = 0; i < 5; i++) assertSameDoc(await s2.get(refs[i]!), bodyOf(i), `#${i}`);
    const [frag] = await s2.fragmentation();
    assert.ok(frag!.liveFraction < 1 && frag!.liveFraction > 0.5, `the torn tail counts as reclaimable: ${frag!.liveFraction}`);
    await s2.close();

    const s3 = new BstoreContentStore(dir, options);
    for (let i = 0; i < 5; i++) assertSameDoc(await s3.get(refs[i]!), bodyOf(i), `reopened #${i}`);
    const { table, relocate, calls } = refTable(refs.map((r, i) => [`http://a.test/${i}`, r]));
    await s3.compact(0, relocate);
    assert.equal(calls.length, 5, 'only the five real records are moved');
    for (let i = 0; i < 5; i++) assertSameDoc(await s3.get(table.get(`http://a.test/${i}`)!), bodyOf(i), `compacted #${i}`);
    assert.equal((await s3.fragmentation())[0]!.liveFraction, 1);
    await s3.close();
  });

  it('compaction copies the live records, calls relocate for each and shrinks the file', async () => {
    const dir = freshDir();
    const s = new BstoreContentStore(dir, { ...options, defragThresholdPct: 85 });
    assert.ok(isCompactable(s));
    const refs: string[] = [];
    for (let i = 0; i < 20; i++) refs.push(await s.put(`http://a.test/${i}`, bodyOf(i)));
    const live = [2, 5, 11, 17, 18, 19];
    for (let i = 0; i < 20; i++) if (!live.includes(i)) await s.delete(refs[i]!);
    const [before] = await s.fragmentation();
    assert.ok(Math.abs(before!.liveFraction - 6 / 20) < 0.05, String(before!.liveFraction));
    assert.deepEqual(await s.clustersToCompact(), [0]);
    const sizeBefore = statSync(blockFile(dir, 0)).size;
    const usageBefore = await s.diskUsage();

    const { table, relocate, calls } = refTable(live.map((i) => [`http://a.test/${i}`, refs[i]!]));
    await s.compact(0, relocate);
    assert.deepEqual(calls.map(([o]) => o), live.map((i) => refs[i]), 'relocate once per live record, in file order');
    const sizeAfter = statSync(blockFile(dir, 0)).size;
    assert.ok(sizeAfter < sizeBefore / 2, `${sizeAfter} < ${sizeBefore} / 2`);
    assert.equal(sizeAfter, 4096 + calls.reduce((n, [, r]) => n + Math.ceil(bsRef(r).length / 4096) * 4096, 0));
    assert.ok((await s.diskUsage()) < usageBefore);
    assert.equal((await s.fragmentation())[0]!.liveFraction, 1);
    assert.deepEqual(await s.clustersToCompact(), []);
    for (const i of live) {
      assert.equal(await s.get(refs[i]!), undefined, 'old refs are gone');
      assertSameDoc(await s.get(table.get(`http://a.test/${i}`)!), bodyOf(i));
    }
    assert.deepEqual(readdirSync(join(dir, 'bstore')), ['cluster-0.blk']);
    const later = await s.put('http://a.test/later', bodyOf(99));
    await s.close();

    const s2 = new BstoreContentStore(dir, options);
    for (const i of live) assertSameDoc(await s2.get(table.get(`http://a.test/${i}`)!), bodyOf(i));
    assertSameDoc(await s2.get(later), bodyOf(99));
    await s2.close();
  });

  it('a relocate that throws midway loses nothing; the next compaction finishes the job', async () => {
    const dir = freshDir();
    const s = new BstoreContentStore(dir, options);
    const refs: string[] = [];
    for (let i = 0; i < 8; i++) refs.push(await s.put(`http://a.test/${i}`, bodyOf(i)));
    await s.delete(refs[0]!);
    await s.delete(refs[1]!);
    const { table, relocate } = refTable(refs.slice(2).map((r, i) => [`http://a.test/${i + 2}`, r]));
    let n = 0;
    await assert.rejects(
      s.compact(0, (o, r) => {
        if (++n === 3) throw new Error('crawl store is gone');
        relocate(o, r);
      }),
      (e) => isTrawlError(e) && e.code === 'TRAWL_ERR_IO' && /crawl store is gone/.test(e.message),
    );
    // Two refs moved, four did not: all six are readable.
    for (let i = 2; i < 8; i++) assertSameDoc(await s.get(table.get(`http://a.test/${i}`)!), bodyOf(i), `#${i}`);
    assert.ok(existsSync(`${blockFile(dir, 0)}.prev`));
    // The caller deletes one through its old ref meanwhile, and stores a new document.
    await s.delete(table.get('http://a.test/7')!);
    table.delete('http://a.test/7');
    table.set('http://a.test/new', await s.put('http://a.test/new', bodyOf(50)));

    await s.compact(0, relocate);
    assert.ok(!existsSync(`${blockFile(dir, 0)}.prev`));
    assert.equal(table.size, 6);
    for (const [url, ref] of table) assertSameDoc(await s.get(ref), bodyOf(url.endsWith('new') ? 50 : Number(url.slice(-1))), url);
    const sizeAfter = statSync(blockFile(dir, 0)).size;
    assert.equal(sizeAfter, 4096 + 6 * Math.ceil(bsRef(table.get('http://a.test/2')!).length / 4096) * 4096);
    await s.close();
  });

  it('a crash during relocate is rolled forward on open, keeping both generations of refs readable', async () => {
    const dir = freshDir();
    const crashed = freshDir();
    const s = new BstoreContentStore(dir, options);
    const refs: string[] = [];
    for (let i = 0; i < 6; i++) refs.push(await s.put(`http://a.test/${i}`, bodyOf(i)));
    await s.delete(refs[0]!);
    const { table, relocate } = refTable(refs.slice(1).map((r, i) => [`http://a.test/${i + 1}`, r]));
    let snapshot: Map<string, string> | undefined;
    await s.compact(0, (o, r) => {
      relocate(o, r);
      // kill -9 after two relocations: copy the files as they are on disk right now.
      if (!snapshot && table.get('http://a.test/2') === r) {
        cpSync(join(dir, 'bstore'), join(crashed, 'bstore'), { recursive: true });
        snapshot = new Map(table);
      }
    });
    await s.close();
    assert.ok(snapshot);
    assert.ok(existsSync(`${blockFile(crashed, 0)}.compact`));

    const r = new BstoreContentStore(crashed, options);
    const { table: t2, relocate: relocate2 } = refTable([...snapshot]);
    for (const [url, ref] of t2) assertSameDoc(await r.get(ref), bodyOf(Number(url.slice(-1))), `after the crash ${url}`);
    assert.ok(existsSync(`${blockFile(crashed, 0)}.prev`) && !existsSync(`${blockFile(crashed, 0)}.compact`));
    await r.compact(0, relocate2);
    assert.ok(!existsSync(`${blockFile(crashed, 0)}.prev`));
    for (const [url, ref] of t2) assertSameDoc(await r.get(ref), bodyOf(Number(url.slice(-1))), `recovered ${url}`);
    await r.close();
  });

  it('discards a compaction file that was never sealed', async () => {
    const dir = freshDir();
    const s1 = new BstoreContentStore(dir, options);
    const ref = await s1.put('http://a.test/', bodyOf(1));
    await s1.close();
    writeFileSync(`${blockFile(dir, 0)}.tmp`, randomBytes(10_000));
    const s2 = new BstoreContentStore(dir, options);
    assertSameDoc(await s2.get(ref), bodyOf(1));
    assert.deepEqual(readdirSync(join(dir, 'bstore')), ['cluster-0.blk']);
    await s2.close();
  });

  it('reports a record whose bytes changed on disk', async () => {
    const dir = freshDir();
    const s = new BstoreContentStore(dir, { ...options, compress: false });
    const ref = await s.put('http://a.test/', bodyOf(1));
    const fh = await open(blockFile(dir, 0), 'r+');
    await fh.write(Buffer.from('X'), 0, 1, bsRef(ref).offset + bsRef(ref).length - 10);
    await fh.close();
    await assert.rejects(s.get(ref), (e) => isTrawlError(e) && e.code === 'TRAWL_ERR_IO' && e.message.includes(blockFile(dir, 0)));
    await s.close();
  });
});

describe('compressBytes', () => {
  it('gives the bytes zstdCompressSync gives, call after call on its one reused context', async () => {
    // Sizes around the 64 KiB output buffer too: incompressible data longer than it needs several writes per frame.
    const inputs = [HTML, Buffer.alloc(0), BINARY, randomBytes(150_000), Buffer.from('a'), HTML.subarray(0, 8000), Buffer.alloc(200_000, 0x41), HTML];
    const level1 = { params: { [zlibConstants.ZSTD_c_compressionLevel]: 1 } };
    for (const [i, input] of inputs.entries()) {
      const got = await compressBytes(input);
      assert.ok(got.equals(zstdCompressSync(input, level1)), `input ${i} (${input.length} bytes) compressed differently`);
      assert.ok(zstdDecompressSync(got).equals(input), `input ${i} does not decompress to itself`);
      assert.ok((await decompressBytes(got, 'zstd')).equals(input));
    }
    // The same through a compressor of its own, which must be the reused context, not the one-shot fallback.
    const z = new ReusedZstd();
    for (const input of inputs) assert.ok(z.compress(input).equals(zstdCompressSync(input, level1)));
    assert.equal(z.reusing, true);
  });
});
