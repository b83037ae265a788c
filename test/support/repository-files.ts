/** Reading a CiteSeerX repository as the ingestion side would: its files and their CrawlData sidecars. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readXmlTree } from '../../src/core/xml.ts';

/** The elements of a CrawlData file, parsed as XML. */
export function readCrawlData(path: string): Record<string, string> {
  const doc = readXmlTree(readFileSync(path), { file: path, malformedCode: 'TRAWL_ERR_IO', doctypeCode: 'TRAWL_ERR_IO', encodingCode: 'TRAWL_ERR_IO' });
  assert.equal(doc.name, 'CrawlData');
  return Object.fromEntries(doc.children.map((c) => [c.name, c.text]));
}

/** Every file under `dir`, as paths relative to it, sorted; none when it does not exist. */
export function listFiles(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? listFiles(join(dir, n), `${prefix}${n}/`) : [`${prefix}${n}`])).sort();
}
