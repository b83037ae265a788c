/**
 * Feeds: RSS 0.9x / 2.0, RSS 0.90 and 1.0 (RDF), Atom 0.3 / 1.0, read in one
 * streaming saxes pass into the few fields a crawler needs.
 *
 * ```
 *  bytes ──(BOM | <?xml encoding=…?> ──► TextDecoder)──► text ──► saxes (namespaces on)
 *
 *  frame stack, one frame per open element:
 *    root      <rss> | <feed> (any namespace; it joins RSS's or Atom's) | <rdf:RDF>
 *              (anything else: { invalid })
 *    channel   <channel>                         (RSS / RDF)
 *    entry     <item> | <entry>                  under root or channel
 *    field     a known child of root/channel/entry ──► capture its content
 *    ignore    everything else, with its whole subtree
 *              (<image>, <textInput>, <author>, <source>, <content>, foreign namespaces…)
 *
 *  each frame carries its base URL:  xml:base resolved against the parent's,
 *  the root's parent being Content-Location resolved against the document URL;
 *  a base that is not http(s) or ftp (javascript:, data:), or does not parse, is ignored.
 * ```
 *
 * Field sources, first one wins (feedparser's mapping):
 *   title      atom:title (a text construct), rss:title, dc:title
 *   link       rss:link; atom:link rel=alternate with an HTML type or none;
 *              for an RSS item without one, a guid that is a permalink
 *   id         atom:id, rss:guid, else rdf:about
 *   published  atom:published, atom:issued (0.3), rss:pubDate, dcterms:issued
 *   updated    atom:updated, atom:modified (0.3), dc:date, dcterms:modified
 *   links      every atom:link; rss:link (alternate); rss:enclosure (enclosure);
 *              the permalink guid when it stands in for the link (alternate)
 *
 * URL references are resolved only when relative (an absolute one is kept as
 * written, so `HTTP://Example.org/x` stays as the feed spelled it), against
 * the element's base; with no absolute base they stay relative. A link that
 * does not parse as a URL then (`http://exa mple.org/`) is dropped. A guid with
 * isPermaLink="false" is an opaque string and is never resolved.
 *
 * A title of type html / xhtml (or with inline markup) is returned as HTML:
 * re-serialised (lower-case tags, sorted and quoted attributes, `<br />`) with
 * its relative URLs resolved, as feedparser reports it. It is normalised,
 * not sanitised: escape or sanitise it before showing it in a page.
 *
 * Safety: saxes never reads external entities; a DOCTYPE that declares
 * entities is refused; input size and element depth are bounded. An undefined
 * entity reference (`&nbsp;`) is kept as written instead of failing the
 * document; any other malformed XML makes the result `{ invalid }`.
 */
import { Parser as HtmlParser } from 'htmlparser2';
import { SaxesParser } from 'saxes';
import type { SaxesTagNS } from 'saxes';

export interface FeedLink {
  /** Resolved against the element's base when relative. */
  href: string;
  /** Atom rel (default `alternate`); `alternate` for an RSS `<link>`, `enclosure` for an RSS `<enclosure>`. */
  rel: string;
  type?: string;
}

export interface FeedEntry {
  /** The entry's page: see the module comment for the sources. */
  link?: string;
  id?: string;
  title?: string;
  /** As given in the feed (RFC 822 for RSS, RFC 3339 for Atom, W3C-DTF for Dublin Core); not parsed. */
  published?: string;
  updated?: string;
  links: FeedLink[];
}

export interface Feed {
  /** `rdf` is RSS 0.90 and RSS 1.0 (an `rdf:RDF` root). */
  kind: 'rss' | 'atom' | 'rdf';
  title?: string;
  link?: string;
  entries: FeedEntry[];
}

export interface FeedParseOptions {
  /** Where the feed was fetched; `''` when unknown (relative references then stay relative). */
  url: string;
  /** The response's Content-Location header: the document's base URL when present (resolved against `url`). */
  contentLocation?: string;
  /** Entries kept at most, the first ones in document order (default: all). */
  maxEntries?: number;
  /** Bytes read at most (default 16 MiB); a larger body is invalid. */
  maxBytes?: number;
}

/** The largest channel read when the caller names no limit (the crawler fetches channels under it too). */
export const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
/** Element nesting read at most; inline XHTML content is the deepest part of a feed. */
const MAX_DEPTH = 256;
/** Characters kept of one captured field. */
const MAX_FIELD_CHARS = 256 * 1024;

/** Atom 1.0 and 0.3. A root's own namespace also counts (the Atom drafts before 0.3 used several). */
const ATOM_NS = new Set(['http://www.w3.org/2005/Atom', 'http://purl.org/atom/ns#']);
/** RSS 1.0 and 0.90. Like Atom's, an `<rss>` root's own namespace also counts (some 0.9x/2.0 feeds declare one). */
const RSS_NS = new Set(['http://purl.org/rss/1.0/', 'http://my.netscape.com/rdf/simple/0.9/']);
const DC_NS = 'http://purl.org/dc/elements/1.1/';
const DCTERMS_NS = 'http://purl.org/dc/terms/';
const RDF_NS = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';

type Vocab = 'atom' | 'rss' | 'dc' | 'dcterms' | 'rdf' | 'other';
type TextField = 'title' | 'link' | 'id' | 'published' | 'updated';

/** How a captured element's content becomes a value. */
interface Capture {
  /** Frame depth of the captured element. */
  depth: number;
  field: TextField;
  /** The owner: the feed or the entry being read. */
  target: Target;
  base: string;
  /** Atom text construct (title only): its type and mode attributes. */
  construct?: { type: string; mode: string };
  /** RSS guid: isPermaLink is not "false". */
  permalink?: boolean;
  /** Text as the XML gave it, child elements serialised. */
  raw: string;
  /** The same with text escaped: the content as markup. */
  markup: string;
  hasElements: boolean;
  /** The only top-level child, when it is a single element (an XHTML wrapper `<div>`): its local name and inner markup span. */
  top: { elements: number; text: boolean; first?: string; innerStart: number; innerEnd: number };
}

interface Target {
  title?: string;
  link?: string;
  id?: string;
  published?: string;
  updated?: string;
  links: FeedLink[];
  /** RDF rdf:about, the id when no other is given. */
  about?: string;
  /** RSS guid that is a permalink: the link when no other is given. */
  permalink?: string;
}

type Role = 'root' | 'channel' | 'entry' | 'field' | 'ignore';

interface Frame {
  role: Role;
  base: string;
}

/** Thrown from inside saxes callbacks to stop the parse; never escapes this module. */
class Stop extends Error {}

export function parseFeed(body: Uint8Array | string, opts: FeedParseOptions): Feed | { invalid: string } {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const size = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  if (size > maxBytes) return { invalid: `the feed is ${size} bytes; at most ${maxBytes} are read` };
  // Leading white space (often left by a template engine) would make the XML declaration an error.
  const text = (typeof body === 'string' ? body.replace(/^\uFEFF/, '') : decodeXmlBytes(body)).trimStart();
  const docUrl = safeBase(opts.url, '');
  const docBase = opts.contentLocation ? safeBase(resolveRef(opts.contentLocation, docUrl), docUrl) : docUrl;
  const reader = new FeedReader(docBase, opts.maxEntries ?? Infinity);
  try {
    saxesFor(reader).write(text).close();
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
  }
  return reader.result();
}

/** A namespace-aware saxes parser whose events go to `reader`. */
function saxesFor(reader: FeedReader): SaxesParser<{ xmlns: true; position: false }> {
  const parser = new SaxesParser({
    xmlns: true,
    position: false,
    resolvePrefix: (prefix: string) => (prefix === '' ? undefined : `urn:trawl:undeclared:${prefix}`),
  });
  parser.on('doctype', (doctype) => {
    if (/<!ENTITY/i.test(doctype)) reader.fail('DOCTYPE entity declarations are refused');
  });
  parser.on('error', (err) => {
    // An undefined entity (&nbsp; from an HTML or RSS 0.91 DTD) is kept as written and saxes goes on.
    // Not a bare "&": saxes' recovery from it would swallow markup up to the next ";".
    if (/undefined entity/.test(err.message)) return;
    reader.fail(`malformed XML: ${err.message}`);
  });
  parser.on('opentag', (tag) => reader.openTag(tag));
  parser.on('text', (t) => reader.text(t));
  parser.on('cdata', (t) => reader.text(t));
  parser.on('closetag', (tag) => reader.closeTag(tag));
  return parser;
}

/**
 * One feed's reading: the frame stack of the sketch at the top, the feed
 * and its entries as read so far, and the field being captured. saxes
 * calls openTag, text and closeTag; fail stops the parse (it throws Stop
 * out of saxes) and the first failure is the result.
 */
class FeedReader {
  private kind: Feed['kind'] | undefined;
  /** The root element's namespace (none for RDF): elements in it are the root's vocabulary. */
  private rootNs = '';
  private failure: string | undefined;
  private readonly feed: Target = { links: [] };
  private readonly entries: Target[] = [];
  private readonly frames: Frame[] = [];
  private capture: Capture | undefined;
  private readonly docBase: string;
  private readonly maxEntries: number;

  constructor(docBase: string, maxEntries: number) {
    this.docBase = docBase;
    this.maxEntries = maxEntries;
  }

  /** The feed read, or why it is not one. */
  result(): Feed | { invalid: string } {
    if (this.failure !== undefined) return { invalid: this.failure };
    if (this.kind === undefined) return { invalid: 'not a feed: no root element' };
    const out: Feed = { kind: this.kind, entries: this.entries.map(toEntry) };
    if (this.feed.title !== undefined) out.title = this.feed.title;
    if (this.feed.link !== undefined) out.link = this.feed.link;
    return out;
  }

  fail(reason: string): never {
    this.failure = reason;
    throw new Stop();
  }

  openTag(tag: SaxesTagNS): void {
    const frames = this.frames;
    if (frames.length >= MAX_DEPTH) this.fail(`elements nest deeper than ${MAX_DEPTH} levels`);
    const parent = frames[frames.length - 1];
    if (this.capture) {
      openInCapture(this.capture, tag, frames.length + 1);
      frames.push({ role: 'field', base: this.capture.base });
      return;
    }
    if (!parent) {
      this.kind = rootKind(tag);
      this.rootNs = this.kind === 'rdf' ? '' : tag.uri;
      if (!this.kind) this.fail(`not a feed: the root element is <${tag.name}>`);
      frames.push({ role: 'root', base: baseOf(tag, this.docBase) });
      return;
    }
    if (parent.role !== 'root' && parent.role !== 'channel' && parent.role !== 'entry') {
      frames.push({ role: 'ignore', base: parent.base });
      return;
    }
    const base = baseOf(tag, parent.base);
    frames.push({ role: this.childRole(tag, parent.role, base), base });
  }

  text(t: string): void {
    const capture = this.capture;
    if (!capture) return;
    if (capture.raw.length >= MAX_FIELD_CHARS) return;
    capture.raw += t;
    capture.markup += escapeText(t);
    if (this.frames.length === capture.depth && /\S/.test(t)) capture.top.text = true;
  }

  closeTag(tag: SaxesTagNS): void {
    const depth = this.frames.length;
    this.frames.pop();
    const capture = this.capture;
    if (!capture) return;
    if (depth > capture.depth) {
      closeInCapture(capture, tag, depth);
      return;
    }
    this.capture = undefined;
    finishCapture(capture);
  }

  /** What an element directly under the root, a channel or an entry is. */
  private childRole(tag: SaxesTagNS, parent: 'root' | 'channel' | 'entry', base: string): Role {
    const v = this.vocabOf(tag.uri);
    if (parent === 'entry') return this.classify(tag, this.entries[this.entries.length - 1]!, base, true);
    if (parent === 'root' && this.kind !== 'atom' && v === 'rss' && tag.local === 'channel') return 'channel';
    if ((v === 'rss' && tag.local === 'item' && this.kind !== 'atom') || (v === 'atom' && tag.local === 'entry' && this.kind === 'atom')) {
      if (this.entries.length >= this.maxEntries) return 'ignore';
      const about = attr(tag, 'about', RDF_NS)?.trim();
      this.entries.push(about ? { links: [], about: resolveRef(about, base) } : { links: [] });
      return 'entry';
    }
    return this.classify(tag, this.feed, base, false);
  }

  /** What a child of the feed (root or channel) or of an entry is: a field to capture, or ignored (an atom:link or an enclosure is read from its attributes). */
  private classify(tag: SaxesTagNS, target: Target, base: string, atEntry: boolean): Role {
    const v = this.vocabOf(tag.uri);
    const name = tag.local;
    if (v === 'atom') {
      switch (name) {
        case 'title': return this.startCapture('title', target, base, { construct: { type: (attr(tag, 'type') ?? '').trim().toLowerCase(), mode: (attr(tag, 'mode') ?? '').trim().toLowerCase() } });
        case 'link': addAtomLink(tag, target, base); return 'ignore';
        case 'id': return this.startCapture('id', target, base);
        case 'published': case 'issued': return this.startCapture('published', target, base);
        case 'updated': case 'modified': return this.startCapture('updated', target, base);
      }
      return 'ignore';
    }
    if (v === 'rss') {
      switch (name) {
        case 'title': case 'link': return this.startCapture(name, target, base);
        case 'guid': return atEntry ? this.startCapture('id', target, base, { permalink: attr(tag, 'isPermaLink')?.trim().toLowerCase() !== 'false' }) : 'ignore';
        case 'pubDate': return this.startCapture('published', target, base);
        case 'enclosure': {
          const url = attr(tag, 'url')?.trim();
          const href = url ? resolveLink(url, base) : undefined;
          if (atEntry && href !== undefined) target.links.push(withType({ href, rel: 'enclosure' }, attr(tag, 'type')));
          return 'ignore';
        }
      }
      return 'ignore';
    }
    if (v === 'dc' && name === 'title') return this.startCapture('title', target, base);
    if (v === 'dc' && name === 'date') return this.startCapture('updated', target, base);
    if (v === 'dcterms' && name === 'issued') return this.startCapture('published', target, base);
    if (v === 'dcterms' && name === 'modified') return this.startCapture('updated', target, base);
    return 'ignore';
  }

  private startCapture(field: TextField, target: Target, base: string, extra: Partial<Capture> = {}): Role {
    this.capture = {
      depth: this.frames.length + 1, field, target, base, raw: '', markup: '', hasElements: false,
      top: { elements: 0, text: false, innerStart: 0, innerEnd: 0 }, ...extra,
    };
    return 'field';
  }

  /** The vocabulary of a namespace; no namespace, or the root's own, is the root's (RSS's or Atom's). */
  private vocabOf(uri: string): Vocab {
    if (uri === '' || uri === this.rootNs) return this.kind === 'atom' ? 'atom' : 'rss';
    if (ATOM_NS.has(uri)) return 'atom';
    if (RSS_NS.has(uri)) return 'rss';
    if (uri === DC_NS) return 'dc';
    if (uri === DCTERMS_NS) return 'dcterms';
    if (uri === RDF_NS) return 'rdf';
    return 'other';
  }
}

/** The attribute `local` in namespace `uri` (none by default). */
function attr(tag: SaxesTagNS, local: string, uri = ''): string | undefined {
  for (const a of Object.values(tag.attributes)) if (a.local === local && a.uri === uri) return a.value;
  return undefined;
}

/** An atom:link into the target's links; a rel=alternate one of an HTML type (or none) is also its link, the first one. */
function addAtomLink(tag: SaxesTagNS, target: Target, base: string): void {
  const raw = attr(tag, 'href');
  // href="" is the base itself (RFC 3986 5.2: a same-document reference).
  const href = raw === undefined ? '' : resolveLink(raw, base);
  if (href === undefined || href === '') return;
  const rel = attr(tag, 'rel')?.trim() || 'alternate';
  const type = attr(tag, 'type')?.trim();
  const link = withType({ href, rel }, type);
  target.links.push(link);
  if (rel.toLowerCase() === 'alternate' && (!type || HTML_TYPES.has(type.toLowerCase()))) target.link ??= link.href;
}

/** A captured field's value into its target; the first value of each field wins. */
function finishCapture(c: Capture): void {
  const t = c.target;
  switch (c.field) {
    case 'title':
      t.title ??= c.construct ? constructValue(c) : c.raw.trim();
      break;
    case 'link': {
      const href = c.raw.trim();
      if (href === '') break;
      const resolved = resolveLink(href, c.base);
      if (resolved === undefined) break;
      t.links.push({ href: resolved, rel: 'alternate' });
      t.link ??= resolved;
      break;
    }
    case 'id': {
      const id = c.raw.trim();
      if (id === '') break;
      // A guid that says it is not a permalink is an opaque string; Atom ids and permalinks are URLs.
      const value = c.permalink === false ? id : resolveRef(id, c.base);
      t.id ??= value;
      if (c.permalink && /^https?:\/\//i.test(value) && URL.canParse(value)) t.permalink ??= value;
      break;
    }
    case 'published':
    case 'updated': {
      const v = c.raw.trim();
      if (v !== '') t[c.field] ??= v;
      break;
    }
  }
}

function toEntry(t: Target): FeedEntry {
  const e: FeedEntry = { links: t.links };
  const link = t.link ?? t.permalink;
  if (link !== undefined) e.link = link;
  if (t.link === undefined && t.permalink !== undefined) e.links.push({ href: t.permalink, rel: 'alternate' });
  const id = t.id ?? t.about;
  if (id !== undefined) e.id = id;
  if (t.title !== undefined) e.title = t.title;
  if (t.published !== undefined) e.published = t.published;
  if (t.updated !== undefined) e.updated = t.updated;
  return e;
}

function withType(link: FeedLink, type: string | undefined): FeedLink {
  const t = type?.trim();
  return t ? { ...link, type: t } : link;
}

function rootKind(tag: SaxesTagNS): Feed['kind'] | undefined {
  if (tag.local === 'feed') return 'atom';
  if (tag.local === 'rss') return 'rss';
  if (tag.local === 'RDF' && tag.uri === RDF_NS) return 'rdf';
  return undefined;
}

/** The element's base URL: its xml:base resolved against the parent's, or the parent's. */
function baseOf(tag: SaxesTagNS, parentBase: string): string {
  for (const a of Object.values(tag.attributes)) {
    if (a.local === 'base' && a.uri === XML_NS) return safeBase(resolveRef(a.value, parentBase), parentBase);
  }
  return parentBase;
}

/** A base URL with a scheme other than http(s) or ftp (javascript:, data:, ...) is ignored: the fallback stays. */
function safeBase(base: string, fallback: string): string {
  // An absolute base that does not parse (xml:base="http://[bad") is ignored too:
  // kept, it would leave the references under it relative, unresolved.
  return !SCHEME.test(base) || (/^(?:https?|ftp):/i.test(base) && URL.canParse(base)) ? base : fallback;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** A reference resolved against a base: kept as written when absolute, or when there is no absolute base. */
/**
 * A link's URL: resolveRef's, or undefined when it is not a URL although it
 * should be one (it has a scheme, or the base is absolute): "http://exa mple.org/"
 * is dropped, not returned as written for every caller to trip over.
 */
function resolveLink(ref: string, base: string): string | undefined {
  const r = resolveRef(ref, base);
  return (SCHEME.test(r) || SCHEME.test(base)) && !URL.canParse(r) ? undefined : r;
}

function resolveRef(ref: string, base: string): string {
  const r = ref.trim();
  if (SCHEME.test(r) || !SCHEME.test(base)) return r;
  try {
    return new URL(r, base).href;
  } catch {
    return r;
  }
}

// ------------------------------------------------------------------ text constructs

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
/** HTML void elements: written `<br />`, never closed. */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;');
}

/** An element inside captured content, written back as markup (namespace declarations and xml:* dropped). */
function openInCapture(c: Capture, tag: SaxesTagNS, depth: number): void {
  c.hasElements = true;
  if (c.raw.length >= MAX_FIELD_CHARS) return;
  let s = `<${tag.local}`;
  for (const a of Object.values(tag.attributes)) {
    if (a.uri === XMLNS_NS || a.uri === XML_NS || a.name === 'xmlns') continue;
    s += ` ${a.local}="${escapeAttr(a.value)}"`;
  }
  s += '>';
  c.raw += s;
  c.markup += s;
  if (depth === c.depth + 1) {
    c.top.elements++;
    if (c.top.elements === 1) {
      c.top.first = tag.local;
      c.top.innerStart = c.markup.length;
    }
  }
}

function closeInCapture(c: Capture, tag: SaxesTagNS, depth: number): void {
  if (depth === c.depth + 1 && c.top.elements === 1) c.top.innerEnd = c.markup.length;
  if (VOID.has(tag.local) || c.raw.length >= MAX_FIELD_CHARS) return;
  c.raw += `</${tag.local}>`;
  c.markup += `</${tag.local}>`;
}

/**
 * The value of an Atom text construct. Atom 1.0 `type`: text | html | xhtml;
 * Atom 0.3 `type` is a MIME type and `mode` is escaped | base64 | xml.
 */
function constructValue(c: Capture): string {
  const { type, mode } = c.construct!;
  const kind = type === 'html' || type === 'text/html' ? 'html'
    : type === 'xhtml' || type === 'application/xhtml+xml' || type.endsWith('+xml') || type.endsWith('/xml') ? 'xhtml'
      : 'text';
  // Inline content is markup already (XML text escaped back); escaped content is the text itself.
  // Atom 1.0 (no mode): a MIME type that is neither text nor XML means base64 (RFC 4287 4.1.3.3).
  const base64 = mode === 'base64' || (mode === '' && type.includes('/') && !type.startsWith('text/') && kind !== 'xhtml');
  const inline = !base64 && (mode === 'xml' || type === 'xhtml' || c.hasElements);
  let content: string;
  if (base64) {
    content = Buffer.from(c.raw.replace(/\s+/g, ''), 'base64').toString('utf8');
  } else if (inline) {
    // Atom 1.0 xhtml: the content is the wrapper <div>'s children.
    const t = c.top;
    content = type === 'xhtml' && t.elements === 1 && !t.text && t.first === 'div' ? c.markup.slice(t.innerStart, t.innerEnd) : c.markup;
  } else {
    content = c.raw;
  }
  if (kind === 'text' && !inline) return content.trim();
  return normalizeHtml(content, c.base).trim();
}

/** Attributes holding a URL, per element (HTML's URL-valued attributes). */
const URL_ATTRS: Record<string, readonly string[]> = {
  a: ['href'], applet: ['codebase'], area: ['href'], audio: ['src'], blockquote: ['cite'], body: ['background'],
  del: ['cite'], embed: ['src'], form: ['action'], frame: ['longdesc', 'src'], iframe: ['longdesc', 'src'],
  img: ['longdesc', 'src', 'usemap'], input: ['src', 'usemap'], ins: ['cite'], link: ['href'],
  object: ['classid', 'codebase', 'data', 'usemap'], q: ['cite'], script: ['src'], source: ['src'], track: ['src'],
  video: ['poster', 'src'],
};

/**
 * HTML re-serialised the way feedparser reports it: lower-case names,
 * attributes sorted and double-quoted, void elements as `<br />`, comments
 * dropped, every open element closed, relative URLs resolved against `base`.
 */
function normalizeHtml(html: string, base: string): string {
  let out = '';
  const parser = new HtmlParser({
    onopentag(name, attribs) {
      const urlAttrs = URL_ATTRS[name] ?? [];
      out += `<${name}`;
      for (const key of Object.keys(attribs).sort()) {
        if (key === 'xmlns' || key.startsWith('xmlns:')) continue;
        const value = urlAttrs.includes(key) ? resolveRef(attribs[key]!, base) : attribs[key]!;
        out += ` ${key}="${escapeAttr(value)}"`;
      }
      out += VOID.has(name) ? ' />' : '>';
    },
    ontext(t) {
      out += escapeText(t);
    },
    onclosetag(name) {
      if (!VOID.has(name)) out += `</${name}>`;
    },
  }, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
  parser.end(html);
  return out;
}

// ------------------------------------------------------------------ bytes and sniffing

/** Decodes by byte order mark, then the XML declaration's encoding, else UTF-8 (XML 1.0 Appendix F). */
function decodeXmlBytes(body: Uint8Array): string {
  let label = 'utf-8';
  if (body[0] === 0xfe && body[1] === 0xff) label = 'utf-16be';
  else if (body[0] === 0xff && body[1] === 0xfe) label = 'utf-16le';
  else if (body[0] === 0x00 && body[1] === 0x3c) label = 'utf-16be';
  else if (body[0] === 0x3c && body[1] === 0x00) label = 'utf-16le';
  else if (!(body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf)) {
    const head = Buffer.from(body.subarray(0, 1024)).toString('latin1');
    const declared = /^\s*<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._:-]*)["']/.exec(head)?.[1];
    // A declared UTF-16 on a byte stream without UTF-16's zero bytes was transcoded; read it as UTF-8.
    if (declared && !/^utf-?16/i.test(declared)) label = declared;
  }
  try {
    return new TextDecoder(label).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body); // an encoding label TextDecoder does not know
  }
}

const FEED_MIMES = new Set(['application/rss+xml', 'application/atom+xml', 'application/rdf+xml', 'application/rss', 'text/rss+xml', 'text/atom+xml']);

/**
 * Whether a response is a feed: its first element is `<rss>`, `<feed>`
 * (Atom), or `<rdf:RDF>` declaring an RSS namespace. Only when the first
 * 4 KiB do not show the root element does the MIME type decide, so a feed
 * served as text/html or text/xml is found, and an HTML error page served
 * as application/rss+xml is not.
 */
export function looksLikeFeed(mime: string, body: Uint8Array): boolean {
  const head = decodeXmlBytes(body.subarray(0, 4096));
  // Skip the XML declaration, comments, processing instructions and a DOCTYPE (with its internal subset).
  const prolog = /^(?:\s|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE(?:[^[>]|\[[\s\S]*?\])*>)*/i.exec(head.replace(/^\uFEFF/, ''));
  const rest = head.replace(/^\uFEFF/, '').slice(prolog?.[0].length ?? 0);
  const root = /^<([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)[\s/>]/.exec(rest)?.[1];
  if (root === undefined) return FEED_MIMES.has(mime.split(';', 1)[0]!.trim().toLowerCase());
  const local = root.slice(root.indexOf(':') + 1);
  if (local === 'rss' || local === 'feed') return true;
  if (local === 'RDF') return /purl\.org\/rss\/1\.0\/|my\.netscape\.com\/rdf\/simple\/0\.9\//.test(rest);
  return false;
}
