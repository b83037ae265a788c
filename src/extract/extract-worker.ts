/**
 * The worker thread behind ExtractPool: runs extractHtml on pages the main
 * thread sends and answers with the result packed for the way back
 * (extract-wire.ts).
 */

import { parentPort } from 'node:worker_threads';
import { extractHtml, type ExtractHtmlOptions } from './html.ts';
import { packExtraction } from './extract-wire.ts';

export interface ExtractRequest {
  readonly id: number;
  readonly body: Uint8Array;
  readonly url: string;
  readonly opts: ExtractHtmlOptions;
}

parentPort?.on('message', (m: ExtractRequest) => {
  try {
    parentPort!.postMessage({ id: m.id, result: packExtraction(extractHtml(m.body, m.url, m.opts)) });
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error).message });
  }
});
