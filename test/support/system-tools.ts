// Servers and tools from Debian that some tests start (promtool, nginx,
// Apache httpd, tinyproxy, pyftpdlib, ActiveMQ, PostgreSQL, Chromium).
// `.ci/run` installs them (the list is `.ci/apt-packages`). On a user's
// machine without one, the tests that need it are skipped, and the skip
// says what to install; in CI (CI=true) a missing tool is never a skip: the
// test runs and fails with the same message.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface SystemTool {
  /** The executable, a bare name looked up on PATH or an absolute path. */
  readonly command: string;
  /** The Debian package that provides it. */
  readonly pkg: string;
  /** A file the package installs that must also be there (a Python module's). */
  readonly requires?: string;
}

/** The tools the tests use, by the Debian package that provides each. */
export const TOOLS = {
  promtool: { command: 'promtool', pkg: 'prometheus' },
  nginx: { command: '/usr/sbin/nginx', pkg: 'nginx' },
  apache: { command: '/usr/sbin/apache2', pkg: 'apache2-bin' },
  tinyproxy: { command: '/usr/bin/tinyproxy', pkg: 'tinyproxy-bin' },
  openssl: { command: 'openssl', pkg: 'openssl' },
  debianPython: { command: '/usr/bin/python3', pkg: 'python3' },
  pyftpdlib: { command: '/usr/bin/python3', pkg: 'python3-pyftpdlib', requires: '/usr/lib/python3/dist-packages/pyftpdlib/__init__.py' },
  postgres: { command: '/usr/lib/postgresql/15/bin/initdb', pkg: 'postgresql' },
  activemq: { command: '/usr/bin/activemq', pkg: 'activemq' },
  java: { command: '/usr/bin/java', pkg: 'default-jre-headless' },
  javac: { command: '/usr/bin/javac', pkg: 'default-jdk-headless' },
  chromium: { command: '/usr/bin/chromium', pkg: 'chromium' },
} as const satisfies Record<string, SystemTool>;

const inCi = process.env.CI === 'true';

/** The tool's absolute path, or undefined when it is not installed. */
export function findTool(tool: SystemTool): string | undefined {
  if (tool.requires !== undefined) {
    try {
      accessSync(tool.requires, constants.R_OK);
    } catch {
      return undefined;
    }
  }
  const candidates = tool.command.includes('/')
    ? [tool.command]
    : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, tool.command));
  for (const c of [...candidates, join('/usr/sbin', tool.command), join('/usr/bin', tool.command)]) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return undefined;
}

function missingMessage(missing: readonly SystemTool[]): string {
  return `needs ${missing.map((t) => `${t.command} (apt-get install ${t.pkg})`).join(', ')}`;
}

/**
 * For `{ skip: skipUnless(...) }`: a reason to skip when a tool is missing
 * on a user's machine (printed, naming the package), and false otherwise,
 * including in CI, where the test then fails in `toolPath`.
 */
export function skipUnless(...tools: readonly SystemTool[]): string | false {
  const missing = tools.filter((t) => findTool(t) === undefined);
  if (missing.length === 0 || inCi) return false;
  const msg = missingMessage(missing);
  process.stderr.write(`# skipped: ${msg}\n`);
  return msg;
}

/** The tool's path; throws naming the package when it is missing (what a CI run then reports). */
export function toolPath(tool: SystemTool): string {
  const p = findTool(tool);
  if (p === undefined) throw new Error(`${missingMessage([tool])}${inCi ? ' (CI=true: a missing server is a failure)' : ''}`);
  return p;
}
