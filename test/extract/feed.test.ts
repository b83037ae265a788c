// Feeds: the feedparser "wellformed" table mapped onto trawl's feed model, then our own cases.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { looksLikeFeed, parseFeed, type Feed } from '../../src/extract/feed.ts';
import { FIXTURES } from '../helpers.ts';

const DIR = `${FIXTURES}conformance/feeds/`;

interface Check {
  path: (string | number)[];
  equals?: unknown;
  not_equals?: unknown;
}

interface Vector {
  file: string;
  bozo: boolean | null;
  checks: Check[];
  fetch_from?: string;
  http_headers?: Record<string, string>;
}

const vectors = readFileSync(`${DIR}feedparser-wellformed.jsonl`, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Vector);

/** feedparser's version names, as the coarser Feed.kind. */
function kindOfVersion(version: string): Feed['kind'] {
  if (version.startsWith('atom')) return 'atom';
  if (version === 'rss090' || version === 'rss10') return 'rdf';
  return 'rss';
}

const NOT_APPLICABLE = Symbol('not applicable');

/**
 * A feedparser result path read off our model, or NOT_APPLICABLE when the
 * model has no such field (authors, contributors, tags, content, summary,
 * generator, feed-level links/id/dates, the *_detail bases and types, ...).
 * feedparser aliases: `guid` is `id`, `title_detail.value` is `title`.
 */
function read(feed: Feed, path: (string | number)[]): unknown {
  const [top, ...rest] = path;
  const key = rest.join('.');
  if (top === 'version' && rest.length === 0) return { kind: feed.kind };
  if (top === 'feed') {
    if (key === 'title' || key === 'title_detail.value') return feed.title;
    if (key === 'link') return feed.link;
    return NOT_APPLICABLE;
  }
  if (top !== 'entries' || typeof rest[0] !== 'number') return NOT_APPLICABLE;
  const entry = feed.entries[rest[0]];
  const field = rest.slice(1).join('.');
  if (field === 'title' || field === 'title_detail.value') return entry?.title;
  if (field === 'link' || field === 'published' || field === 'updated') return entry?.[field];
  if (field === 'id' || field === 'guid') return entry?.id;
  const [links, j, prop, ...more] = rest.slice(1);
  if (links === 'links' && typeof j === 'number' && more.length === 0 && (prop === 'href' || prop === 'rel' || prop === 'type')) {
    return entry?.links[j]?.[prop];
  }
  return NOT_APPLICABLE;
}

/**
 * Where trawl deliberately differs from feedparser, by fixture and check
 * (`bozo` = "the document is accepted"), with the reason.
 */
const DELIBERATE: Record<string, { checks: string[]; reason: string }> = {
  'feedparser/wellformed/rss/entity_in_doctype.xml': {
    checks: ['bozo', 'entries.0.guid'],
    reason: 'the DOCTYPE declares an entity; trawl refuses every DOCTYPE entity declaration (no entity expansion, so no billion laughs and no external entities)',
  },
  'feedparser/wellformed/rdf/doctype_contains_entity_decl.xml': {
    checks: ['bozo'],
    reason: 'the DOCTYPE declares an external parameter entity; refused for the same reason',
  },
  'feedparser/wellformed/base/cdf_item_abstract_xml_base.xml': {
    checks: ['bozo'],
    reason: 'a <CHANNEL> root is Microsoft\'s Channel Definition Format (1997), neither RSS nor Atom: not a feed for trawl',
  },
};

describe('feedparser wellformed conformance (feedparser-wellformed.jsonl)', () => {
  it('maps every applicable check onto the feed model', (t) => {
    let passed = 0;
    let applicable = 0;
    let notApplicable = 0;
    const byField = { accepted: 0, link: 0, id: 0, title: 0, other: 0 };
    const differences: Record<string, string[]> = {};
    const EMPTY: Feed = { kind: 'rss', entries: [] };
    for (const v of vectors) {
      const body = readFileSync(DIR + v.file);
      const url = v.fetch_from ?? '';
      const contentLocation = v.http_headers?.['Content-Location'];
      const r = parseFeed(body, contentLocation === undefined ? { url } : { url, contentLocation });
      const fail = (what: string, detail: string): void => {
        (differences[v.file] ??= []).push(what);
        t.diagnostic(`${v.file} ${what}: ${detail}`);
      };
      if (v.bozo === false) {
        applicable++;
        if ('invalid' in r) fail('bozo', r.invalid);
        else {
          passed++;
          byField.accepted++;
        }
      }
      for (const c of v.checks) {
        const what = c.path.join('.');
        if (read(EMPTY, c.path) === NOT_APPLICABLE) {
          notApplicable++;
          continue;
        }
        applicable++;
        if ('invalid' in r) {
          fail(what, `not parsed: ${r.invalid}`);
          continue;
        }
        let got = read(r, c.path);
        let want = 'equals' in c ? c.equals : c.not_equals;
        if (c.path[0] === 'version') {
          got = (got as { kind: string }).kind;
          want = kindOfVersion(String(want));
        }
        const ok = 'equals' in c ? got === want : got !== want;
        if (!ok) {
          fail(what, `got ${JSON.stringify(got)}, want ${'equals' in c ? '' : 'not '}${JSON.stringify(want)}`);
          continue;
        }
        passed++;
        const last = String(c.path[c.path.length - 1]);
        if (/^(link|href|rel|type)$/.test(last)) byField.link++;
        else if (/^(id|guid)$/.test(last)) byField.id++;
        else if (/^(title|value)$/.test(last)) byField.title++;
        else byField.other++;
      }
    }
    t.diagnostic(`applicable passed ${passed} / applicable total ${applicable} / not applicable ${notApplicable}`);
    t.diagnostic(`passed: document accepted ${byField.accepted}, link ${byField.link}, id ${byField.id}, title ${byField.title}, version and dates ${byField.other}`);
    for (const [file, d] of Object.entries(DELIBERATE)) t.diagnostic(`deliberate difference: ${file}: ${d.reason}`);
    assert.deepEqual(differences, Object.fromEntries(Object.entries(DELIBERATE).map(([f, d]) => [f, d.checks])));
    assert.equal(passed, applicable - Object.values(DELIBERATE).reduce((n, d) => n + d.checks.length, 0));
    // Pinned, so that a change in the mapping (a field gained or lost) is seen here.
    assert.deepEqual({ applicable, notApplicable }, { applicable: 817, notApplicable: 520 });
    assert.deepEqual(byField, { accepted: 655, link: 43, id: 17, title: 79, other: 19 });
  });

  it('parses every http fixture with its fetch_from URL and Content-Location', () => {
    const http = vectors.filter((v) => v.fetch_from !== undefined);
    assert.equal(http.length, 85);
    const v = http.find((x) => x.file.endsWith('http_item_link_base_content_location.xml'))!;
    const body = readFileSync(DIR + v.file);
    const withHeader = parseFeed(body, { url: v.fetch_from!, contentLocation: v.http_headers!['Content-Location']! });
    const without = parseFeed(body, { url: v.fetch_from! });
    assert.equal('entries' in withHeader && withHeader.entries[0]?.link, 'http://example.com/relative/uri');
    assert.equal('entries' in without && without.entries[0]?.link, 'http://127.0.0.1:8097/relative/uri');
  });
});

// ------------------------------------------------------------------ our own cases

const DOC = 'http://feeds.test/dir/feed.xml';
function parse(xml: string | Uint8Array, opts: Partial<Parameters<typeof parseFeed>[1]> = {}): Feed {
  const r = parseFeed(xml, { url: DOC, ...opts });
  if ('invalid' in r) assert.fail(`invalid: ${r.invalid}`);
  return r;
}
const invalid = (xml: string | Uint8Array, opts: Partial<Parameters<typeof parseFeed>[1]> = {}): string => {
  const r = parseFeed(xml, { url: DOC, ...opts });
  assert.ok('invalid' in r, `parsed: ${JSON.stringify(r)}`);
  return r.invalid;
};

describe('parseFeed: base URLs', () => {
  it('inherits xml:base, resolves a relative xml:base against its parent, and starts from Content-Location', () => {
    const xml = `<feed xmlns="http://www.w3.org/2005/Atom" xml:base="sub/">
      <link href="home"/>
      <entry xml:base="../entries/"><link href="e1"/><id>1</id></entry>
      <entry><link href="/abs"/><link rel="enclosure" href="//cdn.test/a.mp3" type="audio/mpeg"/></entry>
    </feed>`;
    const f = parse(xml);
    assert.equal(f.link, 'http://feeds.test/dir/sub/home');
    assert.equal(f.entries[0]!.link, 'http://feeds.test/dir/entries/e1');
    assert.equal(f.entries[0]!.id, 'http://feeds.test/dir/entries/1');
    assert.deepEqual(f.entries[1]!.links, [
      { href: 'http://feeds.test/abs', rel: 'alternate' },
      { href: 'http://cdn.test/a.mp3', rel: 'enclosure', type: 'audio/mpeg' },
    ]);
    const moved = parse(xml, { contentLocation: '/other/place/feed' });
    assert.equal(moved.link, 'http://feeds.test/other/place/sub/home');
  });
  it('keeps absolute references as written, and relative ones relative when the URL is unknown', () => {
    const f = parse('<rss><channel><item><link>HTTP://Item.TEST/%7e</link><guid isPermaLink="false">abc</guid></item><item><link>rel/x</link></item></channel></rss>', { url: '' });
    assert.equal(f.entries[0]!.link, 'HTTP://Item.TEST/%7e');
    assert.equal(f.entries[0]!.id, 'abc');
    assert.equal(f.entries[1]!.link, 'rel/x');
  });
  it('ignores a javascript: xml:base or Content-Location', () => {
    const f = parse('<feed xmlns="http://www.w3.org/2005/Atom" xml:base="javascript:alert(1)//"><link href="a"/></feed>', { contentLocation: 'data:text/html,x' });
    assert.equal(f.link, 'http://feeds.test/dir/a');
  });
});

describe('parseFeed: what feeds the fields', () => {
  it('takes the first alternate HTML link of an Atom entry, and lists every link', () => {
    const f = parse(`<feed xmlns="http://www.w3.org/2005/Atom"><entry>
      <link rel="self" href="http://x.test/self"/><link rel="alternate" type="application/pdf" href="http://x.test/pdf"/>
      <link href="http://x.test/page"/><link rel="alternate" type="text/html" href="http://x.test/second"/><link rel="related"/>
    </entry></feed>`);
    assert.equal(f.entries[0]!.link, 'http://x.test/page');
    assert.deepEqual(f.entries[0]!.links.map((l) => l.rel), ['self', 'alternate', 'alternate', 'alternate']);
  });
  it('maps a permalink guid to the link of an RSS item that has none', () => {
    const f = parse(`<rss version="2.0"><channel>
      <item><guid>http://x.test/p1</guid></item>
      <item><guid isPermaLink="false">http://x.test/p2</guid></item>
      <item><guid>/p3</guid><link>http://x.test/l3</link></item>
    </channel></rss>`);
    assert.deepEqual(f.entries.map((e) => [e.link, e.id]), [
      ['http://x.test/p1', 'http://x.test/p1'],
      [undefined, 'http://x.test/p2'],
      ['http://x.test/l3', 'http://feeds.test/p3'],
    ]);
    assert.deepEqual(f.entries[0]!.links, [{ href: 'http://x.test/p1', rel: 'alternate' }]);
  });
  it('lets nothing leak from <image>, <textInput>, <source>, <author> or foreign namespaces', () => {
    const f = parse(`<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:atom="http://www.w3.org/2005/Atom"><channel>
      <image><title>img</title><link>http://x.test/img</link></image><textInput><title>ti</title><link>http://x.test/ti</link></textInput>
      <atom:link rel="self" href="http://x.test/feed.xml"/><media:title>media</media:title>
      <title>Channel</title><link>http://x.test/</link>
      <item><media:title>m</media:title><source url="http://x.test/src">Source</source><title>Item</title><link>http://x.test/1</link></item>
    </channel></rss>`);
    assert.equal(f.title, 'Channel');
    assert.equal(f.link, 'http://x.test/');
    assert.deepEqual(f.entries, [{ title: 'Item', link: 'http://x.test/1', links: [{ href: 'http://x.test/1', rel: 'alternate' }] }]);
    const atom = parse(`<feed xmlns="http://www.w3.org/2005/Atom"><entry>
      <source><title>S</title><id>urn:s</id><link href="http://x.test/s"/></source><author><name>A</name><uri>http://x.test/a</uri></author>
      <title>E</title></entry></feed>`);
    assert.deepEqual(atom.entries, [{ title: 'E', links: [] }]);
  });
  it('reads RSS 1.0: items beside the channel, rdf:about as the id, Dublin Core dates', () => {
    const f = parse(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
      <channel rdf:about="http://x.test/rss"><title>C</title><link>http://x.test/</link></channel>
      <item rdf:about="http://x.test/1"><title>One</title><link>http://x.test/1.html</link><dc:date>2024-01-02T03:04:05Z</dc:date></item>
    </rdf:RDF>`);
    assert.deepEqual(f, {
      kind: 'rdf', title: 'C', link: 'http://x.test/',
      entries: [{ id: 'http://x.test/1', title: 'One', link: 'http://x.test/1.html', updated: '2024-01-02T03:04:05Z', links: [{ href: 'http://x.test/1.html', rel: 'alternate' }] }],
    });
  });
  it('keeps at most maxEntries entries, and still reads the channel after them', () => {
    const items = Array.from({ length: 5 }, (_, i) => `<item><link>http://x.test/${i}</link></item>`).join('');
    const f = parse(`<rss><channel>${items}<title>late</title></channel></rss>`, { maxEntries: 2 });
    assert.deepEqual(f.entries.map((e) => e.link), ['http://x.test/0', 'http://x.test/1']);
    assert.equal(f.title, 'late');
  });
});

describe('parseFeed: one reader per feed (FeedReader)', () => {
  it('each parse takes the vocabulary of its own root: the root\'s namespace is Atom\'s under <feed>, RSS\'s under <rss>', () => {
    const atom = parse('<feed xmlns="http://example.org/ns"><title type="html">&lt;b&gt;A&lt;/b&gt;</title><entry><link href="/e"/><title>E</title></entry></feed>', { url: 'http://x.test/f' });
    assert.deepEqual(atom, { kind: 'atom', title: '<b>A</b>', entries: [{ link: 'http://x.test/e', title: 'E', links: [{ href: 'http://x.test/e', rel: 'alternate' }] }] });
    const rss = parse('<rss xmlns="http://example.org/ns"><channel><title>R</title><item><link>/i</link><title>I</title><link href="/no"/></item></channel></rss>', { url: 'http://x.test/f' });
    assert.deepEqual(rss, { kind: 'rss', title: 'R', entries: [{ link: 'http://x.test/i', title: 'I', links: [{ href: 'http://x.test/i', rel: 'alternate' }] }] });
  });
  it('the first failure stops the parse and is the result', () => {
    assert.equal(invalid(`<rss><channel>${'<x>'.repeat(300)}</channel>`), 'elements nest deeper than 256 levels');
  });
});

describe('parseFeed: safety and bytes', () => {
  it('refuses DOCTYPE entity declarations', () => {
    const laughs = `<!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><rss><channel><title>&b;</title></channel></rss>`;
    const xxe = `<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY x SYSTEM "file:///etc/passwd">]><feed xmlns="http://www.w3.org/2005/Atom"><title>&x;</title></feed>`;
    for (const xml of [laughs, xxe]) assert.match(invalid(xml), /DOCTYPE entity declarations are refused/);
  });
  it('reads a DOCTYPE without entity declarations, keeping an undefined entity as written', () => {
    const f = parse('<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd"><rss version="0.91"><channel><title>a&nbsp;b</title></channel></rss>');
    assert.equal(f.title, 'a&nbsp;b');
  });
  it('bounds size and depth', () => {
    const xml = `<rss><channel><title>t</title></channel></rss>`;
    assert.match(invalid(xml, { maxBytes: 10 }), /at most 10/);
    assert.equal(parse(xml, { maxBytes: Buffer.byteLength(xml) }).title, 't');
    assert.match(invalid(`<rss><channel>${'<x>'.repeat(300)}${'</x>'.repeat(300)}</channel></rss>`), /deeper than/);
  });
  it('is invalid for malformed XML, HTML, and documents that are no feed', () => {
    assert.match(invalid('<rss><channel><title>a & b</title></channel></rss>'), /malformed XML/);
    assert.match(invalid('<rss><channel></rss>'), /malformed XML/);
    assert.match(invalid('<html><body><p>x</p></body></html>'), /not a feed/);
    assert.match(invalid(''), /root element/);
  });
  it('decodes by BOM or the declared encoding, and tolerates leading white space', () => {
    const latin1 = Buffer.concat([Buffer.from('\n <?xml version="1.0" encoding="ISO-8859-1"?><rss><channel><title>caf'), Buffer.from([0xe9]), Buffer.from('</title></channel></rss>')]);
    assert.equal(parse(latin1).title, 'café');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<?xml version="1.0" encoding="UTF-16"?><rss><channel><title>ünï</title></channel></rss>', 'utf16le')]);
    assert.equal(parse(utf16).title, 'ünï');
    assert.equal(parse(Buffer.from('\uFEFF<rss><channel><title>bom</title></channel></rss>')).title, 'bom');
  });
});

describe('looksLikeFeed', () => {
  const b = (s: string): Uint8Array => Buffer.from(s);
  it('trusts the root element over the MIME type', () => {
    assert.equal(looksLikeFeed('text/html', b('<?xml version="1.0"?>\n<!-- c --><rss version="2.0"><channel/></rss>')), true);
    assert.equal(looksLikeFeed('application/xml', b('<feed xmlns="http://www.w3.org/2005/Atom"/>')), true);
    assert.equal(looksLikeFeed('text/xml', b('<!DOCTYPE rss [ <!ELEMENT rss ANY> ]><rss/>')), true);
    assert.equal(looksLikeFeed('application/rdf+xml', b('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">')), true);
    assert.equal(looksLikeFeed('application/rdf+xml', b('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description/></rdf:RDF>')), false);
    assert.equal(looksLikeFeed('application/rss+xml', b('<!DOCTYPE html><html><body>502</body></html>')), false);
    assert.equal(looksLikeFeed('application/xml', b('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>')), false);
    assert.equal(looksLikeFeed('text/xml', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('<rss/>', 'utf16le').swap16()])), true);
  });
  it('falls back to the MIME type when the body does not show a root', () => {
    assert.equal(looksLikeFeed('application/atom+xml; charset=utf-8', b('')), true);
    assert.equal(looksLikeFeed('application/rss+xml', b(`<!--${'x'.repeat(5000)}-->`)), true);
    assert.equal(looksLikeFeed('text/plain', b('just text')), false);
  });
});
