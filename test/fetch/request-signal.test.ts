// The per-request abort signal of the HTTP fetcher: it fires at the timeout
// or with the crawl's stop signal, and once disposed it holds on to neither.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requestSignal } from '../../src/fetch/http-fetcher.ts';

describe('requestSignal', () => {
  it('aborts at the timeout and says so', async () => {
    const d = requestSignal(20, undefined);
    await new Promise((r) => d.signal.addEventListener('abort', r, { once: true }));
    assert.equal(d.timedOut(), true);
    assert.equal((d.signal.reason as DOMException).name, 'TimeoutError');
    d.dispose();
  });

  it('aborts with the parent, already aborted or later, without calling it a timeout', () => {
    const stopped = new AbortController();
    stopped.abort(new Error('stop'));
    const a = requestSignal(60_000, stopped.signal);
    assert.equal(a.signal.aborted, true);
    assert.equal(a.timedOut(), false);
    a.dispose();
    const later = new AbortController();
    const b = requestSignal(60_000, later.signal);
    later.abort(new Error('stop'));
    assert.equal(b.signal.aborted, true);
    assert.equal((b.signal.reason as Error).message, 'stop');
    b.dispose();
  });

  it('lets go of the parent and the timer once disposed', async () => {
    const parent = new AbortController();
    const d = requestSignal(10, parent.signal);
    d.dispose();
    parent.abort();
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(d.signal.aborted, false, 'neither the parent nor the cleared timer reaches a disposed request');
    assert.equal(d.timedOut(), false);
  });
});
