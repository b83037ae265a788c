// Egress policy and pinned DNS.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyAddress, EgressChecker, SiteResolver, type Resolved } from '../../src/fetch/egress.ts';

const closed = { allowLoopback: false, allowPrivateNetworks: false, allowLinkLocal: false, allowIps: [], denyIps: [] };

describe('egress', () => {
  const classes: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'], ['127.4.5.6', 'loopback'], ['::1', 'loopback'], ['10.1.2.3', 'private'], ['172.16.0.1', 'private'], ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'], ['100.64.0.1', 'private'], ['fd12::1', 'private'], ['169.254.1.1', 'link-local'], ['fe80::1', 'link-local'],
    ['169.254.169.254', 'metadata'], ['fd00:ec2::254', 'metadata'], ['0.0.0.0', 'unspecified'], ['224.0.0.1', 'multicast'], ['8.8.8.8', 'public'],
    ['2001:4860::8888', 'public'], ['::ffff:10.0.0.1', 'private'], ['::ffff:127.0.0.1', 'loopback'],
  ];
  for (const [ip, cls] of classes) it(`${ip} is ${cls}`, () => assert.equal(classifyAddress(ip), cls));

  // IPv6 forms that carry an IPv4 address are judged by it (classification only: nothing here is connected to).
  const embedded: Array<[string, string, string]> = [
    ['::ffff:7f00:1', 'loopback', 'IPv4-mapped, hexadecimal tail'],
    ['::ffff:a9fe:a9fe', 'metadata', 'IPv4-mapped metadata address'],
    ['::127.0.0.1', 'loopback', 'IPv4-compatible (deprecated)'],
    ['::a00:1', 'private', 'IPv4-compatible, hexadecimal tail'],
    ['::8.8.8.8', 'public', 'IPv4-compatible public address'],
    ['64:ff9b::10.0.0.1', 'private', 'NAT64 well-known prefix'],
    ['64:ff9b::a9fe:a9fe', 'metadata', 'NAT64 to 169.254.169.254'],
    ['64:ff9b::7f00:1', 'loopback', 'NAT64 to 127.0.0.1'],
    ['64:ff9b::808:808', 'public', 'NAT64 to 8.8.8.8'],
    ['64:ff9b:1::c0a8:101', 'private', 'NAT64 local-use prefix, /96 layout (192.168.1.1)'],
    ['64:ff9b:1:a9fe:a9:fe00::', 'metadata', 'NAT64 local-use prefix, RFC 6052 /48 layout (169.254.169.254)'],
    ['2002:a9fe:a9fe::1', 'metadata', '6to4 of 169.254.169.254'],
    ['2002:7f00:1::', 'loopback', '6to4 of 127.0.0.1'],
    ['2002:c0a8:0101:1::1', 'private', '6to4 of 192.168.1.1'],
    ['2002:0808:0808::1', 'public', '6to4 of 8.8.8.8'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback', 'Teredo, client 127.0.0.1 (inverted)'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'private', 'Teredo, client 10.0.0.1 (inverted)'],
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'metadata', 'Teredo, client 169.254.169.254 (inverted)'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'reserved', 'Teredo with a public client: the prefix is not global'],
    ['2001:4860::7f00:1', 'public', 'outside 2001::/32: not Teredo'],
  ];
  for (const [ip, cls, what] of embedded) it(`${ip} is ${cls} (${what})`, () => assert.equal(classifyAddress(ip), cls));

  it('refuses a mapped, NAT64 or 6to4 form of a loopback address as loopback, naming the switch', () => {
    const c = new EgressChecker(closed);
    for (const ip of ['::ffff:7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::']) {
      const d = c.check(ip);
      assert.equal(d.allowed, false, ip);
      assert.match(d.reason ?? '', /loopback address; refused unless trawl_egress\.allow_loopback/, ip);
    }
  });

  it('refuses loopback, private, link-local and metadata by default, naming the switch', () => {
    const c = new EgressChecker(closed);
    assert.equal(c.check('8.8.8.8').allowed, true);
    const d = c.check('127.0.0.1');
    assert.equal(d.allowed, false);
    assert.match(d.reason!, /allow_loopback/);
    assert.match(c.check('10.0.0.1').reason!, /allow_private_networks/);
    assert.match(c.check('169.254.169.254').reason!, /allow_ips/);
  });

  it('switches open one class each; allow_ips and deny_ips win', () => {
    const c = new EgressChecker({ ...closed, allowLoopback: true, allowIps: ['10.9.0.0/16'], denyIps: ['127.0.0.9', '8.8.8.0/24'] });
    assert.equal(c.check('127.0.0.1').allowed, true);
    assert.equal(c.check('127.0.0.9').allowed, false);
    assert.equal(c.check('8.8.8.8').allowed, false);
    assert.equal(c.check('10.9.1.1').allowed, true);
    assert.equal(c.check('10.8.1.1').allowed, false);
    assert.equal(c.check('169.254.169.254').allowed, false); // allow_link_local is off, and metadata needs allow_ips anyway
    assert.equal(new EgressChecker({ ...closed, allowLinkLocal: true }).check('169.254.169.254').allowed, false);
    assert.equal(new EgressChecker({ ...closed, allowIps: ['169.254.169.254'] }).check('169.254.169.254').allowed, true);
  });

  it('resolves once per TTL and pins the answer, so a changed DNS answer is not used', async () => {
    let answer: Resolved[] = [{ address: '93.184.216.34', family: 4 }];
    let lookups = 0;
    let now = 0;
    const r = new SiteResolver(new EgressChecker(closed), 60_000, async () => {
      lookups++;
      return answer;
    }, () => now);
    assert.deepEqual(await r.resolve('example.test'), { ok: true, address: '93.184.216.34', family: 4 });
    answer = [{ address: '127.0.0.1', family: 4 }]; // a rebinding attempt
    now = 59_000;
    assert.deepEqual(r.pinned('example.test'), { ok: true, address: '93.184.216.34', family: 4 });
    assert.deepEqual(await r.resolve('example.test'), { ok: true, address: '93.184.216.34', family: 4 });
    assert.equal(lookups, 1);
    assert.equal(r.lookups, 1);
    now = 61_000;
    const again = await r.resolve('example.test');
    assert.equal(again.ok, false);
    assert.match((again as { reason: string }).reason, /loopback/);
    assert.equal(lookups, 2);
  });

  it('drops expired answers, so a broad crawl does not keep one for every host it met', async () => {
    let now = 0;
    let lookups = 0;
    const r = new SiteResolver(new EgressChecker(closed), 60_000, async () => {
      lookups++;
      return [{ address: '93.184.216.34', family: 4 }];
    }, () => now);
    for (let i = 0; i < 1000; i++) await r.resolve(`h${i}.test`);
    assert.equal(r.size, 1000);
    now = 30_000;
    await r.resolve('h0.test'); // still pinned: no lookup, no renewal
    now = 59_999;
    await r.resolve('renewed.test');
    assert.equal(r.size, 1001, 'nothing has expired yet');
    now = 60_000;
    await r.resolve('h1.test'); // expired: looked up again and renewed, and the sweep runs
    assert.equal(lookups, 1002);
    assert.equal(r.size, 2, 'h0..h999 expired at 60 s; renewed.test and the renewed h1 are kept');
    assert.equal(r.pinned('h5.test'), undefined);
    now = 120_000;
    await r.resolve('late.test');
    assert.deepEqual([r.size, r.pinned('h1.test'), r.pinned('late.test')?.ok], [1, undefined, true]);
    // A dropped host is simply resolved again.
    assert.equal((await r.resolve('h5.test')).ok, true);
    assert.equal(lookups, 1004);
  });

  it('refuses a name when any of its addresses is refused', async () => {
    const r = new SiteResolver(new EgressChecker(closed), 1000, async () => [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.1', family: 4 }]);
    const res = await r.resolve('split.test');
    assert.equal(res.ok, false);
  });

  it('reports DNS failures as DNS errors', async () => {
    const r = new SiteResolver(new EgressChecker(closed), 1000, async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    });
    const res = await r.resolve('nxdomain.test');
    assert.deepEqual(res, { ok: false, reason: 'DNS: ENOTFOUND for nxdomain.test', dnsError: true });
    assert.equal(r.lookupFailures, 1);
  });
});
