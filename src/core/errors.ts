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
 *   message id ──► { code, template }      ERROR_MESSAGES, below
 *     trawlError('COLLECTION_NOT_FOUND', { name }) ─► TrawlError(code, filled template)
 *
 * Add a code here before throwing it anywhere; `test/core/errors.test.ts`
 * checks that every code is unique, well formed and documented, and that
 * every template is well formed.
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
  TRAWL_ERR_CRAWL_FAILED: {
    summary: '`trawl crawl` stored nothing: every start URI was refused or failed, or the cycle fetched no document; each start URI\'s reason is printed above it.',
    exitCode: 1,
  },
  TRAWL_ERR_FEED_UNDELIVERED: {
    summary: 'A sink did not take the documents within `trawl crawl --feed-timeout`; they wait in the outbox and the next run (or `trawl serve`) delivers them.',
    exitCode: 3,
  },
  TRAWL_ERR_STORE_UNAVAILABLE: {
    summary: 'The crawl store\'s database server (`--store postgres://…`) cannot be reached, refused the login, or has no such database; the message names the URL with its password masked.',
    exitCode: 69,
  },
  TRAWL_ERR_ADDRESS_IN_USE: { summary: 'The address and port `trawl serve` was told to listen on are in use by another process.', exitCode: 69 },
  TRAWL_ERR_URL_UNKNOWN: {
    summary: '`trawl inspect`: the collection\'s crawl store and event logs know nothing of the URL (never queued, crawled, or screened with `log.screened` on).',
    exitCode: 1,
  },
  TRAWL_ERR_DATA_UNAVAILABLE: {
    summary: '`trawl inspect` / `trawl export`: the crawl store is held by a running crawler, and its admin server (`--server`) does not answer either or serves another data directory.',
    exitCode: 69,
  },

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
  TRAWL_ERR_CONFIG_NOT_HONOURED: {
    summary: 'A parameter is set that this version reads and checks but does not (or only partly) act on (a warning; an error with --strict).',
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
  TRAWL_ERR_RENDER_BROWSER: {
    summary: 'A collection sets use_javascript but Chromium cannot be started: install Debian\'s package (`apt-get install chromium`) or set trawl_render browser.',
    exitCode: 69,
  },
  TRAWL_ERR_CLIENT_CERT: {
    summary: 'The TLS client certificate (key_file, cert_file) cannot be used: a file is missing or unreadable, is not PEM, the key is encrypted, only one of the two is set, or the key does not belong to the certificate; or a CA of trawl_tls.ca_certificates cannot be read.',
    exitCode: 78,
  },
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

/**
 * A message one or more call sites raise, with its code. `{name}` in the
 * template is replaced by `String(params.name)`, `{name:json}` by
 * `JSON.stringify(params.name)` (the form collection names and other
 * user-given strings are quoted in).
 */
export interface MessageSpec {
  readonly code: ErrorCode;
  readonly template: string;
}

/**
 * The message templates, by id. Messages that are a list of configuration
 * diagnostics (their code is the first diagnostic's) are not templates:
 * those call sites build a `TrawlError` from the diagnostics themselves.
 */
export const ERROR_MESSAGES = {
  // The TLS client certificate (key_file, cert_file): each message starts with the parameter it is about.
  RENDER_NO_BROWSER: { code: 'TRAWL_ERR_RENDER_BROWSER', template: 'collection {name:json} sets use_javascript, but there is no Chromium at {path:json}: install Debian\'s package chromium (apt-get install chromium), or name the executable in trawl_render browser' },
  RENDER_LAUNCH: { code: 'TRAWL_ERR_RENDER_BROWSER', template: 'Chromium {path:json} could not be started: {why}' },
  CLIENT_CERT_UNREADABLE: { code: 'TRAWL_ERR_CLIENT_CERT', template: '{param} {path:json} cannot be read: {why}' },
  TLS_CA_UNREADABLE: { code: 'TRAWL_ERR_CLIENT_CERT', template: 'trawl_tls.ca_certificates: {path:json} cannot be read: {why}' },
  TLS_CA_NOT_PEM: { code: 'TRAWL_ERR_CLIENT_CERT', template: 'trawl_tls.ca_certificates: {what} does not hold a PEM X.509 certificate: {why}' },
  CLIENT_CERT_HALF: { code: 'TRAWL_ERR_CLIENT_CERT', template: '{set} is set without {missing}: a client certificate needs both files' },
  CLIENT_CERT_KEY: { code: 'TRAWL_ERR_CLIENT_CERT', template: 'key_file {path:json} does not hold a usable PEM private key: {why}' },
  CLIENT_CERT_CERT: { code: 'TRAWL_ERR_CLIENT_CERT', template: 'cert_file {path:json} does not hold a PEM X.509 certificate: {why}' },
  CLIENT_CERT_MISMATCH: { code: 'TRAWL_ERR_CLIENT_CERT', template: 'key_file {keyPath:json} is not the key of the certificate in cert_file {certPath:json} ({subject})' },
  // The crawler service and its admin operations (MS-FSCADM).
  COLLECTION_NOT_FOUND: { code: 'TRAWL_ERR_CONFIG_NOT_FOUND', template: 'no collection named {name:json}' },
  COLLECTION_DELETING: { code: 'TRAWL_ERR_XMLRPC_PARAMS', template: 'collection {name:json} is being deleted' },
  COLLECTION_ADD_WHILE_DELETING: { code: 'TRAWL_ERR_CONFIG_DUPLICATE', template: 'collection {name:json} is being deleted; add it again once it is gone' },
  COLLECTION_NAME_RESERVED: { code: 'TRAWL_ERR_CONFIG_VALUE', template: '"{name}" cannot be a collection name (it is a key of the statistics structure)' },
  COLLECTION_NONE_GIVEN: { code: 'TRAWL_ERR_CONFIG_STRUCTURE', template: 'the configuration has no DomainSpecification' },
  COLLECTION_ALREADY_SUSPENDED: { code: 'TRAWL_ERR_XMLRPC_PARAMS', template: 'collection {name:json} is already suspended' },
  COLLECTION_NOT_SUSPENDED: { code: 'TRAWL_ERR_XMLRPC_PARAMS', template: 'collection {name:json} is not suspended' },
  COLLECTION_NO_SINKS: { code: 'TRAWL_ERR_XMLRPC_PARAMS', template: 'collection {name:json} has no sinks (trawl_sinks) to send documents to' },
  FEEDING_ALREADY: { code: 'TRAWL_ERR_XMLRPC_PARAMS', template: 'feeding of {name:json} to {destinations} is already {state}' },
  SITE_NOT_CRAWLED: { code: 'TRAWL_ERR_CONFIG_NOT_FOUND', template: 'collection {name:json} has not crawled site {site}' },
  HOSTPORT_INVALID: { code: 'TRAWL_ERR_XMLRPC_PARAMS', template: '"{hostport}" is not a hostport <hostname>:<port> (MS-FSCADM 2.2.2.2)' },
  CONTENTDEST_UNKNOWN: { code: 'TRAWL_ERR_XMLRPC_PARAMS', template: 'collection {name:json} has no content destination {contentdest:json} (it has: {known})' },
  CONTENTDEST_NO_FEEDER: {
    code: 'TRAWL_ERR_XMLRPC_PARAMS',
    template: 'no content destination of collection {name:json} feeds content collection {contentCollection:json} (its destinations feed: {fed})',
  },

  // Sinks: a batch that fails this way stays in the feed outbox and is sent again.
  SINK_FILE_WRITE: { code: 'TRAWL_ERR_IO', template: 'file sink {sink}: cannot write {path}: {reason}' },
  SINK_REPOSITORY_WRITE: { code: 'TRAWL_ERR_IO', template: 'repository sink {sink}: cannot write {path}: {reason}' },
  SINK_JMS_TRANSPORT: { code: 'TRAWL_ERR_IO', template: 'jms sink {sink}: {endpoint}: {reason}' },
  SINK_ES_TRANSPORT: { code: 'TRAWL_ERR_IO', template: 'elasticsearch sink {sink}: {endpoint}: {reason}' },
  SINK_ES_STATUS: { code: 'TRAWL_ERR_IO', template: 'elasticsearch sink {sink}: {endpoint} answered {status}: {body}' },
  SINK_ES_NOT_JSON: { code: 'TRAWL_ERR_IO', template: 'elasticsearch sink {sink}: {endpoint} answered {status} with a body that is not JSON' },
  SINK_ES_ITEM_RETRY: { code: 'TRAWL_ERR_IO', template: 'elasticsearch sink {sink}: bulk item failed with {reason}' },

  // The command line.
  CRAWL_BAD_URL: { code: 'TRAWL_ERR_USAGE', template: 'not a valid URL: {urls}' },
  CRAWL_NOTHING: { code: 'TRAWL_ERR_USAGE', template: 'nothing to crawl: give a configuration file or a URL' },
  URL_OPTIONS_WITHOUT_URLS: { code: 'TRAWL_ERR_USAGE', template: '{options} apply to {urlsAre}; set them in the configuration file instead' },
  SHOW_FILE_OR_URL: { code: 'TRAWL_ERR_USAGE', template: 'give a configuration file or --url URL (the collection `trawl crawl URL` builds), not both' },
  URLTEST_NO_CONFIG: { code: 'TRAWL_ERR_USAGE', template: 'give a configuration file and URLs to test, or --crawl-url URL and URLs to test' },
  URLTEST_NO_URL: { code: 'TRAWL_ERR_USAGE', template: 'no URL to test' },
  URLTEST_COLLECTION_WITH_URL: { code: 'TRAWL_ERR_USAGE', template: '--collection picks a collection of a file; --crawl-url builds one' },
  SERVE_TOKEN_UNREADABLE: { code: 'TRAWL_ERR_IO', template: 'cannot read the token file {file}: {reason}' },
  SERVE_TOKEN_SHORT: { code: 'TRAWL_ERR_USAGE', template: 'the token in {file} is too short: use at least 16 characters' },
  SERVE_URI_FILE_DIR_UNREADABLE: { code: 'TRAWL_ERR_IO', template: '--uri-file-dir {dir}: {reason}' },
  SERVE_URI_FILE_DIR_NOT_DIR: { code: 'TRAWL_ERR_USAGE', template: '--uri-file-dir {dir} is not a directory' },
  STORE_SPEC_BAD: { code: 'TRAWL_ERR_USAGE', template: '--store {spec}: not a crawl store (give sqlite:PATH, or postgres://user@host:port/database)' },
  STORE_PG_UNREACHABLE: { code: 'TRAWL_ERR_STORE_UNAVAILABLE', template: 'cannot reach the crawl store {url}: {reason}' },
  STORE_PG_LOGIN: { code: 'TRAWL_ERR_STORE_UNAVAILABLE', template: 'the crawl store {url} refused the login: {reason}' },
  STORE_PG_NO_DATABASE: { code: 'TRAWL_ERR_STORE_UNAVAILABLE', template: 'the crawl store {url} has no such database: {reason} (create it first: docs/operations.md, "The crawl store on PostgreSQL")' },
  STORE_PG_IN_USE: { code: 'TRAWL_ERR_IO', template: 'the crawl store {url} is in use by another process (another trawl crawl or trawl serve on the same database?)' },
  STORE_PG_SCHEMA: { code: 'TRAWL_ERR_IO', template: 'the crawl store {url} has schema version {version}; this trawl reads versions 1 to {supported}' },
  NODE_NEEDS_POSTGRES: { code: 'TRAWL_ERR_USAGE', template: '--node and --role need a PostgreSQL crawl store (--store postgres://…), not {spec}: the members of a multinode installation share one database (docs/multinode.md)' },
  NODE_ROLE_BAD: { code: 'TRAWL_ERR_USAGE', template: '--role {role}: give node (with --node NAME) or scheduler' },
  SERVE_TIMEOUTS: { code: 'TRAWL_ERR_USAGE', template: '--request-timeout-ms ({requestMs}) must be at least --headers-timeout-ms ({headersMs})' },
  CRAWL_FAILED: {
    code: 'TRAWL_ERR_CRAWL_FAILED',
    template: 'collection {name}: nothing was stored: {why} (see above; `trawl codes` explains the codes)',
  },
  CRAWL_FEED_UNDELIVERED: {
    code: 'TRAWL_ERR_FEED_UNDELIVERED',
    template: 'collection {name}: {waiting} documents wait in the outbox: the sinks did not take them within {timeoutS} s ({reason}); the next `trawl crawl` of this collection on this data directory (or `trawl serve`) delivers them',
  },
  SERVE_ADDRESS_IN_USE: {
    code: 'TRAWL_ERR_ADDRESS_IN_USE',
    template: 'cannot listen on {host} port {port}: another process uses that address (stop it, or choose another with --port / --host)',
  },
  DATA_NO_STORE: { code: 'TRAWL_ERR_IO', template: '--data {dir}: there is no crawl store ({path})' },
  DATA_HELD_NO_SERVER: {
    code: 'TRAWL_ERR_DATA_UNAVAILABLE',
    template: 'the crawl store of --data {dir} is in use by another process (a trawl crawl or trawl serve), and the admin server {server} does not answer ({reason}); give the --server (and --token-file) of the trawl serve that holds {dir}, or run again once the crawl has ended',
  },
  DATA_OTHER_SERVER: {
    code: 'TRAWL_ERR_DATA_UNAVAILABLE',
    template: 'the crawl store of --data {dir} is in use by another process, and the admin server {server} serves another data directory ({served}); give the --server of the trawl serve that holds {dir}',
  },
  DATA_CHOOSE_COLLECTION: { code: 'TRAWL_ERR_USAGE', template: '{where} holds {count} collections ({names}); choose one with --collection' },
  DATA_NO_COLLECTION: { code: 'TRAWL_ERR_CONFIG_NOT_FOUND', template: '{where} has no collection named {name:json} (it has: {names})' },
  URL_UNKNOWN: {
    code: 'TRAWL_ERR_URL_UNKNOWN',
    template: '{url} is not known to collection {name:json}: it was never queued or crawled, and no event log line names it (check its scope with `trawl urltest --explain`)',
  },
  URL_INVALID: { code: 'TRAWL_ERR_USAGE', template: 'not an absolute URL: {url:json}' },
  EXPORT_NEEDS_OUT: { code: 'TRAWL_ERR_USAGE', template: '--format files writes a tree of files: give the folder with --out DIR' },
  EXPORT_WRITE: { code: 'TRAWL_ERR_IO', template: 'cannot write {path}: {reason}' },
  EXPORT_FORMAT: { code: 'TRAWL_ERR_USAGE', template: '--format {format:json}: expected jsonl or files' },
  EXPORT_SCHEMA: { code: 'TRAWL_ERR_USAGE', template: '--schema {schema:json}: expected one of {schemas}' },
  SITE_INVALID: { code: 'TRAWL_ERR_USAGE', template: '--site {site:json}: expected host or host:port' },
  SERVE_NEEDS_TOKEN: {
    code: 'TRAWL_ERR_USAGE',
    template: 'listening on {host} (not loopback) needs --token-file: the admin protocol can change every collection',
  },
} as const satisfies Record<string, MessageSpec>;

export type MessageId = keyof typeof ERROR_MESSAGES;

/** The placeholder names of a template, `{name}` or `{name:json}`. */
type Placeholders<T extends string> = T extends `${string}{${infer P}}${infer Rest}`
  ? (P extends `${infer N}:json` ? N : P) | Placeholders<Rest>
  : never;

/** The values a message's template needs, one per placeholder. */
export type MessageParams<Id extends MessageId> = { readonly [K in Placeholders<(typeof ERROR_MESSAGES)[Id]['template']>]: unknown };

const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9]*)(:json)?\}/g;

/**
 * Fills a template. A placeholder without a value is an internal bug (the
 * types prevent it at compile time), so it throws rather than print
 * "undefined" to a user.
 */
export function formatMessage(template: string, params: Readonly<Record<string, unknown>>): string {
  return template.replace(PLACEHOLDER, (_, name: string, json: string | undefined) => {
    if (!(name in params)) throw new Error(`error template ${JSON.stringify(template)} needs {${name}}`);
    const v = params[name];
    return json ? JSON.stringify(v) : String(v);
  });
}

/** The error `ERROR_MESSAGES[id]` describes, its template filled from `params`. */
export function trawlError<Id extends MessageId>(id: Id, params: MessageParams<Id>, options?: { location?: SourceLocation; cause?: unknown }): TrawlError {
  const spec: MessageSpec = ERROR_MESSAGES[id];
  return new TrawlError(spec.code, formatMessage(spec.template, params), options);
}

export function isTrawlError(err: unknown): err is TrawlError {
  return err instanceof TrawlError;
}
