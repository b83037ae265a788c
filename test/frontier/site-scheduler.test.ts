// The politeness rule, on a fake clock: starts at least `delay` apart per gate, at most max_pending outstanding.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SiteScheduler } from '../../src/frontier/site-scheduler.ts';

const policy = (over: Partial<ConstructorParameters<typeof SiteScheduler>[0]> = {}) => ({ delayMs: () => 1000, maxPending: 2, maxSites: 10, maxInterDocs: undefined, maxBackoffDelayMs: 600_000, ...over });

describe('site scheduler', () => {
  it('spaces request starts by the delay and caps outstanding requests', () => {
    const s = new SiteScheduler(policy());
    const a = s.addWork('http://a:80', 5);
    assert.deepEqual(s.ready(0).sites, [a]);
    s.started(a, 0);
    const r = s.ready(500);
    assert.deepEqual(r.sites, []);
    assert.equal(r.nextMs, 1000);
    assert.deepEqual(s.ready(1000).sites, [a]);
    s.started(a, 1000);
    assert.deepEqual(s.ready(5000).sites, []); // two outstanding: max_pending reached
    s.finished(a, true);
    assert.deepEqual(s.ready(5000).sites, [a]);
  });

  it('gives a site\'s host name as the URL parser does (IPv6 in brackets, lower case, no port)', () => {
    const s = new SiteScheduler(policy());
    assert.equal(s.addWork('http://[::1]:8080', 1).host, '[::1]');
    assert.equal(s.addWork('https://WWW.Example.test:443', 1).host, 'www.example.test');
    assert.equal(s.addWork('http://127.0.1.5:8080', 1).host, '127.0.1.5');
  });

  it('shares the clock of sites bound to one IP address', () => {
    const s = new SiteScheduler(policy({ maxPending: 1 }));
    const a = s.addWork('http://a:80', 1);
    const b = s.addWork('http://b:80', 1);
    s.bindGate(a, '10.0.0.1');
    s.bindGate(b, '10.0.0.1');
    assert.equal(s.ready(0).sites.length, 2);
    s.started(a, 0);
    const r = s.ready(10);
    assert.deepEqual(r.sites, []);
    assert.equal(r.nextMs, 1000);
  });

  it('returns at most `limit` ready sites, in the same rotating order, and still rotates', () => {
    const s = new SiteScheduler(policy({ delayMs: () => 0, maxPending: 1 }));
    const sites = ['a', 'b', 'c', 'd', 'e'].map((h) => s.addWork(`http://${h}:80`, 3));
    const all = s.ready(0).sites;
    assert.deepEqual(all, sites);
    // The rotor has moved on by one: b first. A limit keeps the order and cuts the tail.
    assert.deepEqual(s.ready(0, 2).sites, [sites[1], sites[2]]);
    assert.deepEqual(s.ready(0, 2).sites, [sites[2], sites[3]]);
    assert.deepEqual(s.ready(0, 0).sites, []);
    // Busy sites are skipped before the limit counts.
    s.started(sites[4]!, 0);
    s.started(sites[0]!, 0);
    assert.deepEqual(s.ready(0, 2).sites, [sites[1], sites[2]]);
    // Fewer ready than the limit: every site is looked at, and nextMs covers them all.
    const slow = new SiteScheduler(policy({ maxPending: 1 }));
    const [p, q] = [slow.addWork('http://p:80', 2), slow.addWork('http://q:80', 2)];
    slow.started(p, 0);
    slow.finished(p, true);
    const r = slow.ready(10, 5);
    assert.deepEqual([r.sites, r.nextMs], [[q], 1000]);
  });

  it('honours a pause (Retry-After) up to max_backoff_delay', () => {
    const s = new SiteScheduler(policy({ maxBackoffDelayMs: 5000 }));
    const a = s.addWork('http://a:80', 2);
    s.pause(a, 3000, 0);
    assert.equal(s.ready(0).nextMs, 3000);
    s.pause(a, 999_999, 0);
    assert.equal(s.ready(0).nextMs, 5000);
  });

  it('backs off after connection failures', () => {
    const s = new SiteScheduler(policy());
    const a = s.addWork('http://a:80', 5);
    a.failures = 2;
    s.started(a, 0);
    assert.ok(a.gate.nextStartMs >= 4000, String(a.gate.nextStartMs));
  });

  it('keeps at most max_sites active and rotates after max_inter_docs', () => {
    const s = new SiteScheduler(policy({ maxSites: 1, maxInterDocs: 2, delayMs: () => 0 }));
    const a = s.addWork('http://a:80', 10);
    const b = s.addWork('http://b:80', 10);
    assert.deepEqual(s.ready(0).sites, [a]);
    for (let i = 0; i < 2; i++) {
      s.started(a, i);
      s.finished(a, true);
    }
    assert.deepEqual(s.ready(10).sites, [b]);
  });

  it('activates waiting sites once each, first come first served, through thousands of sites', () => {
    // max_sites 1: each site is taken from the waiting line only when the one before it has no work left.
    const s = new SiteScheduler(policy({ maxSites: 1, delayMs: () => 0 }));
    const sites = Array.from({ length: 5000 }, (_, i) => `http://h${i}:80`);
    for (let round = 0; round < 3; round++) for (const site of sites) s.addWork(site, 1);
    const order: string[] = [];
    for (let t = 0; order.length < sites.length + 10; t++) {
      const ready = s.ready(t).sites;
      if (ready.length === 0) break;
      assert.equal(ready.length, 1);
      const site = ready[0]!;
      order.push(site.site);
      site.queued = 0; // its three URIs are done
      // A site that gets work again after it was drained and left the active set waits at the back of the line.
      if (site.site === 'http://h20:80') s.addWork('http://h10:80', 1);
    }
    assert.deepEqual(order, [...sites, 'http://h10:80']);
  });

  it('keeps the queued total that a walk over every site would sum, through every way a site changes', () => {
    const s = new SiteScheduler(policy());
    const walk = () => [...s.all()].reduce((n, x) => n + x.queued + x.buffer.length, 0);
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 20_000; i++) {
      const site = s.get(`http://h${rand(50)}:80`);
      switch (rand(7)) {
        case 0: s.addWork(site.site, 1 + rand(3)); break;
        case 1: { // a lease, as the crawler takes one
          const leased = Array.from({ length: Math.min(site.queued, rand(4)) }, (_, k) => k);
          site.queued = Math.max(0, site.queued - leased.length);
          site.hold(leased);
          break;
        }
        case 2: site.next(); break;
        case 3: site.putBack(-1); break;
        case 4: if (rand(10) === 0) site.drain(); break;
        case 5: site.queued++; break; // a retry
        default: if (rand(20) === 0) site.queued = 0; // the store had nothing left
      }
      if (i % 500 === 0) assert.equal(s.queuedTotal(), walk(), `after ${i} operations`);
    }
    assert.equal(s.queuedTotal(), walk());
    assert.ok(walk() > 0);
  });

  it('is idle when no site has work and nothing is in flight', () => {
    const s = new SiteScheduler(policy());
    const a = s.addWork('http://a:80', 1);
    assert.equal(s.idle(), false);
    a.queued = 0;
    assert.equal(s.idle(), true);
    // peek() reads without creating: a site known only from stored statistics gets no state.
    assert.equal(s.peek('http://a:80'), a);
    assert.equal(s.peek('http://b:80'), undefined);
    assert.deepEqual([...s.all()].map((x) => x.site), ['http://a:80']);
  });

  it('is idle only when the active set and the waiting line hold nothing to do', () => {
    const s = new SiteScheduler(policy({ maxSites: 2 }));
    const done = Array.from({ length: 1000 }, (_, i) => s.addWork(`http://d${i}:80`, 1));
    for (const d of done) d.queued = 0; // drained while they waited: fill() skips them
    const late = s.addWork('http://late:80', 1);
    assert.equal(s.idle(), false, 'a site with work at the back of the waiting line');
    const [first] = s.ready(0).sites;
    assert.equal(first, late);
    s.started(late, 0);
    late.queued = 0;
    assert.equal(s.idle(), false, 'a request of an active site is in flight');
    s.finished(late, true);
    late.busy = true;
    assert.equal(s.idle(), false, 'an active site is preparing a lease');
    late.busy = false;
    assert.equal(s.idle(), true);
    // Work that arrives for a drained site brings it back into the line.
    s.ready(0);
    s.addWork('http://d500:80', 2);
    assert.equal(s.idle(), false);
    done[500]!.closed = true;
    assert.equal(s.idle(), true, 'a closed site has no work');
  });
});
