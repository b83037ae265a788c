// The operator state's codec: the stored `extra` JSON of earlier versions
// reads into the typed state, and the state writes back in that format.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { copyOperatorState, decodeOperatorState, emptyOperatorState, encodeOperatorState } from '../../src/service/collection-state.ts';

/** What an earlier version stored after a refresh-only switch, a feeding pause, a quarantine and a statistics save. */
const STORED = {
  refreshOnly: true,
  feedingPaused: { default: true, other: false },
  held: { 'http://a.test:80': 1_700_000_000_000, 'https://a.test:80': 1_700_000_000_000 },
  quarantine: { 'http://a.test:80': 1_700_000_000_000 },
  stats: { schema: 'collectionschema', cycles: [1, 2] },
  refetch: false,
};

describe('operator state codec', () => {
  it('reads the stored format into typed maps and flags', () => {
    const s = decodeOperatorState(STORED);
    assert.equal(s.refreshOnly, true);
    assert.equal(s.refetch, false);
    assert.deepEqual([...s.feedingPaused], [['default', true], ['other', false]]);
    assert.deepEqual([...s.held.keys()], ['http://a.test:80', 'https://a.test:80']);
    assert.equal(s.quarantine.get('http://a.test:80'), 1_700_000_000_000);
    assert.deepEqual(s.stats, STORED.stats);
    assert.deepEqual(s.other, {});
  });

  it('writes the same format back, leaving out only flags that are off', () => {
    const { refetch: _off, ...rest } = STORED;
    assert.deepEqual(encodeOperatorState(decodeOperatorState(STORED)), rest);
    assert.deepEqual(encodeOperatorState(emptyOperatorState()), {});
    const s = emptyOperatorState();
    s.refetch = true;
    s.held.set('http://b.test:80', 5);
    assert.deepEqual(encodeOperatorState(s), { refetch: true, held: { 'http://b.test:80': 5 } });
  });

  it('round-trips every field', () => {
    const s = decodeOperatorState({ ...STORED, refetch: true });
    assert.deepEqual(decodeOperatorState(JSON.parse(JSON.stringify(encodeOperatorState(s)))), s);
  });

  it('keeps keys it does not know, and writes them back', () => {
    const s = decodeOperatorState({ refreshOnly: true, futureKey: { x: 1 } });
    assert.deepEqual(s.other, { futureKey: { x: 1 } });
    assert.deepEqual(encodeOperatorState(s), { futureKey: { x: 1 }, refreshOnly: true });
  });

  it('drops values of the wrong type instead of failing, and reads anything not an object as empty', () => {
    const s = decodeOperatorState({ refreshOnly: 'yes', refetch: 1, feedingPaused: { a: 'no', b: true }, held: { x: 'soon', y: Number.NaN, z: 7 }, quarantine: [1, 2] });
    assert.equal(s.refreshOnly, false);
    assert.equal(s.refetch, false);
    assert.deepEqual([...s.feedingPaused], [['b', true]]);
    assert.deepEqual([...s.held], [['z', 7]]);
    assert.equal(s.quarantine.size, 0);
    for (const bad of [null, undefined, 3, 'x', [1]]) assert.deepEqual(decodeOperatorState(bad), emptyOperatorState());
  });

  it('copies share no map with the original', () => {
    const s = decodeOperatorState(STORED);
    const c = copyOperatorState(s);
    c.held.clear();
    c.feedingPaused.set('default', false);
    c.quarantine.clear();
    assert.equal(s.held.size, 2);
    assert.equal(s.feedingPaused.get('default'), true);
    assert.equal(s.quarantine.size, 1);
  });
});
