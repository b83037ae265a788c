/**
 * Content store throughput: 5,000 puts of 8 KB documents into each
 * datastore, as a crawl with many fetches in flight would issue them, then
 * reading them all back. Every put is durable (fsync'd) when it resolves.
 *
 *   npx node bench/content-store.bench.ts [documents] [in flight]
 *
 * Prints puts/s and gets/s per store and configuration, and the bstore /
 * flatfile ratio measured in the same run: absolute numbers depend on the
 * disk, the ratio much less.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContentStore, StoredDocument } from '../src/store/content-store.ts';
import { openContentStore } from '../src/store/open-content-store.ts';

const DOCS = Number(process.argv[2] ?? 5000);
const IN_FLIGHT = Number(process.argv[3] ?? 64);
const DOC_BYTES = 8 * 1024;

const WORDS = 'crawler store block cluster fetch page link robots sitemap header body index queue site the of and to in'.split(' ');

/** An HTML-like page: compresses about as well as real ones (3–5x), and no two are alike. */
function page(i: number): Buffer {
  const parts = [`<!doctype html><html><head><title>Page ${i}</title></head><body>\n`];
  let n = parts[0]!.length;
  const noise = randomBytes(DOC_BYTES);
  let k = 0;
  while (n < DOC_BYTES) {
    const w = `${WORDS[noise[k++ % noise.length]! % WORDS.length]!}${k % 13 === 0 ? ` <a href="/p/${noise.readUInt16LE(k % (DOC_BYTES - 2))}">x</a>\n` : ' '}`;
    parts.push(w);
    n += w.length;
  }
  return Buffer.from(parts.join('')).subarray(0, DOC_BYTES);
}

const HEADER = 'HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 8192\r\n';

async function pool<T>(n: number, inFlight: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await fn(i);
    }
  }));
  return out;
}

interface Result {
  readonly putsPerS: number;
  readonly getsPerS: number;
  readonly diskMiB: number;
}

async function run(datastore: 'flatfile' | 'bstore', compress: boolean, docs: readonly StoredDocument[]): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), `trawl-bench-${datastore}-`));
  const store: ContentStore = openContentStore(dir, { datastore, compress, compressExcludeMime: [], storeHttpHeader: true, clusters: 8 });
  try {
    let t0 = performance.now();
    const refs = await pool(docs.length, IN_FLIGHT, (i) => store.put(`http://site${i % 50}.test/page/${i}`, docs[i]!));
    const putS = (performance.now() - t0) / 1000;
    t0 = performance.now();
    await pool(refs.length, IN_FLIGHT, async (i) => {
      const got = await store.get(refs[i]!);
      if (!got || got.body.length !== docs[i]!.body.length) throw new Error(`document ${i} did not read back`);
    });
    const getS = (performance.now() - t0) / 1000;
    return { putsPerS: docs.length / putS, getsPerS: docs.length / getS, diskMiB: (await store.diskUsage()) / 2 ** 20 };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const docs = Array.from({ length: DOCS }, (_, i): StoredDocument => ({ body: page(i), header: HEADER, mime: 'text/html' }));
console.log(`content store: ${DOCS} puts of ${DOC_BYTES / 1024} KB documents, ${IN_FLIGHT} in flight, 8 clusters, fsync per put\n`);
console.log('store      compress     puts/s     gets/s   disk MiB');
for (const compress of [false, true]) {
  const results: Partial<Record<'flatfile' | 'bstore', Result>> = {};
  for (const datastore of ['flatfile', 'bstore'] as const) {
    const r = await run(datastore, compress, docs);
    results[datastore] = r;
    console.log(`${datastore.padEnd(10)} ${(compress ? 'on' : 'off').padEnd(8)} ${r.putsPerS.toFixed(0).padStart(10)} ${r.getsPerS.toFixed(0).padStart(10)} ${r.diskMiB.toFixed(1).padStart(10)}`);
  }
  const ratio = results.bstore!.putsPerS / results.flatfile!.putsPerS;
  console.log(`           bstore / flatfile puts: ${ratio.toFixed(1)}x\n`);
}
