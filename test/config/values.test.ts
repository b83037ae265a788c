// Table-driven tests of the structured value parsers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkErrorKey, ipv4MaskMatches, ipv6MaskMatches, parseCrawlMode, parseCredentials, parseErrorPolicy, parseIpv4Mask,
  parseIpv6Mask, parseProxy, parseRewriteRule, parseSlotDelay, parseTimeSlot, slotContains, parseInteger, parseReal,
} from '../../src/config/values.ts';

describe('crawlmode', () => {
  for (const [text, want] of [['FULL', { kind: 'full' }], ['DEPTH:0', { kind: 'depth', depth: 0 }], ['DEPTH:12', { kind: 'depth', depth: 12 }]] as const) {
    it(text, () => assert.deepEqual(parseCrawlMode(text), { ok: true, value: want }));
  }
  for (const bad of ['full', 'DEPTH', 'DEPTH:', 'DEPTH:-1', 'DEPTH:x', 'PARTIAL']) it(`refuses ${bad}`, () => assert.equal(parseCrawlMode(bad).ok, false));
});

describe('http_errors values (2.2.4.11)', () => {
  const cases: [string, object][] = [
    ['KEEP', { action: 'keep', afterFailures: 0, retries: 0 }],
    ['KEEP:0', { action: 'keep', afterFailures: 0, retries: 0 }],
    ['DELETE', { action: 'delete', afterFailures: 0, retries: 0 }],
    ['DELETE:10', { action: 'delete', afterFailures: 10, retries: 0 }],
    ['DELETE:3, RETRY:1', { action: 'delete', afterFailures: 3, retries: 1 }],
    ['DELETE:3,RETRY', { action: 'delete', afterFailures: 3, retries: 1 }],
    ['KEEP, RETRY:5', { action: 'keep', afterFailures: 0, retries: 5 }],
  ];
  for (const [text, want] of cases) it(text, () => assert.deepEqual(parseErrorPolicy(text), { ok: true, value: want }));
  for (const bad of ['DROP', 'DELETE:-1', 'DELETE:x', 'RETRY:1', 'KEEP; RETRY:1', '']) it(`refuses ${JSON.stringify(bad)}`, () => assert.equal(parseErrorPolicy(bad).ok, false));
  for (const key of ['404', '4xx', '4XX', '40X', 'net', 'int', 'ttl', '550']) it(`key ${key}`, () => assert.equal(checkErrorKey(key), undefined));
  for (const key of ['4x', 'abc', '4040', 'NET', '0xx']) it(`refuses key ${key}`, () => assert.notEqual(checkErrorKey(key), undefined));
});

describe('variable_delay (2.2.4.23, §3.7)', () => {
  it('reads the long and short slot forms', () => {
    assert.deepEqual(parseTimeSlot('Mon:21.00-Mon:22.30'), { ok: true, value: { from: { day: 0, minuteOfDay: 1260 }, to: { day: 0, minuteOfDay: 1350 } } });
    assert.deepEqual(parseTimeSlot('wed:09-Wed:19'), { ok: true, value: { from: { day: 2, minuteOfDay: 540 }, to: { day: 2, minuteOfDay: 1140 } } });
  });
  for (const bad of ['Funday:09-Mon:10', 'Mon:25.00-Mon:26.00', 'Mon:09', 'Mon:09.60-Mon:10', 'Mon-Tue']) it(`refuses ${bad}`, () => assert.equal(parseTimeSlot(bad).ok, false));
  it('matches times inside a slot, including one that wraps the week', () => {
    const s = parseTimeSlot('Sun:22.00-Mon:02.00');
    assert.ok(s.ok);
    assert.equal(slotContains(s.value, { day: 6, minuteOfDay: 23 * 60 }), true);
    assert.equal(slotContains(s.value, { day: 0, minuteOfDay: 60 }), true);
    assert.equal(slotContains(s.value, { day: 0, minuteOfDay: 120 }), false);
    assert.equal(slotContains(s.value, { day: 3, minuteOfDay: 60 }), false);
  });
  it('reads delays and suspend', () => {
    assert.deepEqual(parseSlotDelay('20'), { ok: true, value: { kind: 'delay', delayS: 20 } });
    assert.deepEqual(parseSlotDelay('2.5'), { ok: true, value: { kind: 'delay', delayS: 2.5 } });
    assert.deepEqual(parseSlotDelay('suspend'), { ok: true, value: { kind: 'suspend' } });
    assert.equal(parseSlotDelay('-1').ok, false);
    assert.equal(parseSlotDelay('pause').ok, false);
  });
});

describe('passwd credentials (2.2.4.20)', () => {
  it('reads both forms', () => {
    assert.deepEqual(parseCredentials('bob:pw'), { ok: true, value: { username: 'bob', password: 'pw', realm: undefined, scheme: 'basic' } });
    assert.deepEqual(parseCredentials('bob:pw:realm:ntlmv2'), { ok: true, value: { username: 'bob', password: 'pw', realm: 'realm', scheme: 'ntlmv2' } });
    assert.deepEqual(parseCredentials('bob:!ENC!abc=:r:digest'), { ok: true, value: { username: 'bob', password: '!ENC!abc=', realm: 'r', scheme: 'digest' } });
  });
  for (const bad of ['bob', 'bob:pw:realm', 'bob:pw:realm:kerberos', ':pw', 'a:b:c:d:e']) it(`refuses ${bad}`, () => assert.equal(parseCredentials(bad).ok, false));
});

describe('proxy (2.2.3)', () => {
  it('reads the optional parts', () => {
    assert.deepEqual(parseProxy('proxy.example.com'), { ok: true, value: { scheme: 'http', host: 'proxy.example.com', port: 80, username: undefined, password: undefined } });
    assert.deepEqual(parseProxy('http://u:!ENC!ab/c+=@p.example.com:3128'), { ok: true, value: { scheme: 'http', host: 'p.example.com', port: 3128, username: 'u', password: '!ENC!ab/c+=' } });
  });
  for (const bad of ['https://p:1', 'p:99999', 'u@p', 'http://p:x']) it(`refuses ${bad}`, () => assert.equal(parseProxy(bad).ok, false));
});

describe('ipmask (2.2.4.1): the spec\'s own examples', () => {
  const cases: [string, string, boolean][] = [
    ['207.46.197.0-100', '207.46.197.50', true], ['207.46.197.0-100', '207.46.197.101', false],
    ['207.46.190-197.100', '207.46.193.100', true], ['207.46.190-197.100', '207.46.198.100', false], ['207.46.190-197.100', '207.46.193.101', false],
    ['207.46.197.0 /24', '207.46.197.255', true], ['207.46.197.0/24', '207.46.196.1', false], ['0.0.0.0/0', '8.8.8.8', true],
    ['207.46.197.0:255.255.255.0', '207.46.197.9', true], ['207.46.197.0:255.255.255.0', '207.46.198.9', false],
    ['207.46.197.0:0xffffffff00', '207.46.197.9', true], ['207.46.197.0:0xffffff00', '207.46.198.9', false],
  ];
  for (const [mask, ip, want] of cases) {
    it(`${mask} ${want ? 'matches' : 'does not match'} ${ip}`, () => {
      const m = parseIpv4Mask(mask);
      assert.ok(m.ok, mask);
      assert.equal(ipv4MaskMatches(m.value, ip), want);
    });
  }
  for (const bad of ['207.46.197', '207.46.197.0/33', '207.46.197.300', '207.46.197.9-1', 'host.example.com']) it(`refuses ${bad}`, () => assert.equal(parseIpv4Mask(bad).ok, false));
});

describe('ip6mask (2.2.4.1): the spec\'s own examples', () => {
  const cases: [string, string, boolean][] = [
    ['2002:CF2E:C500-C564:0:0:0:0', '2002:cf2e:c510::', true], ['2002:CF2E:C500-C564:0:0:0:0', '2002:cf2e:c565::', false],
    ['::ffff:207.46.197.0-100', '::ffff:cf2e:c532', true], ['::ffff:207.46.197.0-100', '::ffff:cf2e:c565', false],
    ['2002:CF2E:C500:0:0:0:0/60', '2002:cf2e:c500:f::1', true], ['2002:CF2E:C500::/60', '2002:cf2e:c501::1', false],
    ['fd00::/8', 'fdab::1', true], ['fd00::/8', 'fe80::1', false],
  ];
  for (const [mask, ip, want] of cases) {
    it(`${mask} ${want ? 'matches' : 'does not match'} ${ip}`, () => {
      const m = parseIpv6Mask(mask);
      assert.ok(m.ok, mask);
      assert.equal(ipv6MaskMatches(m.value, ip), want);
    });
  }
  for (const bad of ['2002::CF2E::1', 'fd00::/129', 'gggg::1', '1:2:3:4:5:6']) it(`refuses ${bad}`, () => assert.equal(parseIpv6Mask(bad).ok, false));
});

describe('rewrite_rules (2.2.3)', () => {
  it('takes any non-space delimiter', () => {
    assert.deepEqual(parseRewriteRule('*a(.+)*b$1*'), { ok: true, value: { match: 'a(.+)', replacement: 'b$1' } });
    assert.deepEqual(parseRewriteRule('#/old/#/new/#'), { ok: true, value: { match: '/old/', replacement: '/new/' } });
    assert.deepEqual(parseRewriteRule('|x||'), { ok: true, value: { match: 'x', replacement: '' } });
  });
  for (const bad of [' a b ', '*a*b', '*a*b*c*', '**b*', 'ab']) it(`refuses ${JSON.stringify(bad)}`, () => assert.equal(parseRewriteRule(bad).ok, false));
});

describe('numbers', () => {
  it('INT32 and reals', () => {
    assert.equal(parseInteger('2147483647'), 2147483647);
    assert.equal(parseInteger('2147483648'), undefined);
    assert.equal(parseInteger('-2147483648'), -2147483648);
    assert.equal(parseInteger('10.5'), undefined);
    assert.equal(parseReal('60.0'), 60);
    assert.equal(parseReal('.5'), 0.5);
    assert.equal(parseReal('1e3'), 1000);
    assert.equal(parseReal('NaN'), undefined);
    assert.equal(parseReal('Infinity'), undefined);
  });
});
