// BatchedPost: what one turn of the event loop sends goes as one batch, in order; a message that cannot be sent fails alone.
import assert from 'node:assert/strict';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { test } from 'node:test';
import { BatchedPost } from '../../src/core/batched-post.ts';

function received(port: MessagePort): Promise<unknown[]> {
  return new Promise((resolve) => port.once('message', resolve));
}

test('the messages of one turn travel as one batch, in the order they were sent', async () => {
  const { port1, port2 } = new MessageChannel();
  try {
    const batches: unknown[][] = [];
    port2.on('message', (b: unknown[]) => batches.push(b));
    const out = new BatchedPost<number>((b) => port1.postMessage(b), () => assert.fail('nothing here fails'));
    for (let i = 0; i < 5; i++) out.send(i);
    await new Promise((r) => setImmediate(r));
    out.send(5);
    await received(port2);
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(batches, [[0, 1, 2, 3, 4], [5]]);
  } finally {
    port1.close();
  }
});

test('a message that cannot be cloned fails alone and the others of its batch arrive', async () => {
  const { port1, port2 } = new MessageChannel();
  try {
    const failures: Array<[unknown, string]> = [];
    const got: unknown[] = [];
    port2.on('message', (b: unknown[]) => got.push(...b));
    const out = new BatchedPost<unknown>((b) => port1.postMessage(b), (m, err) => failures.push([m, (err as Error).name]));
    const fn = (): number => 1;
    out.send({ n: 1 });
    out.send({ n: 2, fn });
    out.send({ n: 3 });
    out.flush();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(got, [{ n: 1 }, { n: 3 }]);
    assert.deepEqual(failures, [[{ n: 2, fn }, 'DataCloneError']]);
  } finally {
    port1.close();
  }
});
