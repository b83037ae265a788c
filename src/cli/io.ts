/** The CLI's streams, injectable so commands can be driven in-process. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  readStdin(): Promise<string>;
  /** Resolves once standard output has taken what was written (a long output waits for its reader). */
  drained?(): Promise<void>;
}

export const processIo: Io = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
  drained: () => (process.stdout.writableNeedDrain ? new Promise<void>((resolve) => process.stdout.once('drain', () => resolve())) : Promise.resolve()),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
};
