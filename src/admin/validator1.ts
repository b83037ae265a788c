/**
 * The eight methods of UserLand's XML-RPC "validator1" interoperability
 * suite, as plain functions of the decoded params. The admin server exposes
 * them (as `validator1.<name>`) so any XML-RPC client can check trawl's codec.
 * Semantics: test/fixtures/conformance/xmlrpc/xmlrpc-validator1.md.
 *
 * Each function takes the call's positional params and returns the result
 * value; a wrong param count or type throws TRAWL_ERR_XMLRPC_PARAMS, which
 * the server turns into a fault.
 */

import { TrawlError } from '../core/errors.ts';
import { isStruct, XmlRpcDouble, type XmlRpcStruct, type XmlRpcValue } from './xmlrpc.ts';

type Params = readonly XmlRpcValue[];

/** Array of structs, each with int members moe, larry, curly: the sum of every curly. */
export function arrayOfStructsTest(params: Params): number {
  const [list] = arity('arrayOfStructsTest', params, 1);
  if (!Array.isArray(list)) bad('arrayOfStructsTest', 'its parameter must be an array of structs');
  return list.reduce<number>((sum, item, i) => {
    if (!isStruct(item)) bad('arrayOfStructsTest', `item ${i} must be a struct`);
    return sum + int(item, 'curly', `arrayOfStructsTest: item ${i}`);
  }, 0);
}

/** A string: how many of each of < > & ' " it holds (after entity decoding). */
export function countTheEntities(params: Params): XmlRpcStruct {
  const [s] = arity('countTheEntities', params, 1);
  if (typeof s !== 'string') bad('countTheEntities', 'its parameter must be a string');
  const count = (c: string): number => s.split(c).length - 1;
  return {
    ctLeftAngleBrackets: count('<'),
    ctRightAngleBrackets: count('>'),
    ctAmpersands: count('&'),
    ctApostrophes: count("'"),
    ctQuotes: count('"'),
  };
}

/** A struct with int members moe, larry, curly (at least): their sum. */
export function easyStructTest(params: Params): number {
  const [s] = arity('easyStructTest', params, 1);
  if (!isStruct(s)) bad('easyStructTest', 'its parameter must be a struct');
  return stooges(s, 'easyStructTest');
}

/** A struct: returned as received, every member with its type. */
export function echoStructTest(params: Params): XmlRpcStruct {
  const [s] = arity('echoStructTest', params, 1);
  if (!isStruct(s)) bad('echoStructTest', 'its parameter must be a struct');
  return s;
}

/** int, boolean, string, double, dateTime.iso8601, base64: returned as an array, types kept. */
export function manyTypesTest(params: Params): XmlRpcValue[] {
  const [n, b, s, d, t, bytes] = arity('manyTypesTest', params, 6);
  const expect = (ok: boolean, i: number, what: string): void => {
    if (!ok) bad('manyTypesTest', `parameter ${i} must be ${what}`);
  };
  expect(typeof n === 'number', 1, 'an int');
  expect(typeof b === 'boolean', 2, 'a boolean');
  expect(typeof s === 'string', 3, 'a string');
  expect(d instanceof XmlRpcDouble, 4, 'a double');
  expect(t instanceof Date, 5, 'a dateTime.iso8601');
  expect(bytes instanceof Uint8Array, 6, 'base64');
  return [...params];
}

/** An array of (100 to 200) strings: the first and the last, concatenated. */
export function moderateSizeArrayCheck(params: Params): string {
  const [list] = arity('moderateSizeArrayCheck', params, 1);
  if (!Array.isArray(list) || list.length === 0) bad('moderateSizeArrayCheck', 'its parameter must be a non-empty array of strings');
  const i = list.findIndex((x) => typeof x !== 'string');
  if (i >= 0) bad('moderateSizeArrayCheck', `item ${i} must be a string`);
  return `${list[0] as string}${list[list.length - 1] as string}`;
}

/** A calendar struct year → month → day; the sum of moe, larry and curly on "2000" → "04" → "01". */
export function nestedStructTest(params: Params): number {
  const [cal] = arity('nestedStructTest', params, 1);
  if (!isStruct(cal)) bad('nestedStructTest', 'its parameter must be a struct');
  const year = cal['2000'];
  const month = isStruct(year) ? year['04'] : undefined;
  const day = isStruct(month) ? month['01'] : undefined;
  if (!isStruct(day)) bad('nestedStructTest', 'the calendar has no struct at "2000" → "04" → "01"');
  return stooges(day, 'nestedStructTest: 2000-04-01');
}

/** An int n: { times10, times100, times1000 }. */
export function simpleStructReturnTest(params: Params): XmlRpcStruct {
  const [n] = arity('simpleStructReturnTest', params, 1);
  if (typeof n !== 'number' || !Number.isInteger(n)) bad('simpleStructReturnTest', 'its parameter must be an int');
  return { times10: n * 10, times100: n * 100, times1000: n * 1000 };
}

/** The methods by their XML-RPC names, for the server's dispatch table. */
export const VALIDATOR1_METHODS: Readonly<Record<string, (params: Params) => XmlRpcValue>> = {
  'validator1.arrayOfStructsTest': arrayOfStructsTest,
  'validator1.countTheEntities': countTheEntities,
  'validator1.easyStructTest': easyStructTest,
  'validator1.echoStructTest': echoStructTest,
  'validator1.manyTypesTest': manyTypesTest,
  'validator1.moderateSizeArrayCheck': moderateSizeArrayCheck,
  'validator1.nestedStructTest': nestedStructTest,
  'validator1.simpleStructReturnTest': simpleStructReturnTest,
};

function bad(method: string, message: string): never {
  throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `validator1.${method}: ${message}`);
}

function arity(method: string, params: Params, n: number): Params {
  if (params.length !== n) bad(method, `takes ${n} parameter${n === 1 ? '' : 's'}, got ${params.length}`);
  return params;
}

/** The int member `name` of `s`; validator1 sends them as <i4>. */
function int(s: XmlRpcStruct, name: string, where: string): number {
  const v = s[name];
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new TrawlError('TRAWL_ERR_XMLRPC_PARAMS', `validator1.${where}: member ${name} must be an int`);
  }
  return v;
}

function stooges(s: XmlRpcStruct, where: string): number {
  return int(s, 'moe', where) + int(s, 'larry', where) + int(s, 'curly', where);
}
