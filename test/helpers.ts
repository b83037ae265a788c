/** Shared test helpers. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

export function fixture(path: string): Buffer {
  return readFileSync(FIXTURES + path);
}
