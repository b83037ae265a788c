/**
 * Parsers for the structured string values of MS-FSCCFG.
 *
 * Each parser takes the trimmed text of one value (or member) and returns
 * either the parsed value or a `{ expected }` saying what the value should
 * look like. The registry uses them to validate; the engine uses them to get
 * typed values. None of them throws.
 */

import { isIP } from 'node:net';

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly expected: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = (expected: string): Parsed<never> => ({ ok: false, expected });

// ---------------------------------------------------------------- crawlmode

export type CrawlMode = { readonly kind: 'full' } | { readonly kind: 'depth'; readonly depth: number };

/** MS-FSCCFG 2.2.4.28: "FULL" or "DEPTH:#". */
export function parseCrawlMode(text: string): Parsed<CrawlMode> {
  if (text === 'FULL') return ok({ kind: 'full' });
  const m = /^DEPTH:(\d{1,9})$/.exec(text);
  if (m) return ok({ kind: 'depth', depth: Number(m[1]) });
  return fail('FULL or DEPTH:n with n a whole number of page hops, e.g. DEPTH:3');
}

// -------------------------------------------------------------- http_errors

export interface ErrorPolicy {
  /** KEEP leaves the stored document as it is; DELETE removes it. */
  readonly action: 'keep' | 'delete';
  /**
   * For DELETE: the number of consecutive failures before the document is
   * deleted (0 = at once, the value when `:X` is absent). For KEEP the
   * count is accepted, as in the defaults (`KEEP:0`), and has no effect.
   */
  readonly afterFailures: number;
  /** RETRY[:X]: re-download at most this many times within a cycle (0 = no retry). */
  readonly retries: number;
}

/**
 * MS-FSCCFG 2.2.4.11: `KEEP` | `DELETE[:X]`, optionally followed by
 * `, RETRY[:X]`. The defaults of 2.2.4.12 write `KEEP:0`, so KEEP takes an
 * optional count too. `RETRY` without a count means one retry.
 */
export function parseErrorPolicy(text: string): Parsed<ErrorPolicy> {
  const m = /^(KEEP|DELETE)(?::(\d{1,9}))?(?:\s*,\s*RETRY(?::(\d{1,9}))?)?$/i.exec(text);
  if (!m) return fail('KEEP or DELETE[:X], optionally followed by ", RETRY[:X]" (e.g. "DELETE:3, RETRY:1")');
  return ok({
    action: m[1]!.toUpperCase() === 'KEEP' ? 'keep' : 'delete',
    afterFailures: m[2] === undefined ? 0 : Number(m[2]),
    retries: m[3] === undefined ? (/RETRY/i.test(text) ? 1 : 0) : Number(m[3]),
  });
}

/**
 * The name of an http_errors / ftp_errors entry: a three-digit status code
 * where X stands for any digit (`404`, `4xx`, `40X`), or `net`, `int`, `ttl`.
 */
export function checkErrorKey(name: string): string | undefined {
  if (name === 'net' || name === 'int' || name === 'ttl') return undefined;
  if (/^[1-9][0-9xX]{2}$/.test(name)) return undefined;
  return 'a status code with X as a wildcard digit (404, 4xx, 50X), or net, int or ttl';
}

// ----------------------------------------------------------- variable_delay

export interface WeekTime {
  /** 0 = Monday … 6 = Sunday. */
  readonly day: number;
  readonly minuteOfDay: number;
}

export interface TimeSlot {
  readonly from: WeekTime;
  readonly to: WeekTime;
}

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

function parseWeekTime(text: string): WeekTime | undefined {
  const m = /^([A-Za-z]{3}):(\d{1,2})(?:\.(\d{2}))?$/.exec(text);
  if (!m) return undefined;
  const day = DAYS.indexOf(m[1]!.toLowerCase());
  const hour = Number(m[2]);
  const minute = m[3] === undefined ? 0 : Number(m[3]);
  if (day < 0 || hour > 24 || minute > 59 || (hour === 24 && minute !== 0)) return undefined;
  return { day, minuteOfDay: hour * 60 + minute };
}

/**
 * MS-FSCCFG 2.2.4.23: `DDD:HH.MM-DDD:HH.MM`, e.g. `Mon:21.00-Mon:22.30`.
 * The example in §3.7 writes the short form `Wed:09-Wed:19` (whole hours),
 * which trawl accepts too. A slot may wrap around the end of the week.
 */
export function parseTimeSlot(text: string): Parsed<TimeSlot> {
  const parts = text.split('-');
  const from = parts.length === 2 ? parseWeekTime(parts[0]!.trim()) : undefined;
  const to = parts.length === 2 ? parseWeekTime(parts[1]!.trim()) : undefined;
  if (!from || !to) return fail('a time slot DDD:HH.MM-DDD:HH.MM (or DDD:HH-DDD:HH), e.g. Mon:21.00-Mon:22.30');
  return ok({ from, to });
}

export type SlotDelay = { readonly kind: 'suspend' } | { readonly kind: 'delay'; readonly delayS: number };

export function parseSlotDelay(text: string): Parsed<SlotDelay> {
  if (text.toLowerCase() === 'suspend') return ok({ kind: 'suspend' });
  const n = parseReal(text);
  if (n !== undefined && n >= 0) return ok({ kind: 'delay', delayS: n });
  return fail('a delay in seconds (e.g. 20 or 2.5) or "suspend"');
}

/** True when `at` falls inside the slot (start inclusive, end exclusive). */
export function slotContains(slot: TimeSlot, at: WeekTime): boolean {
  const minutes = (t: WeekTime): number => t.day * 1440 + t.minuteOfDay;
  const a = minutes(slot.from);
  const b = minutes(slot.to);
  const x = minutes(at);
  return a <= b ? x >= a && x < b : x >= a || x < b;
}

// ------------------------------------------------------------------ passwd

export type AuthScheme = 'basic' | 'digest' | 'ntlmv1' | 'ntlmv2' | 'auto';
export const AUTH_SCHEMES: readonly AuthScheme[] = ['basic', 'digest', 'ntlmv1', 'ntlmv2', 'auto'];

export interface Credentials {
  readonly username: string;
  /** Plain text, or `!ENC!…` until it is decrypted at the moment of use. */
  readonly password: string;
  readonly realm: string | undefined;
  readonly scheme: AuthScheme;
}

/**
 * MS-FSCCFG 2.2.4.20: `username:password` (basic) or
 * `username:password:realm:scheme`. A plain password cannot hold a colon;
 * use the `!ENC!` form for such passwords.
 */
export function parseCredentials(text: string): Parsed<Credentials> {
  const parts = text.split(':');
  const expected = 'user:password or user:password:realm:scheme (scheme one of basic, digest, ntlmv1, ntlmv2, auto)';
  if (parts.length === 2 && parts[0] !== '') {
    return ok({ username: parts[0]!, password: parts[1]!, realm: undefined, scheme: 'basic' });
  }
  if (parts.length === 4 && parts[0] !== '') {
    const scheme = parts[3]!.toLowerCase() as AuthScheme;
    if (!AUTH_SCHEMES.includes(scheme)) return fail(expected);
    return ok({ username: parts[0]!, password: parts[1]!, realm: parts[2] || undefined, scheme });
  }
  return fail(expected);
}

/** MS-FSCCFG 2.2.4.21: `username:password`. */
export function parseFtpAccount(text: string): Parsed<{ username: string; password: string }> {
  const i = text.indexOf(':');
  if (i <= 0) return fail('username:password');
  return ok({ username: text.slice(0, i), password: text.slice(i + 1) });
}

// ------------------------------------------------------------------- proxy

export interface ProxySpec {
  readonly scheme: 'http';
  readonly host: string;
  readonly port: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
}

/** MS-FSCCFG 2.2.3 proxy: `(http://)(username:password@)hostname(:port)`. */
export function parseProxy(text: string): Parsed<ProxySpec> {
  const m = /^(?:http:\/\/)?(?:([^:@/\s]+):([^@\s]*)@)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?\/?$/.exec(text);
  const port = m?.[4] === undefined ? 80 : Number(m[4]);
  if (!m || port < 1 || port > 65535) return fail('(http://)(user:password@)hostname(:port), e.g. http://proxy.example.com:3128');
  return ok({ scheme: 'http', host: m[3]!, port, username: m[1], password: m[2] });
}

// ----------------------------------------------------------------- ipmask

export interface Ipv4Mask {
  readonly family: 4;
  /** Inclusive ranges per octet, from most to least significant. */
  readonly ranges?: ReadonlyArray<readonly [number, number]>;
  readonly address?: number;
  readonly mask?: number;
}

function parseOctetRange(text: string): [number, number] | undefined {
  const m = /^(\d{1,3})(?:-(\d{1,3}))?$/.exec(text);
  if (!m) return undefined;
  const lo = Number(m[1]);
  const hi = m[2] === undefined ? lo : Number(m[2]);
  return lo <= hi && hi <= 255 ? [lo, hi] : undefined;
}

function ipv4ToInt(text: string): number | undefined {
  if (isIP(text) !== 4) return undefined;
  return text.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

/**
 * MS-FSCCFG 2.2.4.1 ipmask, three forms:
 *   207.46.197.0-100 or 207.46.190-197.100   (ranges per octet)
 *   207.46.197.0/24 (the spec's example writes "207.46.197.0 /24")
 *   207.46.197.0:255.255.255.0 or 207.46.197.0:0xffffff00
 */
export function parseIpv4Mask(text: string): Parsed<Ipv4Mask> {
  const expected = 'an IPv4 range (207.46.197.0-100), prefix (207.46.197.0/24) or address:mask (207.46.197.0:255.255.255.0 or :0xffffff00)';
  const slash = /^([\d.]+)\s*\/\s*(\d{1,2})$/.exec(text);
  if (slash) {
    const address = ipv4ToInt(slash[1]!);
    const bits = Number(slash[2]);
    if (address === undefined || bits > 32) return fail(expected);
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    return ok({ family: 4, address, mask });
  }
  // Spec decision: 2.2.4.1's own example writes the mask 0xffffffff00, which
  // has 40 bits; trawl keeps its low 32 bits (0xffffff00 = 255.255.255.0),
  // which is what the example means.
  const colon = /^([\d.]+):(0[xX][0-9a-fA-F]{1,10}|[\d.]+)$/.exec(text);
  if (colon) {
    const address = ipv4ToInt(colon[1]!);
    const maskText = colon[2]!;
    const mask = /^0x/i.test(maskText) ? Number(BigInt(maskText) & 0xffffffffn) : ipv4ToInt(maskText);
    if (address === undefined || mask === undefined) return fail(expected);
    return ok({ family: 4, address, mask: mask >>> 0 });
  }
  const octets = text.split('.');
  if (octets.length === 4) {
    const ranges = octets.map(parseOctetRange);
    if (ranges.every((r) => r !== undefined)) return ok({ family: 4, ranges: ranges as [number, number][] });
  }
  return fail(expected);
}

export function ipv4MaskMatches(mask: Ipv4Mask, ip: string): boolean {
  const n = ipv4ToInt(ip);
  if (n === undefined) return false;
  if (mask.ranges) {
    return mask.ranges.every(([lo, hi], i) => {
      const octet = (n >>> (8 * (3 - i))) & 0xff;
      return octet >= lo && octet <= hi;
    });
  }
  return ((n & mask.mask!) >>> 0) === ((mask.address! & mask.mask!) >>> 0);
}

export interface Ipv6Mask {
  readonly family: 6;
  /** Inclusive ranges per 16-bit group, most significant first. */
  readonly ranges?: ReadonlyArray<readonly [number, number]>;
  readonly address?: bigint;
  readonly bits?: number;
}

/** Expands an IPv6 address (with `::` and an optional dotted IPv4 tail) to 8 groups of text. */
function ipv6Groups(text: string): string[] | undefined {
  let t = text;
  const v4 = /(\d+\.\d+\.[\d-]+\.[\d-]+)$/.exec(t);
  let tail: string[] = [];
  if (v4) {
    const o = v4[1]!.split('.');
    // Each pair of octets becomes one group; ranges in the last octet are kept as ranges.
    const pair = (a: string, b: string): string | undefined => {
      const ra = parseOctetRange(a);
      const rb = parseOctetRange(b);
      if (!ra || !rb) return undefined;
      const lo = (ra[0] << 8) | rb[0];
      const hi = (ra[1] << 8) | rb[1];
      return lo === hi ? lo.toString(16) : `${lo.toString(16)}-${hi.toString(16)}`;
    };
    const g1 = pair(o[0]!, o[1]!);
    const g2 = pair(o[2]!, o[3]!);
    if (!g1 || !g2) return undefined;
    tail = [g1, g2];
    t = t.slice(0, -v4[1]!.length);
    if (t.endsWith(':') && !t.endsWith('::')) t = t.slice(0, -1);
  }
  const halves = t.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const known = head.length + rest.length + tail.length;
  if (halves.length === 2) {
    if (known > 7) return undefined;
    return [...head, ...Array<string>(8 - known).fill('0'), ...rest, ...tail];
  }
  // Spec decision: both ip6mask examples of 2.2.4.1 (2002:CF2E:C500-C564:0:0:0:0
  // and 2002:CF2E:C500:0:0:0:0/60) have seven groups; trawl reads a missing
  // eighth group as 0, as if the address ended in "::".
  if (known === 7 && tail.length === 0) return [...head, '0'];
  return known === 8 ? [...head, ...tail] : undefined;
}

/**
 * MS-FSCCFG 2.2.4.1 ip6mask, two forms:
 *   2002:CF2E:C500-C564:0:0:0:0 or ::ffff:207.46.197.0-100   (ranges per group)
 *   2002:CF2E:C500:0:0:0:0/60                               (prefix)
 */
export function parseIpv6Mask(text: string): Parsed<Ipv6Mask> {
  const expected = 'an IPv6 range (2002:CF2E:C500-C564:0:0:0:0, ::ffff:207.46.197.0-100) or prefix (2002:CF2E:C500::/60)';
  const slash = /^([0-9A-Fa-f:.]+)\s*\/\s*(\d{1,3})$/.exec(text);
  if (slash) {
    const groups = ipv6Groups(slash[1]!);
    const bits = Number(slash[2]);
    if (!groups || bits > 128 || groups.some((g) => !/^[0-9A-Fa-f]{1,4}$/.test(g))) return fail(expected);
    return ok({ family: 6, address: groups.reduce((acc, g) => (acc << 16n) | BigInt(`0x${g}`), 0n), bits });
  }
  const groups = ipv6Groups(text);
  if (!groups) return fail(expected);
  const ranges: [number, number][] = [];
  for (const g of groups) {
    const m = /^([0-9A-Fa-f]{1,4})(?:-([0-9A-Fa-f]{1,4}))?$/.exec(g);
    if (!m) return fail(expected);
    const lo = Number.parseInt(m[1]!, 16);
    const hi = m[2] === undefined ? lo : Number.parseInt(m[2], 16);
    if (lo > hi) return fail(expected);
    ranges.push([lo, hi]);
  }
  return ok({ family: 6, ranges });
}

export function ipv6MaskMatches(mask: Ipv6Mask, ip: string): boolean {
  if (isIP(ip) !== 6) return false;
  const groups = ipv6Groups(ip);
  if (!groups) return false;
  const values = groups.map((g) => Number.parseInt(g, 16));
  if (mask.ranges) return mask.ranges.every(([lo, hi], i) => values[i]! >= lo && values[i]! <= hi);
  const n = values.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
  const shift = BigInt(128 - mask.bits!);
  return n >> shift === mask.address! >> shift;
}

// ---------------------------------------------------------- rewrite_rules

export interface RewriteRule {
  readonly match: string;
  readonly replacement: string;
}

/**
 * MS-FSCCFG 2.2.3 rewrite_rules: "*match_pattern*replacement_string*",
 * where * is any character that is not white space. The first character is
 * the delimiter; it must appear exactly three times.
 */
export function parseRewriteRule(text: string): Parsed<RewriteRule> {
  const expected = 'DmatchDreplacementD with D one non-space delimiter, e.g. "#/old/(.*)#/new/$1#"';
  const d = text[0];
  if (d === undefined || /\s/.test(d) || text.length < 3 || !text.endsWith(d)) return fail(expected);
  const inner = text.slice(1, -1).split(d);
  if (inner.length !== 2 || inner[0] === '') return fail(expected);
  return ok({ match: inner[0]!, replacement: inner[1]! });
}

// -------------------------------------------------------------- primitives

/** INT32 (MS-DTYP): the integer type of MS-FSCCFG. */
export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;

export function parseInteger(text: string): number | undefined {
  if (!/^[+-]?\d{1,10}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= INT32_MIN && n <= INT32_MAX ? n : undefined;
}

export function parseReal(text: string): number | undefined {
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

export function parseBoolean(text: string): boolean | undefined {
  const t = text.toLowerCase();
  if (t === 'yes') return true;
  if (t === 'no') return false;
  return undefined;
}

/** A character encoding the WHATWG Encoding Standard names (utf-8, iso-8859-1, windows-1252, shift_jis, …). */
export function checkCharset(text: string): string | undefined {
  try {
    new TextDecoder(text);
    return undefined;
  } catch {
    return 'a character encoding such as utf-8, iso-8859-1 or windows-1252';
  }
}

/** A MIME type pattern: `type/subtype`, where either field may be `*` as a whole. */
export function checkMimePattern(text: string): string | undefined {
  return /^(?:\*|[A-Za-z0-9][\w.+-]*)\/(?:\*|[A-Za-z0-9][\w.+-]*)$/.test(text)
    ? undefined
    : 'a MIME type such as text/html, with * only as a whole field (text/*, */*)';
}

/** An HTTP header line `Name: value`. */
/**
 * Header names a `headers` line may not set: the message framing and the
 * connection are the HTTP client's (a wrong Content-Length or a
 * Transfer-Encoding would break every request), and proxy credentials go
 * in `proxy`, where only the proxy sees them.
 */
const RESERVED_HEADERS = new Set(['content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer', 'proxy-authorization', 'proxy-connection']);

export function checkHeaderLine(text: string): string | undefined {
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*\S/.exec(text);
  if (!m) return 'an HTTP header line "Name: value"';
  if (RESERVED_HEADERS.has(m[1]!.toLowerCase())) return `an HTTP header line "Name: value" other than ${m[1]} (trawl's HTTP client sets the framing and connection headers itself, and proxy credentials go in proxy)`;
  return undefined;
}

/** A robots.txt product token (RFC 9309 2.2.1; digits kept, as robots.ts keeps them in User-agent lines). */
export function checkProductToken(text: string): string | undefined {
  return /^[A-Za-z0-9_-]+$/.test(text) ? undefined : 'a product token: letters, digits, "_" and "-" (CiteSeerBot, not CiteSeerBot/1.12)';
}

export function checkAbsoluteHttpUri(text: string): string | undefined {
  try {
    const u = new URL(text);
    if (u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'ftp:') return undefined;
  } catch {
    // fall through
  }
  return 'an absolute http, https or ftp URI';
}

/** A host name (letters, digits, dots, hyphens, underscores), optionally with :port. */
export function checkHostName(text: string): string | undefined {
  return /^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?(?::\d{1,5})?$/.test(text) ? undefined : 'a host name such as www.example.com';
}
