// Generated input for the XML-RPC decoder (src/admin/xmlrpc.ts): whatever
// the bytes, it returns a value or throws a TrawlError with one of the
// documented XML-RPC codes, in bounded time; and every value the encoder
// can write reads back equal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TrawlError } from '../../src/core/errors.ts';
import { encodeMethodCall, encodeMethodResponse, parseMethodCall, parseMethodResponse, XmlRpcDouble, type XmlRpcValue } from '../../src/admin/xmlrpc.ts';

const DOCUMENTED = new Set(['TRAWL_ERR_XMLRPC_PARSE', 'TRAWL_ERR_XMLRPC_DTD', 'TRAWL_ERR_XMLRPC_STRUCTURE', 'TRAWL_ERR_XMLRPC_TYPE']);
/** Per document: generous for a 2-core machine shared with others, far below the seconds a quadratic path takes. */
const BOUND_MS = 1_000;
const RUNS = 200;

/** Runs one decode; fails on anything but a value or a documented TrawlError, or when it is slow. */
function decodes(decode: () => unknown, input: unknown): void {
  const t0 = performance.now();
  try {
    decode();
  } catch (err) {
    if (!(err instanceof TrawlError) || !DOCUMENTED.has(err.code)) {
      assert.fail(`${err instanceof TrawlError ? err.code : (err as Error).name}: ${(err as Error).message} for ${JSON.stringify(input).slice(0, 300)}`);
    }
  }
  const ms = performance.now() - t0;
  assert.ok(ms < BOUND_MS, `${ms.toFixed(0)} ms for ${JSON.stringify(input).slice(0, 300)}`);
}

const XML_CHAR = /^[\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;
const xmlString = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => XML_CHAR.test(s));

const value: fc.Arbitrary<XmlRpcValue> = fc.letrec<{ v: XmlRpcValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    fc.boolean(),
    xmlString,
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => new XmlRpcDouble(d)),
    // dateTime.iso8601 carries whole seconds, years 0000–9999.
    fc.integer({ min: -62167219200, max: 253402300799 }).map((s) => new Date(s * 1000)),
    fc.uint8Array({ maxLength: 64 }),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(xmlString, tie('v'), { maxKeys: 4, noNullPrototype: true }),
  ),
})).v;

/** Elements and texts of XML-RPC, combined in ways the grammar does not allow. */
const NAMES = ['methodCall', 'methodName', 'methodResponse', 'params', 'param', 'value', 'int', 'i4', 'i8', 'boolean', 'string', 'double', 'dateTime.iso8601', 'base64', 'array', 'data', 'struct', 'member', 'name', 'fault', 'nil', 'x'];
const TEXTS = ['', ' ', '\n', '0', '1', '-0', '+7', '2147483648', '9223372036854775808', '1e400', '.5', 'NaN', 'abc', 'QUJD', 'QQ==', 'Q===', 'QQ=Q', '19980717T14:08:55', '2024-02-30T00:00:00', 'constructor', '__proto__', '&amp;&lt;', '&#0;', '<![CDATA[]]>', '<!-- c -->'];
interface Node {
  name: string;
  text: string;
  children: Node[];
}
const node: fc.Arbitrary<Node> = fc.letrec<{ n: Node }>((tie) => ({
  n: fc.record({
    name: fc.constantFrom(...NAMES),
    text: fc.constantFrom(...TEXTS),
    children: fc.oneof({ depthSize: 'small' }, fc.constant<Node[]>([]), fc.array(tie('n'), { maxLength: 4 })),
  }),
})).n;
const render = (n: Node): string => `<${n.name}>${n.text}${n.children.map(render).join('')}</${n.name}>`;

describe('the XML-RPC decoder under generated input', () => {
  it('arbitrary strings never throw past the decoder, and finish in bounded time', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => {
      decodes(() => parseMethodCall(s), s);
      decodes(() => parseMethodResponse(s), s);
    }), { numRuns: RUNS });
  });

  it('arbitrary bytes, and bytes after a valid call\'s prefix, never throw past the decoder', () => {
    const prefix = Buffer.from(encodeMethodCall('AddURIs', ['web', 0, ['http://a/']]));
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat({ max: prefix.length }), (bytes, cut) => {
      decodes(() => parseMethodCall(bytes), bytes);
      const spliced = Buffer.concat([prefix.subarray(0, cut), bytes]);
      decodes(() => parseMethodCall(spliced), spliced.toString('latin1'));
    }), { numRuns: RUNS });
  });

  it('well-formed but odd documents never throw past the decoder', () => {
    fc.assert(fc.property(fc.array(node, { maxLength: 4 }), fc.constantFrom('methodCall', 'methodResponse'), (children, root) => {
      const doc = `<?xml version="1.0"?><${root}>${children.map(render).join('')}</${root}>`;
      decodes(() => parseMethodCall(doc), doc);
      decodes(() => parseMethodResponse(doc), doc);
    }), { numRuns: RUNS });
  });

  it('values round-trip through encode and decode, as calls and as responses', () => {
    fc.assert(fc.property(fc.array(value, { maxLength: 4 }), (params) => {
      assert.deepEqual(parseMethodCall(encodeMethodCall('validator1.echo', params)).params, params);
      for (const p of params) assert.deepEqual(parseMethodResponse(encodeMethodResponse(p)), { value: p });
    }), { numRuns: RUNS });
  });

  it('a struct member named __proto__ stays a member, and a bounded number of values is read', () => {
    const v = parseMethodCall('<methodCall><methodName>m</methodName><params><param><value><struct><member><name>__proto__</name><value><int>1</int></value></member></struct></value></param></params></methodCall>').params[0] as Record<string, XmlRpcValue>;
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.deepEqual(Object.keys(v), ['__proto__']);
    const many = `<methodCall><methodName>m</methodName><params><param><value><array><data>${'<value>x</value>'.repeat(11)}</data></array></value></param></params></methodCall>`;
    assert.throws(() => parseMethodCall(many, { maxValues: 10 }), (e: unknown) => e instanceof TrawlError && e.code === 'TRAWL_ERR_XMLRPC_STRUCTURE' && /more than 10 values/.test(e.message));
    assert.equal((parseMethodCall(many, { maxValues: 12 }).params[0] as unknown[]).length, 11);
  });
});
