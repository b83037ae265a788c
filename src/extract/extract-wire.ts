/**
 * How an HtmlExtraction crosses between the extract worker and the main
 * thread. Structured clone (the serializer postMessage uses) turns every
 * link into an object and four strings to write and read back (url, kind,
 * tag, attr). The links travel instead as an array of URLs and one string
 * per short field, joined by a space (kinds, tag and attribute names have
 * none), several times cheaper even with the split back into objects here
 * (bench/README.md, *Link extraction, measured*).
 *
 * The URLs stay an array of their own: split out of one joined string they
 * would be V8 sliced strings, each holding its page's whole string alive,
 * and the crawler keeps 100,000 links in its caches (tried: the bench
 * crawl's peak RSS grew markedly; bench/README.md, *Link extraction,
 * measured*).
 *
 * Links the crawler has already screened in this cycle do not travel at
 * all when the request names the crawler's screened-URI cache (a view of
 * its shared memory, extract-pool.ts): most of a page's links are found
 * there (bench/README.md, *What changed*, 62ac76a), and on the main
 * thread each cost a lookup, a set insertion and three counts after being
 * copied across. The worker counts
 * them (Local or LocalFwd by the cache's site tag) and sends their
 * fingerprints, so that the crawler can still tell when another spelling
 * of one of them normalizes to it.
 *
 * The cache also holds the links the crawler's scope refused by their URL
 * alone (a stylesheet excluded by exclude_exts, linked from every page of
 * a site), tagged with reservedTag(the skip code's number): those are left
 * out too and counted by skip code, as the crawler would count them.
 */

import { reservedNumber, type FingerprintReader } from '../core/fingerprint-cache.ts';
import type { ExtractedLink, HtmlExtraction, LinkKind } from './html.ts';

/** The links a page's extraction left out because the crawler's screened-URI cache held them. */
export interface ScreenedLinks {
  /** Link entries left out (one URL can be two: navigate and embed). */
  readonly links: number;
  /** Distinct URLs left out whose cache tag is the page's own site's, and those whose tag is another site's. */
  readonly local: number;
  readonly fwd: number;
  /** Distinct URLs left out that the crawler's scope refused by their URL alone, by reserved tag number (URI_SKIP_CODE_LIST's order); absent when none. */
  readonly refused?: number[];
  /** The fingerprints of those URLs, two numbers each (FingerprintReader.lastFingerprint). */
  readonly fingerprints: readonly number[];
}

/** What a request to screen a page's links needs: the cache, the page's site tag and the page's own URL. */
export interface ScreenWith {
  readonly cache: FingerprintReader;
  readonly ownTag: number;
  readonly pageUrl: string;
}

/** An extraction as the pool returns it: with what screening left out, when it screened. */
export interface PooledExtraction extends HtmlExtraction {
  readonly screened?: ScreenedLinks;
}

export interface PackedExtraction extends Omit<HtmlExtraction, 'links'> {
  readonly urls: string[];
  /** kind, tag and attr of each link, each joined by a space. */
  readonly kinds: string;
  readonly tags: string;
  readonly attrs: string;
  /** The positions of the links that are nofollow (most pages have none: no typed array to allocate and clone per page). */
  readonly nofollow: number[];
  readonly count: number;
  readonly screened?: ScreenedLinks;
}

/**
 * findMany's output arrays, kept from page to page and grown as needed:
 * two typed arrays made for every page, and the copy of the fingerprints
 * sliced from one, cost an ArrayBuffer each to allocate, zero and sweep,
 * a visible share of the extract worker's CPU (bench/README.md, *What
 * changed*, 57350aa).
 */
let scratchFps = new Int32Array(128);
let scratchFound = new Int32Array(64);

/**
 * Leaves out the links the cache holds, as the crawler would count them
 * without a second look (engine/pipeline/links.ts): navigation and embeds that
 * are not rel=nofollow and are not the page itself. Redirect, canonical
 * and feed links, and nofollow ones, stay: the crawler treats them apart.
 */
function screen(links: readonly ExtractedLink[], w: ScreenWith): { kept: ExtractedLink[]; screened: ScreenedLinks } {
  // The screenable links' URLs, and where each is in `links`.
  const keys: string[] = [];
  const at: number[] = [];
  links.forEach((l, i) => {
    if (screenable(l, w.pageUrl)) {
      keys.push(l.url);
      at.push(i);
    }
  });
  if (scratchFound.length < keys.length) {
    let size = scratchFound.length;
    while (size < keys.length) size *= 2;
    scratchFound = new Int32Array(size);
    scratchFps = new Int32Array(size * 2);
  }
  const fps = scratchFps;
  const found = scratchFound;
  // All of the page's lookups together, so that their cache misses overlap (FingerprintReader.findMany).
  w.cache.findMany(keys, fps, found);
  const kept: ExtractedLink[] = [];
  // The distinct URLs left out, in pairs.
  const fingerprints: number[] = [];
  let k = 0;
  let local = 0;
  let fwd = 0;
  let refused: number[] | undefined;
  for (let i = 0; i < links.length; i++) {
    const l = links[i]!;
    const slot = at[k] === i ? found[k++]! : -1;
    if (slot < 0) {
      kept.push(l);
      continue;
    }
    const hi = fps[2 * k - 2]!;
    const lo = fps[2 * k - 1]!;
    let again = false;
    for (let j = 0; j < fingerprints.length; j += 2) {
      if (fingerprints[j] === hi && fingerprints[j + 1] === lo) {
        again = true;
        break;
      }
    }
    if (again) continue;
    fingerprints.push(hi, lo);
    const tag = w.cache.tagAt(slot);
    const code = reservedNumber(tag);
    if (code >= 0) {
      refused ??= [];
      refused[code] = (refused[code] ?? 0) + 1;
    } else if (tag === w.ownTag) local++;
    else fwd++;
  }
  const left = links.length - kept.length;
  if (refused === undefined) return { kept, screened: { links: left, local, fwd, fingerprints } };
  return { kept, screened: { links: left, local, fwd, fingerprints, refused: Array.from(refused, (c) => c ?? 0) } };
}

/** Whether the cache may leave the link out: navigation or an embed, not rel=nofollow, not the page itself. */
function screenable(l: ExtractedLink, pageUrl: string): boolean {
  return (l.kind === 'navigate' || l.kind === 'embed') && !l.nofollow && l.url !== pageUrl;
}

export function packExtraction(x: HtmlExtraction, screenWith?: ScreenWith): PackedExtraction {
  const { links: all, ...rest } = x;
  const s = screenWith ? screen(all, screenWith) : undefined;
  const links = s ? s.kept : all;
  const nofollow: number[] = [];
  links.forEach((l, i) => {
    if (l.nofollow) nofollow.push(i);
  });
  return {
    ...rest,
    urls: links.map((l) => l.url),
    kinds: links.map((l) => l.kind).join(' '),
    tags: links.map((l) => l.tag).join(' '),
    attrs: links.map((l) => l.attr).join(' '),
    nofollow,
    count: links.length,
    ...(s ? { screened: s.screened } : {}),
  };
}

export function unpackExtraction(p: PackedExtraction): PooledExtraction {
  const { urls, kinds, tags, attrs, nofollow, count, ...rest } = p;
  const links: ExtractedLink[] = [];
  if (count > 0) {
    const k = kinds.split(' ');
    const t = tags.split(' ');
    const a = attrs.split(' ');
    // nofollow lists positions in increasing order.
    let next = 0;
    for (let i = 0; i < count; i++) {
      const nf = nofollow[next] === i;
      if (nf) next++;
      links.push({ url: urls[i]!, kind: k[i] as LinkKind, tag: t[i]!, attr: a[i]!, nofollow: nf });
    }
  }
  return { ...rest, links };
}
