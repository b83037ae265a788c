/**
 * A sink's filter: which fed documents one sink keeps, apart from what the
 * crawl fetches and parses (allowed_types, scope). The CiteSeerX profile's
 * MirrorWriter decides this way: every in-scope page is fetched and parsed
 * for links, and only the documents that match, and the hubs, are written.
 *
 *   trawl_sinks.<sink>  accept_pattern (URL)  accept_types (MIME)  hub_link_indicator (out-links)
 *        │
 *   Feeder ─► FilteredSink.submit(batch) ─► the sink's own submit(batch')
 *              index op, kept       → the same op, with kind article | hub
 *              index op, not kept   → a delete of its id (a document kept before goes)
 *              delete op            → unchanged
 *
 * A sink without any of the three is not wrapped: no cost for it. The work
 * is the feeder's, after the crawl committed the page, never the crawl's.
 */

import { compileSafeRegex } from '../core/safe-regex.ts';
import { mimeMatches } from '../fetch/mime.ts';
import { contentTypeHeader } from './crawl-data.ts';
import { decodeText, htmlFields } from './document.ts';
import type { DocumentSourceData, Sink, SinkOp, SinkResult, SinkSettings } from './sink.ts';

/** The User Submission profile's MirrorWriter rule: the documents the repository and jms sinks write besides hubs, by default. */
export const PROFILE_ACCEPT_PATTERN = '.*(\\.(pdf))(\\.(gz))?';

/** What one sink keeps; both patterns match whole URLs, as Java's `Matcher.matches()` does. */
export interface SinkFilter {
  readonly accept: RegExp | undefined;
  readonly types: readonly string[] | undefined;
  readonly hub: RegExp | undefined;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
/** Out-links read from one page for the hub check at most. */
const MAX_HUB_LINKS = 100_000;

/**
 * The filter a sink's settings describe (patterns already checked by the
 * rules); undefined when the sink keeps every document. A repository or jms
 * sink with only hub_link_indicator keeps the profile's articles too.
 */
export function sinkFilterOf(s: SinkSettings): SinkFilter | undefined {
  const types = s.acceptTypes !== undefined && s.acceptTypes.length > 0 ? s.acceptTypes : undefined;
  if (s.acceptPattern === undefined && types === undefined && s.hubLinkIndicator === undefined) return undefined;
  const whole = (p: string, param: string): RegExp => compileSafeRegex(`^(?:${p})$`, '', `trawl_sinks.${param}`);
  const profileDefault = (s.type === 'repository' || s.type === 'jms') && types === undefined && s.hubLinkIndicator !== undefined;
  const acceptSource = s.acceptPattern ?? (profileDefault ? PROFILE_ACCEPT_PATTERN : undefined);
  return {
    accept: acceptSource === undefined ? undefined : whole(acceptSource, 'accept_pattern'),
    types,
    hub: s.hubLinkIndicator === undefined ? undefined : whole(s.hubLinkIndicator, 'hub_link_indicator'),
  };
}

/** article (the URL and the type match), hub (an HTML page with a matching out-link), or undefined: not kept. */
export function kindOf(f: SinkFilter, url: string, source: DocumentSourceData): 'article' | 'hub' | undefined {
  const mime = source.mime.split(';')[0]!.trim().toLowerCase();
  if ((f.accept !== undefined || f.types !== undefined) && (f.accept?.test(url) ?? true) && (f.types === undefined || mimeMatches(mime, f.types))) return 'article';
  const hub = f.hub;
  if (hub === undefined || !HTML_TYPES.has(mime)) return undefined;
  const links = htmlFields(decodeText(source.body, charsetOf(source.header)), url, MAX_HUB_LINKS).links;
  return links.some((l) => hub.test(l)) ? 'hub' : undefined;
}

/** A sink behind its filter: the documents it does not keep reach it as deletes. */
export class FilteredSink implements Sink {
  readonly name: string;
  readonly type: string;
  readonly schema: Sink['schema'];
  readonly inner: Sink;
  private readonly filter: SinkFilter;

  constructor(inner: Sink, filter: SinkFilter) {
    this.inner = inner;
    this.name = inner.name;
    this.type = inner.type;
    this.schema = inner.schema;
    this.filter = filter;
    // URL Status Messages are about URIs, not documents: the filter does not apply.
    if (inner.sendStatuses === undefined) this.sendStatuses = undefined;
  }

  sendStatuses: Sink['sendStatuses'] = (collection, updates) => this.inner.sendStatuses!(collection, updates);

  submit(batch: readonly SinkOp[]): Promise<SinkResult> {
    // Positions are kept, so the sink's rejections name the feeder's operations.
    return this.inner.submit(batch.map((b): SinkOp => {
      if (b.op !== 'index' || b.source === undefined) return b;
      const kind = kindOf(this.filter, b.source.record.url, b.source);
      return kind === undefined ? { op: 'delete', id: b.doc.id, url: b.source.record.url, collection: b.doc.collection } : { ...b, kind };
    }));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The charset parameter of a stored header block's Content-Type. */
function charsetOf(header: string | undefined): string | undefined {
  return /;\s*charset="?([\w-]+)/i.exec(contentTypeHeader(header) ?? '')?.[1]?.toLowerCase();
}
