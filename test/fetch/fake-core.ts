// A core handler for interceptor tests: no network. It records what each
// call carried when it reached the core and answers with a response (or
// whatever `answer` returns).
import { Agent } from 'undici';
import type { FetchOutcome, FetchRequest, ResponseOutcome } from '../../src/fetch/fetch-types.ts';
import { FetchCall, type FetchHandler } from '../../src/fetch/interceptor.ts';

export interface Reached {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string | Uint8Array | undefined;
  readonly address: string | undefined;
}

/** Never dispatched to: the fake core answers instead. */
const unused = new Agent();

export function request(more: Partial<FetchRequest> = {}): FetchRequest {
  return {
    url: new URL('http://site.test/a/page?q=1'), headers: { 'user-agent': 'trawl-test' }, acceptCompression: true, http10: false,
    limits: { fetchTimeoutMs: 1000, connectTimeoutMs: 1000, cutOffBytes: undefined, truncate: false, maxDecompressedBytes: 1 << 20 },
    ...more,
  };
}

export function call(more: Partial<FetchRequest> = {}): FetchCall {
  return new FetchCall(request(more), unused);
}

export function response(status = 200, rawHeaders: ResponseOutcome['rawHeaders'] = {}): ResponseOutcome {
  return {
    kind: 'response', status, headers: {}, rawHeaders, headerBlock: `HTTP/1.1 ${status}\r\n`, body: new Uint8Array(), truncated: false,
    bytesIn: 20, bytesOut: 40, durationMs: 1, address: undefined,
  };
}

export function fakeCore(answer: (c: FetchCall, n: number) => FetchOutcome = () => response()): { core: FetchHandler; reached: Reached[] } {
  const reached: Reached[] = [];
  const core: FetchHandler = (c) => {
    reached.push({ method: c.method, path: c.path, headers: { ...c.headers }, body: c.body, address: c.address });
    return Promise.resolve(answer(c, reached.length));
  };
  return { core, reached };
}
