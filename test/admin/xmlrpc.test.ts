// The XML-RPC codec (src/admin/xmlrpc.ts) and the validator1 methods
// (src/admin/validator1.ts): the validator1 fixed requests, round trips of
// every type, the MS-FSCADM section 4 examples, interop with Python's
// xmlrpc.client in both directions, and malformed input.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  encodeFault,
  encodeMethodCall,
  encodeMethodResponse,
  parseMethodCall,
  parseMethodResponse,
  XmlRpcDouble,
  type XmlRpcStruct,
  type XmlRpcValue,
} from '../../src/admin/xmlrpc.ts';
import {
  arrayOfStructsTest,
  countTheEntities,
  easyStructTest,
  moderateSizeArrayCheck,
  nestedStructTest,
  simpleStructReturnTest,
  VALIDATOR1_METHODS,
} from '../../src/admin/validator1.ts';
import { TrawlError, type ErrorCode } from '../../src/core/errors.ts';
import { FIXTURES } from '../helpers.ts';

const D = (n: number): XmlRpcDouble => new XmlRpcDouble(n);
const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));
const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0): Date => new Date(Date.UTC(y, mo - 1, d, h, mi, s));

/** Runs fn, which must throw a TrawlError with `code` whose message matches `message`; returns the error. */
function throwsTrawl(fn: () => unknown, code: ErrorCode, message: RegExp): TrawlError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof TrawlError, `expected a TrawlError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.match(err.message, message);
    return err;
  }
  return assert.fail(`expected ${code}, nothing was thrown`);
}

// ─── validator1 ────────────────────────────────────────────────────────────

describe('validator1 fixed requests (test/fixtures/conformance/xmlrpc)', () => {
  const DIR = `${FIXTURES}conformance/xmlrpc/xmlrpc-validator1/`;
  // The "expected return value" table of xmlrpc-validator1.md.
  const EXPECTED: Record<string, XmlRpcValue> = {
    arrayOfStructsTest: 24,
    countTheEntities: { ctLeftAngleBrackets: 3, ctRightAngleBrackets: 2, ctAmpersands: 2, ctApostrophes: 3, ctQuotes: 1 },
    easyStructTest: 19,
    echoStructTest: { moe: 5, larry: 6, curly: 8 },
    manyTypesTest: [1, true, 'foo', D(3.14159), utc(2006, 1, 16, 19, 14, 3), bytes('foobar')],
    moderateSizeArrayCheck: 'foobar',
    nestedStructTest: 35,
    simpleStructReturnTest: { times10: 130, times100: 1300, times1000: 13000 },
  };

  it('has the eight request files, one per method', () => {
    const files = readdirSync(DIR).sort();
    assert.deepEqual(files, Object.keys(EXPECTED).map((m) => `${m}.request.xml`).sort());
    assert.deepEqual(Object.keys(VALIDATOR1_METHODS).sort(), Object.keys(EXPECTED).map((m) => `validator1.${m}`).sort());
  });

  for (const [method, expected] of Object.entries(EXPECTED)) {
    it(`${method}: parses, runs and answers ${JSON.stringify(expected)}`, () => {
      const call = parseMethodCall(readFileSync(`${DIR}${method}.request.xml`));
      assert.equal(call.methodName, `validator1.${method}`);
      const result = VALIDATOR1_METHODS[call.methodName]!(call.params);
      assert.deepStrictEqual(result, expected);
      // The answer survives our own encoding, types included.
      assert.deepStrictEqual(parseMethodResponse(encodeMethodResponse(result)), { value: expected });
    });
  }

  it('manyTypesTest answers with the same XML-RPC types, dateTime unconverted and base64 of the same bytes', () => {
    const call = parseMethodCall(readFileSync(`${DIR}manyTypesTest.request.xml`));
    const xml = encodeMethodResponse(VALIDATOR1_METHODS['validator1.manyTypesTest']!(call.params));
    assert.match(
      xml,
      /<data><value><int>1<\/int><\/value><value><boolean>1<\/boolean><\/value><value><string>foo<\/string><\/value><value><double>3\.14159<\/double><\/value><value><dateTime\.iso8601>20060116T19:14:03<\/dateTime\.iso8601><\/value><value><base64>Zm9vYmFy<\/base64><\/value><\/data>/,
    );
  });

  it('moderateSizeArrayCheck request holds 152 strings: foo, 150 × "bla bla bla", bar', () => {
    const [list] = parseMethodCall(readFileSync(`${DIR}moderateSizeArrayCheck.request.xml`)).params;
    assert.ok(Array.isArray(list));
    assert.equal(list.length, 152);
    assert.deepEqual([list[0], list[151], new Set(list.slice(1, 151))], ['foo', 'bar', new Set(['bla bla bla'])]);
  });

  it('random inputs like the original validator, sent once as <int> and once as <i4>', () => {
    let seed = 42;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const int = (): number => rnd(2001) - 1000;
    for (let round = 0; round < 20; round++) {
      const stooge = (): XmlRpcStruct => ({ moe: int(), larry: int(), curly: int() });
      const structs = Array.from({ length: 1 + rnd(8) }, stooge);
      const easy = stooge();
      const calendar: XmlRpcStruct = {};
      for (const y of ['1999', '2000', '2001']) {
        const months: XmlRpcStruct = {};
        for (const m of ['01', '04', '12']) {
          const days: XmlRpcStruct = {};
          for (const d of ['01', '02', '30']) days[d] = y === '2000' && m === '04' && d === '01' ? easy : {};
          months[m] = days;
        }
        calendar[y] = months;
      }
      const strings = Array.from({ length: 100 + rnd(101) }, () => Math.random().toString(36).slice(2));
      const special = `<>&'"`;
      const text = Array.from({ length: 40 }, () => (rnd(2) ? special[rnd(5)] : 'x')).join('');
      const n = int();
      const cases: Array<[string, XmlRpcValue[], XmlRpcValue]> = [
        ['arrayOfStructsTest', [structs], structs.reduce((s, x) => s + (x.curly as number), 0)],
        ['easyStructTest', [easy], (easy.moe as number) + (easy.larry as number) + (easy.curly as number)],
        ['nestedStructTest', [calendar], (easy.moe as number) + (easy.larry as number) + (easy.curly as number)],
        ['moderateSizeArrayCheck', [strings], strings[0]! + strings[strings.length - 1]!],
        ['simpleStructReturnTest', [n], { times10: n * 10, times100: n * 100, times1000: n * 1000 }],
        ['echoStructTest', [{ substruct0: stooge(), substruct1: stooge(), substruct2: stooge() }], { substruct0: {}, substruct1: {}, substruct2: {} }],
        [
          'countTheEntities',
          [text],
          { ctLeftAngleBrackets: [...text].filter((c) => c === '<').length, ctRightAngleBrackets: [...text].filter((c) => c === '>').length, ctAmpersands: [...text].filter((c) => c === '&').length, ctApostrophes: [...text].filter((c) => c === "'").length, ctQuotes: [...text].filter((c) => c === '"').length },
        ],
      ];
      for (const [method, params, expected] of cases) {
        const want = method === 'echoStructTest' ? params[0]! : expected;
        for (const tag of ['int', 'i4']) {
          const body = encodeMethodCall(`validator1.${method}`, params).replace(/<(\/?)int>/g, `<$1${tag}>`);
          const call = parseMethodCall(body);
          const answer = parseMethodResponse(encodeMethodResponse(VALIDATOR1_METHODS[call.methodName]!(call.params)));
          assert.deepStrictEqual(answer, { value: want }, `${method} via <${tag}>`);
        }
      }
    }
  });

  it('wrong params are TRAWL_ERR_XMLRPC_PARAMS, never a crash', () => {
    throwsTrawl(() => easyStructTest([]), 'TRAWL_ERR_XMLRPC_PARAMS', /easyStructTest: takes 1 parameter, got 0/);
    throwsTrawl(() => easyStructTest([{ moe: 1, larry: 2 }]), 'TRAWL_ERR_XMLRPC_PARAMS', /member curly must be an int/);
    throwsTrawl(() => arrayOfStructsTest([[{ curly: 1 }, 'x']]), 'TRAWL_ERR_XMLRPC_PARAMS', /item 1 must be a struct/);
    throwsTrawl(() => arrayOfStructsTest([[{ curly: D(1) }]]), 'TRAWL_ERR_XMLRPC_PARAMS', /item 0: member curly must be an int/);
    throwsTrawl(() => countTheEntities([5]), 'TRAWL_ERR_XMLRPC_PARAMS', /must be a string/);
    throwsTrawl(() => moderateSizeArrayCheck([['a', 2, 'b']]), 'TRAWL_ERR_XMLRPC_PARAMS', /item 1 must be a string/);
    throwsTrawl(() => moderateSizeArrayCheck([[]]), 'TRAWL_ERR_XMLRPC_PARAMS', /non-empty array/);
    throwsTrawl(() => nestedStructTest([{ '2000': { '04': {} } }]), 'TRAWL_ERR_XMLRPC_PARAMS', /"2000" → "04" → "01"/);
    throwsTrawl(() => simpleStructReturnTest(['13']), 'TRAWL_ERR_XMLRPC_PARAMS', /must be an int/);
    throwsTrawl(() => VALIDATOR1_METHODS['validator1.manyTypesTest']!([1, true, 'foo', 3.5, new Date(0), bytes('')]), 'TRAWL_ERR_XMLRPC_PARAMS', /parameter 4 must be a double/);
    throwsTrawl(() => VALIDATOR1_METHODS['validator1.echoStructTest']!([[1]]), 'TRAWL_ERR_XMLRPC_PARAMS', /must be a struct/);
  });
});

// ─── Round trips ───────────────────────────────────────────────────────────

describe('round trips of every type', () => {
  const VALUES: Array<[string, XmlRpcValue]> = [
    ['int 0', 0],
    ['int -79', -79],
    ['int max', 2147483647],
    ['int min', -2147483648],
    ['i8 bigint', 9007199254740993n],
    ['i8 max', 2n ** 63n - 1n],
    ['i8 min', -(2n ** 63n)],
    ['i8 small', 5n],
    ['boolean true', true],
    ['boolean false', false],
    ['string empty', ''],
    ['string with markup', `<a href="x">&amp; ]]> 'q'</a>`],
    ['string with CR, LF, tab and spaces', '  a\r\nb\tc\r  '],
    ['string unicode', 'ünïcødé ✓ 𝄞 中文'],
    ['double fraction', D(3.14159)],
    ['double whole', D(40)],
    ['double negative zero', D(-0)],
    ['double huge', D(1.7976931348623157e308)],
    ['double tiny', D(5e-324)],
    ['double 1e21', D(1e21)],
    ['double 1e-7', D(1e-7)],
    ['dateTime', utc(1998, 7, 17, 14, 8, 55)],
    ['dateTime year 1', new Date('0001-01-01T00:00:00Z')],
    ['base64 empty', bytes('')],
    ['base64 all bytes', new Uint8Array(Array.from({ length: 256 }, (_, i) => i))],
    ['array empty', []],
    ['array mixed', [1, 'two', [D(3.5), [true]], {}]],
    ['struct empty', {}],
    ['struct nested', { moe: 5, 'with space & <amp>': [bytes('x'), { deep: { deeper: utc(2000, 4, 1) } }], '': 'empty name' }],
  ];

  for (const [name, v] of VALUES) {
    it(name, () => {
      assert.deepStrictEqual(parseMethodCall(encodeMethodCall('rt.value', [v])), { methodName: 'rt.value', params: [v] });
      assert.deepStrictEqual(parseMethodResponse(encodeMethodResponse(v)), { value: v });
    });
  }

  it('all types in one call, as UTF-8 bytes', () => {
    const params = VALUES.map(([, v]) => v);
    const body = new Uint8Array(Buffer.from(encodeMethodCall('all.types', params), 'utf8'));
    assert.deepStrictEqual(parseMethodCall(body), { methodName: 'all.types', params });
  });

  it('a struct member named __proto__ stays a member', () => {
    const body = '<methodCall><methodName>p</methodName><params><param><value><struct><member><name>__proto__</name><value><int>1</int></value></member></struct></value></param></params></methodCall>';
    const [s] = parseMethodCall(body).params;
    assert.equal(Object.getPrototypeOf(s), Object.prototype);
    assert.deepEqual(Object.keys(s as object), ['__proto__']);
    assert.match(encodeMethodResponse(s!), /<member><name>__proto__<\/name><value><int>1<\/int><\/value><\/member>/);
  });

  it('numbers choose their type: int within int32, <i8> beyond, <double> when fractional or forced', () => {
    const xml = encodeMethodCall('n', [1, -2147483648, 2147483648, -5e9, 2 ** 53 + 2, 0.5, 1e300, D(7), 42n]);
    const types = [...xml.matchAll(/<value><([\w.]+)>([^<]*)</g)].map((m) => `${m[1]} ${m[2]}`);
    assert.deepEqual(types, [
      'int 1',
      'int -2147483648',
      'i8 2147483648',
      'i8 -5000000000',
      'i8 9007199254740994',
      'double 0.5',
      `double 1${'0'.repeat(300)}.0`,
      'double 7.0',
      'i8 42',
    ]);
    // A whole number beyond int32 therefore comes back as a bigint.
    assert.deepStrictEqual(parseMethodCall(xml).params.slice(2, 5), [2147483648n, -5000000000n, 9007199254740994n]);
  });

  it('dates keep their UTC time and drop milliseconds', () => {
    const xml = encodeMethodResponse(new Date(Date.UTC(2009, 1, 9, 16, 5, 55, 789)));
    assert.match(xml, /<dateTime\.iso8601>20090209T16:05:55<\/dateTime\.iso8601>/);
    assert.deepStrictEqual(parseMethodResponse(xml), { value: utc(2009, 2, 9, 16, 5, 55) });
  });

  it('writes exactly these bytes for a response and a fault', () => {
    assert.equal(
      encodeMethodResponse([1, 'Queued collection contoso with 2 URIs']),
      '<?xml version="1.0" encoding="UTF-8"?>\n<methodResponse>\n<params>\n<param><value><array><data><value><int>1</int></value><value><string>Queued collection contoso with 2 URIs</string></value></data></array></value></param>\n</params>\n</methodResponse>\n',
    );
    assert.equal(
      encodeFault(1, 'no collection "a&b" <here>'),
      '<?xml version="1.0" encoding="UTF-8"?>\n<methodResponse>\n<fault>\n<value><struct><member><name>faultCode</name><value><int>1</int></value></member><member><name>faultString</name><value><string>no collection "a&amp;b" &lt;here&gt;</string></value></member></struct></value>\n</fault>\n</methodResponse>\n',
    );
    assert.deepStrictEqual(parseMethodResponse(encodeFault(1, 'no collection "a&b" <here>')), { fault: { faultCode: 1, faultString: 'no collection "a&b" <here>' } });
  });

  it('a fault message with characters XML cannot carry still encodes (U+FFFD in their place)', () => {
    assert.deepStrictEqual(parseMethodResponse(encodeFault(1, 'bad\u0000byte \uD800 \uFFFF end')), { fault: { faultCode: 1, faultString: 'bad\uFFFDbyte \uFFFD \uFFFD end' } });
  });

  it('XmlRpcDouble reads as its number', () => {
    assert.equal(+D(2.5) + 1, 3.5);
    assert.equal(`${D(40)}`, '40');
    assert.equal(JSON.stringify({ a: D(40) }), '{"a":40}');
  });
});

describe('reading what other XML-RPC writers send', () => {
  const call = (value: string): XmlRpcValue => parseMethodCall(`<methodCall><methodName>m</methodName><params><param><value>${value}</value></param></params></methodCall>`).params[0]!;

  it('<i4> and <int>, signs, surrounding white space', () => {
    assert.deepStrictEqual([call('<i4>-79</i4>'), call('<int>+5</int>'), call('<int> 12 </int>'), call('<i4>-0</i4>'), call('<i8>-12</i8>')], [-79, 5, 12, 0, -12n]);
  });

  it('an untyped <value> is a string, entities and character references decoded', () => {
    assert.equal(call('b&amp;amp;htj&amp;gt;x&#60;&#x3E;&apos;&quot;&#10;'), 'b&amp;htj&gt;x<>\'"\n');
    assert.equal(call(''), '');
    assert.equal(call('   '), '   ');
    assert.equal(call('<string/>'), '');
    assert.equal(call('<string><![CDATA[<raw> & ]]></string>'), '<raw> & ');
  });

  it('doubles with trailing zeros, exponents, no leading digit', () => {
    assert.deepStrictEqual([call('<double>3.141590</double>'), call('<double>1e+21</double>'), call('<double>-.5</double>'), call('<double>7</double>'), call('<double>2.</double>')], [D(3.14159), D(1e21), D(-0.5), D(7), D(2)]);
  });

  it('dateTime.iso8601 in its common forms', () => {
    const t = utc(1998, 7, 17, 14, 8, 55);
    for (const s of ['19980717T14:08:55', '1998-07-17T14:08:55', '1998-07-17T14:08:55Z', '19980717T140855', '1998-07-17T16:08:55+02:00', '19980717T09:08:55-0500', ' 19980717T14:08:55 ']) {
      assert.deepStrictEqual(call(`<dateTime.iso8601>${s}</dateTime.iso8601>`), t, s);
    }
    assert.deepStrictEqual(call('<dateTime.iso8601>1998-07-17T14:08:55.250Z</dateTime.iso8601>'), new Date(Date.UTC(1998, 6, 17, 14, 8, 55, 250)));
  });

  it('base64 with line breaks and an encoded newline', () => {
    assert.deepStrictEqual(call('<base64>Zm9v\nYmFy&#10;</base64>'), bytes('foobar'));
    assert.deepStrictEqual(call('<base64>Zm9vYg==</base64>'), bytes('foob'));
    assert.deepStrictEqual(call('<base64></base64>'), bytes(''));
  });

  it('a call without <params>, and member order or name case as sent', () => {
    assert.deepStrictEqual(parseMethodCall('<methodCall><methodName>system.listMethods</methodName></methodCall>'), { methodName: 'system.listMethods', params: [] });
    const s = call('<struct><member><value><int>1</int></value><name>B</name></member><member><name>b</name><value>2</value></member></struct>');
    assert.deepStrictEqual(s, { B: 1, b: '2' });
  });

  it('bodies declared ISO-8859-1 or US-ASCII are decoded as declared; a string body ignores its declaration', () => {
    const latin = Buffer.concat([Buffer.from("<?xml version='1.0' encoding='ISO-8859-1'?>\n<methodCall><methodName>m</methodName><params><param><value>caf"), Buffer.from([0xe9]), Buffer.from('</value></param></params></methodCall>')]);
    assert.deepStrictEqual(parseMethodCall(latin).params, ['café']);
    assert.deepStrictEqual(parseMethodCall(Buffer.from('<?xml version="1.0" encoding="us-ascii"?><methodCall><methodName>m</methodName></methodCall>')).methodName, 'm');
    assert.deepStrictEqual(parseMethodCall('<?xml version="1.0" encoding="iso-8859-1"?><methodCall><methodName>m</methodName><params><param><value>ü</value></param></params></methodCall>').params, ['ü']);
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<methodCall><methodName>m</methodName><params><param><value>ü</value></param></params></methodCall>')]);
    assert.deepStrictEqual(parseMethodCall(bom).params, ['ü']);
  });
});

// ─── MS-FSCADM section 4 examples ──────────────────────────────────────────

// Copied from MS-FSCADM section 4. In the published text, page breaks split
// two examples: 4.2's request repeats "</params></methodCall>" before its third
// param, and 4.3's response has stray closing tags where pages meet (after the
// "Progress" member of "cur", after "DocSizeAvg" of "complete"). The copies
// below join the pieces and drop those stray tags; every member is kept.
const EX41_REQUEST = `<?xml version='1.0'?>
<methodCall>
  <methodName>CollectionGetList</methodName>
  <params>
  </params>
</methodCall>
`;
const EX41_RESPONSE = `<?xml version='1.0'?>
<methodResponse>
  <params>
    <param>
      <value>
        <array>
          <data>
            <value><string>contoso</string></value>
            <value><string>web</string></value>
          </data>
        </array>
      </value>
    </param>
  </params>
</methodResponse>
`;
const EX42_REQUEST_FIRST_PAGE = `<?xml version='1.0'?>
<methodCall>
  <methodName>AddURIs</methodName>
  <params>
    <param>
      <value><string>contoso</string></value>
    </param>
    <param>
      <value><int>0</int></value>
    </param>
`;
const EX42_REQUEST_SECOND_PAGE = `    <param>
      <value>
        <array>
          <data>
            <value><string>http://www.contoso.com/</string></value>
            <value><string>http://www.contoso.com/about/</string></value>
          </data>
        </array>
      </value>
    </param>
  </params>
</methodCall>
`;
const EX42_REQUEST = EX42_REQUEST_FIRST_PAGE + EX42_REQUEST_SECOND_PAGE;
const EX42_RESPONSE = `<?xml version='1.0'?>
<methodResponse>
  <params>
    <param>
      <value>
        <array>
          <data>
            <value><int>1</int></value>
            <value><string>Queued collection contoso with 2 URIs</string></value>
          </data>
        </array>
      </value>
    </param>
  </params>
</methodResponse>
`;
const EX43_REQUEST = `<?xml version='1.0'?>
<methodCall>
  <methodName>CollectionGetStatistics2</methodName>
  <params>
    <param>
      <value><string>contoso</string></value>
    </param>
  </params>
</methodCall>
`;
const EX43_RESPONSE = `<?xml version='1.0'?>
<methodResponse>
  <params>
    <param>
      <value><array><data>
<value><int>1</int></value>
<value><struct>
<member>
  <name>cur</name>
  <value><struct>
    <member>
      <name>PPAdded</name>
      <value><double>40.0</double></value>
    </member>
    <member>
      <name>ReadNet</name>
      <value><double>174367.0</double></value>
    </member>
    <member>
      <name>Feeding</name>
      <value><int>1</int></value>
    </member>
    <member>
      <name>DLTimeMax</name>
      <value><double>0.20227789878845215</double></value>
    </member>
    <member>
      <name>Retries</name>
      <value><double>0.0</double></value>
    </member>
    <member>
      <name>DocSizeAvg</name>
      <value><double>4071.0</double></value>
    </member>
    <member>
      <name>PPURLsChange</name>
      <value><double>0.0</double></value>
    </member>
    <member>
      <name>DocumentStore</name>
      <value><int>40</int></value>
    </member>
    <member>
      <name>URISkip</name>
      <value><struct>
        </struct></value>
    </member>
    <member>
      <name>Uptime</name>
      <value><double>1234197854.7414169</double></value>
    </member>
    <member>
      <name>Epoch</name>
      <value><int>0</int></value>
    </member>
    <member>
      <name>FirstUpdate</name>
      <value><double>1234195119.4230039</double></value>
    </member>
    <member>
      <name>Progress</name>
      <value><array><data>
        <value><int>2</int></value>
        <value><string>1 days 8h 34m 23s until scratch refresh</string></value>
      </data></array></value>
    </member>
<member>
  <name>Local</name>
  <value><double>320.0</double></value>
</member>
<member>
  <name>Status</name>
  <value><string>Crawling</string></value>
</member>
<member>
  <name>PPSucceeded</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>PPDeleted</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>Deleted</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>LocalFwd</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>DataRateIn</name>
  <value><double>63.722122866030894</double></value>
</member>
<member>
  <name>PPModified</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>Downloaded</name>
  <value><double>40.0</double></value>
</member>
<member>
  <name>DLTimeAvg</name>
  <value><double>0.0075536489486694334</double></value>
</member>
<member>
  <name>WriteNet</name>
  <value><double>12790.0</double></value>
</member>
<member>
  <name>HTTPResponse</name>
  <value><struct>
    <member>
      <name>200</name>
      <value><double>41.0</double></value>
    </member>
    <member>
      <name>404</name>
      <value><double>1.0</double></value>
    </member>
  </struct></value>
</member>
<member>
  <name>DLTime</name>
  <value><double>0.30214595794677734</double></value>
</member>
<member>
  <name>MimeType</name>
  <value><struct>
    <member>
      <name>text/html</name>
      <value><double>40.0</double></value>
    </member>
  </struct></value>
</member>
<member>
  <name>Modified</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>DocSkip</name>
  <value><struct>
  </struct></value>
</member>
<member>
  <name>ActiveSites</name>
  <value><int>0</int></value>
</member>
<member>
  <name>DocRate</name>
  <value><double>0.014617931802699111</double></value>
</member>
<member>
  <name>Processed</name>
  <value><double>40.0</double></value>
</member>
<member>
  <name>DocSizeMax</name>
  <value><double>8460.0</double></value>
</member>
<member>
  <name>StatUpdated</name>
  <value><string>26.2s</string></value>
</member>
<member>
  <name>NodeSchedulerFwd</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>PPChecksums</name>
  <value><double>40.0</double></value>
</member>
<member>
  <name>LastRefresh</name>
  <value><int>1234195119</int></value>
</member>
<member>
  <name>LastUpdate</name>
  <value><double>1234197855.7882121</double></value>
</member>
<member>
    <name>PPFed</name>
    <value><double>0.0</double></value>
  </member>
  <member>
    <name>DataRateOut</name>
    <value><double>4.6740836939130403</double></value>
  </member>
  <member>
    <name>Unchanged</name>
    <value><double>0.0</double></value>
  </member>
  <member>
    <name>DocSize</name>
    <value><double>162862.0</double></value>
  </member>
  <member>
    <name>Stored</name>
    <value><double>40.0</double></value>
  </member>
  <member>
    <name>CrawlMode</name>
    <value><string></string></value>
  </member>
  <member>
    <name>PPPartialUpdate</name>
    <value><double>0.0</double></value>
  </member>
  <member>
    <name>PPFailed</name>
    <value><double>0.0</double></value>
  </member>
</struct></value>
</member>
<member>
  <name>complete</name>
  <value><struct>
    <member>
      <name>PPAdded</name>
      <value><double>40.0</double></value>
    </member>
    <member>
      <name>ReadNet</name>
      <value><double>174367.0</double></value>
    </member>
    <member>
      <name>Feeding</name>
      <value><int>1</int></value>
    </member>
    <member>
      <name>DLTimeMax</name>
      <value><double>0.20227789878845215</double></value>
    </member>
    <member>
      <name>Retries</name>
      <value><double>0.0</double></value>
    </member>
    <member>
      <name>DocSizeAvg</name>
      <value><double>4071.0</double></value>
    </member>
<member>
  <name>PPURLsChange</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>DocumentStore</name>
  <value><int>40</int></value>
</member>
<member>
  <name>URISkip</name>
  <value><struct>
  </struct></value>
</member>
<member>
  <name>Uptime</name>
  <value><double>1234197854.7414169</double></value>
</member>
<member>
  <name>DNSResponse</name>
  <value><struct>
  </struct></value>
</member>
<member>
  <name>Epoch</name>
  <value><int>0</int></value>
</member>
<member>
  <name>FirstUpdate</name>
  <value><double>1234195119.4230039</double></value>
</member>
<member>
  <name>Progress</name>
  <value><array><data>
  <value><int>2</int></value>
  <value><string>1 days 8h 34m 23s until scratch refresh</string></value>
  </data></array></value>
</member>
<member>
  <name>Local</name>
  <value><double>320.0</double></value>
</member>
<member>
  <name>DNSWrite</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>Status</name>
  <value><string>Crawling</string></value>
</member>
<member>
  <name>PPSucceeded</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>PPDeleted</name>
  <value><double>0.0</double></value>
</member>
<member>
    <name>Deleted</name>
    <value><double>0.0</double></value>
</member>
<member>
    <name>LocalFwd</name>
    <value><double>0.0</double></value>
</member>
<member>
    <name>DataRateIn</name>
    <value><double>63.722122866030894</double></value>
</member>
<member>
    <name>PPModified</name>
    <value><double>0.0</double></value>
</member>
<member>
    <name>Downloaded</name>
    <value><double>40.0</double></value>
</member>
<member>
    <name>Stored</name>
    <value><double>40.0</double></value>
</member>
<member>
    <name>DLTimeAvg</name>
    <value><double>0.0075536489486694334</double></value>
</member>
<member>
    <name>WriteNet</name>
    <value><double>12790.0</double></value>
</member>
<member>
    <name>HTTPResponse</name>
    <value><struct>
    <member>
        <name>200</name>
        <value><double>41.0</double></value>
    </member>
    <member>
        <name>404</name>
        <value><double>1.0</double></value>
    </member>
    </struct></value>
</member>
<member>
    <name>DLTime</name>
    <value><double>0.30214595794677734</double></value>
</member>
<member>
    <name>DNSTimeout</name>
    <value><double>0.0</double></value>
</member>
    <member>
    <name>MimeType</name>
    <value><struct>
    <member>
        <name>text/html</name>
        <value><double>40.0</double></value>
    </member>
</struct></value>
</member>
<member>
  <name>LastUpdate</name>
  <value><double>1234197855.7882121</double></value>
</member>
<member>
  <name>Modified</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>DocSkip</name>
  <value><struct>
  </struct></value>
</member>
<member>
  <name>ActiveSites</name>
  <value><int>0</int></value>
</member>
<member>
  <name>DocRate</name>
  <value><double>0.014617931802699111</double></value>
</member>
<member>
  <name>Processed</name>
  <value><double>40.0</double></value>
</member>
<member>
  <name>DocSizeMax</name>
  <value><double>8460.0</double></value>
</member>
<member>
  <name>StatUpdated</name>
  <value><string>26.2s</string></value>
</member>
<member>
  <name>NodeSchedulerFwd</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>PPChecksums</name>
  <value><double>40.0</double></value>
</member>
<member>
  <name>LastRefresh</name>
  <value><int>1234195119</int></value>
</member>
<member>
  <name>DNSRateLimit</name>
  <value><double>10.0</double></value>
</member>
<member>
  <name>PPFed</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>DataRateOut</name>
  <value><double>4.6740836939130403</double></value>
</member>
<member>
  <name>DNSRequests</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>Unchanged</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>DNSRetries</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>DocSize</name>
  <value><double>162862.0</double></value>
</member>
<member>
  <name>DNSResponses</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>CrawlMode</name>
  <value><string></string></value>
</member>
<member>
  <name>DNSRead</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>PPPartialUpdate</name>
  <value><double>0.0</double></value>
</member>
<member>
  <name>PPFailed</name>
  <value><double>0.0</double></value>
</member>
</struct></value>
</member>
<member>
  <name>delta</name>
  <value><struct>
    <member>
      <name>DNSRateLimit</name>
      <value><double>10.0</double></value>
    </member>
    <member>
      <name>DNSDataRateOut</name>
      <value><double>0.0</double></value>
    </member>
    <member>
      <name>DNSRetries</name>
      <value><double>0.0</double></value>
    </member>
    <member>
      <name>DNSRequests</name>
      <value><double>0.0</double></value>
    </member>
    <member>
      <name>DataRateIn</name>
    <value><double>0.0</double></value>
  </member>
  <member>
    <name>DNSResponse</name>
    <value><struct>
      </struct></value>
  </member>
  <member>
    <name>DNSRate</name>
    <value><double>0.0</double></value>
  </member>
  <member>
    <name>DataRateOut</name>
    <value><double>0.0</double></value>
  </member>
  <member>
    <name>DocRate</name>
    <value><double>0.0</double></value>
  </member>
  <member>
    <name>DNSRead</name>
    <value><double>0.0</double></value>
  </member>
  <member>
    <name>DNSDataRateIn</name>
    <value><double>0.0</double></value>
  </member>
  <member>
    <name>DNSTimeout</name>
    <value><double>0.0</double></value>
  </member>
  <member>
    <name>DNSWrite</name>
    <value><double>0.0</double></value>
  </member>
  <member>
    <name>DNSResponses</name>
    <value><double>0.0</double></value>
  </member>
</struct></value>
</member>
</struct></value>
</data></array></value>
</param>
</params>
</methodResponse>
`;

describe('MS-FSCADM section 4 examples', () => {
  it('4.1 CollectionGetList', () => {
    assert.deepStrictEqual(parseMethodCall(EX41_REQUEST), { methodName: 'CollectionGetList', params: [] });
    assert.deepStrictEqual(parseMethodResponse(EX41_RESPONSE), { value: ['contoso', 'web'] });
  });

  it('4.2 AddURIs', () => {
    assert.deepStrictEqual(parseMethodCall(EX42_REQUEST), { methodName: 'AddURIs', params: ['contoso', 0, ['http://www.contoso.com/', 'http://www.contoso.com/about/']] });
    assert.deepStrictEqual(parseMethodResponse(EX42_RESPONSE), { value: [1, 'Queued collection contoso with 2 URIs'] });
  });

  it('4.2 as printed, split at the page break, is refused at the stray <param>', () => {
    const printed = `${EX42_REQUEST_FIRST_PAGE}  </params>\n</methodCall>\n\n${EX42_REQUEST_SECOND_PAGE}`;
    throwsTrawl(() => parseMethodCall(printed), 'TRAWL_ERR_XMLRPC_PARSE', /^line 14, column \d+: malformed XML/);
  });

  it('4.3 CollectionGetStatistics2: nested structs, ints, doubles, empty structs', () => {
    assert.deepStrictEqual(parseMethodCall(EX43_REQUEST), { methodName: 'CollectionGetStatistics2', params: ['contoso'] });
    const r = parseMethodResponse(EX43_RESPONSE);
    assert.ok('value' in r && Array.isArray(r.value));
    const [code, stats] = r.value;
    assert.equal(code, 1);
    assert.ok(stats && typeof stats === 'object');
    const { cur, complete, delta } = stats as Record<string, XmlRpcStruct>;
    assert.deepEqual(Object.keys(stats), ['cur', 'complete', 'delta']);
    assert.deepEqual([Object.keys(cur!).length, Object.keys(complete!).length, Object.keys(delta!).length], [46, 54, 14]);
    assert.deepStrictEqual(cur!.PPAdded, D(40));
    assert.deepStrictEqual(cur!.DLTimeMax, D(0.20227789878845215));
    assert.deepStrictEqual(cur!.Uptime, D(1234197854.7414169));
    assert.equal(cur!.Feeding, 1);
    assert.equal(cur!.LastRefresh, 1234195119);
    assert.deepStrictEqual(cur!.URISkip, {});
    assert.deepStrictEqual(cur!.Progress, [2, '1 days 8h 34m 23s until scratch refresh']);
    assert.deepStrictEqual(cur!.HTTPResponse, { '200': D(41), '404': D(1) });
    assert.deepStrictEqual(cur!.MimeType, { 'text/html': D(40) });
    assert.equal(cur!.CrawlMode, '');
    assert.equal(cur!.StatUpdated, '26.2s');
    assert.deepStrictEqual(complete!.DNSResponse, {});
    assert.deepStrictEqual(delta!.DNSRateLimit, D(10));
    // Re-encoding keeps every type: doubles stay doubles ("40.0"), ints stay ints.
    const again = encodeMethodResponse(r.value);
    assert.deepStrictEqual(parseMethodResponse(again), r);
    assert.match(again, /<member><name>PPAdded<\/name><value><double>40\.0<\/double><\/value><\/member>/);
    assert.match(again, /<member><name>DocumentStore<\/name><value><int>40<\/int><\/value><\/member>/);
  });
});

// ─── Interop with Python's xmlrpc.client ───────────────────────────────────

const HAS_PYTHON = spawnSync('python3', ['--version']).status === 0;

function python(script: string, input = ''): unknown {
  const r = spawnSync('python3', ['-c', script], { input, encoding: 'utf8', timeout: 30_000, env: { ...process.env, PYTHONIOENCODING: 'utf-8' } });
  assert.equal(r.status, 0, `python3 failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// (a) Python writes calls and responses of every type; our parser must read them.
const PY_WRITES = String.raw`
import base64, datetime, json, sys
from xmlrpc.client import DateTime, Fault, dumps
out = {}
def call(name, params, **kw):
    out[name] = dumps(params, name, **kw)
call('ints', (0, 1, -79, 2147483647, -2147483648))
call('booleans', (True, False))
call('strings', ('', 'plain', '<&>"\'', 'ünïcødé ✓ 𝄞', 'line1\nline2\ttab', '  spaced  ', ']]>', '&amp;'))
call('doubles', (0.0, -0.0, 3.14159, -2.5, 40.0, 1e21, 1e-07, 1.7976931348623157e308, 5e-324, 0.1))
call('dates', (datetime.datetime(1998, 7, 17, 14, 8, 55), DateTime('19980717T14:08:55'), datetime.datetime(2006, 1, 16, 19, 14, 3, 999999)))
call('binary', (b'', b'foobar', bytes(range(256)), b'x' * 100))
call('arrays', ([], [1, 'two', [3.5, [True]]]))
call('structs', ({}, {'moe': 5, 'larry': 6, 'curly': 8}, {'nested': {'a': [1, {'b': 'c'}]}, '__proto__': 'x', 'with space & <amp>': 1}))
call('validator1.manyTypesTest', (1, True, 'foo', 3.14159, datetime.datetime(2006, 1, 16, 19, 14, 3), b'foobar'))
call('no.params', ())
out['nil'] = dumps((None,), 'nil', allow_none=True)
out['latin1_base64'] = base64.b64encode(dumps(('café <ü>',), 'latin', encoding='iso-8859-1').encode('iso-8859-1')).decode()
out['response'] = dumps(({'ok': [1, 2.5, 'x'], 'when': datetime.datetime(2009, 2, 9, 16, 5, 55)},), methodresponse=True)
out['fault'] = dumps(Fault(1, 'boom <&> "quoted"'), methodresponse=True)
json.dump(out, sys.stdout)
`;

// (b) Python reads what we write and prints repr() of what it got.
const PY_READS = String.raw`
import json, sys
from xmlrpc.client import Fault, loads
res = []
for body in json.load(sys.stdin):
    try:
        res.append(repr(loads(body.encode('utf-8'), use_builtin_types=True)))
    except Fault as f:
        res.append(repr(f))
json.dump(res, sys.stdout)
`;

describe('interop with Python xmlrpc.client', { skip: HAS_PYTHON ? false : 'python3 is not installed' }, () => {
  it('(a) reads the calls and responses Python writes, identically', () => {
    const out = python(PY_WRITES) as Record<string, string>;
    const EXPECTED: Record<string, XmlRpcValue[]> = {
      ints: [0, 1, -79, 2147483647, -2147483648],
      booleans: [true, false],
      strings: ['', 'plain', `<&>"'`, 'ünïcødé ✓ 𝄞', 'line1\nline2\ttab', '  spaced  ', ']]>', '&amp;'],
      doubles: [D(0), D(-0), D(3.14159), D(-2.5), D(40), D(1e21), D(1e-7), D(1.7976931348623157e308), D(5e-324), D(0.1)],
      dates: [utc(1998, 7, 17, 14, 8, 55), utc(1998, 7, 17, 14, 8, 55), utc(2006, 1, 16, 19, 14, 3)],
      binary: [bytes(''), bytes('foobar'), new Uint8Array(Array.from({ length: 256 }, (_, i) => i)), bytes('x'.repeat(100))],
      arrays: [[], [1, 'two', [D(3.5), [true]]]],
      structs: [{}, { moe: 5, larry: 6, curly: 8 }, { nested: { a: [1, { b: 'c' }] }, ['__proto__']: 'x', 'with space & <amp>': 1 }],
      'validator1.manyTypesTest': [1, true, 'foo', D(3.14159), utc(2006, 1, 16, 19, 14, 3), bytes('foobar')],
      'no.params': [],
    };
    for (const [name, params] of Object.entries(EXPECTED)) {
      assert.deepStrictEqual(parseMethodCall(out[name]!), { methodName: name, params }, name);
    }
    assert.match(out.binary!, /<base64>\n?eHh4[^<]*\n[^<]*<\/base64>/, 'Python wraps long base64 over lines');
    throwsTrawl(() => parseMethodCall(out.nil!), 'TRAWL_ERR_XMLRPC_TYPE', /^line \d+, column \d+: the <nil\/> extension is not supported/);
    assert.deepStrictEqual(parseMethodCall(Buffer.from(out.latin1_base64!, 'base64')), { methodName: 'latin', params: ['café <ü>'] });
    assert.deepStrictEqual(parseMethodResponse(out.response!), { value: { ok: [1, D(2.5), 'x'], when: utc(2009, 2, 9, 16, 5, 55) } });
    assert.deepStrictEqual(parseMethodResponse(out.fault!), { fault: { faultCode: 1, faultString: 'boom <&> "quoted"' } });
  });

  it('(b) Python reads our responses, faults and calls as we meant them', () => {
    const cases: Array<[string, string]> = [
      [encodeMethodResponse(1), '((1,), None)'],
      [encodeMethodResponse(-2147483648), '((-2147483648,), None)'],
      [encodeMethodResponse(5_000_000_000), '((5000000000,), None)'],
      [encodeMethodResponse(-(2n ** 63n)), '((-9223372036854775808,), None)'],
      [encodeMethodResponse(D(40)), '((40.0,), None)'],
      [encodeMethodResponse(D(-0)), '((-0.0,), None)'],
      [encodeMethodResponse(1e21), '((1e+21,), None)'],
      [encodeMethodResponse(1e-7), '((1e-07,), None)'],
      [encodeMethodResponse(0.1), '((0.1,), None)'],
      [encodeMethodResponse(5e-324), '((5e-324,), None)'],
      [encodeMethodResponse(1.7976931348623157e308), '((1.7976931348623157e+308,), None)'],
      [encodeMethodResponse(true), '((True,), None)'],
      [encodeMethodResponse(false), '((False,), None)'],
      [encodeMethodResponse(''), "(('',), None)"],
      [encodeMethodResponse('a\r\nb <&> ]]> "q" \'s\' ü 𝄞'), `(('a\\r\\nb <&> ]]> "q" \\'s\\' ü 𝄞',), None)`],
      [encodeMethodResponse(utc(1998, 7, 17, 14, 8, 55)), '((datetime.datetime(1998, 7, 17, 14, 8, 55),), None)'],
      [encodeMethodResponse(bytes('foobar')), "((b'foobar',), None)"],
      [encodeMethodResponse(bytes('\x00\xff')), "((b'\\x00\\xff',), None)"],
      [encodeMethodResponse([]), '(([],), None)'],
      [encodeMethodResponse({}), '(({},), None)'],
      [encodeMethodResponse({ moe: 5, larry: [1, 'x'], sub: { a: true, '': D(0.5) } }), "(({'moe': 5, 'larry': [1, 'x'], 'sub': {'a': True, '': 0.5}},), None)"],
      [encodeMethodResponse([1, 'Queued collection contoso with 2 URIs']), "(([1, 'Queued collection contoso with 2 URIs'],), None)"],
      [encodeFault(1, 'no collection "a&b" <here>'), `<Fault 1: 'no collection "a&b" <here>'>`],
      [encodeFault(1, 'nul\u0000here'), "<Fault 1: 'nul\uFFFDhere'>"],
      [encodeMethodCall('validator1.manyTypesTest', [1, true, 'foo', D(3.14159), utc(2006, 1, 16, 19, 14, 3), bytes('foobar')]), "((1, True, 'foo', 3.14159, datetime.datetime(2006, 1, 16, 19, 14, 3), b'foobar'), 'validator1.manyTypesTest')"],
      [encodeMethodCall('CollectionGetList', []), "((), 'CollectionGetList')"],
    ];
    const printed = python(PY_READS, JSON.stringify(cases.map(([xml]) => xml))) as string[];
    assert.deepStrictEqual(printed, cases.map(([, repr]) => repr));
  });

  it('(b) Python reads our re-encoding of the MS-FSCADM 4.3 response exactly as it reads the original', () => {
    const r = parseMethodResponse(EX43_RESPONSE);
    assert.ok('value' in r);
    const [original, ours] = python(PY_READS, JSON.stringify([EX43_RESPONSE, encodeMethodResponse(r.value)])) as string[];
    assert.ok(original!.includes("'DLTimeMax': 0.20227789878845215"));
    assert.equal(ours, original);
  });
});

// ─── Malformed input ───────────────────────────────────────────────────────

describe('malformed input: a TrawlError with its line and column, never another exception', () => {
  const wrap = (value: string): string => `<?xml version="1.0"?>\n<methodCall>\n<methodName>m</methodName>\n<params>\n<param>\n<value>${value}</value>\n</param>\n</params>\n</methodCall>\n`;
  // [what, body, code, message]; the message starts with "line L, column C: ".
  const CASES: Array<[string, string | Uint8Array, ErrorCode, RegExp]> = [
    ['garbage', 'hello, world', 'TRAWL_ERR_XMLRPC_PARSE', /^line 1, column 1: malformed XML/],
    ['empty body', '', 'TRAWL_ERR_XMLRPC_PARSE', /^line 1, column 1: malformed XML: document must contain a root element/],
    ['JSON instead of XML', '{"methodName":"x"}', 'TRAWL_ERR_XMLRPC_PARSE', /^line 1, column 1: malformed XML/],
    ['truncated', '<?xml version="1.0"?>\n<methodCall>\n  <methodName>m</methodName>\n  <params>\n', 'TRAWL_ERR_XMLRPC_PARSE', /^line 4, column 3: malformed XML: <params> is never closed/],
    ['mismatched tags', '<methodCall>\n<methodName>m</methodCall>', 'TRAWL_ERR_XMLRPC_PARSE', /^line 2, column 1: malformed XML: <methodName> is not closed before <\/methodCall>/],
    [
      'DOCTYPE with entities (billion laughs)',
      '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">\n]>\n<methodCall><methodName>&lol2;</methodName></methodCall>',
      'TRAWL_ERR_XMLRPC_DTD',
      /^line 2, column 1: DOCTYPE declarations are refused/,
    ],
    ['external entity (XXE)', '<?xml version="1.0"?>\n<!DOCTYPE m [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<methodCall><methodName>&xxe;</methodName></methodCall>', 'TRAWL_ERR_XMLRPC_DTD', /^line 2, column 1: DOCTYPE/],
    ['external DTD', '<!DOCTYPE methodCall SYSTEM "http://example.com/x.dtd">\n<methodCall><methodName>m</methodName></methodCall>', 'TRAWL_ERR_XMLRPC_DTD', /^line 1, column 1: DOCTYPE/],
    ['undeclared entity', wrap('&xxe;'), 'TRAWL_ERR_XMLRPC_PARSE', /^line 6, column \d+: malformed XML: undefined entity/],
    ['processing instruction', '<methodCall><?php echo 1 ?><methodName>m</methodName></methodCall>', 'TRAWL_ERR_XMLRPC_PARSE', /^line 1, column \d+: processing instruction <\?php/],
    ['deep nesting', wrap('<array><data><value>'.repeat(30) + '</value></data></array>'.repeat(30)), 'TRAWL_ERR_XMLRPC_PARSE', /^line 6, column \d+: elements nest deeper than 64 levels/],
    ['XML 1.1', '<?xml version="1.1"?><methodCall><methodName>m</methodName></methodCall>', 'TRAWL_ERR_XMLRPC_PARSE', /^line 1, column \d+: XML version 1\.1; only XML 1\.0 is read/],
    ['UTF-16 body', new Uint8Array(Buffer.from('\uFEFF<methodCall/>', 'utf16le')), 'TRAWL_ERR_XMLRPC_PARSE', /^line 1, column 1: the body is UTF-16/],
    ['invalid UTF-8', new Uint8Array([...Buffer.from('<methodCall>\n<methodName>'), 0xc3, 0x28, ...Buffer.from('</methodName></methodCall>')]), 'TRAWL_ERR_XMLRPC_PARSE', /^line 2: the document is not valid UTF-8 \(first bad byte at offset 25\)/],
    ['unsupported declared encoding', new Uint8Array(Buffer.from('<?xml version="1.0" encoding="Shift_JIS"?><methodCall/>')), 'TRAWL_ERR_XMLRPC_PARSE', /^line 1: the XML declaration names encoding "Shift_JIS"/],
    ['US-ASCII declared, 8-bit byte sent', new Uint8Array([...Buffer.from('<?xml version="1.0" encoding="US-ASCII"?>\n<methodCall><methodName>caf'), 0xe9, ...Buffer.from('</methodName></methodCall>')]), 'TRAWL_ERR_XMLRPC_PARSE', /^line 2: byte 0xe9 at offset 69 is not US-ASCII/],
    // Structure
    ['wrong root', '<methodResponse><params/></methodResponse>', 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 1, column 1: expected <methodCall>, found <methodResponse>/],
    ['missing methodName', '<?xml version="1.0"?>\n<methodCall>\n<params/>\n</methodCall>', 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 2, column 1: <methodCall> has no <methodName>/],
    ['empty methodName', '<methodCall>\n  <methodName> </methodName></methodCall>', 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 2, column 3: <methodName> is empty/],
    ['methodName with spaces', '<methodCall><methodName>drop table</methodName></methodCall>', 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 1, column 13: method name "drop table" may only hold/],
    ['two methodNames', '<methodCall><methodName>a</methodName><methodName>b</methodName></methodCall>', 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 1, column 39: <methodCall> has two <methodName> elements/],
    ['unknown element', '<methodCall><methodName>a</methodName><extra/></methodCall>', 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 1, column 39: unexpected <extra> in <methodCall>/],
    ['stray text', '<methodCall><methodName>a</methodName>\n  oops</methodCall>', 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 2, column 3: unexpected text "oops" in <methodCall>/],
    ['param without value', '<methodCall><methodName>a</methodName><params><param/></params></methodCall>', 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 1, column 47: <param> is empty/],
    ['two types in one value', wrap('<int>1</int><int>2</int>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 6, column 20: a <value> holds one type element; <int> follows <int>/],
    ['text beside a type', wrap('1<int>1</int>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 6, column 8: unexpected text "1" beside <int>/],
    ['unknown type', wrap('<float>1.5</float>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 6, column 8: unknown XML-RPC type <float>/],
    ['element inside a scalar', wrap('<int><b>1</b></int>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 6, column 13: <int> holds text only, not <b>/],
    ['array without data', wrap('<array><value>1</value></array>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 6, column 15: expected <data> in <array>, found <value>/],
    ['member without name', wrap('<struct><member><value>1</value></member></struct>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 6, column 16: <member> has no <name>/],
    ['member without value', wrap('<struct><member><name>a</name></member></struct>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 6, column 16: <member> "a" has no <value>/],
    ['duplicate member', wrap('<struct><member><name>a</name><value>1</value></member><member><name>a</name><value>2</value></member></struct>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 6, column 71: member "a" appears twice/],
    // Types
    ['int 2147483648', wrap('<int>2147483648</int>'), 'TRAWL_ERR_XMLRPC_TYPE', /^line 6, column 8: <int> 2147483648 is outside the 32-bit range -2147483648\.\.2147483647 \(use <i8> for larger integers\)/],
    ['i4 -2147483649', wrap('<i4>-2147483649</i4>'), 'TRAWL_ERR_XMLRPC_TYPE', /^line 6, column 8: <i4> -2147483649 is outside the 32-bit range/],
    ['int with letters', wrap('<int>12abc</int>'), 'TRAWL_ERR_XMLRPC_TYPE', /^line 6, column 8: <int> "12abc" is not an integer/],
    ['empty int', wrap('<int></int>'), 'TRAWL_ERR_XMLRPC_TYPE', /<int> "" is not an integer/],
    ['int as a fraction', wrap('<int>1.5</int>'), 'TRAWL_ERR_XMLRPC_TYPE', /<int> "1.5" is not an integer/],
    ['i8 beyond 64 bits', wrap('<i8>9223372036854775808</i8>'), 'TRAWL_ERR_XMLRPC_TYPE', /^line 6, column 8: <i8> 9223372036854775808 is outside the 64-bit range/],
    ['boolean 2', wrap('<boolean>2</boolean>'), 'TRAWL_ERR_XMLRPC_TYPE', /^line 6, column 8: <boolean> is 0 or 1, not "2"/],
    ['boolean true', wrap('<boolean>true</boolean>'), 'TRAWL_ERR_XMLRPC_TYPE', /<boolean> is 0 or 1, not "true"/],
    ['double text', wrap('<double>abc</double>'), 'TRAWL_ERR_XMLRPC_TYPE', /^line 6, column 8: <double> "abc" is not a decimal number/],
    ['double NaN', wrap('<double>nan</double>'), 'TRAWL_ERR_XMLRPC_TYPE', /XML-RPC has no NaN or infinity/],
    ['double overflow', wrap('<double>1e999</double>'), 'TRAWL_ERR_XMLRPC_TYPE', /<double> 1e999 is outside the range of a 64-bit double/],
    ['dateTime words', wrap('<dateTime.iso8601>yesterday</dateTime.iso8601>'), 'TRAWL_ERR_XMLRPC_TYPE', /^line 6, column 8: <dateTime\.iso8601> "yesterday" is not a date and time like 19980717T14:08:55/],
    ['dateTime month 13', wrap('<dateTime.iso8601>20061301T00:00:00</dateTime.iso8601>'), 'TRAWL_ERR_XMLRPC_TYPE', /"20061301T00:00:00" is not a valid calendar date and time/],
    ['dateTime 30 February', wrap('<dateTime.iso8601>2006-02-30T00:00:00</dateTime.iso8601>'), 'TRAWL_ERR_XMLRPC_TYPE', /not a valid calendar date/],
    ['dateTime 24:00', wrap('<dateTime.iso8601>20060201T24:00:00</dateTime.iso8601>'), 'TRAWL_ERR_XMLRPC_TYPE', /not a valid calendar date/],
    ['dateTime date only', wrap('<dateTime.iso8601>20060201</dateTime.iso8601>'), 'TRAWL_ERR_XMLRPC_TYPE', /is not a date and time/],
    ['base64 bad character', wrap('<base64>Zm9v!mFy</base64>'), 'TRAWL_ERR_XMLRPC_TYPE', /^line 6, column 8: <base64> holds "!", which is not a base64 character/],
    ['base64 bad length', wrap('<base64>Zm9vY</base64>'), 'TRAWL_ERR_XMLRPC_TYPE', /<base64> is not valid base64: 5 characters, not a multiple of 4/],
    ['base64 padding inside', wrap('<base64>Zm==Zm9v</base64>'), 'TRAWL_ERR_XMLRPC_TYPE', /"=" may only pad the end/],
    ['nil', wrap('<nil/>'), 'TRAWL_ERR_XMLRPC_TYPE', /^line 6, column 8: the <nil\/> extension is not supported/],
  ];

  for (const [what, body, code, message] of CASES) {
    it(what, () => {
      throwsTrawl(() => parseMethodCall(body), code, message);
    });
  }

  it('a body over the size limit is refused before it is read', () => {
    throwsTrawl(() => parseMethodCall(wrap('x'.repeat(2000)), { maxBytes: 1024 }), 'TRAWL_ERR_XMLRPC_PARSE', /^the body is 2\d{3} bytes; at most 1024 are read/);
    const huge = new Uint8Array(16 * 1024 * 1024 + 1);
    throwsTrawl(() => parseMethodCall(huge), 'TRAWL_ERR_XMLRPC_PARSE', /^the body is 16777217 bytes; at most 16777216 are read/);
  });

  it('maxDepth is the caller\'s to lower', () => {
    const nested = wrap('<array><data><value>'.repeat(3) + '</value></data></array>'.repeat(3));
    assert.ok(parseMethodCall(nested));
    throwsTrawl(() => parseMethodCall(nested, { maxDepth: 8 }), 'TRAWL_ERR_XMLRPC_PARSE', /nest deeper than 8 levels/);
  });

  it('every truncation of a valid body, cut anywhere in its UTF-8 bytes, is a TrawlError', () => {
    const full = Buffer.from(encodeMethodCall('all.types', [1, 5n, true, 'ü 𝄞 <&>', D(2.5), utc(2000, 4, 1), bytes('foobar'), [1, [2]], { a: { b: [] } }]));
    const end = full.lastIndexOf('>') + 1;
    for (let n = 0; n < end; n++) {
      assert.throws(() => parseMethodCall(full.subarray(0, n)), (e: unknown) => e instanceof TrawlError && e.code === 'TRAWL_ERR_XMLRPC_PARSE', `cut at ${n}`);
    }
  });

  it('random bytes and random single-byte corruptions give a value or a TrawlError, nothing else', () => {
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const valid = Buffer.from(encodeMethodCall('all.types', [1, 5n, true, 'text', D(2.5), utc(2000, 4, 1), bytes('foobar'), [1, [2]], { a: { b: [] } }]));
    const alphabet = Buffer.from('<>/="\'&;#x0123456789abcdefT:.-+ \n');
    for (let i = 0; i < 1500; i++) {
      let body: Buffer;
      if (i < 300) body = Buffer.from(Array.from({ length: rnd(200) }, () => rnd(256)));
      else {
        body = Buffer.from(valid);
        body[rnd(body.length)] = rnd(2) ? alphabet[rnd(alphabet.length)]! : rnd(256);
      }
      try {
        parseMethodCall(body);
        parseMethodResponse(body);
      } catch (err) {
        assert.ok(err instanceof TrawlError && err.code !== 'TRAWL_ERR_INTERNAL', `case ${i}: ${String(err)}`);
      }
    }
  });
});

describe('malformed responses', () => {
  const resp = (inner: string): string => `<?xml version="1.0"?>\n<methodResponse>\n${inner}\n</methodResponse>`;
  const CASES: Array<[string, string, ErrorCode, RegExp]> = [
    ['a call instead of a response', '<methodCall><methodName>m</methodName></methodCall>', 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 1, column 1: expected <methodResponse>, found <methodCall>/],
    ['empty response', resp(''), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 2, column 1: <methodResponse> is empty/],
    ['two params', resp('<params><param><value>a</value></param><param><value>b</value></param></params>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 3, column 1: a response's <params> holds exactly one <param>, not 2/],
    ['no param', resp('<params></params>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /holds exactly one <param>, not 0/],
    ['params and fault', resp('<params><param><value>a</value></param></params><fault/>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 3, column 49: unexpected <fault> after <params>/],
    ['fault without struct', resp('<fault><value><string>x</string></value></fault>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /^line 3, column 8: <fault> holds a <struct> with faultCode and faultString/],
    ['fault without faultString', resp('<fault><value><struct><member><name>faultCode</name><value><int>1</int></value></member></struct></value></fault>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /needs a <string> member faultString/],
    ['fault with a string code', resp('<fault><value><struct><member><name>faultCode</name><value>1</value></member><member><name>faultString</name><value>x</value></member></struct></value></fault>'), 'TRAWL_ERR_XMLRPC_STRUCTURE', /needs an <int> member faultCode/],
  ];
  for (const [what, body, code, message] of CASES) {
    it(what, () => {
      throwsTrawl(() => parseMethodResponse(body), code, message);
    });
  }
});

describe('values that cannot be encoded are TRAWL_ERR_XMLRPC_TYPE', () => {
  const cyclic: XmlRpcValue[] = [];
  cyclic.push(cyclic);
  const CASES: Array<[string, () => unknown, RegExp]> = [
    ['NaN', () => encodeMethodResponse(NaN), /^result: NaN cannot be encoded; XML-RPC has no NaN or infinity/],
    ['Infinity in a double', () => encodeMethodResponse(D(Infinity)), /Infinity cannot be encoded/],
    ['bigint beyond 64 bits', () => encodeMethodResponse(2n ** 63n), /^result: 9223372036854775808 is outside the 64-bit range of <i8>/],
    ['invalid Date', () => encodeMethodResponse(new Date(NaN)), /^result: an invalid Date cannot be encoded/],
    ['year beyond 9999', () => encodeMethodResponse(new Date('+010000-01-01T00:00:00Z')), /year 10000 does not fit/],
    ['NUL in a string', () => encodeMethodCall('m', ['ok', 'a\u0000b']), /^params\[1\]: U\+0000 at index 1 cannot be carried in XML/],
    ['lone surrogate', () => encodeMethodResponse({ k: ['x', '\uD83D'] }), /^result\.k\[1\]: U\+D83D at index 0 cannot be carried in XML/],
    ['control character in a member name', () => encodeMethodResponse({ 'a\u0001': 1 }), /^result member name: U\+0001/],
    ['undefined member', () => encodeMethodResponse({ a: undefined } as unknown as XmlRpcValue), /^result\.a: undefined cannot be encoded/],
    ['null', () => encodeMethodResponse(null as unknown as XmlRpcValue), /^result: null cannot be encoded \(<nil\/> is not supported\)/],
    ['a Map', () => encodeMethodResponse(new Map() as unknown as XmlRpcValue), /^result: a Map cannot be encoded; use a plain object/],
    ['a function', () => encodeMethodResponse((() => 1) as unknown as XmlRpcValue), /^result: a function cannot be encoded/],
    ['a cycle', () => encodeMethodResponse(cyclic), /^result\[0\]: the value contains itself/],
    ['a fault code that is not an int', () => encodeFault(1.5, 'x'), /^faultCode 1\.5 is not a 32-bit integer/],
  ];
  for (const [what, fn, message] of CASES) {
    it(what, () => {
      throwsTrawl(fn, 'TRAWL_ERR_XMLRPC_TYPE', message);
    });
  }
  it('a bad method name', () => {
    throwsTrawl(() => encodeMethodCall('a b', []), 'TRAWL_ERR_XMLRPC_STRUCTURE', /method name "a b" may only hold/);
  });
  it('a shared (not cyclic) value encodes twice', () => {
    const shared = { a: 1 };
    assert.deepStrictEqual(parseMethodResponse(encodeMethodResponse([shared, shared])), { value: [{ a: 1 }, { a: 1 }] });
  });
});
