/**
 * NTLMv2 on the client side (MS-NLMP): the NEGOTIATE message, the reading
 * of the server's CHALLENGE, and the AUTHENTICATE message with the NTLMv2
 * response (3.3.2). No signing or sealing: HTTP authentication needs only
 * the handshake. NTLMv1 is not spoken (it is broken; MS-NLMP's own advice).
 *
 * Why written here: the npm NTLM clients (httpntlm, node-http-ntlm, …) send
 * the requests themselves over node:http; what the interceptor needs is
 * the three messages. MD4 is written here too, because Node 24's OpenSSL 3
 * has moved it to the legacy provider (`createHash('md4')` throws). Checked
 * against MS-NLMP 4.2.4's test vectors (test/fetch/ntlm.test.ts) and a
 * server built on python3-ntlm-auth (test/cli/http-auth.test.ts).
 */

import { createHmac, randomBytes } from 'node:crypto';

// ------------------------------------------------------------------ MD4 (RFC 1320)

export function md4(data: Uint8Array): Buffer {
  const len = data.length;
  const words = ((len + 8) >>> 6) + 1;
  const x = new Uint32Array(words * 16);
  for (let i = 0; i < len; i++) x[i >> 2]! |= data[i]! << ((i % 4) * 8);
  x[len >> 2]! |= 0x80 << ((len % 4) * 8);
  x[words * 16 - 2] = (len * 8) >>> 0;
  x[words * 16 - 1] = Math.floor((len * 8) / 0x100000000);
  let a = 0x67452301;
  let b = 0xefcdab89;
  let c = 0x98badcfe;
  let d = 0x10325476;
  const rotl = (v: number, s: number): number => (v << s) | (v >>> (32 - s));
  for (let blk = 0; blk < x.length; blk += 16) {
    const [aa, bb, cc, dd] = [a, b, c, d];
    const f = (p: number, q: number, r: number, s: number, k: number, sh: number): number => rotl((p + ((q & r) | (~q & s)) + x[blk + k]!) | 0, sh);
    const g = (p: number, q: number, r: number, s: number, k: number, sh: number): number => rotl((p + ((q & r) | (q & s) | (r & s)) + x[blk + k]! + 0x5a827999) | 0, sh);
    const h = (p: number, q: number, r: number, s: number, k: number, sh: number): number => rotl((p + (q ^ r ^ s) + x[blk + k]! + 0x6ed9eba1) | 0, sh);
    for (const k of [0, 4, 8, 12]) {
      a = f(a, b, c, d, k, 3);
      d = f(d, a, b, c, k + 1, 7);
      c = f(c, d, a, b, k + 2, 11);
      b = f(b, c, d, a, k + 3, 19);
    }
    for (const k of [0, 1, 2, 3]) {
      a = g(a, b, c, d, k, 3);
      d = g(d, a, b, c, k + 4, 5);
      c = g(c, d, a, b, k + 8, 9);
      b = g(b, c, d, a, k + 12, 13);
    }
    for (const k of [0, 2, 1, 3]) {
      a = h(a, b, c, d, k, 3);
      d = h(d, a, b, c, k + 8, 9);
      c = h(c, d, a, b, k + 4, 11);
      b = h(b, c, d, a, k + 12, 15);
    }
    a = (a + aa) | 0;
    b = (b + bb) | 0;
    c = (c + cc) | 0;
    d = (d + dd) | 0;
  }
  const out = Buffer.alloc(16);
  out.writeInt32LE(a, 0);
  out.writeInt32LE(b, 4);
  out.writeInt32LE(c, 8);
  out.writeInt32LE(d, 12);
  return out;
}

// ------------------------------------------------------------------ messages

const SIGNATURE = Buffer.from('NTLMSSP\0', 'latin1');
const NEGOTIATE_UNICODE = 0x00000001;
const NEGOTIATE_OEM = 0x00000002;
const REQUEST_TARGET = 0x00000004;
const NEGOTIATE_NTLM = 0x00000200;
const NEGOTIATE_ALWAYS_SIGN = 0x00008000;
const NEGOTIATE_EXTENDED_SESSIONSECURITY = 0x00080000;
const NEGOTIATE_TARGET_INFO = 0x00800000;
const NEGOTIATE_128 = 0x20000000;
const NEGOTIATE_56 = 0x80000000;
const CLIENT_FLAGS = (NEGOTIATE_UNICODE | NEGOTIATE_OEM | REQUEST_TARGET | NEGOTIATE_NTLM | NEGOTIATE_ALWAYS_SIGN | NEGOTIATE_EXTENDED_SESSIONSECURITY | NEGOTIATE_128 | NEGOTIATE_56) >>> 0;
/** MsvAvTimestamp in the target information (2.2.2.1). */
const AV_TIMESTAMP = 7;

/** The NEGOTIATE_MESSAGE (2.2.1.1), base64, as `Authorization: NTLM …` carries it. */
export function negotiateMessage(): string {
  const m = Buffer.alloc(32);
  SIGNATURE.copy(m, 0);
  m.writeUInt32LE(1, 8);
  m.writeUInt32LE(CLIENT_FLAGS, 12);
  // DomainNameFields and WorkstationFields empty, offsets at the end
  m.writeUInt32LE(32, 20);
  m.writeUInt32LE(32, 28);
  return m.toString('base64');
}

export interface NtlmChallenge {
  readonly flags: number;
  readonly serverChallenge: Buffer;
  readonly targetInfo: Buffer;
}

/** Reads a CHALLENGE_MESSAGE (2.2.1.2) from its base64; undefined when it is not one. */
export function parseChallengeMessage(b64: string): NtlmChallenge | undefined {
  const m = Buffer.from(b64, 'base64');
  if (m.length < 32 || !m.subarray(0, 8).equals(SIGNATURE) || m.readUInt32LE(8) !== 2) return undefined;
  const flags = m.readUInt32LE(20);
  const serverChallenge = Buffer.from(m.subarray(24, 32));
  let targetInfo = Buffer.alloc(0);
  if (m.length >= 48 && flags & NEGOTIATE_TARGET_INFO) {
    const len = m.readUInt16LE(40);
    const off = m.readUInt32LE(44);
    if (off + len > m.length) return undefined;
    targetInfo = Buffer.from(m.subarray(off, off + len));
  }
  return { flags, serverChallenge, targetInfo };
}

/** NTOWFv2 (3.3.2): HMAC-MD5 of the NT hash over the upper-case user name and the domain, UTF-16LE. */
export function ntowfv2(password: string, user: string, domain: string): Buffer {
  const ntHash = md4(Buffer.from(password, 'utf16le'));
  return createHmac('md5', ntHash).update(Buffer.from(user.toUpperCase() + domain, 'utf16le')).digest();
}

/** The FILETIME of the target information's MsvAvTimestamp, if it has one. */
function avTimestamp(targetInfo: Buffer): Buffer | undefined {
  for (let i = 0; i + 4 <= targetInfo.length;) {
    const id = targetInfo.readUInt16LE(i);
    const len = targetInfo.readUInt16LE(i + 2);
    if (id === 0) break;
    if (id === AV_TIMESTAMP && len === 8) return targetInfo.subarray(i + 4, i + 12);
    i += 4 + len;
  }
  return undefined;
}

/** Now as a FILETIME: 100 ns intervals since 1601-01-01, little-endian. */
function fileTime(nowMs: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE((BigInt(nowMs) + 11644473600000n) * 10000n);
  return b;
}

export interface NtlmV2Responses {
  readonly nt: Buffer;
  readonly lm: Buffer;
}

/** The NTLMv2 and LMv2 responses (3.3.2) to a challenge. */
export function ntlmv2Responses(key: Buffer, challenge: NtlmChallenge, clientChallenge: Buffer, timestamp: Buffer): NtlmV2Responses {
  const temp = Buffer.concat([Buffer.from([1, 1, 0, 0, 0, 0, 0, 0]), timestamp, clientChallenge, Buffer.alloc(4), challenge.targetInfo, Buffer.alloc(4)]);
  const proof = createHmac('md5', key).update(Buffer.concat([challenge.serverChallenge, temp])).digest();
  const lm = Buffer.concat([createHmac('md5', key).update(Buffer.concat([challenge.serverChallenge, clientChallenge])).digest(), clientChallenge]);
  return { nt: Buffer.concat([proof, temp]), lm };
}

/**
 * The AUTHENTICATE_MESSAGE (2.2.1.3) for `user` (a `DOMAIN\user` name gives
 * the domain), base64. `opts` fixes the random and the time for tests.
 */
export function authenticateMessage(challenge: NtlmChallenge, user: string, password: string, opts: { clientChallenge?: Buffer; nowMs?: number; workstation?: string } = {}): string {
  const slash = user.indexOf('\\');
  const domain = slash >= 0 ? user.slice(0, slash) : '';
  const name = slash >= 0 ? user.slice(slash + 1) : user;
  const clientChallenge = opts.clientChallenge ?? randomBytes(8);
  const ts = avTimestamp(challenge.targetInfo);
  const { nt, lm: lmv2 } = ntlmv2Responses(ntowfv2(password, name, domain), challenge, clientChallenge, ts ?? fileTime(opts.nowMs ?? Date.now()));
  // With a server timestamp, the LM response is 24 zero bytes (3.3.2).
  const lm = ts ? Buffer.alloc(24) : lmv2;
  const fields = [lm, nt, Buffer.from(domain, 'utf16le'), Buffer.from(name, 'utf16le'), Buffer.from(opts.workstation ?? '', 'utf16le'), Buffer.alloc(0)];
  const head = Buffer.alloc(64);
  SIGNATURE.copy(head, 0);
  head.writeUInt32LE(3, 8);
  let off = 64;
  fields.forEach((f, i) => {
    head.writeUInt16LE(f.length, 12 + i * 8);
    head.writeUInt16LE(f.length, 14 + i * 8);
    head.writeUInt32LE(off, 16 + i * 8);
    off += f.length;
  });
  const flags = (challenge.flags & CLIENT_FLAGS) | NEGOTIATE_UNICODE | NEGOTIATE_NTLM;
  head.writeUInt32LE(flags >>> 0, 60);
  return Buffer.concat([head, ...fields]).toString('base64');
}
