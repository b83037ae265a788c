import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExtractStage } from '../../../src/engine/pipeline/extract.ts';
import { RenderStage } from '../../../src/engine/pipeline/render.ts';
import type { Rendering } from '../../../src/engine/rendering.ts';
import type { RenderResult } from '../../../src/render/renderer.ts';
import { ORIGIN, pageContext, response, testCycle } from '../cycle-fixture.ts';

const url = `${ORIGIN}/page`;
const JS = '<attrib name="use_javascript" type="boolean">yes</attrib>';

/** A Rendering that answers from a list, and counts its calls (no browser). */
function fakeRendering(answers: RenderResult[]): Rendering & { calls: number } {
  const counters = { rendered: 0, retried: 0, skipped: 0, dependencies: 0, outOfScope: 0, refused: 0, dependencyBytes: 0 };
  const fake = { calls: 0, counters, stopping: false, render: () => Promise.resolve(answers[fake.calls++] ?? answers.at(-1)!) };
  return fake as unknown as Rendering & { calls: number };
}

const rendered = (html: string, pushed: string[] = []): RenderResult => ({ ok: true, html, pushed, navigations: [], ms: 5 });

describe('render stage', () => {
  it('passes a page of a collection without use_javascript on untouched', () => {
    const t = testCycle();
    const r = fakeRendering([rendered('<p>x</p>')]);
    const ctx = pageContext(t, url, response(200, '<p>x</p>', { 'content-type': 'text/html' }));
    ctx.mime = 'text/html';
    assert.equal(new RenderStage(t.env, r).run(ctx), undefined);
    assert.equal(r.calls, 0);
  });

  it('renders an HTML page; its links and pushed URLs join the original\'s; keep_html makes the rendered HTML the document', async () => {
    const t = testCycle({ body: `${JS}<attrib name="javascript_keep_html" type="boolean">yes</attrib>` });
    const r = fakeRendering([rendered('<a href="/added">a</a><a href="/plain">p</a>', [`${ORIGIN}/routed`])]);
    const ctx = pageContext(t, url, response(200, '<a href="/plain">p</a>', { 'content-type': 'text/html' }));
    ctx.mime = 'text/html';
    assert.equal(await new RenderStage(t.env, r).run(ctx), undefined);
    assert.equal(ctx.document?.toString(), '<a href="/added">a</a><a href="/plain">p</a>');
    await new ExtractStage(t.env).run(ctx);
    const urls = ctx.extraction!.links.map((l) => l.url);
    for (const u of ['/plain', '/added', '/routed']) assert.ok(urls.includes(`${ORIGIN}${u}`), `${u} in ${urls.join(' ')}`);
  });

  it('does not render a type outside uri_search_mime', () => {
    const t = testCycle({ body: JS });
    const r = fakeRendering([rendered('')]);
    const ctx = pageContext(t, url, response(200, 'text', { 'content-type': 'text/plain' }));
    ctx.mime = 'text/plain';
    assert.equal(new RenderStage(t.env, r).run(ctx), undefined);
    assert.equal(r.calls, 0);
  });

  it('tries a failed render once more, then skips the page with js and the reason', async () => {
    const t = testCycle({ body: JS });
    const r = fakeRendering([{ ok: false, reason: 'the renderer crashed' }]);
    const ctx = pageContext(t, url, response(200, '<p>x</p>', { 'content-type': 'text/html' }));
    ctx.mime = 'text/html';
    const out = await new RenderStage(t.env, r).run(ctx);
    assert.equal(r.calls, 2);
    assert.deepEqual(out, { kind: 'skipped', code: 'js', reason: 'not rendered, twice: the renderer crashed' });
    assert.equal(r.counters.retried, 1);
    assert.equal(r.counters.skipped, 1);
  });

  it('a render that fails once and then succeeds stores the page', async () => {
    const t = testCycle({ body: JS });
    const r = fakeRendering([{ ok: false, reason: 'not rendered within page_timeout (30 s)' }, rendered('<p>ok</p>')]);
    const ctx = pageContext(t, url, response(200, '<p>x</p>', { 'content-type': 'text/html' }));
    ctx.mime = 'text/html';
    assert.equal(await new RenderStage(t.env, r).run(ctx), undefined);
    assert.equal(ctx.document, undefined, 'without javascript_keep_html the original is the document');
    assert.equal(ctx.rendered?.html.toString(), '<p>ok</p>');
  });
});
