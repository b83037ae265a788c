/**
 * Loading a configuration file of either kind: MS-FSCCFG XML (trawl's
 * native format) or the Elastic Open Crawler's YAML, into the same model.
 */

import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { Diagnostic } from './diagnostics.ts';
import { readElasticYaml } from './elastic-yaml.ts';
import { readConfigXml, type ReadResult } from './xml-reader.ts';

export type ConfigFormat = 'xml' | 'yaml';

/** By extension; otherwise XML when the text starts with "<" (after a BOM and white space). */
export function detectFormat(file: string, bytes: Uint8Array): ConfigFormat {
  const ext = extname(file).toLowerCase();
  if (ext === '.xml') return 'xml';
  if (ext === '.yml' || ext === '.yaml') return 'yaml';
  const head = Buffer.from(bytes.subarray(0, 256)).toString('utf8').replace(/^\uFEFF/, '').trimStart();
  return head.startsWith('<') ? 'xml' : 'yaml';
}

export function readConfigBytes(bytes: Uint8Array, file: string, format: ConfigFormat = detectFormat(file, bytes)): ReadResult {
  if (format === 'xml') return readConfigXml(bytes, file);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const { offset, line } = firstBadUtf8(bytes);
    return { document: { collections: [] }, diagnostics: [{ severity: 'error', code: 'TRAWL_ERR_CONFIG_ENCODING', location: { file, line }, message: `the YAML file is not valid UTF-8 (first bad byte at offset ${offset})` }] };
  }
  return readElasticYaml(text.replace(/^\uFEFF/, ''), file);
}

/** The offset of the first byte that is not part of valid UTF-8, and its line. */
function firstBadUtf8(bytes: Uint8Array): { offset: number; line: number } {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 1;
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    if (b < 0x80) {
      if (b === 0x0a) line++;
      i++;
      continue;
    }
    // The sequence's length from its lead byte; a bad lead byte is 1 and fails below.
    const n = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    try {
      if (n === 1) throw new Error('continuation byte without a lead byte');
      decoder.decode(bytes.subarray(i, i + n));
    } catch {
      return { offset: i, line };
    }
    i += n;
  }
  return { offset: bytes.length, line };
}

/** Reads a configuration file; a file that cannot be read is a diagnostic, not an exception. */
export function readConfigFile(file: string): ReadResult {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    const d: Diagnostic = { severity: 'error', code: 'TRAWL_ERR_IO', location: { file }, message: `cannot read the configuration: ${why}` };
    return { document: { collections: [] }, diagnostics: [d] };
  }
  return readConfigBytes(bytes, file);
}
