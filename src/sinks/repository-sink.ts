/**
 * The CiteSeerX repository sinks (CiteSeerX Crawler Interface, "Crawl Data",
 * "Exposing the Crawler Repository", "New Content Message").
 *
 *   type repository: every fed document ─► <root>/<mirror path>        (the bytes as fetched)
 *                                         ─► <root>/<mirror path>.met  (CrawlData XML)
 *   type jms:        the same, then one MapMessage per file on the ingestion queue
 *                    { JID, REPID, FILEPATH, METAPATH, RESOURCETYPE }  (stomp-producer.ts)
 *                    and, with a status queue, a submitted job's failed URIs
 *                    { TYPE 1, JID, URL, STATUS }  (sendStatuses, from the feeder)
 *
 * A batch: each file and then its sidecar is written to a temporary name,
 * fsync'd and renamed into place; the directories are fsync'd; only then are
 * the messages sent, and the batch resolves once the broker receipted them.
 * A failure anywhere rejects the batch, which the feeder sends again from
 * the outbox: files are rewritten with the same bytes and messages sent
 * again with the same fields (at least once; docs/citeseerx.md). A delete
 * removes the file and its sidecar (no message: the interface has none).
 *
 * Which documents: the sink's filter (sink-filter.ts: accept_pattern,
 * accept_types, hub_link_indicator) decides, as the CiteSeerX profile's
 * MirrorWriter does; a document it leaves out arrives as a delete, which
 * removes files written for it before. Each index op says article or hub.
 *
 * The mirror path is repository-layout.ts's. When it is taken (by a file
 * of another URL, per its sidecar's url, or by a directory where a file
 * must go, or the reverse) the document goes to its LONG path instead.
 */

import { hash } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { trawlError } from '../core/errors.ts';
import { maskText } from '../config/secrets.ts';
import { contentTypeHeader, crawlDataUrl, crawlDataXml } from './crawl-data.ts';
import { longPath, mirrorPath, SIDECAR_SUFFIX } from './repository-layout.ts';
import { configRulesFor, type Sink, type SinkOp, type SinkResult, type SinkSettings, type SinkType } from './sink.ts';
import { brokerAddress, StompProducer } from './stomp-producer.ts';
import { fsyncDir } from '../store/content-store-common.ts';

export const DEFAULT_INGESTION_QUEUE = 'csx.ingestion.documentsToIngest';

export interface RepositoryAnnouncer {
  readonly queue: string;
  readonly repositoryId: string;
  /** JID; default: the crawl collection. */
  readonly jobId: string | undefined;
  /** Where URL Status Messages go (status_queue); none without. */
  readonly statusQueue?: string | undefined;
  readonly producer: Pick<StompProducer, 'sendMaps' | 'close'>;
}

/** What a URL Status Message holds, field by field (the spec's names; TYPE is 1). */
export interface UrlStatusMessage {
  readonly TYPE: 1;
  readonly JID: string;
  readonly URL: string;
  readonly STATUS: number;
  readonly [field: string]: string | number;
}

/** What a New Content Message holds, field by field (the spec's names). */
export interface NewContentMessage {
  readonly JID: string;
  readonly REPID: string;
  readonly FILEPATH: string;
  readonly METAPATH: string;
  readonly RESOURCETYPE: 'article' | 'hub';
  readonly [field: string]: string;
}

/** A write whose place is taken: the document goes to its LONG path. */
class PlaceTaken extends Error {}

const TAKEN_CODES = new Set(['ENOTDIR', 'EISDIR', 'EEXIST', 'ENOTEMPTY']);

export class RepositorySink implements Sink {
  readonly type: string;
  readonly name: string;
  readonly root: string;
  private readonly announcer: RepositoryAnnouncer | undefined;

  constructor(name: string, root: string, announcer?: RepositoryAnnouncer) {
    this.name = name;
    this.root = root;
    this.announcer = announcer;
    this.type = announcer ? 'jms' : 'repository';
    if (announcer?.statusQueue === undefined) this.sendStatuses = undefined;
  }

  /** URL Status Messages for a submitted job's failed URIs, on the status queue (only with one). */
  sendStatuses: Sink['sendStatuses'] = async (collection, updates) => {
    const a = this.announcer!;
    const messages: UrlStatusMessage[] = updates.map((u) => ({ TYPE: 1, JID: a.jobId ?? collection, URL: u.url, STATUS: u.status }));
    await a.producer.sendMaps(a.statusQueue!, messages);
  };

  async submit(batch: readonly SinkOp[]): Promise<SinkResult> {
    const messages: NewContentMessage[] = [];
    const rejected: Array<{ index: number; reason: string }> = [];
    const dirs = new Set<string>();
    for (let i = 0; i < batch.length; i++) {
      const b = batch[i]!;
      if (b.op === 'delete') {
        await this.remove(b.url, dirs);
        continue;
      }
      if (!b.source) {
        rejected.push({ index: i, reason: 'the document\'s stored bytes are not available to the repository sink' });
        continue;
      }
      const kind = b.kind ?? 'article';
      const { record, body, header, mime } = b.source;
      const sha1 = hash('sha1', body, 'hex');
      const sidecar = crawlDataXml({ crawlDateMs: record.lastCrawledMs, url: record.url, parentUrl: record.parent, contentType: contentTypeHeader(header) ?? mime, sha1 });
      let path = mirrorPath(record.url);
      try {
        await this.writePair(path, record.url, body, sidecar, dirs);
      } catch (err) {
        if (!(err instanceof PlaceTaken)) throw err;
        path = longPath(record.url);
        await this.writePair(path, record.url, body, sidecar, dirs).catch((e: unknown) => {
          // Only another program's files can stand there: the batch waits until they are moved.
          throw e instanceof PlaceTaken ? this.writeError(join(this.root, ...path.split('/')), new Error('the place is taken by a directory or another URL\'s file')) : e;
        });
      }
      if (this.announcer) {
        messages.push({
          JID: this.announcer.jobId ?? b.doc.crawl_collection,
          REPID: this.announcer.repositoryId,
          FILEPATH: path,
          METAPATH: `${path}${SIDECAR_SUFFIX}`,
          RESOURCETYPE: kind,
        });
      }
    }
    for (const d of dirs) await this.syncDir(d);
    if (this.announcer) await this.announcer.producer.sendMaps(this.announcer.queue, messages);
    return { rejected };
  }

  /** Writes the file, then its sidecar; PlaceTaken when the mirror path belongs to another URL or clashes with a directory. */
  private async writePair(rel: string, url: string, body: Uint8Array, sidecar: string, dirs: Set<string>): Promise<void> {
    const file = join(this.root, ...rel.split('/'));
    const meta = `${file}${SIDECAR_SUFFIX}`;
    const dir = dirname(file);
    try {
      const made = await mkdir(dir, { recursive: true });
      if (made !== undefined) {
        // Every directory made, and the one it was made in, must reach the disk too.
        for (let d = dir; d.length >= this.root.length; d = dirname(d)) {
          dirs.add(d);
          if (d === dirname(made) || d === this.root) break;
        }
      }
    } catch (err) {
      if (TAKEN_CODES.has((err as NodeJS.ErrnoException).code ?? '')) throw new PlaceTaken();
      throw this.writeError(dir, err);
    }
    const owner = await readFile(meta, 'utf8').then(crawlDataUrl, (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return url;
      if (err.code === 'EISDIR' || err.code === 'ENOTDIR') return undefined;
      throw this.writeError(meta, err);
    });
    if (owner !== url) throw new PlaceTaken();
    const tmpName = `.trawl-${hash('sha1', url, 'hex').slice(0, 16)}`;
    await this.writeDurably(file, join(dir, `${tmpName}.tmp`), body);
    await this.writeDurably(meta, join(dir, `${tmpName}.met.tmp`), sidecar);
    dirs.add(dir);
  }

  private async writeDurably(path: string, tmp: string, data: Uint8Array | string): Promise<void> {
    try {
      const fh = await open(tmp, 'w', 0o644);
      try {
        await fh.writeFile(data);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => {});
      if (TAKEN_CODES.has((err as NodeJS.ErrnoException).code ?? '')) throw new PlaceTaken();
      throw this.writeError(path, err);
    }
  }

  private async syncDir(dir: string): Promise<void> {
    try {
      await fsyncDir(dir);
    } catch (err) {
      throw this.writeError(dir, (err as Error).cause ?? err);
    }
  }

  /** Removes a URL's file and sidecar: at its mirror path when its sidecar names the URL, and at its LONG path. */
  private async remove(url: string, dirs: Set<string>): Promise<void> {
    let mirror: string;
    try {
      mirror = mirrorPath(url);
    } catch {
      return; // not a URL the sink could have written
    }
    for (const rel of new Set([mirror, longPath(url)])) {
      const file = join(this.root, ...rel.split('/'));
      const meta = `${file}${SIDECAR_SUFFIX}`;
      const owner = await readFile(meta, 'utf8').then(crawlDataUrl, () => undefined);
      if (owner !== url) continue;
      try {
        await rm(file, { force: true });
        await rm(meta, { force: true });
      } catch (err) {
        throw this.writeError(file, err);
      }
      dirs.add(dirname(file));
    }
  }

  private writeError(path: string, err: unknown): Error {
    const rel = relative(this.root, path).split(sep).join('/');
    return trawlError('SINK_REPOSITORY_WRITE', { sink: this.name, path: rel === '' ? this.root : rel, reason: (err as Error).message }, { cause: err });
  }

  async close(): Promise<void> {
    await this.announcer?.producer.close();
  }
}

export const REPOSITORY_SINK: SinkType = {
  type: 'repository',
  problems: configRulesFor,
  open: (name, s) => new RepositorySink(name, s.repositoryRoot!),
};

/** A jms sink: a repository sink whose files are announced over STOMP. */
export function openJmsSink(name: string, s: SinkSettings, reveal: (v: string) => string): RepositorySink {
  const a = brokerAddress(reveal(s.brokerUrl!));
  if ('problem' in a) throw new Error(`jms sink ${name}: broker_url ${a.problem}`); // refused by the rules first
  const producer = new StompProducer({
    sink: name,
    host: a.host,
    port: a.port,
    login: s.username,
    passcode: s.password === undefined ? undefined : reveal(s.password),
    clientId: s.clientId,
  });
  return new RepositorySink(name, s.repositoryRoot!, { queue: s.ingestionQueue ?? DEFAULT_INGESTION_QUEUE, repositoryId: s.repositoryId!, jobId: s.jobId, statusQueue: s.statusQueue, producer });
}

export const JMS_SINK: SinkType = {
  type: 'jms',
  problems: configRulesFor,
  notes: (name, s) => {
    const a = s.brokerUrl === undefined ? undefined : brokerAddress(s.brokerUrl);
    return a && !('problem' in a) && a.warning ? [`trawl_sinks.${name}.broker_url: ${maskText(a.warning)}`] : [];
  },
  open: (name, s, cx) => openJmsSink(name, s, cx.reveal),
};
