/**
 * Where the repository sink puts a URL's file: Heritrix's mirror writer
 * layout (host, then path), with names that are safe on every file system.
 *
 *   http://Example.org:8080/papers/a b.pdf?v=2
 *     → example.org%3A8080/papers/a%20b%3Fv=2.pdf        (+ .met beside it)
 *
 * The rules (docs/citeseerx.md "The repository layout" repeats them):
 *  - the first directory is the URL's host as the URL writes it, lower-case,
 *    with `:port` (written `%3A`) only when the port is not the scheme's
 *    default; then one directory per path segment, as the URL writes it
 *    (non-ASCII characters are already percent-encoded there);
 *  - a path ending in `/` gets the directory file `index.html`;
 *  - a query string is kept in the file name after `%3F` (`?`), and the file
 *    name's extension (1 to 8 letters or digits) moves after it, as the
 *    mirror writer's `suffix-at-end` does, so a PDF still ends in `.pdf`;
 *  - in every name, the characters Windows refuses (`< > : " / \ | ? *`
 *    and control characters) are written `%XX`; so are a leading dot, a
 *    trailing dot or space, the first letter of a Windows device name (CON,
 *    PRN, AUX, NUL, COM0-9, LPT0-9, with or without an extension), and the
 *    dot of a name ending in `.met`, the sidecars' extension;
 *  - a URL whose path has an empty segment (`a//b`), a name longer than
 *    251 bytes, or a relative path longer than 1019 bytes (so that the
 *    sidecar stays within 255 and 1023, the mirror writer's limits) is
 *    written as `<host>/LONG/<SHA-1 of the URL><extension>` instead (the
 *    mirror writer's `too-long-directory`), and so is one whose directory
 *    clashes with a file of another URL (`/a` stored, then `/a/b`). A URL
 *    path whose first segment is `LONG` (in any case) has its first letter
 *    written `%XX`.
 */

import { hash } from 'node:crypto';

/** The mirror writer's limits (max-segment-length, max-path-length), less the sidecar's `.met`. */
const MAX_SEGMENT_BYTES = 251;
const MAX_PATH_BYTES = 1019;

export const SIDECAR_SUFFIX = '.met';
export const LONG_DIRECTORY = 'LONG';
const DIRECTORY_FILE = 'index.html';

const DEVICE = /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i;
// eslint-disable-next-line no-control-regex -- Windows refuses control characters in names
const UNSAFE = /[<>:"/\\|?*\x00-\x1f\x7f]/g;
const EXTENSION = /\.[A-Za-z0-9]{1,8}$/;

function escapeChar(c: string): string {
  return `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
}

/** One file or directory name, safe on Linux, macOS and Windows file systems. */
export function safeName(name: string): string {
  let s = name.replace(UNSAFE, escapeChar);
  if (s.startsWith('.')) s = `%2E${s.slice(1)}`;
  if (s.endsWith('.') || s.endsWith(' ')) s = `${s.slice(0, -1)}${escapeChar(s.at(-1)!)}`;
  if (DEVICE.test(s)) s = `${escapeChar(s[0]!)}${s.slice(1)}`;
  if (s.toLowerCase().endsWith(SIDECAR_SUFFIX)) s = `${s.slice(0, -SIDECAR_SUFFIX.length)}%2E${s.slice(-3)}`;
  return s;
}

/** The host directory: the URL's host, with a port that is not the scheme's default. */
export function hostDirectory(u: URL): string {
  return safeName(u.host.toLowerCase());
}

/** The path of a URL's file under its LONG directory. */
export function longPath(url: string): string {
  const u = new URL(url);
  const last = u.pathname.split('/').at(-1) ?? '';
  const ext = EXTENSION.exec(decodeURIComponentSafe(last))?.[0] ?? '';
  return `${hostDirectory(u)}/${LONG_DIRECTORY}/${hash('sha1', url, 'hex')}${ext.toLowerCase()}`;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The relative path (with `/`) of a URL's file in the repository, by the
 * mirror layout; the LONG path when the mirror layout has no room for it.
 */
export function mirrorPath(url: string): string {
  const u = new URL(url);
  const segments = u.pathname.split('/').slice(1);
  if (segments.length === 0) segments.push('');
  if (segments.slice(0, -1).some((s) => s === '')) return longPath(url);
  if (segments.at(-1) === '') segments[segments.length - 1] = DIRECTORY_FILE;
  let last = segments.at(-1)!;
  if (u.search !== '') {
    const ext = EXTENSION.exec(last)?.[0] ?? '';
    last = `${last.slice(0, last.length - ext.length)}?${u.search.slice(1)}${ext}`;
  }
  segments[segments.length - 1] = last;
  const names = segments.map(safeName);
  if (names[0]!.toUpperCase() === LONG_DIRECTORY) names[0] = `${escapeChar(names[0]![0]!)}${names[0]!.slice(1)}`;
  const path = [hostDirectory(u), ...names].join('/');
  if (names.some((n) => Buffer.byteLength(n) > MAX_SEGMENT_BYTES) || Buffer.byteLength(path) > MAX_PATH_BYTES) return longPath(url);
  return path;
}
