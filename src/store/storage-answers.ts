/**
 * The storage thread's methods whose answer is some of the objects they
 * were given (storage-thread.ts): those answers travel as positions.
 */

import type { Completion, QueuedUri } from './crawl-store.ts';

/** The methods whose answer is a subset of a list in their arguments, and where that list is. */
export const SUBSET_ANSWERS: Readonly<Record<string, (args: readonly unknown[]) => readonly unknown[]>> = {
  complete: (args) => (args[2] as Completion).discovered,
  enqueue: (args) => args[2] as readonly QueuedUri[],
};

/** The positions in `given` of the objects of `subset` (each one of given's own objects). */
export function positionsIn(given: readonly unknown[], subset: readonly unknown[]): number[] {
  if (subset.length === 0) return [];
  const at = new Map<unknown, number>();
  given.forEach((x, i) => at.set(x, i));
  return subset.map((x) => {
    const i = at.get(x);
    if (i === undefined) throw new Error('the store answered with a URI it was not given');
    return i;
  });
}
