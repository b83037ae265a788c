// Writes the configuration reference, generated from the parameter registry, into docs/configuration.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { spliceReference } from '../src/config/reference.ts';

const path = new URL('../docs/configuration.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = spliceReference(before);
if (after !== before) writeFileSync(path, after);
console.log(after === before ? 'docs/configuration.md is up to date' : 'docs/configuration.md updated');
