/**
 * The worker thread behind ExtractPool: runs extractHtml on pages the main
 * thread sends, in batches, and answers each batch with one message of the
 * results packed for the way back (extract-wire.ts).
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

// A batch of pages is answered with one message (batched-post.ts); the pool parses again on its own thread a page answered with an error.
parentPort?.on('message', (batch: ExtractRequest[]) => {
  const replies = batch.map((m) => {
    try {
      return { id: m.id, result: packExtraction(extractHtml(m.body, m.url, m.opts)) };
    } catch (err) {
      return { id: m.id, error: (err as Error).message };
    }
  });
  parentPort!.postMessage(replies);
});
