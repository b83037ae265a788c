import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CollectionCookies } from '../../src/engine/collection-cookies.ts';
import type { CrawlStore } from '../../src/store/crawl-store.ts';

/** A store that keeps cookie jars only, counting the saves. */
function jarStore(initial?: string): { store: CrawlStore; saved: string[] } {
  const saved: string[] = [];
  let jar = initial;
  const store = {
    getCookieJar: async () => jar,
    putCookieJar: async (_c: string, text: string) => {
      jar = text;
      saved.push(text);
    },
  } as unknown as CrawlStore;
  return { store, saved };
}

describe('CollectionCookies (use_cookies across cycles and restarts)', () => {
  it('loads the saved jar once, saves only after a change, and one save at a time', async () => {
    const now = { t: 1_000_000 };
    const first = jarStore();
    const a = new CollectionCookies(first.store, 'c', 60_000, () => now.t);
    await a.load();
    await a.save();
    assert.deepEqual(first.saved, [], 'nothing changed: nothing saved');
    a.setCookie('sid=1', 'http://h.test/');
    await Promise.all([a.save(), a.save()]);
    assert.equal(first.saved.length, 1);
    const b = new CollectionCookies(jarStore(first.saved[0]).store, 'c', 60_000, () => now.t);
    assert.equal(b.getCookieString('http://h.test/'), '', 'not before load()');
    await b.load();
    assert.equal(b.getCookieString('http://h.test/'), 'sid=1');
  });

  it('a new cookie_timeout applies to the session cookies set from then on', () => {
    const now = { t: 1_000_000 };
    const c = new CollectionCookies(jarStore().store, 'c', 60_000, () => now.t);
    c.setSessionTtl(1_000);
    c.setCookie('short=1', 'http://h.test/');
    now.t += 2_000;
    assert.equal(c.getCookieString('http://h.test/'), '');
  });
});
