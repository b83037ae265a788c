// Issue 29: the daemon logs (warn) the parameters a collection sets that
// this version does not honour, when CollectionAdd adds it and when a
// restart loads it again.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pino from 'pino';
import { CrawlerService } from '../../src/service/crawler-service.ts';
import { openThreadedCrawlStore } from '../../src/store/storage-client.ts';

const XML = `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="web">
  <section name="include_domains"><attrib name="exact" type="list-string"><member>127.0.0.1</member></attrib></section>
  <attrib name="mirror_site_files" type="list-string"><member>mirrors.txt</member></attrib></DomainSpecification></CrawlerConfig>`;

async function withService(dir: string, lines: Array<Record<string, unknown>>, body: (s: CrawlerService) => Promise<void>): Promise<void> {
  const store = await openThreadedCrawlStore(join(dir, 'trawl.db'));
  const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const service = new CrawlerService({ dataDir: dir, store, log, address: { host: '127.0.0.1', port: 0 } });
  try {
    await service.start();
    await body(service);
  } finally {
    await service.stop();
    await store.close();
  }
}

describe('the daemon logs what a collection sets that this version ignores', () => {
  it('on CollectionAdd and again when the collection is loaded at start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trawl-honoured-daemon-'));
    const added: Array<Record<string, unknown>> = [];
    await withService(dir, added, async (s) => {
      await s.addCollection(XML);
    });
    const warning = (l: Record<string, unknown>) => l.level === 40 && l.param === 'mirror_site_files' && l.collection === 'web' && /mirror_site_files = mirrors\.txt is not honoured/.test(String(l.msg));
    assert.ok(added.some(warning), JSON.stringify(added));
    const loaded: Array<Record<string, unknown>> = [];
    await withService(dir, loaded, async () => {});
    assert.ok(loaded.some(warning), JSON.stringify(loaded));
  });
});
