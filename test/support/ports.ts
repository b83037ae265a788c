// Ports for the servers a test starts on loopback: a free one, and whether
// something listens yet. Every test and support file takes them from here.
import { connect, createServer } from 'node:net';

/** A free port on `host` (default 127.0.0.1): taken from the system, then let go. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Whether `host:port` takes a connection now. */
export function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, host, () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/** Waits until `check` holds, looking every 200 ms; throws naming `what` after `ms`. */
export async function until(what: string, check: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
