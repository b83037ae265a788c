/**
 * Reads the Elastic Open Crawler's YAML crawl configuration (the
 * `elastic/crawler` project, config/crawler.yml.example) into the same
 * model as MS-FSCCFG XML: one collection per file.
 *
 *   text ─► yaml (YAML 1.1, as the crawler's Ruby loader reads it: yes/no
 *           booleans, 5_242_880 integers, << merge keys; positions from a
 *           LineCounter)
 *        ─► plain tree with a position and key path on every node; top-level
 *           dotted keys (`elasticsearch.host: …`) nested as the crawler does
 *        ─► the MAPPING tables below, every value checked against the
 *           parameter registry at its YAML position
 *        ─► write-back check (writeConfigXml → readConfigXml) and checkRules
 *        ─► { document, diagnostics }
 *
 * Mapping (Elastic key → trawl parameter):
 *
 *   domains[].url                 include_domains.exact += host (no port: the
 *                                 domain rules match the host name only),
 *                                 include_uris.prefix += "scheme://host[:port]/"
 *                                 (so scheme and port stay part of the domain,
 *                                 as in Elastic), allowed_schemes += scheme.
 *                                 The URL may not have a path, query or user.
 *   domains[].seed_urls           start_uris; a domain without seeds is seeded
 *                                 with its URL + "/", as Elastic does
 *   domains[].sitemap_urls        trawl_sitemaps.urls, and use_sitemaps yes
 *   domains[].crawl_rules[]       trawl_crawl_rules.<domain URL>.rules, members
 *                                 "allow|disallow begins|ends|contains|regex P";
 *                                 policy deny (Open Crawler) and disallow (App
 *                                 Search) are both written as disallow
 *   sitemap_discovery_disabled    trawl_sitemaps.robots_discovery (negated);
 *                                 `false` also turns use_sitemaps on
 *   max_crawl_depth n             crawlmode.mode DEPTH:n-1 (Elastic gives seed
 *                                 URLs depth 1; trawl counts hops from them)
 *   max_title_size …              trawl_limits.max_title_bytes, max_body_bytes,
 *   max_*_size, max_*_count         max_keywords_bytes, max_description_bytes,
 *                                   max_indexed_links, max_headings,
 *                                   max_links_per_page (max_extracted_links_count)
 *   max_url_length/segments/params  trawl_limits.max_url_length/segments/params
 *   max_unique_url_count          trawl_limits.max_unique_urls
 *   max_duration                  trawl_limits.max_crawl_duration
 *   max_response_size             cut_off, and truncate no (Elastic drops an
 *                                 oversize response; it does not truncate it)
 *   (no key)                      delay 1 s (the Elastic crawlers have none; see readInner)
 *   purge_crawl_enabled           trawl_purge.enabled (yes when not given), and always
 *                                 http_errors 5xx DELETE:3 (the Elastic crawler's purge
 *                                 phase and content deletion)
 *   event_logs                    trawl_elastic.events (yes when not given)
 *   threads_per_crawl             max_sites (sites crawled at once)
 *   schedule.pattern              refresh, the cron expression's period (readSchedule)
 *   max_redirects                 max_redirects
 *   request_timeout               fetch_timeout
 *   connect_timeout               trawl_limits.connect_timeout
 *   socket_timeout                trawl_limits.socket_timeout (Elastic's default 10 s; 0: none)
 *   compression_enabled           accept_compression
 *   user_agent                    headers ["User-Agent: …"]
 *   loopback_allowed              trawl_egress.allow_loopback
 *   private_networks_allowed      trawl_egress.allow_private_networks
 *   output_sink + output_dir,     trawl_sinks.<console|file|elasticsearch>:
 *   output_index, elasticsearch     type, output_dir (file; Elastic's default
 *                                   ./crawled_docs), index, url (host + port),
 *                                   username, password, api_key, pipeline
 *                                   (Elastic's default ent-search-generic-ingestion
 *                                   unless pipeline_enabled is false)
 *   http_proxy_host/port/         proxy ["http://user:password@host:port"];
 *   username/password/protocol      port 8080 when absent, as in Elastic; https
 *                                   proxies and credentials the proxy syntax
 *                                   cannot hold are reported, not applied
 *   domains[].auth, auth[]        subdomains.elastic_auth_<n>: include_uris.prefix
 *   (type basic or raw)             the domain, headers + "Authorization: Basic …"
 *                                   or the raw header; over plain http only with
 *                                   http_auth_allowed
 *   crawl_id                      the collection's name (else the file's name)
 *   domains[].extraction_rulesets trawl_extraction_rulesets.<host>_<port>_<n>: domain,
 *                                 url_filters "type pattern", rules as JSON members
 *   binary_content_extraction_*   trawl_extraction.binary_mime_types (when enabled);
 *   content_extraction_*            the earlier names, read when the binary_ one is absent
 *   domains[].exclude_tags        trawl_elastic.exclude_tags "ORIGIN tag tag …"
 *   full_html_extraction_enabled  trawl_elastic.full_html
 *   stats_dump_interval           trawl_elastic.stats_interval (seconds, at least 1)
 *   ssl_verification_mode         trawl_tls.verification (full, certificate, none)
 *   ssl_ca_certificates           trawl_tls.ca_certificates (PEM text or file paths)
 *   default_encoding              trawl_extraction.default_charset (an encoding
 *                                 TextDecoder does not know: a warning)
 *   max_elastic_tag_size,         trawl_limits.max_elastic_tag_bytes,
 *   max_data_attribute_size         max_data_attribute_bytes
 *   (every sink)                  schema open_crawler: the Open Crawler's documents
 *   elasticsearch.pipeline_params trawl_sinks.elasticsearch.pipeline_params
 *                                 ("name=value"; Elastic's three default to true)
 *   elasticsearch.bulk_api.*      bulk_max_items, bulk_max_bytes
 *   elasticsearch.ssl_verify,     ssl_verify, ca_path
 *   ca_file / ca_path
 *   elasticsearch.ca_fingerprint  ca_fingerprint
 *   elasticsearch.request_timeout, request_timeout, compression, retries,
 *   compression, retry_on_failure,  retry_delay (retry_on_failure true: 3; false: 0)
 *   delay_on_retry
 *
 * Dotted keys are nested in every mapping, at every level (not inside
 * lists), as the crawler's loader does.
 *
 * Not applied: every other setting the crawler defines (the logging
 * keys, head_requests_enabled, the
 * Elasticsearch client's reload_on_failure, …) is a TRAWL_ERR_CONFIG_UNSUPPORTED
 * warning, one per key, saying it is not applied. A key the crawler does not
 * define is a TRAWL_ERR_CONFIG_YAML error with a "did you mean". A begins
 * crawl rule without a leading "/" is a warning (it never matches, as in
 * Elastic). ERB templates (`<%= ENV['X'] %>`) are not evaluated: such a value
 * is read as written, with a warning.
 *
 * Elastic's defaults, where they differ from MS-FSCCFG's, are written into
 * the collection for what the YAML does not set (elasticDefaults; the table
 * is in docs/elastic-migration.md): no exclude_exts, text/html only, robots.txt
 * sitemap discovery, robots.txt read again each crawl, depth 10, 100000 URLs,
 * 24 h, 10 MB responses dropped, 60 s request timeout, the Elastic event log.
 */

import { basename, extname } from 'node:path';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document } from 'yaml';
import type { SourceLocation } from '../core/errors.ts';
import type { AvailableSinkType } from '../core/sink-types.ts';
import { EXCLUDABLE_TAGS } from '../extract/elastic-content.ts';
import { didYouMean, type Diagnostic } from './diagnostics.ts';
import { childSection, emptySection, setLocations, type CollectionConfig, type SectionNode } from './model.ts';
import { COLLECTION, findAttrib, findSection } from './registry.ts';
import { checkRules } from './rules.ts';
import type { AttribDef, ParamValue, SectionDef } from './schema.ts';
import { describeSecretValue } from './secrets.ts';
import { INT32_MAX, INT32_MIN } from './values.ts';
import { writeConfigXml } from './writer.ts';
import { readConfigXml, type ReadResult } from './xml-reader.ts';

// ================================================================== mapping

type Scalar = number | boolean | string;
type Handler = 'domains' | 'name' | 'sink' | 'proxy' | 'auth' | 'binary' | 'encoding' | 'ca' | 'socket' | 'schedule';

/** How one Elastic key becomes trawl configuration. */
type Rule =
  | {
      readonly kind: 'value';
      readonly as: 'integer' | 'boolean' | 'string';
      /** The trawl parameter, as a dotted path of registry names. */
      readonly to: string;
      /** A lower bound of Elastic's own, checked before `map`, and why. */
      readonly min?: number;
      readonly minWhy?: string;
      readonly map?: (v: Scalar) => ParamValue;
      /** Further parameters set with it. */
      readonly also?: Readonly<Record<string, ParamValue>>;
    }
  | { readonly kind: 'handler'; readonly handler: Handler }
  /** Read by the reader of the mapping that holds it (a domain, a crawl rule, …). */
  | { readonly kind: 'field' }
  | { readonly kind: 'unsupported'; readonly hint?: string };

type JsOf<T> = T extends 'integer' ? number : T extends 'boolean' ? boolean : string;

function value<T extends 'integer' | 'boolean' | 'string'>(
  as: T,
  to: string,
  opts: { min?: number; minWhy?: string; map?: (v: JsOf<T>) => ParamValue; also?: Record<string, ParamValue> } = {},
): Rule {
  return { kind: 'value', as, to, ...opts, map: opts.map as ((v: Scalar) => ParamValue) | undefined };
}
const by = (handler: Handler): Rule => ({ kind: 'handler', handler });
const none = (hint?: string): Rule => ({ kind: 'unsupported', ...(hint !== undefined ? { hint } : {}) });
const field: Rule = { kind: 'field' };

const LOGS_HINT = 'trawl always writes its event log, JSON lines, to logs/crawl.log in the data directory (trawl serve: one file per collection), in the Elastic crawler\'s event format for a YAML collection';
const PER_DOMAIN = 'give it per domain under domains[]; the Elastic crawler computes the top-level value from domains';

/** The top level of a crawler YAML file: every key the Elastic crawler defines. */
const TOP_LEVEL: Readonly<Record<string, Rule>> = {
  // ------------------------------------------------ what to crawl
  domains: by('domains'),
  crawl_id: by('name'),
  max_crawl_depth: value('integer', 'crawlmode.mode', { min: 1, minWhy: 'seed URLs have depth 1, so a smaller depth crawls nothing', map: (n) => `DEPTH:${n - 1}` }),
  sitemap_discovery_disabled: value('boolean', 'trawl_sitemaps.robots_discovery', { map: (b) => !b }),
  // ------------------------------------------------ crawl-level limits
  max_duration: value('integer', 'trawl_limits.max_crawl_duration'),
  max_unique_url_count: value('integer', 'trawl_limits.max_unique_urls'),
  max_url_length: value('integer', 'trawl_limits.max_url_length'),
  max_url_segments: value('integer', 'trawl_limits.max_url_segments'),
  max_url_params: value('integer', 'trawl_limits.max_url_params'),
  // ------------------------------------------------ request-level limits
  max_redirects: value('integer', 'max_redirects'),
  max_response_size: value('integer', 'cut_off', { also: { truncate: false } }),
  request_timeout: value('integer', 'fetch_timeout'),
  connect_timeout: value('integer', 'trawl_limits.connect_timeout'),
  compression_enabled: value('boolean', 'accept_compression'),
  user_agent: value('string', 'headers', { map: (s) => [`User-Agent: ${s}`] }),
  // ------------------------------------------------ extraction limits
  max_title_size: value('integer', 'trawl_limits.max_title_bytes'),
  max_body_size: value('integer', 'trawl_limits.max_body_bytes'),
  max_keywords_size: value('integer', 'trawl_limits.max_keywords_bytes'),
  max_description_size: value('integer', 'trawl_limits.max_description_bytes'),
  max_extracted_links_count: value('integer', 'trawl_limits.max_links_per_page'),
  max_indexed_links_count: value('integer', 'trawl_limits.max_indexed_links'),
  max_headings_count: value('integer', 'trawl_limits.max_headings'),
  max_elastic_tag_size: value('integer', 'trawl_limits.max_elastic_tag_bytes'),
  max_data_attribute_size: value('integer', 'trawl_limits.max_data_attribute_bytes'),
  // ------------------------------------------------ network safety
  loopback_allowed: value('boolean', 'trawl_egress.allow_loopback'),
  private_networks_allowed: value('boolean', 'trawl_egress.allow_private_networks'),
  // ------------------------------------------------ output
  output_sink: by('sink'),
  output_dir: by('sink'),
  output_index: by('sink'),
  elasticsearch: by('sink'),
  // ------------------------------------------------ proxy and authentication
  http_proxy_host: by('proxy'),
  http_proxy_port: by('proxy'),
  http_proxy_protocol: by('proxy'),
  http_proxy_username: by('proxy'),
  http_proxy_password: by('proxy'),
  auth: by('auth'),
  http_auth_allowed: by('auth'),
  // ------------------------------------------------ no trawl equivalent
  schedule: by('schedule'),
  // The Open Crawler's fetch threads; trawl crawls a site one request at a time (delay), so the threads bound the sites crawled at once.
  threads_per_crawl: value('integer', 'max_sites', { min: 1, minWhy: 'a crawl needs one thread at least' }),
  socket_timeout: by('socket'),
  ssl_ca_certificates: by('ca'),
  ssl_verification_mode: value('string', 'trawl_tls.verification'),
  binary_content_extraction_enabled: by('binary'),
  binary_content_extraction_mime_types: by('binary'),
  // The Open Crawler's earlier names of binary_content_extraction_enabled and _mime_types.
  content_extraction_enabled: by('binary'),
  content_extraction_mime_types: by('binary'),
  default_encoding: by('encoding'),
  head_requests_enabled: none('trawl asks for a page with one GET, conditional (If-Modified-Since, If-None-Match) when it has a copy; a response whose declared size is too large is dropped before its body is read'),
  purge_crawl_enabled: value('boolean', 'trawl_purge.enabled'),
  full_html_extraction_enabled: value('boolean', 'trawl_elastic.full_html'),
  markdown_conversion: none('a document\'s body is the page\'s text; trawl does not write it as Markdown'),
  log_level: none('trawl has no log level per collection: trawl serve\'s is its --log-level option (or TRAWL_LOG_LEVEL), and the event log is written whole'),
  event_logs: value('boolean', 'trawl_elastic.events'),
  event_logs_to_file: none(LOGS_HINT),
  system_logs_to_file: none(LOGS_HINT),
  log_file_directory: none(LOGS_HINT),
  log_file_rotation_policy: none(LOGS_HINT),
  stats_dump_interval: value('integer', 'trawl_elastic.stats_interval', { map: (n) => Math.max(1, n) }),
  url_queue: none(),
  url_queue_size_limit: none(),
  crawl_stage: none(),
  sink_lock_retry_interval: none(),
  sink_lock_max_retries: none(),
  domain_allowlist: none(PER_DOMAIN),
  seed_urls: none(PER_DOMAIN),
  sitemap_urls: none(PER_DOMAIN),
  crawl_rules: none(PER_DOMAIN),
  extraction_rules: none(PER_DOMAIN),
  domains_extraction_rules: none(PER_DOMAIN),
  exclude_tags: none(PER_DOMAIN),
  robots_txt_service: none('an internal object of the crawler'),
  http_header_service: none('an internal object of the crawler'),
  results_collection: none('an internal object of the crawler'),
};

/** One entry of `domains`. */
const DOMAIN_KEYS: Readonly<Record<string, Rule>> = {
  url: field,
  seed_urls: field,
  sitemap_urls: field,
  crawl_rules: field,
  auth: field,
  extraction_rulesets: field,
  exclude_tags: field,
};

/** One entry of `domains[].crawl_rules`. */
const CRAWL_RULE_KEYS: Readonly<Record<string, Rule>> = { policy: field, type: field, pattern: field };
/** Elastic policy → trawl policy (allow/deny in the Open Crawler, allow/disallow in App Search). */
const POLICIES: Readonly<Record<string, 'allow' | 'disallow'>> = { allow: 'allow', deny: 'disallow', disallow: 'disallow' };
const RULE_TYPES = ['begins', 'ends', 'contains', 'regex'] as const;
/** The registry's definition of trawl_crawl_rules.<domain>.rules, whose check a rule must pass. */
const RULES_DEF = findSection(COLLECTION, 'trawl_crawl_rules')?.dynamicSection?.attribs.find((a) => a.name === 'rules');

/** The registry's definition of trawl_extraction_rulesets.<ruleset>.rules, whose check a rule must pass. */
const RULESET_RULE_DEF = findSection(COLLECTION, 'trawl_extraction_rulesets')?.dynamicSection?.attribs.find((a) => a.name === 'rules');

/** `elasticsearch:` (also from the separate elasticsearch.yml). */
const ELASTICSEARCH_KEYS: Readonly<Record<string, Rule>> = {
  host: field,
  port: field,
  username: field,
  password: field,
  api_key: field,
  pipeline: field,
  pipeline_enabled: field,
  pipeline_params: field,
  bulk_api: field,
  ssl_verify: field,
  ca_path: field,
  ca_file: field,
  ca_fingerprint: field,
  verify_hostname: none('the Open Crawler reads it only to warn when ssl_verify is false; trawl, as its client does, checks the host name whenever it checks the certificate (ssl_verify)'),
  compression: field,
  request_timeout: field,
  retry_on_failure: field,
  reload_on_failure: none('trawl sends to the one host given, so there is no node list to reload'),
  delay_on_retry: field,
};

/** One entry of `auth` (type basic: domain, username, password; type raw: domain, header). */
const AUTH_KEYS: Readonly<Record<string, Rule>> = { domain: field, type: field, username: field, password: field, header: field };
/** The Elastic crawler's own output_sink values (trawl's CiteSeerX sinks are not among them). */
const SINK_TYPES = ['console', 'file', 'elasticsearch'] as const satisfies readonly AvailableSinkType[];
const ELASTIC_DEFAULT_OUTPUT_DIR = './crawled_docs';
const ELASTIC_DEFAULT_PIPELINE = 'ent-search-generic-ingestion';
const ELASTIC_DEFAULT_PROXY_PORT = 8080;
/** The Open Crawler's Elasticsearch client: retries when retry_on_failure is true or not a count, and delay_on_retry when not a positive whole number. */
const ELASTIC_DEFAULT_ES_RETRIES = 3;
const ELASTIC_DEFAULT_ES_RETRY_DELAY = 2;
/** The registry's bound on trawl_sinks.<sink>.retries and retry_delay. */
const MAX_ES_RETRIES = 20;
const MAX_ES_RETRY_DELAY = 600;
/** The Open Crawler's pipeline parameters, each true unless elasticsearch.pipeline_params sets it. */
const ELASTIC_DEFAULT_PIPELINE_PARAMS = ['_reduce_whitespace', '_run_ml_inference', '_extract_binary_content'] as const;
const BULK_API_KEYS: Readonly<Record<string, Rule>> = { max_items: field, max_size_bytes: field };
/** Values never echoed in a message. */
const SECRET_KEYS = new Set(['password', 'api_key', 'http_proxy_password', 'header']);

// ============================================================ the YAML tree

interface Pos {
  readonly line: number;
  readonly column: number;
}

/** A YAML node with its position and key path (`domains[0].crawl_rules[1].type`). */
type YNode =
  | { readonly kind: 'map'; readonly pos: Pos; readonly path: string; readonly entries: YEntry[] }
  | { readonly kind: 'seq'; readonly pos: Pos; readonly path: string; readonly items: YNode[] }
  | { readonly kind: 'scalar'; readonly pos: Pos; readonly path: string; readonly value: unknown };

interface YEntry {
  readonly key: string;
  readonly keyPos: Pos;
  /** The key path of the entry, the same as `value.path`. */
  readonly path: string;
  readonly value: YNode;
}

type YMap = Extract<YNode, { kind: 'map' }>;

/** What a diagnostic points at. */
interface At {
  readonly pos: Pos;
  readonly path: string;
}

const keyAt = (e: YEntry): At => ({ pos: e.keyPos, path: e.path });
const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

class TooBig extends Error {}

interface Conv {
  readonly doc: Document;
  readonly lc: LineCounter;
  readonly r: Reporter;
  budget: number;
  /**
   * Each alias's anchored node, found once: the yaml package's
   * Alias.resolve walks the whole document every time it is called, which
   * made a billion-laughs document take seconds to reach the node budget.
   */
  readonly targets: Map<unknown, unknown>;
}

const MAX_NODES = 100_000;
const MAX_DEPTH = 64;

function posAt(lc: LineCounter, offset: number | undefined, fallback: Pos): Pos {
  if (offset === undefined) return fallback;
  const p = lc.linePos(offset);
  return { line: p.line, column: p.col };
}

/** Converts the yaml package's node to a YNode, resolving aliases and merge keys. */
function convert(node: unknown, path: string, fallback: Pos, cx: Conv, depth: number): YNode {
  if (--cx.budget < 0 || depth > MAX_DEPTH) throw new TooBig();
  const range = (node as { range?: [number, number, number] } | null)?.range;
  const pos = posAt(cx.lc, range?.[0], fallback);
  if (isAlias(node)) {
    let target = cx.targets.get(node);
    if (target === undefined && !cx.targets.has(node)) {
      target = node.resolve(cx.doc);
      cx.targets.set(node, target);
    }
    if (target === undefined) {
      cx.r.error({ pos, path }, `the alias *${node.source} names no anchor`);
      return { kind: 'scalar', pos, path, value: null };
    }
    return convert(target, path, pos, cx, depth + 1);
  }
  if (isMap(node)) {
    const entries: YEntry[] = [];
    const merged: YEntry[] = [];
    for (const pair of node.items) {
      const keyRange = (pair.key as { range?: [number, number, number] } | null)?.range;
      const keyPos = posAt(cx.lc, keyRange?.[0], pos);
      if (isScalar(pair.key) && typeof pair.key.value === 'symbol') {
        // A << merge key: the entries of the map(s) it names, unless given here.
        const sources = isSeq(pair.value) ? pair.value.items : [pair.value];
        for (const s of sources) {
          const m = convert(s, path, keyPos, cx, depth + 1);
          if (m.kind === 'map') merged.push(...m.entries);
          else cx.r.error({ pos: keyPos, path }, 'a << merge key must name a mapping or a list of mappings');
        }
        continue;
      }
      if (!isScalar(pair.key) && pair.key !== null) {
        cx.r.error({ pos: keyPos, path }, 'a key must be a plain name, not a mapping or a list');
        continue;
      }
      const raw = isScalar(pair.key) ? pair.key.value : null;
      const key = typeof raw === 'string' ? raw : String((pair.key as { source?: string } | null)?.source ?? raw);
      const p = join(path, key);
      entries.push({ key, keyPos, path: p, value: convert(pair.value, p, keyPos, cx, depth + 1) });
    }
    const own = new Set(entries.map((e) => e.key));
    for (const e of merged) if (!own.has(e.key)) entries.push(e);
    return { kind: 'map', pos, path, entries };
  }
  if (isSeq(node)) {
    return { kind: 'seq', pos, path, items: node.items.map((item, i) => convert(item, `${path}[${i}]`, pos, cx, depth + 1)) };
  }
  if (isScalar(node)) {
    if (typeof node.value === 'string' && node.value.includes('<%')) {
      cx.r.warn({ pos, path }, 'an ERB template (<% … %>) is not evaluated by trawl; the value is read as written', 'TRAWL_ERR_CONFIG_UNSUPPORTED');
    }
    return { kind: 'scalar', pos, path, value: node.value };
  }
  return { kind: 'scalar', pos, path, value: null };
}

/**
 * The crawler nests dotted keys (`elasticsearch.host: x` is
 * `elasticsearch: {host: x}`) in every mapping that is the value of a key,
 * at every level (`pipeline_params._reduce_whitespace: true` inside
 * `elasticsearch:`), but not in the mappings of a list; so does trawl.
 */
function nestDottedKeysDeep(m: YMap, r: Reporter): YMap {
  const nested = nestDottedKeys(m, r);
  return { ...nested, entries: nested.entries.map((e) => (e.value.kind === 'map' ? { ...e, value: nestDottedKeysDeep(e.value, r) } : e)) };
}

/**
 * Nests the dotted keys of one mapping. A key given both ways is merged;
 * the same leaf twice is an error.
 */
function nestDottedKeys(root: YMap, r: Reporter): YMap {
  const out: YEntry[] = [];
  // Each entry list's entries by key, so that a file of many keys is read in linear time.
  const indexes = new Map<YEntry[], Map<string, YEntry>>();
  const find = (into: YEntry[], key: string): YEntry | undefined => {
    let index = indexes.get(into);
    if (!index) {
      index = new Map();
      for (const x of into) if (!index.has(x.key)) index.set(x.key, x);
      indexes.set(into, index);
    }
    return index.get(key);
  };
  const push = (into: YEntry[], e: YEntry): void => {
    into.push(e);
    const index = indexes.get(into);
    if (index && !index.has(e.key)) index.set(e.key, e);
  };
  const insert = (into: YEntry[], parts: string[], e: YEntry, prefix: string): void => {
    const [head, ...rest] = parts as [string, ...string[]];
    const path = join(prefix, head);
    const existing = find(into, head);
    if (rest.length === 0) {
      if (!existing) {
        push(into, { ...e, key: head, path });
        return;
      }
      if (existing.value.kind === 'map' && e.value.kind === 'map') {
        for (const child of e.value.entries) insert(existing.value.entries, [child.key], child, path);
        return;
      }
      r.error(keyAt(e), `${path} is given twice (first on line ${existing.keyPos.line})`);
      return;
    }
    let holder = existing;
    if (!holder) {
      holder = { key: head, keyPos: e.keyPos, path, value: { kind: 'map', pos: e.keyPos, path, entries: [] } };
      push(into, holder);
    }
    if (holder.value.kind !== 'map') {
      r.error(keyAt(e), `${e.key} conflicts with ${path} on line ${holder.keyPos.line}, which is not a mapping`);
      return;
    }
    insert(holder.value.entries, rest, e, path);
  };
  for (const e of root.entries) {
    const parts = e.key.split('.');
    if (parts.some((p) => p === '')) {
      r.error(keyAt(e), `the key ${JSON.stringify(e.key)} has an empty part between dots`);
      continue;
    }
    insert(out, parts, e, root.path);
  }
  return { ...root, entries: out };
}

// ================================================================ reporting

class Reporter {
  readonly diagnostics: Diagnostic[] = [];
  readonly file: string | undefined;
  constructor(file: string | undefined) {
    this.file = file;
  }

  loc(pos: Pos): SourceLocation {
    return { ...(this.file !== undefined ? { file: this.file } : {}), line: pos.line, column: pos.column };
  }

  error(at: At, message: string, code: Diagnostic['code'] = 'TRAWL_ERR_CONFIG_YAML'): void {
    this.push('error', at, message, code);
  }

  warn(at: At, message: string, code: Diagnostic['code'] = 'TRAWL_ERR_CONFIG_YAML'): void {
    this.push('warning', at, message, code);
  }

  private push(severity: Diagnostic['severity'], at: At, message: string, code: Diagnostic['code']): void {
    this.diagnostics.push({ severity, code, message, location: this.loc(at.pos), ...(at.path !== '' ? { param: at.path } : {}) });
  }

  unsupported(e: YEntry, hint: string | undefined): void {
    this.warn(keyAt(e), `${e.path} has no trawl equivalent and is not applied${hint ? `; ${hint}` : ''}`, 'TRAWL_ERR_CONFIG_UNSUPPORTED');
  }

  unknown(e: YEntry, known: Iterable<string>, where: string): void {
    const guess = didYouMean(e.key, known);
    this.error(keyAt(e), `unknown key ${JSON.stringify(e.key)} in ${where}${guess ? `; did you mean ${JSON.stringify(guess)}?` : ' (the Elastic crawler does not define it)'}`);
  }
}

function describe(v: unknown, secret = false): string {
  if (secret) return '(value hidden)';
  if (v === null || v === undefined) return 'nothing';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 80 ? `${v.slice(0, 77)}...` : v)}`;
  if (v instanceof Date) return `the date ${v.toISOString().slice(0, 10)}`;
  if (typeof v === 'object') return Array.isArray(v) ? 'a list' : 'a mapping';
  return String(v);
}

const kindName = (n: YNode): string => (n.kind === 'map' ? 'a mapping' : n.kind === 'seq' ? 'a list' : describe(n.value));
const isSecret = (path: string): boolean => SECRET_KEYS.has(path.slice(path.lastIndexOf('.') + 1));

/** Typed reads of YAML values; each reports what is wrong and returns undefined. */
class Read {
  readonly r: Reporter;
  constructor(r: Reporter) {
    this.r = r;
  }

  int(n: YNode): number | undefined {
    if (n.kind === 'scalar' && typeof n.value === 'number' && Number.isInteger(n.value)) return n.value;
    const quoted = n.kind === 'scalar' && typeof n.value === 'string' && /^[+-]?\d[\d_]*$/.test(n.value.trim());
    this.r.error(n, `expected a whole number, got ${n.kind === 'scalar' ? describe(n.value, isSecret(n.path)) : kindName(n)}${quoted ? ' (write it without quotes)' : ''}`);
    return undefined;
  }

  bool(n: YNode): boolean | undefined {
    if (n.kind === 'scalar' && typeof n.value === 'boolean') return n.value;
    const quoted = n.kind === 'scalar' && typeof n.value === 'string' && /^(?:true|false|yes|no|on|off)$/i.test(n.value.trim());
    this.r.error(n, `expected true or false, got ${n.kind === 'scalar' ? describe(n.value) : kindName(n)}${quoted ? ' (write it without quotes)' : ''}`);
    return undefined;
  }

  /** A string; numbers are taken as their text, as the crawler's Ruby does for names and keys. */
  str(n: YNode): string | undefined {
    let s: string | undefined;
    if (n.kind === 'scalar' && typeof n.value === 'string') s = n.value.trim();
    else if (n.kind === 'scalar' && typeof n.value === 'number' && Number.isFinite(n.value)) s = String(n.value);
    if (s === undefined) {
      this.r.error(n, `expected a string, got ${n.kind === 'scalar' ? describe(n.value, isSecret(n.path)) : kindName(n)}`);
      return undefined;
    }
    if (s === '') {
      this.r.error(n, 'expected a non-empty string');
      return undefined;
    }
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(s)) {
      this.r.error(n, 'control characters (line breaks, tabs, …) are not allowed in this value');
      return undefined;
    }
    return s;
  }

  /** A list; null (`key:` with nothing after it) is an empty list, as the crawler reads it. */
  list(n: YNode): YNode[] | undefined {
    if (n.kind === 'seq') return n.items;
    if (n.kind === 'scalar' && n.value === null) return [];
    this.r.error(n, `expected a list, got ${kindName(n)}`);
    return undefined;
  }

  map(n: YNode): YMap | undefined {
    if (n.kind === 'map') return n;
    this.r.error(n, `expected a mapping (key: value lines), got ${kindName(n)}`);
    return undefined;
  }

  /** An http(s) URL, normalised. */
  url(n: YNode): URL | undefined {
    const s = this.str(n);
    if (s === undefined) return undefined;
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      this.r.error(n, `expected an absolute http or https URL, got ${describe(s)}`);
      return undefined;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      this.r.error(n, `expected an http or https URL, got the scheme ${u.protocol.slice(0, -1)}`);
      return undefined;
    }
    return u;
  }
}

// ============================================================ model builder

/** Walks the registry to the attrib at `path` (section names, then the attrib's name). */
function attribDef(path: readonly string[]): { def?: AttribDef; problem?: string } {
  let s: SectionDef = COLLECTION;
  for (const name of path.slice(0, -1)) {
    const fixed = findSection(s, name);
    const next = fixed ?? s.dynamicSection;
    if (!next) return { problem: `trawl has no section ${path.join('.')}` };
    if (!fixed) {
      const problem = next.nameCheck?.(name);
      if (problem !== undefined) return { problem: `the section name ${JSON.stringify(name)} is not valid: expected ${problem}` };
    }
    s = next;
  }
  const name = path[path.length - 1]!;
  const def = findAttrib(s, name) ?? s.dynamicAttrib;
  if (!def) return { problem: `trawl has no parameter ${path.join('.')}` };
  const problem = s.dynamicAttrib === def ? def.nameCheck?.(name) : undefined;
  return problem !== undefined ? { problem: `the name ${JSON.stringify(name)} is not valid: expected ${problem}` } : { def };
}

/** The registry's check of one value (or one list member), as the XML reader applies it. */
function valueProblem(def: AttribDef, v: ParamValue, member: boolean): string | undefined {
  const type = member ? 'string' : def.type;
  if (type === 'list-string') return Array.isArray(v) ? undefined : 'a list';
  if (type === 'boolean') return typeof v === 'boolean' ? undefined : 'true or false';
  if (type === 'integer' || type === 'real') {
    if (typeof v !== 'number' || !Number.isFinite(v)) return 'a number';
    if (type === 'integer' && (!Number.isInteger(v) || v < INT32_MIN || v > INT32_MAX)) return 'a whole number within INT32 (-2147483648 to 2147483647)';
    if ((def.min !== undefined && v < def.min) || (def.max !== undefined && v > def.max)) {
      const range = def.max === undefined ? `at least ${def.min}` : def.min === undefined ? `at most ${def.max}` : `between ${def.min} and ${def.max}`;
      return `a value ${range}${def.unit ? ` (${def.unit})` : ''}`;
    }
    return undefined;
  }
  if (typeof v !== 'string') return 'a string';
  if (def.allowed && !def.allowed.includes(v)) return `one of ${def.allowed.join(', ')}`;
  return def.check?.(v);
}

/** Builds the collection's tree, checking every value against the registry at its YAML position. */
class Builder {
  readonly root: SectionNode = emptySection();
  /** trawl parameter path (dotted, as the XML reader names it) → where in the YAML it came from. */
  readonly origins = new Map<string, At>();
  readonly r: Reporter;
  constructor(r: Reporter) {
    this.r = r;
  }

  private holder(path: readonly string[]): SectionNode {
    let node = this.root;
    for (const name of path.slice(0, -1)) node = childSection(node, name);
    return node;
  }

  private resolve(path: readonly string[], at: At): AttribDef | undefined {
    const { def, problem } = attribDef(path);
    if (!def) this.r.error(at, problem ?? `trawl has no parameter ${path.join('.')}`);
    return def;
  }

  private bad(at: At, path: readonly string[], def: AttribDef, v: ParamValue, problem: string): void {
    this.r.error(at, `expected ${problem} for ${path.join('.')}, got ${def.secret !== undefined && typeof v === 'string' ? describeSecretValue(def, v) : describe(v, def.secret !== undefined || isSecret(at.path))}`);
  }

  /** Sets a scalar (or a whole list); false when the value is refused. */
  set(path: readonly string[], v: ParamValue, at: At): boolean {
    const def = this.resolve(path, at);
    if (!def) return false;
    const problem = valueProblem(def, v, false);
    if (problem !== undefined) {
      this.bad(at, path, def, v, problem);
      return false;
    }
    if (Array.isArray(v)) {
      for (const m of v) {
        const p = valueProblem(def, m, true);
        if (p !== undefined) {
          this.bad(at, path, def, m, p);
          return false;
        }
      }
    }
    this.holder(path).attribs.set(path[path.length - 1]!, v);
    this.origins.set(path.join('.'), at);
    return true;
  }

  /** Appends one member to a list-string parameter, once unless `repeat`. */
  add(path: readonly string[], member: string, at: At, repeat = false): boolean {
    const def = this.resolve(path, at);
    if (!def) return false;
    const problem = def.type === 'list-string' ? valueProblem(def, member, true) : 'a list';
    if (problem !== undefined) {
      this.bad(at, path, def, member, problem);
      return false;
    }
    const node = this.holder(path);
    const name = path[path.length - 1]!;
    const list = (node.attribs.get(name) as string[] | undefined) ?? [];
    if (repeat || !list.includes(member)) list.push(member);
    node.attribs.set(name, list);
    if (!this.origins.has(path.join('.'))) this.origins.set(path.join('.'), at);
    return true;
  }

  get(path: readonly string[]): ParamValue | undefined {
    let node: SectionNode | undefined = this.root;
    for (const name of path.slice(0, -1)) node = node?.sections.get(name);
    return node?.attribs.get(path[path.length - 1]!);
  }
}

// ================================================================ handlers

interface Ctx {
  readonly r: Reporter;
  readonly read: Read;
  readonly b: Builder;
  readonly root: YMap;
  /** Each domain's auth (domains[].auth), applied by readAuth once http_auth_allowed is known. */
  readonly domainAuth: { readonly entry: YEntry; readonly domain: URL }[];
}

/** A YAML node as plain data (mappings as objects, lists as arrays). */
function toPlain(n: YNode): unknown {
  if (n.kind === 'scalar') return n.value instanceof Date ? n.value.toISOString() : n.value;
  if (n.kind === 'seq') return n.items.map(toPlain);
  return Object.fromEntries(n.entries.map((e) => [e.key, toPlain(e.value)]));
}

/** The entries of a mapping, with unknown and unsupported keys reported; returns the supported ones by name. */
function sortEntries(m: YMap, table: Readonly<Record<string, Rule>>, where: string, r: Reporter): Map<string, YEntry> {
  const out = new Map<string, YEntry>();
  for (const e of m.entries) {
    const rule = Object.hasOwn(table, e.key) ? table[e.key] : undefined;
    if (rule === undefined) r.unknown(e, Object.keys(table), where);
    else if (rule.kind === 'unsupported') r.unsupported(e, rule.hint);
    else out.set(e.key, e);
  }
  return out;
}

function applyValue(rule: Extract<Rule, { kind: 'value' }>, e: YEntry, cx: Ctx): void {
  const n = e.value;
  if (n.kind === 'scalar' && n.value === null) {
    cx.r.warn(keyAt(e), `${e.path} has no value and is not applied`);
    return;
  }
  const v = rule.as === 'integer' ? cx.read.int(n) : rule.as === 'boolean' ? cx.read.bool(n) : cx.read.str(n);
  if (v === undefined) return;
  if (rule.min !== undefined && typeof v === 'number' && v < rule.min) {
    cx.r.error(n, `expected at least ${rule.min}, got ${v}${rule.minWhy ? ` (${rule.minWhy})` : ''}`);
    return;
  }
  const to = rule.to.split('.');
  if (!cx.b.set(to, rule.map ? rule.map(v) : v, n)) return;
  for (const [p, also] of Object.entries(rule.also ?? {})) cx.b.set(p.split('.'), also, n);
}

/** The collection's name: crawl_id, else the file's name without its extension, else "default". */
function collectionName(entry: YEntry | undefined, file: string | undefined, read: Read): string {
  let raw: string | undefined;
  if (entry) raw = read.str(entry.value);
  if (raw === undefined && file !== undefined) raw = basename(file, extname(file));
  const clean = (raw ?? '').replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^[_.]+|_+$/g, '').slice(0, 100);
  return clean === '' ? 'default' : clean;
}

function readDomains(entry: YEntry | undefined, cx: Ctx): void {
  const { r, read, b } = cx;
  const whole: At = entry ? keyAt(entry) : { pos: cx.root.pos, path: '' };
  if (!entry) {
    r.error(whole, 'no domains: the Elastic crawler needs at least one domain (domains: - url: https://…)');
    return;
  }
  const items = read.list(entry.value);
  if (items === undefined) return;
  if (items.length === 0) {
    r.error(whole, 'domains is empty: the Elastic crawler needs at least one domain');
    return;
  }
  const origins = new Map<string, YNode>();
  const seeds: { url: URL; at: At }[] = [];
  for (const item of items) {
    const m = read.map(item);
    if (!m) continue;
    const keys = sortEntries(m, DOMAIN_KEYS, 'a domain', r);
    const urlEntry = keys.get('url');
    if (!urlEntry) {
      r.error(item, 'a domain needs a url (scheme, host and optional port, e.g. https://www.example.com)');
      continue;
    }
    const u = read.url(urlEntry.value);
    if (!u) continue;
    const at: At = urlEntry.value;
    if (u.username !== '' || u.password !== '') {
      r.error(at, 'a domain URL may not hold a user name or password (use auth)');
      continue;
    }
    if (u.search !== '' || u.hash !== '' || (u.pathname !== '/' && u.pathname !== '')) {
      r.error(at, `a domain URL cannot have a path, query or fragment: give scheme, host and port only (${u.origin}), and use seed_urls and crawl_rules for paths`);
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*\/\s*$/i.test(String(urlEntry.value.kind === 'scalar' ? urlEntry.value.value : ''))) {
      r.warn(at, 'the Elastic crawler refuses a domain URL that ends in "/"; trawl reads it without the "/"');
    }
    const origin = u.origin;
    const first = origins.get(origin);
    if (first) {
      r.error(at, `the domain ${origin} is given twice (first on line ${first.pos.line}); domain URLs must be unique`);
      continue;
    }
    origins.set(origin, urlEntry.value);
    b.add(['include_domains', 'exact'], u.hostname, at);
    b.add(['include_uris', 'prefix'], `${origin}/`, at);
    b.add(['allowed_schemes'], u.protocol.slice(0, -1), at);

    // Seeds: the domain's own, or its URL + "/" when it has none (an empty list too).
    const seedEntry = keys.get('seed_urls');
    const seedItems = seedEntry ? read.list(seedEntry.value) : [];
    for (const s of seedItems ?? []) {
      const su = read.url(s);
      if (su) seeds.push({ url: su, at: s });
    }
    if (seedItems?.length === 0) seeds.push({ url: new URL(`${origin}/`), at });

    const sitemapEntry = keys.get('sitemap_urls');
    for (const s of (sitemapEntry ? read.list(sitemapEntry.value) : []) ?? []) {
      const su = read.url(s);
      if (su) b.add(['trawl_sitemaps', 'urls'], su.href, s);
    }

    const rulesEntry = keys.get('crawl_rules');
    for (const rule of (rulesEntry ? read.list(rulesEntry.value) : []) ?? []) {
      const member = readCrawlRule(rule, cx);
      if (member !== undefined) b.add(['trawl_crawl_rules', origin, 'rules'], member, rule, true);
    }

    // exclude_tags: HTML5 element names, left out of the body text of this domain's pages.
    const tagsEntry = keys.get('exclude_tags');
    const tagItems = tagsEntry ? read.list(tagsEntry.value) : [];
    const tags: string[] = [];
    for (const t of tagItems ?? []) {
      const tag = read.str(t)?.toLowerCase();
      if (tag === undefined) continue;
      if (!EXCLUDABLE_TAGS.has(tag)) r.error(t, `${JSON.stringify(tag)} is not an HTML5 tag the Elastic crawler accepts in exclude_tags`);
      else if (!tags.includes(tag)) tags.push(tag);
    }
    if (tags.length > 0) b.add(['trawl_elastic', 'exclude_tags'], `${origin} ${tags.join(' ')}`, tagsEntry!.value);

    const authEntry = keys.get('auth');
    if (authEntry && !(authEntry.value.kind === 'scalar' && authEntry.value.value === null)) cx.domainAuth.push({ entry: authEntry, domain: u });

    // Extraction rulesets: trawl_extraction_rulesets.<host>_<port>_<n>, rules as JSON members.
    const rulesetsEntry = keys.get('extraction_rulesets');
    ((rulesetsEntry ? read.list(rulesetsEntry.value) : []) ?? []).forEach((rs, i) => {
      const m = read.map(rs);
      if (!m) return;
      const name = `${u.hostname}_${u.port || (u.protocol === 'https:' ? '443' : '80')}_${i + 1}`.replace(/[^A-Za-z0-9_.-]/g, '_');
      b.set(['trawl_extraction_rulesets', name, 'domain'], origin, rs);
      for (const e of m.entries) {
        if (e.key === 'url_filters') {
          for (const f of read.list(e.value) ?? []) {
            const fm = read.map(f);
            const type = fm?.entries.find((x) => x.key === 'type');
            const pattern = fm?.entries.find((x) => x.key === 'pattern');
            const t = type ? read.str(type.value) : undefined;
            const p = pattern ? read.str(pattern.value) : undefined;
            if (t === undefined || p === undefined) r.error(f, 'a url filter needs type (begins|ends|contains|regex) and pattern');
            else b.add(['trawl_extraction_rulesets', name, 'url_filters'], `${t} ${p}`, f);
          }
        } else if (e.key === 'rules') {
          for (const rule of read.list(e.value) ?? []) {
            const member = JSON.stringify(toPlain(rule));
            // An XPath selector is valid for the Open Crawler but not applied here: a warning, not an error.
            if (/XPath/.test(RULESET_RULE_DEF?.check?.(member) ?? '')) r.warn(rule, "this rule is not applied: its selector is XPath, which trawl does not support (write it as a CSS selector)");
            else b.add(['trawl_extraction_rulesets', name, 'rules'], member, rule, true);
          }
        } else {
          r.unknown(e, ['url_filters', 'rules'], 'an extraction ruleset');
        }
      }
    });
  }
  for (const s of seeds) {
    if (!origins.has(s.url.origin)) {
      r.warn(s.at, `the seed URL ${s.url.href} is outside every domain; neither Elastic nor trawl crawls it (add its domain under domains)`);
    }
    b.add(['start_uris'], s.url.href, s.at);
  }
}

/** One crawl rule as a trawl_crawl_rules member, or undefined when it is wrong. */
function readCrawlRule(n: YNode, cx: Ctx): string | undefined {
  const { r, read } = cx;
  const m = read.map(n);
  if (!m) return undefined;
  const keys = sortEntries(m, CRAWL_RULE_KEYS, 'a crawl rule', r);
  let ok = true;
  const need = (name: 'policy' | 'type' | 'pattern'): string | undefined => {
    const e = keys.get(name);
    if (!e) {
      r.error(n, `a crawl rule needs ${name} (policy: allow|deny, type: begins|ends|contains|regex, pattern: …)`);
      ok = false;
      return undefined;
    }
    const s = read.str(e.value);
    if (s === undefined) ok = false;
    return s;
  };
  const policy = need('policy');
  const type = need('type');
  const pattern = need('pattern');
  if (policy !== undefined && POLICIES[policy] === undefined) {
    const guess = didYouMean(policy, Object.keys(POLICIES));
    r.error(keys.get('policy')!.value, `unknown policy ${JSON.stringify(policy)}; expected allow or deny${guess ? `; did you mean ${JSON.stringify(guess)}?` : ''}`);
    ok = false;
  }
  if (type !== undefined && !(RULE_TYPES as readonly string[]).includes(type)) {
    const guess = didYouMean(type, RULE_TYPES);
    r.error(keys.get('type')!.value, `unknown rule type ${JSON.stringify(type)}; expected one of ${RULE_TYPES.join(', ')}${guess ? `; did you mean ${JSON.stringify(guess)}?` : ''}`);
    ok = false;
  }
  if (type === 'begins' && pattern !== undefined && !pattern.startsWith('/')) {
    // Accepted as Elastic accepts it: the path always begins with "/", so the rule never matches.
    r.warn(keys.get('pattern')!.value, `a begins pattern matches the path from its start, which is "/": ${JSON.stringify(pattern)} never matches (as in the Elastic crawler); write ${JSON.stringify(`/${pattern}`)} to match`);
  }
  if (!ok || policy === undefined || type === undefined || pattern === undefined) return undefined;
  const member = `${POLICIES[policy]} ${type} ${pattern}`;
  const problem = RULES_DEF?.check?.(member);
  if (problem !== undefined) {
    r.error(keys.get('pattern')!.value, `expected ${problem}, got ${describe(pattern)}`);
    return undefined;
  }
  return member;
}

function readSink(keys: Map<string, YEntry>, cx: Ctx): void {
  const { r, read, b } = cx;
  const sinkEntry = keys.get('output_sink');
  const dirEntry = keys.get('output_dir');
  const indexEntry = keys.get('output_index');
  const esEntry = keys.get('elasticsearch');
  const esPresent = esEntry !== undefined && !(esEntry.value.kind === 'scalar' && esEntry.value.value === null);

  let type: (typeof SINK_TYPES)[number] | undefined;
  if (sinkEntry) {
    const s = read.str(sinkEntry.value);
    if (s === undefined) return;
    if (!(SINK_TYPES as readonly string[]).includes(s)) {
      const guess = didYouMean(s, SINK_TYPES);
      r.error(sinkEntry.value, `unknown output_sink ${JSON.stringify(s)}; expected one of ${SINK_TYPES.join(', ')}${guess ? `; did you mean ${JSON.stringify(guess)}?` : ''}`);
      return;
    }
    type = s as (typeof SINK_TYPES)[number];
  } else if (esPresent || indexEntry) {
    type = 'elasticsearch'; // the crawler's default sink
  }
  const unused = (e: YEntry | undefined, why: string): void => {
    if (e) r.warn(keyAt(e), `${e.path} is not applied: ${why}`);
  };
  if (type === undefined) {
    unused(dirEntry, 'it is used only with output_sink: file');
    return;
  }
  const sink = ['trawl_sinks', type];
  const at: At = sinkEntry ? sinkEntry.value : keyAt((esEntry ?? indexEntry)!);
  b.set([...sink, 'type'], type, at);
  b.set([...sink, 'schema'], 'open_crawler', at); // the Open Crawler's documents

  if (type === 'console') b.set([...sink, 'console_format'], 'open_crawler', at); // "# id, url, status" and the page
  if (type === 'file') {
    const dir = dirEntry ? read.str(dirEntry.value) : ELASTIC_DEFAULT_OUTPUT_DIR;
    if (dir !== undefined) b.set([...sink, 'output_dir'], dir, dirEntry ? dirEntry.value : at);
    b.set([...sink, 'file_naming'], 'url', dirEntry ? dirEntry.value : at);
  } else {
    unused(dirEntry, `output_sink is ${type}, and output_dir is used only with file`);
  }
  if (type !== 'elasticsearch') {
    unused(indexEntry, `output_sink is ${type}, and output_index is used only with elasticsearch`);
    if (esPresent) unused(esEntry, `output_sink is ${type}`);
    return;
  }

  if (indexEntry) {
    const index = read.str(indexEntry.value);
    if (index !== undefined) b.set([...sink, 'index'], index, indexEntry.value);
  } else {
    r.error(at, 'the elasticsearch sink needs output_index, the index crawl results go to');
  }
  const es = esPresent ? read.map(esEntry.value) : undefined;
  const esKeys = es ? sortEntries(es, ELASTICSEARCH_KEYS, 'elasticsearch', r) : new Map<string, YEntry>();
  if (esPresent && !es) return;

  const hostEntry = esKeys.get('host');
  const portEntry = esKeys.get('port');
  if (hostEntry) {
    const url = esUrl(hostEntry, portEntry, cx);
    if (url !== undefined) b.set([...sink, 'url'], url, hostEntry.value);
  } else {
    r.warn(esEntry ? keyAt(esEntry) : at, 'the elasticsearch sink has no elasticsearch.host; give it in this file (trawl reads no separate --es-config file)');
    if (portEntry) unused(portEntry, 'there is no elasticsearch.host');
  }
  for (const name of ['username', 'password', 'api_key'] as const) {
    const e = esKeys.get(name);
    const v = e ? read.str(e.value) : undefined;
    if (e && v !== undefined) b.set([...sink, name], v, e.value);
  }
  // The crawler sends documents through a pipeline unless pipeline_enabled is false.
  const enabledEntry = esKeys.get('pipeline_enabled');
  const enabled = enabledEntry ? read.bool(enabledEntry.value) : true;
  const pipelineEntry = esKeys.get('pipeline');
  if (enabled === false) {
    unused(pipelineEntry, 'elasticsearch.pipeline_enabled is false');
  } else if (enabled === true) {
    const pipeline = pipelineEntry ? read.str(pipelineEntry.value) : ELASTIC_DEFAULT_PIPELINE;
    if (pipeline !== undefined) b.set([...sink, 'pipeline'], pipeline, pipelineEntry ? pipelineEntry.value : at);
  }
  // Pipeline parameters: the crawler's three, each true unless given, merged into every document sent through a pipeline.
  const paramsEntry = esKeys.get('pipeline_params');
  const params = paramsEntry ? read.map(paramsEntry.value) : undefined;
  if (enabled === false) {
    unused(paramsEntry, 'elasticsearch.pipeline_enabled is false');
  } else if (enabled === true && (!paramsEntry || params)) {
    const merged = new Map<string, unknown>(ELASTIC_DEFAULT_PIPELINE_PARAMS.map((n) => [n, true]));
    // A nested mapping (a dotted key, nested) is an object field of the document: written with its dotted name, as Elasticsearch reads it.
    const add = (entries: readonly YEntry[], prefix: string): void => {
      for (const e of entries) {
        if (e.value.kind === 'map') {
          add(e.value.entries, `${prefix}${e.key}.`);
          continue;
        }
        if (e.value.kind !== 'scalar' || e.value.value === null || e.value.value instanceof Date || typeof e.value.value === 'object') {
          r.error(e.value, `expected true, false, a number or text for ${e.path}, got ${kindName(e.value)}`);
          continue;
        }
        merged.set(`${prefix}${e.key}`, e.value.value);
      }
    };
    add(params?.entries ?? [], '');
    b.set([...sink, 'pipeline_params'], [...merged].map(([n, v]) => `${n}=${String(v)}`), paramsEntry ? paramsEntry.value : at);
  }
  const sslEntry = esKeys.get('ssl_verify');
  const ssl = sslEntry ? read.bool(sslEntry.value) : undefined;
  if (ssl !== undefined) b.set([...sink, 'ssl_verify'], ssl, sslEntry!.value);
  const fpEntry = esKeys.get('ca_fingerprint');
  if (fpEntry && !(fpEntry.value.kind === 'scalar' && fpEntry.value.value === null)) {
    const fp = read.str(fpEntry.value);
    if (fp !== undefined && ssl === false) unused(fpEntry, 'elasticsearch.ssl_verify is false');
    else if (fp !== undefined) b.set([...sink, 'ca_fingerprint'], fp, fpEntry.value);
  }
  const caEntries = (['ca_file', 'ca_path'] as const).map((n) => esKeys.get(n)).filter((e): e is YEntry => e !== undefined);
  if (caEntries.length > 0) {
    const [first, ...rest] = caEntries;
    const ca = read.str(first!.value);
    if (ca !== undefined) b.set([...sink, 'ca_path'], ca, first!.value);
    for (const e of rest) unused(e, `${first!.path} is given; trawl trusts one CA file or directory per sink`);
  }
  // The Elasticsearch client's behaviour: request_timeout, compression, retry_on_failure, delay_on_retry.
  const timeoutEntry = esKeys.get('request_timeout');
  const timeout = timeoutEntry ? read.int(timeoutEntry.value) : undefined;
  if (timeout !== undefined) b.set([...sink, 'request_timeout'], timeout, timeoutEntry!.value);
  const compressionEntry = esKeys.get('compression');
  const compression = compressionEntry ? read.bool(compressionEntry.value) : undefined;
  if (compression !== undefined) b.set([...sink, 'compression'], compression, compressionEntry!.value);
  const retryEntry = esKeys.get('retry_on_failure');
  if (retryEntry) {
    // As the Open Crawler reads it: false is none, true (or a value that is not a count) its 3.
    const v = retryEntry.value.kind === 'scalar' ? retryEntry.value.value : undefined;
    const count = typeof v === 'number' && Number.isInteger(v) && v >= 0;
    const retries = v === false ? 0 : count ? v : ELASTIC_DEFAULT_ES_RETRIES;
    if (v !== true && v !== false && !count) {
      r.warn(retryEntry.value, `${retryEntry.path}: expected a count of retries, true or false, got ${retryEntry.value.kind === 'scalar' ? describe(v) : kindName(retryEntry.value)}; ${ELASTIC_DEFAULT_ES_RETRIES} retries, as in the Open Crawler`);
    }
    if (retries > MAX_ES_RETRIES) r.warn(retryEntry.value, `${retryEntry.path}: trawl retries a request ${MAX_ES_RETRIES} times at most; ${MAX_ES_RETRIES} is applied`);
    b.set([...sink, 'retries'], Math.min(retries, MAX_ES_RETRIES), retryEntry.value);
  }
  const delayEntry = esKeys.get('delay_on_retry');
  if (delayEntry) {
    // A whole number of seconds above 0; anything else is the Open Crawler's 2.
    const v = delayEntry.value.kind === 'scalar' ? delayEntry.value.value : undefined;
    const ok = typeof v === 'number' && Number.isInteger(v) && v > 0;
    if (!ok) r.warn(delayEntry.value, `${delayEntry.path}: expected a whole number of seconds above 0, got ${delayEntry.value.kind === 'scalar' ? describe(v) : kindName(delayEntry.value)}; ${ELASTIC_DEFAULT_ES_RETRY_DELAY} s, as in the Open Crawler`);
    if (ok && v > MAX_ES_RETRY_DELAY) r.warn(delayEntry.value, `${delayEntry.path}: trawl waits ${MAX_ES_RETRY_DELAY} s at most before a first retry; ${MAX_ES_RETRY_DELAY} is applied`);
    b.set([...sink, 'retry_delay'], ok ? Math.min(v, MAX_ES_RETRY_DELAY) : ELASTIC_DEFAULT_ES_RETRY_DELAY, delayEntry.value);
  }
  const bulkEntry = esKeys.get('bulk_api');
  const bulk = bulkEntry && !(bulkEntry.value.kind === 'scalar' && bulkEntry.value.value === null) ? read.map(bulkEntry.value) : undefined;
  if (bulk) {
    const bulkKeys = sortEntries(bulk, BULK_API_KEYS, 'elasticsearch.bulk_api', r);
    for (const [name, to] of [['max_items', 'bulk_max_items'], ['max_size_bytes', 'bulk_max_bytes']] as const) {
      const e = bulkKeys.get(name);
      const n = e ? read.int(e.value) : undefined;
      if (e && n !== undefined) b.set([...sink, to], n, e.value);
    }
  }
}

/**
 * Elastic's defaults where they differ from MS-FSCCFG's, for what the YAML
 * does not set (docs/elastic-migration.md, "Defaults"): written into the
 * collection, so that `config convert` keeps them.
 */
function elasticDefaults(cx: Ctx, top: At): void {
  const { b } = cx;
  const unset = (path: string): boolean => b.get(path.split('.')) === undefined;
  const def = (path: string, v: ParamValue): void => {
    if (unset(path)) b.set(path.split('.'), v, top);
  };
  // No extension filter: Elastic decides by the response's content type.
  def('exclude_exts', []);
  // Content types: HTML pages only (sitemaps are read as sitemaps), and the binary types named when their extraction is enabled.
  const binaryTypes = b.get(['trawl_extraction', 'binary_mime_types']);
  def('allowed_types', ['text/html', ...(Array.isArray(binaryTypes) ? binaryTypes : [])]);
  // The event log in the Elastic crawler's event names and ECS fields.
  def('trawl_elastic.events', true);
  // robots.txt Sitemap: lines are read unless sitemap_discovery_disabled; sitemap_urls are always read.
  def('trawl_sitemaps.robots_discovery', true);
  const sitemapUrls = b.get(['trawl_sitemaps', 'urls']);
  if ((Array.isArray(sitemapUrls) && sitemapUrls.length > 0) || b.get(['trawl_sitemaps', 'robots_discovery']) === true) {
    b.set(['use_sitemaps'], true, b.origins.get('trawl_sitemaps.urls') ?? b.origins.get('trawl_sitemaps.robots_discovery') ?? top);
  }
  // robots.txt is read again when a crawl starts (each refresh cycle), not kept for a day.
  def('robots_ttl', 0);
  // The crawl-level and request-level limits of config.rb's DEFAULTS.
  def('crawlmode.mode', `DEPTH:${ELASTIC_DEFAULT_DEPTH - 1}`);
  def('trawl_limits.max_unique_urls', 100_000);
  def('trawl_limits.max_crawl_duration', 86_400);
  if (unset('cut_off')) {
    def('cut_off', 10 * 1024 * 1024);
    def('truncate', false);
  }
  def('fetch_timeout', 60);
  def('trawl_limits.socket_timeout', 10);
  // The Open Crawler indexes every page under its own URL: pages with the same content are not duplicates.
  def('diffcheck', false);
}

/** binary_content_extraction_enabled and _mime_types: trawl_extraction.binary_mime_types (the open_crawler schema's files), kept by allowed_types too. */
function readBinary(keys: Map<string, YEntry>, cx: Ctx): void {
  // content_extraction_*: the earlier names, read when the binary_ name is not given.
  const either = (name: string): YEntry | undefined => {
    const current = keys.get(`binary_${name}`);
    const earlier = keys.get(name);
    if (current && earlier) cx.r.warn(keyAt(earlier), `${earlier.path} is not applied: binary_${name} is given, its current name`);
    return current ?? earlier;
  };
  const enabledEntry = either('content_extraction_enabled');
  const typesEntry = either('content_extraction_mime_types');
  const enabled = enabledEntry ? cx.read.bool(enabledEntry.value) : false;
  if (!typesEntry) return;
  const types: string[] = [];
  for (const n of cx.read.list(typesEntry.value) ?? []) {
    const t = cx.read.str(n);
    if (t === undefined) continue;
    if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i.test(t)) {
      cx.r.error(n, `expected a MIME type such as application/pdf, got ${describe(t)}`);
      continue;
    }
    types.push(t.toLowerCase());
  }
  if (enabled !== true) {
    cx.r.warn(keyAt(typesEntry), `${typesEntry.path} is not applied: ${enabledEntry?.path ?? 'binary_content_extraction_enabled'} is not true`);
    return;
  }
  for (const t of types) cx.b.add(['trawl_extraction', 'binary_mime_types'], t, typesEntry.value);
}

/** default_encoding: trawl_extraction.default_charset, when it is an encoding trawl can read (a WHATWG Encoding label). */
function readEncoding(entry: YEntry | undefined, cx: Ctx): void {
  if (!entry) return;
  const name = cx.read.str(entry.value);
  if (name === undefined) return;
  let known = true;
  try {
    new TextDecoder(name);
  } catch {
    known = false;
  }
  if (!known) {
    cx.r.warn(keyAt(entry), `${entry.path} is not applied: trawl cannot read the encoding ${JSON.stringify(name)} (it reads the WHATWG Encoding labels: utf-8, iso-8859-1, windows-1252, shift_jis, …); pages that name no encoding are read as utf-8`, 'TRAWL_ERR_CONFIG_UNSUPPORTED');
    return;
  }
  cx.b.set(['trawl_extraction', 'default_charset'], name.toLowerCase(), entry.value);
}

/**
 * schedule.pattern, a cron expression: `refresh` (minutes), the period of
 * trawl serve's refresh cycles, for the forms that have one: "* * * * *",
 * "*\/N * * * *", "M * * * *", "M *\/N * * *", "M H * * *", "M H * * D",
 * @hourly, @daily, @weekly. A pattern that pins a time (M, H, D) keeps
 * its period, not the time: a warning says so. Any other pattern is a
 * warning, not applied.
 */
function readSchedule(entry: YEntry | undefined, cx: Ctx): void {
  if (!entry) return;
  const m = entry.value.kind === 'scalar' && entry.value.value === null ? undefined : cx.read.map(entry.value);
  if (!m) {
    if (entry.value.kind === 'scalar' && entry.value.value === null) cx.r.warn(keyAt(entry), `${entry.path} has no value and is not applied`);
    return;
  }
  let patternEntry: YEntry | undefined;
  for (const e of m.entries) {
    if (e.key === 'pattern') patternEntry = e;
    else cx.r.warn(keyAt(e), `${e.path} is not applied: trawl reads schedule.pattern only`, 'TRAWL_ERR_CONFIG_UNSUPPORTED');
  }
  if (!patternEntry) return;
  const pattern = cx.read.str(patternEntry.value);
  if (pattern === undefined) return;
  const period = cronPeriod(pattern);
  if (period === undefined) {
    cx.r.warn(keyAt(patternEntry), `${patternEntry.path} ${JSON.stringify(pattern)} is not applied: trawl serve recrawls every refresh minutes, and this pattern has no one period (trawl reads * * * * *, */N * * * *, M * * * *, M */N * * *, M H * * *, M H * * D, @hourly, @daily, @weekly)`, 'TRAWL_ERR_CONFIG_UNSUPPORTED');
    return;
  }
  cx.b.set(['refresh'], period.minutes, patternEntry.value);
  if (period.pinned) {
    cx.r.warn(keyAt(patternEntry), `${patternEntry.path} ${JSON.stringify(pattern)}: trawl serve starts a refresh cycle every ${period.minutes} minutes (refresh), counted from the collection's start; the time the pattern names is not applied`, 'TRAWL_ERR_CONFIG_UNSUPPORTED');
  }
}

/** The period of a cron expression in minutes, for the forms readSchedule lists; `pinned` when it names a minute, hour or weekday. */
function cronPeriod(pattern: string): { minutes: number; pinned: boolean } | undefined {
  const named: Record<string, number> = { '@hourly': 60, '@daily': 1440, '@midnight': 1440, '@weekly': 10080 };
  const p = pattern.trim().toLowerCase();
  if (Object.hasOwn(named, p)) return { minutes: named[p]!, pinned: true };
  const f = p.split(/\s+/);
  if (f.length !== 5) return undefined;
  const [min, hour, dom, month, dow] = f as [string, string, string, string, string];
  const num = (s: string, max: number): boolean => /^\d+$/.test(s) && Number(s) <= max;
  const step = (s: string, max: number): number | undefined => {
    const n = /^\*\/(\d+)$/.exec(s)?.[1];
    return n !== undefined && Number(n) >= 1 && Number(n) <= max ? Number(n) : undefined;
  };
  if (dom !== '*' || month !== '*') return undefined;
  const weekday = dow === '*' ? false : /^([0-7]|sun|mon|tue|wed|thu|fri|sat)$/.test(dow) ? true : undefined;
  if (weekday === undefined) return undefined;
  if (hour === '*' && !weekday) {
    if (min === '*') return { minutes: 1, pinned: false };
    const n = step(min, 59);
    if (n !== undefined) return { minutes: n, pinned: false };
    if (num(min, 59)) return { minutes: 60, pinned: true };
    return undefined;
  }
  if (!num(min, 59)) return undefined;
  if (!weekday) {
    const n = step(hour, 23);
    if (n !== undefined) return { minutes: 60 * n, pinned: true };
  }
  if (num(hour, 23)) return { minutes: weekday ? 10080 : 1440, pinned: true };
  return undefined;
}

/** socket_timeout: trawl_limits.socket_timeout; 0 is no timeout, as for the Open Crawler's client (fetch_timeout still bounds the whole download). */
function readSocketTimeout(entry: YEntry | undefined, cx: Ctx): void {
  if (!entry) return;
  const n = cx.read.int(entry.value);
  if (n === undefined) return;
  if (n < 0) cx.r.error(entry.value, `expected a number of seconds, 0 or more, got ${n}`);
  else cx.b.set(['trawl_limits', 'socket_timeout'], n, entry.value);
}

/** ssl_ca_certificates: trawl_tls.ca_certificates, each a PEM file's path or the PEM text (whose line breaks are kept). */
function readCaCertificates(entry: YEntry | undefined, cx: Ctx): void {
  if (!entry) return;
  for (const n of cx.read.list(entry.value) ?? []) {
    const v = n.kind === 'scalar' && typeof n.value === 'string' ? n.value.trim() : undefined;
    if (v === undefined || v === '') {
      cx.r.error(n, `expected a CA certificate (PEM text) or the path of its file, got ${n.kind === 'scalar' ? describe(n.value) : kindName(n)}`);
      continue;
    }
    cx.b.add(['trawl_tls', 'ca_certificates'], v, n);
  }
}

/** config.rb's DEFAULTS max_crawl_depth (seed URLs have depth 1). */
const ELASTIC_DEFAULT_DEPTH = 10;

/** elasticsearch.host (with or without a scheme and port) and elasticsearch.port as one URL. */
function esUrl(hostEntry: YEntry, portEntry: YEntry | undefined, cx: Ctx): string | undefined {
  const { r, read } = cx;
  const host = read.str(hostEntry.value);
  const port = portEntry ? read.int(portEntry.value) : undefined;
  if (host === undefined || (portEntry && port === undefined)) return undefined;
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(host) ? host : `http://${host}`);
  } catch {
    r.error(hostEntry.value, `expected a host name or URL such as http://localhost, got ${describe(host)}`);
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    r.error(hostEntry.value, `expected an http or https URL, got the scheme ${u.protocol.slice(0, -1)}`);
    return undefined;
  }
  if (port !== undefined) {
    if (port < 1 || port > 65535) {
      r.error(portEntry!.value, `expected a port from 1 to 65535, got ${port}`);
      return undefined;
    }
    if (u.port !== '' && u.port !== String(port)) {
      r.error(portEntry!.value, `elasticsearch.port ${port} contradicts the port ${u.port} in elasticsearch.host`);
      return undefined;
    }
    u.port = String(port);
  }
  return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
}

function readProxy(keys: Map<string, YEntry>, cx: Ctx): void {
  const { r, read, b } = cx;
  const hostEntry = keys.get('http_proxy_host');
  if (!hostEntry) {
    for (const e of keys.values()) r.warn(keyAt(e), `${e.path} is not applied: there is no http_proxy_host`);
    return;
  }
  const portEntry = keys.get('http_proxy_port');
  const protoEntry = keys.get('http_proxy_protocol');
  const userEntry = keys.get('http_proxy_username');
  const passEntry = keys.get('http_proxy_password');
  // Each part is checked, so that every wrong one is reported; then the proxy is set when all are right.
  let ok = true;
  const host = read.str(hostEntry.value);
  if (host !== undefined && !/^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])$/.test(host)) {
    r.error(hostEntry.value, `expected a host name or address without scheme or port, got ${describe(host)}`);
    ok = false;
  }
  const port = portEntry ? read.int(portEntry.value) : ELASTIC_DEFAULT_PROXY_PORT;
  if (port !== undefined && (port < 1 || port > 65535)) {
    r.error(portEntry!.value, `expected a port from 1 to 65535, got ${port}`);
    ok = false;
  }
  const proto = protoEntry ? read.str(protoEntry.value) : 'http';
  if (proto !== undefined && proto !== 'http' && proto !== 'https') {
    r.error(protoEntry!.value, `expected http or https, got ${describe(proto)}`);
    ok = false;
  }
  const user = userEntry ? read.str(userEntry.value) : undefined;
  const pass = passEntry ? read.str(passEntry.value) : undefined;
  if (!ok || host === undefined || port === undefined || proto === undefined || (userEntry && user === undefined) || (passEntry && pass === undefined)) return;
  if (proto === 'https') {
    r.warn(keyAt(protoEntry!), `${protoEntry!.path} https has no trawl equivalent (trawl's proxy parameter takes http proxies only); the proxy is not applied`, 'TRAWL_ERR_CONFIG_UNSUPPORTED');
    return;
  }
  let credentials = '';
  if (passEntry && !userEntry) {
    r.warn(keyAt(passEntry), `${passEntry.path} is not applied: there is no http_proxy_username`);
  } else if (user !== undefined) {
    if (/[:@/\s]/.test(user) || /[@\s]/.test(pass ?? '')) {
      r.warn(keyAt(userEntry!), 'the proxy user name or password holds ":", "@", "/" or white space, which trawl\'s proxy syntax cannot hold; the proxy is not applied', 'TRAWL_ERR_CONFIG_UNSUPPORTED');
      return;
    }
    credentials = `${user}:${pass ?? ''}@`;
  }
  b.set(['proxy'], [`http://${credentials}${host}:${port}`], hostEntry.value);
}

/**
 * Authentication: each domain's `auth` (the Open Crawler reads only these,
 * for the domain's own URL) and the top-level `auth` list (App Search, each
 * entry naming its domain). As in the Elastic crawler, the Authorization
 * header goes with every request to the domain (type basic: "Basic
 * base64(user:password)"; type raw: the header as written), through a
 * sub-collection of the domain's URLs whose headers carry it.
 */
function readAuth(keys: Map<string, YEntry> | undefined, cx: Ctx): void {
  const { read } = cx;
  const allowedEntry = keys?.get('http_auth_allowed');
  const httpAllowed = allowedEntry ? read.bool(allowedEntry.value) === true : false;
  let made = 0;
  const one = (item: YNode, domain: URL | undefined): void => {
    if (applyAuth(item, domain, httpAllowed, made + 1, cx)) made++;
  };
  for (const { entry, domain } of cx.domainAuth) {
    const n = entry.value;
    // The Open Crawler's domain auth is one mapping; a list of them is read too.
    for (const item of (n.kind === 'map' ? [n] : read.list(n)) ?? []) one(item, domain);
  }
  const authEntry = keys?.get('auth');
  if (!authEntry || (authEntry.value.kind === 'scalar' && authEntry.value.value === null)) return;
  const n = authEntry.value;
  for (const item of (n.kind === 'map' ? [n] : read.list(n)) ?? []) one(item, undefined);
}

/** One auth entry; true when it became a sub-collection (numbered `authNo`) whose headers carry it. */
function applyAuth(item: YNode, ownDomain: URL | undefined, httpAllowed: boolean, authNo: number, cx: Ctx): boolean {
  const { r, read, b } = cx;
  const m = read.map(item);
  if (!m) return false;
  const k = sortEntries(m, AUTH_KEYS, 'an auth entry', r);
  const str = (name: string): string | undefined => {
    const e = k.get(name);
    if (!e) {
      r.error(item, `an auth entry of this type needs ${name}`);
      return undefined;
    }
    return read.str(e.value);
  };
  const typeEntry = k.get('type');
  if (!typeEntry) {
    r.error(item, 'an auth entry needs type: basic (username, password) or raw (header)');
    return false;
  }
  const type = read.str(typeEntry.value);
  if (type === undefined) return false;
  if (type !== 'basic' && type !== 'raw') {
    r.error(typeEntry.value, `unknown auth type ${JSON.stringify(type)}; expected basic or raw`);
    return false;
  }
  // The Elastic crawler checks each entry against one schema per type, with no other keys.
  const foreign = type === 'basic' ? ['header'] : ['username', 'password'];
  for (const name of foreign) {
    const e = k.get(name);
    if (e) r.error(keyAt(e), `an auth entry of type ${type} has no ${name} (basic takes username and password, raw takes header); the Elastic crawler refuses it too`);
  }
  if (foreign.some((name) => k.has(name))) return false;
  let domain = ownDomain;
  const domainEntry = k.get('domain');
  if (ownDomain && domainEntry) {
    r.warn(keyAt(domainEntry), `${domainEntry.path} is not applied: a domain's auth is for that domain's URL (${ownDomain.origin}), as in the Elastic crawler`);
  } else if (!ownDomain) {
    if (!domainEntry) {
      r.error(item, 'an auth entry needs domain');
      return false;
    }
    domain = read.url(domainEntry.value);
  }
  if (!domain) return false;
  const at: At = domainEntry && !ownDomain ? domainEntry.value : item;
  if (domain.protocol === 'http:' && !httpAllowed) {
    r.warn(item, `${item.path} is not applied: the Elastic crawler sends credentials over plain http only with http_auth_allowed: true`);
    return false;
  }
  let value: string;
  let from: At;
  if (type === 'raw') {
    const header = str('header');
    if (header === undefined) return false;
    value = header;
    from = k.get('header')!.value;
  } else {
    const user = str('username');
    const pass = str('password');
    if (user === undefined || pass === undefined) return false;
    // Sent with every request to the domain, as the Elastic crawler does (no challenge first).
    value = `Basic ${Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')}`;
    from = k.get('username')!.value;
  }
  // A sub-collection's headers replace the collection's for its URIs: the collection's (User-Agent) are carried over.
  const own = b.get(['headers']);
  const headers = [...(Array.isArray(own) ? own.filter((h) => !/^authorization\s*:/i.test(h)) : []), `Authorization: ${value}`];
  const sub = ['subdomains', `elastic_auth_${authNo}`];
  if (!b.add([...sub, 'include_uris', 'prefix'], `${domain.origin}/`, at)) return false;
  b.set([...sub, 'headers'], headers, from);
  return true;
}

// =================================================================== reader

/**
 * Reads an Elastic Open Crawler YAML crawl configuration. Never throws for
 * bad input: every problem is a diagnostic naming the file, line, column
 * and key path; the document holds what could be read.
 */
export function readElasticYaml(input: string, file?: string): ReadResult {
  const r = new Reporter(file);
  try {
    return readInner(input, file, r);
  } catch (err) {
    r.error({ pos: { line: 1, column: 1 }, path: '' }, `unexpected failure while reading the YAML: ${(err as Error).message}`, 'TRAWL_ERR_INTERNAL');
    return { document: { collections: [] }, diagnostics: r.diagnostics };
  }
}

/** The delay (seconds) a converted Elastic configuration gets: see readInner. */
export const ELASTIC_DELAY_S = 1;

function readInner(input: string, file: string | undefined, r: Reporter): ReadResult {
  const none: ReadResult = { document: { collections: [] }, diagnostics: r.diagnostics };
  const lc = new LineCounter();
  // uniqueKeys is checked below instead, in one pass: the yaml package compares
  // each key with every earlier one of its map, quadratic in a large map.
  const doc = parseDocument(input, { version: '1.1', lineCounter: lc, merge: true, uniqueKeys: false, prettyErrors: false, keepSourceTokens: true });
  const where = (offset: number): Pos => posAt(lc, offset, { line: 1, column: 1 });
  for (const e of doc.errors) r.error({ pos: where(e.pos[0]), path: '' }, `malformed YAML: ${e.message}`);
  if (doc.errors.length > 0) return none;
  if (!uniqueKeys(doc, where, r)) return none;
  const firstOfCollection = r.diagnostics.length;
  for (const w of doc.warnings) r.warn({ pos: where(w.pos[0]), path: '' }, `YAML: ${w.message}`);

  const top: At = { pos: { line: 1, column: 1 }, path: '' };
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    r.error(top, 'the file is empty: the Elastic crawler needs at least one domain (domains: - url: https://…)');
    return none;
  }
  let tree: YNode;
  try {
    tree = convert(doc.contents, '', top.pos, { doc, lc, r, budget: MAX_NODES, targets: new Map() }, 0);
  } catch (err) {
    if (!(err instanceof TooBig)) throw err;
    r.error(top, `the YAML is too large or too deeply nested once aliases are expanded (at most ${MAX_NODES} nodes, ${MAX_DEPTH} levels)`);
    return none;
  }
  if (tree.kind !== 'map') {
    r.error(tree, `the file must be a mapping of settings (domains:, max_crawl_depth:, …), not ${kindName(tree)}`);
    return none;
  }
  const root = nestDottedKeysDeep(tree, r);
  const read = new Read(r);
  const b = new Builder(r);
  const cx: Ctx = { r, read, b, root, domainAuth: [] };

  const grouped = new Map<Handler, Map<string, YEntry>>();
  for (const e of root.entries) {
    const rule = TOP_LEVEL[e.key];
    if (rule === undefined) r.unknown(e, Object.keys(TOP_LEVEL), 'the crawler configuration');
    else if (rule.kind === 'unsupported') r.unsupported(e, rule.hint);
    else if (rule.kind === 'value') applyValue(rule, e, cx);
    else if (rule.kind === 'handler') {
      const g = grouped.get(rule.handler) ?? new Map<string, YEntry>();
      g.set(e.key, e);
      grouped.set(rule.handler, g);
    }
  }
  const name = collectionName(grouped.get('name')?.get('crawl_id'), file, read);
  readDomains(grouped.get('domains')?.get('domains'), cx);
  readSink(grouped.get('sink') ?? new Map(), cx);
  if (grouped.has('proxy')) readProxy(grouped.get('proxy')!, cx);
  readAuth(grouped.get('auth'), cx);
  readBinary(grouped.get('binary') ?? new Map(), cx);
  readEncoding(grouped.get('encoding')?.get('default_encoding'), cx);
  readCaCertificates(grouped.get('ca')?.get('ssl_ca_certificates'), cx);
  readSocketTimeout(grouped.get('socket')?.get('socket_timeout'), cx);
  readSchedule(grouped.get('schedule')?.get('schedule'), cx);
  elasticDefaults(cx, top);

  // The Elastic crawlers have no per-site delay (they bound threads, not a
  // site's request rate); MS-FSCCFG's default is a minute. The converted
  // collection says 1 s, trawl's one-shot politeness, so that the YAML means
  // the same in every command (crawl, serve, config show, urltest) and
  // crawls at a pace its users expect.
  b.set(['delay'], ELASTIC_DELAY_S, top);
  // The Elastic crawler's content deletion: each crawl starts from its seeds and is followed by a
  // purge of what it did not reach (3xx, 4xx: deleted); a 5xx leaves a document as it is until
  // three crawls in a row found it inaccessible.
  if (b.get(['trawl_purge', 'enabled']) === undefined) b.set(['trawl_purge', 'enabled'], true, top);
  b.set(['http_errors', '5xx'], 'DELETE:3', top);

  const c: CollectionConfig = { name, root: b.root, nodes: new Map() };
  const locations = new Map<string, SourceLocation>([['', r.loc(root.pos)]]);
  for (const [param, at] of b.origins) locations.set(param, r.loc(at.pos));
  setLocations(c, locations);
  verifyWriteBack(c, b, r, file);
  checkRules(c, r.diagnostics);

  for (let i = firstOfCollection; i < r.diagnostics.length; i++) {
    const d = r.diagnostics[i]!;
    if (d.collection === undefined) r.diagnostics[i] = { ...d, collection: name };
  }
  // In file order, whatever order the keys were read in (the sort is stable).
  r.diagnostics.sort((a, b) => (a.location?.line ?? 0) - (b.location?.line ?? 0) || (a.location?.column ?? 0) - (b.location?.column ?? 0));
  return { document: { collections: [c] }, diagnostics: r.diagnostics };
}

/**
 * YAML 1.2 3.2.1.1: the keys of a mapping are unique. Scalar keys are
 * compared by value, in one pass per mapping (aliases are not followed: an
 * alias's mapping is checked where it is written). Reports each repeated key
 * at its position; false when there was one.
 */
function uniqueKeys(doc: Document, where: (offset: number) => Pos, r: Reporter): boolean {
  let ok = true;
  visit(doc, {
    Map(_key, map) {
      const seen = new Map<unknown, number>();
      for (const pair of map.items) {
        if (!isScalar(pair.key) || typeof pair.key.value === 'symbol') continue; // << merge keys may repeat
        const offset = pair.key.range?.[0] ?? 0;
        const first = seen.get(pair.key.value);
        if (first === undefined) {
          seen.set(pair.key.value, offset);
          continue;
        }
        r.error({ pos: where(offset), path: '' }, `malformed YAML: Map keys must be unique; ${JSON.stringify(String(pair.key.value))} is given twice (first on line ${where(first).line})`);
        ok = false;
      }
    },
  });
  return ok;
}

/**
 * The collection must write out as MS-FSCCFG XML that reads back without
 * errors. Every value was checked as it was set, so this finds nothing
 * unless the registry gained a check the builder does not apply; then the
 * problem is reported at the YAML key the value came from.
 */
function verifyWriteBack(c: CollectionConfig, b: Builder, r: Reporter, file: string | undefined): void {
  const back = readConfigXml(writeConfigXml(c), file, { partial: true });
  for (const d of back.diagnostics) {
    const at = (d.param !== undefined ? b.origins.get(d.param) : undefined) ?? { pos: { line: 1, column: 1 }, path: '' };
    const message = `${d.param !== undefined ? `${d.param}: ` : ''}${d.message}`;
    if (d.severity === 'error') r.error(at, message);
    else r.warn(at, message);
  }
}
