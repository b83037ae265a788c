/**
 * The FTP fetcher as the crawl holds it: made, and basic-ftp loaded, at the
 * first ftp:// fetch, so that a crawl of HTTP sites alone never loads the
 * FTP client (the bench crawl's start-up and memory stay as they were).
 */

import type { FetchOutcome } from './fetch-types.ts';
import type { FtpFetchRequest, FtpFetcherOptions } from './ftp-fetcher.ts';
import type { EgressChecker, SiteResolver } from './egress.ts';

/** What the site tasks use of the FTP fetcher. */
export interface FtpFetching {
  /** Fetches once; never rejects. */
  fetch(req: FtpFetchRequest): Promise<FetchOutcome>;
  /** Closes every control connection. */
  close(): Promise<void>;
}

export class LazyFtpFetcher implements FtpFetching {
  private impl: Promise<FtpFetching> | undefined;
  private readonly resolver: SiteResolver;
  private readonly checker: EgressChecker;
  private readonly opts: FtpFetcherOptions;

  constructor(resolver: SiteResolver, checker: EgressChecker, opts: FtpFetcherOptions) {
    this.resolver = resolver;
    this.checker = checker;
    this.opts = opts;
  }

  fetch(req: FtpFetchRequest): Promise<FetchOutcome> {
    this.impl ??= import('./ftp-fetcher.ts').then((m) => new m.FtpFetcher(this.resolver, this.checker, this.opts));
    return this.impl.then((f) => f.fetch(req), (err: unknown) => ({
      kind: 'failure', code: 'ot', errorKey: 'int', reason: `the FTP client could not be loaded: ${(err as Error).message}`,
      blocked: false, connectFailure: false, bytesIn: 0, bytesOut: 0, durationMs: 0,
    }));
  }

  async close(): Promise<void> {
    if (this.impl) await (await this.impl).close();
  }
}
