/**
 * The Elasticsearch sink (Elastic's `output_sink: elasticsearch`): batches
 * go to the `_bulk` API as NDJSON, `index` for documents and `delete` for
 * removals, with the document id as `_id` so a re-feed replaces. The index
 * is `index` when configured, else the content collection's name.
 *
 * A transport error, a 429 or a 5xx rejects the whole batch (it is retried
 * later); an item the bulk response marks failed with a 4xx is refused for
 * good and counted (PPFailed). A delete answered 404 is a success: the
 * document is gone either way.
 */

import { request } from 'undici';
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

  constructor(name: string, s: SinkSettings) {
    this.name = name;
    this.schema = (s.schema as DocumentSchema | undefined) ?? 'app_search';
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
    const lines: string[] = [];
    for (const b of batch) {
      const json = b.op === 'index' ? sinkDocument(b.doc, this.schema) : undefined;
      if (b.op === 'index' && json) {
        lines.push(JSON.stringify({ index: { _index: this.index ?? indexNameOf(b.doc.collection), _id: b.doc.id } }), JSON.stringify(json));
      } else if (b.op === 'index') {
        // not indexed in this schema: whatever the index holds under the id goes
        lines.push(JSON.stringify({ delete: { _index: this.index ?? indexNameOf(b.doc.collection), _id: b.doc.id } }));
      } else {
        lines.push(JSON.stringify({ delete: { _index: this.index ?? indexNameOf(b.collection), _id: b.id } }));
      }
    }
    let status: number;
    let text: string;
    try {
      const res = await request(this.endpoint, { method: 'POST', headers: this.headers, body: `${lines.join('\n')}\n`, headersTimeout: 60_000, bodyTimeout: 60_000 });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      throw trawlError('SINK_ES_TRANSPORT', { sink: this.name, endpoint: this.endpoint, reason: maskText((err as Error).message) }, { cause: err });
    }
    if (status < 200 || status >= 300) {
      throw trawlError('SINK_ES_STATUS', { sink: this.name, endpoint: this.endpoint, status, body: maskText(text.slice(0, 300)) });
    }
    let parsed: { errors?: boolean; items?: Array<Record<string, BulkItem>> };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw trawlError('SINK_ES_NOT_JSON', { sink: this.name, endpoint: this.endpoint, status });
    }
    if (!parsed.errors) return { rejected: [] };
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
    if (retry) throw trawlError('SINK_ES_ITEM_RETRY', { sink: this.name, reason: retry });
    return { rejected };
  }

  async close(): Promise<void> {}
}

export const ELASTICSEARCH_SINK: SinkType = {
  type: 'elasticsearch',
  problems: configRulesFor,
  open: (name, s, cx) => new ElasticsearchSink(name, {
    ...s,
    ...(s.password !== undefined ? { password: cx.reveal(s.password) } : {}),
    ...(s.apiKey !== undefined ? { apiKey: cx.reveal(s.apiKey) } : {}),
  }),
};
