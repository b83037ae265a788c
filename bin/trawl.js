#!/usr/bin/env node
// Entry point for `npx trawl`. In a checkout the TypeScript sources run
// directly (Node 24 type stripping); a published package, which ships only
// dist/, runs the compiled JavaScript.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/main.ts', import.meta.url);
const compiled = new URL('../dist/cli/main.js', import.meta.url);
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `trawl needs Node.js 24 or later (this is ${process.version}). ` +
      'Run it through `npx trawl` or `npm run trawl`, which use the pinned Node from devDependencies.\n',
  );
  process.exit(1);
}
const { main } = await import(existsSync(source) ? source.href : compiled.href);
process.exitCode = await main(process.argv);
