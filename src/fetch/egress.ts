/**
 * Egress safety: which addresses the crawler may connect to, and DNS that
 * is resolved once per site and pinned.
 *
 *   host ──► SiteResolver.resolve ──► cache (pinned for dns_ttl) ──► checkAddress(policy)
 *                                                                     │
 *   undici connect ──► lookup(host) ─── the same pinned, checked address ◄┘
 *
 * Because the HTTP client's own DNS lookup is answered from the pin, a DNS
 * answer that changes between the check and the connection (DNS
 * rebinding) cannot redirect the crawler. Redirect targets go through the
 * same check as any other URL.
 */

import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export interface EgressPolicy {
  readonly allowLoopback: boolean;
  readonly allowPrivateNetworks: boolean;
  readonly allowLinkLocal: boolean;
  /** CIDR blocks or addresses allowed even when a class above is refused. */
  readonly allowIps: readonly string[];
  /** CIDR blocks or addresses always refused. */
  readonly denyIps: readonly string[];
}

export type AddressClass = 'loopback' | 'private' | 'link-local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved' | 'public';

function blocks(list: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']>): BlockList {
  const b = new BlockList();
  for (const [net, bits, family] of list) b.addSubnet(net, bits, family);
  return b;
}

// Cloud metadata endpoints (AWS/GCP/Azure/OpenStack, Alibaba, AWS IPv6).
const METADATA = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254']);
const CLASSES: Array<[AddressClass, BlockList]> = [
  ['unspecified', blocks([['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']])],
  ['loopback', blocks([['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']])],
  ['link-local', blocks([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']])],
  ['private', blocks([['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['100.64.0.0', 10, 'ipv4'], ['fc00::', 7, 'ipv6']])],
  ['multicast', blocks([['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']])],
  ['reserved', blocks([['240.0.0.0', 4, 'ipv4'], ['192.0.0.0', 24, 'ipv4'], ['198.18.0.0', 15, 'ipv4'], ['100::', 64, 'ipv6']])],
];

/** The 16 bytes of an IPv6 address (`isIP(ip) === 6` already checked), zone dropped. */
function ipv6Bytes(ipIn: string): Uint8Array {
  let ip = ipIn.toLowerCase();
  const zone = ip.indexOf('%');
  if (zone >= 0) ip = ip.slice(0, zone);
  const words: number[] = [];
  const parse = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const w of part.split(':')) {
      if (w.includes('.')) {
        const [a, b, c, d] = w.split('.').map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(parseInt(w, 16));
    }
    return out;
  };
  const dbl = ip.indexOf('::');
  if (dbl >= 0) {
    const head = parse(ip.slice(0, dbl));
    const tail = parse(ip.slice(dbl + 2));
    words.push(...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail);
  } else words.push(...parse(ip));
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}

const v4 = (b: ArrayLike<number>, at: number, xor = 0): string =>
  [0, 1, 2, 3].map((k) => (b[at + k]! ^ xor) & 0xff).join('.');

/**
 * The IPv4 addresses an IPv6 address carries, by the forms that deliver
 * packets to (or are treated as) that IPv4 host, so that a private, loopback,
 * link-local or metadata address cannot be reached by writing it as IPv6:
 *
 *   ::ffff:a.b.c.d     IPv4-mapped (RFC 4291 2.5.5.2)
 *   ::a.b.c.d          IPv4-compatible, deprecated (RFC 4291 2.5.5.1); :: and ::1 are not
 *   64:ff9b::/96       NAT64 well-known prefix (RFC 6052): the last 32 bits
 *   64:ff9b:1::/48     NAT64 local-use prefix (RFC 8215): the IPv4 address may sit
 *                      where RFC 6052 puts it for a /48 (bits 48-63 and 72-87) or a
 *                      /96 (the last 32 bits); both are returned
 *   2002::/16          6to4 (RFC 3056): bits 16-47
 *   2001:0::/32        Teredo (RFC 4380): the client is the last 32 bits, inverted
 *
 * `teredo` is true for the Teredo prefix, which is not globally reachable
 * itself (IANA special-purpose registry).
 */
export function embeddedIpv4(ip: string): { v4: string[]; teredo: boolean } {
  if (isIP(ip) !== 6) return { v4: [], teredo: false };
  const b = ipv6Bytes(ip);
  const zeros = (from: number, to: number): boolean => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return { v4: [v4(b, 12)], teredo: false };
  if (zeros(0, 12) && !zeros(12, 15)) return { v4: [v4(b, 12)], teredo: false };
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    if (zeros(4, 12)) return { v4: [v4(b, 12)], teredo: false };
    if (b[4] === 0x00 && b[5] === 0x01) {
      const at48 = v4([b[6]!, b[7]!, b[9]!, b[10]!], 0);
      return { v4: at48 === '0.0.0.0' ? [v4(b, 12)] : [at48, v4(b, 12)], teredo: false };
    }
  }
  if (b[0] === 0x20 && b[1] === 0x02) return { v4: [v4(b, 2)], teredo: false };
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return { v4: [v4(b, 12, 0xff)], teredo: true };
  return { v4: [], teredo: false };
}

/** IPv4-mapped IPv6 (::ffff:10.0.0.1, ::ffff:a00:1) as the IPv4 address it is, for the allow and deny lists; any other address unchanged. */
function unmap(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const b = ipv6Bytes(ip);
  return b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff ? v4(b, 12) : ip;
}

function classifyPlain(ip: string): AddressClass {
  if (METADATA.has(ip.toLowerCase())) return 'metadata';
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  for (const [cls, list] of CLASSES) if (list.check(ip, family)) return cls;
  return 'public';
}

/**
 * The class of an address. An IPv6 address that carries an IPv4 address
 * (embeddedIpv4) is judged by it: the first non-public class among the IPv4
 * addresses it carries; a Teredo address whose client is public is
 * `reserved` (the prefix is not global).
 */
export function classifyAddress(ip: string): AddressClass {
  const inner = embeddedIpv4(ip);
  for (const a of inner.v4) {
    const cls = classifyPlain(a);
    if (cls !== 'public') return cls;
  }
  if (inner.teredo) return 'reserved';
  return classifyPlain(ip);
}

function cidrList(list: readonly string[]): BlockList {
  const b = new BlockList();
  for (const entry of list) {
    const [addr, bits] = entry.split('/');
    const family = isIP(addr!) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) b.addAddress(addr!, family);
    else b.addSubnet(addr!, Number(bits), family);
  }
  return b;
}

export interface EgressDecision {
  readonly allowed: boolean;
  readonly addressClass: AddressClass;
  /** Why it was refused, naming the setting that would allow it. */
  readonly reason: string | undefined;
}

export class EgressChecker {
  private readonly allow: BlockList;
  private readonly deny: BlockList;
  readonly policy: EgressPolicy;
  constructor(policy: EgressPolicy) {
    this.policy = policy;
    this.allow = cidrList(policy.allowIps);
    this.deny = cidrList(policy.denyIps);
  }

  check(ipIn: string): EgressDecision {
    const ip = unmap(ipIn);
    const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    const cls = classifyAddress(ip);
    if (this.deny.check(ip, family)) return { allowed: false, addressClass: cls, reason: `${ip} is in trawl_egress.deny_ips` };
    if (this.allow.check(ip, family)) return { allowed: true, addressClass: cls, reason: undefined };
    const refuse = (setting: string): EgressDecision => ({
      allowed: false, addressClass: cls, reason: `${ip} is a ${cls} address; refused unless ${setting}`,
    });
    switch (cls) {
      case 'public':
        return { allowed: true, addressClass: cls, reason: undefined };
      case 'loopback':
        return this.policy.allowLoopback ? { allowed: true, addressClass: cls, reason: undefined } : refuse('trawl_egress.allow_loopback is yes (or --allow-loopback)');
      case 'private':
        return this.policy.allowPrivateNetworks ? { allowed: true, addressClass: cls, reason: undefined } : refuse('trawl_egress.allow_private_networks is yes (or --allow-private-networks)');
      case 'link-local':
        return this.policy.allowLinkLocal ? { allowed: true, addressClass: cls, reason: undefined } : refuse('trawl_egress.allow_link_local is yes');
      case 'metadata':
        return refuse('it is listed in trawl_egress.allow_ips (cloud metadata endpoints are never allowed by a class switch)');
      default:
        return refuse('it is listed in trawl_egress.allow_ips');
    }
  }
}

export interface Resolved {
  readonly address: string;
  readonly family: 4 | 6;
}

export type ResolveResult = ({ readonly ok: true } & Resolved) | { readonly ok: false; readonly reason: string; readonly dnsError: boolean };

export type LookupFn = (host: string) => Promise<Resolved[]>;

const defaultLookup: LookupFn = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));

/** How often, at most, expired answers are dropped (and never more often than the TTL). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Resolves each host once and pins the answer for `ttlMs`; every later use
 * within the TTL (including the HTTP client's connect) gets the same address.
 *
 * Expired answers are dropped, so that a broad crawl does not keep one for
 * every host it ever met (`npm run bench:sites` measures their bytes;
 * bench/README.md, *Memory per site*). The map is kept in order of expiry
 * (an answer is deleted and set again when it is renewed, and the TTL is
 * the same for all), so a sweep stops at the first answer still valid. A
 * connection the HTTP client opens after its host's answer was dropped
 * resolves it again, checked like any other answer.
 */
export class SiteResolver {
  private readonly cache = new Map<string, { result: ResolveResult; expiresMs: number }>();
  private nextSweepMs = 0;
  private readonly inflight = new Map<string, Promise<ResolveResult>>();
  /** DNS lookups made (MS-FSCADM global DNS statistics). */
  lookups = 0;
  lookupFailures = 0;
  /** Told of every DNS lookup made (for the global DNS statistics). */
  onLookup: ((ok: boolean, code: string | undefined) => void) | undefined;

  private readonly checker: EgressChecker;
  private readonly ttlMs: number;
  private readonly lookup: LookupFn;
  private readonly now: () => number;

  constructor(checker: EgressChecker, ttlMs: number, lookup: LookupFn = defaultLookup, now: () => number = Date.now) {
    this.checker = checker;
    this.ttlMs = ttlMs;
    this.lookup = lookup;
    this.now = now;
  }

  /** The pinned address of a host; resolves and checks it when not pinned. */
  async resolve(hostIn: string): Promise<ResolveResult> {
    const hit = this.current(hostIn);
    if (hit !== undefined) return hit;
    const host = hostIn.startsWith('[') ? hostIn.slice(1, -1) : hostIn;
    const pending = this.inflight.get(host);
    if (pending) return pending;
    const p = this.doResolve(host).finally(() => this.inflight.delete(host));
    this.inflight.set(host, p);
    return p;
  }

  /** What `resolve` answers at once: the pinned answer while it is valid; undefined when the host must be resolved. */
  current(hostIn: string): ResolveResult | undefined {
    const host = hostIn.startsWith('[') ? hostIn.slice(1, -1) : hostIn;
    const hit = this.cache.get(host);
    return hit !== undefined && hit.expiresMs > this.now() ? hit.result : undefined;
  }

  /** The pinned address without a new lookup, even past its TTL (what the HTTP client connects to). */
  pinned(hostIn: string): ResolveResult | undefined {
    const host = hostIn.startsWith('[') ? hostIn.slice(1, -1) : hostIn;
    return this.cache.get(host)?.result;
  }

  private async doResolve(host: string): Promise<ResolveResult> {
    let result: ResolveResult;
    if (isIP(host)) {
      const d = this.checker.check(host);
      result = d.allowed ? { ok: true, address: host, family: isIP(host) as 4 | 6 } : { ok: false, reason: d.reason!, dnsError: false };
    } else {
      this.lookups++;
      try {
        const answers = await this.lookup(host);
        // Every answer must be allowed: a name that also points inside is refused.
        const refused = answers.map((a) => this.checker.check(a.address)).find((d) => !d.allowed);
        if (answers.length === 0) result = { ok: false, reason: `DNS: no address for ${host}`, dnsError: true };
        else if (refused) result = { ok: false, reason: `${host} resolves to ${refused.reason}`, dnsError: false };
        else result = { ok: true, ...answers[0]! };
        this.onLookup?.(true, undefined);
      } catch (err) {
        this.lookupFailures++;
        this.onLookup?.(false, (err as NodeJS.ErrnoException).code);
        result = { ok: false, reason: `DNS: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} for ${host}`, dnsError: true };
      }
    }
    const now = this.now();
    this.cache.delete(host);
    this.cache.set(host, { result, expiresMs: now + this.ttlMs });
    if (now >= this.nextSweepMs) this.sweep(now);
    return result;
  }

  /** Drops the answers expired by `now`: the oldest first, up to the first one still valid. */
  private sweep(now: number): void {
    this.nextSweepMs = now + Math.max(this.ttlMs, SWEEP_EVERY_MS);
    for (const [host, e] of this.cache) {
      if (e.expiresMs > now) break;
      this.cache.delete(host);
    }
  }

  /** Hosts with an answer held (diagnostics and tests). */
  get size(): number {
    return this.cache.size;
  }
}
