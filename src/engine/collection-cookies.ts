/**
 * The collection's cookie jar (use_cookies): one for every fetch of the
 * collection, in every cycle this crawl object runs, kept in the crawl
 * store (`getCookieJar` / `putCookieJar`) so that it survives a restart.
 *
 *   runCycle ─► load() once (the saved jar, its expired cookies dropped)
 *            ─► save() every second while cookies changed, and at the end
 *
 * It is the fetcher's `CookieJar` itself, delegating to the jar it loaded,
 * so the fetcher can be made before the jar is read. Made only when
 * use_cookies is on.
 */

import { MemoryCookieJar, type CookieJar } from '../fetch/cookies.ts';
import type { CrawlStore } from '../store/crawl-store.ts';

export class CollectionCookies implements CookieJar {
  private readonly store: CrawlStore;
  private readonly name: string;
  private readonly now: () => number;
  private sessionTtlMs: number;
  private jar: MemoryCookieJar;
  private loaded = false;
  private saving: Promise<void> | undefined;

  constructor(store: CrawlStore, name: string, sessionTtlMs: number, now: () => number) {
    this.store = store;
    this.name = name;
    this.now = now;
    this.sessionTtlMs = sessionTtlMs;
    this.jar = new MemoryCookieJar({ sessionTtlMs, now });
  }

  /** cookie_timeout of the cycle's settings (applies to session cookies set from now on). */
  setSessionTtl(ms: number): void {
    if (ms === this.sessionTtlMs) return;
    this.sessionTtlMs = ms;
    this.jar = MemoryCookieJar.deserialize(this.jar.serialize(), { sessionTtlMs: ms, now: this.now });
    this.jar.changed = true;
  }

  /** Reads the saved jar, once. */
  async load(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    const text = await this.store.getCookieJar(this.name);
    if (text !== undefined) this.jar = MemoryCookieJar.deserialize(text, { sessionTtlMs: this.sessionTtlMs, now: this.now });
  }

  /** Saves the jar when it changed since the last save (one save at a time). */
  save(): Promise<void> {
    if (this.saving) return this.saving;
    if (!this.jar.changed) return Promise.resolve();
    const text = this.jar.serialize();
    this.saving = this.store.putCookieJar(this.name, text, this.now()).finally(() => {
      this.saving = undefined;
    });
    return this.saving;
  }

  get size(): number {
    return this.jar.size;
  }

  get changed(): boolean {
    return this.jar.changed;
  }

  serialize(): string {
    return this.jar.serialize();
  }

  getCookieString(url: string): string {
    return this.jar.getCookieString(url);
  }

  setCookie(header: string, url: string): void {
    this.jar.setCookie(header, url);
  }
}
