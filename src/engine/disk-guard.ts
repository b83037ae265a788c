/**
 * The crawl's watch on the disk that holds its data directory.
 *
 *            free < disk_free %                  a write fails: ENOSPC, EDQUOT, SQLITE_FULL
 *   ┌────┐ ─────────────────────► ┌─────┐        (from any state)
 *   │ ok │                        │ low │  ───────────────────────────► ┌──────┐
 *   └────┘ ◄───────────────────── └─────┘                               │ full │
 *      ▲    free ≥ disk_free +                                          └──────┘
 *      │    disk_free_slack %                                              │
 *      └──── free ≥ free when it failed + RESUME_MARGIN_BYTES (polled) ────┘
 *            (then `low` again at once if below disk_free)
 *
 * ok     crawl as usual.
 * low    MS-FSCCFG 2.2.4.18 `limits`: refresh-only mode, the known URIs are
 *        crawled and no new URI is queued; MS-FSCADM 2.2.3.6 crawl mode
 *        `Refreshing(limit=disk_free)`. disk_free_slack is the hysteresis:
 *        the mode ends only once that much more is free again, so a crawl
 *        near the limit does not flap.
 * full   no fetch starts. The page whose write failed was not committed: it
 *        stays leased and is fetched again; what was committed is kept.
 *        The free space is polled every `pollMs` and the crawl resumes by
 *        itself once some came back.
 *
 * Each change is told once through `onChange`, with the data directory and
 * its free space (`fs.statfs`), never once per failed page.
 */

import { statfs } from 'node:fs/promises';
import { diskFullReason } from '../core/disk-full.ts';

export type DiskState = 'ok' | 'low' | 'full';

/** Free and total bytes of a filesystem, for an unprivileged user (statfs bavail). */
export interface DiskSpace {
  readonly freeBytes: number;
  readonly totalBytes: number;
}

export interface DiskGuardOptions {
  /** The data directory; undefined: free space is unknown, and a full disk is retried every poll. */
  readonly dir: string | undefined;
  /** MS-FSCCFG limits.disk_free: refresh-only below this percentage free (0: off). */
  readonly minFreePct: number;
  /** MS-FSCCFG limits.disk_free_slack: refresh-only ends at disk_free + this percentage free. */
  readonly slackPct: number;
  /** How often the free space is checked (while full, and against disk_free); default DISK_POLL_MS. */
  readonly pollMs?: number;
  readonly space?: (dir: string) => Promise<DiskSpace>;
  readonly onChange: (state: DiskState, message: string) => void;
}

/** How often the free space is checked while the crawl waits for it, or watches disk_free. */
export const DISK_POLL_MS = 3000;

/**
 * A full disk counts as having space again once this much more is free than
 * when the write failed: deleting a few KiB (a log rotated by the crawl
 * itself, SQLite giving back a page) is not worth a fetch that fails again.
 */
export const RESUME_MARGIN_BYTES = 1024 * 1024;

export async function diskSpace(dir: string): Promise<DiskSpace> {
  const s = await statfs(dir);
  return { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

function pct(s: DiskSpace): number {
  return s.totalBytes > 0 ? (100 * s.freeBytes) / s.totalBytes : 100;
}

export class DiskGuard {
  private readonly o: DiskGuardOptions;
  private readonly pollMs: number;
  private readonly space: (dir: string) => Promise<DiskSpace>;
  private low = false;
  private full = false;
  /** Free bytes when the write failed (full), or undefined when unknown. */
  private freeAtFull: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  /** The free space being read for the message of a failure just noted: a check waits for it. */
  private noting: Promise<void> | undefined;
  private stopped = false;
  private readonly waiters = new Set<() => void>();

  constructor(o: DiskGuardOptions) {
    this.o = o;
    this.pollMs = Math.max(10, o.pollMs ?? DISK_POLL_MS);
    this.space = o.space ?? diskSpace;
  }

  get state(): DiskState {
    return this.full ? 'full' : this.low ? 'low' : 'ok';
  }

  /** No fetch may start: a write failed for lack of space and none came back yet. */
  get paused(): boolean {
    return this.full;
  }

  /** Refresh-only: no new URI is queued (below disk_free, or full). */
  get refreshOnly(): boolean {
    return this.low || this.full;
  }

  /** Watches disk_free while a cycle runs (nothing to watch when it is 0 and the disk is not full). */
  start(): void {
    this.stopped = false;
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), this.pollMs);
    this.timer.unref();
    void this.check();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.wakeWaiters();
  }

  private wakeWaiters(): void {
    for (const w of [...this.waiters]) w();
  }

  /**
   * A write failed. Returns true when it was for lack of space (the crawl
   * is then paused, and told once), false for any other error, which the
   * caller reports as it did before.
   */
  noteFailure(err: unknown, what: string): boolean {
    // `what` says where it happened: "while crawling http://host:port".
    const reason = diskFullReason(err);
    if (reason === undefined) return false;
    if (this.full) return true;
    this.full = true;
    const dir = this.o.dir;
    const detail = err instanceof Error ? err.message : String(err);
    this.noting = (async () => {
      const s = dir !== undefined ? await this.space(dir).catch(() => undefined) : undefined;
      this.freeAtFull = s?.freeBytes;
      const where = dir === undefined ? 'the data directory' : `the data directory ${dir}`;
      const free = s ? `${formatBytes(s.freeBytes)} free of ${formatBytes(s.totalBytes)}` : 'free space unknown';
      this.o.onChange('full', `disk full (${reason}) ${what}: ${where} has ${free}. Fetching is paused; nothing committed is lost, ` +
        `and the pages not written are fetched again. Free space on that filesystem: the crawl resumes by itself (checked every ${Math.max(1, Math.round(this.pollMs / 1000))} s). (${detail})`);
    })().catch(() => undefined).finally(() => {
      this.noting = undefined;
    });
    return true;
  }

  /** Resolves once the disk has space again (polling it), or at once when `signal` is aborted or the guard stopped. */
  async waitForSpace(signal: AbortSignal): Promise<void> {
    for (;;) {
      if (!this.full || signal.aborted) return;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(t);
          signal.removeEventListener('abort', done);
          this.waiters.delete(done);
          resolve();
        };
        const t = setTimeout(done, this.pollMs);
        signal.addEventListener('abort', done, { once: true });
        this.waiters.add(done);
      });
      if (signal.aborted || this.stopped) return;
      await this.check();
    }
  }

  /** Reads the free space once and moves between the states (one check at a time). */
  check(): Promise<void> {
    this.checking ??= this.checkNow().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async checkNow(): Promise<void> {
    await this.noting;
    const dir = this.o.dir;
    if (dir === undefined) {
      // Nothing to measure: the next fetch tries the disk again.
      if (this.full) this.resume(undefined);
      return;
    }
    let s: DiskSpace;
    try {
      s = await this.space(dir);
    } catch {
      return; // the next poll tries again; a crawl is not stopped by statfs
    }
    if (this.full && s.freeBytes >= (this.freeAtFull ?? 0) + RESUME_MARGIN_BYTES) this.resume(s);
    const min = this.o.minFreePct;
    if (min <= 0) {
      this.low = false;
      return;
    }
    const p = pct(s);
    if (!this.low && p < min) {
      this.low = true;
      this.o.onChange(this.state, `free disk space on the data directory ${dir} is ${p.toFixed(1)}% (${formatBytes(s.freeBytes)} of ${formatBytes(s.totalBytes)}), ` +
        `below limits.disk_free ${min}%: refresh-only mode (crawl mode Refreshing(limit=disk_free)): only known URIs are crawled, no new ones are queued, ` +
        `until ${min + this.o.slackPct}% is free (disk_free + disk_free_slack)`);
    } else if (this.low && p >= min + this.o.slackPct) {
      this.low = false;
      this.o.onChange(this.state, `free disk space on the data directory ${dir} is back to ${p.toFixed(1)}% (${formatBytes(s.freeBytes)}): refresh-only mode for limits.disk_free ends`);
    }
  }

  private resume(s: DiskSpace | undefined): void {
    this.full = false;
    this.freeAtFull = undefined;
    const where = this.o.dir === undefined ? 'the data directory' : `the data directory ${this.o.dir}`;
    this.o.onChange(this.state, `disk space is back (${where} has ${s ? formatBytes(s.freeBytes) : 'an unknown amount'} free): fetching resumes`);
    this.wakeWaiters();
  }
}
