import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { describe, it } from 'node:test';
import { PagePipeline } from '../../../src/engine/pipeline/pipeline.ts';
import type { PageContext } from '../../../src/engine/pipeline/page-context.ts';
import { DirectivesStage } from '../../../src/engine/pipeline/directives.ts';
import { DuplicateStage } from '../../../src/engine/pipeline/duplicate.ts';
import { MimeStage, TypeFilterStage } from '../../../src/engine/pipeline/type-filters.ts';
import { URI_FLAGS } from '../../../src/store/crawl-store.ts';
import { pageContext, response, ORIGIN, SITE, storedRecord, testCycle, type TestCycle } from '../cycle-fixture.ts';

const url = `${ORIGIN}/page`;
const HTML = { 'content-type': 'text/html' };
const page = (body: string): string => `<html><head><title>t</title></head><body>${body}</body></html>`;
const sha1 = (s: string): string => hash('sha1', s, 'hex');

/** Runs one page through the crawler's pipeline. */
async function run(t: TestCycle, ctx: PageContext): Promise<void> {
  await PagePipeline.standard(t.env).run(ctx);
}

describe('page pipeline', () => {
  it('lists the stages in order', () => {
    const t = testCycle();
    assert.deepEqual(PagePipeline.standard(t.env).stages.map((s) => s.name), ['classify', 'mime', 'sitemap', 'channel', 'type-filters', 'extract', 'links', 'directives', 'focus', 'duplicate', 'store']);
  });

  it('stores an HTML page with its links in one commit, counting the links it queued', async () => {
    const t = testCycle();
    const body = page('<a href="/a">a</a> <a href="b#frag">b</a> <a href="/a">again</a> <a href="http://other.test/x">x</a>');
    await run(t, pageContext(t, url, response(200, body, HTML)));
    assert.equal(t.log.completions.length, 1);
    const c = t.log.completions[0]!;
    assert.equal(c.record?.status, 'stored');
    assert.equal(c.record?.checksum, sha1(body));
    assert.equal(c.record?.mime, 'text/html');
    assert.deepEqual(c.discovered.map((q) => q.url), [`${ORIGIN}/a`, `${ORIGIN}/b`, 'http://other.test/x']);
    assert.deepEqual(t.log.putContent, [url]);
    const st = t.env.stats.sites.get(SITE)!.data.continuous;
    assert.equal(st.Local, 2);
    assert.equal(st.LocalFwd, 1);
    assert.equal(t.env.stats.c.stored, 1);
  });

  it('counts a nofollow page\'s links as nf and queues none; a noindex page is skipped with ni', async () => {
    const t = testCycle();
    const body = '<html><head><meta name="robots" content="noindex, nofollow"></head><body><a href="/a">a</a></body></html>';
    await run(t, pageContext(t, url, response(200, body, HTML)));
    const c = t.log.completions[0]!;
    assert.equal(c.record?.status, 'skipped');
    assert.equal(c.record?.skipCode, 'ni');
    assert.deepEqual(c.discovered, []);
    assert.deepEqual(t.env.stats.c.uriSkips, { nf: 1 });
    assert.deepEqual(t.log.putContent, []);
  });

  it('ends a page whose checksum the record holds as unchanged, without storing it again', async () => {
    const t = testCycle();
    const body = page('same');
    await run(t, pageContext(t, url, response(200, body, HTML), storedRecord(url, { checksum: sha1(body) })));
    assert.equal(t.log.completions[0]?.record?.status, 'unchanged');
    assert.equal(t.log.completions[0]?.record?.contentRef, 'old-ref');
    assert.deepEqual(t.log.putContent, []);
  });

  it('records a page equal to one stored under another URL as its duplicate (diffcheck), and releases every claim', async () => {
    const body = page('twin');
    const t = testCycle({ checksums: new Map([[sha1(body), `${ORIGIN}/original`]]) });
    t.env.duplicates.beginCycle();
    t.env.duplicates.noteRecord(storedRecord(`${ORIGIN}/original`, { checksum: sha1(body) }));
    await run(t, pageContext(t, url, response(200, body, HTML)));
    const r = t.log.completions[0]?.record;
    assert.equal(r?.status, 'duplicate');
    assert.equal(r?.duplicateOf, `${ORIGIN}/original`);
    assert.equal(t.log.checksumLookups, 1);
    // A page that is stored holds its claim until it is committed, then gives it up: the next equal page asks the store again.
    const other = page('new');
    await run(t, pageContext(t, `${ORIGIN}/p1`, response(200, other, HTML)));
    const answer = await t.env.duplicates.claim(sha1(other), `${ORIGIN}/p2`);
    assert.notEqual(typeof answer, 'string', 'p1 holds no claim after its commit: the store is asked, and knows no other page');
  });

  it('routes a URI queued as a sitemap to the sitemap stage: its URLs queued, no record', async () => {
    const t = testCycle({ body: '<attrib name="use_sitemaps" type="boolean">yes</attrib>', store: { putSitemapMeta: () => Promise.resolve() } });
    const xml = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${ORIGIN}/s1</loc></url><url><loc>http://elsewhere.test/</loc></url></urlset>`;
    await run(t, pageContext(t, `${ORIGIN}/sitemap.xml`, response(200, xml, { 'content-type': 'application/xml' }), undefined, { flags: URI_FLAGS.SITEMAP }));
    const c = t.log.completions[0]!;
    assert.equal(c.record, undefined);
    assert.deepEqual(c.discovered.map((q) => q.url), [`${ORIGIN}/s1`]);
  });

  it('turns away a MIME type outside allowed_types (mi) and an empty body (em) before extracting', async () => {
    const t = testCycle();
    const filters = new TypeFilterStage(t.env);
    const mime = new MimeStage();
    const a = pageContext(t, url, response(200, 'x', { 'content-type': 'application/x-thing' }));
    mime.run(a);
    assert.equal(a.mime, 'application/x-thing');
    assert.equal((filters.run(a) as { code?: string }).code, 'mi');
    const b = pageContext(t, url, response(200, '', HTML));
    mime.run(b);
    assert.equal((filters.run(b) as { code?: string }).code, 'em');
  });

  it('collapses a page naming another URL as canonical onto it, queueing that URL first', () => {
    const t = testCycle();
    const ctx = pageContext(t, url, response(200, 'x', HTML));
    ctx.canonical = `${ORIGIN}/canon`;
    ctx.links.push({ url: `${ORIGIN}/a`, site: SITE, depth: 2, hops: 2, redirects: 0, parent: url, priority: 0, sub: undefined });
    const out = new DirectivesStage(t.env).run(ctx);
    assert.equal(out?.kind, 'duplicate');
    assert.deepEqual(ctx.links.map((l) => l.url), [`${ORIGIN}/canon`, `${ORIGIN}/a`]);
    assert.equal(ctx.links[0]!.redirects, 0);
  });

  it('claims a new checksum at once, without waiting, when no record can hold it', () => {
    const t = testCycle();
    t.env.duplicates.beginCycle();
    const ctx = pageContext(t, url, response(200, 'fresh', HTML));
    assert.equal(new DuplicateStage(t.env).run(ctx), undefined);
    assert.ok(ctx.claim);
    assert.equal(t.log.checksumLookups, 0);
  });
});
