/**
 * The bstore content store, MS-FSCCFG 2.2.4.6 `datastore=bstore`: documents
 * cut into fixed-size blocks and spread over a set of files, one file per
 * cluster. The crawl store keeps each document's ContentRef, which says
 * where its blocks are, so there is no separate index to keep in step.
 *
 *   <dir>/bstore/cluster-<n>.blk          append-only, 4 KiB blocks
 *
 *   block 0         block 1             block 3    block 4         block 6
 *   ┌─────────────┬───────────────────┬──────────┬───────────────┬──────────┬─ ─
 *   │ file header │ record A          │ record B │ garbage left  │ record C │ …
 *   │ 0 padding   │ hdr url mime      │ 0 padding│ by a torn     │          │
 *   │             │ http-hdr body 0pad│          │ write         │          │
 *   └─────────────┴───────────────────┴──────────┴───────────────┴──────────┴─ ─
 *   every record starts on a block boundary and is zero-padded to one
 *
 *   file header (block 0)                record header (32 bytes, little endian)
 *    0  8  "TRAWLBS1"                      0  4  magic "TRec"
 *    8  4  epoch (+1 per compaction)       4  1  flags  bit0 body gzipped, bit1 HTTP header kept,
 *                                                bit2 body zstd-compressed (what put() writes)
 *   12  4  cluster number                  5  1  state  0 live, 1 dead  ◄── delete() rewrites this byte
 *   16  4  CRC-32 of bytes 0..15           6  2  url length         (UTF-8 bytes)
 *                                          8  2  mime length        (UTF-8 bytes)
 *                                         10  2  0
 *                                         12  4  HTTP header length (UTF-8 bytes)
 *                                         16  4  body length        (as stored, i.e. compressed)
 *                                         20  4  origin: block the record was copied from by the
 *                                                compaction that wrote this file; 0 when put() wrote it
 *                                         24  4  CRC-32 of bytes 0..4, 6..23, 28.. and the payload
 *                                         28  4  0
 *                                         32     url, mime, header, body
 *
 *   ref = "bs:<cluster>:<epoch>:<offset>:<length>:<crc32 hex>"
 *          offset of the record header, length without the padding, crc32 as in the header
 *
 * Crash safety. Appends to a file are serialised, and put() resolves only
 * after fdatasync. Concurrent puts to one file share one write and one
 * fdatasync (group commit): while a batch is being synced the next one
 * gathers. A write torn by a crash fails its CRC: it is never returned
 * (its ref was never handed out), new records go after it on the next block
 * boundary, and compaction drops it. The ref carries the CRC and the file's
 * epoch, so a stale ref reads as absent instead of as some other document.
 *
 * Compaction (Compactable) rewrites a file without its dead records, when
 * its live fraction falls below `defrag_threshold` (clustersToCompact()):
 *
 *   cluster-<n>.blk.tmp ──fsync, rename──► .blk.compact ──relocate(old, new) for each
 *   live record──► rename over .blk
 *
 * A crash before the first relocate() loses nothing: on open .tmp is
 * deleted and .blk is untouched. After it, the caller's refs may point into
 * both files, so on open a sealed .compact is rolled forward and the old
 * file is kept as cluster-<n>.blk.prev: refs of either epoch stay readable.
 * The next compact() of the cluster calls relocate(prevRef, newRef) for the
 * records copied from .prev (the origin field), marks dead those whose
 * original was deleted meanwhile, and removes .prev. A relocate() that
 * throws leaves the same state as a crash.
 *
 * One process at a time may open a directory; nothing here locks it.
 */

import { mkdir, open, readdir, rename, rm, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { TrawlError } from '../core/errors.ts';
import type { ContentRef, ContentStore, StorageOptions, StoredDocument } from './content-store.ts';
import { checkClusters, errnoOf, fsyncDir, compressBytes, decompressBytes, ioError, shouldCompress, urlDigest } from './content-store-common.ts';

/** How long a write waits for others to share its fdatasync (see enqueue). */
const FLUSH_WINDOW_MS = 40;

/** Compaction of a bstore: rewriting a cluster file without its dead records moves the live ones. */
export interface Compactable {
  /**
   * Rewrites one cluster file without dead records and torn writes.
   * `relocate` is called synchronously once per moved record, before the new
   * file replaces the old one; it must record the new ref durably before it
   * returns (an UPDATE in SQLite autocommit does), and must ignore old refs it
   * does not hold. Once compact() resolves, the old refs read as absent.
   * Puts and deletes to the cluster wait until it is done; reads do not.
   */
  compact(cluster: number, relocate: (oldRef: ContentRef, newRef: ContentRef) => void): Promise<void>;
  /** Per existing cluster file: live record bytes / bytes after the file header (1 for an empty file). */
  fragmentation(): Promise<Array<{ cluster: number; liveFraction: number }>>;
}

export function isCompactable(store: ContentStore): store is ContentStore & Compactable {
  return 'compact' in store && 'fragmentation' in store;
}

const BLOCK_BYTES = 4096;
const FILE_MAGIC = Buffer.from('TRAWLBS1', 'latin1');
const RECORD_MAGIC = 0x63655254; // "TRec" read as a little-endian uint32
const RECORD_HEADER_BYTES = 32;
const FLAG_GZIP = 1;
const FLAG_HEADER = 2;
const FLAG_ZSTD = 4;
const STATE_LIVE = 0;
const STATE_DEAD = 1;
const STATE_OFFSET = 5;
/** Compaction copies through buffers of this size. */
const COPY_CHUNK_BYTES = 4 << 20;
const READ_AHEAD_BYTES = 1 << 20;
const FIRST_READ_BYTES = 64 << 10;

const REF = /^bs:(\d{1,5}):(\d{1,10}):(\d{1,15}):(\d{1,10}):([0-9a-f]{8})$/;

interface Ref {
  readonly cluster: number;
  readonly epoch: number;
  readonly offset: number;
  readonly length: number;
  readonly crc: number;
}

function parseRef(ref: ContentRef): Ref | undefined {
  const m = REF.exec(ref);
  if (!m) return undefined;
  const r = { cluster: Number(m[1]), epoch: Number(m[2]), offset: Number(m[3]), length: Number(m[4]), crc: Number.parseInt(m[5]!, 16) };
  return r.offset >= BLOCK_BYTES && r.offset % BLOCK_BYTES === 0 && r.length >= RECORD_HEADER_BYTES ? r : undefined;
}

function formatRef(r: Ref): ContentRef {
  return `bs:${r.cluster}:${r.epoch}:${r.offset}:${r.length}:${r.crc.toString(16).padStart(8, '0')}`;
}

const padded = (n: number): number => Math.ceil(n / BLOCK_BYTES) * BLOCK_BYTES;

interface RecordHeader {
  readonly flags: number;
  readonly state: number;
  readonly urlBytes: number;
  readonly mimeBytes: number;
  readonly headerBytes: number;
  readonly bodyBytes: number;
  readonly originBlock: number;
  readonly crc: number;
  /** Header plus payload, without padding. */
  readonly length: number;
}

/** The header at the start of `buf`, if it is plausibly one (the CRC is checked separately). */
function parseHeader(buf: Buffer): RecordHeader | undefined {
  if (buf.length < RECORD_HEADER_BYTES || buf.readUInt32LE(0) !== RECORD_MAGIC) return undefined;
  const flags = buf[4]!;
  const state = buf[STATE_OFFSET]!;
  if ((flags & ~(FLAG_GZIP | FLAG_HEADER | FLAG_ZSTD)) !== 0 || (flags & (FLAG_GZIP | FLAG_ZSTD)) === (FLAG_GZIP | FLAG_ZSTD) || (state !== STATE_LIVE && state !== STATE_DEAD)) return undefined;
  if (buf.readUInt16LE(10) !== 0 || buf.readUInt32LE(28) !== 0) return undefined;
  const urlBytes = buf.readUInt16LE(6);
  const mimeBytes = buf.readUInt16LE(8);
  const headerBytes = buf.readUInt32LE(12);
  const bodyBytes = buf.readUInt32LE(16);
  return {
    flags, state, urlBytes, mimeBytes, headerBytes, bodyBytes, originBlock: buf.readUInt32LE(20), crc: buf.readUInt32LE(24),
    length: RECORD_HEADER_BYTES + urlBytes + mimeBytes + headerBytes + bodyBytes,
  };
}

/** The CRC-32 of a record: everything but the state byte and the CRC field itself. */
function recordCrc(rec: Buffer, length: number): number {
  let c = crc32(rec.subarray(0, STATE_OFFSET));
  c = crc32(rec.subarray(STATE_OFFSET + 1, 24), c);
  return crc32(rec.subarray(28, length), c);
}

/** Sets the origin, recomputes and stores the CRC; returns the CRC. */
function seal(rec: Buffer, length: number, originBlock: number): number {
  rec.writeUInt32LE(originBlock, 20);
  const c = recordCrc(rec, length);
  rec.writeUInt32LE(c, 24);
  return c;
}

function encodeRecord(url: string, mime: string, header: string | undefined, stored: Uint8Array, compressed: boolean): { rec: Buffer; length: number } {
  const ul = Buffer.byteLength(url, 'utf8');
  const ml = Buffer.byteLength(mime, 'utf8');
  const hl = header === undefined ? 0 : Buffer.byteLength(header, 'utf8');
  if (ul > 0xffff || ml > 0xffff || hl > 0xffffffff || stored.length > 0xffffffff) return { rec: Buffer.alloc(0), length: -1 };
  const length = RECORD_HEADER_BYTES + ul + ml + hl + stored.length;
  const size = padded(length);
  // Not zero-filled: the header's unused bytes and the padding are zeroed
  // below, and the strings are encoded in place rather than into buffers
  // of their own first.
  const rec = Buffer.allocUnsafe(size);
  rec.fill(0, 0, RECORD_HEADER_BYTES);
  rec.writeUInt32LE(RECORD_MAGIC, 0);
  rec[4] = (compressed ? FLAG_ZSTD : 0) | (header !== undefined ? FLAG_HEADER : 0);
  rec[STATE_OFFSET] = STATE_LIVE;
  rec.writeUInt16LE(ul, 6);
  rec.writeUInt16LE(ml, 8);
  rec.writeUInt32LE(hl, 12);
  rec.writeUInt32LE(stored.length, 16);
  let at = RECORD_HEADER_BYTES;
  at += rec.write(url, at, ul, 'utf8');
  at += rec.write(mime, at, ml, 'utf8');
  if (header !== undefined) at += rec.write(header, at, hl, 'utf8');
  rec.set(stored, at);
  rec.fill(0, at + stored.length, size);
  seal(rec, length, 0);
  return { rec, length };
}

function fileHeader(epoch: number, cluster: number): Buffer {
  const b = Buffer.alloc(BLOCK_BYTES);
  FILE_MAGIC.copy(b, 0);
  b.writeUInt32LE(epoch, 8);
  b.writeUInt32LE(cluster, 12);
  b.writeUInt32LE(crc32(b.subarray(0, 16)), 16);
  return b;
}

interface BlockFile {
  path: string;
  readonly fh: FileHandle;
  readonly epoch: number;
}

async function openBlockFile(path: string, cluster: number): Promise<BlockFile> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r+');
  } catch (err) {
    throw ioError('open', path, err);
  }
  try {
    const b = Buffer.alloc(20);
    const { bytesRead } = await fh.read(b, 0, 20, 0);
    if (bytesRead < 20 || !b.subarray(0, 8).equals(FILE_MAGIC) || b.readUInt32LE(16) !== crc32(b.subarray(0, 16))) {
      throw new TrawlError('TRAWL_ERR_IO', `${path} is not a bstore block file (bad file header)`);
    }
    if (b.readUInt32LE(12) !== cluster) {
      throw new TrawlError('TRAWL_ERR_IO', `${path} holds cluster ${b.readUInt32LE(12)}, not ${cluster}`);
    }
    return { path, fh, epoch: b.readUInt32LE(8) };
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw ioError('read the header of', path, err);
  }
}

/** Sequential reads through a window, for scans. */
class ReadAhead {
  private buf = Buffer.alloc(0);
  private start = 0;
  private readonly fh: FileHandle;
  private readonly size: number;

  constructor(fh: FileHandle, size: number) {
    this.fh = fh;
    this.size = size;
  }

  /** `len` bytes at `pos`, or undefined past the end of the file. The result stays valid. */
  async read(pos: number, len: number): Promise<Buffer | undefined> {
    if (pos + len > this.size) return undefined;
    if (pos < this.start || pos + len > this.start + this.buf.length) {
      const n = Math.min(Math.max(len, READ_AHEAD_BYTES), this.size - pos);
      const buf = Buffer.allocUnsafe(n);
      const { bytesRead } = await this.fh.read(buf, 0, n, pos);
      this.buf = buf.subarray(0, bytesRead);
      this.start = pos;
      if (bytesRead < len) return undefined;
    }
    return this.buf.subarray(pos - this.start, pos - this.start + len);
  }
}

interface ScannedRecord {
  readonly offset: number;
  readonly header: RecordHeader;
  /** The record without padding. */
  readonly bytes: Buffer;
}

/** The records of a file whose CRC holds, in file order; anything else is skipped a block at a time. */
async function* scan(file: BlockFile): AsyncGenerator<ScannedRecord> {
  const size = (await file.fh.stat()).size;
  const r = new ReadAhead(file.fh, size);
  let pos = BLOCK_BYTES;
  while (pos + RECORD_HEADER_BYTES <= size) {
    const head = await r.read(pos, RECORD_HEADER_BYTES);
    const header = head && parseHeader(head);
    const bytes = header && (await r.read(pos, header.length));
    if (!header || !bytes || recordCrc(bytes, header.length) !== header.crc) {
      pos += BLOCK_BYTES;
      continue;
    }
    yield { offset: pos, header, bytes };
    pos += padded(header.length);
  }
}

/** Where put() placed a record. */
interface Placed {
  readonly epoch: number;
  readonly offset: number;
}

type Op =
  | { readonly kind: 'append'; readonly rec: Buffer; readonly resolve: (at: Placed) => void; readonly reject: (e: unknown) => void }
  | { readonly kind: 'kill'; readonly ref: Ref; readonly resolve: () => void; readonly reject: (e: unknown) => void };

/** One cluster: its block file, the previous one after an interrupted compaction, and the write queue. */
class Cluster {
  readonly n: number;
  private readonly dir: string;
  readonly path: string;
  cur: BlockFile | undefined;
  prev: BlockFile | undefined;
  /** Where the next record goes in `cur`. */
  private end = 0;
  /** Live record bytes (padded) in `cur`; undefined until a scan counted them. */
  private liveBytes: number | undefined;
  private ready: Promise<void> | undefined;
  /** Exclusive sections (write batches, compaction) run one after another. */
  private tail: Promise<unknown> = Promise.resolve();
  private queue: Op[] = [];
  private flushQueued = false;

  constructor(dir: string, n: number) {
    this.dir = dir;
    this.n = n;
    this.path = join(dir, `cluster-${n}.blk`);
  }

  /** Opens the files once, finishing what a crash interrupted. */
  init(): Promise<void> {
    this.ready ??= this.recover().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  fileFor(epoch: number): BlockFile | undefined {
    if (this.cur?.epoch === epoch) return this.cur;
    if (this.prev?.epoch === epoch) return this.prev;
    return undefined;
  }

  append(rec: Buffer): Promise<Placed> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'append', rec, resolve, reject }));
  }

  kill(ref: Ref): Promise<void> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'kill', ref, resolve, reject }));
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Live fraction of the cluster's bytes after the file header; a leftover .prev counts as dead. */
  async liveFraction(): Promise<number> {
    await this.init();
    if (!this.cur) return 1;
    if (this.liveBytes === undefined) {
      let live = 0;
      for await (const r of scan(this.cur)) if (r.header.state === STATE_LIVE) live += padded(r.header.length);
      this.liveBytes = live;
    }
    const total = (await this.sizeOf(this.cur)) - BLOCK_BYTES + (this.prev ? await this.sizeOf(this.prev) : 0);
    return total <= 0 ? 1 : this.liveBytes / total;
  }

  async diskUsage(): Promise<number> {
    await this.init();
    return (this.cur ? await this.sizeOf(this.cur) : 0) + (this.prev ? await this.sizeOf(this.prev) : 0);
  }

  async compact(relocate: (oldRef: ContentRef, newRef: ContentRef) => void): Promise<void> {
    await this.init();
    if (this.prev) {
      try {
        await this.finishInterruptedCompaction(relocate);
      } catch (err) {
        throw ioError('finish the interrupted compaction of', this.path, err);
      }
    }
    const cur = this.cur;
    if (!cur) return;
    const tmpPath = `${this.path}.tmp`;
    const compactPath = `${this.path}.compact`;
    const epoch = cur.epoch + 1;
    let next: BlockFile | undefined;
    let sealed = false;
    try {
      await rm(tmpPath, { force: true });
      const fh = await open(tmpPath, 'wx+', 0o600);
      next = { path: tmpPath, fh, epoch };
      const moves: Array<[ContentRef, ContentRef]> = [];
      let chunk: Buffer[] = [fileHeader(epoch, this.n)];
      let chunkBytes = BLOCK_BYTES;
      let written = 0;
      for await (const r of scan(cur)) {
        if (r.header.state !== STATE_LIVE) continue;
        const offset = written + chunkBytes;
        const copy = Buffer.alloc(padded(r.header.length));
        r.bytes.copy(copy);
        const crc = seal(copy, r.header.length, r.offset / BLOCK_BYTES);
        moves.push([
          formatRef({ cluster: this.n, epoch: cur.epoch, offset: r.offset, length: r.header.length, crc: r.header.crc }),
          formatRef({ cluster: this.n, epoch, offset, length: r.header.length, crc }),
        ]);
        chunk.push(copy);
        chunkBytes += copy.length;
        if (chunkBytes >= COPY_CHUNK_BYTES) {
          await writeAll(fh, chunk, chunkBytes, written, tmpPath);
          written += chunkBytes;
          chunk = [];
          chunkBytes = 0;
        }
      }
      await writeAll(fh, chunk, chunkBytes, written, tmpPath);
      written += chunkBytes;
      await fh.datasync();
      await rename(tmpPath, compactPath);
      next.path = compactPath;
      sealed = true;
      await fsyncDir(this.dir);
      for (const [oldRef, newRef] of moves) relocate(oldRef, newRef);
      // Swap in memory before the next await, so no read sees the caller's new refs before the file is in place.
      this.cur = next;
      this.end = written;
      this.liveBytes = written - BLOCK_BYTES;
      await rename(compactPath, this.path);
      next.path = this.path;
      await fsyncDir(this.dir);
      await cur.fh.close();
    } catch (err) {
      if (!sealed) {
        await next?.fh.close().catch(() => undefined);
        await rm(tmpPath, { force: true }).catch(() => undefined);
        throw ioError('compact', this.path, err);
      }
      // Relocations may have begun: leave it to recover() to roll forward and keep the old file as .prev.
      await this.reset([cur, next]);
      throw ioError('compact', this.path, err);
    }
  }

  /** Waits for queued writes; closes the files. */
  async close(): Promise<void> {
    if (this.flushTimer) this.startFlush();
    await this.exclusive(async () => undefined);
    await this.reset([this.cur, this.prev]);
  }

  private flushTimer: NodeJS.Timeout | undefined;

  /**
   * Writes wait up to FLUSH_WINDOW_MS for others to share their write and
   * fdatasync. A put resolves only after its fdatasync either way; the window
   * trades latency for far fewer syncs. Each cluster file syncs on its own,
   * so a crawl spread over the default 8 clusters syncs up to 8 times per
   * window. A sync costs far more than its write: the thread-pool hand-offs,
   * the device's cache flush, and on a virtual machine an exit to the host
   * per flush. The crawler holds no request slot while it stores a page, so
   * the window delays a page's commit but no request; a wider window saved
   * nothing more (bench/README.md, *What changed*, 5095ef0, and *Tried*).
   */
  private enqueue(op: Op): void {
    this.queue.push(op);
    if (!this.flushQueued) {
      this.flushQueued = true;
      this.flushTimer = setTimeout(() => this.startFlush(), FLUSH_WINDOW_MS);
    }
  }

  private startFlush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    void this.exclusive(() => this.flush());
  }

  /** One group commit: every op queued so far, one write, one fdatasync per touched file. */
  private async flush(): Promise<void> {
    this.flushQueued = false;
    const ops = this.queue;
    this.queue = [];
    try {
      await this.init();
      const touched = new Set<BlockFile>();
      const appends = ops.filter((o) => o.kind === 'append');
      const offsets: number[] = [];
      let epoch = 0;
      if (appends.length > 0) {
        const cur = this.cur ?? (await this.create());
        epoch = cur.epoch;
        const start = this.end;
        let total = 0;
        for (const a of appends) {
          offsets.push(start + total);
          total += a.rec.length;
        }
        // Advance first: even a failed write leaves its bytes behind, as garbage.
        this.end += total;
        await writeAll(cur.fh, appends.map((a) => a.rec), total, start, cur.path);
        touched.add(cur);
      }
      const killed: number[] = [];
      for (const op of ops) {
        if (op.kind !== 'kill') continue;
        const f = this.fileFor(op.ref.epoch);
        if (f && (await this.markDead(f, op.ref))) {
          touched.add(f);
          if (f === this.cur) killed.push(padded(op.ref.length));
        }
      }
      await Promise.all([...touched].map(async (f) => {
        try {
          await f.fh.datasync();
        } catch (err) {
          throw ioError('sync', f.path, err);
        }
      }));
      if (this.liveBytes !== undefined) {
        for (const a of appends) this.liveBytes += a.rec.length;
        for (const k of killed) this.liveBytes -= k;
      }
      let i = 0;
      for (const op of ops) {
        if (op.kind === 'append') op.resolve({ epoch, offset: offsets[i++]! });
        else op.resolve();
      }
    } catch (err) {
      const e = ioError('write', this.path, err);
      for (const op of ops) op.reject(e);
    }
  }

  /** Marks the record a ref names dead, if it is there and live; false otherwise. */
  private async markDead(f: BlockFile, ref: Ref): Promise<boolean> {
    const head = Buffer.alloc(RECORD_HEADER_BYTES);
    try {
      const { bytesRead } = await f.fh.read(head, 0, RECORD_HEADER_BYTES, ref.offset);
      const h = bytesRead === RECORD_HEADER_BYTES ? parseHeader(head) : undefined;
      if (!h || h.crc !== ref.crc || h.length !== ref.length || h.state !== STATE_LIVE) return false;
      await f.fh.write(Buffer.of(STATE_DEAD), 0, 1, ref.offset + STATE_OFFSET);
      return true;
    } catch (err) {
      throw ioError('mark a record dead in', f.path, err);
    }
  }

  /** Creates an empty block file (header only) through .tmp, so a crash never leaves half a header. */
  private async create(): Promise<BlockFile> {
    const tmpPath = `${this.path}.tmp`;
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const fh = await open(tmpPath, 'w+', 0o600);
      try {
        await writeAll(fh, [fileHeader(1, this.n)], BLOCK_BYTES, 0, tmpPath);
        await fh.datasync();
        await rename(tmpPath, this.path);
      } catch (err) {
        await fh.close().catch(() => undefined);
        throw err;
      }
      await fsyncDir(this.dir);
      this.cur = { path: this.path, fh, epoch: 1 };
      this.end = BLOCK_BYTES;
      this.liveBytes = 0;
      return this.cur;
    } catch (err) {
      throw ioError('create', this.path, err);
    }
  }

  /**
   *   .tmp                 never sealed: delete it
   *   .compact (+ .blk)    sealed, relocations may have begun: .blk → .prev, .compact → .blk
   *   .compact + .prev     crashed between those two renames: finish the second
   */
  private async recover(): Promise<void> {
    const names = new Set(await this.list());
    const base = `cluster-${this.n}.blk`;
    const has = (suffix: string): boolean => names.has(base + suffix);
    const prevPath = `${this.path}.prev`;
    try {
      if (has('.tmp')) await unlink(`${this.path}.tmp`);
      if (has('.compact')) {
        if (has('') && has('.prev')) {
          throw new TrawlError('TRAWL_ERR_IO', `${this.path}: .blk, .blk.prev and .blk.compact all exist; move one away by hand`);
        }
        if (has('')) {
          await rename(this.path, prevPath);
          names.add(`${base}.prev`);
        }
        await rename(`${this.path}.compact`, this.path);
        await fsyncDir(this.dir);
        names.add(base);
      } else if (has('.prev') && !has('')) {
        throw new TrawlError('TRAWL_ERR_IO', `${prevPath} exists without ${this.path}`);
      }
    } catch (err) {
      throw ioError('recover', this.path, err);
    }
    if (has('')) {
      this.cur = await openBlockFile(this.path, this.n);
      this.end = padded(await this.sizeOf(this.cur));
      this.liveBytes = undefined;
    }
    if (has('.prev')) this.prev = await openBlockFile(prevPath, this.n);
  }

  /**
   * After a crash (or a throwing relocate) during compaction: .blk holds copies of the live records
   * of .prev, each with its origin block. Relocate the refs that still point into .prev, and mark
   * dead the copies whose original was deleted after the copy was made.
   */
  private async finishInterruptedCompaction(relocate: (oldRef: ContentRef, newRef: ContentRef) => void): Promise<void> {
    const cur = this.cur!;
    const prev = this.prev!;
    const moves: Array<[ContentRef, ContentRef]> = [];
    let killed = false;
    const head = Buffer.alloc(RECORD_HEADER_BYTES);
    for await (const r of scan(cur)) {
      if (r.header.originBlock === 0 || r.header.state !== STATE_LIVE) continue;
      const origin = r.header.originBlock * BLOCK_BYTES;
      const { bytesRead } = await prev.fh.read(head, 0, RECORD_HEADER_BYTES, origin);
      const h = bytesRead === RECORD_HEADER_BYTES ? parseHeader(head) : undefined;
      if (!h) continue;
      if (h.state === STATE_DEAD) {
        await cur.fh.write(Buffer.of(STATE_DEAD), 0, 1, r.offset + STATE_OFFSET);
        killed = true;
      } else {
        moves.push([
          formatRef({ cluster: this.n, epoch: prev.epoch, offset: origin, length: h.length, crc: h.crc }),
          formatRef({ cluster: this.n, epoch: cur.epoch, offset: r.offset, length: r.header.length, crc: r.header.crc }),
        ]);
      }
    }
    if (killed) await cur.fh.datasync();
    for (const [oldRef, newRef] of moves) relocate(oldRef, newRef);
    this.prev = undefined;
    this.liveBytes = undefined;
    await prev.fh.close();
    try {
      await unlink(prev.path);
    } catch (err) {
      throw ioError('delete', prev.path, err);
    }
    await fsyncDir(this.dir);
  }

  /** Forgets the open files; the next init() reads the state from disk again. */
  private async reset(files: Array<BlockFile | undefined>): Promise<void> {
    this.cur = undefined;
    this.prev = undefined;
    this.liveBytes = undefined;
    this.ready = undefined;
    await Promise.all(files.map((f) => f?.fh.close().catch(() => undefined)));
  }

  private async list(): Promise<string[]> {
    try {
      return await readdir(this.dir);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return [];
      throw ioError('list', this.dir, err);
    }
  }

  private async sizeOf(f: BlockFile): Promise<number> {
    try {
      return (await f.fh.stat()).size;
    } catch (err) {
      throw ioError('stat', f.path, err);
    }
  }
}

/**
 * A short write is how a filling disk first shows (the kernel writes what
 * fits); the rest is written on, so that the error that stops it (ENOSPC)
 * is the one reported, and the crawl recognises a full disk.
 */
async function writeAll(fh: FileHandle, bufs: Buffer[], total: number, position: number, path: string): Promise<void> {
  if (total === 0) return;
  try {
    let written = (await fh.writev(bufs, position)).bytesWritten;
    if (written === total) return;
    const all = Buffer.concat(bufs, total);
    // Bounded: each round writes at least one byte or stops.
    while (written < total) {
      const { bytesWritten } = await fh.write(all, written, total - written, position + written);
      if (bytesWritten === 0) throw new TrawlError('TRAWL_ERR_IO', `cannot write ${path}: wrote ${written} of ${total} bytes`);
      written += bytesWritten;
    }
  } catch (err) {
    throw ioError('write', path, err);
  }
}

export class BstoreContentStore implements ContentStore, Compactable {
  /** `<dir>/bstore` */
  readonly root: string;
  private readonly opts: StorageOptions;
  /** MS-FSCCFG 2.2.4.6 `defrag_threshold`, in percent. */
  readonly defragThresholdPct: number;
  private readonly clusters = new Map<number, Cluster>();
  private closed = false;

  constructor(dir: string, opts: StorageOptions & { defragThresholdPct?: number }) {
    checkClusters(opts.clusters);
    this.root = join(dir, 'bstore');
    this.opts = opts;
    this.defragThresholdPct = opts.defragThresholdPct ?? 85;
  }

  async put(url: string, doc: StoredDocument): Promise<ContentRef> {
    this.assertOpen();
    const digest = urlDigest(url);
    const c = this.cluster(digest.readUInt32BE(0) % this.opts.clusters);
    const compressed = shouldCompress(doc.mime, this.opts);
    const stored = compressed ? await compressBytes(doc.body) : doc.body;
    const { rec, length } = encodeRecord(url, doc.mime, this.opts.storeHttpHeader ? doc.header : undefined, stored, compressed);
    if (length < 0) throw new TrawlError('TRAWL_ERR_IO', `cannot store ${url} in ${c.path}: url, mime, header or body too large for a record`);
    this.assertOpen();
    const { epoch, offset } = await c.append(rec);
    return formatRef({ cluster: c.n, epoch, offset, length, crc: rec.readUInt32LE(24) });
  }

  async get(ref: ContentRef): Promise<StoredDocument | undefined> {
    this.assertOpen();
    const r = parseRef(ref);
    if (!r) return undefined;
    const c = this.cluster(r.cluster);
    await c.init();
    const f = c.fileFor(r.epoch);
    if (!f) return undefined;
    // One read for most records; a long one is read in full only once its header matches the ref.
    const first = Math.min(r.length, FIRST_READ_BYTES);
    let rec = Buffer.allocUnsafe(first);
    try {
      if ((await f.fh.read(rec, 0, first, r.offset)).bytesRead < first) return undefined;
      const h = parseHeader(rec);
      if (!h || h.crc !== r.crc || h.length !== r.length || h.state !== STATE_LIVE) return undefined;
      if (first < r.length) {
        const whole = Buffer.allocUnsafe(r.length);
        rec.copy(whole);
        rec = whole;
        if ((await f.fh.read(rec, first, r.length - first, r.offset + first)).bytesRead < r.length - first) return undefined;
      }
    } catch (err) {
      throw ioError('read', f.path, err);
    }
    const h = parseHeader(rec)!;
    if (recordCrc(rec, r.length) !== h.crc) throw new TrawlError('TRAWL_ERR_IO', `corrupt record at offset ${r.offset} of ${f.path}: CRC-32 mismatch`);
    let at = RECORD_HEADER_BYTES + h.urlBytes;
    const mime = rec.toString('utf8', at, at + h.mimeBytes);
    at += h.mimeBytes;
    const header = h.flags & FLAG_HEADER ? rec.toString('utf8', at, at + h.headerBytes) : undefined;
    at += h.headerBytes;
    let body: Buffer = rec.subarray(at, at + h.bodyBytes);
    if (h.flags & (FLAG_GZIP | FLAG_ZSTD)) {
      try {
        body = await decompressBytes(body, h.flags & FLAG_ZSTD ? 'zstd' : 'gzip');
      } catch (err) {
        throw ioError(`decompress the record at offset ${r.offset} of`, f.path, err);
      }
    }
    return { body, header, mime };
  }

  async delete(ref: ContentRef): Promise<void> {
    this.assertOpen();
    const r = parseRef(ref);
    if (!r) return;
    await this.cluster(r.cluster).kill(r);
  }

  /** Bytes of all block files, including a leftover .prev. */
  async diskUsage(): Promise<number> {
    this.assertOpen();
    let total = 0;
    for (const n of await this.existingClusters()) total += await this.cluster(n).diskUsage();
    return total;
  }

  async compact(cluster: number, relocate: (oldRef: ContentRef, newRef: ContentRef) => void): Promise<void> {
    this.assertOpen();
    const c = this.cluster(cluster);
    await c.exclusive(() => c.compact(relocate));
  }

  async fragmentation(): Promise<Array<{ cluster: number; liveFraction: number }>> {
    this.assertOpen();
    const out: Array<{ cluster: number; liveFraction: number }> = [];
    for (const n of await this.existingClusters()) {
      const c = this.cluster(n);
      out.push({ cluster: n, liveFraction: await c.exclusive(() => c.liveFraction()) });
    }
    return out;
  }

  /** The clusters whose live fraction fell below defrag_threshold: the ones to compact. */
  async clustersToCompact(): Promise<number[]> {
    return (await this.fragmentation()).filter((f) => f.liveFraction * 100 < this.defragThresholdPct).map((f) => f.cluster);
  }

  /** Waits for queued writes and closes the files; later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.clusters.values()].map((c) => c.close()));
  }

  private assertOpen(): void {
    if (this.closed) throw new TrawlError('TRAWL_ERR_IO', `the content store ${this.root} is closed`);
  }

  private cluster(n: number): Cluster {
    let c = this.clusters.get(n);
    if (!c) {
      c = new Cluster(this.root, n);
      this.clusters.set(n, c);
    }
    return c;
  }

  /** Cluster numbers with a block file (or one left by a compaction), in order. */
  private async existingClusters(): Promise<number[]> {
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return [];
      throw ioError('list', this.root, err);
    }
    const ns = new Set<number>();
    for (const name of names) {
      const m = /^cluster-(\d{1,5})\.blk(?:\.compact)?$/.exec(name);
      if (m) ns.add(Number(m[1]));
    }
    return [...ns].sort((a, b) => a - b);
  }
}
