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
 * Secrets are decrypted only at the moment of use (`revealSecret`).
 *
 * This file is also the one list of what is secret, used by every printer
 * (`trawl config show`, CollectionGetConfigurationXML, the logs, error
 * messages, the sinks' messages):
 *
 *   registry.ts  AttribDef.secret: SecretKind  ── maskValue(def, value) ── a configuration value
 *   SECRET_HEADER (header names), URL userinfo ── maskText(text)        ── any free text
 *   a value sent back masked (CollectionAdd)    ── restoreMasked(...)   ── the stored value again
 *
 * `!ENC!` values are ciphertext: they are printed as they are, so a printed
 * configuration can be read back without losing them.
 */

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { TrawlError } from '../core/errors.ts';
import { cloneSection, type CollectionConfig, type SectionNode } from './model.ts';
import { COLLECTION, findAttrib, findSection } from './registry.ts';
import type { AttribDef, ParamValue, SecretKind, SectionDef } from './schema.ts';

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

// ------------------------------------------------------------------ masking

/**
 * Header names whose values are secrets (Authorization, Proxy-Authorization,
 * Cookie, Set-Cookie, X-Api-Key, X-Auth-Token, …): matched anywhere in the
 * name, without regard to case.
 */
export const SECRET_HEADER = /authorization|cookie|token|api[-_]?key|secret|passw(?:or)?d|session|credential/i;

export function isSecretHeader(name: string): boolean {
  return SECRET_HEADER.test(name);
}

const keepEncrypted = (text: string): string => (isEncrypted(text) ? text : MASK);

/**
 * `scheme://user:password@host…` anywhere in `text`: the password becomes
 * the mask (an `!ENC!` one is kept). The user name stays, so the reader
 * still sees which account it is.
 */
const URL_USERINFO = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^\s/?#@:"'<>]*):([^\s?#@"'<>]*)@/g;

export function maskUrl(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(URL_USERINFO, (_all, scheme: string, user: string, pw: string) => `${scheme}${user}:${keepEncrypted(pw)}@`);
}

/**
 * `Name: value` or `name=value` in free text where the name, as a whole word,
 * is a secret header or form field. Narrower than SECRET_HEADER, so that
 * prose (`TRAWL_ERR_SECRET_KEY: …`) is left alone.
 */
const SECRET_PAIR = /(?<![A-Za-z0-9_-])((?:proxy-)?authorization|(?:set-)?cookie|(?:x-)?api[-_]?key|(?:x-)?(?:auth|access|refresh|csrf|xsrf|session)?[-_]?token|passw(?:or)?d|pass|pwd|(?:client[-_]?)?secret|session(?:[-_]?id)?)(?![A-Za-z0-9_-])(\s*[:=]\s*)([^\r\n"'&;,<>]+)/gi;

/**
 * Free text (a log line, an error message, a reply) with the secrets it may
 * quote masked: passwords in URL userinfo, and the values of secret headers
 * or `password=`-like pairs. Text without `@`, `:` or `=` is returned as it is.
 */
export function maskText(text: string): string {
  let out = maskUrl(text);
  if (out.includes(':') || out.includes('=')) {
    SECRET_PAIR.lastIndex = 0;
    if (SECRET_PAIR.test(out)) {
      out = out.replace(SECRET_PAIR, (all, name: string, sep: string, value: string) => {
        // "scheme://": not a pair; an already masked value stays as it is.
        if (value.startsWith('//') || value.trim() === MASK || isEncrypted(value.trim())) return all;
        return `${name}${sep}${MASK}`;
      });
    }
  }
  return out;
}

/** One header line "Name: value": the value masked when the name is secret. */
function maskHeaderLine(line: string): string {
  const m = /^([^:]*):(\s*)(.*)$/s.exec(line);
  if (!m) return isSecretHeader(line) ? MASK : line;
  return isSecretHeader(m[1]!) ? `${m[1]}:${m[2] || ' '}${keepEncrypted(m[3]!)}` : line;
}

function maskString(kind: SecretKind, text: string): string {
  switch (kind) {
    case 'value':
      return keepEncrypted(text);
    case 'credentials': {
      // user:password or user:password:realm:scheme (MS-FSCCFG 2.2.4.20), username:password (2.2.4.21)
      const parts = text.split(':');
      if (parts.length < 2) return MASK;
      parts[1] = keepEncrypted(parts[1]!);
      return parts.join(':');
    }
    case 'proxy':
      // (http://)(user:password@)host(:port) (MS-FSCCFG 2.2.3 proxy)
      return text.replace(/^((?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?[^:@/\s]*:)([^@\s]*)@/, (_all, head: string, pw: string) => `${head}${keepEncrypted(pw)}@`);
    case 'headers':
      return maskHeaderLine(text);
    case 'url':
      return maskUrl(text);
  }
}

/**
 * The value of a parameter with its clear-text secret parts masked, as the
 * registry's `secret` kind says; a value of another parameter as it is.
 */
export function maskValue(def: AttribDef, value: ParamValue): ParamValue {
  const kind = def.secret;
  if (kind === undefined) return value;
  if (Array.isArray(value)) return value.map((m: string) => maskString(kind, m));
  return typeof value === 'string' ? maskString(kind, value) : value;
}

/** How a value reads in a diagnostic: secrets masked, long values cut. */
export function describeSecretValue(def: AttribDef, text: string): string {
  if (def.secret === 'value' || def.secret === 'credentials') return '(value hidden)';
  const shown = def.secret ? maskString(def.secret, text) : text;
  return JSON.stringify(shown.length > 80 ? `${shown.slice(0, 77)}...` : shown);
}

/**
 * A copy of a collection with every clear-text secret masked, walking the
 * registry to know which values are secrets.
 */
export function redactTree(def: SectionDef, node: SectionNode): SectionNode {
  const out: SectionNode = { attribs: new Map(), sections: new Map() };
  for (const [k, v] of node.attribs) {
    const adef = findAttrib(def, k) ?? def.dynamicAttrib;
    out.attribs.set(k, adef ? maskValue(adef, v) : v);
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

// ------------------------------------------------------------------ round trip

/**
 * Puts the stored secrets back into a configuration that was printed masked
 * and sent back (CollectionGetConfigurationXML, then CollectionAdd): a
 * secret value (or list member) that holds the mask, and equals what the
 * stored value at the same path (same section, same login, prefix or realm
 * name, same <Node>) prints as, is the stored value again. A masked value
 * with no such stored value is an error naming the parameter: the mask must
 * never become a password.
 *
 * `stored` is the collection as it is now (undefined for a new one). The
 * result is a new configuration; neither input is changed.
 */
export function restoreMasked(incoming: CollectionConfig, stored: CollectionConfig | undefined): CollectionConfig {
  const walk = (def: SectionDef, node: SectionNode, old: SectionNode | undefined, path: string): SectionNode => {
    const out = cloneSection(node);
    for (const [k, v] of node.attribs) {
      const adef = findAttrib(def, k) ?? def.dynamicAttrib;
      if (!adef?.secret) continue;
      const kind = adef.secret;
      const before = old?.attribs.get(k);
      const param = `${path}${k}`;
      const keep = (text: string): string => {
        if (!text.includes(MASK)) return text;
        const candidates = Array.isArray(before) ? (before as string[]) : typeof before === 'string' ? [before] : [];
        const found = candidates.find((c) => c !== text && maskString(kind, c) === text);
        if (found === undefined) {
          throw new TrawlError('TRAWL_ERR_CONFIG_MASKED', `${param}: the value holds the mask ${MASK}, and the collection has no stored value there that prints so; give the real value (or an !ENC! one)`);
        }
        return found;
      };
      out.attribs.set(k, Array.isArray(v) ? (v as string[]).map(keep) : typeof v === 'string' ? keep(v) : v);
    }
    for (const [k, v] of node.sections) {
      const sdef = findSection(def, k) ?? def.dynamicSection;
      if (sdef) out.sections.set(k, walk(sdef, v, old?.sections.get(k), `${path}${k}.`));
    }
    return out;
  };
  return {
    name: incoming.name,
    root: walk(COLLECTION, incoming.root, stored?.root, ''),
    nodes: new Map([...incoming.nodes].map(([n, v]) => [n, walk(COLLECTION, v, stored?.nodes.get(n), `<Node name="${n}">.`)])),
  };
}
