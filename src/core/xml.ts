/**
 * A small, safe XML-to-tree reader on top of saxes, for documents that are
 * read whole (configurations, XML-RPC bodies).
 *
 * Safety: saxes never resolves external entities. On top of that this reader
 * refuses any DOCTYPE outright (so no internal entity declarations either:
 * no billion laughs), bounds the element depth and the input size, and
 * accepts only XML 1.0 in UTF-8.
 *
 *   <a x="1">t<b/>u</a>   ──►   { name: 'a', attrs: { x: '1' }, text: 'tu',
 *                                children: [{ name: 'b', … }], loc: {line, column} }
 */

import { SaxesParser } from 'saxes';
import { TrawlError, type ErrorCode, type SourceLocation } from './errors.ts';

export interface XmlElement {
  readonly name: string;
  readonly attrs: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  /** The element's own text and CDATA, concatenated (not its children's). */
  text: string;
  /** Where the start tag begins. */
  readonly loc: SourceLocation;
  /** Text pieces with where each begins, for reporting stray text. */
  readonly textLocs: { text: string; loc: SourceLocation }[];
}

export interface XmlReadOptions {
  readonly file?: string;
  /** Bytes at most (default 16 MiB). */
  readonly maxBytes?: number;
  /** Element nesting at most (default 64). */
  readonly maxDepth?: number;
  /** Error code for malformed XML. */
  readonly malformedCode: ErrorCode;
  /** Error code for a DOCTYPE. */
  readonly doctypeCode: ErrorCode;
  /** Error code for a wrong encoding or XML version. */
  readonly encodingCode: ErrorCode;
}

/** Decodes bytes as UTF-8 (dropping a BOM), or fails with the encoding error. */
export function decodeUtf8(input: Uint8Array | string, opts: Pick<XmlReadOptions, 'file' | 'encodingCode'>): string {
  if (typeof input === 'string') return input.startsWith('\uFEFF') ? input.slice(1) : input;
  if ((input[0] === 0xff && input[1] === 0xfe) || (input[0] === 0xfe && input[1] === 0xff)) {
    throw new TrawlError(opts.encodingCode, 'the document is UTF-16; MS-FSCCFG 2 requires UTF-8', { location: { file: opts.file, line: 1, column: 1 } });
  }
  // XML 1.0 Appendix F: "<" as UTF-16 without a byte order mark.
  if ((input[0] === 0x3c && input[1] === 0x00) || (input[0] === 0x00 && input[1] === 0x3c)) {
    throw new TrawlError(opts.encodingCode, 'the document is UTF-16 (without a byte order mark); MS-FSCCFG 2 requires UTF-8', { location: { file: opts.file, line: 1, column: 1 } });
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(input);
  } catch {
    // Find the line of the first bad byte, to point at it.
    let line = 1;
    let bad = 0;
    for (let i = 0; i < input.length; i++) {
      if (input[i] === 0x0a) line++;
      if (input[i]! >= 0x80) {
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(input.subarray(0, i + 4 > input.length ? input.length : i + 4));
        } catch {
          bad = i;
          break;
        }
      }
    }
    throw new TrawlError(opts.encodingCode, `the document is not valid UTF-8 (first bad byte at offset ${bad})`, { location: { file: opts.file, line } });
  }
}

export function readXmlTree(input: Uint8Array | string, opts: XmlReadOptions): XmlElement {
  const maxBytes = opts.maxBytes ?? 16 * 1024 * 1024;
  const maxDepth = opts.maxDepth ?? 64;
  const size = typeof input === 'string' ? Buffer.byteLength(input) : input.byteLength;
  if (size > maxBytes) {
    throw new TrawlError(opts.malformedCode, `the document is ${size} bytes; at most ${maxBytes} are read`, { location: { file: opts.file } });
  }
  const text = decodeUtf8(input, opts);
  const parser = new SaxesParser({ position: true, ...(opts.file ? { fileName: opts.file } : {}) });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let startLine = 1;
  let startColumn = 1;
  const here = (): SourceLocation => ({ file: opts.file, line: parser.line, column: parser.column + 1 });
  // Offsets of line starts, to turn a character offset into a line and column.
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const locAt = (offset: number): SourceLocation => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { file: opts.file, line: lo + 1, column: offset - lineStarts[lo]! + 1 };
  };
  // Where the last markup ended; text (and a DOCTYPE) starts at the first non-space after it.
  let markupEnd = 0;
  const nextNonSpace = (): SourceLocation => {
    let o = markupEnd;
    while (o < text.length && /\s/.test(text[o]!)) o++;
    return locAt(o);
  };
  let lastClosed: XmlElement | undefined;
  const fail = (code: ErrorCode, message: string, loc: SourceLocation = here()): never => {
    throw new TrawlError(code, message, { location: loc });
  };

  parser.on('error', (err) => {
    // saxes prefixes "file:line:col: "; the location is reported separately.
    const what = err.message.replace(/^(?:[^:]*:)?\d+:\d+: /, '');
    if (what === 'unexpected close tag.' && lastClosed) {
      const closing = /<\/\s*([^\s>]+)\s*>$/.exec(text.slice(0, parser.position))?.[1] ?? '?';
      if (stack.some((e) => e.name === closing)) {
        fail(opts.malformedCode, `malformed XML: <${lastClosed.name}> is not closed before </${closing}>`, lastClosed.loc);
      }
      fail(opts.malformedCode, `malformed XML: </${closing}> does not match <${lastClosed.name}> (line ${lastClosed.loc.line})`);
    }
    const unclosed = /^unclosed tag: /.test(what) ? stack[stack.length - 1] : undefined;
    if (unclosed) fail(opts.malformedCode, `malformed XML: <${unclosed.name}> is never closed`, unclosed.loc);
    if (what === 'text data outside of root node.') fail(opts.malformedCode, `malformed XML: ${what}`, nextNonSpace());
    fail(opts.malformedCode, `malformed XML: ${what}`);
  });
  parser.on('comment', () => {
    // saxes reports a comment before it has read the final ">".
    markupEnd = text.indexOf('-->', parser.position - 3) + 3;
  });
  parser.on('xmldecl', (decl) => {
    markupEnd = parser.position;
    if (decl.version !== undefined && decl.version !== '1.0') fail(opts.encodingCode, `XML version ${decl.version}; only XML 1.0 is read`);
    if (decl.encoding !== undefined && !/^utf-?8$/i.test(decl.encoding)) {
      fail(opts.encodingCode, `declared encoding ${decl.encoding}; only UTF-8 is read`);
    }
  });
  parser.on('doctype', () => {
    const at = nextNonSpace();
    fail(opts.doctypeCode, 'DOCTYPE declarations are refused: no DTD, no entity declarations, no external entities', at);
  });
  parser.on('processinginstruction', (pi) => {
    fail(opts.malformedCode, `processing instruction <?${pi.target} …?> is not allowed here`);
  });
  parser.on('opentagstart', (tag) => {
    // saxes has read "<", the name and the character after it.
    const at = locAt(parser.position - tag.name.length - 2);
    startLine = at.line!;
    startColumn = at.column!;
  });
  parser.on('opentag', (tag) => {
    if (stack.length >= maxDepth) fail(opts.malformedCode, `elements nest deeper than ${maxDepth} levels`);
    const attrs: Record<string, string> = {};
    for (const [k, v] of Object.entries(tag.attributes)) attrs[k] = typeof v === 'string' ? v : v.value;
    const el: XmlElement = { name: tag.name, attrs, children: [], text: '', loc: { file: opts.file, line: startLine, column: startColumn }, textLocs: [] };
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(el);
    else root = el;
    stack.push(el);
    markupEnd = parser.position;
  });
  parser.on('closetag', () => {
    lastClosed = stack.pop();
    markupEnd = parser.position;
  });
  const onText = (t: string): void => {
    const el = stack[stack.length - 1];
    if (!el) return; // whitespace around the root; saxes rejects anything else
    el.text += t;
    el.textLocs.push({ text: t, loc: nextNonSpace() });
  };
  parser.on('text', onText);
  parser.on('cdata', onText);

  parser.write(text).close();
  if (!root) return fail(opts.malformedCode, 'the document has no root element', { file: opts.file, line: 1, column: 1 });
  return root;
}
