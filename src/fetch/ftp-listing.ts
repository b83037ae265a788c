/**
 * What an FTP fetch turns into beside the bytes: a directory listing as an
 * HTML page of links (so that link extraction and the scope apply to it as
 * to any page), and a MIME type from the file's extension (FTP sends none).
 */

import type { FileInfo } from 'basic-ftp';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/** basic-ftp's FileType: 1 file, 2 directory, 3 symbolic link. */
const DIRECTORY = 2;

/**
 * A listing as HTML: one link per entry, relative to the directory's own
 * URL (which ends with "/"), a directory's ending with "/". "." and ".."
 * are left out: the parent is not a link of its children. A symbolic
 * link is written as a file; fetching it finds out (a directory answers
 * with a redirect to its "/" form).
 */
export function listingHtml(path: string, entries: readonly FileInfo[]): string {
  const title = `Index of ${escapeHtml(path)}`;
  const items: string[] = [];
  const sorted = [...entries].filter((e) => e.name !== '.' && e.name !== '..' && e.name !== '').sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of sorted) {
    const dir = e.type === DIRECTORY;
    const href = encodeURIComponent(e.name) + (dir ? '/' : '');
    const size = dir ? '' : ` ${e.size}`;
    items.push(`<li><a href="${escapeHtml(href)}">${escapeHtml(e.name)}${dir ? '/' : ''}</a>${size}</li>`);
  }
  return `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${title}</title></head>\n<body><h1>${title}</h1>\n<ul>\n${items.join('\n')}\n</ul>\n</body></html>\n`;
}

/** File extensions (lower-case, without the dot) and their MIME types. */
const BY_EXTENSION: Readonly<Record<string, string>> = {
  html: 'text/html', htm: 'text/html', xhtml: 'application/xhtml+xml', txt: 'text/plain', text: 'text/plain', md: 'text/markdown',
  csv: 'text/csv', xml: 'application/xml', json: 'application/json', rss: 'application/rss+xml', atom: 'application/atom+xml',
  pdf: 'application/pdf', doc: 'application/msword', xls: 'application/msexcel', ppt: 'application/vnd.ms-powerpoint', rtf: 'application/rtf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text', ps: 'application/postscript',
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', svg: 'image/svg+xml',
  zip: 'application/zip', gz: 'application/gzip', tar: 'application/x-tar',
};

/**
 * The MIME type a file name's extension names; undefined when it names
 * none we know, and the body is then sniffed as for a response without
 * Content-Type.
 */
export function mimeFromExtension(path: string): string | undefined {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return undefined;
  return BY_EXTENSION[name.slice(dot + 1).toLowerCase()];
}
