// HTML link and metadata extraction: the Heritrix and WPT conformance tables, then our own cases.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  DEFAULT_LINK_FLAGS, extractHtml, parseMetaRefresh, parseRobotsDirectives,
  type ExtractedLink, type HtmlExtraction, type LinkFlags,
} from '../../src/extract/html.ts';
import { Parser } from 'htmlparser2';
import { FIXTURES } from '../helpers.ts';

const DIR = `${FIXTURES}conformance/links/`;
const FLAG_KEYS = Object.keys(DEFAULT_LINK_FLAGS) as (keyof LinkFlags)[];
const flagsWith = (on: (k: keyof LinkFlags) => boolean): LinkFlags =>
  Object.fromEntries(FLAG_KEYS.map((k) => [k, on(k)])) as unknown as LinkFlags;
const ALL_ON = flagsWith(() => true);

const DOC = 'http://www.example.com/dir/page.html';
const urls = (r: HtmlExtraction): string[] => r.links.map((l) => l.url);
const extract = (html: string | Uint8Array, opts: Parameters<typeof extractHtml>[2] = {}): HtmlExtraction =>
  extractHtml(html, DOC, { flags: ALL_ON, ...opts });

// ------------------------------------------------------------------ Heritrix ExtractorHTMLTest

interface HeritrixEntry {
  base: string;
  mode: 'exact-set' | 'exact-list' | 'contains' | 'count';
  links?: string[];
  count?: number;
  derived_links?: string[];
  must_not_contain?: string[];
  hops?: string[];
  meta_robots?: string;
  options?: { obeyRelNofollow?: boolean };
  tags?: string[];
}

/** Fixtures trawl deliberately handles differently from Heritrix (all tagged heritrix-specific). */
const DELIBERATE: Record<string, string> = {
  'heritrix/testSpeculativeLinkExtraction.html':
    'bare host names in script strings ("www.example.com") are not guessed into URLs; script_java takes only absolute http(s) URLs and root-relative page paths',
  'heritrix/testFlashvarsParamValue.html':
    'flashvars is an application-defined query string; which of its values are URLs is a guess, for an obsolete plugin',
  'heritrix/testFlashvarsEmbedAttribute.html':
    'flashvars is an application-defined query string; which of its values are URLs is a guess, for an obsolete plugin',
  'heritrix/testOnlyExtractFormGets.html':
    'the later <form> tags are nested in the unclosed first one, and HTML parsing ignores a nested <form> start tag, so only ok1 is a form (the GET-only rule itself is tested with closed forms below)',
};

const canon = (u: string): string => {
  const h = new URL(u).href;
  return h.split('#', 1)[0] ?? h;
};

/** How the crawler consumes an extraction: meta robots nofollow drops every link (check_meta_robots), rel=nofollow when obeyed. */
function outlinks(r: HtmlExtraction, obeyRelNofollow: boolean): ExtractedLink[] {
  if (r.robots.nofollow) return [];
  return r.links.filter((l) => !(obeyRelNofollow && l.nofollow));
}

/** Undefined when the extraction meets the entry, else what differs. */
function heritrixProblem(e: HeritrixEntry, r: HtmlExtraction): string | undefined {
  const got = outlinks(r, e.options?.obeyRelNofollow ?? false);
  const gotUrls = new Set(got.map((l) => l.url));
  const want = [...new Set((e.links ?? []).map(canon))].sort();
  const problems: string[] = [];
  switch (e.mode) {
    case 'exact-set':
    case 'exact-list': // Heritrix's list keeps duplicates; a deduplicating extractor compares the set
      if (JSON.stringify([...gotUrls].sort()) !== JSON.stringify(want)) problems.push(`got ${JSON.stringify([...gotUrls].sort())}, want ${JSON.stringify(want)}`);
      break;
    case 'contains':
      for (const u of want) if (!gotUrls.has(u)) problems.push(`missing ${u}`);
      break;
    case 'count':
      if (got.length !== e.count) problems.push(`count ${got.length}, want ${e.count}`);
      for (const u of (e.derived_links ?? []).map(canon)) if (!gotUrls.has(u)) problems.push(`missing ${u}`);
      break;
  }
  for (const u of (e.must_not_contain ?? []).map(canon)) if (gotUrls.has(u)) problems.push(`unexpected ${u}`);
  for (const hop of e.hops ?? []) {
    const [h, u = ''] = hop.split(' ');
    const link = got.find((l) => l.url === canon(u));
    if (!link || (link.kind === 'embed') !== (h === 'E')) problems.push(`hop ${hop}: got ${link?.kind}`);
  }
  if (e.meta_robots !== undefined) {
    const want = parseRobotsDirectives(e.meta_robots);
    if (r.robots.noindex !== (want.noindex ?? false) || r.robots.nofollow !== (want.nofollow ?? false)) problems.push(`robots ${JSON.stringify(r.robots)}`);
  }
  return problems.length ? problems.join('; ') : undefined;
}

describe('Heritrix ExtractorHTMLTest fixtures (links/expected.json)', () => {
  const expected = JSON.parse(readFileSync(`${DIR}expected.json`, 'utf8')) as Record<string, HeritrixEntry | string>;
  const entries = Object.entries(expected).filter((kv): kv is [string, HeritrixEntry] => !kv[0].startsWith('_'));
  const outcome = new Map<string, string | undefined>();
  for (const [name, e] of entries) {
    // Every link source on, so each fixture's tags are exercised.
    outcome.set(name, heritrixProblem(e, extractHtml(readFileSync(DIR + name), e.base, { flags: ALL_ON })));
  }

  for (const [name, e] of entries) {
    const reason = DELIBERATE[name];
    if (reason === undefined) it(name, () => assert.equal(outcome.get(name), undefined));
    else {
      it(`${name} differs deliberately: ${reason}`, () => {
        assert.ok(e.tags?.includes('heritrix-specific'), 'only heritrix-specific fixtures may differ');
        assert.notEqual(outcome.get(name), undefined, 'listed as a deliberate difference but now agrees; remove it from DELIBERATE');
      });
    }
  }

  it('exactly the listed fixtures differ', (t) => {
    const differing = entries.filter(([n]) => outcome.get(n) !== undefined).map(([n]) => n).sort();
    assert.deepEqual(differing, Object.keys(DELIBERATE).sort());
    const passed = entries.length - differing.length;
    t.diagnostic(`heritrix links: ${passed}/${entries.length}, ${differing.length} deliberate differences`);
  });
});

// ------------------------------------------------------------------ WPT meta refresh parsing

describe('meta refresh parsing (WPT, links/meta-refresh.jsonl)', () => {
  const lines = readFileSync(`${DIR}meta-refresh.jsonl`, 'utf8').split('\n').filter((l) => l.trim() !== '');
  const cases = lines.map((l) => JSON.parse(l) as { content: string; expected: { delay: number; url: string | null } | null });
  let passed = 0;
  for (const c of cases) {
    it(JSON.stringify(c.content), () => {
      const want = c.expected === null ? undefined : { delayS: c.expected.delay, url: c.expected.url ?? undefined };
      assert.deepEqual(parseMetaRefresh(c.content), want);
      passed++;
    });
  }
  it('all pass', (t) => {
    assert.equal(passed, cases.length);
    t.diagnostic(`meta refresh: ${passed}/${cases.length}`);
  });
});

// ------------------------------------------------------------------ flags

describe('link_extraction flags', () => {
  const SOURCES: Record<keyof LinkFlags, [html: string, url: string, tag: string, attr: string]> = {
    a: ['<a href="/a">x</a>', 'http://www.example.com/a', 'a', 'href'],
    action: ['<form action="/action"><input name=q></form>', 'http://www.example.com/action', 'form', 'action'],
    area: ['<map><area href="/area"></map>', 'http://www.example.com/area', 'area', 'href'],
    card: ['<card id="c" onenterforward="/card"></card>', 'http://www.example.com/card', 'card', 'onenterforward'],
    comment: ['<!-- moved to http://comment.example.com/page -->', 'http://comment.example.com/page', '#comment', '#text'],
    embed: ['<embed src="/embed.swf">', 'http://www.example.com/embed.swf', 'embed', 'src'],
    frame: ['<iframe src="/frame"></iframe>', 'http://www.example.com/frame', 'iframe', 'src'],
    go: ['<go href="/go"></go>', 'http://www.example.com/go', 'go', 'href'],
    img: ['<img src="/img.png">', 'http://www.example.com/img.png', 'img', 'src'],
    layer: ['<layer src="/layer"></layer>', 'http://www.example.com/layer', 'layer', 'src'],
    link: ['<link rel="next" href="/link">', 'http://www.example.com/link', 'link', 'href'],
    meta: ['<meta property="og:url" content="/meta">', 'http://www.example.com/meta', 'meta', 'content'],
    metaRefresh: ['<meta http-equiv="refresh" content="5; url=/refresh">', 'http://www.example.com/refresh', 'meta', 'content'],
    object: ['<object data="/object.swf"></object>', 'http://www.example.com/object.swf', 'object', 'data'],
    script: ['<script src="/script.js"></script>', 'http://www.example.com/script.js', 'script', 'src'],
    scriptJava: ['<script>location.href = "/scriptjava.html";</script>', 'http://www.example.com/scriptjava.html', 'script', '#text'],
    style: ['<style>body { background: url(/style.png) }</style>', 'http://www.example.com/style.png', 'style', '#text'],
  };
  const page = FLAG_KEYS.map((k) => SOURCES[k][0]).join('\n');

  it('every source is on with all flags', () => {
    assert.deepEqual(urls(extract(page)).sort(), FLAG_KEYS.map((k) => SOURCES[k][1]).sort());
  });
  it('the defaults are the MS-FSCCFG ones: all but img', () => {
    assert.deepEqual(FLAG_KEYS.filter((k) => !DEFAULT_LINK_FLAGS[k]), ['img']);
    assert.deepEqual(urls(extractHtml(page, DOC)).sort(), FLAG_KEYS.filter((k) => k !== 'img').map((k) => SOURCES[k][1]).sort());
  });
  for (const k of FLAG_KEYS) {
    const [, url, tag, attr] = SOURCES[k];
    it(`${k}: only it on gives exactly its link`, () => {
      const r = extract(page, { flags: flagsWith((f) => f === k) });
      assert.deepEqual(r.links.map((l) => [l.url, l.tag, l.attr]), [[url, tag, attr]]);
    });
    it(`${k}: off drops its link and nothing else`, () => {
      const got = urls(extract(page, { flags: flagsWith((f) => f !== k) }));
      assert.ok(!got.includes(url));
      assert.equal(got.length, FLAG_KEYS.length - 1);
    });
  }
});

// ------------------------------------------------------------------ our own cases

describe('resolution and base href', () => {
  it('the first <base href> wins, and a relative one resolves against the document URL', () => {
    const r = extract('<base href="../other/"><base href="http://elsewhere.example/"><a href="x.html">');
    assert.equal(r.baseUrl, 'http://www.example.com/other/');
    assert.deepEqual(urls(r), ['http://www.example.com/other/x.html']);
  });
  it('a <base> after a link still applies to it (HTML document base URL)', () => {
    assert.deepEqual(urls(extract('<a href="x.html"></a><base href="/late/">')), ['http://www.example.com/late/x.html']);
  });
  it('a <base> without href does not count; an unparsable first base falls back to the document URL', () => {
    assert.equal(extract('<base target="_top"><base href="/b/"><a href=x>').baseUrl, 'http://www.example.com/b/');
    const r = extract('<base href="http://[bad"><base href="/b/"><a href=x>');
    assert.equal(r.baseUrl, DOC);
    assert.deepEqual(urls(r), ['http://www.example.com/dir/x']);
  });
  it('fragments are removed, fragment-only references skipped, whitespace trimmed', () => {
    assert.deepEqual(urls(extract('<a href="#top"></a><a href=" /p?q=1#frag \n"></a><a href="/p?q=1"></a>')), ['http://www.example.com/p?q=1']);
  });
  it('ignores javascript:, mailto:, tel:, data: and other schemes unless allowed', () => {
    const html = '<a href="javascript:void(0)"></a><a href="mailto:a@b.c"></a><a href="tel:+1"></a><img src="data:image/gif;base64,AAAA"><a href="ftp://f.example/x"></a><a href="JAVA\nSCRIPT:alert(1)"></a><a href="https://s.example/">';
    assert.deepEqual(urls(extract(html)), ['https://s.example/']);
    assert.deepEqual(urls(extract(html, { allowedSchemes: ['ftp', 'https:'] })), ['ftp://f.example/x', 'https://s.example/']);
  });
  it('skips unparsable URLs', () => {
    assert.deepEqual(urls(extract('<a href="http://[::1"></a><a href="http://a b/"></a><a href="/ok">')), ['http://www.example.com/ok']);
  });
  it('decodes entities and UTF-8 bytes', () => {
    const bytes = new TextEncoder().encode('<a href="/caf\u00e9?a=1&amp;b=2">\u00e9</a>');
    assert.deepEqual(urls(extract(bytes)), ['http://www.example.com/caf%C3%A9?a=1&b=2']);
  });
  it('decodes character references as htmlparser2 does with decodeEntities on, in attributes and in the title', () => {
    // The extractor parses with entities left as written and decodes only what it reads (html.ts,
    // PARSER_OPTIONS); the reference here is htmlparser2's own decoding of the same markup.
    const values = [
      '/q?a=1&amp;b=2', '/q?x&copy=1', '/q?x&copy;=1', '/q?n=&notit;', '/q?n=&notit', '/q?lt=&lt', '/q?c=&#x41;&#66;&#0;&#xD800;&#9999999;',
      '/q?amp=&ampx', '/q?AMP=&AMP;', '/q?u=&NotANamedEntity;', '/q?e=&eacute', '/q?e=&eacute;x', '/q?s=&', '/q?t=&amp&amp;', "/q?sq=&apos;&quot;",
    ];
    const titles = ['Caf&eacute &amp; &notit; &lt;b&gt; &#x1F600; &copy=1 &bogus;', 'plain', 'A &amp B'];
    for (const value of values) {
      for (const quote of ['"', "'"]) {
        const markup = `<a href=${quote}${value}${quote}>x</a>`;
        let reference: string | undefined;
        new Parser({ onopentag: (_n, a) => (reference ??= a.href) }, { decodeEntities: true }).end(markup);
        const want = new URL(reference!, DOC);
        want.hash = '';
        assert.deepEqual(urls(extract(markup)), [want.href], `${markup} (reference ${JSON.stringify(reference)})`);
      }
    }
    for (const t of titles) {
      let reference = '';
      new Parser({ ontext: (d) => (reference += d) }, { decodeEntities: true }).end(`<title>${t}</title>`);
      assert.equal(extract(`<title>${t}</title>`).title, reference.replace(/\s+/g, ' ').trim(), t);
    }
  });
  it('dedupes by url+kind in document order', () => {
    const r = extract('<a href=/x></a><link rel=stylesheet href=/x><a href="/x#y"></a><a href=/y>');
    assert.deepEqual(r.links.map((l) => `${l.kind} ${l.url}`), ['navigate http://www.example.com/x', 'embed http://www.example.com/x', 'navigate http://www.example.com/y']);
  });
});

describe('nofollow', () => {
  it('rel=nofollow on a, area, link and form', () => {
    const r = extract('<a rel="noopener NoFollow" href=/a></a><area rel=nofollow href=/area><link rel="next nofollow" href=/link><form rel=nofollow action=/form></form><a href=/plain>');
    assert.deepEqual(r.links.map((l) => [l.url.slice(22), l.nofollow]), [['/a', true], ['/area', true], ['/link', true], ['/form', true], ['/plain', false]]);
  });
  it('a URL is nofollow only if every occurrence is, whatever the order', () => {
    assert.equal(extract('<a rel=nofollow href=/x></a><a href=/x>').links[0]?.nofollow, false);
    assert.equal(extract('<a href=/x></a><a rel=nofollow href=/x>').links[0]?.nofollow, false);
    assert.equal(extract('<a rel=nofollow href=/x></a><a rel=nofollow href=/x>').links[0]?.nofollow, true);
  });
});

describe('meta robots', () => {
  const robots = (html: string, productToken?: string) => extract(html, productToken === undefined ? {} : { productToken }).robots;
  it('none, comma lists, case-insensitive names and values', () => {
    assert.deepEqual(robots('<meta name="robots" content="none">'), { noindex: true, nofollow: true, noarchive: false, nosnippet: false });
    assert.deepEqual(robots('<META NAME="Robots" CONTENT="NoIndex , NOARCHIVE,nosnippet">'), { noindex: true, nofollow: false, noarchive: true, nosnippet: true });
    assert.deepEqual(robots('<meta name="robots" content="all">'), { noindex: false, nofollow: false, noarchive: false, nosnippet: false });
  });
  it('several tags combine', () => {
    assert.deepEqual(robots('<meta name="robots" content="noindex"><meta name="robots" content="nofollow">'), { noindex: true, nofollow: true, noarchive: false, nosnippet: false });
  });
  it('<meta name="<productToken>"> applies; other agents do not', () => {
    assert.equal(robots('<meta name="trawl" content="noindex">').noindex, true);
    assert.equal(robots('<meta name="TRAWL" content="nofollow">').nofollow, true);
    assert.equal(robots('<meta name="googlebot" content="noindex">').noindex, false);
    assert.equal(robots('<meta name="mybot" content="noindex">', 'MyBot').noindex, true);
  });
  it('unavailable_after', () => {
    assert.equal(robots('<meta name="robots" content="unavailable_after: 2030-09-21">').unavailableAfter, '2030-09-21');
  });
  it('links are still reported; dropping them is check_meta_robots policy', () => {
    const r = extract('<meta name=robots content=nofollow><a href=/x>');
    assert.equal(r.robots.nofollow, true);
    assert.deepEqual(urls(r), ['http://www.example.com/x']);
  });
});

describe('X-Robots-Tag values (parseRobotsDirectives)', () => {
  const cases: [string, string | undefined, object][] = [
    ['noindex', undefined, { noindex: true }],
    ['noindex, nofollow', undefined, { noindex: true, nofollow: true }],
    ['none', undefined, { noindex: true, nofollow: true }],
    ['all', undefined, {}],
    ['NoArchive, nocache', undefined, { noarchive: true }],
    ['max-snippet: 20, nosnippet', undefined, { nosnippet: true }],
    ['googlebot: noindex', undefined, {}],
    ['trawl: noindex', undefined, { noindex: true }],
    ['googlebot: noindex, nofollow', 'googlebot', { noindex: true, nofollow: true }],
    ['googlebot: nofollow, otherbot: noindex, nosnippet', 'otherbot', { noindex: true, nosnippet: true }],
    ['googlebot: nofollow, otherbot: noindex, nosnippet', 'googlebot', { nofollow: true }],
    ['noarchive, googlebot: noindex', 'bingbot', { noarchive: true }],
    ['unavailable_after: 25 Jun 2010 15:00:00 PST', undefined, { unavailableAfter: '25 Jun 2010 15:00:00 PST' }],
    ['unavailable_after: Sunday, 01-Sep-19 23:59:59 GMT, noindex', undefined, { unavailableAfter: 'Sunday, 01-Sep-19 23:59:59 GMT', noindex: true }],
    ['trawl: unavailable_after: 2030-01-01', undefined, { unavailableAfter: '2030-01-01' }],
    ['', undefined, {}],
  ];
  for (const [value, agent, want] of cases) {
    it(`${JSON.stringify(value)}${agent ? ` as ${agent}` : ''}`, () => assert.deepEqual(parseRobotsDirectives(value, agent), want));
  }
});

describe('link rel, canonical and feeds', () => {
  it('rel decides the kind; pingback, dns-prefetch, preconnect and missing rel are skipped', () => {
    const r = extract('<link rel="Stylesheet" href=/s.css><link rel="shortcut icon" href=/i.ico><link rel=next href=/2><link rel=pingback href=/xmlrpc><link rel=preconnect href=https://cdn.example/><link href=/norel><link rel=canonical href=/c><link rel=alternate type="application/rss+xml" href=/rss>');
    assert.deepEqual(r.links.map((l) => `${l.kind} ${l.url.replace('http://www.example.com', '')}`), ['embed /s.css', 'embed /i.ico', 'navigate /2', 'canonical /c', 'feed /rss']);
  });
  it('canonical: the first that resolves to an allowed scheme, filled even with the link flag off', () => {
    const r = extract('<link rel=canonical href="javascript:x"><link rel=canonical href="../canon#x"><link rel=canonical href="/second">', { flags: flagsWith((k) => k !== 'link') });
    assert.equal(r.canonical, 'http://www.example.com/canon');
    assert.deepEqual(r.links, []);
  });
  it('no canonical', () => assert.equal(extract('<a href=/x>').canonical, undefined));
  it('feeds: RSS, Atom and RDF alternates, type case and parameters ignored, deduplicated', () => {
    const r = extract('<link rel=alternate type="application/rss+xml" href=/rss><link rel="alternate" type="Application/Atom+XML; charset=utf-8" href=/atom><link rel=alternate type=application/rdf+xml href=/rdf><link rel=alternate hreflang=fr href=/fr><link rel=alternate type=text/html href=/html><link rel=alternate type="application/rss+xml" href=/rss>');
    assert.deepEqual(r.feeds, ['http://www.example.com/rss', 'http://www.example.com/atom', 'http://www.example.com/rdf']);
    assert.deepEqual(r.links.filter((l) => l.kind === 'navigate').map((l) => l.url), ['http://www.example.com/fr', 'http://www.example.com/html']);
  });
});

describe('images and srcset', () => {
  it('srcset candidates with width and density descriptors', () => {
    assert.deepEqual(urls(extract('<img srcset="a.jpg 1x, b.jpg 2x,c.jpg,  d.jpg 480w">')), ['a.jpg', 'b.jpg', 'c.jpg', 'd.jpg'].map((p) => `http://www.example.com/dir/${p}`));
  });
  it('a comma inside a URL stays; descriptors in parentheses do not split', () => {
    assert.deepEqual(urls(extract('<img srcset="/w_100,h_100/x.jpg 100w, /y.jpg 2x (a, b), /z.jpg">')), ['/w_100,h_100/x.jpg', '/y.jpg', '/z.jpg'].map((p) => `http://www.example.com${p}`));
  });
  it('<picture><source srcset> and lazy-load data-* attributes', () => {
    const r = extract('<picture><source srcset="/p1.webp 1x"><img src="/p.jpg" data-src="/lazy.jpg" data-sizes="auto" data-lazy-class="x"></picture>');
    assert.deepEqual(urls(r), ['/p1.webp', '/p.jpg', '/lazy.jpg'].map((p) => `http://www.example.com${p}`));
  });
  it('poster, background, input type=image under img; og:image needs img too', () => {
    const html = '<body background=/bg.png><video poster=/poster.jpg src=/v.mp4></video><input type=image src=/btn.png><meta property="og:image" content="/og.jpg">';
    assert.deepEqual(urls(extract(html)).sort(), ['/bg.png', '/btn.png', '/og.jpg', '/poster.jpg', '/v.mp4'].map((p) => `http://www.example.com${p}`));
    assert.deepEqual(urls(extractHtml(html, DOC)), ['http://www.example.com/v.mp4']);
  });
});

describe('forms, objects, scripts, styles, comments', () => {
  it('GET forms only (Heritrix rule), with closed forms; formaction follows its method', () => {
    const r = extract('<form method="get" action="/ok1"></form><form action="/ok2" method="GET"></form><form method="post" action="/notok"><button formaction="/notok2"></button><button formaction="/ok4" formmethod=get></button></form><form action="/ok3"></form><form method=dialog action=/notok3></form>');
    assert.deepEqual(urls(r), ['/ok1', '/ok2', '/ok4', '/ok3'].map((p) => `http://www.example.com${p}`));
  });
  it('object data resolves against codebase; URL-valued params', () => {
    const r = extract('<object codebase="/plugins/" data="movie.swf"><param name="movie" value="m.swf"><param name="bgcolor" value="#000"><param name=x valuetype=ref value="/ref"></object>');
    assert.deepEqual(urls(r), ['/plugins/', '/plugins/movie.swf', '/dir/m.swf', '/ref'].map((p) => `http://www.example.com${p}`));
  });
  it('script literals: absolute URLs with a real host, JSON-escaped slashes, page paths; nothing speculative', () => {
    const js = `<script>var a = "https://api.example.org/v1?x=1", b = 'http://www.', c = "https://ssl." + host, d = "www.example.com/x.html";
      var e = "/about/team.html", f = "/api/data", g = 'text/javascript', h = "//cdn.example.com/x.js";</script>
      <script type="application/ld+json">{"url":"https:\\/\\/www.example.com\\/ld"}</script>
      <script type="text/template"><a href="/tpl.html"></a> "/tpl2.html"</script>`;
    assert.deepEqual(urls(extract(js)), ['https://api.example.org/v1?x=1', 'http://www.example.com/about/team.html', 'https://www.example.com/ld']);
  });
  it('style: url() in <style> and style="", @import', () => {
    const r = extract(`<style>@import "/a.css"; @import url('/b.css'); .x { background: URL( "/c.png" ) } .y { src: url(d.woff) }</style><div style="background-image:url('/e.png')"></div>`);
    assert.deepEqual(r.links.map((l) => `${l.tag}/${l.attr} ${l.url.replace('http://www.example.com', '')}`),
      ['style/#text /a.css', 'style/#text /b.css', 'style/#text /c.png', 'style/#text /dir/d.woff', 'div/style /e.png']);
  });
  it('comments: absolute http(s) URLs with a real host only; conditional comments parsed as markup', () => {
    const r = extract('<!-- old: http://old.example.com/page.html. see /relative.html and http://localhost/x --><!--[if lt IE 9]><script src="/html5shiv.js"></script><![endif]-->');
    assert.deepEqual(urls(r), ['http://old.example.com/page.html', 'http://www.example.com/html5shiv.js']);
  });
  it('WML cards and go', () => {
    const wml = '<wml><card id="a" ontimer="/t.wml" onenterbackward="/b.wml"><timer value="5"/><do type="accept"><go href="/next.wml"/></do></card></wml>';
    assert.deepEqual(urls(extract(wml)), ['/b.wml', '/t.wml', '/next.wml'].map((p) => `http://www.example.com${p}`));
  });
});

describe('meta refresh, title, lang', () => {
  it('refresh URL resolves against the base; a refresh without URL points at the document', () => {
    assert.deepEqual(extract('<base href="/b/"><meta http-equiv="Refresh" content="0; URL=\'next.html\'">').metaRefresh, { delayS: 0, url: 'http://www.example.com/b/next.html' });
    assert.deepEqual(extract('<meta http-equiv=refresh content="30">').metaRefresh, { delayS: 30, url: DOC });
  });
  it('the first valid refresh wins; an invalid one is skipped', () => {
    assert.deepEqual(extract('<meta http-equiv=refresh content="x"><meta http-equiv=refresh content="2;/a"><meta http-equiv=refresh content="1;/b">').metaRefresh, { delayS: 2, url: 'http://www.example.com/a' });
  });
  it('the metaRefresh flag gates only the link', () => {
    const r = extract('<meta http-equiv=refresh content="1;/a">', { flags: flagsWith((k) => k !== 'metaRefresh') });
    assert.deepEqual(r.metaRefresh, { delayS: 1, url: 'http://www.example.com/a' });
    assert.deepEqual(r.links, []);
  });
  it('a refresh to a disallowed scheme is no refresh', () => {
    assert.equal(extract('<meta http-equiv=refresh content="0;url=javascript:alert(1)">').metaRefresh, undefined);
  });
  it('title: the first, entities decoded, whitespace collapsed, SVG titles ignored', () => {
    assert.equal(extract('<html><svg><title>icon</title></svg><title>\n  Caf&eacute;   &amp;\tBar </title><title>second</title>').title, 'Café & Bar');
    assert.equal(extract('<title>  </title>').title, undefined);
    assert.equal(extract('<p>no title').title, undefined);
  });
  it('lang from <html lang>', () => {
    assert.equal(extract('<!doctype html><html lang=" en-GB "><body>').lang, 'en-GB');
    assert.equal(extract('<body>').lang, undefined);
  });
});

describe('maxLinks', () => {
  const page = Array.from({ length: 10 }, (_, i) => `<a href="/p${i}">`).join('') + '<a href="/p0"><a href="/p9">';
  it('keeps the first maxLinks distinct links and counts the distinct ones dropped', () => {
    const r = extract(page, { maxLinks: 4 });
    assert.deepEqual(urls(r), ['/p0', '/p1', '/p2', '/p3'].map((p) => `http://www.example.com${p}`));
    assert.equal(r.truncatedLinks, 6);
  });
  it('0 keeps none; a roomy cap truncates nothing', () => {
    assert.equal(extract(page, { maxLinks: 0 }).truncatedLinks, 10);
    assert.equal(extract(page, { maxLinks: 10 }).truncatedLinks, 0);
  });
});

describe('one pass per page (HtmlPass)', () => {
  const summary = (r: HtmlExtraction): unknown => ({
    links: r.links.map((l) => `${l.kind} ${l.tag}.${l.attr} ${l.url}`), base: r.baseUrl, title: r.title, refresh: r.metaRefresh, robots: r.robots,
  });
  it('nothing carries over to the next page: base, first title, refresh, robots, an open POST form', () => {
    const first = extract('<base href="/b/"><title>First</title><meta http-equiv=refresh content="0; url=r"><meta name=robots content=noindex><form method=post><button formaction=p>');
    assert.deepEqual(summary(first), {
      links: ['redirect meta.content http://www.example.com/b/r'], base: 'http://www.example.com/b/', title: 'First',
      refresh: { delayS: 0, url: 'http://www.example.com/b/r' }, robots: { noindex: true, nofollow: false, noarchive: false, nosnippet: false },
    });
    assert.deepEqual(summary(extract('<button formaction=p><title>Second</title><a href=x>')), {
      links: ['navigate a.href http://www.example.com/dir/x'], base: DOC, title: 'Second',
      refresh: undefined, robots: { noindex: false, nofollow: false, noarchive: false, nosnippet: false },
    });
  });
  it('a conditional comment is read into the same pass: its <base> and <title> count; a form it opens ends with it', () => {
    assert.deepEqual(summary(extract('<!--[if IE]><base href="/ie/"><title>IE</title><form action=f><![endif]--><input formaction=fa><a href=x>')), {
      links: ['navigate form.action http://www.example.com/ie/f', 'navigate a.href http://www.example.com/ie/x'], base: 'http://www.example.com/ie/', title: 'IE',
      refresh: undefined, robots: { noindex: false, nofollow: false, noarchive: false, nosnippet: false },
    });
  });
  it('a conditional comment inside a conditional comment is not read', () => {
    assert.deepEqual(urls(extract('<!--[if IE]><p><!--[if IE]><a href=nested><![endif]--><a href=inner><![endif]--><a href=after>')),
      ['http://www.example.com/dir/inner', 'http://www.example.com/dir/after']);
    assert.deepEqual(urls(extract('<!--[if IE]><a href=nested><![endif]-->')), ['http://www.example.com/dir/nested']);
  });
});

describe('garbage input does not throw', () => {
  const junk = [
    '<a href="/x"<img src=<div <<<>>> </a </ <!-- <!-- --> <script>unclosed',
    '<title>never closed <a href=/in-title>',
    '<html><body><table><tr><td><a href="/deep">' + '<div>'.repeat(5000),
    '<style>url(', '<!--[if IE]><script src=/x.js', '<svg><title><a href="/svg">', '<base href=>', '\u0000\uFFFD<a\u0000href=/n>',
  ];
  for (const html of junk) it(JSON.stringify(html.slice(0, 40)), () => assert.doesNotThrow(() => extract(html)));
  it('random bytes, including invalid UTF-8', () => {
    let seed = 7;
    const bytes = new Uint8Array(64 * 1024).map(() => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff);
    assert.doesNotThrow(() => extract(bytes));
    assert.doesNotThrow(() => extract(new Uint8Array([0xff, 0xfe, 0x3c, 0x61, 0x20, 0x68, 0x72, 0x65, 0x66, 0x3d, 0xc3])));
  });
  it('an unclosed <title> still yields the title', () => {
    assert.equal(extract('<title>Half').title, 'Half');
  });
  it('a document URL that is not absolute is a programming error', () => {
    assert.throws(() => extractHtml('<a href=x>', 'not a url'), TypeError);
  });
});
