/** The CLI's streams, injectable so commands can be driven in-process. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  readStdin(): Promise<string>;
  /** Resolves once standard output has taken what was written (a long output waits for its reader). */
  drained?(): Promise<void>;
}

let stdoutWatched = false;
let stdoutFailed: Error | undefined;

export const processIo: Io = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
  drained: () => {
    // A reader that went away (`trawl export | head`) is an EPIPE error on stdout: rejected here, not thrown as an unhandled event.
    if (!stdoutWatched) {
      stdoutWatched = true;
      process.stdout.on('error', (err) => (stdoutFailed ??= err));
    }
    if (stdoutFailed) return Promise.reject(stdoutFailed);
    if (!process.stdout.writableNeedDrain) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        process.stdout.off('drain', done);
        process.stdout.off('error', done);
        if (stdoutFailed) reject(stdoutFailed);
        else resolve();
      };
      process.stdout.on('drain', done);
      process.stdout.on('error', done);
    });
  },
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
};
