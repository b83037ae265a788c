/**
 * The one registry of trawl's error codes.
 *
 * Every error trawl reports carries a stable code from this table. The code
 * decides the CLI exit status and the XML-RPC fault string prefix, so a user
 * (or a script) can tell errors apart without parsing prose.
 *
 *   code ──► { summary, exitCode }
 *              │          └─ process exit status of the CLI
 *              └─ one line, shown in docs and `trawl --help`
 *
 * Add a code here before throwing it anywhere; `test/core/errors.test.ts`
 * checks that every code is unique, well formed and documented.
 */

export interface ErrorSpec {
  /** One-line description for the docs. */
  readonly summary: string;
  /** Exit status of the CLI when this error ends the command. */
  readonly exitCode: number;
}

export const ERROR_CODES = {
  TRAWL_ERR_USAGE: { summary: 'The command line is wrong: unknown option, missing argument.', exitCode: 64 },
  TRAWL_ERR_IO: { summary: 'A file could not be read or written.', exitCode: 66 },
  TRAWL_ERR_DISK_FULL: {
    summary: 'A write failed for lack of disk space (ENOSPC, EDQUOT, SQLITE_FULL); nothing committed is lost: free space and run again (a crawl waits for it by itself).',
    exitCode: 75,
  },
  TRAWL_ERR_INTERNAL: { summary: 'A bug in trawl. Please report it with the message.', exitCode: 70 },

  TRAWL_ERR_CONFIG_XML: { summary: 'The configuration is not well-formed XML 1.0.', exitCode: 65 },
  TRAWL_ERR_CONFIG_DTD: { summary: 'The configuration has a DOCTYPE or entity declaration; trawl refuses them.', exitCode: 65 },
  TRAWL_ERR_CONFIG_ENCODING: { summary: 'The configuration is not UTF-8 encoded XML 1.0.', exitCode: 65 },
  TRAWL_ERR_CONFIG_STRUCTURE: {
    summary: 'An element is not where MS-FSCCFG allows it, or lacks its name attribute.',
    exitCode: 65,
  },
  TRAWL_ERR_CONFIG_UNKNOWN: { summary: 'A parameter or section name is not known in that place.', exitCode: 65 },
  TRAWL_ERR_CONFIG_TYPE: {
    summary: 'A parameter has the wrong type attribute, or its value does not parse as its type.',
    exitCode: 65,
  },
  TRAWL_ERR_CONFIG_VALUE: { summary: 'A value is not one of the allowed values or formats.', exitCode: 65 },
  TRAWL_ERR_CONFIG_RANGE: { summary: 'A number is outside its allowed range.', exitCode: 65 },
  TRAWL_ERR_CONFIG_PLACE: {
    summary: 'A parameter is known but not allowed where it appears (e.g. in a sub-collection).',
    exitCode: 65,
  },
  TRAWL_ERR_CONFIG_DUPLICATE: { summary: 'A parameter, section or collection is given twice.', exitCode: 65 },
  TRAWL_ERR_CONFIG_RULE: { summary: 'A rule of MS-FSCCFG that ties parameters together is broken.', exitCode: 65 },
  TRAWL_ERR_CONFIG_YAML: { summary: 'The Elastic crawler YAML is malformed or has a wrong value.', exitCode: 65 },
  TRAWL_ERR_CONFIG_UNSUPPORTED: {
    summary: 'A setting of the Elastic crawler YAML has no trawl equivalent yet (reported, never dropped silently).',
    exitCode: 65,
  },
  TRAWL_ERR_CONFIG_MASKED: {
    summary: 'A configuration sent back (CollectionAdd) holds the mask ******** where the collection has no stored secret to keep.',
    exitCode: 65,
  },
  TRAWL_ERR_CONFIG_NOT_FOUND: { summary: 'A named collection, sub-collection or node is not in the configuration.', exitCode: 65 },

  TRAWL_ERR_XMLRPC_PARSE: {
    summary: 'An XML-RPC body is not well-formed XML 1.0, not UTF-8 (or declared ISO-8859-1/US-ASCII), or too large or deep.',
    exitCode: 76,
  },
  TRAWL_ERR_XMLRPC_DTD: { summary: 'An XML-RPC body has a DOCTYPE or entity declaration; trawl refuses them.', exitCode: 76 },
  TRAWL_ERR_XMLRPC_STRUCTURE: {
    summary: 'An XML-RPC body is well-formed XML but not a methodCall or methodResponse (missing methodName, stray element or text).',
    exitCode: 76,
  },
  TRAWL_ERR_XMLRPC_TYPE: {
    summary: 'An XML-RPC value does not parse as its type (int out of range, boolean not 0/1, bad date or base64), or cannot be encoded.',
    exitCode: 76,
  },
  TRAWL_ERR_XMLRPC_PARAMS: { summary: 'An XML-RPC method was called with the wrong number or types of parameters.', exitCode: 65 },
  TRAWL_ERR_URI_FILE_PLACE: {
    summary: 'An AddURIFile or CollectionDeleteURIFile path is not inside the URI file folder (`trawl serve --uri-file-dir`).',
    exitCode: 77,
  },
  TRAWL_ERR_URI_FILE: {
    summary: 'A URI file is not a regular UTF-8 file of absolute http(s) URIs, one a line, or is too large; the fault names the lines, never their text.',
    exitCode: 65,
  },

  TRAWL_ERR_SECRET_KEY: { summary: 'The !ENC! key file is missing or is not a 128-bit key plus a 128-bit IV.', exitCode: 78 },
  TRAWL_ERR_SECRET_DECRYPT: { summary: 'An !ENC! value could not be decrypted with the key file.', exitCode: 78 },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A position in a source file. Lines and columns count from 1. */
export interface SourceLocation {
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
}

export function formatLocation(loc: SourceLocation | undefined): string {
  if (!loc) return '';
  const parts: string[] = [];
  if (loc.file !== undefined) parts.push(loc.file);
  if (loc.line !== undefined) {
    parts.push(String(loc.line));
    if (loc.column !== undefined) parts.push(String(loc.column));
  }
  return parts.join(':');
}

/** The base class of every error trawl raises on purpose. */
export class TrawlError extends Error {
  readonly code: ErrorCode;
  readonly location: SourceLocation | undefined;

  constructor(code: ErrorCode, message: string, options?: { location?: SourceLocation; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TrawlError';
    this.code = code;
    this.location = options?.location;
  }

  get exitCode(): number {
    return ERROR_CODES[this.code].exitCode;
  }

  /** `file:line:col: CODE: message`, the form every CLI command prints. */
  describe(): string {
    const where = formatLocation(this.location);
    return `${where ? `${where}: ` : ''}${this.code}: ${this.message}`;
  }
}

export function isTrawlError(err: unknown): err is TrawlError {
  return err instanceof TrawlError;
}
