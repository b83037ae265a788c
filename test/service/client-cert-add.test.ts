// CollectionAdd reads the client certificate a configuration names
// (key_file, cert_file): a file that cannot be used is the operator's
// answer, naming the parameter and the file, and nothing is added.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pino from 'pino';
import { CrawlerService } from '../../src/service/crawler-service.ts';
import { openThreadedCrawlStore } from '../../src/store/storage-client.ts';

describe('CollectionAdd and the client certificate', () => {
  it('refuses a key_file that cannot be read, naming it, and adds nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trawl-cert-add-'));
    const store = await openThreadedCrawlStore(join(dir, 'trawl.db'));
    const service = new CrawlerService({ dataDir: dir, store, log: pino({ level: 'silent' }), address: { host: '127.0.0.1', port: 0 } });
    try {
      await service.start();
      const key = join(dir, 'missing.key');
      await assert.rejects(service.addCollection(`<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="web">
        <section name="include_domains"><attrib name="exact" type="list-string"><member>example.com</member></attrib></section>
        <attrib name="key_file" type="string">${key}</attrib>
        <attrib name="cert_file" type="string">${join(dir, 'missing.pem')}</attrib></DomainSpecification></CrawlerConfig>`),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'TRAWL_ERR_CLIENT_CERT');
        assert.match(err.message, new RegExp(`key_file: key_file "${key.replace(/[.]/g, '\\.')}" cannot be read: ENOENT`));
        return true;
      });
      assert.equal(await store.getCollection('web'), undefined);
    } finally {
      await service.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
