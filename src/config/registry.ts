/**
 * The parameter registry: every attrib and section of MS-FSCCFG 2.2.3–2.2.7,
 * plus trawl's extension sections, in one place.
 *
 *   COLLECTION ─┬─ the 66 attribs of 2.2.3      (delay, refresh, start_uris, …)
 *               │   + login_failed_ignore (3.2)
 *               ├─ the sections of 2.2.4        (storage, http_errors, feeding, …)
 *               ├─ subdomains ── SUBCOLLECTION  (the 2.2.4.33 subset)
 *               ├─ logins ────── LOGIN          (2.2.4.31, also <Login> elements)
 *               └─ trawl_* extension sections   (EXTENSION_PREFIX)
 *   <Node> overrides take the COLLECTION scope (2.2.7).
 *
 * The reader, validator, writer, merge, the README's configuration
 * reference and the spec-coverage test are all driven by this file. When a
 * spec text and its own example disagree, the decision is written next to
 * the parameter and in README "Spec decisions".
 */

import { SINK_TYPES, sinkTypeMeaning } from '../core/sink-types.ts';
import { DEFAULT_USER_AGENT } from '../core/version.ts';
import { checkDotNetRegex } from './dotnet-regex.ts';
import { parseElasticRule } from '../scope/elastic-rules.ts';
import { checkLockssRuleSyntax } from '../scope/lockss-rules.ts';
import { parseExtractionRule, parseUrlFilter } from '../extract/extraction-rules.ts';
import { parseExcludeTags } from '../extract/elastic-content.ts';
import { CANON_RULES, DEFAULT_CANON_RULES } from '../scope/canonicalize.ts';
import { attrib, section, type AttribDef, type SectionDef, type Settings } from './schema.ts';
import {
  checkAbsoluteHttpUri,
  checkErrorKey,
  checkHeaderLine,
  checkHostName,
  checkCharset,
  checkMimePattern,
  checkProductToken,
  INT32_MAX,
  parseCrawlMode,
  parseCredentials,
  parseErrorPolicy,
  parseFtpAccount,
  parseIpv4Mask,
  parseIpv6Mask,
  parseProxy,
  parseRewriteRule,
  parseSlotDelay,
  parseTimeSlot,
  type Parsed,
} from './values.ts';

/** Extension sections start with this prefix so they never clash with a future MS-FSCCFG name. */
export const EXTENSION_PREFIX = 'trawl_';

const S = 'MS-FSCCFG 2.2.3';
const X = 'trawl extension';
const CSX = 'trawl extension (CiteSeerX Crawler Interface)';

const via =
  <T>(parse: (text: string) => Parsed<T>) =>
  (text: string): string | undefined => {
    const r = parse(text);
    return r.ok ? undefined : r.expected;
  };

const checkCrawlMode = via(parseCrawlMode);
const checkCredentials = via(parseCredentials);
const checkErrorPolicy = via(parseErrorPolicy);
const checkFtpAccount = via(parseFtpAccount);
const checkIpv4Mask = via(parseIpv4Mask);
const checkIpv6Mask = via(parseIpv6Mask);
const checkProxy = via(parseProxy);
const checkSlotDelay = via(parseSlotDelay);
const checkTimeSlot = via(parseTimeSlot);

const LOG_TEXT_NONE = ['text', 'none'] as const;

function checkRewriteRule(text: string): string | undefined {
  const r = parseRewriteRule(text);
  if (!r.ok) return r.expected;
  return checkDotNetRegex(r.value.match);
}

function checkExtension(text: string): string | undefined {
  return /^\.?[A-Za-z0-9_+-]+$/.test(text) ? undefined : 'a file extension such as .pdf';
}

function checkLanguage(text: string): string | undefined {
  return /^[a-z]{2}$/i.test(text) ? undefined : 'an ISO 639-1 two-letter language code such as en';
}

function checkScheme(text: string): string | undefined {
  return /^[a-z][a-z0-9+.-]*$/i.test(text) ? undefined : 'a URI scheme such as http or https';
}

function checkPostPayloadName(name: string): string | undefined {
  return checkAbsoluteHttpUri(name.startsWith('prefix:') ? name.slice('prefix:'.length) : name) === undefined
    ? undefined
    : 'an absolute URI, or prefix: followed by the leading part of a URI';
}

function checkHeaderName(name: string): string | undefined {
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) ? undefined : 'an HTTP header name such as Content-Type';
}

function checkPriorityLevel(name: string): string | undefined {
  return /^[1-9]\d{0,3}$/.test(name) ? undefined : 'a priority level number; levels begin at 1 (MS-FSCCFG 2.2.4.16)';
}

function checkSectionName(name: string): string | undefined {
  return /^[^\s<>&"']+$/.test(name) ? undefined : 'a name without spaces or XML special characters';
}

// The dialects' own parsers check their rules, so that a rule that passes
// validation is one the crawl can run (they import nothing from config/).
function checkElasticRule(text: string): string | undefined {
  try {
    parseElasticRule(text);
    return undefined;
  } catch (err) {
    return `"allow|disallow begins|ends|contains|regex PATTERN" (${(err as Error).message})`;
  }
}

function checkUrlFilter(text: string): string | undefined {
  try {
    parseUrlFilter(text);
    return undefined;
  } catch (err) {
    return `"begins|ends|contains|regex PATTERN" (${(err as Error).message})`;
  }
}

function checkExtractionRule(text: string): string | undefined {
  try {
    parseExtractionRule(text);
    return undefined;
  } catch (err) {
    return `a JSON object {"action", "field_name", "selector", "source", "join_as" | "value"} (${(err as Error).message})`;
  }
}

function checkExcludeTags(text: string): string | undefined {
  try {
    parseExcludeTags(text);
    return undefined;
  } catch (err) {
    return `"ORIGIN tag tag …", the tags HTML5 element names (${(err as Error).message})`;
  }
}

function checkPipelineParam(text: string): string | undefined {
  return /^[A-Za-z0-9_@.-]+=/.test(text) ? undefined : '"name=value", the name of letters, digits, _ . - or @';
}

function checkLockssRule(text: string): string | undefined {
  return checkLockssRuleSyntax(text);
}

function checkSha256Fingerprint(text: string): string | undefined {
  return /^[0-9a-f]{64}$/i.test(text.replace(/:/g, '')) ? undefined : 'a SHA-256 fingerprint: 64 hexadecimal digits, colons allowed';
}

function checkCidr(text: string): string | undefined {
  const [addr, bits, extra] = text.split('/');
  const ok4 = parseIpv4Mask(bits === undefined ? `${addr}/32` : text);
  if (extra === undefined && ok4.ok) return undefined;
  const ok6 = parseIpv6Mask(bits === undefined ? `${addr}/128` : text);
  if (extra === undefined && ok6.ok) return undefined;
  return 'an IP address or CIDR block such as 10.0.0.0/8 or fd00::/8';
}

// ---------------------------------------------------------------- 2.2.4.1–4

const domainRules = (verb: 'include' | 'exclude') =>
  [
    attrib({ name: 'exact', key: 'exact', honoured: 'full', type: 'list-string', check: checkHostName, meaning: `Host names that ${verb} a URI when its host equals one of them.`, spec: 'MS-FSCCFG 2.2.4.1' }),
    attrib({ name: 'prefix', key: 'prefix', honoured: 'full', type: 'list-string', meaning: `Host names that ${verb} a URI when its host begins with one of them.`, spec: 'MS-FSCCFG 2.2.4.1' }),
    attrib({ name: 'suffix', key: 'suffix', honoured: 'full', type: 'list-string', meaning: `Host names that ${verb} a URI when its host ends with one of them.`, spec: 'MS-FSCCFG 2.2.4.1' }),
    attrib({ name: 'regexp', key: 'regexp', honoured: 'full', type: 'list-string', check: checkDotNetRegex, meaning: `.NET regular expressions [MC-RegEx] over the host name that ${verb} a URI.`, spec: 'MS-FSCCFG 2.2.4.1' }),
    attrib({ name: 'ipmask', key: 'ipmask', honoured: 'full', type: 'list-string', check: checkIpv4Mask, meaning: `IPv4 masks (a.b.c.d-e, a.b.c.d/N, a.b.c.d:mask) over the resolved address that ${verb} a URI.`, spec: 'MS-FSCCFG 2.2.4.1' }),
    attrib({ name: 'ip6mask', key: 'ip6mask', honoured: 'full', type: 'list-string', check: checkIpv6Mask, meaning: `IPv6 masks (ranges per group, or address/N) over the resolved address that ${verb} a URI.`, spec: 'MS-FSCCFG 2.2.4.1' }),
    attrib({ name: 'file', key: 'file', honoured: 'full', type: 'list-string', meaning: 'Files of "ruletype:rule" lines (exact, prefix, suffix, regexp, ipmask, ip6mask).', spec: 'MS-FSCCFG 2.2.4.1' }),
  ] as const;

const uriRules = (verb: 'include' | 'exclude') =>
  [
    attrib({ name: 'exact', key: 'exact', honoured: 'full', type: 'list-string', meaning: `URIs that ${verb} a URI equal to one of them.`, spec: 'MS-FSCCFG 2.2.4.3' }),
    attrib({ name: 'prefix', key: 'prefix', honoured: 'full', type: 'list-string', meaning: `Strings that ${verb} a URI beginning with one of them.`, spec: 'MS-FSCCFG 2.2.4.3' }),
    attrib({ name: 'suffix', key: 'suffix', honoured: 'full', type: 'list-string', meaning: `Strings that ${verb} a URI ending with one of them.`, spec: 'MS-FSCCFG 2.2.4.3' }),
    attrib({ name: 'regexp', key: 'regexp', honoured: 'full', type: 'list-string', check: checkDotNetRegex, meaning: `.NET regular expressions [MC-RegEx] over the whole URI that ${verb} it.`, spec: 'MS-FSCCFG 2.2.4.3' }),
    attrib({ name: 'file', key: 'file', honoured: 'full', type: 'list-string', meaning: 'Files of "ruletype:rule" lines (exact, prefix, suffix, regexp).', spec: 'MS-FSCCFG 2.2.4.3' }),
  ] as const;

const INCLUDE_DOMAINS = section({ name: 'include_domains', key: 'includeDomains', honoured: 'full', sub: true, meaning: 'Domain rules a URI must match to be crawled; an empty section matches every domain.', spec: 'MS-FSCCFG 2.2.4.1', attribs: domainRules('include'), sections: [] });
const EXCLUDE_DOMAINS = section({ name: 'exclude_domains', key: 'excludeDomains', honoured: 'full', sub: true, meaning: 'Domain rules that keep a URI out of the crawl; an empty section matches no domain.', spec: 'MS-FSCCFG 2.2.4.2', attribs: domainRules('exclude'), sections: [] });
const INCLUDE_URIS = section({ name: 'include_uris', key: 'includeUris', honoured: 'full', sub: true, meaning: 'URI rules a URI must match to be crawled; an empty section matches every URI.', spec: 'MS-FSCCFG 2.2.4.3', attribs: uriRules('include'), sections: [] });
const EXCLUDE_URIS = section({ name: 'exclude_uris', key: 'excludeUris', honoured: 'full', sub: true, meaning: 'URI rules that keep a URI out of the crawl; an empty section matches no URI.', spec: 'MS-FSCCFG 2.2.4.4', attribs: uriRules('exclude'), sections: [] });

// ------------------------------------------------------------------ 2.2.4.5

const LOG = section({
  name: 'log', key: 'log', honoured: { partly: 'only the fetch, screened and scheduler logs are written' }, meaning: 'Which crawler logs are written: trawl crawl writes them to logs/crawl.log, trawl serve to logs/collections/<collection>.log, both under the data directory (trawl inspect and trawl admin log read them).', spec: 'MS-FSCCFG 2.2.4.5', sections: [],
  attribs: [
    attrib({ name: 'fetch', key: 'fetch', honoured: 'full', type: 'string', default: 'text', allowed: LOG_TEXT_NONE, meaning: 'Log of downloaded documents.', spec: 'MS-FSCCFG 2.2.4.5' }),
    attrib({ name: 'postprocess', key: 'postprocess', honoured: 'not', type: 'string', default: 'text', allowed: ['text', 'xml', 'none'], meaning: 'Log of post processing of documents.', spec: 'MS-FSCCFG 2.2.4.5' }),
    attrib({ name: 'header', key: 'header', honoured: 'not', type: 'string', default: 'none', allowed: LOG_TEXT_NONE, meaning: 'Log of HTTP headers.', spec: 'MS-FSCCFG 2.2.4.5' }),
    attrib({ name: 'screened', key: 'screened', honoured: 'full', type: 'string', default: 'none', allowed: LOG_TEXT_NONE, meaning: 'Log of every screened (rejected) URI.', spec: 'MS-FSCCFG 2.2.4.5' }),
    attrib({ name: 'scheduler', key: 'scheduler', honoured: 'full', type: 'string', default: 'none', allowed: LOG_TEXT_NONE, meaning: 'Log of adaptive scheduling: each minor cycle, per site its budget, each URI taken with its score, each new URI deferred.', spec: 'MS-FSCCFG 2.2.4.5' }),
    attrib({ name: 'dsfeed', key: 'dsfeed', honoured: 'not', type: 'string', default: 'text', allowed: LOG_TEXT_NONE, meaning: 'Log of feeding to the indexing engine.', spec: 'MS-FSCCFG 2.2.4.5' }),
    attrib({ name: 'site', key: 'site', honoured: 'not', type: 'string', default: 'text', allowed: LOG_TEXT_NONE, meaning: 'Log per site.', spec: 'MS-FSCCFG 2.2.4.5' }),
  ],
});

// ------------------------------------------------------------------ 2.2.4.6

const STORAGE = section({
  name: 'storage', key: 'storage', honoured: { partly: 'remove_docs and uri_dir are ignored' }, meaning: 'How documents and metadata are stored.', spec: 'MS-FSCCFG 2.2.4.6', sections: [],
  attribs: [
    attrib({ name: 'datastore', key: 'datastore', honoured: 'full', type: 'string', default: 'bstore', allowed: ['flatfile', 'bstore'], meaning: 'Document store format: flatfile (one file per document) or bstore (blocks in shared files).', spec: 'MS-FSCCFG 2.2.4.6' }),
    attrib({ name: 'store_http_header', key: 'storeHttpHeader', honoured: 'full', type: 'boolean', default: true, meaning: 'Store the received HTTP header with the document.', spec: 'MS-FSCCFG 2.2.4.6' }),
    attrib({ name: 'store_dupes', key: 'storeDupes', honoured: 'full', type: 'boolean', default: false, meaning: 'Store duplicate documents too.', spec: 'MS-FSCCFG 2.2.4.6' }),
    attrib({ name: 'compress', key: 'compress', honoured: 'full', type: 'boolean', default: true, meaning: 'Compress documents before storing them.', spec: 'MS-FSCCFG 2.2.4.6' }),
    attrib({ name: 'compress_exclude_mime', key: 'compressExcludeMime', honoured: 'full', type: 'list-string', default: [], defaultDoc: 'none', check: checkMimePattern, meaning: 'MIME types that are stored uncompressed.', spec: 'MS-FSCCFG 2.2.4.6' }),
    attrib({ name: 'remove_docs', key: 'removeDocs', honoured: 'not', type: 'boolean', default: false, meaning: 'Delete stored documents once they are submitted to the index.', spec: 'MS-FSCCFG 2.2.4.6' }),
    attrib({ name: 'clusters', key: 'clusters', honoured: 'full', type: 'integer', default: 8, min: 1, meaning: 'Number of storage clusters documents are spread over.', spec: 'MS-FSCCFG 2.2.4.6' }),
    attrib({ name: 'defrag_threshold', key: 'defragThresholdPct', honoured: 'full', type: 'integer', default: 85, min: 0, max: 100, unit: '%', meaning: 'Fill ratio below which a store file is defragmented.', spec: 'MS-FSCCFG 2.2.4.6' }),
    attrib({ name: 'uri_dir', key: 'uriDir', honoured: 'not', type: 'string', defaultDoc: 'none', meaning: 'Directory where a file of extracted URIs is written per document.', spec: 'MS-FSCCFG 2.2.4.6' }),
  ],
});

// ------------------------------------------------------------------ 2.2.4.7–8

const PP = section({
  name: 'pp', key: 'pp', honoured: { partly: 'only ds_send_links and ds_paused are applied' }, meaning: 'Post processing: feeding and duplicate detection.', spec: 'MS-FSCCFG 2.2.4.7', sections: [],
  attribs: [
    attrib({ name: 'use_dupservers', key: 'useDupservers', honoured: 'not', type: 'boolean', default: false, meaning: 'No counterpart in the multinode installation (docs/multinode.md): duplicate servers are FAST\'s; the nodes share the duplicate check through the crawl store.', spec: 'MS-FSCCFG 2.2.4.7' }),
    attrib({ name: 'max_dupes', key: 'maxDupes', honoured: 'not', type: 'integer', default: 10, min: 0, meaning: 'Maximum number of duplicates recorded per document.', spec: 'MS-FSCCFG 2.2.4.7' }),
    attrib({ name: 'stripe', key: 'stripe', honoured: 'not', type: 'integer', default: 1, min: 1, meaning: 'Number of files the post processing database is spread over.', spec: 'MS-FSCCFG 2.2.4.7' }),
    attrib({ name: 'ds_meta_info', key: 'dsMetaInfo', honoured: 'not', type: 'list-string', default: ['duplicates', 'redirects', 'mirrors', 'metadata'], allowed: ['duplicates', 'redirects', 'mirrors', 'metadata'], meaning: 'Metadata reported to the index: duplicates, redirects, mirrors, metadata.', spec: 'MS-FSCCFG 2.2.4.7' }),
    attrib({ name: 'ds_max_ecl', key: 'dsMaxEcl', honoured: 'not', type: 'integer', default: 10, min: 0, meaning: 'Maximum number of duplicates or redirects reported per document.', spec: 'MS-FSCCFG 2.2.4.7' }),
    attrib({ name: 'ecl_override', key: 'eclOverride', honoured: 'not', type: 'string', check: checkDotNetRegex, meaning: 'Regular expression of duplicate/redirect URIs always reported, past max_dupes.', spec: 'MS-FSCCFG 2.2.4.7' }),
    attrib({ name: 'ds_send_links', key: 'dsSendLinks', honoured: 'full', type: 'boolean', default: false, meaning: 'Send every extracted link to the index with the document.', spec: 'MS-FSCCFG 2.2.4.7' }),
    attrib({ name: 'ds_paused', key: 'dsPaused', honoured: 'full', type: 'boolean', default: false, meaning: 'Pause submission of documents to the index.', spec: 'MS-FSCCFG 2.2.4.7' }),
  ],
});

const PPDUP = section({
  name: 'ppdup', key: 'ppdup', honoured: 'not', meaning: 'Duplicate server settings. No counterpart in the multinode installation (docs/multinode.md): duplicate servers are FAST\'s; the nodes share the duplicate check through the crawl store.', spec: 'MS-FSCCFG 2.2.4.8', sections: [],
  attribs: [
    attrib({ name: 'format', key: 'format', honoured: 'not', type: 'string', allowed: ['gigabase', 'hashlog', 'diskhashlog'], meaning: 'Duplicate database format: gigabase, hashlog or diskhashlog.', spec: 'MS-FSCCFG 2.2.4.8' }),
    attrib({ name: 'cachesize', key: 'cachesizeMb', honoured: 'not', type: 'integer', min: 0, unit: 'MB', meaning: 'Duplicate database cache size (initial hash table size for the hashlog formats).', spec: 'MS-FSCCFG 2.2.4.8' }),
    attrib({ name: 'stripes', key: 'stripes', honoured: 'not', type: 'integer', min: 1, meaning: 'Number of files the duplicate database is spread over.', spec: 'MS-FSCCFG 2.2.4.8' }),
    attrib({ name: 'compact', key: 'compact', honoured: 'not', type: 'boolean', default: true, meaning: 'Compact the duplicate database.', spec: 'MS-FSCCFG 2.2.4.8' }),
  ],
});

// ------------------------------------------------------------------ 2.2.4.9

const DESTINATION = section({
  name: '<destination>', key: 'destination', honoured: { partly: 'primary is ignored' }, nameCheck: checkSectionName, meaning: 'One content destination; its name is chosen by the user.', spec: 'MS-FSCCFG 2.2.4.9', sections: [],
  attribs: [
    attrib({ name: 'collection', key: 'collection', honoured: 'full', type: 'string', meaning: 'Content collection documents are submitted to. Required.', spec: 'MS-FSCCFG 2.2.4.9' }),
    attrib({ name: 'destination', key: 'destination', honoured: 'full', type: 'string', default: 'default', allowed: ['default'], meaning: 'Reserved; must be "default".', spec: 'MS-FSCCFG 2.2.4.9' }),
    attrib({ name: 'paused', key: 'paused', honoured: 'full', type: 'boolean', default: false, meaning: 'Suspend submission to this destination.', spec: 'MS-FSCCFG 2.2.4.9' }),
    attrib({ name: 'primary', key: 'primary', honoured: 'not', type: 'boolean', meaning: 'Primary destinations act on index callbacks; secondary ones do not.', spec: 'MS-FSCCFG 2.2.4.9' }),
  ],
});

const FEEDING = section({ name: 'feeding', key: 'feeding', honoured: 'full', meaning: 'Content destinations documents are fed to, one section each.', spec: 'MS-FSCCFG 2.2.4.9', attribs: [], sections: [], dynamicSection: DESTINATION });

// ------------------------------------------------------------------ 2.2.4.10

const CACHESIZE = section({
  name: 'cachesize', key: 'cachesize', honoured: { partly: 'only screened is applied' }, meaning: 'Cache sizes of the crawler process.', spec: 'MS-FSCCFG 2.2.4.10', sections: [],
  attribs: [
    attrib({ name: 'duplicates', key: 'duplicates', honoured: 'not', type: 'integer', min: 0, meaning: 'Entries in the duplicate checksum cache.', spec: 'MS-FSCCFG 2.2.4.10' }),
    attrib({ name: 'screened', key: 'screened', honoured: 'full', type: 'integer', min: 0, meaning: 'Entries in the screened URI cache: the URLs queued in this cycle, which a link is looked up in before the crawl store. Unset, the cache starts at 131,072 entries and doubles whenever it is full, up to 524,288 (about 20 MB); set, it keeps that many (0 turns it off; at most 16,777,216, 41–73 bytes each). A cycle that meets more URLs than the cache holds forgets the oldest and asks the store for them again.', spec: 'MS-FSCCFG 2.2.4.10' }),
    attrib({ name: 'smcomm', key: 'smcomm', honoured: 'not', type: 'integer', min: 0, meaning: 'Entries in the node scheduler communication cache. No counterpart in the multinode installation (docs/multinode.md): members talk through the database.', spec: 'MS-FSCCFG 2.2.4.10' }),
    attrib({ name: 'mucomm', key: 'mucomm', honoured: 'not', type: 'integer', min: 0, meaning: 'Entries in the multinode scheduler communication cache. No counterpart in the multinode installation (docs/multinode.md): members talk through the database.', spec: 'MS-FSCCFG 2.2.4.10' }),
    attrib({ name: 'wqcache', key: 'wqcache', honoured: 'not', type: 'integer', min: 0, meaning: 'Entries of a site crawl queue kept in memory.', spec: 'MS-FSCCFG 2.2.4.10' }),
    attrib({ name: 'crosslinks', key: 'crosslinks', honoured: 'not', type: 'integer', min: 0, meaning: 'Entries in the crosslink cache.', spec: 'MS-FSCCFG 2.2.4.10' }),
    attrib({ name: 'routetab', key: 'routetabBytes', honoured: 'not', type: 'integer', default: 1048576, min: 0, unit: 'bytes', meaning: 'Crawl routing database cache size.', spec: 'MS-FSCCFG 2.2.4.10' }),
    attrib({ name: 'pp', key: 'ppBytes', honoured: 'not', type: 'integer', default: 1048576, min: 0, unit: 'bytes', meaning: 'Post process database cache size.', spec: 'MS-FSCCFG 2.2.4.10' }),
    attrib({ name: 'pp_pending', key: 'ppPendingBytes', honoured: 'not', type: 'integer', default: 131072, min: 0, unit: 'bytes', meaning: 'Post process pending cache size.', spec: 'MS-FSCCFG 2.2.4.10' }),
    attrib({ name: 'aliases', key: 'aliasesBytes', honoured: 'not', type: 'integer', default: 1048576, min: 0, unit: 'bytes', meaning: 'Site aliases database cache size.', spec: 'MS-FSCCFG 2.2.4.10' }),
  ],
});

// ------------------------------------------------------------------ 2.2.4.11–14

const errorPolicy = (spec: string, honoured: 'full' | 'not') =>
  attrib({ name: '<code>', key: 'policy', honoured, type: 'string', check: checkErrorPolicy, nameCheck: checkErrorKey, meaning: 'KEEP or DELETE[:X] with optional ", RETRY[:X]", for a status code (X = any digit), net, int or ttl.', spec });

const HTTP_ERRORS = section({
  name: 'http_errors', key: 'httpErrors', honoured: 'full', meaning: 'What to do with a document on each HTTP status or error.', spec: 'MS-FSCCFG 2.2.4.11', attribs: [], sections: [],
  dynamicAttrib: errorPolicy('MS-FSCCFG 2.2.4.11', 'full'),
  defaults: { '4xx': 'DELETE:0', '5xx': 'DELETE:10', int: 'KEEP:0', net: 'DELETE:3, RETRY:1', ttl: 'DELETE:3' },
});

const FTP_ERRORS = section({
  name: 'ftp_errors', key: 'ftpErrors', honoured: 'full', meaning: 'What to do with a document on each FTP reply code (550, 530, 4xx, …) or error, as http_errors does for HTTP.', spec: 'MS-FSCCFG 2.2.4.13', attribs: [], sections: [],
  dynamicAttrib: errorPolicy('MS-FSCCFG 2.2.4.13', 'full'),
  defaults: { '4xx': 'DELETE:3', '550': 'DELETE:0', '5xx': 'DELETE:3', int: 'KEEP:0', net: 'DELETE:3, RETRY:1' },
});

// ------------------------------------------------------------------ 2.2.4.15–16

const PRIORITY_LEVEL = section({
  name: '<level>', key: 'level', honoured: 'full', nameCheck: checkPriorityLevel, meaning: 'One priority level, named by its number.', spec: 'MS-FSCCFG 2.2.4.16',
  attribs: [attrib({ name: 'share', key: 'share', honoured: 'full', type: 'integer', min: 1, meaning: 'Weight of this level when pop_scheme is wrr.', spec: 'MS-FSCCFG 2.2.4.16' })],
  sections: [INCLUDE_DOMAINS, INCLUDE_URIS],
});

const WORKQUEUE_PRIORITY = section({
  name: 'workqueue_priority', key: 'workqueuePriority', honoured: 'full', meaning: 'Priority levels of the crawl queues and how URIs enter and leave them.', spec: 'MS-FSCCFG 2.2.4.15', sections: [],
  dynamicSection: PRIORITY_LEVEL, dynamicAs: 'priorityLevels',
  attribs: [
    attrib({ name: 'levels', key: 'levels', honoured: 'full', type: 'integer', default: 1, min: 1, meaning: 'Number of priority levels.', spec: 'MS-FSCCFG 2.2.4.15' }),
    attrib({ name: 'default', key: 'default', honoured: 'full', type: 'integer', default: 1, min: 1, meaning: 'Priority level given to URIs by default.', spec: 'MS-FSCCFG 2.2.4.15' }),
    attrib({ name: 'start_uri_pri', key: 'startUriPri', honoured: 'full', type: 'integer', default: 1, min: 1, meaning: 'Priority level of start URIs.', spec: 'MS-FSCCFG 2.2.4.15' }),
    attrib({ name: 'pop_scheme', key: 'popScheme', honoured: 'full', type: 'string', default: 'default', allowed: ['rr', 'wrr', 'pri', 'default'], meaning: 'How URIs leave the levels: rr, wrr (by share), pri (strict priority), default (= wrr).', spec: 'MS-FSCCFG 2.2.4.15' }),
    attrib({ name: 'put_scheme', key: 'putScheme', honoured: 'full', type: 'string', default: 'default', allowed: ['default', 'include'], meaning: 'How URIs enter: default (the default level) or include (the level whose rules match).', spec: 'MS-FSCCFG 2.2.4.15' }),
  ],
});

// ------------------------------------------------------------------ 2.2.4.17

const linkFlag = <const N extends string, const K extends string>(name: N, key: K, def: boolean, what: string) =>
  attrib({ name, key, honoured: 'full', type: 'boolean', default: def, meaning: `Extract links from ${what}.`, spec: 'MS-FSCCFG 2.2.4.17' });

const LINK_EXTRACTION = section({
  name: 'link_extraction', key: 'linkExtraction', honoured: 'full', meaning: 'Which kinds of links are extracted and followed.', spec: 'MS-FSCCFG 2.2.4.17', sections: [],
  attribs: [
    linkFlag('a', 'a', true, '<a> tags'),
    linkFlag('action', 'action', true, 'action attributes (forms)'),
    linkFlag('area', 'area', true, '<area> tags'),
    linkFlag('card', 'card', true, 'WML <card> tags'),
    linkFlag('comment', 'comment', true, 'HTML comments'),
    linkFlag('embed', 'embed', true, '<embed> tags'),
    linkFlag('frame', 'frame', true, '<frame> tags'),
    linkFlag('go', 'go', true, 'WML <go> tags'),
    linkFlag('img', 'img', false, '<img> tags'),
    linkFlag('layer', 'layer', true, '<layer> tags'),
    linkFlag('link', 'link', true, '<link> tags'),
    linkFlag('meta', 'meta', true, '<meta> tags'),
    linkFlag('meta_refresh', 'metaRefresh', true, '<meta http-equiv="refresh"> tags'),
    linkFlag('object', 'object', true, '<object> tags'),
    linkFlag('script', 'script', true, '<script> tags'),
    linkFlag('script_java', 'scriptJava', true, 'JavaScript inside <script> tags'),
    linkFlag('style', 'style', true, '<style> tags'),
  ],
});

// ------------------------------------------------------------------ 2.2.4.18

const LIMITS = section({
  name: 'limits', key: 'limits', honoured: 'full', meaning: 'Fail-safe limits; past them the collection enters refresh-only mode.', spec: 'MS-FSCCFG 2.2.4.18', sections: [],
  attribs: [
    attrib({ name: 'disk_free', key: 'diskFreePct', honoured: 'full', type: 'integer', default: 0, min: 0, max: 100, unit: '%', meaning: 'Free disk (of the data directory\'s filesystem) below which the collection goes refresh-only (0 = off).', spec: 'MS-FSCCFG 2.2.4.18' }),
    attrib({ name: 'disk_free_slack', key: 'diskFreeSlackPct', honoured: 'full', type: 'integer', default: 3, min: 0, max: 100, unit: '%', meaning: 'Disk that may be used beyond disk_free: refresh-only mode ends at disk_free + disk_free_slack free.', spec: 'MS-FSCCFG 2.2.4.18' }),
    attrib({ name: 'max_doc', key: 'maxDoc', honoured: 'full', type: 'integer', default: 0, min: 0, meaning: 'Documents held (stored, with content) at which the collection goes refresh-only: no new URI is queued or fetched (skip code rl), known ones are refreshed; CrawlMode Refreshing(limit=max_doc) (0 = off).', spec: 'MS-FSCCFG 2.2.4.18' }),
    attrib({ name: 'max_doc_slack', key: 'maxDocSlack', honoured: 'full', type: 'integer', default: 1000, min: 0, meaning: 'Hysteresis of max_doc: refresh-only mode ends once the collection holds fewer than max_doc - max_doc_slack documents.', spec: 'MS-FSCCFG 2.2.4.18' }),
  ],
});

// ------------------------------------------------------------------ 2.2.4.19

const FOCUSED = section({
  name: 'focused', key: 'focused', honoured: 'full', meaning: 'Focused crawl by document language.', spec: 'MS-FSCCFG 2.2.4.19',
  sections: [EXCLUDE_DOMAINS],
  attribs: [
    attrib({ name: 'languages', key: 'languages', honoured: 'full', type: 'list-string', check: checkLanguage, meaning: 'ISO 639-1 languages of documents that are stored.', spec: 'MS-FSCCFG 2.2.4.19' }),
    attrib({ name: 'depth', key: 'depth', honoured: 'full', type: 'integer', min: 0, meaning: 'Page hops followed through documents in other languages.', spec: 'MS-FSCCFG 2.2.4.19' }),
  ],
});

// ------------------------------------------------------------------ 2.2.4.20–22

/** passwd: Basic, Digest and NTLMv2 are spoken, NTLMv1 is not (a page that would need it is skipped, ot, saying so). */
const NTLM_NOT_SPOKEN = { partly: 'the ntlmv1 scheme is not spoken, use ntlmv2 (such a page is skipped, ot, with the reason)', values: ['ntlmv1'] } as const;

const PASSWD = section({
  name: 'passwd', key: 'passwd', honoured: NTLM_NOT_SPOKEN, meaning: 'Credentials for HTTP authentication (Basic, Digest, NTLMv2), by URI prefix (its own origin only) or realm (on the start URIs\' origins).', spec: 'MS-FSCCFG 2.2.4.20', attribs: [], sections: [],
  dynamicAttrib: attrib({ name: '<uri-or-realm>', key: 'credentials', honoured: NTLM_NOT_SPOKEN, type: 'string', secret: 'credentials', check: checkCredentials, meaning: 'user:password or user:password:realm:scheme; the password may be !ENC! encrypted.', spec: 'MS-FSCCFG 2.2.4.20' }),
});

const FTP_ACCT = section({
  name: 'ftp_acct', key: 'ftpAcct', honoured: 'full', meaning: 'FTP accounts, by site name; other FTP sites are logged in to as anonymous.', spec: 'MS-FSCCFG 2.2.4.21', attribs: [], sections: [],
  dynamicAttrib: attrib({ name: '<site>', key: 'account', honoured: 'full', type: 'string', secret: 'credentials', check: checkFtpAccount, nameCheck: checkHostName, meaning: 'username:password for FTP on that site (the host name of its URIs); the password may be !ENC! encrypted.', spec: 'MS-FSCCFG 2.2.4.21' }),
});

const EXCLUDE_HEADERS = section({
  name: 'exclude_headers', key: 'excludeHeaders', honoured: 'full', meaning: 'Documents excluded by HTTP response header values.', spec: 'MS-FSCCFG 2.2.4.22', attribs: [], sections: [],
  dynamicAttrib: attrib({ name: '<header>', key: 'patterns', honoured: 'full', type: 'list-string', check: checkDotNetRegex, nameCheck: checkHeaderName, meaning: 'Regular expressions; a document whose header value matches one is excluded.', spec: 'MS-FSCCFG 2.2.4.22' }),
});

// ------------------------------------------------------------------ 2.2.4.23

const VARIABLE_DELAY = section({
  name: 'variable_delay', key: 'variableDelay', honoured: 'full', sub: true, meaning: 'Time slots of the week with another delay, or suspended crawling.', spec: 'MS-FSCCFG 2.2.4.23', attribs: [], sections: [],
  dynamicAttrib: attrib({ name: '<DDD:HH.MM-DDD:HH.MM>', key: 'delay', honoured: 'full', type: 'string', check: checkSlotDelay, nameCheck: checkTimeSlot, meaning: 'Delay in seconds during the slot, or "suspend".', spec: 'MS-FSCCFG 2.2.4.23' }),
});

// ------------------------------------------------------------------ 2.2.4.24–26

const ADAPTIVE = section({
  name: 'adaptive', key: 'adaptive', honoured: 'full', meaning: 'Adaptive refresh scheduling (refresh_mode adaptive).', spec: 'MS-FSCCFG 2.2.4.24', sections: [],
  attribs: [
    attrib({ name: 'refresh_count', key: 'refreshCount', honoured: 'full', type: 'integer', default: 4, min: 1, meaning: 'Number of minor refresh cycles per refresh cycle.', spec: 'MS-FSCCFG 2.2.4.24' }),
    attrib({ name: 'refresh_quota', key: 'refreshQuotaPct', honoured: 'full', type: 'integer', default: 90, min: 0, max: 100, unit: '%', meaning: 'Share of re-crawled URIs against new URIs.', spec: 'MS-FSCCFG 2.2.4.24' }),
    attrib({ name: 'coverage_min', key: 'coverageMin', honoured: 'full', type: 'integer', default: 25, min: 0, meaning: 'Minimum URIs crawled in a minor cycle.', spec: 'MS-FSCCFG 2.2.4.24' }),
    attrib({ name: 'coverage_max_pct', key: 'coverageMaxPct', honoured: 'full', type: 'integer', default: 10, min: 0, max: 100, unit: '%', meaning: 'Maximum share of a site re-crawled in a minor cycle.', spec: 'MS-FSCCFG 2.2.4.24' }),
  ],
});

const WEIGHTS = section({
  name: 'weights', key: 'weights', honoured: 'full', meaning: 'Weights of the adaptive scoring rules.', spec: 'MS-FSCCFG 2.2.4.25', sections: [],
  attribs: [
    attrib({ name: 'inverse_length', key: 'inverseLength', honoured: 'full', type: 'real', default: 1.0, min: 0, meaning: 'Weight of "fewer than 10 slashes".', spec: 'MS-FSCCFG 2.2.4.25' }),
    attrib({ name: 'inverse_depth', key: 'inverseDepth', honoured: 'full', type: 'real', default: 1.0, min: 0, meaning: 'Weight of "fewer than 10 hops from a start URI".', spec: 'MS-FSCCFG 2.2.4.25' }),
    attrib({ name: 'is_landing_page', key: 'isLandingPage', honoured: 'full', type: 'real', default: 1.0, min: 0, meaning: 'Weight of "ends in / or index.html, no query".', spec: 'MS-FSCCFG 2.2.4.25' }),
    attrib({ name: 'is_mime_markup', key: 'isMimeMarkup', honoured: 'full', type: 'real', default: 1.0, min: 0, meaning: 'Weight of "MIME type is in uri_search_mime".', spec: 'MS-FSCCFG 2.2.4.25' }),
    attrib({ name: 'change_history', key: 'changeHistory', honoured: 'full', type: 'real', default: 10.0, min: 0, meaning: 'Weight of the Last-Modified change history.', spec: 'MS-FSCCFG 2.2.4.25' }),
    attrib({ name: 'sitemap', key: 'sitemap', honoured: 'full', type: 'real', default: 10.0, min: 0, meaning: 'Weight of the sitemap changefreq score.', spec: 'MS-FSCCFG 2.2.4.25' }),
  ],
});

const changefreq = <const N extends string>(name: N, def: number) =>
  attrib({ name, key: name, honoured: 'full', type: 'real', default: def, min: 0, max: 1, meaning: name === 'default' ? 'Weight of URIs without a changefreq.' : `Weight of changefreq "${name}".`, spec: 'MS-FSCCFG 2.2.4.26' });

const SITEMAP_WEIGHTS = section({
  name: 'sitemap_weights', key: 'sitemapWeights', honoured: 'full', meaning: 'Sitemap changefreq values as weights in [0, 1].', spec: 'MS-FSCCFG 2.2.4.26', sections: [],
  attribs: [
    changefreq('always', 1.0), changefreq('hourly', 0.64), changefreq('daily', 0.32), changefreq('weekly', 0.16),
    changefreq('monthly', 0.08), changefreq('yearly', 0.04), changefreq('never', 0.0), changefreq('default', 0.16),
  ],
});

// ------------------------------------------------------------------ 2.2.4.27–29

const SITE_CLUSTERS = section({
  name: 'site_clusters', key: 'siteClusters', honoured: 'full', meaning: 'Groups of sites always routed to the same node scheduler (docs/multinode.md).', spec: 'MS-FSCCFG 2.2.4.27', attribs: [], sections: [],
  dynamicAttrib: attrib({ name: '<cluster>', key: 'sites', honoured: 'full', type: 'list-string', check: checkHostName, meaning: 'Host names of the sites of the cluster.', spec: 'MS-FSCCFG 2.2.4.27' }),
});

const CRAWLMODE = section({
  name: 'crawlmode', key: 'crawlmode', honoured: 'full', sub: true, meaning: 'How far the crawl spans from its start URIs.', spec: 'MS-FSCCFG 2.2.4.28', sections: [],
  attribs: [
    attrib({ name: 'mode', key: 'mode', honoured: 'full', type: 'string', default: 'FULL', check: checkCrawlMode, meaning: 'FULL, or DEPTH:n page hops from a start URI.', spec: 'MS-FSCCFG 2.2.4.28' }),
    attrib({ name: 'fwdlinks', key: 'fwdlinks', honoured: 'full', type: 'boolean', default: true, meaning: 'Follow links to other domains.', spec: 'MS-FSCCFG 2.2.4.28' }),
    attrib({ name: 'fwdredirects', key: 'fwdredirects', honoured: 'full', type: 'boolean', default: false, meaning: 'Follow redirects to other domains.', spec: 'MS-FSCCFG 2.2.4.28' }),
    attrib({ name: 'reset_level', key: 'resetLevel', honoured: 'full', type: 'boolean', default: true, meaning: 'Reset the hop count when a link leads to another domain.', spec: 'MS-FSCCFG 2.2.4.28' }),
  ],
});

const POST_PAYLOAD = section({
  name: 'post_payload', key: 'postPayload', honoured: 'full', meaning: 'Payloads POSTed to matching URIs.', spec: 'MS-FSCCFG 2.2.4.29', attribs: [], sections: [],
  dynamicAttrib: attrib({ name: '<uri or prefix:uri>', key: 'payload', honoured: 'full', type: 'string', secret: 'value', nameCheck: checkPostPayloadName, meaning: 'The body POSTed to the URI (exact) or to URIs with the prefix.', spec: 'MS-FSCCFG 2.2.4.29' }),
});

// ------------------------------------------------------------------ 2.2.4.30

const RSS = section({
  name: 'rss', key: 'rss', honoured: 'full', sub: true, meaning: 'RSS/Atom channel support.', spec: 'MS-FSCCFG 2.2.4.30', sections: [],
  attribs: [
    attrib({ name: 'start_uris', key: 'startUris', honoured: 'full', type: 'list-string', check: checkAbsoluteHttpUri, secret: 'url', meaning: 'Start URIs of RSS channel documents.', spec: 'MS-FSCCFG 2.2.4.30' }),
    attrib({ name: 'start_uri_files', key: 'startUriFiles', honoured: 'full', type: 'list-string', meaning: 'Files with one RSS channel URI per line.', spec: 'MS-FSCCFG 2.2.4.30' }),
    attrib({ name: 'auto_discover', key: 'autoDiscover', honoured: 'full', type: 'boolean', default: false, meaning: 'Discover new channels from links in HTML.', spec: 'MS-FSCCFG 2.2.4.30' }),
    attrib({ name: 'follow_links', key: 'followLinks', honoured: 'full', type: 'boolean', default: true, meaning: 'Follow links from HTML documents found in a channel.', spec: 'MS-FSCCFG 2.2.4.30' }),
    attrib({ name: 'ignore_rules', key: 'ignoreRules', honoured: 'full', type: 'boolean', default: false, meaning: 'Crawl every document a channel names, whatever the include/exclude rules.', spec: 'MS-FSCCFG 2.2.4.30' }),
    attrib({ name: 'index_feed', key: 'indexFeed', honoured: 'full', type: 'boolean', default: false, meaning: 'Send the channel documents themselves to the index.', spec: 'MS-FSCCFG 2.2.4.30' }),
    attrib({ name: 'del_expired_links', key: 'delExpiredLinks', honoured: 'full', type: 'boolean', default: false, meaning: 'Delete documents of a channel when they expire.', spec: 'MS-FSCCFG 2.2.4.30' }),
    attrib({ name: 'max_link_age', key: 'maxLinkAgeMin', honoured: 'full', type: 'integer', default: 0, min: 0, unit: 'min', meaning: 'Age after which a channel document expires (0 = never).', spec: 'MS-FSCCFG 2.2.4.30' }),
    attrib({ name: 'max_link_count', key: 'maxLinkCount', honoured: 'full', type: 'integer', default: 128, min: 0, meaning: 'Links kept per channel; older ones expire first-in first-out.', spec: 'MS-FSCCFG 2.2.4.30' }),
  ],
});

// ------------------------------------------------------------------ 2.2.4.31–32, 2.2.6

const PARAMETERS = section({
  name: 'parameters', key: 'parameters', honoured: 'full', meaning: 'Form variables of the login form.', spec: 'MS-FSCCFG 2.2.4.32', attribs: [], sections: [],
  dynamicAttrib: attrib({ name: '<variable>', key: 'value', honoured: 'full', type: 'string', secret: 'value', meaning: 'The value submitted for that form variable.', spec: 'MS-FSCCFG 2.2.4.32' }),
});

export const LOGIN = section({
  name: '<login>', key: 'login', honoured: 'full', nameCheck: checkSectionName, meaning: 'One HTML form login; also written as a <Login> element.', spec: 'MS-FSCCFG 2.2.4.31',
  sections: [PARAMETERS],
  attribs: [
    attrib({ name: 'preload', key: 'preload', honoured: 'full', type: 'string', check: checkAbsoluteHttpUri, secret: 'url', meaning: 'Page fetched before the login form is processed.', spec: 'MS-FSCCFG 2.2.4.31' }),
    attrib({ name: 'scheme', key: 'scheme', honoured: 'full', type: 'string', allowed: ['http', 'https'], meaning: 'Scheme of the login site: http or https.', spec: 'MS-FSCCFG 2.2.4.31' }),
    attrib({ name: 'site', key: 'site', honoured: 'full', type: 'string', check: checkHostName, meaning: 'Host name of the login form page.', spec: 'MS-FSCCFG 2.2.4.31' }),
    attrib({ name: 'form', key: 'form', honoured: 'full', type: 'string', meaning: 'Path of the login form.', spec: 'MS-FSCCFG 2.2.4.31' }),
    attrib({ name: 'action', key: 'action', honoured: 'full', type: 'string', allowed: ['GET', 'POST'], meaning: 'Form method: GET or POST.', spec: 'MS-FSCCFG 2.2.4.31' }),
    attrib({ name: 'sites', key: 'sites', honoured: 'full', type: 'list-string', check: checkHostName, meaning: 'Sites to log into before crawling them.', spec: 'MS-FSCCFG 2.2.4.31' }),
    attrib({ name: 'ttl', key: 'ttlS', honoured: 'full', type: 'integer', min: 0, unit: 's', meaning: 'Time after which the crawler logs in again.', spec: 'MS-FSCCFG 2.2.4.31' }),
    attrib({ name: 'html_form', key: 'htmlForm', honoured: 'full', type: 'string', check: checkAbsoluteHttpUri, secret: 'url', meaning: 'URI of the page that holds the login form.', spec: 'MS-FSCCFG 2.2.4.31' }),
    attrib({ name: 'autofill', key: 'autofill', honoured: 'full', type: 'boolean', meaning: 'Fill the form automatically (needs html_form).', spec: 'MS-FSCCFG 2.2.4.31' }),
    attrib({ name: 'relogin_if_failed', key: 'reloginIfFailed', honoured: 'full', type: 'boolean', meaning: 'Try to log in again after ttl seconds when the login failed.', spec: 'MS-FSCCFG 2.2.4.31' }),
  ],
});

const LOGINS = section({ name: 'logins', key: 'logins', honoured: 'full', meaning: 'HTML form logins, one section each.', spec: 'MS-FSCCFG 2.2.4.31', attribs: [], sections: [], dynamicSection: LOGIN });

// ------------------------------------------------------------------ extensions

const EGRESS = section({
  name: 'trawl_egress', key: 'egress', honoured: 'full', meaning: 'Which addresses the crawler may connect to (SSRF protection).', spec: X, sections: [],
  attribs: [
    attrib({ name: 'allow_loopback', key: 'allowLoopback', honoured: 'full', type: 'boolean', default: false, meaning: 'Allow loopback addresses (127.0.0.0/8, ::1).', spec: X }),
    attrib({ name: 'allow_private_networks', key: 'allowPrivateNetworks', honoured: 'full', type: 'boolean', default: false, meaning: 'Allow private, shared and unique-local addresses (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7).', spec: X }),
    attrib({ name: 'allow_link_local', key: 'allowLinkLocal', honoured: 'full', type: 'boolean', default: false, meaning: 'Allow link-local addresses, including cloud metadata endpoints (169.254/16, fe80::/10).', spec: X }),
    attrib({ name: 'allow_ips', key: 'allowIps', honoured: 'full', type: 'list-string', default: [], check: checkCidr, meaning: 'Addresses or CIDR blocks allowed even when a rule above refuses them.', spec: X }),
    attrib({ name: 'deny_ips', key: 'denyIps', honoured: 'full', type: 'list-string', default: [], check: checkCidr, meaning: 'Addresses or CIDR blocks always refused.', spec: X }),
    attrib({ name: 'dns_ttl', key: 'dnsTtlS', honoured: 'full', type: 'integer', default: 300, min: 0, unit: 's', meaning: 'How long a site\'s resolved address stays pinned.', spec: X }),
  ],
});

const TRAWL_LIMITS = section({
  name: 'trawl_limits', key: 'trawlLimits', honoured: 'full', meaning: 'Bounds on every input (Elastic crawler resource limits).', spec: X, sections: [],
  attribs: [
    attrib({ name: 'max_url_length', key: 'maxUrlLength', honoured: 'full', type: 'integer', default: 2048, min: 1, unit: 'characters', meaning: 'URLs longer than this are skipped.', spec: X }),
    attrib({ name: 'max_url_segments', key: 'maxUrlSegments', honoured: 'full', type: 'integer', default: 16, min: 1, meaning: 'URLs whose path has more segments are skipped.', spec: X }),
    attrib({ name: 'max_url_params', key: 'maxUrlParams', honoured: 'full', type: 'integer', default: 32, min: 0, meaning: 'URLs with more query parameters are skipped.', spec: X }),
    attrib({ name: 'max_links_per_page', key: 'maxLinksPerPage', honoured: 'full', type: 'integer', default: 1000, min: 0, meaning: 'Links extracted from one page at most.', spec: X }),
    attrib({ name: 'max_document_bytes', key: 'maxDocumentBytes', honoured: 'full', type: 'integer', default: 104857600, min: 1, unit: 'bytes', meaning: 'Largest body read of any response, cut_off or not: a larger one is abandoned as it streams in and skipped with tl (cut_off and truncate apply below it).', spec: X }),
    attrib({ name: 'max_decompressed_bytes', key: 'maxDecompressedBytes', honoured: 'full', type: 'integer', default: 104857600, min: 1, unit: 'bytes', meaning: 'Decompressed body size at which a download is abandoned (gzip bombs).', spec: X }),
    attrib({ name: 'connect_timeout', key: 'connectTimeoutS', honoured: 'full', type: 'integer', default: 10, min: 1, unit: 's', meaning: 'Time allowed to open a connection, beside fetch_timeout.', spec: X }),
    attrib({ name: 'socket_timeout', key: 'socketTimeoutS', honoured: 'full', type: 'integer', default: 0, min: 0, unit: 's', defaultDoc: '0 (none: fetch_timeout bounds the whole download)', meaning: 'Longest wait for the response headers, and between two pieces of the body; past it the fetch fails as a timeout (the Elastic crawler\'s socket_timeout). 0: no bound but fetch_timeout.', spec: X }),
    attrib({ name: 'max_crawl_duration', key: 'maxCrawlDurationS', honoured: 'full', type: 'integer', min: 1, unit: 's', meaning: 'A refresh cycle that has run this long (wall time since it started, a resumed cycle\'s earlier runs included) starts no more fetches: the ones under way finish, the URIs still queued are abandoned, and the cycle ends complete (the Elastic crawler\'s max_duration).', spec: X }),
    attrib({ name: 'max_unique_urls', key: 'maxUniqueUrls', honoured: 'full', type: 'integer', min: 1, meaning: 'URIs fetched in one refresh cycle at most (each once, retries not counted again); then the URIs still queued are abandoned and the cycle ends complete (the Elastic crawler\'s max_unique_url_count).', spec: X }),
    attrib({ name: 'max_title_bytes', key: 'maxTitleBytes', honoured: 'full', type: 'integer', default: 1024, min: 0, unit: 'bytes', meaning: 'Longest title kept for a search document.', spec: X }),
    attrib({ name: 'max_body_bytes', key: 'maxBodyBytes', honoured: 'full', type: 'integer', default: 5242880, min: 0, unit: 'bytes', meaning: 'Longest body text kept for a search document.', spec: X }),
    attrib({ name: 'max_keywords_bytes', key: 'maxKeywordsBytes', honoured: 'full', type: 'integer', default: 512, min: 0, unit: 'bytes', meaning: 'Longest meta keywords kept for a search document.', spec: X }),
    attrib({ name: 'max_description_bytes', key: 'maxDescriptionBytes', honoured: 'full', type: 'integer', default: 1024, min: 0, unit: 'bytes', meaning: 'Longest meta description kept for a search document.', spec: X }),
    attrib({ name: 'max_indexed_links', key: 'maxIndexedLinks', honoured: 'full', type: 'integer', default: 25, min: 0, meaning: 'Links stored in a search document.', spec: X }),
    attrib({ name: 'max_headings', key: 'maxHeadings', honoured: 'full', type: 'integer', default: 25, min: 0, meaning: 'Headings stored in a search document.', spec: X }),
    attrib({ name: 'max_elastic_tag_bytes', key: 'maxElasticTagBytes', honoured: 'full', type: 'integer', default: 512, min: 0, unit: 'bytes', meaning: 'Longest content kept of a <meta class="elastic"> custom field (the Open Crawler\'s max_elastic_tag_size).', spec: X }),
    attrib({ name: 'max_data_attribute_bytes', key: 'maxDataAttributeBytes', honoured: 'full', type: 'integer', default: 512, min: 0, unit: 'bytes', meaning: 'Longest text kept of a data-elastic-name custom field (the Open Crawler\'s max_data_attribute_size).', spec: X }),
  ],
});

const EXTRACTION = section({
  name: 'trawl_extraction', key: 'extraction', honoured: 'full', meaning: 'What the search documents are made of, besides the limits (docs/elastic-migration.md).', spec: X, sections: [],
  attribs: [
    attrib({ name: 'content_hash_include', key: 'contentHashInclude', honoured: 'full', type: 'list-string', default: [], allowed: ['document_title', 'document_body', 'meta_keywords', 'meta_description', 'links', 'headings'], meaning: 'The fields of an HTML page whose equality makes two pages duplicates (diffcheck) and a refetched page unchanged, as the App Search crawler\'s crawler.extraction.content_hash_include; empty: the bytes (csum_cut_off). Read on the crawl\'s path only when set.', spec: X }),
    attrib({ name: 'binary_mime_types', key: 'binaryMimeTypes', honoured: 'full', type: 'list-string', default: [], check: checkMimePattern, meaning: 'Files of these MIME types (* matches a whole field) are kept whatever allowed_types says, and indexed by sinks of the open_crawler schema as file_name, content_length, content_type and _attachment (base64); other files are not (the Open Crawler\'s binary_content_extraction_enabled and _mime_types). app_search documents carry every stored file as body_base64.', spec: X }),
    attrib({ name: 'default_charset', key: 'defaultCharset', honoured: 'full', type: 'string', default: 'utf-8', check: checkCharset, meaning: 'The character encoding of a text page whose Content-Type names none and whose HTML declares none (<meta charset>), for the search document (the Elastic crawler\'s default_encoding).', spec: X }),
  ],
});

const EXTRACTION_RULESET = section({
  name: '<ruleset>', key: 'ruleset', honoured: 'full', nameCheck: checkSectionName, meaning: 'One extraction ruleset (the Open Crawler\'s domains[].extraction_rulesets[]); rulesets apply in section order, a later field replacing an earlier one.', spec: X, sections: [],
  attribs: [
    attrib({ name: 'domain', key: 'domain', honoured: 'full', type: 'string', check: checkAbsoluteHttpUri, meaning: 'The domain URL (scheme, host, port) whose documents the ruleset applies to.', spec: X }),
    attrib({ name: 'url_filters', key: 'urlFilters', honoured: 'full', type: 'list-string', check: checkUrlFilter, meaning: 'Filters "begins|ends|contains|regex PATTERN" on the URL\'s path and query, matched as trawl_crawl_rules are; the rules apply when any matches, or always when there is none.', spec: X }),
    attrib({ name: 'rules', key: 'rules', honoured: 'full', type: 'list-string', check: checkExtractionRule, meaning: 'Rules, each a JSON object with the Open Crawler\'s keys: action extract|set, field_name, selector (CSS for source html, a regular expression on the URL for source url), join_as array|string (extract), value (set, given when the selector finds something).', spec: X }),
  ],
});

const EXTRACTION_RULESETS = section({ name: 'trawl_extraction_rulesets', key: 'extractionRulesets', honoured: 'full', meaning: 'Custom fields of the search documents, one section per ruleset (the Open Crawler\'s extraction_rulesets).', spec: X, attribs: [], sections: [], dynamicSection: EXTRACTION_RULESET });

const TRAWL_RENDER = section({
  name: 'trawl_render', key: 'render', honoured: 'full', meaning: 'JavaScript rendering (use_javascript): the browser, its pool of contexts and the bounds on each page.', spec: X, sections: [],
  attribs: [
    attrib({ name: 'browser', key: 'browser', honoured: 'full', type: 'string', default: '/usr/bin/chromium', meaning: 'The Chromium executable (Debian package chromium); never downloaded. Started only when a collection sets use_javascript.', spec: X }),
    attrib({ name: 'contexts', key: 'contexts', honoured: 'full', type: 'integer', default: 2, min: 1, max: 64, meaning: 'Pages of the collection rendered at once: its fixed pool of contexts in the process\'s one browser, shared with the other collections that render (2 fits 2 cores).', spec: X }),
    attrib({ name: 'page_timeout', key: 'pageTimeoutS', honoured: 'full', type: 'integer', default: 30, min: 1, unit: 's', meaning: 'Longest time a page may take to render, its dependencies included; past it the render fails (the URI queued again once in the cycle, then skipped with js).', spec: X }),
    attrib({ name: 'network_idle', key: 'networkIdleMs', honoured: 'full', type: 'integer', default: 500, min: 0, unit: 'ms', meaning: 'A page is rendered once it has loaded and no request of its own has been under way for this long.', spec: X }),
    attrib({ name: 'page_memory', key: 'pageMemoryMb', honoured: 'full', type: 'integer', default: 256, min: 16, unit: 'MiB', meaning: 'JavaScript heap of one page at most: a page that needs more crashes its renderer, and fails.', spec: X }),
    attrib({ name: 'total_memory', key: 'totalMemoryMb', honoured: 'full', type: 'integer', default: 1536, min: 64, unit: 'MiB', meaning: 'Memory of trawl\'s browser processes at most, each counted by its proportional set size (Pss: pages the processes share count once): above it the browser is restarted (new pages get a new one; the old one closes once its pages under way are done).', spec: X }),
    attrib({ name: 'restart_after', key: 'restartAfter', honoured: 'full', type: 'integer', default: 200, min: 1, meaning: 'Pages rendered by one browser process (of every collection sharing it) before it is restarted; its pages under way finish first.', spec: X }),
  ],
});

const SITEMAPS = section({
  name: 'trawl_sitemaps', key: 'sitemaps', honoured: 'full', meaning: 'Sitemap discovery and bounds (use_sitemaps turns sitemaps on).', spec: X, sections: [],
  attribs: [
    attrib({ name: 'urls', key: 'urls', honoured: 'full', type: 'list-string', check: checkAbsoluteHttpUri, secret: 'url', meaning: 'Sitemap URLs fetched besides those robots.txt names.', spec: X }),
    attrib({ name: 'robots_discovery', key: 'robotsDiscovery', honoured: 'full', type: 'boolean', default: true, meaning: 'Read Sitemap: lines of robots.txt.', spec: X }),
    attrib({ name: 'max_bytes', key: 'maxBytes', honoured: 'full', type: 'integer', default: 52428800, min: 1, unit: 'bytes', meaning: 'Largest (decompressed) sitemap read.', spec: X }),
    attrib({ name: 'max_urls', key: 'maxUrls', honoured: 'full', type: 'integer', default: 50000, min: 1, meaning: 'URLs read from one sitemap at most.', spec: X }),
    attrib({ name: 'max_index_depth', key: 'maxIndexDepth', honoured: 'full', type: 'integer', default: 2, min: 0, meaning: 'Nesting of sitemap indexes followed.', spec: X }),
  ],
});

const ELASTIC_DOMAIN = section({
  name: '<domain>', key: 'domain', honoured: 'full', nameCheck: checkAbsoluteHttpUri, meaning: 'One Elastic crawler domain, named by its URL (scheme, host, port).', spec: X, sections: [],
  attribs: [
    attrib({ name: 'rules', key: 'rules', honoured: 'full', type: 'list-string', check: checkElasticRule, meaning: 'Ordered crawl rules "allow|disallow begins|ends|contains|regex PATTERN"; the first match decides, and the last rule allows all.', spec: X }),
  ],
});

const ELASTIC_RULES = section({ name: 'trawl_crawl_rules', key: 'crawlRules', honoured: 'full', meaning: 'Elastic crawler crawl rules, one section per domain.', spec: X, attribs: [], sections: [], dynamicSection: ELASTIC_DOMAIN });

const ELASTIC = section({
  name: 'trawl_elastic', key: 'elastic', honoured: 'full', meaning: 'What an Elastic crawler user expects of a crawl (an Elastic Open Crawler YAML file sets these).', spec: X, sections: [],
  attribs: [
    attrib({ name: 'events', key: 'events', honoured: 'full', type: 'boolean', default: false, meaning: 'The JSON event log uses the Elastic crawler\'s event names and ECS fields (crawl-start, url-discover, url-fetch, …; docs/elastic-migration.md) instead of trawl\'s.', spec: X }),
    attrib({ name: 'stats_interval', key: 'statsInterval', honoured: 'full', type: 'integer', default: 10, min: 1, unit: 'seconds', meaning: 'With events: how often the Elastic event log gets a crawl-status record with the crawl\'s statistics (crawler.status.queue_size, pages_visited, urls_allowed, urls_denied.<reason>, status_codes.<code>, …), besides one when the crawl loop starts and one after crawl-end (the Open Crawler\'s stats_dump_interval).', spec: X }),
    attrib({ name: 'exclude_tags', key: 'excludeTags', honoured: 'full', type: 'list-string', check: checkExcludeTags, meaning: 'The Open Crawler\'s exclude_tags, one member per domain: "ORIGIN tag tag …" (e.g. "https://www.example.com header footer"); the search document\'s body text of a page of that origin leaves out these elements and all they hold, whatever data-elastic-include says inside them. Titles, headings, links, custom fields and the crawl itself are unchanged.', spec: X }),
    attrib({ name: 'full_html', key: 'fullHtml', honoured: 'full', type: 'boolean', default: false, meaning: 'The Open Crawler\'s full_html_extraction_enabled: the search document of an HTML page carries the page\'s whole HTML, as fetched and decoded, in the field full_html (both schemas).', spec: X }),
  ],
});

const LOCKSS = section({
  name: 'trawl_lockss', key: 'lockss', honoured: 'full', meaning: 'LOCKSS au_crawlrules: numbered rules over printf-style regex templates.', spec: X,
  attribs: [
    attrib({ name: 'crawl_rules', key: 'crawlRules', honoured: 'full', type: 'list-string', check: checkLockssRule, meaning: 'Rules "CODE, \\"template\\", param, …" tried in order; the default is Exclude.', spec: X }),
  ],
  sections: [
    section({ name: 'params', key: 'params', honoured: 'full', meaning: 'Parameters the templates are filled from (base_url, journal_id, …).', spec: X, attribs: [], sections: [], dynamicAttrib: attrib({ name: '<param>', key: 'value', honoured: 'full', type: 'string', meaning: 'The value of that parameter.', spec: X }) }),
  ],
});

const SINK = section({
  name: '<sink>', key: 'sink', honoured: 'full', nameCheck: checkSectionName, meaning: 'One output sink; its name is chosen by the user.', spec: X, sections: [],
  attribs: [
    attrib({ name: 'type', key: 'type', honoured: 'full', type: 'string', allowed: SINK_TYPES, meaning: sinkTypeMeaning(), spec: X }),
    attrib({ name: 'schema', key: 'schema', honoured: 'full', type: 'string', allowed: ['app_search', 'open_crawler'], defaultDoc: 'app_search (open_crawler when read from Elastic YAML)', meaning: 'The search document\'s schema for the file, console and elasticsearch sinks: app_search (the App Search web crawler\'s: body_content, url_port a string, domains, trawl\'s own fields) or open_crawler (the Elastic Open Crawler\'s: body, url_port an integer, empty fields left out, files only of trawl_extraction.binary_mime_types).', spec: X }),
    attrib({ name: 'output_dir', key: 'outputDir', honoured: 'full', type: 'string', meaning: 'Directory the file sink writes <content collection>/<sha1 of URL>.json under.', spec: X }),
    attrib({ name: 'url', key: 'url', honoured: 'full', type: 'string', secret: 'url', meaning: 'Endpoint of the sink: the Elasticsearch base URL (http or https).', spec: X }),
    attrib({ name: 'index', key: 'index', honoured: 'full', type: 'string', meaning: 'Search index name; default: the content collection name, lower-cased.', spec: X }),
    attrib({ name: 'pipeline', key: 'pipeline', honoured: 'full', type: 'string', meaning: 'Ingest pipeline the documents go through (?pipeline=).', spec: X }),
    attrib({ name: 'username', key: 'username', honoured: 'full', type: 'string', meaning: 'User for the sink endpoint.', spec: X }),
    attrib({ name: 'password', key: 'password', honoured: 'full', type: 'string', secret: 'value', meaning: 'Password for the sink endpoint; may be !ENC! encrypted.', spec: X }),
    attrib({ name: 'api_key', key: 'apiKey', honoured: 'full', type: 'string', secret: 'value', meaning: 'API key for the sink endpoint; may be !ENC! encrypted.', spec: X }),
    attrib({ name: 'file_naming', key: 'fileNaming', honoured: 'full', type: 'string', default: 'sha1', allowed: ['sha1', 'url'], meaning: 'The file sink: sha1, <output_dir>/<content collection>/<SHA-1 of the URL>.json; url, the Elastic Open Crawler\'s layout, <output_dir>/<the URL without scheme and www., every other character than letters, digits, - and _ one _>.json (an Elastic YAML file sink has it).', spec: X }),
    attrib({ name: 'console_format', key: 'consoleFormat', honoured: 'full', type: 'string', default: 'json', allowed: ['json', 'open_crawler'], meaning: 'The console sink: json, one JSON line per operation ({"op":"index",…document} or {"op":"delete",…}); open_crawler, the Elastic Open Crawler\'s console output, a line "# <id>, <url>, <HTTP status>" then the page as fetched (a binary file: a "** [Content extractable file (content type: …, content length: …)] **" line), and nothing for a deletion (an Elastic YAML console sink has it).', spec: X }),
    attrib({ name: 'pipeline_params', key: 'pipelineParams', honoured: 'full', type: 'list-string', check: checkPipelineParam, meaning: 'The elasticsearch sink: fields "name=value" (true, false, a number or text) added to every document for its ingest pipeline, as the Open Crawler\'s pipeline_params (_reduce_whitespace, _run_ml_inference, _extract_binary_content).', spec: X }),
    attrib({ name: 'ssl_verify', key: 'sslVerify', honoured: 'full', type: 'boolean', default: true, meaning: 'The elasticsearch sink: verify the endpoint\'s TLS certificate.', spec: X }),
    attrib({ name: 'ca_path', key: 'caPath', honoured: 'full', type: 'string', meaning: 'The elasticsearch sink: a CA certificate file (PEM) or a directory of them, trusted for the endpoint.', spec: X }),
    attrib({ name: 'bulk_max_items', key: 'bulkMaxItems', honoured: 'full', type: 'integer', min: 1, meaning: 'The elasticsearch sink: documents sent in one _bulk request at most (Open Crawler bulk_api.max_items).', spec: X }),
    attrib({ name: 'bulk_max_bytes', key: 'bulkMaxBytes', honoured: 'full', type: 'integer', min: 1, unit: 'bytes', meaning: 'The elasticsearch sink: size of one _bulk request body at most (Open Crawler bulk_api.max_size_bytes).', spec: X }),
    attrib({ name: 'ca_fingerprint', key: 'caFingerprint', honoured: 'full', type: 'string', check: checkSha256Fingerprint, meaning: 'The elasticsearch sink: the SHA-256 fingerprint (64 hexadecimal digits, colons allowed) of a certificate the endpoint\'s chain must hold, its CA\'s as Elasticsearch prints it; the chain is then trusted without a CA file (Open Crawler elasticsearch.ca_fingerprint).', spec: X }),
    attrib({ name: 'request_timeout', key: 'requestTimeoutS', honoured: 'full', type: 'integer', default: 60, min: 1, unit: 's', meaning: 'The elasticsearch sink: time one _bulk request may wait for the response headers, and then between two parts of its body (Open Crawler elasticsearch.request_timeout).', spec: X }),
    attrib({ name: 'compression', key: 'compression', honoured: 'full', type: 'boolean', default: false, meaning: 'The elasticsearch sink: send each _bulk body gzip-compressed (Content-Encoding: gzip; Open Crawler elasticsearch.compression).', spec: X }),
    attrib({ name: 'retries', key: 'retries', honoured: 'full', type: 'integer', default: 0, min: 0, max: 20, meaning: 'The elasticsearch sink: a _bulk request that fails in transport or is answered 429 or 5xx is sent again up to this many times before the batch is left for the next feed (Open Crawler elasticsearch.retry_on_failure).', spec: X }),
    attrib({ name: 'retry_delay', key: 'retryDelayS', honoured: 'full', type: 'real', default: 2, min: 0, max: 600, unit: 's', meaning: 'The elasticsearch sink: wait before the first retry; each further retry waits twice as long (Open Crawler elasticsearch.delay_on_retry).', spec: X }),
    attrib({ name: 'repository_root', key: 'repositoryRoot', honoured: 'full', type: 'string', meaning: 'The repository and jms sinks: the directory files and their CrawlData sidecars are written under, host then path as Heritrix\'s mirror writer lays them out (docs/citeseerx.md).', spec: CSX }),
    attrib({ name: 'repository_id', key: 'repositoryId', honoured: 'full', type: 'string', meaning: 'The jms sink: the crawler\'s repository ID, sent as REPID (csx-heritrix.xml repositoryID).', spec: CSX }),
    attrib({ name: 'broker_url', key: 'brokerUrl', honoured: 'full', type: 'string', secret: 'url', meaning: 'The jms sink: the ActiveMQ broker, stomp://host:port (default port 61613); an OpenWire tcp://host:port is sent over STOMP to host:61613, with a warning.', spec: CSX }),
    attrib({ name: 'ingestion_queue', key: 'ingestionQueue', honoured: 'full', type: 'string', meaning: 'The jms sink: the queue New Content Messages go to (csx-heritrix.xml ingestionChannel); default: csx.ingestion.documentsToIngest.', spec: CSX }),
    attrib({ name: 'client_id', key: 'clientId', honoured: 'full', type: 'string', meaning: 'The jms sink: the JMS client ID the connection takes (csx-heritrix.xml jmsProvider clientID).', spec: CSX }),
    attrib({ name: 'hub_link_indicator', key: 'hubLinkIndicator', honoured: 'full', type: 'string', meaning: 'Every sink: a regular expression (JavaScript syntax, which Heritrix\'s Java patterns such as the profile\'s are written in too), matching a whole URL, over the out-links of each fed HTML page; a page with a matching link is a hub, which the sink keeps (the repository and jms sinks announce it with RESOURCETYPE hub: csx-heritrix.xml hubLinkIndicator). When set, the sink keeps only hubs and the documents accept_pattern and accept_types let through.', spec: CSX }),
    attrib({ name: 'accept_pattern', key: 'acceptPattern', honoured: 'full', type: 'string', meaning: 'Every sink: a regular expression matching the whole URL of the documents the sink keeps (as articles, for the repository and jms sinks); the others reach it as deletions, so that one kept before is removed. The crawl still fetches and parses every page allowed_types lets through. Default: every document, or, for a repository or jms sink with hub_link_indicator and no accept_types, the User Submission profile\'s .*(\\.(pdf))(\\.(gz))?', spec: CSX }),
    attrib({ name: 'accept_types', key: 'acceptTypes', honoured: 'full', type: 'list-string', check: checkMimePattern, meaning: 'Every sink: the MIME types of the documents the sink keeps (* matches a whole field, as in allowed_types); with accept_pattern, a document must match both. The crawl still fetches and parses every page allowed_types lets through. Default: every type.', spec: X }),
    attrib({ name: 'job_id', key: 'jobId', honoured: 'full', type: 'string', meaning: 'The jms sink: the JID of the messages; default: the submitted job\'s JID (trawl_submission.job_id), else the crawl collection\'s name.', spec: CSX }),
    attrib({ name: 'status_queue', key: 'statusQueue', honoured: 'full', type: 'string', meaning: 'The jms sink: the queue URL Status Messages (TYPE 1, JID, URL, STATUS) go to for each URI that fails in a submitted job (a collection with trawl_submission.job_id), through the feed outbox (csx-heritrix.xml statusUpdateChannel); unset: none are sent.', spec: CSX }),
    attrib({ name: 'submission_queue', key: 'submissionQueue', honoured: 'full', type: 'string', meaning: 'The jms sink, trawl serve only: the queue URL Submission Messages (JID, URL, DESC) are consumed from (csx-heritrix.xml newSubmissionsChannel); each becomes a submitted job, a new collection made from this collection\'s configuration with the message\'s URLs as start URIs. Acknowledged once the job is stored.', spec: CSX }),
  ],
});

const SUBMISSION = section({
  name: 'trawl_submission', key: 'submission', honoured: 'full', meaning: 'A CiteSeerX submitted job (docs/citeseerx.md "Submitted jobs"): written by trawl serve into the collection it makes for a URL Submission Message.', spec: CSX, sections: [],
  attribs: [
    attrib({ name: 'job_id', key: 'jobId', honoured: 'full', type: 'string', meaning: 'The JID of the submission: the jms sinks send it as JID, and the collection\'s failures are reported on their status_queue.', spec: CSX }),
    attrib({ name: 'description', key: 'description', honoured: 'full', type: 'string', meaning: 'The DESC of the submission, kept for operators.', spec: CSX }),
  ],
});

const SINKS = section({ name: 'trawl_sinks', key: 'sinks', honoured: 'full', meaning: 'The sinks fed documents are written to, one section per sink: each content destination (feeding) sends its documents to every sink.', spec: X, attribs: [], sections: [], dynamicSection: SINK });

const URLS = section({
  name: 'trawl_urls', key: 'urls', honoured: 'full', meaning: 'How URLs are canonicalized before the seen check (rewrite_rules run first).', spec: X, sections: [],
  attribs: [
    attrib({ name: 'canonicalization', key: 'canonicalization', honoured: 'full', type: 'list-string', default: DEFAULT_CANON_RULES, allowed: CANON_RULES.map((r) => r.name), meaning: 'Named canonicalization rules, applied in their fixed order (sort_query_params adds sort-query-params).', spec: X }),
  ],
});

const TRAWL_TLS = section({
  name: 'trawl_tls', key: 'tls', honoured: 'full', meaning: 'How the crawled sites\' TLS certificates are checked (the Open Crawler\'s ssl_ca_certificates and ssl_verification_mode).', spec: X, sections: [],
  attribs: [
    attrib({ name: 'ca_certificates', key: 'caCertificates', honoured: 'full', type: 'list-string', default: [], meaning: 'CA certificates trusted besides the system\'s, each a PEM file (relative paths from the configuration file\'s folder) or the PEM text itself.', spec: X }),
    attrib({ name: 'verification', key: 'verification', honoured: 'full', type: 'string', default: 'full', allowed: ['full', 'certificate', 'none'], meaning: 'full: the certificate must chain to a trusted CA and name the host; certificate: the chain only; none: no check (insecure).', spec: X }),
  ],
});

const TRAWL_HTTP = section({
  name: 'trawl_http', key: 'http', honoured: 'full', meaning: 'What requests carry besides headers.', spec: X, sections: [],
  attribs: [
    attrib({ name: 'send_referer', key: 'sendReferer', honoured: 'full', type: 'boolean', default: true, meaning: 'Send the page a URI was found on as Referer (not from an https page to an http URI; without user name, password and fragment).', spec: X }),
  ],
});

const TRAWL_ROBOTS = section({
  name: 'trawl_robots', key: 'robots', honoured: 'full', meaning: 'How the crawler names itself to robots.txt and robots meta tags.', spec: X, sections: [],
  attribs: [
    attrib({ name: 'product_token', key: 'productToken', honoured: 'full', type: 'string', check: checkProductToken, meaning: 'The product token matched against robots.txt User-agent lines, <meta name="TOKEN"> and X-Robots-Tag "TOKEN:" (RFC 9309 2.2.1). Default: from the User-Agent header, the name after "compatible;" when it has one (CiteSeerBot of "Mozilla/5.0 (compatible; CiteSeerBot/1.12.1 +http://…)", as crawlers that present themselves that way do), else its first product name.', spec: X }),
  ],
});

const POLITENESS = section({
  name: 'trawl_politeness', key: 'politeness', honoured: 'full', meaning: 'Heritrix-style politeness: a delay that follows each fetch\'s duration, and a pause before a retry.', spec: X, sections: [],
  attribs: [
    attrib({ name: 'delay_factor', key: 'delayFactor', honoured: 'full', type: 'real', min: 0, meaning: 'After each fetch from a site, the next request to it waits this many times as long as the fetch took (Heritrix delay-factor), within min_delay and max_delay, counted from the end of the fetch; `delay` still applies between request starts. Unset: off.', spec: X }),
    attrib({ name: 'min_delay', key: 'minDelayS', honoured: 'full', type: 'real', default: 0, min: 0, unit: 's', meaning: 'Shortest wait delay_factor gives (Heritrix min-delay-ms).', spec: X }),
    attrib({ name: 'max_delay', key: 'maxDelayS', honoured: 'full', type: 'real', default: 30, min: 0, unit: 's', meaning: 'Longest wait delay_factor gives (Heritrix max-delay-ms).', spec: X }),
    attrib({ name: 'retry_delay', key: 'retryDelayS', honoured: 'full', type: 'real', default: 0, min: 0, unit: 's', meaning: 'Before a URI is fetched again after a failure that http_errors / ftp_errors RETRY (the net key for network errors) retries, its site waits this long (Heritrix retry-delay-seconds; at most max_backoff_delay).', spec: X }),
  ],
});

const TRAWL_PURGE = section({
  name: 'trawl_purge', key: 'purge', honoured: 'full', meaning: 'The Elastic crawler\'s purge phase (the Elastic YAML converter turns it on).', spec: X, sections: [],
  attribs: [
    attrib({ name: 'enabled', key: 'enabled', honoured: 'full', type: 'boolean', default: false, meaning: 'With refresh_mode scratch: a cycle crawls what its start URIs lead to, instead of every known URI again; then the documents it did not reach are fetched, and deleted from the store and the sinks when they answer 3xx or 4xx (docs/crawling.md, *The purge phase*). A document whose page answers 5xx is sent to the sinks marked inaccessible until http_errors deletes it.', spec: X }),
  ],
});

const ENCRYPTION = section({
  name: 'trawl_secrets', key: 'secrets', honoured: 'full', meaning: 'Where the !ENC! key file is.', spec: X, sections: [],
  attribs: [
    attrib({ name: 'key_file', key: 'keyFile', honoured: 'full', type: 'string', default: 'CrawlerEncryptionKey.dat', meaning: 'Key file for !ENC! values (128-bit key + 128-bit IV), relative to the data directory; $TRAWL_KEY_FILE overrides.', spec: 'MS-FSCCFG 2.2.4.20' }),
  ],
});

// ------------------------------------------------------------------ 2.2.3

/** Every attrib of MS-FSCCFG 2.2.3, in the spec's order. `sub: true` marks the 2.2.4.33 subset. */
const COLLECTION_ATTRIBS = [
  attrib({ name: 'info', key: 'info', honoured: 'full', type: 'string', meaning: 'Meta information about the collection.', spec: S }),
  attrib({ name: 'fetch_timeout', key: 'fetchTimeoutS', honoured: 'full', type: 'integer', default: 300, min: 1, unit: 's', meaning: 'Longest time to download one document.', spec: S }),
  attrib({ name: 'allowed_types', key: 'allowedTypes', honoured: 'full', type: 'list-string', default: ['text/html', 'text/plain', 'application/msword', 'application/msexcel', 'application/pt', 'application/pdf'], check: checkMimePattern, meaning: 'MIME types kept; others are discarded. * matches a whole field (text/*, */*).', spec: S }),
  attrib({ name: 'force_mimetype_detection', key: 'forceMimetypeDetection', honoured: 'full', type: 'boolean', default: false, meaning: 'Detect MIME types from the content instead of trusting Content-Type.', spec: S }),
  attrib({ name: 'allowed_schemes', key: 'allowedSchemes', honoured: 'full', type: 'list-string', default: ['http'], check: checkScheme, sub: true, meaning: 'URI schemes that are crawled: http, https, ftp.', spec: S }),
  attrib({ name: 'ftp_passive', key: 'ftpPassive', honoured: 'full', type: 'boolean', default: true, sub: true, meaning: 'Use passive FTP.', spec: S }),
  attrib({ name: 'domain_clustering', key: 'domainClustering', honoured: 'full', type: 'boolean', default: false, meaning: 'Route the hosts of one domain (public suffix and one label) to one node scheduler (multinode: docs/multinode.md).', spec: S }),
  attrib({ name: 'max_inter_docs', key: 'maxInterDocs', honoured: 'full', type: 'integer', min: 1, meaning: 'Documents fetched from one site before another site gets a turn.', spec: S }),
  attrib({ name: 'max_redirects', key: 'maxRedirects', honoured: 'full', type: 'integer', default: 10, min: 0, meaning: 'Longest chain of HTTP redirects followed from one URI.', spec: S }),
  attrib({ name: 'diffcheck', key: 'diffcheck', honoured: 'full', type: 'boolean', default: true, meaning: 'Detect duplicate documents by checksum.', spec: S }),
  attrib({ name: 'near_duplicate_detection', key: 'nearDuplicateDetection', honoured: 'not', type: 'boolean', default: false, meaning: 'Detect near-duplicates by word patterns.', spec: S }),
  attrib({ name: 'max_uri_recursion', key: 'maxUriRecursion', honoured: 'full', type: 'integer', default: 5, min: 0, meaning: 'Times a path pattern may repeat in successor URIs (trap guard).', spec: S }),
  attrib({ name: 'ftp_searchlinks', key: 'ftpSearchlinks', honoured: 'full', type: 'boolean', default: true, meaning: 'Extract links from documents fetched over FTP (directory listings are HTML pages of links); off, none is followed.', spec: S }),
  attrib({ name: 'use_javascript', key: 'useJavascript', honoured: 'full', type: 'boolean', default: false, sub: true, meaning: 'Run the JavaScript of HTML documents (uri_search_mime types) in Chromium (trawl_render) before their links are extracted; the links of the rendered DOM and of client-side routing are followed too.', spec: S }),
  attrib({ name: 'javascript_keep_html', key: 'javascriptKeepHtml', honoured: 'full', type: 'boolean', default: false, meaning: 'Index the HTML produced by JavaScript instead of the original (needs use_javascript).', spec: S }),
  attrib({ name: 'javascript_delay', key: 'javascriptDelayS', honoured: 'full', type: 'real', min: 0, unit: 's', meaning: 'Delay between the starts of two fetches of a rendered page\'s dependencies (scripts, XHR/fetch, stylesheets, images) from one host; delay when absent.', spec: S }),
  attrib({ name: 'exclude_exts', key: 'excludeExts', honoured: 'full', type: 'list-string', check: checkExtension, default: ['.jpg', '.jpeg', '.ico', '.tif', '.png', '.bmp', '.gif', '.wmf', '.avi', '.mpg', '.wmv', '.wma', '.ram', '.asx', '.ASF', '.mp3', '.wav', '.ogg', '.ra', '.aac', '.m4a', '.zip', '.gz', '.vmarc', '.z', '.tar', '.iso', '.img', '.rpm', '.cab', '.rar', '.ace', '.hqx', '.swf', '.exe', '.java', '.jar', '.prz', '.wrl', '.midr', '.css', '.ps', '.ttf', '.mso', '.dvi'], meaning: 'File extensions never crawled (compared without regard to case).', spec: S }),
  attrib({ name: 'use_http_1_1', key: 'useHttp11', honoured: 'full', type: 'boolean', default: true, sub: true, meaning: 'Use HTTP/1.1 (otherwise HTTP/1.0).', spec: S }),
  attrib({ name: 'accept_compression', key: 'acceptCompression', honoured: 'full', type: 'boolean', default: true, sub: true, meaning: 'Accept gzip, deflate and br content encodings (needs use_http_1_1).', spec: S }),
  attrib({ name: 'dbswitch', key: 'dbswitch', honoured: 'full', type: 'integer', default: 5, min: 1, meaning: 'Refresh cycles a document may go unprocessed before it expires (checked as each cycle begins: a document last processed in cycle e expires at the start of cycle E when E - e > dbswitch).', spec: S }),
  attrib({ name: 'dbswitch_delete', key: 'dbswitchDelete', honoured: 'full', type: 'boolean', default: false, meaning: 'Delete expired documents from the crawl store, the content store and every content destination; otherwise they are queued again to check that they still exist.', spec: S }),
  attrib({ name: 'html_redir_is_redir', key: 'htmlRedirIsRedir', honoured: 'full', type: 'boolean', default: true, meaning: 'Treat a <meta http-equiv="refresh"> as an HTTP redirect.', spec: S }),
  // Spec decision: the 2.2.3 table writes "hmtl_redir_threshold", the 3.2
  // example "html_redir_thresh". trawl writes the example's spelling and reads all three.
  attrib({ name: 'html_redir_thresh', key: 'htmlRedirThreshS', honoured: 'full', type: 'integer', default: 3, min: 0, unit: 's', aliases: ['hmtl_redir_threshold', 'html_redir_threshold'], meaning: 'Longest meta refresh delay that still counts as a redirect.', spec: S }),
  attrib({ name: 'robots_ttl', key: 'robotsTtlS', honoured: 'full', type: 'integer', default: 86400, min: 0, unit: 's', meaning: 'How long a fetched robots.txt is used before it is fetched again.', spec: S }),
  attrib({ name: 'use_sitemaps', key: 'useSitemaps', honoured: 'full', type: 'boolean', default: false, sub: true, meaning: 'Find and read sitemaps; with refresh_mode adaptive their changefreq, priority and lastmod score URIs (sitemap_weights).', spec: S }),
  attrib({ name: 'max_pending', key: 'maxPending', honoured: 'full', type: 'integer', default: 2, min: 1, meaning: 'Requests outstanding to one site at once.', spec: S }),
  attrib({ name: 'robots_auth_ignore', key: 'robotsAuthIgnore', honoured: 'full', type: 'boolean', default: true, meaning: 'Crawl the site as if it had no robots.txt when robots.txt answers 401/403; otherwise skip the site.', spec: S }),
  attrib({ name: 'robots_tout_ignore', key: 'robotsToutIgnore', honoured: 'full', type: 'boolean', default: false, meaning: 'Crawl as if there were no robots.txt when fetching it times out.', spec: S }),
  attrib({ name: 'rewrite_rules', key: 'rewriteRules', honoured: 'full', type: 'list-string', check: checkRewriteRule, meaning: 'URI rewrites "DmatchDreplacementD" (D any non-space delimiter, match a .NET regex).', spec: S }),
  // Spec decision: the 2.2.3 table writes "extract_links_from_dunes", the 3.2
  // example "extract_links_from_dupes", which is what it means.
  attrib({ name: 'extract_links_from_dupes', key: 'extractLinksFromDupes', honoured: 'full', type: 'boolean', default: false, aliases: ['extract_links_from_dunes'], meaning: 'Extract links from documents found to be duplicates.', spec: S }),
  attrib({ name: 'use_meta_csum', key: 'useMetaCsum', honoured: 'not', type: 'boolean', default: false, meaning: 'Include META tags in the duplicate checksum.', spec: S }),
  attrib({ name: 'csum_cut_off', key: 'csumCutOffBytes', honoured: 'full', type: 'integer', default: 0, min: 0, unit: 'bytes', meaning: 'Bytes of a document the checksum covers (0 = all).', spec: S }),
  attrib({ name: 'if_modified_since', key: 'ifModifiedSince', honoured: 'full', type: 'boolean', default: true, meaning: 'Send If-Modified-Since (and If-None-Match) on refetch.', spec: S }),
  attrib({ name: 'use_cookies', key: 'useCookies', honoured: 'full', type: 'boolean', default: false, meaning: 'Store and send cookies (RFC 6265): one jar per collection, kept in the crawl store.', spec: S }),
  // Spec decision: the 2.2.3 table lists "text/vnd.wap.xml", a MIME type that
  // does not exist; the 3.2 example and WML use "text/vnd.wap.wml".
  attrib({ name: 'uri_search_mime', key: 'uriSearchMime', honoured: 'full', type: 'list-string', default: ['text/html', 'text/vnd.wap.wml', 'text/wml', 'text/x-wap.wml', 'x-application/wml', 'text/x-hdml'], check: checkMimePattern, meaning: 'MIME types links are extracted from. * matches a whole field.', spec: S }),
  attrib({ name: 'max_backoff_counter', key: 'maxBackoffCounter', honoured: 'full', type: 'integer', default: 50, min: 0, meaning: 'Connection failures after which a site is no longer crawled.', spec: S }),
  attrib({ name: 'max_backoff_delay', key: 'maxBackoffDelayS', honoured: 'full', type: 'integer', default: 600, min: 0, unit: 's', meaning: 'Largest delay a site gets while its network fails.', spec: S }),
  attrib({ name: 'delay', key: 'delayS', honoured: 'full', type: 'real', default: 60.0, min: 0, unit: 's', sub: true, meaning: 'Time between the starts of two requests to one site.', spec: S }),
  attrib({ name: 'refresh', key: 'refreshMin', honoured: 'full', type: 'real', default: 1500.0, min: 0, unit: 'min', sub: true, meaning: 'Length of a refresh cycle.', spec: S }),
  attrib({ name: 'robots', key: 'robots', honoured: 'full', type: 'boolean', default: true, meaning: 'Obey robots.txt.', spec: S }),
  attrib({ name: 'start_uris', key: 'startUris', honoured: 'full', type: 'list-string', check: checkAbsoluteHttpUri, secret: 'url', sub: true, meaning: 'Start URIs.', spec: S }),
  attrib({ name: 'start_uri_files', key: 'startUriFiles', honoured: 'full', type: 'list-string', sub: true, meaning: 'Files with one start URI per line.', spec: S }),
  attrib({ name: 'max_sites', key: 'maxSites', honoured: 'full', type: 'integer', default: 128, min: 1, meaning: 'Sites crawled at once.', spec: S }),
  attrib({ name: 'mirror_site_files', key: 'mirrorSiteFiles', honoured: 'not', type: 'list-string', meaning: 'Files of space-separated mirror sites, preferred name first.', spec: S }),
  attrib({ name: 'proxy', key: 'proxy', honoured: 'full', type: 'list-string', check: checkProxy, secret: 'proxy', sub: true, meaning: 'Proxies "(http://)(user:password@)host(:port)" (port 80 when absent): http URLs go to the proxy as plain requests, https ones through a CONNECT tunnel; user:password is sent as Basic Proxy-Authorization, and the password may be !ENC! encrypted. With several, each site goes through one chosen by its host name, and the next ones are tried when it cannot be connected to.', spec: S }),
  attrib({ name: 'proxy_max_pending', key: 'proxyMaxPending', honoured: 'full', type: 'integer', default: INT32_MAX, defaultDoc: '2147483647 (INT32 maximum)', min: 1, meaning: 'Requests in flight through one proxy at once (each holds one connection to it); more wait for a place.', spec: S }),
  // The spec's default names FAST's crawler; trawl's names trawl and its version.
  attrib({ name: 'headers', key: 'headers', honoured: 'full', type: 'list-string', default: [`User-Agent: ${DEFAULT_USER_AGENT}`], defaultDoc: 'User-Agent: trawl/<version>', check: checkHeaderLine, secret: 'headers', sub: true, meaning: 'Extra HTTP request headers, "Name: value"; a sub-collection\'s list replaces the collection\'s for its URIs. A list without User-Agent keeps trawl\'s.', spec: S }),
  attrib({ name: 'cut_off', key: 'cutOffBytes', honoured: 'full', type: 'integer', min: 0, unit: 'bytes', sub: true, meaning: 'Largest document; larger ones are truncated or dropped (see truncate).', spec: S }),
  attrib({ name: 'truncate', key: 'truncate', honoured: 'full', type: 'boolean', default: true, meaning: 'Truncate documents over cut_off instead of dropping them.', spec: S }),
  attrib({ name: 'check_meta_robots', key: 'checkMetaRobots', honoured: 'full', type: 'boolean', default: true, meaning: 'Obey noindex and nofollow in robots META tags.', spec: S }),
  attrib({ name: 'obey_robots_delay', key: 'obeyRobotsDelay', honoured: 'full', type: 'boolean', default: false, meaning: 'Obey Crawl-delay in robots.txt.', spec: S }),
  attrib({ name: 'key_file', key: 'keyFile', honoured: 'full', type: 'string', meaning: 'PEM private key (unencrypted) of the TLS client certificate offered to HTTPS sites that ask for one; with cert_file. Relative to the configuration file.', spec: S }),
  attrib({ name: 'cert_file', key: 'certFile', honoured: 'full', type: 'string', meaning: 'PEM X.509 client certificate offered to HTTPS sites that ask for one; with key_file, checked against it when the configuration is validated.', spec: S }),
  attrib({ name: 'max_doc', key: 'maxDoc', honoured: 'full', type: 'integer', default: 100000, min: 0, sub: true, meaning: 'Documents downloaded from one site at most.', spec: S }),
  attrib({ name: 'enforce_delay_per_ip', key: 'enforceDelayPerIp', honoured: 'full', type: 'boolean', default: true, meaning: 'Sites sharing an IP address share the delay.', spec: S }),
  attrib({ name: 'wqfilter', key: 'wqfilter', honoured: 'not', type: 'boolean', default: true, meaning: 'Keep a URI out of the crawl queues when it is already there.', spec: S }),
  attrib({ name: 'smfilter', key: 'smfilterBits', honoured: 'full', type: 'integer', default: 0, min: 0, unit: 'bits', meaning: 'Size of the Bloom filter in front of the seen-URI set (0 = none).', spec: S }),
  attrib({ name: 'mufilter', key: 'mufilterBits', honoured: 'not', type: 'integer', default: 0, min: 0, unit: 'bits', meaning: 'Size of the Bloom filter on URIs sent to the multinode scheduler (0 = none). No counterpart in the multinode installation (docs/multinode.md): links go through the database, whose seen set drops repeats.', spec: S }),
  attrib({ name: 'umlogs', key: 'umlogs', honoured: 'not', type: 'boolean', default: true, meaning: 'Send all logs to the multinode scheduler. No counterpart in the multinode installation (docs/multinode.md): each node keeps its own logs in its data directory.', spec: S }),
  attrib({ name: 'sort_query_params', key: 'sortQueryParams', honoured: 'full', type: 'boolean', default: false, meaning: 'Sort query parameters by key.', spec: S }),
  attrib({ name: 'robots_timeout', key: 'robotsTimeoutS', honoured: 'full', type: 'integer', default: 300, min: 1, unit: 's', meaning: 'Longest time to download robots.txt.', spec: S }),
  attrib({ name: 'login_timeout', key: 'loginTimeoutS', honoured: 'full', type: 'integer', default: 300, min: 1, unit: 's', meaning: 'Longest time for a login request.', spec: S }),
  // Spec decision: login_failed_ignore appears only in the 3.2 example. trawl
  // reads it as: keep crawling a site whose form login failed.
  attrib({ name: 'login_failed_ignore', key: 'loginFailedIgnore', honoured: 'full', type: 'boolean', default: false, meaning: 'Crawl a site even when its form login failed (from the 3.2 example).', spec: 'MS-FSCCFG 3.2' }),
  attrib({ name: 'send_links_to', key: 'sendLinksTo', honoured: 'full', type: 'string', meaning: 'Collection that receives every extracted link.', spec: S }),
  attrib({ name: 'cookie_timeout', key: 'cookieTimeoutS', honoured: 'full', type: 'integer', default: 900, min: 0, unit: 's', meaning: 'How long a session cookie (one without Expires or Max-Age) is kept.', spec: S }),
  attrib({ name: 'refresh_when_idle', key: 'refreshWhenIdle', honoured: 'full', type: 'boolean', default: false, meaning: 'Start the next refresh cycle as soon as the crawl is idle (single node only).', spec: S }),
  attrib({ name: 'refresh_mode', key: 'refreshMode', honoured: 'full', type: 'string', default: 'scratch', allowed: ['append', 'prepend', 'scratch', 'soft', 'adaptive'], sub: true, meaning: 'What a new refresh cycle does with the queue: append, prepend, scratch, soft or adaptive. A sub-collection\'s own mode applies to its URIs (at each cycle start, and at its own refresh in trawl serve); adaptive only as the collection\'s mode.', spec: S }),
] as const;

const COLLECTION_SECTIONS = [
  INCLUDE_DOMAINS, EXCLUDE_DOMAINS, INCLUDE_URIS, EXCLUDE_URIS, LOG, STORAGE, PP, PPDUP, FEEDING, CACHESIZE,
  HTTP_ERRORS, FTP_ERRORS, WORKQUEUE_PRIORITY, LINK_EXTRACTION, LIMITS, FOCUSED, PASSWD, FTP_ACCT,
  EXCLUDE_HEADERS, VARIABLE_DELAY, ADAPTIVE, WEIGHTS, SITEMAP_WEIGHTS, SITE_CLUSTERS, CRAWLMODE,
  POST_PAYLOAD, RSS, LOGINS,
  EGRESS, TRAWL_LIMITS, TRAWL_RENDER, EXTRACTION, EXTRACTION_RULESETS, SITEMAPS, URLS, ELASTIC_RULES, ELASTIC, LOCKSS, SINKS, SUBMISSION, ENCRYPTION, TRAWL_TLS, TRAWL_HTTP, TRAWL_ROBOTS, POLITENESS, TRAWL_PURGE,
] as const;

/** The collection scope without sub-collections: what the typed view is built from. */
export const COLLECTION_BASE = section({
  name: '', key: 'collection', honoured: 'full', meaning: 'A crawl collection (DomainSpecification).', spec: 'MS-FSCCFG 2.2.2',
  attribs: COLLECTION_ATTRIBS,
  sections: COLLECTION_SECTIONS,
});

/**
 * MS-FSCCFG 2.2.4.33: the subset a sub-collection may set, plus its scope
 * rules and the rss and variable_delay sections.
 */
export const SUBCOLLECTION: SectionDef = section({
  name: '<subcollection>', key: 'subcollection', honoured: 'full', nameCheck: checkSectionName, meaning: 'A crawl sub-collection; also written as a <SubDomain> element.', spec: 'MS-FSCCFG 2.2.4.33',
  attribs: COLLECTION_ATTRIBS.filter((a: AttribDef) => a.sub === true),
  sections: COLLECTION_SECTIONS.filter((s: SectionDef) => s.sub === true),
});

export const SUBDOMAINS: SectionDef = section({
  name: 'subdomains', key: 'subdomains', honoured: 'full', meaning: 'Crawl sub-collections, one section each.', spec: 'MS-FSCCFG 2.2.4.33', attribs: [], sections: [], dynamicSection: SUBCOLLECTION,
});

/** The whole collection scope, as the reader and validator see it. A <Node> takes this scope too. */
export const COLLECTION: SectionDef = { ...COLLECTION_BASE, sections: [...COLLECTION_BASE.sections, SUBDOMAINS] };

/** The typed, effective settings of one collection or sub-collection. */
export type CollectionSettings = Settings<typeof COLLECTION_BASE>;

// ------------------------------------------------------------------ lookup

/** A parameter with the path to it, for docs and tests: `storage.datastore`, `http_errors.<code>`. */
export interface RegistryEntry {
  readonly path: string;
  readonly def: AttribDef | SectionDef;
  readonly places: readonly ('collection' | 'subcollection' | 'node' | 'login')[];
}

/** Walks the registry depth first, in spec order. */
export function listRegistry(): RegistryEntry[] {
  const out: RegistryEntry[] = [];
  const walk = (s: SectionDef, prefix: string, places: RegistryEntry['places'], top: boolean): void => {
    for (const a of s.attribs) {
      const p: RegistryEntry['places'] = top ? (a.sub ? ['collection', 'subcollection', 'node'] : ['collection', 'node']) : places;
      out.push({ path: prefix + a.name, def: a, places: p });
    }
    if (s.dynamicAttrib) out.push({ path: prefix + s.dynamicAttrib.name, def: s.dynamicAttrib, places });
    const children = [...s.sections, ...(s.dynamicSection ? [s.dynamicSection] : [])];
    for (const c of children) {
      if (c === SUBDOMAINS.dynamicSection) continue; // listed as the collection's subset, not again
      let p = places;
      if (top) p = c.sub ? ['collection', 'subcollection', 'node'] : ['collection', 'node'];
      if (c === LOGIN) p = ['collection', 'login', 'node'];
      out.push({ path: prefix + c.name, def: c, places: p });
      walk(c, `${prefix}${c.name}.`, p, false);
    }
  };
  walk(COLLECTION, '', ['collection', 'node'], true);
  return out;
}

/** Finds a fixed child attrib by name or alias. */
export function findAttrib(s: SectionDef, name: string): AttribDef | undefined {
  return s.attribs.find((a) => a.name === name || a.aliases?.includes(name));
}

export function findSection(s: SectionDef, name: string): SectionDef | undefined {
  return s.sections.find((c) => c.name === name);
}
