/**
 * Messages between threads, sent in batches: whatever one thread sends
 * another in one turn of its event loop travels as one array, in order.
 *
 *   send(a) send(b) send(c) ──(end of the turn: setImmediate)──► post([a, b, c])
 *
 * Each postMessage costs the sender a serializer set-up, a lock and a
 * wake-up of the receiving loop (a write to its eventfd), and the receiver
 * as much again, and the crawl's main thread has several messages a page
 * for the storage and extract threads (bench/README.md, *The thread
 * layout, measured*, and *What changed*, 5095ef0). A crawl finishes many
 * fetches per turn, so their store calls and pages go together.
 *
 * The batch waits for the end of the turn at most: setImmediate runs after
 * the I/O callbacks of the turn and the promise jobs they started.
 */

export class BatchedPost<T> {
  private queue: T[] = [];
  private readonly post: (batch: T[]) => void;
  private readonly failed: (message: T, err: unknown) => void;

  /**
   * @param post sends one batch; it may throw (a value that cannot be cloned).
   * @param failed is told of each message of a batch that could not be sent:
   *   the batch is then sent again one message at a time, so that one bad
   *   message fails alone.
   */
  constructor(post: (batch: T[]) => void, failed: (message: T, err: unknown) => void) {
    this.post = post;
    this.failed = failed;
  }

  send(message: T): void {
    if (this.queue.push(message) === 1) setImmediate(this.flush);
  }

  /** Sends what waits now, without waiting for the end of the turn. */
  readonly flush = (): void => {
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    try {
      this.post(batch);
      return;
    } catch {
      // Found below, message by message.
    }
    for (const m of batch) {
      try {
        this.post([m]);
      } catch (err) {
        this.failed(m, err);
      }
    }
  };
}
