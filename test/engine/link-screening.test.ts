import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reservedNumber, stringTag } from '../../src/core/fingerprint-cache.ts';
import { URI_SKIP_CODE_LIST } from '../../src/core/skip-codes.ts';
import { ScreenedCaches } from '../../src/engine/link-screening.ts';
import { leased, ORIGIN, SITE, testCycle } from './cycle-fixture.ts';

const from = leased(`${ORIGIN}/dir/page`, { depth: 2, hops: 2, redirects: 1 });

describe('link screening', () => {
  it('admits a link one level deeper, and a redirect at the same depth one redirect further', () => {
    const { env } = testCycle();
    const link = env.screening.admit(from, `${ORIGIN}/x`, false, SITE);
    assert.equal(link?.depth, 3);
    assert.equal(link?.hops, 3);
    assert.equal(link?.redirects, 0);
    assert.equal(link?.parent, from.url);
    assert.equal(link?.site, SITE);
    const hop = env.screening.admit(from, `${ORIGIN}/y`, true, SITE);
    assert.equal(hop?.depth, 2);
    assert.equal(hop?.hops, 2);
    assert.equal(hop?.redirects, 2);
  });

  it('refuses a link the scope refuses, counting its skip code for the page\'s site', () => {
    const { env, events } = testCycle({ body: '<attrib name="exclude_exts" type="list-string"><member>.png</member></attrib><section name="log"><attrib name="screened" type="string">text</attrib></section>' });
    assert.equal(env.screening.admit(from, `${ORIGIN}/i.png`, false, SITE), undefined);
    const codes = Object.keys(env.stats.c.uriSkips);
    assert.equal(codes.length, 1);
    assert.equal(env.stats.sites.get(SITE)?.data.histograms.URISkip[codes[0]!], 1);
    // log.screened: each refusal is logged, and none is marked in the cache.
    assert.equal(events.filter((e) => e.type === 'skip').length, 1);
    assert.equal(env.screening.cache.get(`${ORIGIN}/i.png`), undefined);
  });

  it('marks a link refused by its URL alone in the cache with its skip code, and refuses it again from memory', () => {
    const { env } = testCycle({ body: '<attrib name="exclude_exts" type="list-string"><member>.png</member></attrib>' });
    const target = `${ORIGIN}/i.png`;
    env.screening.admit(from, target, false, SITE);
    const tag = env.screening.cache.get(target);
    assert.ok(tag !== undefined);
    const code = URI_SKIP_CODE_LIST[reservedNumber(tag)];
    assert.ok(code !== undefined);
    env.screening.admit(from, target, false, SITE);
    assert.equal(env.stats.c.uriSkips[code], 2);
  });

  it('drops the links of a commit the cache holds, counting them ic, and screens with the site\'s tag', () => {
    const { env } = testCycle();
    const q = env.screening.admit(from, `${ORIGIN}/x`, false, SITE)!;
    const st = env.stats.statsFor(SITE);
    assert.deepEqual(env.screening.dropScreened([q], st), [q]);
    env.screening.screen(q.url, q.site);
    assert.equal(env.screening.cache.get(q.url), stringTag(SITE));
    assert.deepEqual(env.screening.dropScreened([q], st), []);
    assert.equal(env.stats.c.uriSkips.ic, 1);
  });

  it('grows a full cache while cachesize.screened is unset, keeping what it held', () => {
    const { env, events } = testCycle({ screenedStart: 4 });
    for (let i = 0; i < 5; i++) env.screening.screen(`${ORIGIN}/p${i}`, SITE);
    assert.equal(env.screening.cache.max, 8);
    for (let i = 0; i < 5; i++) assert.ok(env.screening.cache.has(`${ORIGIN}/p${i}`));
    assert.equal(events.filter((e) => e.type === 'cycle').length, 1);
  });

  it('screens nothing with cachesize.screened 0', () => {
    const { env } = testCycle({ body: '<section name="cachesize"><attrib name="screened" type="integer">0</attrib></section>' });
    assert.equal(env.screening.enabled, false);
    const q = env.screening.admit(from, `${ORIGIN}/x`, false, SITE)!;
    env.screening.screen(q.url, q.site);
    assert.deepEqual(env.screening.dropScreened([q], env.stats.statsFor(SITE)), [q]);
  });

  it('keeps the screened-URI cache from one cycle for the next, emptied, instead of a new table each cycle', () => {
    const caches = new ScreenedCaches();
    const first = testCycle({ screenedCaches: caches }).env.screening;
    first.screen(`${ORIGIN}/a`, SITE);
    first.takeBack();
    const second = testCycle({ screenedCaches: caches }).env.screening;
    assert.equal(second.cache, first.cache);
    assert.equal(second.cache.size, 0);
    assert.equal(second.cache.has(`${ORIGIN}/a`), false);
    // Not given back (the cycle still runs): the next one gets a table of its own.
    assert.notEqual(testCycle({ screenedCaches: caches }).env.screening.cache, second.cache);
  });

  it('keeps a grown cache for the next cycle, and makes a new one when cachesize.screened sets another size', () => {
    const caches = new ScreenedCaches();
    const grown = testCycle({ screenedStart: 4, screenedCaches: caches }).env.screening;
    for (let i = 0; i < 5; i++) grown.screen(`${ORIGIN}/p${i}`, SITE);
    grown.takeBack();
    const next = testCycle({ screenedStart: 4, screenedCaches: caches }).env.screening;
    assert.equal(next.cache, grown.cache);
    assert.equal(next.cache.max, 8);
    next.takeBack();
    const fixed = testCycle({ body: '<section name="cachesize"><attrib name="screened" type="integer">16</attrib></section>', screenedCaches: caches }).env.screening;
    assert.notEqual(fixed.cache, grown.cache);
    assert.equal(fixed.cache.max, 16);
  });
});
