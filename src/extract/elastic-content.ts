/**
 * The search document's content, read from an HTML page the way the Elastic
 * web crawler reads it (elastic-web-crawler-reference "Content extraction
 * and indexing", "Meta tags and data attributes to extract custom fields",
 * "Web crawler schema"; the Open Crawler's document mapper and HTML crawl
 * result). Runs only when a document is built for a sink (or `trawl export
 * --document`), never on the crawl's path: the crawl's links come from
 * `html.ts`.
 *
 *   HTML ─► htmlparser2 DOM (parseDocument)
 *        ├─ title           the first <title>, its text
 *        ├─ body            the <body>'s text (bodyText): script, style, svg, video,
 *        │                  object and comments left out; a space around every element
 *        │                  and for <br>/<hr>; data-elastic-include / -exclude regions
 *        ├─ meta            the first meta[name=description] / [name=keywords] content
 *        ├─ headings        h1…h6 in the body, their text, each once, in page order
 *        ├─ links           a[href] resolved against the FIRST <base href> (the HTML
 *        │                  standard, and html.ts), http(s) only, each once
 *        └─ custom fields   <meta class="elastic" name content>, data-elastic-name on
 *                           body elements; with `swiftype`, the Site Search forms too
 *
 * Include and exclude regions nest: an element with data-elastic-include
 * turns text on for what it holds, data-elastic-exclude turns it off, and
 * an element with neither keeps its parent's state; the body starts on. The
 * reference's example yields "test1 test3 test5 test7". Only the text is
 * affected: the links of an excluded region are still links (and the crawl
 * follows them: html.ts does not look at these attributes at all).
 */

import { compile, selectAll, selectOne } from 'css-select';
import type { AnyNode, ChildNode, Document, Element } from 'domhandler';
import { hash } from 'node:crypto';
import { DomUtils, parseDocument } from 'htmlparser2';

/** What `readElasticPage` needs besides the page. */
export interface ElasticPageOptions {
  /** Links kept (before any sorting), 0 for none. */
  readonly maxLinks: number;
  readonly maxHeadings: number;
  /**
   * The elements left out of the body text with what they hold (the Open
   * Crawler's exclude_tags of the page's domain: excludeTagsSet), or
   * undefined for none. Titles, headings, links and custom fields still see them.
   */
  readonly excludeTags?: ReadonlySet<string> | undefined;
}

export interface ElasticPage {
  readonly dom: Document;
  readonly title: string | undefined;
  readonly body: string;
  readonly description: string | undefined;
  readonly keywords: string | undefined;
  readonly headings: string[];
  /** In page order. */
  readonly links: string[];
  /** From <meta class="elastic">: field name → content, not yet cut. */
  readonly metaFields: Map<string, string>;
  /** From data-elastic-name on body elements: field name → text, not yet cut. */
  readonly dataFields: Map<string, string>;
  /** The Site Search forms, <meta class="swiftype"> and data-swiftype-name (App Search reads them; the Open Crawler does not). */
  readonly swiftypeMetaFields: Map<string, string>;
  readonly swiftypeDataFields: Map<string, string>;
}

/**
 * Field names a custom field may not take (the document's own fields and
 * App Search's reserved words), as the Open Crawler lists them.
 */
export const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set([
  'id', 'any', 'all', 'none', 'or', 'and', 'not', 'additional_urls', 'body_content', 'body', 'domains', 'headings',
  'last_crawled_at', 'links', 'meta_description', 'meta_keywords', 'title', 'url', 'url_host', 'url_path',
  'url_path_dir1', 'url_path_dir2', 'url_path_dir3', 'url_port', 'url_scheme',
]);

/** A custom field name: lower-case letters, digits and _, not leading _, at most 64 characters, not reserved. */
export function validFieldName(name: string): boolean {
  return /^[a-z0-9_]{1,64}$/.test(name) && !name.startsWith('_') && !RESERVED_FIELD_NAMES.has(name);
}

/** The selectors a page is read with, compiled once. */
const Q = {
  body: compile<AnyNode, Element>('body'),
  base: compile<AnyNode, Element>('base[href]'),
  title: compile<AnyNode, Element>('title'),
  meta: compile<AnyNode, Element>('meta[name][content]'),
  headings: compile<AnyNode, Element>('h1, h2, h3, h4, h5, h6'),
  links: compile<AnyNode, Element>('a[href]'),
  data: compile<AnyNode, Element>('[data-elastic-name], [data-swiftype-name]'),
} as const;

/** Elements whose content is never text of the page. */
const NON_CONTENT = new Set(['script', 'style', 'svg', 'video', 'object']);
const BREAKS = new Set(['br', 'hr']);
/** What a page without a <body> element holds that is not its body (jsoup would have put it in <head>). */
const HEAD_ONLY = new Set(['head', 'title', 'meta', 'link', 'base']);
const INCLUDE = 'data-elastic-include';
const EXCLUDE = 'data-elastic-exclude';

/** White space collapsed to one space and trimmed (Ruby's squish). */
export function squish(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function isElement(n: AnyNode): n is Element {
  return n.type === 'tag' || n.type === 'script' || n.type === 'style';
}

/**
 * The text of a node and what it holds: text nodes squished, a space around
 * every element (so "a<span>b</span>" reads "a b") and in place of <br> and
 * <hr>, the `content` attribute of an element that has one (a <meta> in the
 * body), no comments and nothing of the `ignore` elements (default: script,
 * style, svg, video, object; extraction rules pass none). With
 * `regions`, the data-elastic-include/-exclude state decides which text
 * nodes count.
 */
export function nodeText(node: AnyNode, regions = false, ignore: ReadonlySet<string> = NON_CONTENT): string {
  const out: string[] = [];
  const push = (s: string): void => {
    if (s === ' ' && (out.length === 0 || out[out.length - 1] === ' ')) return;
    out.push(s);
  };
  const headless = node.type === 'root';
  const walk = (n: AnyNode, on: boolean): void => {
    if (n.type === 'root') {
      for (const c of (n as Document).children) walk(c, on);
      return;
    }
    if (n.type === 'text') {
      if (on) {
        const t = squish((n as unknown as { data: string }).data);
        if (t !== '') push(t);
      }
      return;
    }
    if (!isElement(n)) return; // comments, directives, CDATA
    const name = n.name.toLowerCase();
    if (ignore.has(name) || (headless && HEAD_ONLY.has(name))) return;
    if (BREAKS.has(name)) {
      push(' ');
      return;
    }
    let mode = on;
    if (regions) {
      if (n.attribs[INCLUDE] !== undefined) mode = true;
      else if (n.attribs[EXCLUDE] !== undefined) mode = false;
    }
    const content = n.attribs.content;
    if (content !== undefined) {
      const t = squish(content);
      if (t !== '') push(t);
    }
    push(' ');
    for (const c of n.children as ChildNode[]) walk(c, mode);
    push(' ');
  };
  walk(node, true);
  return squish(out.join(''));
}

/** The plain text content of an element, squished (jsoup's `text()`: no spaces added between inline elements). */
export function plainText(node: AnyNode): string {
  return squish(DomUtils.textContent(node));
}

/** The document's <body>, or the whole document when the page has none. */
export function bodyOf(dom: Document): AnyNode {
  return selectOne<AnyNode, Element>(Q.body, dom) ?? dom;
}

/** The first non-empty <base href>, resolved against the page; the page's own URL when there is none or it is unusable. */
export function baseOf(dom: Document, pageUrl: string): string {
  const base = selectOne<AnyNode, Element>(Q.base, dom);
  const href = base?.attribs.href?.trim();
  if (!href) return pageUrl;
  try {
    return new URL(href, pageUrl).href;
  } catch {
    return pageUrl;
  }
}

/** Reads the parts of a page a search document is made of. */
export function readElasticPage(html: string, pageUrl: string, o: ElasticPageOptions): ElasticPage {
  const dom = parseDocument(html, { lowerCaseTags: true, lowerCaseAttributeNames: true, decodeEntities: true });
  const body = bodyOf(dom);
  const titleEl = selectOne<AnyNode, Element>(Q.title, dom);
  const metas = selectAll<AnyNode, Element>(Q.meta, dom);
  const metaContent = (name: string): string | undefined => {
    const m = metas.find((e) => e.attribs.name!.toLowerCase() === name);
    return m?.attribs.content;
  };

  const headings: string[] = [];
  if (o.maxHeadings > 0) {
    const seen = new Set<string>();
    for (const h of selectAll<AnyNode, Element>(Q.headings, body)) {
      const t = plainText(h);
      if (t === '' || seen.has(t)) continue;
      seen.add(t);
      headings.push(t);
      if (headings.length >= o.maxHeadings) break;
    }
  }

  const links: string[] = [];
  if (o.maxLinks > 0) {
    const base = baseOf(dom, pageUrl);
    const seen = new Set<string>();
    for (const a of selectAll<AnyNode, Element>(Q.links, dom)) {
      let u: URL;
      try {
        u = new URL(a.attribs.href!.trim(), base);
      } catch {
        continue;
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
      u.hash = '';
      if (seen.has(u.href)) continue;
      seen.add(u.href);
      links.push(u.href);
      if (links.length >= o.maxLinks) break;
    }
  }

  const metaFields = new Map<string, string>();
  const swiftypeMetaFields = new Map<string, string>();
  for (const m of metas) {
    const cls = (m.attribs.class ?? '').split(/\s+/);
    const name = m.attribs.name!;
    if (!validFieldName(name)) continue;
    if (cls.includes('elastic')) metaFields.set(name, m.attribs.content!);
    if (cls.includes('swiftype')) swiftypeMetaFields.set(name, m.attribs.content!);
  }
  const dataFields = new Map<string, string>();
  const swiftypeDataFields = new Map<string, string>();
  for (const e of selectAll<AnyNode, Element>(Q.data, body)) {
    const el = e.attribs['data-elastic-name'];
    const st = e.attribs['data-swiftype-name'];
    if (el !== undefined && validFieldName(el)) dataFields.set(el, plainText(e));
    if (st !== undefined && validFieldName(st)) swiftypeDataFields.set(st, plainText(e));
  }

  return {
    dom,
    title: titleEl ? nodeText(titleEl) : undefined,
    body: nodeText(body, true, o.excludeTags ?? NON_CONTENT),
    description: metaContent('description'),
    keywords: metaContent('keywords'),
    headings,
    links,
    metaFields,
    dataFields,
    swiftypeMetaFields,
    swiftypeDataFields,
  };
}

/**
 * The tags the Open Crawler accepts in a domain's exclude_tags (the HTML5
 * elements its configuration checks them against); anything else is refused.
 */
export const EXCLUDABLE_TAGS: ReadonlySet<string> = new Set(`
  a abbr address area article aside audio b base bdi bdo blockquote body br button canvas caption
  cite code col colgroup data datalist dd del details dfn dialog div dl dt em embed fieldset figcaption
  figure footer form h1 h2 h3 h4 h5 h6 head header hr html i iframe img input ins kbd label legend li
  link main map mark meta meter nav noscript object ol optgroup option output p param picture pre
  progress q rp rt ruby s samp script section select small source span strong style sub summary sup
  table tbody td template textarea tfoot th thead time title tr track u ul var video wbr`.trim().split(/\s+/));

/**
 * One trawl_elastic.exclude_tags member, "ORIGIN tag tag …" (the Open
 * Crawler's domains[].exclude_tags of the domain ORIGIN): the origin and
 * the tags, lower-cased. Throws with the reason when it is not one.
 */
export function parseExcludeTags(text: string): { origin: string; tags: string[] } {
  const [site, ...rest] = text.trim().split(/\s+/);
  let u: URL;
  try {
    u = new URL(site ?? '');
  } catch {
    throw new Error(`${JSON.stringify(site)} is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${JSON.stringify(site)} is not an http(s) URL`);
  if (rest.length === 0) throw new Error('no tags after the domain');
  const tags = rest.map((t) => t.toLowerCase());
  const bad = tags.filter((t) => !EXCLUDABLE_TAGS.has(t));
  if (bad.length > 0) throw new Error(`not HTML5 tags: ${bad.join(', ')}`);
  return { origin: u.origin, tags };
}

/**
 * trawl_elastic.exclude_tags as the set of elements a page of each origin
 * leaves out of its body text (with script, style, svg, video and object,
 * which no body text has). Members of the same origin add up.
 */
export function excludeTagsSet(members: readonly string[]): Map<string, ReadonlySet<string>> {
  const out = new Map<string, Set<string>>();
  for (const m of members) {
    const { origin, tags } = parseExcludeTags(m);
    let set = out.get(origin);
    if (!set) out.set(origin, (set = new Set(NON_CONTENT)));
    for (const t of tags) set.add(t);
  }
  return out;
}

/** The fields content_hash_include may name (the App Search crawler's crawler.extraction.content_hash_include). */
export const CONTENT_HASH_FIELDS = ['document_title', 'document_body', 'meta_keywords', 'meta_description', 'links', 'headings'] as const;
export type ContentHashField = (typeof CONTENT_HASH_FIELDS)[number];

/**
 * The content hash of an HTML page over the fields `include` names, in
 * their fixed order (so that the order they are written in does not
 * matter): two pages are duplicates when these fields are equal, whatever
 * else differs (a timestamp in a script, another navigation). Links and
 * headings are bounded by `maxLinks` and `maxHeadings`, as in the document.
 */
export function contentHash(html: string, pageUrl: string, include: readonly string[], maxLinks: number, maxHeadings: number): string {
  const p = readElasticPage(html, pageUrl, { maxLinks: include.includes('links') ? maxLinks : 0, maxHeadings: include.includes('headings') ? maxHeadings : 0 });
  const parts: Record<ContentHashField, unknown> = {
    document_title: p.title ?? '', document_body: p.body, meta_keywords: p.keywords ?? '', meta_description: p.description ?? '', links: p.links, headings: p.headings,
  };
  return hash('sha1', JSON.stringify(CONTENT_HASH_FIELDS.filter((f) => include.includes(f)).map((f) => parts[f])), 'hex');
}
