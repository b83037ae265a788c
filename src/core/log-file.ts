/**
 * An append-only log file for pino that writes its lines in batches.
 *
 *   pino ─write(line)─► UTF-8 into a chunk ──(256 lines, or every second)──► one fs.write
 *
 * `trawl crawl` logs a line for every fetch, on the main thread, and this
 * takes about half the time of pino.destination (sonic-boom) per line
 * (`npm run bench:micro`, *crawl log line*; bench/README.md, *What
 * changed*, a8a12c1). sonic-boom measures the UTF-8 length of every line
 * and of its whole pending buffer at each write, and starts a write as
 * soon as the one before it is done, so under a crawl's load it made a
 * system call for every line or two. Its `minLength` option batches the
 * writes but gained nothing, as the pending buffer it measures grows
 * (bench/README.md, *Tried*).
 *
 * Each line is encoded into the current chunk as it comes, so its string
 * dies at once: kept in a list until the batch was written, the lines
 * lived through a scavenge and were copied (`bench/alloc-profile.mjs`;
 * bench/README.md, *What changed*, bfc0bc2).
 *
 * Lines wait at most FLUSH_MS before they are written, so `tail -f` follows
 * a crawl. One write is in flight at a time, so lines stay in order. At
 * process exit what is still waiting is written synchronously. A write
 * error is reported on stderr (once until a write succeeds again) and the
 * log goes on: a full disk must not stop the crawl, which has its own
 * store to protect. The file is opened for appending, never truncated.
 *
 * What a failed write did not write (a full disk writes part of a batch,
 * then fails) is kept, and written first by the next flush, so that the
 * log keeps its lines whole and in order once space returns. At most
 * MAX_HELD_BYTES are kept: lines beyond it are counted and dropped, and
 * the log says how many once it can be written again.
 */

import { closeSync, mkdirSync, openSync, write, writeSync } from 'node:fs';
import { dirname } from 'node:path';

const FLUSH_LINES = 256;
const FLUSH_MS = 1000;
/** Lines are encoded into chunks of this size; a longer line gets a buffer of its own. */
const CHUNK_BYTES = 64 * 1024;
/** Bytes kept while the log cannot be written (a full disk); the lines after them are dropped and counted. */
const MAX_HELD_BYTES = 16 * 1024 * 1024;

export class LogFile {
  readonly path: string;
  private fd: number | undefined;
  /** Encoded lines waiting: full chunks (and lines too long for one), then `chunk` up to `used`. */
  private waiting: Buffer[] = [];
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  private lines = 0;
  /** Bytes a failed write left unwritten: written before anything else. */
  private held: Buffer | undefined;
  /** Bytes waiting in `waiting` and `chunk`, and in `held`: bounded by MAX_HELD_BYTES while writes fail. */
  private waitingBytes = 0;
  /** Lines dropped since the last successful write because too much was waiting. */
  private dropped = 0;
  private writing = false;
  private reported = false;
  private readonly waiters: Array<() => void> = [];
  private readonly timer: NodeJS.Timeout;
  /**
   * The logs open in this process, written at its exit by one listener
   * (`trawl serve` opens one per collection: a listener each would pass
   * Node's limit of 10 and warn).
   */
  private static readonly open = new Set<LogFile>();
  private static readonly onExit = (): void => {
    for (const f of LogFile.open) f.flushSync();
  };

  constructor(path: string) {
    this.path = path;
    // Crawl logs name every URL fetched: the owner's only, like the data directory.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.fd = openSync(path, 'a', 0o600);
    this.timer = setInterval(() => this.flush(), FLUSH_MS);
    this.timer.unref();
    if (LogFile.open.size === 0) process.on('exit', LogFile.onExit);
    LogFile.open.add(this);
  }

  /** pino's destination interface: one serialized line, newline included. */
  write(line: string): boolean {
    if (this.fd === undefined) return false;
    if (this.held !== undefined && this.waitingBytes > MAX_HELD_BYTES) {
      this.dropped++;
      return true;
    }
    // A UTF-16 code unit takes at most 3 bytes in UTF-8, so a line that passes this check fits whole.
    if (line.length * 3 > CHUNK_BYTES - this.used) {
      this.closeChunk();
      if (line.length * 3 > CHUNK_BYTES) this.waiting.push(Buffer.from(line, 'utf8'));
      else this.used = this.chunk.write(line, 0, 'utf8');
    } else this.used += this.chunk.write(line, this.used, 'utf8');
    // Counted only while writes fail, in UTF-16 units: close enough for a bound.
    if (this.held !== undefined) this.waitingBytes += line.length;
    if (++this.lines >= FLUSH_LINES && !this.writing) this.flush();
    return true;
  }

  /** Moves what the current chunk holds to the waiting list, and starts a new chunk. */
  private closeChunk(): void {
    if (this.used === 0) return;
    this.waiting.push(this.chunk.subarray(0, this.used));
    this.chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
  }

  /** Everything waiting (what a failed write left first), as one buffer, and nothing left waiting. */
  private take(): Buffer {
    this.closeChunk();
    const bufs = this.waiting;
    if (this.held !== undefined) bufs.unshift(this.held);
    if (this.dropped > 0) {
      // After the lines kept: the dropped ones were logged after them.
      bufs.push(Buffer.from(`{"level":40${isoTimeEachMs()()},"msg":"${this.dropped} log lines were dropped: the log could not be written (${this.path})"}\n`));
      this.dropped = 0;
    }
    this.waiting = [];
    this.held = undefined;
    this.waitingBytes = 0;
    this.lines = 0;
    return bufs.length === 1 ? bufs[0]! : Buffer.concat(bufs);
  }

  private get hasWaiting(): boolean {
    return this.lines > 0 || this.held !== undefined || this.dropped > 0;
  }

  /** Starts writing what waits; `done` is called once everything logged so far is written. */
  flush(done?: () => void): void {
    if (done) this.waiters.push(done);
    if (this.writing) return;
    if (!this.hasWaiting || this.fd === undefined) {
      for (const w of this.waiters.splice(0)) w();
      return;
    }
    this.writing = true;
    this.writeAll(this.take(), 0);
  }

  private writeAll(buf: Buffer, from: number): void {
    write(this.fd!, buf, from, buf.length - from, null, (err, n) => {
      if (!err && from + n < buf.length) {
        this.writeAll(buf, from + n);
        return;
      }
      this.writing = false;
      if (err) {
        // Kept for the next flush (the timer's, within FLUSH_MS); those waiting are told now, as the write is over.
        this.held = buf.subarray(from);
        this.waitingBytes += this.held.length;
        this.report(err);
        for (const w of this.waiters.splice(0)) w();
        return;
      }
      this.reported = false;
      if (this.lines >= FLUSH_LINES || this.waiters.length > 0) this.flush();
    });
  }

  /** What waits, written before returning (pino.final, process exit). A write already in flight is not waited for. */
  flushSync(): void {
    if (this.fd === undefined || !this.hasWaiting) return;
    const buf = this.take();
    let at = 0;
    try {
      while (at < buf.length) at += writeSync(this.fd, buf, at);
    } catch (err) {
      this.held = buf.subarray(at);
      this.waitingBytes = this.held.length;
      this.report(err as Error);
    }
  }

  /** Writes what waits and closes the file. */
  async close(): Promise<void> {
    if (this.fd === undefined) return;
    clearInterval(this.timer);
    await new Promise<void>((resolve) => this.flush(resolve));
    // What a failed write kept gets one last try; what still cannot be written is lost, and said so.
    this.flushSync();
    if (this.held !== undefined) process.stderr.write(`trawl: ${this.held.length} bytes of the log ${this.path} could not be written and are lost\n`);
    LogFile.open.delete(this);
    if (LogFile.open.size === 0) process.off('exit', LogFile.onExit);
    closeSync(this.fd);
    this.fd = undefined;
  }

  private report(err: Error): void {
    if (this.reported) return;
    this.reported = true;
    process.stderr.write(`trawl: cannot write the log ${this.path}: ${err.message} (lines are dropped until a write succeeds)\n`);
  }
}

/**
 * pino's `stdTimeFunctions.isoTime` (`,"time":"2026-11-26T12:00:00.000Z"`),
 * with the string made once per millisecond: a crawl logs a line for every
 * fetch, thousands a second, and a `Date` and `toISOString()` for each
 * showed in the main thread's profile (bench/README.md, *What changed*,
 * 170cf40).
 */
export function isoTimeEachMs(now: () => number = Date.now): () => string {
  let at = Number.NaN;
  let text = '';
  return () => {
    const t = now();
    if (t !== at) {
      at = t;
      text = `,"time":"${new Date(t).toISOString()}"`;
    }
    return text;
  };
}
