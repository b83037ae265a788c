/**
 * The URI files of AddURIFile and CollectionDeleteURIFile (MS-FSCADM
 * 2.2.9.2, 2.2.9.7): "the absolute path of a file on the local file system
 * on the protocol server", UTF-8, one absolute URI a line.
 *
 * The path comes from the network, so it is read only when it names a
 * regular file inside the one folder the operator chose (`trawl serve
 * --uri-file-dir`, by default `<data>/uri-files/`):
 *
 *   given path ── absolute? ── realpath ── inside realpath(folder)? ── open O_NOFOLLOW
 *                                          (so "..", and symlinks that       └─ fstat: a regular
 *                                           lead out, are refused)              file, ≤ MAX bytes
 *
 * No error ever carries the file's content: a line that is not an absolute
 * http(s) URI is named by its number only, so a fault cannot be used to
 * read a file line by line.
 */

import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { TrawlError } from '../core/errors.ts';

/** A URI file larger than this is refused before it is read. */
export const MAX_URI_FILE_BYTES = 64 * 1024 * 1024;

/** Resolves `given` inside `folder`, or throws a TrawlError that names `given` (never what it holds). */
async function confined(folder: string, given: string): Promise<string> {
  if (given.includes('\0') || !isAbsolute(given)) {
    throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `the URI file must be an absolute path on the server (MS-FSCADM 2.2.9.2), not ${JSON.stringify(given)}`);
  }
  const outside = (): TrawlError => new TrawlError('TRAWL_ERR_URI_FILE_PLACE', `the URI file ${JSON.stringify(given)} is not inside the URI file folder ${folder} (trawl serve --uri-file-dir)`);
  let base: string;
  try {
    base = await realpath(folder);
  } catch (err) {
    throw new TrawlError('TRAWL_ERR_IO', `the URI file folder ${folder} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let real: string;
  try {
    real = await realpath(given);
  } catch (err) {
    // A missing file outside the folder is "outside", so the reply does not tell what exists elsewhere.
    const rel = relative(base, given);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw outside();
    throw new TrawlError('TRAWL_ERR_IO', `cannot read the URI file ${JSON.stringify(given)}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  if (!real.startsWith(base.endsWith(sep) ? base : base + sep)) throw outside();
  return real;
}

/**
 * The URIs of a URI file inside `folder`: blank lines and lines starting
 * with `#` are skipped. Throws TRAWL_ERR_URI_FILE_PLACE outside the folder,
 * TRAWL_ERR_URI_FILE for a file that is not UTF-8 or holds a line that is
 * not an absolute http(s) URI, TRAWL_ERR_IO when it cannot be read.
 */
export async function readUriFile(folder: string, given: string): Promise<string[]> {
  const real = await confined(folder, given);
  let bytes: Buffer;
  let handle;
  try {
    // O_NOFOLLOW: the last component cannot have become a symlink since realpath.
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    throw new TrawlError('TRAWL_ERR_IO', `cannot read the URI file ${JSON.stringify(given)}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new TrawlError('TRAWL_ERR_URI_FILE', `the URI file ${JSON.stringify(given)} is not a regular file`);
    if (st.size > MAX_URI_FILE_BYTES) throw new TrawlError('TRAWL_ERR_URI_FILE', `the URI file ${JSON.stringify(given)} is ${st.size} bytes; at most ${MAX_URI_FILE_BYTES} are read`);
    bytes = await handle.readFile();
  } catch (err) {
    if (err instanceof TrawlError) throw err;
    throw new TrawlError('TRAWL_ERR_IO', `cannot read the URI file ${JSON.stringify(given)}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  } finally {
    await handle.close();
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    let line = 1;
    const bad = bytes.findIndex((b) => b >= 0x80);
    for (let i = 0; i < bad; i++) if (bytes[i] === 0x0a) line++;
    throw new TrawlError('TRAWL_ERR_URI_FILE', `the URI file ${JSON.stringify(given)} is not UTF-8 (MS-FSCADM 2.2.9.2), at or after line ${line}`);
  }
  const uris: string[] = [];
  const badLines: number[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    if (URL.canParse(line) && /^https?:$/.test(new URL(line).protocol)) uris.push(line);
    else badLines.push(i + 1);
  });
  if (badLines.length > 0) {
    const shown = badLines.slice(0, 10).join(', ') + (badLines.length > 10 ? `, … (${badLines.length} lines)` : '');
    throw new TrawlError('TRAWL_ERR_URI_FILE', `the URI file ${JSON.stringify(given)} has lines that are not absolute http(s) URIs (MS-FSCADM 2.2.9.2): line ${shown}`);
  }
  return uris;
}
