/**
 * The Elasticsearch sink (Elastic's `output_sink: elasticsearch`): batches
 * go to the `_bulk` API as NDJSON, `index` for documents and `delete` for
 * removals, with the document id as `_id` so a re-feed replaces. The index
 * is `index` when configured, else the content collection's name.
 *
 * The Elastic Open Crawler's settings: pipeline_params are merged into each
 * document sent through a pipeline; bulk_max_items and bulk_max_bytes split
 * a batch into several _bulk requests (sent in turn); ssl_verify false and
 * ca_path (a PEM file, or a directory of .pem/.crt files) set how the
 * endpoint's TLS certificate is checked, ca_fingerprint pins a certificate
 * its chain must hold; request_timeout bounds each request,
 * compression gzips its body, and retries (with retry_delay, doubling)
 * sends a failed request again before the batch is given up.
 *
 * A transport error, a 429 or a 5xx, once the retries are spent, rejects
 * the whole batch (the feeder offers it again later); an item the bulk response marks failed with a 4xx is refused for
 * good and counted (PPFailed). A delete answered 404 is a success: the
 * document is gone either way.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { Agent, buildConnector, request, type Dispatcher } from 'undici';
import { trawlError } from '../core/errors.ts';
import { maskText } from '../config/secrets.ts';
import { sinkDocument, type DocumentSchema } from './document.ts';
import { configRulesFor, type Sink, type SinkOp, type SinkResult, type SinkSettings, type SinkType } from './sink.ts';

interface BulkItem {
  readonly status?: number;
  readonly error?: { readonly type?: string; readonly reason?: string } | string;
}

/** Elasticsearch index names are lower case, without \ / * ? " < > | , # : or spaces, and cannot start with - _ +. */
export function indexNameOf(collection: string): string {
  const s = collection.toLowerCase().replace(/[\\/*?"<>|,#:\s]+/g, '-').replace(/^[-_+.]+/, '');
  return s === '' ? 'trawl' : s;
}

export class ElasticsearchSink implements Sink {
  readonly type = 'elasticsearch';
  readonly name: string;
  private readonly endpoint: string;
  private readonly headers: Record<string, string>;
  private readonly index: string | undefined;
  readonly schema: DocumentSchema;
  private readonly params: Readonly<Record<string, unknown>> | undefined;
  private readonly maxItems: number;
  private readonly maxBytes: number;
  private readonly dispatcher: Dispatcher | undefined;
  private readonly timeoutMs: number;
  private readonly compression: boolean;
  private readonly retries: number;
  private readonly retryDelayMs: number;

  constructor(name: string, s: SinkSettings) {
    this.name = name;
    this.schema = (s.schema as DocumentSchema | undefined) ?? 'app_search';
    this.params = s.pipeline && s.pipelineParams && s.pipelineParams.length > 0 ? pipelineParams(s.pipelineParams) : undefined;
    this.maxItems = s.bulkMaxItems ?? Infinity;
    this.maxBytes = s.bulkMaxBytes ?? Infinity;
    this.timeoutMs = (s.requestTimeoutS ?? 60) * 1000;
    this.compression = s.compression === true;
    this.retries = s.retries ?? 0;
    this.retryDelayMs = (s.retryDelayS ?? 2) * 1000;
    if (s.caFingerprint !== undefined && s.sslVerify !== false) {
      this.dispatcher = new Agent({ connect: pinnedConnector(s.caFingerprint, s.caPath !== undefined ? readCaPath(s.caPath) : undefined) });
    } else if (s.sslVerify === false || s.caPath !== undefined) {
      this.dispatcher = new Agent({ connect: s.sslVerify === false ? { rejectUnauthorized: false } : { ca: readCaPath(s.caPath!) } });
    }
    // Credentials in the URL (https://user:password@host) are sent as Basic
    // authentication (the HTTP client would drop them) unless username or
    // api_key is set, and are never part of the endpoint a message quotes.
    const u = new URL(s.url!);
    const user = decodeURIComponent(u.username);
    const password = decodeURIComponent(u.password);
    u.username = '';
    u.password = '';
    const base = u.href.replace(/\/+$/, '');
    this.endpoint = `${base}/_bulk${s.pipeline ? `?pipeline=${encodeURIComponent(s.pipeline)}` : ''}`;
    this.index = s.index;
    this.headers = { 'content-type': 'application/x-ndjson' };
    if (s.apiKey) this.headers.authorization = `ApiKey ${s.apiKey}`;
    else if (s.username !== undefined) this.headers.authorization = `Basic ${Buffer.from(`${s.username}:${s.password ?? ''}`).toString('base64')}`;
    else if (user !== '') this.headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  }

  async submit(batch: readonly SinkOp[]): Promise<SinkResult> {
    if (batch.length === 0) return { rejected: [] };
    // Each operation's NDJSON, then as many _bulk requests as bulk_max_items and bulk_max_bytes ask for.
    const ops = batch.map((b) => {
      if (b.op !== 'index') return `${JSON.stringify({ delete: { _index: this.index ?? indexNameOf(b.collection), _id: b.id } })}\n`;
      const json = sinkDocument(b.doc, this.schema);
      // not indexed in this schema: whatever the index holds under the id goes
      if (!json) return `${JSON.stringify({ delete: { _index: this.index ?? indexNameOf(b.doc.collection), _id: b.doc.id } })}\n`;
      return `${JSON.stringify({ index: { _index: this.index ?? indexNameOf(b.doc.collection), _id: b.doc.id } })}\n${JSON.stringify(this.params ? { ...json, ...this.params } : json)}\n`;
    });
    const rejected: Array<{ index: number; reason: string }> = [];
    let start = 0;
    while (start < ops.length) {
      let end = start + 1;
      let bytes = Buffer.byteLength(ops[start]!);
      while (end < ops.length && end - start < this.maxItems && bytes + Buffer.byteLength(ops[end]!) <= this.maxBytes) bytes += Buffer.byteLength(ops[end++]!);
      for (const r of await this.send(ops.slice(start, end).join(''))) rejected.push({ index: r.index + start, reason: r.reason });
      start = end;
    }
    return { rejected };
  }

  /** One _bulk request, sent again up to `retries` times while it fails for a reason that may pass; the items refused for good, by position in it. */
  private async send(ndjson: string): Promise<Array<{ index: number; reason: string }>> {
    const body = this.compression ? await gzipAsync(ndjson) : ndjson;
    const headers = this.compression ? { ...this.headers, 'content-encoding': 'gzip' } : this.headers;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.sendOnce(body, headers);
      } catch (err) {
        if (!RETRYABLE.has(err as Error) || attempt >= this.retries) throw err;
        await sleep(Math.min(this.retryDelayMs * 2 ** attempt, MAX_RETRY_WAIT_MS));
      }
    }
  }

  private async sendOnce(body: string | Buffer, headers: Record<string, string>): Promise<Array<{ index: number; reason: string }>> {
    let status: number;
    let text: string;
    try {
      const res = await request(this.endpoint, { method: 'POST', headers, body, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs, ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}) });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      throw retryable(trawlError('SINK_ES_TRANSPORT', { sink: this.name, endpoint: this.endpoint, reason: maskText((err as Error).message) }, { cause: err }));
    }
    if (status < 200 || status >= 300) {
      const e = trawlError('SINK_ES_STATUS', { sink: this.name, endpoint: this.endpoint, status, body: maskText(text.slice(0, 300)) });
      throw status === 429 || status >= 500 ? retryable(e) : e;
    }
    let parsed: { errors?: boolean; items?: Array<Record<string, BulkItem>> };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw trawlError('SINK_ES_NOT_JSON', { sink: this.name, endpoint: this.endpoint, status });
    }
    if (!parsed.errors) return [];
    const rejected: Array<{ index: number; reason: string }> = [];
    let retry: string | undefined;
    (parsed.items ?? []).forEach((item, i) => {
      const [action, r] = Object.entries(item)[0] ?? [];
      if (!r || !r.error) return;
      if (action === 'delete' && r.status === 404) return;
      const reason = typeof r.error === 'string' ? r.error : `${r.error.type ?? 'error'}: ${r.error.reason ?? ''}`;
      if (r.status === 429 || (r.status ?? 500) >= 500) retry ??= `${r.status}: ${reason}`;
      else rejected.push({ index: i, reason: `${r.status ?? '?'} ${reason}` });
    });
    // Items refused for a reason that may pass (429, 5xx): the whole batch again; the others are idempotent.
    if (retry) throw retryable(trawlError('SINK_ES_ITEM_RETRY', { sink: this.name, reason: retry }));
    return rejected;
  }

  async close(): Promise<void> {
    await this.dispatcher?.close();
  }
}

const gzipAsync = promisify(gzip);
/** The longest wait between two attempts, however many retries double retry_delay. */
const MAX_RETRY_WAIT_MS = 3_600_000;

/** The failures that may pass when the request is sent again: transport errors, 429, 5xx. */
const RETRYABLE = new WeakSet<Error>();
function retryable(e: Error): Error {
  RETRYABLE.add(e);
  return e;
}

/** pipeline_params members "name=value": true, false and numbers as JSON values, anything else as text. */
export function pipelineParams(members: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const m of members) {
    const i = m.indexOf('=');
    const name = m.slice(0, i);
    const v = m.slice(i + 1).trim();
    out[name] = v === 'true' ? true : v === 'false' ? false : v !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
  }
  return out;
}

/**
 * ca_fingerprint: connections whose certificate chain holds a certificate
 * of that SHA-256 fingerprint (its CA's, as Elasticsearch prints it), and
 * only those, whoever signed it; with ca_path as well, a chain those CAs
 * verify passes too.
 */
function pinnedConnector(fingerprint: string, ca: string[] | undefined): buildConnector.connector {
  const want = fingerprint.replace(/:/g, '').toUpperCase();
  const connect = buildConnector({ rejectUnauthorized: false, ...(ca ? { ca } : {}) });
  return (opts, callback) => connect(opts, (err, socket) => {
    if (err || !socket) {
      callback(err ?? new Error('no connection'), null);
      return;
    }
    const tls = socket as TLSSocket;
    if (typeof tls.getPeerCertificate !== 'function' || (ca && tls.authorized) || chainHolds(tls.getPeerCertificate(true), want)) {
      callback(null, socket);
      return;
    }
    socket.destroy();
    callback(new Error(`the certificate chain holds no certificate of the ca_fingerprint ${fingerprint}`), null);
  });
}

/** Whether a certificate of the chain (the peer's, then its issuers up to a self-signed one) has that SHA-256 fingerprint. */
function chainHolds(cert: PeerCertificate | undefined, want: string): boolean {
  const seen = new Set<PeerCertificate>();
  for (let c = cert as (PeerCertificate & { issuerCertificate?: PeerCertificate }) | undefined; c && !seen.has(c) && seen.size < 16; c = c.issuerCertificate) {
    seen.add(c);
    if (c.fingerprint256?.replace(/:/g, '').toUpperCase() === want) return true;
  }
  return false;
}

/** ca_path: a PEM file, or a directory whose .pem and .crt files are read (each may hold several certificates). */
function readCaPath(path: string): string[] {
  if (!statSync(path).isDirectory()) return [readFileSync(path, 'utf8')];
  return readdirSync(path).filter((f) => /\.(pem|crt)$/i.test(f)).sort().map((f) => readFileSync(join(path, f), 'utf8'));
}

export const ELASTICSEARCH_SINK: SinkType = {
  type: 'elasticsearch',
  problems: (name, s) => {
    const out = configRulesFor(name, s);
    if (s.caPath !== undefined && s.sslVerify !== false) {
      try {
        if (readCaPath(s.caPath).length === 0) out.push({ param: `trawl_sinks.${name}.ca_path`, message: `trawl_sinks.${name}.ca_path: the directory ${s.caPath} holds no .pem or .crt file`, unsupported: false });
      } catch (err) {
        out.push({ param: `trawl_sinks.${name}.ca_path`, message: `trawl_sinks.${name}.ca_path: cannot read ${s.caPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, unsupported: false });
      }
    }
    return out;
  },
  open: (name, s, cx) => new ElasticsearchSink(name, {
    ...s,
    ...(s.password !== undefined ? { password: cx.reveal(s.password) } : {}),
    ...(s.apiKey !== undefined ? { apiKey: cx.reveal(s.apiKey) } : {}),
  }),
};
