/**
 * The XML-RPC codec of the admin protocol (MS-FSCADM 2.1–2.2: XML-RPC bodies
 * POSTed to /RPC2). No transport here: bodies in, values out, and back.
 *
 * How XML-RPC types map to JavaScript values:
 *
 *   XML-RPC                       parse gives         encode writes it for
 *   ───────────────────────────   ─────────────────   ───────────────────────────────────
 *   <int>, <i4>                   number              number, integer in int32
 *   <i8>                          bigint              bigint; number, integer beyond int32
 *   <double>                      XmlRpcDouble        XmlRpcDouble; any other number
 *   <boolean>                     boolean             boolean
 *   <string>, untyped <value>     string              string
 *   <dateTime.iso8601>            Date (UTC)          Date
 *   <base64>                      Uint8Array          Uint8Array (a Buffer is one)
 *   <array><data>…                XmlRpcValue[]       array
 *   <struct><member>…             plain object        plain object (own enumerable keys)
 *
 * Parsing keeps the wire type: encode(parse(body)) writes the same type
 * elements (`<i4>` comes back as `<int>`), which the validator1 echo methods
 * need. A `<double>` therefore parses to an XmlRpcDouble, not a number.
 *
 * Not supported, on purpose: the `<nil/>` extension (MS-FSCADM has no null
 * value; a `<nil/>` is refused with TRAWL_ERR_XMLRPC_TYPE and null/undefined
 * cannot be encoded), and any DOCTYPE (src/core/xml.ts refuses it: no
 * entities, so no XXE and no billion laughs).
 *
 * Errors are TrawlErrors whose message starts with the position in the body
 * ("line 7, column 8: …"), so a fault string built from the message alone
 * still tells the client where its request went wrong.
 */

import { TrawlError, type ErrorCode } from '../core/errors.ts';
import { decodeUtf8, readXmlTree, type XmlElement } from '../core/xml.ts';

import { XmlRpcDouble } from '../core/xmlrpc-value.ts';

export { XmlRpcDouble };

export type XmlRpcValue =
  | number
  | bigint
  | boolean
  | string
  | Date
  | Uint8Array
  | XmlRpcDouble
  | XmlRpcValue[]
  | { [member: string]: XmlRpcValue };

export type XmlRpcStruct = { [member: string]: XmlRpcValue };

export interface MethodCall {
  readonly methodName: string;
  readonly params: XmlRpcValue[];
}

export interface Fault {
  readonly faultCode: number;
  readonly faultString: string;
}

export type MethodResponse = { readonly value: XmlRpcValue } | { readonly fault: Fault };

export interface ParseOptions {
  /** Bytes at most (default 16 MiB). Checked before anything is decoded. */
  readonly maxBytes?: number;
  /** Element nesting at most (default 64, capped at 512). Each array or struct level takes 3 elements. */
  readonly maxDepth?: number;
  /**
   * Markup tags (`<` characters) at most (default 400,000), counted in one
   * pass before the element tree is built: the tree costs several hundred
   * bytes an element, so this bounds the memory and time a body can take.
   */
  readonly maxTags?: number;
  /** `<value>` elements at most, at any depth (default 100,000). */
  readonly maxValues?: number;
}

const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
const DEFAULT_MAX_DEPTH = 64;
const MAX_DEPTH_CAP = 512;
const DEFAULT_MAX_TAGS = 400_000;
const DEFAULT_MAX_VALUES = 100_000;

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** True for a value that encodes as `<struct>`. */
export function isStruct(v: unknown): v is XmlRpcStruct {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

// ─── Parsing ────────────────────────────────────────────────────────────────

export function parseMethodCall(body: Uint8Array | string, opts: ParseOptions = {}): MethodCall {
  return guarded(() => {
    const root = readBody(body, opts);
    const budget = valueBudget(opts);
    expectName(root, 'methodCall');
    noText(root);
    let methodName: string | undefined;
    let params: XmlRpcValue[] = [];
    let seenParams = false;
    for (const child of root.children) {
      if (child.name === 'methodName') {
        if (methodName !== undefined) structure(child, '<methodCall> has two <methodName> elements');
        if (child.children.length > 0) structure(child.children[0]!, '<methodName> holds text only');
        methodName = child.text.trim();
        if (methodName === '') structure(child, '<methodName> is empty');
        // XML-RPC spec: "identifier characters, upper and lower-case A-Z, the
        // numeric characters, 0-9, underscore, dot, colon and slash".
        if (!/^[A-Za-z0-9_.:/]+$/.test(methodName)) {
          structure(child, `method name ${JSON.stringify(methodName)} may only hold A-Z, a-z, 0-9, "_", ".", ":" and "/"`);
        }
      } else if (child.name === 'params') {
        if (seenParams) structure(child, '<methodCall> has two <params> elements');
        seenParams = true;
        params = readParams(child, budget);
      } else {
        structure(child, `unexpected <${child.name}> in <methodCall>; expected <methodName> and <params>`);
      }
    }
    if (methodName === undefined) structure(root, '<methodCall> has no <methodName>');
    return { methodName, params };
  });
}

/** Reads a response for the admin client: one value, or a fault. */
export function parseMethodResponse(body: Uint8Array | string, opts: ParseOptions = {}): MethodResponse {
  return guarded(() => {
    const root = readBody(body, opts);
    const budget = valueBudget(opts);
    expectName(root, 'methodResponse');
    noText(root);
    const [only, extra] = root.children;
    if (!only) structure(root, '<methodResponse> is empty; expected <params> or <fault>');
    if (extra) structure(extra, `unexpected <${extra.name}> after <${only.name}>; a response holds one <params> or one <fault>`);
    if (only.name === 'params') {
      const params = readParams(only, budget);
      if (params.length !== 1) structure(only, `a response's <params> holds exactly one <param>, not ${params.length}`);
      return { value: params[0]! };
    }
    if (only.name === 'fault') {
      noText(only);
      const [valueEl, more] = only.children;
      if (!valueEl || more) structure(more ?? only, '<fault> holds exactly one <value>');
      expectName(valueEl, 'value');
      const v = readValue(valueEl, budget);
      if (!isStruct(v)) structure(valueEl, '<fault> holds a <struct> with faultCode and faultString');
      const { faultCode, faultString } = v;
      if (typeof faultCode !== 'number') structure(valueEl, 'the fault struct needs an <int> member faultCode');
      if (typeof faultString !== 'string') structure(valueEl, 'the fault struct needs a <string> member faultString');
      return { fault: { faultCode, faultString } };
    }
    return structure(only, `unexpected <${only.name}> in <methodResponse>; expected <params> or <fault>`);
  });
}

/** Turns any non-TrawlError escaping the parser into one: callers get one kind of error. */
function guarded<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof TrawlError) throw err;
    throw new TrawlError('TRAWL_ERR_INTERNAL', `XML-RPC parser failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** Decodes the body and reads its element tree; every error names its line and column. */
function readBody(body: Uint8Array | string, opts: ParseOptions): XmlElement {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxDepth = Math.min(opts.maxDepth ?? DEFAULT_MAX_DEPTH, MAX_DEPTH_CAP);
  const size = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  if (size > maxBytes) fail('TRAWL_ERR_XMLRPC_PARSE', `the body is ${size} bytes; at most ${maxBytes} are read`);
  const text = decodeBody(body);
  const maxTags = opts.maxTags ?? DEFAULT_MAX_TAGS;
  let tags = 0;
  for (let i = text.indexOf('<'); i !== -1; i = text.indexOf('<', i + 1)) {
    if (++tags > maxTags) fail('TRAWL_ERR_XMLRPC_PARSE', `the body has more than ${maxTags} tags; split the call into smaller ones`);
  }
  try {
    return readXmlTree(text, {
      maxBytes,
      maxDepth,
      malformedCode: 'TRAWL_ERR_XMLRPC_PARSE',
      doctypeCode: 'TRAWL_ERR_XMLRPC_DTD',
      encodingCode: 'TRAWL_ERR_XMLRPC_PARSE',
    });
  } catch (err) {
    // Put the reader's location into the message (see the module comment).
    if (err instanceof TrawlError && err.location?.line !== undefined) {
      throw new TrawlError(err.code, `${position(err.location.line, err.location.column)}: ${err.message}`, { cause: err });
    }
    throw err;
  }
}

/**
 * Bytes to text. UTF-8 unless the XML declaration says ISO-8859-1 or
 * US-ASCII (validator1's requests declare iso-8859-1). The declaration's
 * encoding is then blanked out with spaces (so lines and columns stay put)
 * because the text handed to the XML reader is already decoded.
 */
function decodeBody(body: Uint8Array | string): string {
  let text: string;
  if (typeof body === 'string') {
    text = body;
  } else {
    if ((body[0] === 0xff && body[1] === 0xfe) || (body[0] === 0xfe && body[1] === 0xff) || (body[0] === 0x3c && body[1] === 0x00) || (body[0] === 0x00 && body[1] === 0x3c)) {
      fail('TRAWL_ERR_XMLRPC_PARSE', `${position(1, 1)}: the body is UTF-16; XML-RPC bodies are read as UTF-8 (or ISO-8859-1/US-ASCII when declared)`);
    }
    const hasBom = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
    const declared = hasBom ? undefined : declaredEncoding(Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, 256)).toString('latin1'));
    const name = declared?.toLowerCase().replace(/_/g, '-');
    if (name === undefined || name === 'utf-8' || name === 'utf8') {
      try {
        text = decodeUtf8(body, { encodingCode: 'TRAWL_ERR_XMLRPC_PARSE' });
      } catch (err) {
        if (err instanceof TrawlError) fail(err.code, `${position(err.location?.line ?? 1)}: ${err.message}`);
        throw err;
      }
    } else if (name === 'iso-8859-1' || name === 'latin1' || name === 'l1' || name === 'us-ascii' || name === 'ascii') {
      const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      if (name.endsWith('ascii')) {
        const bad = bytes.findIndex((b) => b >= 0x80);
        if (bad >= 0) fail('TRAWL_ERR_XMLRPC_PARSE', `${position(lineAt(bytes, bad))}: byte 0x${bytes[bad]!.toString(16)} at offset ${bad} is not US-ASCII, as the XML declaration says`);
      }
      text = bytes.toString('latin1');
    } else {
      fail('TRAWL_ERR_XMLRPC_PARSE', `${position(1)}: the XML declaration names encoding ${JSON.stringify(declared)}; XML-RPC bodies are read as UTF-8, ISO-8859-1 or US-ASCII`);
    }
  }
  return text.replace(/^(\uFEFF?<\?xml\s[^?]*?)(\s+encoding\s*=\s*(["'])[^"']*\3)/, (_m, head: string, enc: string) => head + ' '.repeat(enc.length));
}

function declaredEncoding(head: string): string | undefined {
  const decl = /^<\?xml\s[^?]*\?>/.exec(head)?.[0];
  return decl ? /\sencoding\s*=\s*(["'])([^"']*)\1/.exec(decl)?.[2] : undefined;
}

function lineAt(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  return line;
}

/** How many more `<value>` elements a body may hold (ParseOptions.maxValues). */
interface Budget {
  left: number;
  readonly max: number;
}

function valueBudget(opts: ParseOptions): Budget {
  const max = opts.maxValues ?? DEFAULT_MAX_VALUES;
  return { left: max, max };
}

function readParams(paramsEl: XmlElement, budget: Budget): XmlRpcValue[] {
  noText(paramsEl);
  return paramsEl.children.map((param) => {
    expectName(param, 'param', 'in <params>');
    noText(param);
    const [valueEl, extra] = param.children;
    if (!valueEl) structure(param, '<param> is empty; it holds one <value>');
    if (extra) structure(extra, `unexpected <${extra.name}> after the <value> of a <param>`);
    expectName(valueEl, 'value', 'in <param>');
    return readValue(valueEl, budget);
  });
}

/** Recursion depth is bounded by the reader's maxDepth (3 elements per array or struct level). */
function readValue(valueEl: XmlElement, budget: Budget): XmlRpcValue {
  if (--budget.left < 0) structure(valueEl, `the body holds more than ${budget.max} values; split the call into smaller ones`);
  const [typeEl, extra] = valueEl.children;
  // XML-RPC spec: "If no type is indicated, the type is string."
  if (!typeEl) return valueEl.text;
  if (extra) structure(extra, `a <value> holds one type element; <${extra.name}> follows <${typeEl.name}>`);
  noText(valueEl, `beside <${typeEl.name}>`);
  if (typeEl.name === 'array') return readArray(typeEl, budget);
  if (typeEl.name === 'struct') return readStruct(typeEl, budget);
  if (typeEl.name === 'nil' || typeEl.name === 'ex:nil') {
    type(typeEl, 'the <nil/> extension is not supported (MS-FSCADM has no null value)');
  }
  if (!SCALARS.has(typeEl.name)) {
    structure(typeEl, `unknown XML-RPC type <${typeEl.name}>; expected one of int, i4, i8, boolean, string, double, dateTime.iso8601, base64, array, struct`);
  }
  if (typeEl.children.length > 0) structure(typeEl.children[0]!, `<${typeEl.name}> holds text only, not <${typeEl.children[0]!.name}>`);
  const raw = typeEl.text;
  switch (typeEl.name) {
    case 'string':
      return raw;
    case 'int':
    case 'i4':
      return readInt(typeEl, raw.trim());
    case 'i8':
      return readI8(typeEl, raw.trim());
    case 'boolean':
      return readBoolean(typeEl, raw.trim());
    case 'double':
      return readDouble(typeEl, raw.trim());
    case 'dateTime.iso8601':
      return readDateTime(typeEl, raw.trim());
    default:
      return readBase64(typeEl, raw);
  }
}

const SCALARS = new Set(['int', 'i4', 'i8', 'boolean', 'string', 'double', 'dateTime.iso8601', 'base64']);

function readArray(arrayEl: XmlElement, budget: Budget): XmlRpcValue[] {
  noText(arrayEl);
  const [data, extra] = arrayEl.children;
  if (!data) structure(arrayEl, '<array> needs a <data> element (empty: <array><data/></array>)');
  if (extra) structure(extra, `unexpected <${extra.name}> after <data> in <array>`);
  expectName(data, 'data', 'in <array>');
  noText(data);
  return data.children.map((v) => {
    expectName(v, 'value', 'in <data>');
    return readValue(v, budget);
  });
}

function readStruct(structEl: XmlElement, budget: Budget): XmlRpcStruct {
  noText(structEl);
  const out: XmlRpcStruct = {};
  for (const member of structEl.children) {
    expectName(member, 'member', 'in <struct>');
    noText(member);
    let nameEl: XmlElement | undefined;
    let valueEl: XmlElement | undefined;
    for (const c of member.children) {
      if (c.name === 'name' && !nameEl) nameEl = c;
      else if (c.name === 'value' && !valueEl) valueEl = c;
      else structure(c, `unexpected <${c.name}> in <member>; a member holds one <name> and one <value>`);
    }
    if (!nameEl) structure(member, '<member> has no <name>');
    if (!valueEl) structure(member, `<member> ${JSON.stringify(nameEl.text)} has no <value>`);
    if (nameEl.children.length > 0) structure(nameEl.children[0]!, '<name> holds text only');
    const name = nameEl.text;
    if (Object.hasOwn(out, name)) structure(nameEl, `member ${JSON.stringify(name)} appears twice in one <struct>`);
    // defineProperty, not assignment: a member named "__proto__" must stay data.
    Object.defineProperty(out, name, { value: readValue(valueEl, budget), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function readInt(el: XmlElement, s: string): number {
  if (!/^[+-]?\d+$/.test(s)) type(el, `<${el.name}> ${JSON.stringify(s)} is not an integer`);
  const n = Number(s);
  if (n < INT32_MIN || n > INT32_MAX) {
    type(el, `<${el.name}> ${s} is outside the 32-bit range ${INT32_MIN}..${INT32_MAX} (use <i8> for larger integers)`);
  }
  return n === 0 ? 0 : n; // no -0
}

function readI8(el: XmlElement, s: string): bigint {
  if (!/^[+-]?\d+$/.test(s)) type(el, `<i8> ${JSON.stringify(s)} is not an integer`);
  const n = BigInt(s);
  if (n < INT64_MIN || n > INT64_MAX) type(el, `<i8> ${s} is outside the 64-bit range ${INT64_MIN}..${INT64_MAX}`);
  return n;
}

function readBoolean(el: XmlElement, s: string): boolean {
  if (s === '1') return true;
  if (s === '0') return false;
  return type(el, `<boolean> is 0 or 1, not ${JSON.stringify(s)}`);
}

function readDouble(el: XmlElement, s: string): XmlRpcDouble {
  // The XML-RPC spec allows only [+-]digits.digits; exponents are accepted
  // too because common clients (Python's repr, e.g. 1e+21) send them.
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(s)) {
    type(el, `<double> ${JSON.stringify(s)} is not a decimal number${/nan|inf/i.test(s) ? ' (XML-RPC has no NaN or infinity)' : ''}`);
  }
  const n = Number(s);
  if (!Number.isFinite(n)) type(el, `<double> ${s} is outside the range of a 64-bit double`);
  return new XmlRpcDouble(n);
}

/**
 * `19980717T14:08:55` (the XML-RPC form) and the ISO 8601 extended form
 * `1998-07-17T14:08:55`, each with optional fractional seconds and an
 * optional zone (`Z`, `+02:00`, `+0200`). A time without a zone is read as
 * UTC (MS-FSCADM 2.2.1.5 timestamps are UTC) so it is written back unchanged.
 */
function readDateTime(el: XmlElement, s: string): Date {
  const m = /^(\d{4})(-?)(\d{2})\2(\d{2})T(\d{2})(:?)(\d{2})\6(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:?\d{2})?$/.exec(s);
  if (!m) {
    type(el, `<dateTime.iso8601> ${JSON.stringify(s)} is not a date and time like 19980717T14:08:55 or 1998-07-17T14:08:55Z`);
  }
  const [, y, , mo, d, h, , mi, sec, frac, zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(sec);
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0; // finer digits are dropped
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // not Date.UTC: it maps years 0–99 to 1900–1999
  date.setUTCHours(hour, minute, second, ms);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    type(el, `<dateTime.iso8601> ${JSON.stringify(s)} is not a valid calendar date and time`);
  }
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
    if (Number(digits.slice(2)) > 59 || Number(digits.slice(0, 2)) > 23) type(el, `<dateTime.iso8601> zone ${zone} is not a valid offset`);
    date.setTime(date.getTime() - sign * offsetMin * 60_000);
  }
  return date;
}

/**
 * RFC 2045 base64; line breaks and other white space are ignored. Checked
 * with character classes and indexOf only: a regular expression with a
 * repeated group over the whole value backtracks once per group and
 * overflowed the stack on values of a few MiB.
 */
function readBase64(el: XmlElement, raw: string): Uint8Array {
  const s = raw.replace(/[\t\n\r ]+/g, '');
  const bad = /[^A-Za-z0-9+/=]/.exec(s);
  if (bad) type(el, `<base64> holds ${JSON.stringify(bad[0])}, which is not a base64 character`);
  if (s.length % 4 !== 0) type(el, `<base64> is not valid base64: ${s.length} characters, not a multiple of 4`);
  const pad = s.indexOf('=');
  // "=" pads the last group only: "xx==" or "xxx=".
  if (pad !== -1 && (pad < s.length - 2 || (pad === s.length - 2 && s[s.length - 1] !== '='))) {
    type(el, '<base64> is not valid base64: "=" may only pad the end');
  }
  return new Uint8Array(Buffer.from(s, 'base64'));
}

// ─── Structure checks ───────────────────────────────────────────────────────

function position(line: number, column?: number): string {
  return column === undefined ? `line ${line}` : `line ${line}, column ${column}`;
}

function fail(code: ErrorCode, message: string): never {
  throw new TrawlError(code, message);
}

function at(el: XmlElement): string {
  return position(el.loc.line ?? 1, el.loc.column);
}

function structure(el: XmlElement, message: string): never {
  return fail('TRAWL_ERR_XMLRPC_STRUCTURE', `${at(el)}: ${message}`);
}

function type(el: XmlElement, message: string): never {
  return fail('TRAWL_ERR_XMLRPC_TYPE', `${at(el)}: ${message}`);
}

function expectName(el: XmlElement, name: string, where = ''): void {
  if (el.name !== name) structure(el, `expected <${name}>${where ? ` ${where}` : ''}, found <${el.name}>`);
}

/** Refuses non-blank text directly inside a container element. */
function noText(el: XmlElement, where = `in <${el.name}>`): void {
  for (const t of el.textLocs) {
    const s = t.text.trim();
    if (s !== '') fail('TRAWL_ERR_XMLRPC_STRUCTURE', `${position(t.loc.line ?? 1, t.loc.column)}: unexpected text ${JSON.stringify(s.slice(0, 40))} ${where}`);
  }
}

// ─── Encoding ───────────────────────────────────────────────────────────────

const XML_DECL = '<?xml version="1.0" encoding="UTF-8"?>\n';

export function encodeMethodCall(name: string, params: readonly XmlRpcValue[]): string {
  if (!/^[A-Za-z0-9_.:/]+$/.test(name)) {
    fail('TRAWL_ERR_XMLRPC_STRUCTURE', `method name ${JSON.stringify(name)} may only hold A-Z, a-z, 0-9, "_", ".", ":" and "/"`);
  }
  const ps = params.map((p, i) => `<param><value>${encodeValue(p, `params[${i}]`, new Set())}</value></param>\n`).join('');
  return `${XML_DECL}<methodCall>\n<methodName>${name}</methodName>\n<params>\n${ps}</params>\n</methodCall>\n`;
}

export function encodeMethodResponse(value: XmlRpcValue): string {
  return `${XML_DECL}<methodResponse>\n<params>\n<param><value>${encodeValue(value, 'result', new Set())}</value></param>\n</params>\n</methodResponse>\n`;
}

/**
 * A fault response. MS-FSCADM 2.2.7 says faultCode MUST be 1; the caller
 * passes it. Never fails on the message: characters XML cannot carry are
 * replaced with U+FFFD, so reporting an error cannot raise another.
 */
export function encodeFault(code: number, message: string): string {
  if (!Number.isInteger(code) || code < INT32_MIN || code > INT32_MAX) {
    fail('TRAWL_ERR_XMLRPC_TYPE', `faultCode ${code} is not a 32-bit integer`);
  }
  const text = escapeText(String(message).replace(NOT_XML_CHAR, '\uFFFD'));
  return (
    `${XML_DECL}<methodResponse>\n<fault>\n<value><struct>` +
    `<member><name>faultCode</name><value><int>${code}</int></value></member>` +
    `<member><name>faultString</name><value><string>${text}</string></value></member>` +
    `</struct></value>\n</fault>\n</methodResponse>\n`
  );
}

/** Characters outside XML 1.0's Char production (controls, lone surrogates, U+FFFE/U+FFFF). */
const NOT_XML_CHAR = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** `&`, `<`, `>` (for "]]>") and CR, which XML would otherwise turn into LF. */
function escapeText(s: string): string {
  return s.replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#13;'));
}

function encodeString(s: string, path: string): string {
  const bad = new RegExp(NOT_XML_CHAR.source, 'u').exec(s);
  if (bad) {
    const cp = bad[0].codePointAt(0)!;
    fail('TRAWL_ERR_XMLRPC_TYPE', `${path}: U+${cp.toString(16).toUpperCase().padStart(4, '0')} at index ${bad.index} cannot be carried in XML`);
  }
  return escapeText(s);
}

function encodeValue(v: XmlRpcValue, path: string, open: Set<object>): string {
  switch (typeof v) {
    case 'string':
      return `<string>${encodeString(v, path)}</string>`;
    case 'boolean':
      return `<boolean>${v ? 1 : 0}</boolean>`;
    case 'number':
      if (!Number.isFinite(v)) fail('TRAWL_ERR_XMLRPC_TYPE', `${path}: ${v} cannot be encoded; XML-RPC has no NaN or infinity`);
      if (Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX) return `<int>${v === 0 ? 0 : v}</int>`;
      // <i8> for whole numbers beyond int32: MS-FSCADM 2.2.1.2 "long" is
      // 64-bit, and common clients (Python's xmlrpc.client among them) read <i8>.
      if (Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63) return `<i8>${BigInt(v)}</i8>`;
      return `<double>${decimal(v)}</double>`;
    case 'bigint':
      if (v < INT64_MIN || v > INT64_MAX) fail('TRAWL_ERR_XMLRPC_TYPE', `${path}: ${v} is outside the 64-bit range of <i8>`);
      return `<i8>${v}</i8>`;
    case 'object':
      break;
    default:
      return fail('TRAWL_ERR_XMLRPC_TYPE', `${path}: ${v === undefined ? 'undefined' : `a ${typeof v}`} cannot be encoded (XML-RPC has no such type; <nil/> is not supported)`);
  }
  if (v === null) return fail('TRAWL_ERR_XMLRPC_TYPE', `${path}: null cannot be encoded (<nil/> is not supported)`);
  if (v instanceof XmlRpcDouble) {
    if (typeof v.value !== 'number' || !Number.isFinite(v.value)) fail('TRAWL_ERR_XMLRPC_TYPE', `${path}: ${v.value} cannot be encoded; XML-RPC has no NaN or infinity`);
    return `<double>${decimal(v.value)}</double>`;
  }
  if (v instanceof Date) return `<dateTime.iso8601>${encodeDate(v, path)}</dateTime.iso8601>`;
  if (v instanceof Uint8Array) return `<base64>${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')}</base64>`;
  if (open.has(v)) fail('TRAWL_ERR_XMLRPC_TYPE', `${path}: the value contains itself; XML-RPC cannot carry cycles`);
  if (Array.isArray(v)) {
    open.add(v);
    const items = v.map((item, i) => `<value>${encodeValue(item, `${path}[${i}]`, open)}</value>`).join('');
    open.delete(v);
    return `<array><data>${items}</data></array>`;
  }
  if (!isStruct(v)) {
    const kind = (v as object).constructor?.name ?? 'object';
    return fail('TRAWL_ERR_XMLRPC_TYPE', `${path}: a ${kind} cannot be encoded; use a plain object for a <struct>`);
  }
  open.add(v);
  const members = Object.keys(v)
    .map((k) => `<member><name>${encodeString(k, `${path} member name`)}</name><value>${encodeValue(v[k]!, `${path}.${k}`, open)}</value></member>`)
    .join('');
  open.delete(v);
  return `<struct>${members}</struct>`;
}

/**
 * The shortest decimal that reads back as the same double, always with a
 * point and never with an exponent (the XML-RPC spec allows digits, a point
 * and a sign only): 40 → "40.0", 1e21 → "1000000000000000000000.0".
 */
function decimal(x: number): string {
  if (Object.is(x, -0)) return '-0.0';
  let s = String(x);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (m) {
    const [, sign, lead, frac = '', exp] = m;
    const digits = lead! + frac;
    const point = 1 + Number(exp);
    if (point <= 0) s = `${sign}0.${'0'.repeat(-point)}${digits}`;
    else if (point >= digits.length) s = `${sign}${digits}${'0'.repeat(point - digits.length)}`;
    else s = `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
  }
  return s.includes('.') ? s : `${s}.0`;
}

/** `YYYYMMDDTHH:MM:SS` in UTC; milliseconds are dropped (the XML-RPC form has none). */
function encodeDate(d: Date, path: string): string {
  if (Number.isNaN(d.getTime())) fail('TRAWL_ERR_XMLRPC_TYPE', `${path}: an invalid Date cannot be encoded`);
  const year = d.getUTCFullYear();
  if (year < 0 || year > 9999) fail('TRAWL_ERR_XMLRPC_TYPE', `${path}: year ${year} does not fit dateTime.iso8601's four digits`);
  const p2 = (n: number): string => String(n).padStart(2, '0');
  return `${String(year).padStart(4, '0')}${p2(d.getUTCMonth() + 1)}${p2(d.getUTCDate())}T${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`;
}
