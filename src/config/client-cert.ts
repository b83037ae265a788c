/**
 * The TLS client certificate of a collection (MS-FSCCFG 2.2.3 `key_file`,
 * `cert_file`): two PEM files, read and checked together when the
 * configuration is validated (`trawl config validate`) and when a crawl
 * cycle is set up, so a wrong file is reported with its parameter before
 * any site asks for the certificate.
 *
 *   key_file ─► createPrivateKey (PEM, not encrypted: MS-FSCCFG has no passphrase)
 *   cert_file ─► X509Certificate (PEM) ─► checkPrivateKey(key): the two belong together
 *
 * Relative paths are read from the configuration file's folder (`trawl crawl`,
 * `config validate`) or the daemon's working folder, as rule files are.
 */

import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { trawlError, type SourceLocation, TrawlError } from '../core/errors.ts';
import type { Diagnostic } from './diagnostics.ts';
import { resolveSettings } from './effective.ts';
import { locationOf, type CollectionConfig } from './model.ts';
import type { ClientTls } from '../fetch/proxy.ts';

export interface ClientCertificate {
  readonly key: Buffer;
  readonly cert: Buffer;
  /** The certificate's subject and expiry, for messages. */
  readonly subject: string;
  readonly validTo: string;
}

interface CertFiles {
  readonly keyFile?: string | undefined;
  readonly certFile?: string | undefined;
}

function readPem(param: 'key_file' | 'cert_file', path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw trawlError('CLIENT_CERT_UNREADABLE', { param, path, why: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
  }
}

/**
 * The client certificate the settings name, read and checked, or undefined
 * when neither file is set. Throws a TrawlError (TRAWL_ERR_CLIENT_CERT)
 * naming the parameter and the file.
 */
export function readClientCertificate(s: CertFiles, baseDir: string): ClientCertificate | undefined {
  if (s.keyFile === undefined && s.certFile === undefined) return undefined;
  if (s.keyFile === undefined || s.certFile === undefined) {
    throw trawlError('CLIENT_CERT_HALF', { set: s.keyFile !== undefined ? 'key_file' : 'cert_file', missing: s.keyFile !== undefined ? 'cert_file' : 'key_file' });
  }
  const keyPath = resolvePath(baseDir, s.keyFile);
  const certPath = resolvePath(baseDir, s.certFile);
  const key = readPem('key_file', keyPath);
  const cert = readPem('cert_file', certPath);
  let keyObject: KeyObject;
  try {
    keyObject = createPrivateKey({ key, format: 'pem' });
  } catch (err) {
    const encrypted = /passphrase|ENCRYPTED/i.test(`${(err as Error).message} ${key.subarray(0, 200).toString('latin1')}`);
    throw trawlError('CLIENT_CERT_KEY', {
      path: keyPath,
      why: encrypted ? 'the key is encrypted, and MS-FSCCFG has no parameter for its passphrase: store it unencrypted (openssl pkey -in KEY -out KEY.plain) and protect the file instead' : (err as Error).message,
    });
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw trawlError('CLIENT_CERT_CERT', { path: certPath, why: (err as Error).message });
  }
  if (!x509.checkPrivateKey(keyObject)) throw trawlError('CLIENT_CERT_MISMATCH', { keyPath, certPath, subject: x509.subject.replace(/\n/g, ', ') });
  return { key, cert, subject: x509.subject.replace(/\n/g, ', '), validTo: x509.validTo };
}

/**
 * The TLS trust of a collection (trawl_tls): the CA certificates it names
 * (PEM text, or a PEM file read from `baseDir`), checked, and the
 * verification mode; undefined when both are the defaults, so that the
 * fetcher's connections are set up as without them.
 */
export function readServerTrust(t: { readonly caCertificates: readonly string[]; readonly verification: string }, baseDir: string): Pick<ClientTls, 'ca' | 'verify'> | undefined {
  if (t.caCertificates.length === 0 && t.verification === 'full') return undefined;
  const ca = t.caCertificates.map((entry) => {
    const inline = entry.includes('-----BEGIN');
    let pem: string;
    if (inline) pem = entry;
    else {
      const path = resolvePath(baseDir, entry);
      try {
        pem = readFileSync(path, 'utf8');
      } catch (err) {
        throw trawlError('TLS_CA_UNREADABLE', { path, why: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
      }
    }
    try {
      new X509Certificate(pem);
    } catch (err) {
      throw trawlError('TLS_CA_NOT_PEM', { what: inline ? 'a certificate given as text' : JSON.stringify(resolvePath(baseDir, entry)), why: (err as Error).message });
    }
    return pem;
  });
  return { ...(ca.length > 0 ? { ca } : {}), verify: t.verification as 'full' | 'certificate' | 'none' };
}

/**
 * `config validate`: the client certificate of the collection, and of each
 * <Node> override that names other files, as diagnostics located at the
 * parameter (an error when it cannot be used, a warning when it expired).
 */
export function clientCertDiagnostics(c: CollectionConfig, baseDir: string, now = Date.now()): Diagnostic[] {
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  const check = (node: string | undefined): void => {
    const s = resolveSettings(c, node !== undefined ? { node } : {});
    const prefix = node !== undefined ? `@node:${node}.` : '';
    const at = (param: string): SourceLocation | undefined => locationOf(c, prefix + param) ?? locationOf(c, param) ?? locationOf(c, '');
    // trawl_tls: the CAs named, read and checked as at cycle setup (collection-wide: checked once). A warning, so that
    // a configuration written with placeholders (the Open Crawler's crawler.yml.example) validates; the crawl stops on it.
    if (node === undefined) {
      try {
        readServerTrust(s.tls, baseDir);
      } catch (err) {
        if (!(err instanceof TrawlError)) throw err;
        const location = at('trawl_tls.ca_certificates');
        const message = `${err.message.replace(/^trawl_tls\.ca_certificates: /, '')}; the CAs are not applied, and a crawl of the collection stops before its first request until this is mended`;
        out.push({ severity: 'warning', code: err.code, collection: c.name, param: 'trawl_tls.ca_certificates', message, ...(location ? { location } : {}) });
      }
    }
    const key = `${s.keyFile ?? ''}\0${s.certFile ?? ''}`;
    if (seen.has(key)) return;
    seen.add(key);
    try {
      const cert = readClientCertificate(s, baseDir);
      if (cert && Date.parse(cert.validTo) < now) {
        const location = at('cert_file');
        out.push({ severity: 'warning', code: 'TRAWL_ERR_CLIENT_CERT', collection: c.name, param: 'cert_file', message: `the client certificate ${JSON.stringify(cert.subject)} expired on ${cert.validTo}: sites that check it will refuse the connection`, ...(location ? { location } : {}) });
      }
    } catch (err) {
      if (!(err instanceof TrawlError)) throw err;
      const param = /^key_file/.test(err.message) ? 'key_file' : 'cert_file';
      const location = at(param);
      out.push({ severity: 'error', code: err.code, collection: c.name, param, message: err.message, ...(location ? { location } : {}) });
    }
  };
  check(undefined);
  for (const node of c.nodes.keys()) check(node);
  return out;
}
