import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClassifyStage, retryAfterMs } from '../../../src/engine/pipeline/classify.ts';
import { failure, NOW_MS, pageContext, response, ORIGIN, storedRecord, testCycle } from '../cycle-fixture.ts';

const url = `${ORIGIN}/page`;

describe('classify stage', () => {
  it('passes a 2xx response on, after counting its bytes, status and download', () => {
    const t = testCycle();
    const ctx = pageContext(t, url, response(200, 'hello'));
    assert.equal(new ClassifyStage(t.env).run(ctx), undefined);
    assert.equal(t.env.stats.c.bytesIn, 105);
    assert.deepEqual(t.env.stats.c.httpStatus, { 200: 1 });
    assert.equal(ctx.st.data.histograms.HTTPResponse['200'], 1);
    assert.equal(t.events.filter((e) => e.type === 'fetch').length, 1);
  });

  it('ends a 304 as unchanged', () => {
    const t = testCycle();
    assert.deepEqual(new ClassifyStage(t.env).run(pageContext(t, url, response(304), storedRecord(url))), { kind: 'unchanged' });
  });

  it('ends a redirect with its target queued as a link one redirect further', () => {
    const t = testCycle();
    const ctx = pageContext(t, url, response(301, '', { location: '/next#x' }));
    const out = new ClassifyStage(t.env).run(ctx);
    assert.deepEqual(out, { kind: 'redirect', to: `${ORIGIN}/next`, code: undefined, reason: '' });
    assert.equal(ctx.links.length, 1);
    assert.equal(ctx.links[0]!.url, `${ORIGIN}/next`);
    assert.equal(ctx.links[0]!.redirects, 1);
    assert.equal(ctx.links[0]!.depth, 1);
  });

  it('ends a redirect without Location, or past max_redirects, with nr and no link', () => {
    const t = testCycle({ body: '<attrib name="max_redirects" type="integer">2</attrib>' });
    const stage = new ClassifyStage(t.env);
    const a = pageContext(t, url, response(302));
    assert.equal(stage.run(a)?.kind, 'redirect');
    assert.equal((stage.run(a) as { code?: string }).code, 'nr');
    const b = pageContext(t, url, response(302, '', { location: '/n' }), undefined, { redirects: 2 });
    assert.equal((stage.run(b) as { code?: string }).code, 'nr');
    assert.equal(b.links.length, 0);
  });

  it('ends an egress refusal as skipped with its code, without a site failure', () => {
    const t = testCycle();
    const ctx = pageContext(t, url, failure({ blocked: true, code: 'ot', connectFailure: false, reason: 'private address' }));
    assert.deepEqual(new ClassifyStage(t.env).run(ctx), { kind: 'skipped', code: 'ot', reason: 'refused by the egress policy: private address' });
    assert.equal(ctx.site.failures, 0);
  });

  it('closes a site after max_backoff_counter connection failures, with an error event carrying the skip code', () => {
    const t = testCycle({ body: '<attrib name="max_backoff_counter" type="integer">1</attrib>' });
    const stage = new ClassifyStage(t.env);
    const first = pageContext(t, url, failure());
    assert.equal(stage.run(first)?.kind, 'failed');
    assert.equal(first.site.closed, false);
    stage.run(pageContext(t, url, failure()));
    assert.equal(first.site.closed, true);
    const err = t.events.find((e) => e.type === 'error');
    assert.equal(err?.code, 'co');
  });

  it('applies http_errors: RETRY while retries remain, then DELETE counting the failures in a row', () => {
    const t = testCycle({ body: '<section name="http_errors"><attrib name="404" type="string">DELETE:2</attrib><attrib name="500" type="string">KEEP:0, RETRY:1</attrib></section>' });
    const stage = new ClassifyStage(t.env);
    assert.deepEqual(stage.run(pageContext(t, url, response(500))), { kind: 'failed', action: 'retry', httpStatus: 500, code: undefined, reason: 'HTTP 500', errorCount: 0 });
    assert.equal((stage.run(pageContext(t, url, response(500), undefined, { retries: 1 })) as { action: string }).action, 'error');
    assert.equal((stage.run(pageContext(t, url, response(404))) as { action: string }).action, 'error');
    const second = stage.run(pageContext(t, url, response(404), storedRecord(url, { errorCount: 1 })));
    assert.deepEqual(second, { kind: 'failed', action: 'delete', httpStatus: 404, code: undefined, reason: 'HTTP 404', errorCount: 2 });
  });

  it('applies ftp_errors, not http_errors, to an ftp:// URI: to its FTP reply code (ftpCode), and to net failures', () => {
    const t = testCycle({ body: '<section name="ftp_errors"><attrib name="550" type="string">KEEP:0, RETRY:2</attrib><attrib name="net" type="string">KEEP:0</attrib></section><section name="http_errors"><attrib name="404" type="string">DELETE:0</attrib></section>' });
    const stage = new ClassifyStage(t.env);
    const ftpUrl = 'ftp://files.example/pub/gone.txt';
    const notFound = { ...response(404), ftpCode: 550, headerBlock: 'FTP 550 No such file or directory.\r\n' };
    assert.deepEqual(stage.run(pageContext(t, ftpUrl, notFound)), { kind: 'failed', action: 'retry', httpStatus: 404, code: undefined, reason: 'FTP 550 No such file or directory.', errorCount: 0 });
    assert.equal((stage.run(pageContext(t, ftpUrl, notFound, undefined, { retries: 2 })) as { action: string }).action, 'error');
    // The same status over HTTP follows http_errors.
    assert.equal((stage.run(pageContext(t, url, response(404))) as { action: string }).action, 'delete');
    // ftp_errors' default for 530 (4xx/5xx DELETE:3): an error, not a deletion, on the first failure.
    const denied = { ...response(401), ftpCode: 530, headerBlock: 'FTP 530 Authentication failed.\r\n' };
    assert.equal((stage.run(pageContext(t, ftpUrl, denied)) as { action: string }).action, 'error');
    // net: http_errors' default would retry (RETRY:1); ftp_errors says KEEP:0.
    assert.equal((stage.run(pageContext(t, ftpUrl, failure({ connectFailure: false }))) as { action: string }).action, 'error');
    assert.equal((stage.run(pageContext(t, url, failure({ connectFailure: false }))) as { action: string }).action, 'retry');
  });

  it('ftp_errors defaults (MS-FSCCFG 2.2.4.14) have no ttl: an FTP timeout keeps the document where http_errors\' ttl DELETE:3 deletes it', () => {
    const t = testCycle();
    const stage = new ClassifyStage(t.env);
    const timeout = failure({ code: 'ti', errorKey: 'ttl', connectFailure: false });
    const ftpUrl = 'ftp://files.example/pub/slow.bin';
    assert.equal((stage.run(pageContext(t, ftpUrl, timeout, storedRecord(ftpUrl, { errorCount: 2 }))) as { action: string }).action, 'error');
    assert.equal((stage.run(pageContext(t, url, timeout, storedRecord(url, { errorCount: 2 }))) as { action: string }).action, 'delete');
  });

  it('pauses the site for a 503 with Retry-After', () => {
    const t = testCycle();
    const ctx = pageContext(t, url, response(503, '', { 'retry-after': '30' }));
    new ClassifyStage(t.env).run(ctx);
    assert.equal(ctx.site.pausedUntilMs, NOW_MS + 30_000);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    assert.equal(retryAfterMs('12', 0), 12_000);
    assert.equal(retryAfterMs(new Date(NOW_MS + 5000).toUTCString(), NOW_MS), 5000);
    assert.equal(retryAfterMs('soon', 0), undefined);
    assert.equal(retryAfterMs(undefined, 0), undefined);
  });
});
