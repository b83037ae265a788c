/**
 * The flatfile content store, MS-FSCCFG 2.2.4.6 `datastore=flatfile`:
 * "stores documents directly into the file system", one file per document.
 *
 *   <dir>/flatfile/
 *     GENERATION                        highest generation reserved so far (decimal)
 *     tmp/                              files being written; emptied when the store opens
 *     <cluster>/<2 hex>/                cluster = sha1(url) mod clusters; 2 hex = first byte of sha1(url)
 *       <sha1(url)>-<generation>        the body as stored: the raw bytes, or a zstd frame (zstdcat reads it;
 *                                       earlier versions wrote gzip streams, still read)
 *       <sha1(url)>-<generation>.meta   JSON {v, url, mime, gzip, zstd?, header, bytes, crc32}; bytes and crc32
 *                                       describe the body file, so damage is reported, not returned
 *
 *   ref = "ff:<cluster>/<2 hex>/<sha1(url)>-<generation>"
 *
 * put() writes both files into tmp/, fsyncs them, renames the .meta and then
 * the body into place and fsyncs the directory before it resolves. The body
 * file is the commit point: get() needs both files, delete() removes the
 * body first, so a half-written or half-deleted document reads as absent.
 *
 * Generations come from one counter for the whole store that never goes
 * back: a block of GENERATION_BLOCK numbers is reserved in GENERATION
 * (written durably) before any of them is used, and a crash only skips the
 * rest of a block. So replacing a URL yields a new ref, the old ref stays
 * readable until it is deleted, and a deleted ref is never handed out again.
 *
 * One process at a time may open a directory; nothing here locks it.
 */

import { mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { TrawlError } from '../core/errors.ts';
import type { ContentRef, ContentStore, StorageOptions, StoredDocument } from './content-store.ts';
import { checkClusters, errnoOf, fsyncDir, compressBytes, decompressBytes, ioError, shouldCompress, urlDigest } from './content-store-common.ts';

/** Generations reserved per write of the GENERATION file. */
const GENERATION_BLOCK = 4096;

const REF = /^ff:(\d{1,5})\/([0-9a-f]{2})\/([0-9a-f]{40})-(\d{1,15})$/;

interface Meta {
  readonly v: 1;
  readonly url: string;
  readonly mime: string;
  readonly gzip: boolean;
  /** The body is a zstd frame (absent in what earlier versions wrote). */
  readonly zstd?: boolean;
  readonly header: string | null;
  /** Size and CRC-32 of the body file, i.e. after compression. */
  readonly bytes: number;
  readonly crc32: number;
}

function isMeta(m: unknown): m is Meta {
  if (typeof m !== 'object' || m === null) return false;
  const r = m as Record<string, unknown>;
  return r.v === 1 && typeof r.url === 'string' && typeof r.mime === 'string' && typeof r.gzip === 'boolean' && (r.zstd === undefined || typeof r.zstd === 'boolean') && !(r.gzip && r.zstd)
    && (r.header === null || typeof r.header === 'string') && typeof r.bytes === 'number' && typeof r.crc32 === 'number';
}

/** Writes a whole file and fsyncs it. */
async function writeDurably(path: string, data: Uint8Array | string): Promise<void> {
  try {
    const fh = await open(path, 'w', 0o600);
    try {
      await fh.writeFile(data);
      await fh.datasync();
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw ioError('write', path, err);
  }
}

/** ENOENT and ENOTDIR (a missing directory on the way) both mean "not there". */
function isMissing(err: unknown): boolean {
  const code = errnoOf(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export class FlatfileContentStore implements ContentStore {
  /** `<dir>/flatfile` */
  readonly root: string;
  private readonly opts: StorageOptions;
  private readonly tmpDir: string;
  private ready: Promise<void> | undefined;
  /** Directories made (and made durable) in this process, by path. */
  private readonly dirs = new Map<string, Promise<void>>();
  /** Generations [next, limit) are reserved and unused. */
  private genNext = 0;
  private genLimit = 0;
  private genLoaded = false;
  private reserving: Promise<void> | undefined;
  private readonly inflight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(dir: string, opts: StorageOptions) {
    checkClusters(opts.clusters);
    this.root = join(dir, 'flatfile');
    this.tmpDir = join(this.root, 'tmp');
    this.opts = opts;
  }

  put(url: string, doc: StoredDocument): Promise<ContentRef> {
    return this.track(async () => {
      await this.init();
      const digest = urlDigest(url);
      const hex = digest.toString('hex');
      const cluster = digest.readUInt32BE(0) % this.opts.clusters;
      const zstd = shouldCompress(doc.mime, this.opts);
      const stored = zstd ? await compressBytes(doc.body) : doc.body;
      const gen = await this.nextGeneration();
      const dir = join(this.root, String(cluster), hex.slice(0, 2));
      const name = `${hex}-${gen}`;
      const meta: Meta = {
        v: 1, url, mime: doc.mime, gzip: false, zstd, header: this.opts.storeHttpHeader ? (doc.header ?? null) : null,
        bytes: stored.length, crc32: crc32(stored),
      };
      const tmpBody = join(this.tmpDir, String(gen));
      try {
        await Promise.all([writeDurably(tmpBody, stored), writeDurably(`${tmpBody}.meta`, JSON.stringify(meta)), this.ensureDir(dir)]);
      } catch (err) {
        // A write that failed (a full disk above all) leaves no partial file taking space.
        await Promise.all([rm(tmpBody, { force: true }), rm(`${tmpBody}.meta`, { force: true })]).catch(() => undefined);
        throw err;
      }
      const body = join(dir, name);
      try {
        await rename(`${tmpBody}.meta`, `${body}.meta`);
        await rename(tmpBody, body);
      } catch (err) {
        throw ioError('move a document into', body, err);
      }
      await fsyncDir(dir);
      return `ff:${cluster}/${hex.slice(0, 2)}/${name}`;
    });
  }

  get(ref: ContentRef): Promise<StoredDocument | undefined> {
    return this.track(async () => {
      const path = this.pathOf(ref);
      if (path === undefined) return undefined;
      let metaText: string;
      let stored: Buffer;
      try {
        metaText = await readFile(`${path}.meta`, 'utf8');
        stored = await readFile(path);
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw ioError('read', path, err);
      }
      let meta: unknown;
      try {
        meta = JSON.parse(metaText);
      } catch {
        meta = undefined;
      }
      if (!isMeta(meta)) throw new TrawlError('TRAWL_ERR_IO', `corrupt document metadata in ${path}.meta`);
      if (stored.length !== meta.bytes || crc32(stored) !== meta.crc32) {
        throw new TrawlError('TRAWL_ERR_IO', `corrupt document ${path}: size or CRC-32 differs from ${path}.meta`);
      }
      let body: Buffer = stored;
      if (meta.gzip || meta.zstd) {
        try {
          body = await decompressBytes(stored, meta.zstd ? 'zstd' : 'gzip');
        } catch (err) {
          throw ioError('decompress', path, err);
        }
      }
      return { body, header: meta.header ?? undefined, mime: meta.mime };
    });
  }

  delete(ref: ContentRef): Promise<void> {
    return this.track(async () => {
      const path = this.pathOf(ref);
      if (path === undefined) return;
      let removed = false;
      // The body first: it is the commit point.
      for (const p of [path, `${path}.meta`]) {
        try {
          await unlink(p);
          removed = true;
        } catch (err) {
          if (!isMissing(err)) throw ioError('delete', p, err);
        }
      }
      if (removed) await fsyncDir(join(path, '..'));
    });
  }

  /** The sum of the file sizes under `<dir>/flatfile` (not counting directories). */
  diskUsage(): Promise<number> {
    return this.track(async () => {
      let entries;
      try {
        entries = await readdir(this.root, { recursive: true, withFileTypes: true });
      } catch (err) {
        if (isMissing(err)) return 0;
        throw ioError('list', this.root, err);
      }
      const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
      let total = 0;
      for (let i = 0; i < files.length; i += 64) {
        const sizes = await Promise.all(files.slice(i, i + 64).map(async (f) => {
          try {
            return (await stat(f)).size;
          } catch (err) {
            if (isMissing(err)) return 0; // deleted meanwhile
            throw ioError('stat', f, err);
          }
        }));
        for (const s of sizes) total += s;
      }
      return total;
    });
  }

  /** Waits for the calls in progress; later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  private track<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new TrawlError('TRAWL_ERR_IO', `the content store ${this.root} is closed`));
    const p = fn();
    this.inflight.add(p);
    const forget = (): void => {
      this.inflight.delete(p);
    };
    p.then(forget, forget);
    return p;
  }

  private pathOf(ref: ContentRef): string | undefined {
    const m = REF.exec(ref);
    if (!m || !m[3]!.startsWith(m[2]!)) return undefined;
    return join(this.root, m[1]!, m[2]!, `${m[3]!}-${m[4]!}`);
  }

  /** Empties tmp/: whatever is there was never committed. */
  private init(): Promise<void> {
    this.ready ??= (async () => {
      try {
        await rm(this.tmpDir, { recursive: true, force: true });
        await mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
      } catch (err) {
        throw ioError('prepare', this.tmpDir, err);
      }
    })().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  /** Makes `<root>/<cluster>/<2 hex>` and, when new, makes its entries in the parents durable. */
  private ensureDir(dir: string): Promise<void> {
    let p = this.dirs.get(dir);
    if (p === undefined) {
      p = (async () => {
        let first: string | undefined;
        try {
          first = await mkdir(dir, { recursive: true, mode: 0o700 });
        } catch (err) {
          throw ioError('create the directory', dir, err);
        }
        if (first !== undefined) {
          const cluster = join(dir, '..');
          await fsyncDir(cluster);
          await fsyncDir(join(cluster, '..'));
        }
      })();
      p.catch(() => this.dirs.delete(dir));
      this.dirs.set(dir, p);
    }
    return p;
  }

  private async nextGeneration(): Promise<number> {
    while (this.genNext >= this.genLimit) {
      this.reserving ??= this.reserveGenerations().finally(() => {
        this.reserving = undefined;
      });
      await this.reserving;
    }
    return this.genNext++;
  }

  private async reserveGenerations(): Promise<void> {
    const file = join(this.root, 'GENERATION');
    let next = this.genLimit;
    if (!this.genLoaded) {
      try {
        const text = (await readFile(file, 'utf8')).trim();
        next = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
      } catch (err) {
        if (!isMissing(err)) throw ioError('read', file, err);
        next = 0;
      }
      if (Number.isNaN(next)) throw new TrawlError('TRAWL_ERR_IO', `corrupt generation counter in ${file}`);
    }
    const limit = next + GENERATION_BLOCK;
    const tmp = join(this.tmpDir, 'GENERATION');
    await writeDurably(tmp, `${limit}\n`);
    try {
      await rename(tmp, file);
    } catch (err) {
      throw ioError('write', file, err);
    }
    await fsyncDir(this.root);
    this.genLoaded = true;
    this.genNext = next;
    this.genLimit = limit;
  }
}
