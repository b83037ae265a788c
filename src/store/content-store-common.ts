/**
 * What the two content store dialects (flatfile, bstore) share: which
 * cluster a URL lands in, whether and how a document is compressed, and the one way a
 * file system failure becomes a TrawlError.
 *
 *   url ──sha1──► 20 bytes ──first 4 bytes (uint32 BE) mod clusters──► cluster
 *                    └─ hex: the flatfile name of the document
 */

import { hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { promisify } from 'node:util';
import { constants as zc, createZstdCompress, gunzip, gunzipSync, zstdCompress, zstdCompressSync, zstdDecompress, zstdDecompressSync, type ZstdCompress } from 'node:zlib';
import { isDiskFull } from '../core/disk-full.ts';
import { TrawlError } from '../core/errors.ts';
import type { StorageOptions } from './content-store.ts';

export function urlDigest(url: string): Buffer {
  return hash('sha1', url, 'buffer');
}

/** MS-FSCCFG 2.2.4.6 `clusters`: a stable spread, the same in every process and release. */
export function clusterOf(url: string, clusters: number): number {
  return urlDigest(url).readUInt32BE(0) % clusters;
}

/**
 * MS-FSCCFG 2.2.4.6 `compress_exclude_mime`: `type/subtype` patterns where
 * `*` stands for a whole field (`text/*`, `*\/*`). Parameters of the MIME
 * type (`; charset=…`) and letter case are ignored.
 */
export function mimeExcluded(mime: string, patterns: readonly string[]): boolean {
  // The default list is empty: answered without splitting and lower-casing the MIME type of every document stored
  // (bench/README.md, *What changed*, fed8244).
  if (patterns.length === 0) return false;
  const [type, sub] = (mime.split(';')[0] ?? '').trim().toLowerCase().split('/');
  return patterns.some((p) => {
    const [pt, ps] = p.trim().toLowerCase().split('/');
    return (pt === '*' || pt === type) && (ps === '*' || ps === sub);
  });
}

export function shouldCompress(mime: string, opts: Pick<StorageOptions, 'compress' | 'compressExcludeMime'>): boolean {
  return opts.compress && !mimeExcluded(mime, opts.compressExcludeMime);
}

/**
 * How a stored body is compressed. New documents are written with zstd;
 * gzip is read for documents stored by earlier versions. zstd level 1 is
 * faster than gzip level 1 for about the same size, and compressing is
 * among the largest costs of the crawl's main thread (bench/README.md,
 * *What changed*, bd7ff99). `zstdcat` reads a flatfile body as `zcat` read
 * the gzip ones.
 */
export type Codec = 'gzip' | 'zstd';

/**
 * Below this size documents are (de)compressed synchronously. Node's async
 * zlib sets up a stream and a thread-pool job per call, which costs several
 * times the CPU of the synchronous call on a page (bench/README.md, *What
 * changed*, 230f48e). A 256 KiB document takes a few ms synchronously;
 * larger ones go to the thread pool so the event loop never stalls for long.
 */
const SYNC_LIMIT_BYTES = 256 * 1024;

/** Level 1: documents are compressed on the crawl's hot path, and zstd's default level 3 is slower for hardly fewer bytes (bench/README.md, *Tried*). */
const ZSTD_OPTIONS = { params: { [zc.ZSTD_c_compressionLevel]: 1 } };
const zstdAsync = promisify(zstdCompress);
const unzstdAsync = promisify(zstdDecompress);
const gunzipAsync = promisify(gunzip);

/** The parts of a Node zlib stream that drive its native handle synchronously (node:zlib's own processChunkSync uses them). */
interface ZlibInternals {
  readonly _handle?: { writeSync?: (flush: number, input: Uint8Array, inOff: number, inLen: number, out: Buffer, outOff: number, outLen: number) => void };
  readonly _writeState?: Uint32Array;
}

/**
 * One zstd context for every document this thread compresses.
 *
 * `zstdCompressSync` builds a stream object and a new ZSTD context for each
 * call and closes them at the end, which on a page of a few KB costs about
 * as much as compressing it (bench/README.md, *What changed*, a503856). A
 * context that ends a frame with ZSTD_e_end is ready for the next one with
 * the same parameters, so this keeps one ZstdCompress and drives its handle
 * the way node:zlib's processChunkSync does, without the close: the bytes
 * are the same.
 *
 * Node offers no public synchronous API on a reusable stream, so this
 * relies on `_handle.writeSync` and `_writeState`, which node:zlib has used
 * for its sync functions since Node 0.11. If either is missing (another
 * Node) or a call fails, the one-shot function is used instead: the bytes
 * are the same either way (test/store/content-store.test.ts).
 */
export class ReusedZstd {
  private engine: (ZstdCompress & ZlibInternals) | undefined;
  private broken = false;
  private out = Buffer.allocUnsafe(64 * 1024);

  /** True while one context serves every call (false before the first, or where the one-shot stands in). */
  get reusing(): boolean {
    return this.engine !== undefined;
  }

  compress(data: Uint8Array): Buffer {
    const engine = this.broken ? undefined : (this.engine ??= this.create());
    if (!engine) return zstdCompressSync(data, ZSTD_OPTIONS);
    try {
      return this.run(engine, data);
    } catch {
      // The context may be mid-frame: drop it and start a new one next time.
      this.engine = undefined;
      engine.destroy();
      return zstdCompressSync(data, ZSTD_OPTIONS);
    }
  }

  private create(): (ZstdCompress & ZlibInternals) | undefined {
    const engine = createZstdCompress(ZSTD_OPTIONS) as ZstdCompress & ZlibInternals;
    if (typeof engine._handle?.writeSync !== 'function' || !(engine._writeState instanceof Uint32Array)) {
      this.broken = true;
      engine.destroy();
      return undefined;
    }
    // A native error is also emitted; the throw from writeSync's caller below is what counts.
    engine.on('error', () => {});
    return engine;
  }

  private run(engine: ZstdCompress & ZlibInternals, data: Uint8Array): Buffer {
    const handle = engine._handle!;
    const state = engine._writeState!;
    const parts: Buffer[] = [];
    let inOff = 0;
    let inLen = data.byteLength;
    for (;;) {
      handle.writeSync!(zc.ZSTD_e_end, data, inOff, inLen, this.out, 0, this.out.length);
      if (engine.destroyed) throw new Error('zstd: the compressor failed');
      const outLeft = state[0]!;
      const inLeft = state[1]!;
      parts.push(Buffer.from(this.out.subarray(0, this.out.length - outLeft)));
      inOff += inLen - inLeft;
      inLen = inLeft;
      // Room left in the output means the frame is complete (ZSTD_e_end returned 0).
      if (outLeft !== 0) break;
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}

const zstdSync = new ReusedZstd();

/** The body as it is written: zstd (see Codec). */
export const compressBytes = async (data: Uint8Array): Promise<Buffer> => (data.length <= SYNC_LIMIT_BYTES ? zstdSync.compress(data) : zstdAsync(data, ZSTD_OPTIONS));

export const decompressBytes = async (data: Uint8Array, codec: Codec): Promise<Buffer> => {
  const sync = data.length <= SYNC_LIMIT_BYTES / 4;
  if (codec === 'zstd') return sync ? zstdDecompressSync(data) : unzstdAsync(data);
  return sync ? gunzipSync(data) : gunzipAsync(data);
};

export function checkClusters(clusters: number): void {
  if (!Number.isInteger(clusters) || clusters < 1 || clusters > 65535) {
    throw new TrawlError('TRAWL_ERR_INTERNAL', `storage clusters must be an integer from 1 to 65535, got ${String(clusters)}`);
  }
}

/** The errno code of a Node file system error (ENOENT, …), if any. */
export function errnoOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/** `cannot <action> <path>: <reason>`; a TrawlError passes through unchanged. */
export function ioError(action: string, path: string, err: unknown): TrawlError {
  if (err instanceof TrawlError) return err;
  const reason = err instanceof Error ? err.message : String(err);
  // A full disk keeps its own code: the crawl waits for space and fetches the page again (core/disk-full.ts).
  return new TrawlError(isDiskFull(err) ? 'TRAWL_ERR_DISK_FULL' : 'TRAWL_ERR_IO', `cannot ${action} ${path}: ${reason}`, { cause: err });
}

/** Makes renames and new entries in `dir` durable. */
export async function fsyncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw ioError('sync the directory', dir, err);
  }
}
