#!/usr/bin/env node
// Entry point for `npx trawl`. The sources are TypeScript run directly by
// Node 24's type stripping; a published package runs the compiled dist/.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
const source = new URL('../src/cli/main.ts', import.meta.url);
const major = Number(process.versions.node.split('.')[0]);
if (!existsSync(compiled) && major < 24) {
  process.stderr.write(
    `trawl needs Node.js 24 or later (this is ${process.version}). ` +
      'Run it through `npx trawl` or `npm run trawl`, which use the pinned Node from devDependencies.\n',
  );
  process.exit(1);
}
const { main } = await import(existsSync(compiled) ? compiled.href : source.href);
process.exitCode = await main(process.argv);
