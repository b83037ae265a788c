/**
 * trawl crawl with a jms sink that names a submission_queue: only trawl
 * serve consumes URL Submission Messages, so a one-shot crawl says it does
 * not (never silence for a parameter it does not apply). No broker is
 * needed: the warning comes before the crawl, which finds nothing to store.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runTrawl } from '../support/trawl-cli.ts';

const sink = (extra: string): string => `<?xml version="1.0"?><CrawlerConfig><DomainSpecification name="sq">
<attrib name="start_uris" type="list-string"><member>http://127.0.77.1:9/</member></attrib>
<attrib name="delay" type="real">0</attrib>
<section name="include_domains"><attrib name="exact" type="list-string"><member>127.0.77.1</member></attrib></section>
<section name="trawl_egress"><attrib name="allow_loopback" type="boolean">yes</attrib></section>
<section name="trawl_sinks"><section name="csx">
<attrib name="type" type="string">jms</attrib>
<attrib name="repository_root" type="string">REPO</attrib>
<attrib name="repository_id" type="string">r1</attrib>
<attrib name="broker_url" type="string">stomp://127.0.77.2:9</attrib>${extra}
</section></section>
</DomainSpecification></CrawlerConfig>
`;

describe('trawl crawl and a jms sink\'s submission_queue', () => {
  it('warns that only trawl serve consumes URL Submission Messages, and says nothing without one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trawl-subq-'));
    try {
      for (const [name, extra] of [['with', '\n<attrib name="submission_queue" type="string">csx.sub</attrib>'], ['without', '']] as const) {
        const file = join(dir, `${name}.xml`);
        writeFileSync(file, sink(extra).replace('REPO', join(dir, 'repo')));
        const r = await runTrawl(['crawl', '--data', join(dir, `data-${name}`), '--feed-timeout', '2', file], { timeoutMs: 60_000 });
        const warned = /trawl: warning: collection sq: trawl_sinks\.csx\.submission_queue is not applied by trawl crawl: only trawl serve consumes URL Submission Messages/.test(r.err);
        assert.equal(warned, name === 'with', r.err);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
