/**
 * Link and metadata extraction from an HTML (or WML) document in one
 * pass of htmlparser2's tokenizer (html-events.ts): no DOM is built.
 *
 * ```
 *  string | bytes ──(UTF-8 TextDecoder)──► readHtml: htmlparser2 Tokenizer (entities left as written)
 *                                              │
 *        onopentag(name, attribs) ─────────────┤ switch (name), each rule gated by its LinkFlags key
 *          (attributes of ELEMENTS_READ only; │
 *           of the others, style alone)        │
 *          base href (first only) ─► baseRaw   │   a/area/form/frame/img/link/meta/object/... ─► candidates[]
 *          meta ─► robots, refresh, og:*       │   style="" ─► css url()/@import ─────────────► candidates[]
 *          link ─► canonical, feeds, kinds     │
 *        ontext ─► buffer for <title>, <script>, <style> (only while one is open)
 *        onclosetag ─► title; script string literals; style url()/@import ─► candidates[]
 *        oncomment ─► absolute http(s) URLs, or an IE conditional comment's markup
 *                     fed through a nested readHtml that shares these callbacks
 *                                              │
 *        (end of input) ───────────────────────┘
 *            ▼
 *  candidates[] (raw attribute text, document order)
 *     ─► resolve against the base (first <base href>, which applies to the whole
 *        document even when it comes after a link) ─► drop unparsable, fragment-only
 *        and disallowed schemes ─► strip fragment
 *     ─► dedupe by url+kind (a duplicate is nofollow only if every copy is)
 *     ─► cap at maxLinks ─► HtmlExtraction
 * ```
 *
 * Resolution waits for the end of the pass because the HTML base URL is the
 * first `<base href>` anywhere in the document (HTML "document base URL"),
 * so a link seen before the base element still resolves against it.
 *
 * Charset detection is out of scope: bytes are decoded as UTF-8 (invalid
 * sequences become U+FFFD, a BOM is dropped). Callers that know another
 * charset decode first and pass a string.
 *
 * The metadata fields (robots, canonical, metaRefresh, feeds, title, lang)
 * are always filled; the LinkFlags only decide what goes into `links`.
 * Policy stays with the caller: meta robots `nofollow` (check_meta_robots),
 * `rel=nofollow`, and html_redir_is_redir / html_redir_thresh for the refresh.
 *
 * Where this differs from Heritrix's regex extractor (the conformance
 * fixtures in test/fixtures/conformance/links/), on purpose:
 * - script_java is conservative: only quoted absolute http(s) URLs whose host
 *   has an alphabetic TLD, and root-relative page paths (`"/a/b.html"`); no
 *   URLs guessed from bare host names or concatenations.
 * - `flashvars` query strings are not mined for URLs; only `<param>`s that
 *   plugins read as URLs (movie, src, url, ..., or valuetype=ref).
 * - the document is parsed as HTML, so a `<form>` nested in an open form is
 *   dropped, as browsers drop it; Heritrix's GET-only rule applies to the rest.
 * Heritrix behaviour kept: lazy-load `data-*` image sources, og:video-style
 * meta content, and markup inside IE conditional comments (under `comment`).
 */
import { decodeHTML, decodeHTMLAttribute } from 'entities';
import { readHtml, type HtmlEvents } from './html-events.ts';
import { PRODUCT_TOKEN } from '../core/version.ts';
import { plainLinkResolver } from './resolve-link.ts';

/** Which link sources are extracted; the keys of MS-FSCCFG 2.2.4.17 `link_extraction` (registry key names). */
export interface LinkFlags {
  /** `<a href>` (also SVG `xlink:href`). */
  a: boolean;
  /** `<form action>` of GET forms, `formaction` of their buttons. */
  action: boolean;
  /** `<area href>`. */
  area: boolean;
  /** WML `<card onenterforward|onenterbackward|ontimer>`. */
  card: boolean;
  /** Absolute http(s) URLs in comments; markup inside IE conditional comments. */
  comment: boolean;
  /** `<embed src>`, and the media elements `<video|audio|source|track src>`. */
  embed: boolean;
  /** `<frame src>`, `<iframe src>`. */
  frame: boolean;
  /** WML `<go href>`. */
  go: boolean;
  /** `<img src|srcset>`, lazy-load `data-*` sources, `<source srcset>`, `<input type=image>`, `poster`, `background`, og:image. */
  img: boolean;
  /** Netscape `<layer|ilayer src>`. */
  layer: boolean;
  /** `<link href>`; `rel` decides the kind. */
  link: boolean;
  /** URL-valued `<meta>` properties (og:url, og:video, ...). */
  meta: boolean;
  /** `<meta http-equiv=refresh>`. */
  metaRefresh: boolean;
  /** `<object data|codebase>`, URL-valued `<param>`. */
  object: boolean;
  /** `<script src>`. */
  script: boolean;
  /** Conservative URLs from string literals in inline JavaScript/JSON scripts. */
  scriptJava: boolean;
  /** `url()` and `@import` in `<style>` and `style=""`. */
  style: boolean;
}

/** MS-FSCCFG 2.2.4.17 defaults: everything but `img`. */
export const DEFAULT_LINK_FLAGS: Readonly<LinkFlags> = Object.freeze({
  a: true, action: true, area: true, card: true, comment: true, embed: true, frame: true, go: true, img: false,
  layer: true, link: true, meta: true, metaRefresh: true, object: true, script: true, scriptJava: true, style: true,
});

/** trawl_limits max_links_per_page default. */
export const DEFAULT_MAX_LINKS = 1000;

/**
 * navigate: a page the user could go to (a, area, frame, iframe, form, link rel=next, ...).
 * embed: a resource the page loads (img, script, css, embed, object, link stylesheet/icon).
 * redirect: meta refresh. canonical: link rel=canonical. feed: link rel=alternate with an RSS/Atom/RDF type.
 */
export type LinkKind = 'navigate' | 'embed' | 'redirect' | 'canonical' | 'feed';

export interface ExtractedLink {
  /** Absolute (WHATWG-serialised), resolved against the document base URL, without fragment. */
  readonly url: string;
  readonly kind: LinkKind;
  /** Element name (lower case), or `#comment`. */
  readonly tag: string;
  /** Attribute name (lower case), or `#text` for a `<script>`/`<style>` body or a comment. */
  readonly attr: string;
  /** `rel` contains `nofollow` (a, area, link, form). For a URL seen several times: only if every occurrence was. */
  readonly nofollow: boolean;
}

/** Page-level robots directives; all false when nothing was said. */
export interface MetaRobots {
  noindex: boolean;
  nofollow: boolean;
  noarchive: boolean;
  nosnippet: boolean;
  /** The raw date text of the first `unavailable_after`; not parsed. */
  unavailableAfter?: string;
}

export interface HtmlExtraction {
  /** In document order (first occurrence), deduplicated by url+kind, at most maxLinks. */
  readonly links: ExtractedLink[];
  /** Distinct url+kind links dropped by the maxLinks cap. */
  readonly truncatedLinks: number;
  /** The base links were resolved against: the first `<base href>` resolved against the document URL, else the document URL. */
  readonly baseUrl: string;
  /** From `<meta name=robots>` and `<meta name=<productToken>>` (all combined); check_meta_robots is the caller's policy. */
  readonly robots: MetaRobots;
  /** The first `<link rel=canonical>` that resolves to an allowed scheme. */
  readonly canonical: string | undefined;
  /** The first valid `<meta http-equiv=refresh>`; `url` is the document URL when the content names none. */
  readonly metaRefresh: { readonly delayS: number; readonly url: string } | undefined;
  /** The first `<title>` outside SVG, whitespace collapsed; undefined when absent or empty. */
  readonly title: string | undefined;
  /** `<html lang>`. */
  readonly lang: string | undefined;
  /** `<link rel=alternate>` with an RSS, Atom or RDF type, deduplicated. */
  readonly feeds: string[];
}

export interface ExtractHtmlOptions {
  flags?: LinkFlags;
  /** Default DEFAULT_MAX_LINKS. */
  maxLinks?: number;
  /** The crawler's robots product token (`<meta name="trawl">`, `trawl: noindex`). Default PRODUCT_TOKEN. */
  productToken?: string;
  /** Schemes kept, without or with the colon. Default http, https. */
  allowedSchemes?: readonly string[];
}

// ---------------------------------------------------------------- tables

/** `<link rel>` tokens whose target the page loads. */
const EMBED_RELS = new Set([
  'stylesheet', 'icon', 'apple-touch-icon', 'apple-touch-icon-precomposed', 'mask-icon', 'manifest', 'preload',
  'modulepreload', 'prefetch',
]);
/** `<link rel>` tokens that name no document to crawl (an endpoint or a host hint). */
const IGNORED_RELS = new Set(['pingback', 'dns-prefetch', 'preconnect']);
const FEED_TYPES = new Set(['application/rss+xml', 'application/atom+xml', 'application/rdf+xml']);

/** URL-valued meta properties (Open Graph, Twitter cards); `img` marks the ones also gated by the img flag. */
const META_URL_PROPS = new Map<string, { kind: LinkKind; img: boolean }>([
  ['og:url', { kind: 'navigate', img: false }],
  ['og:image', { kind: 'embed', img: true }],
  ['og:image:url', { kind: 'embed', img: true }],
  ['og:image:secure_url', { kind: 'embed', img: true }],
  ['twitter:image', { kind: 'embed', img: true }],
  ['twitter:image:src', { kind: 'embed', img: true }],
  ['og:video', { kind: 'embed', img: false }],
  ['og:video:url', { kind: 'embed', img: false }],
  ['og:video:secure_url', { kind: 'embed', img: false }],
  ['og:audio', { kind: 'embed', img: false }],
  ['og:audio:url', { kind: 'embed', img: false }],
  ['og:audio:secure_url', { kind: 'embed', img: false }],
]);

/** `<param name>` values that plugins read as a URL. */
const URL_PARAMS = new Set(['movie', 'src', 'url', 'filename', 'href', 'data', 'file', 'source']);

/** HTML "JavaScript MIME type essence" list, plus `module` and JSON (ld+json carries URLs too). */
const SCRIPT_TYPES = new Set([
  'application/ecmascript', 'application/javascript', 'application/x-ecmascript', 'application/x-javascript',
  'text/ecmascript', 'text/javascript', 'text/javascript1.0', 'text/javascript1.1', 'text/javascript1.2',
  'text/javascript1.3', 'text/javascript1.4', 'text/javascript1.5', 'text/jscript', 'text/livescript',
  'text/x-ecmascript', 'text/x-javascript', 'module', 'application/json', 'application/ld+json',
]);

// CSS: url(...) with or without quotes, and @import "..." (the url() form of @import is caught by the first).
const CSS_URL = /url\(\s*(?:"([^"]*)"|'([^']*)'|([^)"'\s]*))\s*\)|@import\s+(?:"([^"]*)"|'([^']*)')/gi;
// A quoted string that starts like an absolute http(s) URL or a root-relative path.
const JS_CANDIDATE = /(["'])((?:https?:|\/)[^"'\s<>]*)\1/g;
// Absolute http(s) URLs in comment text.
const COMMENT_URL = /https?:\/\/[^\s"'<>()[\]{}\\^`]+/gi;
// The conservative filters: a dotted host with an alphabetic TLD; a root-relative page path.
const PLAUSIBLE_ABSOLUTE = /^https?:\/\/[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,63}(?::\d{1,5})?(?:[/?#][^\s"'<>\\]*)?$/i;
const PLAUSIBLE_PATH = /^\/(?!\/)[^\s"'<>\\?#]*\.(?:s?html?|php\d?|aspx?|jsp|cfm|cgi)(?:[?#][^\s"'<>\\]*)?$/i;

const UTF8 = new TextDecoder('utf-8');

/** The elements whose attributes onopentag reads (its cases); of the others it reads only `style`. */
const ELEMENTS_READ: ReadonlySet<string> = new Set([
  'a', 'area', 'base', 'form', 'button', 'input', 'frame', 'iframe', 'img', 'source', 'video', 'audio', 'track', 'embed', 'body', 'table', 'td', 'th',
  'link', 'meta', 'object', 'param', 'script', 'style', 'title', 'html', 'svg', 'card', 'go', 'layer', 'ilayer',
]);

/**
 * The tokenizer leaves character references as written, and the few
 * values the extractor reads are decoded here instead: attribute values
 * as HTML decodes them in an attribute (`&copy=1` stays as written, the
 * HTML "character reference in attribute" rule), the title as text. With
 * entity decoding on, htmlparser2 walks every character of the page's text
 * one call at a time looking for `&`; off, it skips to the next `<` in a
 * tight loop, and the tokenizer is most of the extract worker's CPU
 * (bench/README.md, *Link extraction, measured*, has the figures). Both decoders are
 * the ones htmlparser2 itself uses (the `entities` package, same modes),
 * so the results are the same (test/extract/html.test.ts).
 */
function decodeAttributes(attribs: Record<string, string>): void {
  for (const name in attribs) {
    const v = attribs[name]!;
    if (v.indexOf('&') >= 0) attribs[name] = decodeHTMLAttribute(v);
  }
}

const decodeText = (text: string): string => (text.indexOf('&') >= 0 ? decodeHTML(text) : text);

/** A `<title>`'s text: decoded, whitespace collapsed; undefined when empty. */
const titleText = (text: string): string | undefined => collapseWhitespace(decodeText(text)) || undefined;

// ---------------------------------------------------------------- extraction

interface Candidate {
  readonly raw: string;
  readonly kind: LinkKind;
  readonly tag: string;
  readonly attr: string;
  readonly nofollow: boolean;
  /** A raw URL `raw` is relative to, itself relative to the base (`<object codebase>`). */
  readonly ctx: string | undefined;
}

interface MutableLink {
  url: string;
  kind: LinkKind;
  tag: string;
  attr: string;
  nofollow: boolean;
}

/**
 * Extracts links and page metadata in one pass. Never throws for bad markup;
 * throws a TypeError only when `documentUrl` is not an absolute URL.
 *
 * The two phases of the sketch at the top: an HtmlPass reads the events of
 * one tokenizer pass, then a LinkResolver resolves what it collected.
 */
export function extractHtml(html: string | Uint8Array, documentUrl: string, opts: ExtractHtmlOptions = {}): HtmlExtraction {
  const docUrl = new URL(documentUrl);
  docUrl.hash = '';
  const flags = opts.flags ?? DEFAULT_LINK_FLAGS;
  const maxLinks = opts.maxLinks ?? DEFAULT_MAX_LINKS;
  const token = (opts.productToken ?? PRODUCT_TOKEN).toLowerCase();
  const allowed = new Set((opts.allowedSchemes ?? ['http', 'https']).map((s) => (s.endsWith(':') ? s : `${s}:`).toLowerCase()));
  const text = typeof html === 'string' ? html : UTF8.decode(html);

  const pass = new HtmlPass(flags, token);
  readHtml(text, pass, ELEMENTS_READ);

  const resolver = new LinkResolver(documentBase(pass.baseRaw, docUrl.href), allowed);
  const links: MutableLink[] = [];
  const truncatedLinks = collectLinks(pass.candidates, resolver, maxLinks, links);
  let canonical: string | undefined;
  for (const raw of pass.canonicalRaws) {
    canonical = resolver.cached(raw);
    if (canonical !== undefined) break;
  }
  const feeds = new Set<string>();
  for (const raw of pass.feedRaws) {
    const url = resolver.cached(raw);
    if (url !== undefined) feeds.add(url);
  }
  let metaRefresh: HtmlExtraction['metaRefresh'];
  if (pass.refresh !== undefined) {
    const url = pass.refresh.url === undefined ? docUrl.href : resolver.cached(pass.refresh.url);
    if (url !== undefined) metaRefresh = { delayS: pass.refresh.delayS, url };
  }
  const title = pass.capture === 'title' ? titleText(pass.captured) : pass.title; // an unclosed <title> at EOF

  return {
    links, truncatedLinks, baseUrl: resolver.base, robots: pass.robots, canonical, metaRefresh, title, lang: pass.lang, feeds: [...feeds],
  };
}

/**
 * One page's pass over the tokenizer's events (html-events.ts): the
 * handlers are the methods, the state of the pass the fields, so a page
 * costs one object here rather than a closure per handler. Nothing is
 * resolved during the pass: the base URL may come after the links that
 * use it. Link sources go into `candidates` as written, in document
 * order, each gated by its LinkFlags key; the metadata is read whatever
 * the flags say.
 */
class HtmlPass implements HtmlEvents {
  /** Every link source seen, as written, in document order. */
  readonly candidates: Candidate[] = [];
  /** The first `<base href>`, as written (HTML: it applies to the whole document wherever it is). */
  baseRaw: string | undefined = undefined;
  readonly robots: MetaRobots = { noindex: false, nofollow: false, noarchive: false, nosnippet: false };
  /** `<link rel=canonical href>` values, as written, in document order. */
  readonly canonicalRaws: string[] = [];
  /** `<link rel=alternate href>` values of a feed type, as written, in document order. */
  readonly feedRaws: string[] = [];
  /** The first meta refresh that parsed; its URL as written. */
  refresh: { delayS: number; url: string | undefined } | undefined = undefined;
  title: string | undefined = undefined;
  lang: string | undefined = undefined;
  /** The element whose text is being collected into `captured`. */
  capture: 'title' | 'script' | 'style' | undefined = undefined;
  captured = '';

  private readonly flags: LinkFlags;
  /** The robots product token, lower case. */
  private readonly token: string;
  private titleSeen = false;
  private htmlSeen = false;
  private svgDepth = 0;
  /** Whether the open form is a GET form; undefined: no form open (htmlparser2 drops nested <form>, as HTML does). */
  private formIsGet: boolean | undefined = undefined;
  /** Inside an IE conditional comment's markup, whose own conditional comments are not read. */
  private inConditional = false;

  constructor(flags: LinkFlags, token: string) {
    this.flags = flags;
    this.token = token;
  }

  /** Records a link source; an absent or empty value is none. */
  add(raw: string | undefined, kind: LinkKind, tag: string, attr: string, nofollow = false, ctx?: string): void {
    if (raw !== undefined && raw !== '') this.candidates.push({ raw, kind, tag, attr, nofollow, ctx });
  }

  onopentag(name: string, attribs: Record<string, string>): void {
    decodeAttributes(attribs);
    const flags = this.flags;
    switch (name) {
      case 'a':
        if (flags.a) this.add(attribs.href ?? attribs['xlink:href'], 'navigate', 'a', 'href', hasNofollow(attribs.rel));
        break;
      case 'area':
        if (flags.area) this.add(attribs.href, 'navigate', 'area', 'href', hasNofollow(attribs.rel));
        break;
      case 'base':
        // HTML: the document base URL comes from the first <base> with an href, wherever it is.
        if (this.baseRaw === undefined && attribs.href !== undefined) this.baseRaw = attribs.href;
        break;
      case 'form':
        // Heritrix rule (HER-1280): only GET forms (no method, or an invalid one, is GET in HTML).
        this.formIsGet = isGetMethod(attribs.method);
        if (flags.action && this.formIsGet) this.add(attribs.action, 'navigate', 'form', 'action', hasNofollow(attribs.rel));
        break;
      case 'button':
      case 'input':
        this.onFormControl(name, attribs);
        break;
      case 'frame':
      case 'iframe':
        if (flags.frame) this.add(attribs.src, 'navigate', name, 'src');
        break;
      case 'img':
      case 'source':
        this.onImage(name, attribs);
        break;
      case 'video':
        if (flags.img) this.add(attribs.poster, 'embed', name, 'poster');
        if (flags.embed) this.add(attribs.src, 'embed', name, 'src');
        break;
      case 'audio':
      case 'track':
      case 'embed':
        if (flags.embed) this.add(attribs.src, 'embed', name, 'src');
        break;
      case 'body':
      case 'table':
      case 'td':
      case 'th':
        if (flags.img) this.add(attribs.background, 'embed', name, 'background');
        break;
      case 'link':
        this.onLink(attribs);
        break;
      case 'meta':
        this.onMeta(attribs);
        break;
      case 'object':
      case 'param':
        if (flags.object) this.onObject(name, attribs);
        break;
      case 'script':
        if (flags.script) this.add(attribs.src, 'embed', name, 'src');
        if (flags.scriptJava && isScriptType(attribs.type)) this.startCapture('script');
        break;
      case 'style':
        if (flags.style) this.startCapture('style');
        break;
      case 'title':
        if (!this.titleSeen && this.svgDepth === 0) {
          this.titleSeen = true;
          this.startCapture('title');
        }
        break;
      case 'html':
        if (!this.htmlSeen) {
          this.htmlSeen = true;
          this.lang = attribs.lang?.trim() || undefined;
        }
        break;
      case 'svg':
        this.svgDepth++;
        break;
      case 'card':
        if (flags.card) {
          this.add(attribs.onenterforward, 'navigate', name, 'onenterforward');
          this.add(attribs.onenterbackward, 'navigate', name, 'onenterbackward');
          this.add(attribs.ontimer, 'navigate', name, 'ontimer');
        }
        break;
      case 'go':
        if (flags.go) this.add(attribs.href, 'navigate', name, 'href');
        break;
      case 'layer':
      case 'ilayer':
        if (flags.layer) this.add(attribs.src, 'navigate', name, 'src');
        break;
    }
    if (flags.style && attribs.style !== undefined) this.addCss(attribs.style, name, 'style');
  }

  wantsText(): boolean {
    return this.capture !== undefined;
  }

  ontext(data: string): void {
    this.captured += data;
  }

  onclosetag(name: string): void {
    if (name === this.capture) {
      const body = this.captured;
      this.capture = undefined;
      this.captured = '';
      if (name === 'title') this.title = titleText(body);
      else if (name === 'style') this.addCss(body, 'style', '#text');
      else scanScript(body, this);
    } else if (name === 'form') this.formIsGet = undefined;
    else if (name === 'svg' && this.svgDepth > 0) this.svgDepth--;
  }

  oncomment(data: string): void {
    if (!this.flags.comment) return;
    const markup = conditionalCommentMarkup(data);
    if (markup !== undefined) {
      // IE conditional comments hold markup old IE loaded; parse it with the same handlers.
      if (this.inConditional) return;
      this.inConditional = true;
      readHtml(markup, this, ELEMENTS_READ);
      this.inConditional = false;
      return;
    }
    if (data.indexOf('://') < 0) return;
    for (const m of data.matchAll(COMMENT_URL)) {
      const url = trimTrailingPunctuation(m[0]);
      if (PLAUSIBLE_ABSOLUTE.test(url)) this.add(url, 'navigate', '#comment', '#text');
    }
  }

  private startCapture(what: 'title' | 'script' | 'style'): void {
    this.capture = what;
    this.captured = '';
  }

  /** `<button>` and `<input>`: the formaction of a control in a GET form, and `<input type=image src>`. */
  private onFormControl(name: string, attribs: Record<string, string>): void {
    if (this.flags.action && this.formIsGet !== undefined && attribs.formaction !== undefined) {
      const get = attribs.formmethod === undefined ? this.formIsGet : isGetMethod(attribs.formmethod);
      if (get) this.add(attribs.formaction, 'navigate', name, 'formaction');
    }
    if (name === 'input' && this.flags.img && attribs.type?.trim().toLowerCase() === 'image') this.add(attribs.src, 'embed', name, 'src');
  }

  /** `<img>` and `<source>`: src, srcset and the lazy-load `data-*` sources; a `<source src>` is media (the embed flag). */
  private onImage(name: string, attribs: Record<string, string>): void {
    if (this.flags.img) {
      if (name === 'img') this.add(attribs.src, 'embed', name, 'src');
      if (attribs.srcset) srcsetUrls(attribs.srcset, this, name, 'srcset');
      for (const attr in attribs) {
        const value = attribs[attr];
        if (value && attr.startsWith('data-') && isLazySourceAttr(attr)) srcsetUrls(value, this, name, attr);
      }
    }
    if (name === 'source' && this.flags.embed) this.add(attribs.src, 'embed', name, 'src');
  }

  /** `<object>` and URL-valued `<param>`s (the object flag). */
  private onObject(name: string, attribs: Record<string, string>): void {
    if (name === 'object') {
      // HTML 4.01 13.3: data is relative to codebase when there is one.
      this.add(attribs.codebase, 'embed', name, 'codebase');
      this.add(attribs.data, 'embed', name, 'data', false, attribs.codebase || undefined);
      return;
    }
    const pname = attribs.name?.trim().toLowerCase();
    if (attribs.valuetype?.trim().toLowerCase() === 'ref' || (pname !== undefined && URL_PARAMS.has(pname))) this.add(attribs.value, 'embed', name, 'value');
  }

  private onLink(attribs: Record<string, string>): void {
    const href = attribs.href;
    if (href === undefined) return;
    const rels = tokens(attribs.rel);
    if (rels.length === 0) return; // a <link> without rel means nothing
    let kind: LinkKind;
    if (rels.includes('canonical')) {
      kind = 'canonical';
      this.canonicalRaws.push(href);
    } else if (rels.includes('alternate') && FEED_TYPES.has(mimeEssence(attribs.type))) {
      kind = 'feed';
      this.feedRaws.push(href);
    } else if (rels.some((r) => EMBED_RELS.has(r))) kind = 'embed';
    else if (rels.every((r) => IGNORED_RELS.has(r))) return;
    else kind = 'navigate';
    if (this.flags.link) this.add(href, kind, 'link', 'href', rels.includes('nofollow'));
  }

  private onMeta(attribs: Record<string, string>): void {
    const content = attribs.content;
    if (content === undefined) return;
    if (attribs['http-equiv']?.trim().toLowerCase() === 'refresh') {
      const parsed = parseMetaRefresh(content);
      // HTML "shared declarative refresh steps": only the first successful refresh counts.
      if (parsed === undefined || this.refresh !== undefined) return;
      this.refresh = parsed;
      if (this.flags.metaRefresh) this.add(parsed.url, 'redirect', 'meta', 'content');
      return;
    }
    const name = attribs.name?.trim().toLowerCase();
    if (name === 'robots' || name === this.token) mergeRobots(this.robots, parseRobotsDirectives(content, this.token));
    if (!this.flags.meta) return;
    const prop = attribs.property?.trim().toLowerCase() ?? name;
    const rule = prop === undefined ? undefined : META_URL_PROPS.get(prop);
    if (rule && (!rule.img || this.flags.img)) this.add(content, rule.kind, 'meta', 'content');
  }

  private addCss(css: string, tag: string, attr: string): void {
    if (css.indexOf('(') < 0 && css.indexOf('@') < 0) return;
    for (const m of css.matchAll(CSS_URL)) this.add(m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5], 'embed', tag, attr);
  }
}

/** The document's base URL: the first `<base href>` resolved against the document URL, else the document URL. */
function documentBase(baseRaw: string | undefined, docHref: string): string {
  if (baseRaw === undefined) return docHref;
  const b = URL.parse(baseRaw, docHref);
  // A data: or javascript: base is not usable (HTML "frozen base URL" falls back to the document URL).
  return b && b.protocol !== 'data:' && b.protocol !== 'javascript:' ? stripFragment(b.href) : docHref;
}

/**
 * Turns a page's raw link text into absolute URLs of an allowed scheme,
 * without fragment, against the document base: undefined for a
 * same-document reference, a disallowed scheme, or what does not parse.
 * `cached` remembers each raw text's answer for the page (a page repeats
 * its links); the plain resolver (resolve-link.ts) answers the plain
 * links against the base without the URL parser.
 */
class LinkResolver {
  readonly base: string;
  private readonly allowed: ReadonlySet<string>;
  private readonly plain: ((link: string) => string | undefined) | undefined;
  /** Raw text → its URL; null for none. */
  private readonly cache = new Map<string, string | null>();

  constructor(base: string, allowed: ReadonlySet<string>) {
    this.base = base;
    this.allowed = allowed;
    this.plain = allowed.has(base.slice(0, base.indexOf(':') + 1)) ? plainLinkResolver(base, allowed) : undefined;
  }

  /** `raw` resolved against the base, remembered for the page. */
  cached(raw: string): string | undefined {
    let r = this.cache.get(raw);
    if (r === undefined) {
      r = this.resolve(raw, this.base) ?? null;
      this.cache.set(raw, r);
    }
    return r ?? undefined;
  }

  /** `raw` resolved against `against` (the base, or a URL resolved against it). */
  resolve(raw: string, against: string): string | undefined {
    const s = trimAscii(raw);
    if (s === '' || s.charCodeAt(0) === 0x23 /* # */) return undefined; // same-document reference
    if (against === this.base && this.plain) {
      const r = this.plain(s);
      if (r !== undefined) return r;
    }
    const scheme = schemeOf(s);
    if (scheme !== undefined && !this.allowed.has(scheme)) return undefined; // skip parsing data:, javascript:, ...
    // scheme://… never uses the base: parsing it only for such a link is wasted.
    const u = scheme !== undefined && s.startsWith('//', scheme.length) ? URL.parse(s) : URL.parse(s, against);
    if (!u || !this.allowed.has(u.protocol)) return undefined;
    return stripFragment(u.href);
  }
}

/**
 * Resolves the candidates into `links`: the first occurrence of each
 * url+kind in document order, nofollow only if every occurrence is, at
 * most `maxLinks`. Returns how many distinct url+kind links the cap dropped.
 */
function collectLinks(candidates: readonly Candidate[], resolver: LinkResolver, maxLinks: number, links: MutableLink[]): number {
  // Keyed by URL within each kind: a key joining the two is a new string to build and hash for every
  // candidate, where a resolved URL is a string whose hash is kept (bench/README.md, *What changed*, 98dac27).
  const byKind = new Map<LinkKind, Map<string, MutableLink>>();
  const dropped = new Set<string>();
  for (const c of candidates) {
    const url = c.ctx === undefined ? resolver.cached(c.raw) : resolver.resolve(c.raw, URL.parse(trimAscii(c.ctx), resolver.base)?.href ?? resolver.base);
    if (url === undefined) continue;
    let byUrl = byKind.get(c.kind);
    if (byUrl === undefined) byKind.set(c.kind, (byUrl = new Map()));
    const seen = byUrl.get(url);
    if (seen) {
      seen.nofollow &&= c.nofollow;
      continue;
    }
    if (links.length >= maxLinks) {
      dropped.add(`${c.kind} ${url}`);
      continue;
    }
    const link: MutableLink = { url, kind: c.kind, tag: c.tag, attr: c.attr, nofollow: c.nofollow };
    links.push(link);
    byUrl.set(url, link);
  }
  return dropped.size;
}

// ---------------------------------------------------------------- robots

/** Directive names that take a `name: value` form, so `name:` is not a user-agent prefix. */
const VALUED_DIRECTIVES = new Set(['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview']);
const AGENT_NAME = /^[a-z0-9_-]+$/;

/**
 * Parses a robots meta `content` or an `X-Robots-Tag` header value
 * (Google's robots meta tag documentation): comma-separated directives,
 * case-insensitive; `none` = noindex + nofollow; `all`/`index`/`follow` say
 * nothing; `nocache` = noarchive. A `<agent>: ` prefix scopes the directives
 * that follow it (up to the next prefix) to that agent; they count only when
 * it equals `productToken` (default PRODUCT_TOKEN). Repeated headers joined
 * with commas therefore work too. Returns only the directives that were set.
 */
export function parseRobotsDirectives(value: string, productToken: string = PRODUCT_TOKEN): Partial<MetaRobots> {
  const out: Partial<MetaRobots> = {};
  const token = productToken.toLowerCase();
  const parts = value.split(',');
  let applies = true;
  for (let i = 0; i < parts.length; i++) {
    let part = (parts[i] ?? '').trim();
    let colon = part.indexOf(':');
    if (colon > 0) {
      const head = part.slice(0, colon).trim().toLowerCase();
      if (!VALUED_DIRECTIVES.has(head) && AGENT_NAME.test(head)) {
        applies = head === token;
        part = part.slice(colon + 1).trim();
        colon = part.indexOf(':');
      }
    }
    if (!applies || part === '') continue;
    const name = (colon > 0 ? part.slice(0, colon) : part).trim().toLowerCase();
    switch (name) {
      case 'noindex': out.noindex = true; break;
      case 'nofollow': out.nofollow = true; break;
      case 'none': out.noindex = true; out.nofollow = true; break;
      case 'noarchive':
      case 'nocache': out.noarchive = true; break;
      case 'nosnippet': out.nosnippet = true; break;
      case 'unavailable_after': {
        let date = part.slice(colon + 1).trim();
        // RFC 850 dates ("Sunday, 01-Sep-19 23:59:59 GMT") contain a comma: a value with no digit yet continues.
        if (!/\d/.test(date) && i + 1 < parts.length) date = `${date}, ${(parts[++i] ?? '').trim()}`;
        if (date !== '' && out.unavailableAfter === undefined) out.unavailableAfter = date;
        break;
      }
    }
  }
  return out;
}

function mergeRobots(into: MetaRobots, from: Partial<MetaRobots>): void {
  if (from.noindex) into.noindex = true;
  if (from.nofollow) into.nofollow = true;
  if (from.noarchive) into.noarchive = true;
  if (from.nosnippet) into.nosnippet = true;
  if (from.unavailableAfter !== undefined && into.unavailableAfter === undefined) into.unavailableAfter = from.unavailableAfter;
}

// ---------------------------------------------------------------- meta refresh

const isAsciiWs = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * The HTML "shared declarative refresh steps" (WHATWG HTML 4.2.5.3) applied
 * to a `<meta http-equiv=refresh content>` value. Returns undefined when the
 * content is not a refresh; `url` is undefined when it names no URL (refresh
 * to the document itself), otherwise the URL text with tabs and newlines
 * removed and leading/trailing spaces and controls trimmed, as the URL parser
 * would; it is not resolved.
 */
export function parseMetaRefresh(content: string): { delayS: number; url: string | undefined } | undefined {
  const s = content;
  const n = s.length;
  let i = 0;
  const skipWs = (): void => {
    while (i < n && isAsciiWs(s.charCodeAt(i))) i++;
  };
  skipWs();
  const digitsStart = i;
  while (i < n && isDigit(s.charCodeAt(i))) i++;
  let delayS = 0;
  if (i === digitsStart) {
    if (s.charCodeAt(i) !== 0x2e /* . */) return undefined;
  } else delayS = Number(s.slice(digitsStart, i));
  while (i < n && (isDigit(s.charCodeAt(i)) || s.charCodeAt(i) === 0x2e)) i++; // fractional part, ignored
  if (i < n) {
    const c = s.charCodeAt(i);
    if (c !== 0x3b /* ; */ && c !== 0x2c /* , */ && !isAsciiWs(c)) return undefined;
    skipWs();
    if (s.charCodeAt(i) === 0x3b || s.charCodeAt(i) === 0x2c) i++;
    skipWs();
  }
  if (i >= n) return { delayS, url: undefined };
  let urlStart = i; // "url = " is optional; if it is cut short, the text from here is the URL
  const lower = (k: number): number => s.charCodeAt(k) | 0x20;
  let quoted = true;
  if (lower(i) === 0x75 /* u */) {
    i++;
    if (lower(i) === 0x72 /* r */ && lower(i + 1) === 0x6c /* l */) {
      i += 2;
      skipWs();
      if (s.charCodeAt(i) === 0x3d /* = */) {
        i++;
        skipWs();
      } else quoted = false;
    } else quoted = false;
  }
  let end = n;
  if (quoted) {
    urlStart = i;
    const q = s.charCodeAt(i);
    if (q === 0x22 || q === 0x27) {
      urlStart = i + 1;
      const close = s.indexOf(s[i] ?? '', urlStart);
      if (close >= 0) end = close;
    }
  }
  // URL parser preprocessing: strip leading/trailing C0 controls and spaces, remove tab and newlines.
  const url = trimAscii(s.slice(urlStart, end).replace(/[\t\n\r]/g, ''));
  return { delayS, url: url === '' ? undefined : url };
}

// ---------------------------------------------------------------- small parsers

/**
 * The URL-collecting part of the HTML srcset algorithm (4.8.4.3.10): URLs are
 * runs of non-whitespace; a URL ending in commas ends its candidate; otherwise
 * descriptors run to the next comma outside parentheses. Descriptors are not
 * validated: a crawler keeps a URL a browser would ignore for a bad descriptor.
 */
function srcsetUrls(value: string, into: HtmlPass, tag: string, attr: string): void {
  const n = value.length;
  let i = 0;
  while (true) {
    while (i < n && (isAsciiWs(value.charCodeAt(i)) || value.charCodeAt(i) === 0x2c)) i++;
    if (i >= n) return;
    const start = i;
    while (i < n && !isAsciiWs(value.charCodeAt(i))) i++;
    let end = i;
    if (value.charCodeAt(end - 1) === 0x2c) {
      while (end > start && value.charCodeAt(end - 1) === 0x2c) end--;
      into.add(value.slice(start, end), 'embed', tag, attr);
      continue;
    }
    into.add(value.slice(start, end), 'embed', tag, attr);
    let inParens = false;
    while (i < n) {
      const c = value.charCodeAt(i++);
      if (c === 0x28) inParens = true;
      else if (c === 0x29) inParens = false;
      else if (c === 0x2c && !inParens) break;
    }
  }
}

/**
 * URLs in inline script text, conservatively: quoted string literals that are
 * an absolute http(s) URL with a dotted, alphabetic-TLD host, or a
 * root-relative path ending in a page extension (.html, .php, .asp, ...).
 * JSON's `\/` is unescaped; other escapes make the string unusable. Nothing
 * is guessed from bare host names or concatenations (Heritrix's speculative
 * extraction is not done).
 */
function scanScript(js: string, into: HtmlPass): void {
  if (js.indexOf('http') < 0 && js.indexOf('/') < 0) return;
  for (const m of js.matchAll(JS_CANDIDATE)) {
    let s = m[2] ?? '';
    if (s.indexOf('\\') >= 0) s = s.replaceAll('\\/', '/');
    if (PLAUSIBLE_ABSOLUTE.test(s) || PLAUSIBLE_PATH.test(s)) into.add(s, 'navigate', 'script', '#text');
  }
}

/** The markup inside `<!--[if ...]>markup<![endif]-->`, or undefined for an ordinary comment. */
function conditionalCommentMarkup(data: string): string | undefined {
  if (data.length < 4 || data.charCodeAt(0) !== 0x5b /* [ */ || (data.charCodeAt(1) | 0x20) !== 0x69 || (data.charCodeAt(2) | 0x20) !== 0x66) return undefined;
  const open = data.indexOf(']>');
  if (open < 0) return undefined;
  const endif = data.toLowerCase().lastIndexOf('<![endif]');
  return data.slice(open + 2, endif > open ? endif : data.length);
}

function isLazySourceAttr(name: string): boolean {
  // data-src, data-srcset, data-src-small, data-full-src, data-lazy-srcset, data-original(-set), data-lazy
  const n = name.slice(5);
  return n.startsWith('src') || n.endsWith('-src') || n.endsWith('-srcset') || n === 'original' || n === 'original-set' || n === 'lazy';
}

function isGetMethod(method: string | undefined): boolean {
  if (method === undefined) return true;
  const m = method.trim().toLowerCase();
  return m !== 'post' && m !== 'dialog'; // HTML: an invalid method is GET
}

function isScriptType(type: string | undefined): boolean {
  if (type === undefined) return true;
  const t = type.trim().toLowerCase();
  return t === '' || SCRIPT_TYPES.has(mimeEssence(t));
}

function hasNofollow(rel: string | undefined): boolean {
  return rel !== undefined && tokens(rel).includes('nofollow');
}

function tokens(value: string | undefined): string[] {
  if (value === undefined) return [];
  const out: string[] = [];
  for (const t of value.toLowerCase().split(/[\t\n\f\r ]+/)) if (t !== '') out.push(t);
  return out;
}

function mimeEssence(type: string | undefined): string {
  if (type === undefined) return '';
  const semi = type.indexOf(';');
  return (semi < 0 ? type : type.slice(0, semi)).trim().toLowerCase();
}

function collapseWhitespace(s: string): string {
  return s.replace(/[\t\n\f\r ]+/g, ' ').trim();
}

function trimTrailingPunctuation(s: string): string {
  let end = s.length;
  while (end > 0 && '.,;:!?'.includes(s[end - 1] ?? '')) end--;
  return s.slice(0, end);
}

function stripFragment(href: string): string {
  const hash = href.indexOf('#');
  return hash < 0 ? href : href.slice(0, hash);
}

/** Trims what the URL parser strips (C0 controls and space), without copying in the common case. */
function trimAscii(s: string): string {
  if (s.length === 0 || (s.charCodeAt(0) > 0x20 && s.charCodeAt(s.length - 1) > 0x20)) return s;
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) <= 0x20) a++;
  while (b > a && s.charCodeAt(b - 1) <= 0x20) b--;
  return s.slice(a, b);
}

/** The lower-case scheme with its colon when `s` starts with one (`javascript:`), else undefined. */
function schemeOf(s: string): string | undefined {
  const first = s.charCodeAt(0) | 0x20;
  if (first < 0x61 || first > 0x7a) return undefined;
  for (let i = 1; i < s.length && i < 32; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x3a) return s.slice(0, i + 1).toLowerCase();
    const l = c | 0x20;
    if (!((l >= 0x61 && l <= 0x7a) || isDigit(c) || c === 0x2b || c === 0x2d || c === 0x2e)) return undefined;
  }
  return undefined;
}
