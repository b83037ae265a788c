// The FTP fetcher against a real FTP server (pyftpdlib) on loopback: files,
// listings, a protected account, passive and active data connections, the
// PASV address check, the limits and connection reuse, asserted on what the
// fetcher returns and on the server's own log.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EgressChecker, SiteResolver, type EgressPolicy } from '../../src/fetch/egress.ts';
import type { FetchLimits, FetchOutcome, ResponseOutcome } from '../../src/fetch/fetch-types.ts';
import { FtpFetcher, type FtpAccount, type FtpFetchRequest } from '../../src/fetch/ftp-fetcher.ts';
import { startFtpServer, type FtpServer } from '../support/ftp-server.ts';
import { skipUnless, TOOLS } from '../support/system-tools.ts';

const LOOPBACK: EgressPolicy = { allowLoopback: true, allowPrivateNetworks: false, allowLinkLocal: false, allowIps: [], denyIps: [] };
const LIMITS: FetchLimits = { fetchTimeoutMs: 10_000, connectTimeoutMs: 5000, cutOffBytes: undefined, truncate: false, maxDecompressedBytes: 1 << 24, maxDocumentBytes: 1 << 20 };
const BIG = 'x'.repeat(5000);

const dirs: string[] = [];
function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'trawl-ftp-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function fetcher(accounts: Record<string, FtpAccount> = {}, policy: EgressPolicy = LOOPBACK): FtpFetcher {
  const checker = new EgressChecker(policy);
  return new FtpFetcher(new SiteResolver(checker, 60_000), checker, { account: (h) => accounts[h], connectTimeoutMs: 5000, idleMs: 2000 });
}

function req(url: string, extra: Partial<FtpFetchRequest> = {}): FtpFetchRequest {
  return { url: new URL(url), limits: LIMITS, passive: true, ...extra };
}

function asResponse(o: FetchOutcome): ResponseOutcome {
  assert.equal(o.kind, 'response', o.kind === 'failure' ? o.reason : '');
  return o as ResponseOutcome;
}

const FILES = {
  'pub/a.txt': 'hello over ftp\n',
  'pub/page.html': '<html><body><a href="a.txt">a</a></body></html>',
  'pub/sub/deep.txt': 'deep\n',
  'pub/big.txt': BIG,
  'pub/with space.txt': 'spaced\n',
  'private/secret.txt': 'for alice only\n',
};

describe('FtpFetcher against pyftpdlib', { skip: skipUnless(TOOLS.pyftpdlib) }, () => {
  let anon: FtpServer;
  let prot: FtpServer;
  before(async () => {
    anon = await startFtpServer({ ip: '127.0.9.21', dir: temp(), files: FILES, anonymousHome: 'pub' });
    prot = await startFtpServer({ ip: '127.0.9.22', dir: temp(), files: FILES, users: [{ name: 'alice', password: 's3cret-pw', home: 'private' }] });
  });
  after(async () => {
    await anon?.close();
    await prot?.close();
  });

  it('fetches a file in passive mode: 200, the bytes, a MIME type from the extension, Last-Modified from MDTM', async () => {
    const f = fetcher();
    try {
      let sent = 0;
      const r = asResponse(await f.fetch(req(anon.url('/a.txt'), { onSent: () => sent++ })));
      assert.equal(r.status, 200);
      assert.equal(r.ftpCode, 226);
      assert.equal(Buffer.from(r.body).toString(), 'hello over ftp\n');
      assert.equal(r.headers['content-type'], 'text/plain');
      assert.ok(!Number.isNaN(Date.parse(r.headers['last-modified']!)));
      assert.equal(r.address, '127.0.9.21');
      assert.equal(sent, 1);
      const cmds = anon.commands();
      assert.ok(cmds.includes('USER anonymous'), cmds.join('\n'));
      assert.ok(cmds.includes('PASV'));
      assert.ok(!cmds.some((c) => c.startsWith('PORT')));
      assert.ok(anon.retrieved().includes('/pub/a.txt'), anon.log());
    } finally {
      await f.close();
    }
  });

  it('a directory with "/" is an HTML page of links; without "/" a 301 to it; a missing file is 404 (550)', async () => {
    const f = fetcher();
    try {
      const list = asResponse(await f.fetch(req(anon.url('/'))));
      assert.equal(list.status, 200);
      assert.match(list.headers['content-type']!, /^text\/html/);
      const html = Buffer.from(list.body).toString();
      assert.match(html, /<a href="a\.txt">a\.txt<\/a>/);
      assert.match(html, /<a href="sub\/">sub\/<\/a>/);
      assert.match(html, /<a href="with%20space\.txt">with space\.txt<\/a>/);
      assert.ok(anon.commands().some((c) => /^(LIST|MLSD)\b/.test(c)), anon.log());

      const dir = asResponse(await f.fetch(req(anon.url('/sub'))));
      assert.equal(dir.status, 301);
      assert.equal(dir.headers.location, anon.url('/sub/'));

      const missing = asResponse(await f.fetch(req(anon.url('/nothing.txt'))));
      assert.equal(missing.status, 404);
      assert.equal(missing.ftpCode, 550);

      const spaced = asResponse(await f.fetch(req(anon.url('/with%20space.txt'))));
      assert.equal(Buffer.from(spaced.body).toString(), 'spaced\n');
      // All of it on one control connection: one login.
      assert.equal(anon.commands().filter((c) => c === 'USER anonymous').length, 2 /* this test's and the first test's */);
    } finally {
      await f.close();
    }
  });

  it('logs in with the ftp_acct account; anonymous is 401 (530), a wrong password 403 (530)', async () => {
    const good = fetcher({ '127.0.9.22': { user: 'alice', password: 's3cret-pw' } });
    const none = fetcher();
    const wrong = fetcher({ '127.0.9.22': { user: 'alice', password: 'nope' } });
    try {
      const r = asResponse(await good.fetch(req(prot.url('/secret.txt'))));
      assert.equal(r.status, 200);
      assert.equal(Buffer.from(r.body).toString(), 'for alice only\n');
      const a = asResponse(await none.fetch(req(prot.url('/secret.txt'))));
      assert.equal(a.status, 401);
      assert.equal(a.ftpCode, 530);
      const w = asResponse(await wrong.fetch(req(prot.url('/secret.txt'))));
      assert.equal(w.status, 403);
      assert.equal(w.ftpCode, 530);
      const log = prot.log();
      assert.match(log, /USER 'alice' logged in/);
      assert.ok(prot.retrieved().includes('/private/secret.txt'));
      assert.equal(prot.retrieved().length, 1, 'nothing was sent to the refused logins');
    } finally {
      await Promise.all([good.close(), none.close(), wrong.close()]);
    }
  });

  it('active mode (ftp_passive off) sends PORT and no PASV, and the transfer works', async () => {
    const dir = temp();
    const s = await startFtpServer({ ip: '127.0.9.23', dir, files: FILES, anonymousHome: 'pub' });
    const f = fetcher();
    try {
      const r = asResponse(await f.fetch(req(s.url('/sub/deep.txt'), { passive: false })));
      assert.equal(Buffer.from(r.body).toString(), 'deep\n');
      const list = asResponse(await f.fetch(req(s.url('/sub/'), { passive: false })));
      assert.match(Buffer.from(list.body).toString(), /deep\.txt/);
      const cmds = s.commands();
      assert.ok(cmds.some((c) => c.startsWith('PORT 127,0,0,1,')), cmds.join('\n'));
      assert.ok(!cmds.includes('PASV') && !cmds.includes('EPSV'), cmds.join('\n'));
      assert.ok(s.retrieved().includes('/pub/sub/deep.txt'), s.log());
    } finally {
      await f.close();
      await s.close();
    }
  });

  it('refuses a PASV reply that names another address than the control connection, and transfers nothing', async () => {
    const s = await startFtpServer({ ip: '127.0.9.24', dir: temp(), files: FILES, anonymousHome: 'pub', masquerade: '127.0.9.99' });
    const f = fetcher();
    try {
      const o = await f.fetch(req(s.url('/a.txt')));
      assert.equal(o.kind, 'failure');
      assert.ok(o.kind === 'failure' && o.blocked);
      assert.match((o as { reason: string }).reason, /PASV reply names 127\.0\.9\.99.*not 127\.0\.9\.24/);
      assert.ok(s.commands().includes('PASV'));
      assert.deepEqual(s.retrieved(), []);
    } finally {
      await f.close();
      await s.close();
    }
  });

  it('a server the egress policy refuses is never connected to', async () => {
    const f = fetcher({}, { ...LOOPBACK, denyIps: ['127.0.9.21'] });
    const before = anon.commands().length;
    try {
      const o = await f.fetch(req(anon.url('/a.txt')));
      assert.equal(o.kind, 'failure');
      assert.ok(o.kind === 'failure' && o.blocked, JSON.stringify(o));
      assert.equal(anon.commands().length, before);
    } finally {
      await f.close();
    }
  });

  it('cut_off: past it without truncate fails "tl" from SIZE before any transfer; with truncate the first bytes are kept', async () => {
    const f = fetcher();
    try {
      const n = anon.retrieved().length;
      const o = await f.fetch(req(anon.url('/big.txt'), { limits: { ...LIMITS, cutOffBytes: 100 } }));
      assert.equal(o.kind, 'failure');
      assert.equal((o as { code: string }).code, 'tl');
      assert.equal(anon.retrieved().length, n);
      assert.ok(!anon.commands().includes('RETR big.txt') && !anon.commands().includes('RETR /big.txt'));
      const t = asResponse(await f.fetch(req(anon.url('/big.txt'), { limits: { ...LIMITS, cutOffBytes: 100, truncate: true } })));
      assert.equal(t.body.length, 100);
      assert.equal(t.truncated, true);
      const m = await f.fetch(req(anon.url('/big.txt'), { limits: { ...LIMITS, maxDocumentBytes: 1000 } }));
      assert.equal((m as { code: string }).code, 'tl');
    } finally {
      await f.close();
    }
  });

  it('fetch_timeout bounds a slow transfer ("ti"), and the next fetch of the site logs in again', async () => {
    const s = await startFtpServer({ ip: '127.0.9.26', dir: temp(), files: FILES, anonymousHome: 'pub', throttleBytesPerS: 1000 });
    const f = fetcher();
    try {
      const t0 = performance.now();
      const o = await f.fetch(req(s.url('/big.txt'), { limits: { ...LIMITS, fetchTimeoutMs: 800 } }));
      assert.equal(o.kind, 'failure');
      assert.equal((o as { code: string }).code, 'ti');
      assert.ok(performance.now() - t0 < 3000);
      assert.deepEqual(s.retrieved(), [], 'the transfer did not complete');
      const r = asResponse(await f.fetch(req(s.url('/a.txt'))));
      assert.equal(r.status, 200);
      assert.equal(s.commands().filter((c) => c === 'USER anonymous').length, 2);
    } finally {
      await f.close();
      await s.close();
    }
  });

  it('over IPv6 (::1): EPSV in passive mode, EPRT in active mode', async () => {
    const s = await startFtpServer({ ip: '::1', dir: temp(), files: FILES, anonymousHome: 'pub' });
    const f = fetcher();
    try {
      assert.equal(Buffer.from(asResponse(await f.fetch(req(s.url('/a.txt')))).body).toString(), 'hello over ftp\n');
      assert.equal(Buffer.from(asResponse(await f.fetch(req(s.url('/sub/deep.txt'), { passive: false }))).body).toString(), 'deep\n');
      const cmds = s.commands();
      assert.ok(cmds.includes('EPSV') && !cmds.includes('PASV'), cmds.join('\n'));
      assert.ok(cmds.some((c) => c.startsWith('EPRT |2|::1|')), cmds.join('\n'));
      assert.deepEqual(s.retrieved(), ['/pub/a.txt', '/pub/sub/deep.txt']);
    } finally {
      await f.close();
      await s.close();
    }
  });

  it('tells an observer (the daemon\'s /metrics) each fetch\'s duration and body bytes', async () => {
    const seen: number[] = [];
    let bytes = 0;
    const checker = new EgressChecker(LOOPBACK);
    const f = new FtpFetcher(new SiteResolver(checker, 60_000), checker, { account: () => undefined, observer: { observe: (s) => seen.push(s), addBytes: (n) => (bytes += n) } });
    try {
      await f.fetch(req(anon.url('/a.txt')));
      await f.fetch(req(anon.url('/big.txt')));
      assert.equal(seen.length, 2);
      assert.ok(seen.every((s) => s > 0 && s < 10));
      assert.equal(bytes, 'hello over ftp\n'.length + BIG.length);
    } finally {
      await f.close();
    }
  });

  it('answers 304 without a transfer when MDTM gives the stored Last-Modified', async () => {
    const f = fetcher();
    try {
      const first = asResponse(await f.fetch(req(anon.url('/page.html'))));
      assert.equal(first.headers['content-type'], 'text/html');
      const n = anon.retrieved().filter((p) => p === '/pub/page.html').length;
      const again = asResponse(await f.fetch(req(anon.url('/page.html'), { ifModifiedSince: first.headers['last-modified']! })));
      assert.equal(again.status, 304);
      assert.equal(anon.retrieved().filter((p) => p === '/pub/page.html').length, n);
    } finally {
      await f.close();
    }
  });

  it('one control connection per site: fetches at once wait for each other and share one login; close() ends it', async () => {
    const s = await startFtpServer({ ip: '127.0.9.25', dir: temp(), files: FILES, anonymousHome: 'pub' });
    const f = fetcher();
    try {
      const outs = await Promise.all(['/a.txt', '/page.html', '/sub/deep.txt'].map((p) => f.fetch(req(s.url(p)))));
      for (const o of outs) assert.equal(asResponse(o).status, 200);
      assert.equal(s.commands().filter((c) => c === 'USER anonymous').length, 1);
      assert.equal(f.openSessions, 1);
      await f.close();
      assert.equal(f.openSessions, 0);
      // The server saw the QUIT.
      const deadline = Date.now() + 3000;
      while (!s.commands().includes('QUIT') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(s.commands().includes('QUIT'));
    } finally {
      await s.close();
    }
  });
});
