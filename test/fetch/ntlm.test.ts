import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { authenticateMessage, md4, negotiateMessage, ntlmv2Responses, ntowfv2, parseChallengeMessage, type NtlmChallenge } from '../../src/fetch/ntlm.ts';

describe('MD4 (RFC 1320 A.5 test suite)', () => {
  it('hashes the RFC\'s strings', () => {
    const cases: Array<[string, string]> = [
      ['', '31d6cfe0d16ae931b73c59d7e0c089c0'],
      ['a', 'bde52cb31de33e46245e05fbdbd6fb24'],
      ['abc', 'a448017aaf21d8525fc10ae87aa6729d'],
      ['message digest', 'd9130a8164549fe818874806e1c7014b'],
      ['abcdefghijklmnopqrstuvwxyz', 'd79e1c308aa5bbcdeea8ed63df412da9'],
      ['12345678901234567890123456789012345678901234567890123456789012345678901234567890', 'e33b4ddc9c38f2199c3e7b164fcc0536'],
    ];
    for (const [text, hex] of cases) assert.equal(md4(Buffer.from(text, 'latin1')).toString('hex'), hex, JSON.stringify(text));
  });
});

describe('NTLMv2 (MS-NLMP 4.2.4 test vectors)', () => {
  const av = (id: number, text: string): Buffer => {
    const v = Buffer.from(text, 'utf16le');
    const h = Buffer.alloc(4);
    h.writeUInt16LE(id, 0);
    h.writeUInt16LE(v.length, 2);
    return Buffer.concat([h, v]);
  };
  const targetInfo = Buffer.concat([av(2, 'Domain'), av(1, 'Server'), Buffer.alloc(4)]);
  const challenge: NtlmChallenge = { flags: 0xe28a8233, serverChallenge: Buffer.from('0123456789abcdef', 'hex'), targetInfo };

  it('NTOWFv2, LMv2 and the NTProofStr', () => {
    const key = ntowfv2('Password', 'User', 'Domain');
    assert.equal(key.toString('hex'), '0c868a403bfd7a93a3001ef22ef02e3f');
    const r = ntlmv2Responses(key, challenge, Buffer.from('aaaaaaaaaaaaaaaa', 'hex'), Buffer.alloc(8));
    assert.equal(r.lm.toString('hex'), '86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa');
    assert.equal(r.nt.subarray(0, 16).toString('hex'), '68cd0ab851e51c96aabc927bebef6a1c');
  });

  it('the messages: NEGOTIATE is type 1; a CHALLENGE is read back; AUTHENTICATE carries domain and user from DOMAIN\\user', () => {
    const neg = Buffer.from(negotiateMessage(), 'base64');
    assert.equal(neg.subarray(0, 8).toString('latin1'), 'NTLMSSP\0');
    assert.equal(neg.readUInt32LE(8), 1);
    // A CHALLENGE_MESSAGE as a server writes it.
    const head = Buffer.alloc(48);
    head.write('NTLMSSP\0', 0, 'latin1');
    head.writeUInt32LE(2, 8);
    head.writeUInt32LE(0x00800000 | 0x201, 20);
    challenge.serverChallenge.copy(head, 24);
    head.writeUInt16LE(targetInfo.length, 40);
    head.writeUInt16LE(targetInfo.length, 42);
    head.writeUInt32LE(48, 44);
    const read = parseChallengeMessage(Buffer.concat([head, targetInfo]).toString('base64'))!;
    assert.deepEqual(read.serverChallenge, challenge.serverChallenge);
    assert.deepEqual(read.targetInfo, targetInfo);
    assert.equal(parseChallengeMessage(Buffer.from('garbage').toString('base64')), undefined);
    const auth = Buffer.from(authenticateMessage(read, 'Domain\\User', 'Password', { clientChallenge: Buffer.from('aaaaaaaaaaaaaaaa', 'hex'), nowMs: 0 }), 'base64');
    assert.equal(auth.readUInt32LE(8), 3);
    const field = (at: number): Buffer => auth.subarray(auth.readUInt32LE(at + 4), auth.readUInt32LE(at + 4) + auth.readUInt16LE(at));
    assert.equal(field(28).toString('utf16le'), 'Domain');
    assert.equal(field(36).toString('utf16le'), 'User');
    const nt = field(20);
    const again = ntlmv2Responses(ntowfv2('Password', 'User', 'Domain'), read, Buffer.from('aaaaaaaaaaaaaaaa', 'hex'), nt.subarray(24, 32));
    assert.deepEqual(nt, again.nt);
  });
});
