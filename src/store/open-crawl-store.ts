/**
 * Which crawl store a command opens, from its `--store` option:
 *
 *   (none)                       SQLite, <data>/trawl.db, on the storage thread (storage-client.ts)
 *   sqlite:PATH                  SQLite at PATH (relative to the working directory), on the storage thread
 *   postgres://… postgresql://…  PostgreSQL (postgres/), on the calling thread: pg is asynchronous
 *
 * The content store stays in the data directory either way. Like a SQLite
 * file, a PostgreSQL store is held by one process at a time (`exclusive`),
 * except by the members of a multinode installation (docs/multinode.md),
 * which share it.
 * The PostgreSQL dialect (and pg) is loaded only when a store URL names it.
 */

import { join, resolve } from 'node:path';
import { trawlError } from '../core/errors.ts';
import type { CrawlStore } from './crawl-store.ts';
import { isPostgresUrl, maskStoreUrl } from './postgres/url.ts';
import { openThreadedCrawlStore } from './storage-client.ts';

/** The store a `--store` value names, as messages show it: a path, or a URL with its password masked. */
export type CrawlStoreSpec = { readonly kind: 'sqlite'; readonly path: string } | { readonly kind: 'postgres'; readonly url: string };

/** A member of a multinode installation (`trawl serve --node NAME`, `--role scheduler`): the store is shared, leases are the member's. */
export interface StoreMember {
  readonly name: string;
  readonly role: 'node' | 'scheduler';
  /** How long a lease lasts unless renewed: the node timeout. */
  readonly leaseTtlMs: number;
}

/** Reads a `--store` value; TRAWL_ERR_USAGE when it names no store trawl knows. */
export function parseStoreSpec(spec: string | undefined, dataDir: string): CrawlStoreSpec {
  if (spec === undefined || spec === '') return { kind: 'sqlite', path: join(dataDir, 'trawl.db') };
  if (isPostgresUrl(spec)) {
    try {
      new URL(spec);
    } catch {
      throw trawlError('STORE_SPEC_BAD', { spec: maskStoreUrl(spec) });
    }
    return { kind: 'postgres', url: spec };
  }
  const sqlite = /^sqlite:(.+)$/i.exec(spec);
  if (sqlite) return { kind: 'sqlite', path: resolve(sqlite[1] as string) };
  throw trawlError('STORE_SPEC_BAD', { spec });
}

/** Where the store `spec` names is, for a user to read: the SQLite file's path, or the URL with its password masked. */
export function describeStore(spec: string | undefined, dataDir: string): string {
  const s = parseStoreSpec(spec, dataDir);
  return s.kind === 'sqlite' ? s.path : maskStoreUrl(s.url);
}

/**
 * Opens the crawl store `spec` names (see the file comment; the default is
 * `<dataDir>/trawl.db`). Rejects with the store's own error when it cannot
 * be opened (TRAWL_ERR_IO, TRAWL_ERR_STORE_UNAVAILABLE).
 */
export async function openCrawlStore(spec: string | undefined, dataDir: string, member?: StoreMember): Promise<CrawlStore> {
  const s = parseStoreSpec(spec, dataDir);
  if (s.kind === 'sqlite') {
    if (member) throw trawlError('NODE_NEEDS_POSTGRES', { spec: s.path });
    return openThreadedCrawlStore(s.path);
  }
  const { PostgresCrawlStore } = await import('./postgres/postgres-crawl-store.ts');
  // A member of a multinode installation shares the store with the others.
  if (member) return PostgresCrawlStore.open(s.url, { owner: member.name, routed: member.role === 'node', leaseTtlMs: member.leaseTtlMs });
  return PostgresCrawlStore.open(s.url, { exclusive: true });
}
