/**
 * `!ENC!` secrets (MS-FSCCFG 2.2.4.20): a password may be stored encrypted
 * with AES in CBC mode (RFC 3602) under a key file that holds a 128-bit key
 * and a 128-bit IV. trawl writes `!ENC!` followed by the base64 of the
 * ciphertext (PKCS#7 padded UTF-8).
 *
 * The key file is read as either 32 raw bytes (key then IV) or 64 hex
 * digits (key then IV; white space ignored). Its default name is the spec's,
 * `CrawlerEncryptionKey.dat`, in the data directory; `trawl_secrets.key_file`
 * or $TRAWL_KEY_FILE moves it.
 *
 * Secrets are decrypted only at the moment of use (`revealSecret`), and are
 * masked by `redactValue` wherever a configuration is printed or logged.
 */

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { TrawlError } from '../core/errors.ts';
import type { CollectionConfig, SectionNode } from './model.ts';
import { COLLECTION, findAttrib, findSection } from './registry.ts';
import type { AttribDef, ParamValue, SectionDef } from './schema.ts';

export const ENC_PREFIX = '!ENC!';
export const DEFAULT_KEY_FILE_NAME = 'CrawlerEncryptionKey.dat';
export const MASK = '********';

export interface SecretKey {
  readonly key: Buffer;
  readonly iv: Buffer;
}

export function parseKeyFile(bytes: Buffer, file: string): SecretKey {
  let raw: Buffer | undefined;
  if (bytes.length === 32) raw = bytes;
  else {
    const hex = bytes.toString('latin1').replace(/\s+/g, '');
    if (/^[0-9a-fA-F]{64}$/.test(hex)) raw = Buffer.from(hex, 'hex');
  }
  if (!raw) {
    throw new TrawlError('TRAWL_ERR_SECRET_KEY', `key file ${file} must hold a 128-bit key and a 128-bit IV: 32 raw bytes or 64 hex digits (it has ${bytes.length} bytes)`, { location: { file } });
  }
  return { key: raw.subarray(0, 16), iv: raw.subarray(16, 32) };
}

export function loadKeyFile(file: string): SecretKey {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new TrawlError('TRAWL_ERR_SECRET_KEY', `cannot read key file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { location: { file }, cause: err });
  }
  return parseKeyFile(bytes, file);
}

/** Where the key file is: $TRAWL_KEY_FILE, else the configured name, else the spec's name, in the data directory. */
export function keyFilePath(dataDir: string, configured?: string, env: NodeJS.ProcessEnv = process.env): string {
  const name = env.TRAWL_KEY_FILE || configured || DEFAULT_KEY_FILE_NAME;
  return isAbsolute(name) ? name : join(dataDir, name);
}

/** A fresh key file's bytes: 16 random key bytes, then 16 random IV bytes. */
export function generateKeyBytes(): Buffer {
  return randomBytes(32);
}

export function encryptSecret(plain: string, key: SecretKey): string {
  const c = createCipheriv('aes-128-cbc', key.key, key.iv);
  return ENC_PREFIX + Buffer.concat([c.update(plain, 'utf8'), c.final()]).toString('base64');
}

export function isEncrypted(value: string): boolean {
  return value.startsWith(ENC_PREFIX);
}

/** Decrypts an `!ENC!` value; returns any other value as it is. */
export function revealSecret(value: string, key: SecretKey | (() => SecretKey)): string {
  if (!isEncrypted(value)) return value;
  const body = value.slice(ENC_PREFIX.length);
  const k = typeof key === 'function' ? key() : key;
  try {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) throw new Error('not base64');
    const d = createDecipheriv('aes-128-cbc', k.key, k.iv);
    return Buffer.concat([d.update(Buffer.from(body, 'base64')), d.final()]).toString('utf8');
  } catch (err) {
    throw new TrawlError('TRAWL_ERR_SECRET_DECRYPT', 'an !ENC! value does not decrypt with this key file (wrong key, or a damaged value)', { cause: err });
  }
}

function maskPassword(password: string): string {
  return isEncrypted(password) ? password : MASK;
}

/**
 * The value with its clear-text secret parts masked. `!ENC!` parts are
 * ciphertext and are kept, so a configuration can be printed, copied and
 * read back without losing them.
 */
export function redactValue(def: AttribDef, value: ParamValue): ParamValue {
  if (!def.secret) return value;
  const one = (text: string): string => {
    if (def.key === 'credentials' || def.key === 'account') {
      const parts = text.split(':');
      if (parts.length >= 2) parts[1] = maskPassword(parts[1]!);
      return parts.join(':');
    }
    if (def.key === 'proxy') {
      return text.replace(/^((?:http:\/\/)?[^:@/\s]+:)([^@\s]*)@/, (_all, head: string, pw: string) => `${head}${maskPassword(pw)}@`);
    }
    return maskPassword(text);
  };
  return Array.isArray(value) ? value.map(one) : typeof value === 'string' ? one(value) : value;
}

/**
 * A copy of a collection with every clear-text secret masked, walking the
 * registry to know which values are secrets.
 */
export function redactTree(def: SectionDef, node: SectionNode): SectionNode {
  const out: SectionNode = { attribs: new Map(), sections: new Map() };
  for (const [k, v] of node.attribs) {
    const adef = findAttrib(def, k) ?? def.dynamicAttrib;
    out.attribs.set(k, adef ? redactValue(adef, v) : v);
  }
  for (const [k, v] of node.sections) {
    const sdef = findSection(def, k) ?? def.dynamicSection;
    out.sections.set(k, sdef ? redactTree(sdef, v) : v);
  }
  return out;
}

export function redactCollection(c: CollectionConfig): CollectionConfig {
  return { name: c.name, root: redactTree(COLLECTION, c.root), nodes: new Map([...c.nodes].map(([k, v]) => [k, redactTree(COLLECTION, v)])) };
}
