// The sink type registry: the built-in types are exactly the available names
// of core/sink-types.ts, each checks and opens its own sinks, and a type
// registered here is opened from a collection's trawl_sinks and fed to.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AVAILABLE_SINK_TYPES, RESERVED_SINK_TYPES, SINK_TYPES } from '../../src/core/sink-types.ts';
import { TrawlError } from '../../src/core/errors.ts';
import { resolveSettings } from '../../src/config/effective.ts';
import { childSection, emptyCollection } from '../../src/config/model.ts';
import { findSection, COLLECTION } from '../../src/config/registry.ts';
import { collectionFeeder } from '../../src/sinks/collection-feeder.ts';
import { ConsoleSink } from '../../src/sinks/console-sink.ts';
import { ElasticsearchSink } from '../../src/sinks/elasticsearch-sink.ts';
import { FileSink } from '../../src/sinks/file-sink.ts';
import { RepositorySink } from '../../src/sinks/repository-sink.ts';
import type { Sink, SinkOp, SinkResult, SinkType } from '../../src/sinks/sink.ts';
import { BUILTIN_SINK_TYPES, SinkRegistry, sinkTypes } from '../../src/sinks/sink-registry.ts';
import { tempDir } from '../support/crawl-harness.ts';
import { storeWithDocs } from '../support/feed-store.ts';

/** Keeps every operation it is given. */
class MemorySink implements Sink {
  readonly type = 'memory';
  readonly name: string;
  readonly label: string;
  readonly ops: SinkOp[] = [];
  closed = false;
  constructor(name: string, label: string) {
    this.name = name;
    this.label = label;
  }
  async submit(batch: readonly SinkOp[]): Promise<SinkResult> {
    this.ops.push(...batch);
    return { rejected: [] };
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

const opened: MemorySink[] = [];
const MEMORY: SinkType = {
  type: 'memory',
  problems: (name, s) => (s.index === undefined ? [{ param: `trawl_sinks.${name}.index`, message: `trawl_sinks.${name}: the memory sink needs index`, unsupported: false }] : []),
  open: (name, s, cx) => {
    const sink = new MemorySink(name, cx.reveal(s.index!));
    opened.push(sink);
    return sink;
  },
};

describe('sink registry', () => {
  it('implements exactly the available types the configuration names, and none of the reserved ones', () => {
    assert.deepEqual(BUILTIN_SINK_TYPES.map((t) => t.type), [...AVAILABLE_SINK_TYPES]);
    assert.deepEqual(sinkTypes.types, [...AVAILABLE_SINK_TYPES]);
    for (const t of RESERVED_SINK_TYPES) assert.equal(sinkTypes.get(t), undefined, t);
    // The configuration's allowed values are the same list.
    const typeDef = findSection(COLLECTION, 'trawl_sinks')?.dynamicSection?.attribs.find((a) => a.name === 'type');
    assert.deepEqual(typeDef?.allowed, [...SINK_TYPES]);
  });

  it('opens each built-in type as its class, revealing only the secrets it uses', () => {
    const revealed: string[] = [];
    const sinks = sinkTypes.open({
      c: { type: 'console' },
      f: { type: 'file', outputDir: '/tmp/out' },
      e: { type: 'elasticsearch', url: 'http://127.0.0.1:9', password: '!ENC!p', username: 'u' },
      r: { type: 'repository', repositoryRoot: '/tmp/repo', password: '!ENC!unused' },
      j: { type: 'jms', repositoryRoot: '/tmp/repo2', repositoryId: 'h1', brokerUrl: 'stomp://127.0.0.1:9', username: 'u', password: '!ENC!q' },
    }, (v) => {
      revealed.push(v);
      return v;
    });
    assert.ok(sinks[0] instanceof ConsoleSink);
    assert.ok(sinks[1] instanceof FileSink);
    assert.equal((sinks[1] as FileSink).outputDir, '/tmp/out');
    assert.ok(sinks[2] instanceof ElasticsearchSink);
    assert.ok(sinks[3] instanceof RepositorySink);
    assert.deepEqual([sinks[3].type, (sinks[3] as RepositorySink).root], ['repository', '/tmp/repo']);
    assert.ok(sinks[4] instanceof RepositorySink);
    assert.deepEqual([sinks[4].type, (sinks[4] as RepositorySink).root], ['jms', '/tmp/repo2']);
    assert.deepEqual(sinks.map((s) => s.name), ['c', 'f', 'e', 'r', 'j']);
    // The broker URL is revealed because it is used; the repository sink's unused password is not.
    assert.deepEqual(revealed, ['!ENC!p', 'stomp://127.0.0.1:9', '!ENC!q']);
  });

  it('refuses with the configuration rules: a reserved type as unsupported, a missing parameter as a rule, before opening any', () => {
    const err = (f: () => unknown): TrawlError => {
      try {
        f();
      } catch (e) {
        assert.ok(e instanceof TrawlError);
        return e;
      }
      assert.fail('no error');
    };
    const warc = err(() => sinkTypes.open({ ok: { type: 'console' }, w: { type: 'warc' } }));
    assert.equal(warc.code, 'TRAWL_ERR_CONFIG_UNSUPPORTED');
    assert.match(warc.message, /trawl_sinks\.w\.type warc is not available/);
    const file = err(() => sinkTypes.check({ f: { type: 'file' } }));
    assert.equal(file.code, 'TRAWL_ERR_CONFIG_RULE');
    assert.match(file.message, /trawl_sinks\.f: the file sink needs output_dir/);
    const jms = err(() => sinkTypes.check({ j: { type: 'jms', repositoryRoot: '/r', repositoryId: 'x', brokerUrl: 'amqp://h' } }));
    assert.equal(jms.code, 'TRAWL_ERR_CONFIG_RULE');
    assert.match(jms.message, /trawl_sinks\.j\.broker_url "amqp:\/\/h" has the scheme amqp:\/\//);
    assert.equal(err(() => sinkTypes.check({ m: { type: 'memory' } })).code, 'TRAWL_ERR_CONFIG_UNSUPPORTED');
    assert.equal(err(() => sinkTypes.check({ n: {} })).code, 'TRAWL_ERR_CONFIG_RULE');
  });

  it('refuses a type registered twice', () => {
    assert.throws(() => new SinkRegistry().register(BUILTIN_SINK_TYPES[0]!), /registered twice/);
  });

  it('a type registered here is checked by its own rules and fed to from a collection configuration', async () => {
    const registry = new SinkRegistry().register(MEMORY);
    assert.deepEqual(registry.types, [...AVAILABLE_SINK_TYPES, 'memory']);
    const config = emptyCollection('c');
    const mem = childSection(childSection(config.root, 'trawl_sinks'), 'mem');
    mem.attribs.set('type', 'memory');
    assert.throws(() => registry.check(resolveSettings(config).sinks), (e: unknown) => e instanceof TrawlError && e.code === 'TRAWL_ERR_CONFIG_RULE' && /memory sink needs index/.test(e.message));
    mem.attribs.set('index', 'idx');
    const settings = resolveSettings(config);
    const dir = tempDir('sink-registry');
    const urls = ['http://a.test/1', 'http://a.test/2'];
    const { store, content } = await storeWithDocs(dir, urls);
    await store.queueFeedFromRecords('c', ['default'], { urls });
    const feeder = collectionFeeder({
      name: 'c', settings, destinations: new Map([['default', 'c']]), store, content, dataDir: dir,
      paused: () => false, warn: () => undefined, sinkTypes: registry,
    });
    assert.ok(feeder);
    assert.equal(await feeder.drain(5000), 0);
    await feeder.stop();
    const sink = opened.at(-1)!;
    assert.equal(sink.label, 'idx');
    assert.equal(sink.closed, true);
    assert.deepEqual(sink.ops.map((o) => (o.op === 'index' ? o.doc.url : o.url)).sort(), urls);
    await content.close();
    store.close();
  });
});
