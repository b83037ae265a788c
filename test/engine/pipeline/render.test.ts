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

  it('sends a URI whose render failed back to the queue, the first time in the cycle; one already retried is skipped with js and the reason', async () => {
    const t = testCycle({ body: JS });
    const r = fakeRendering([{ ok: false, reason: 'the renderer crashed' }]);
    const first = pageContext(t, url, response(200, '<p>x</p>', { 'content-type': 'text/html' }));
    first.mime = 'text/html';
    const out = await new RenderStage(t.env, r).run(first);
    assert.equal(r.calls, 1, 'not rendered again at once');
    assert.deepEqual(out, { kind: 'failed', action: 'retry', httpStatus: undefined, code: undefined, reason: 'render failed: the renderer crashed', errorCount: 0 });
    const again = pageContext(t, url, response(200, '<p>x</p>', { 'content-type': 'text/html' }), undefined, { retries: 1 });
    again.mime = 'text/html';
    assert.deepEqual(await new RenderStage(t.env, r).run(again), { kind: 'skipped', code: 'js', reason: 'not rendered, the second time in this cycle: the renderer crashed' });
    assert.deepEqual([r.calls, r.counters.retried, r.counters.skipped], [2, 1, 1]);
  });

  it('a render that fails once and then succeeds on its retry stores the page', async () => {
    const t = testCycle({ body: JS });
    const r = fakeRendering([rendered('<p>ok</p>')]);
    const ctx = pageContext(t, url, response(200, '<p>x</p>', { 'content-type': 'text/html' }), undefined, { retries: 1 });
    ctx.mime = 'text/html';
    assert.equal(await new RenderStage(t.env, r).run(ctx), undefined);
    assert.equal(ctx.document, undefined, 'without javascript_keep_html the original is the document');
    assert.equal(ctx.rendered?.html.toString(), '<p>ok</p>');
  });

  it('a render cut short by a stop goes back to the queue, never skipped', async () => {
    const t = testCycle({ body: JS });
    const r = fakeRendering([{ ok: false, reason: 'the crawl is stopping' }]);
    (r as unknown as { stopping: boolean }).stopping = true;
    const ctx = pageContext(t, url, response(200, '<p>x</p>', { 'content-type': 'text/html' }), undefined, { retries: 1 });
    ctx.mime = 'text/html';
    const out = await new RenderStage(t.env, r).run(ctx);
    assert.equal(out?.kind, 'failed');
    assert.equal(r.counters.skipped, 0);
  });
});
