/**
 * The content store: where fetched documents are kept, following the
 * MS-FSCCFG 2.2.4.6 `storage` section.
 *
 *   put(url, doc) ──► cluster = hash(url) mod clusters
 *                     ├─ flatfile: one file per document (+ header file)
 *                     └─ bstore:   records appended to per-cluster block files,
 *                                  located by the returned ContentRef
 *
 * The crawl store (SQLite) keeps the ContentRef of each URI; the content
 * store itself keeps no index that must agree with it. A write is complete
 * (fsync'd) when `put` resolves, so a crawl store row never points at
 * content that a crash could lose.
 */

export interface StorageOptions {
  /** `datastore`: flatfile or bstore. */
  readonly datastore: 'flatfile' | 'bstore';
  /** `compress`: compress documents (zstd) before storing them. */
  readonly compress: boolean;
  /** `compress_exclude_mime`: MIME patterns (type/subtype, * as a whole field) stored uncompressed. */
  readonly compressExcludeMime: readonly string[];
  /** `store_http_header`: keep the response header block with the document. */
  readonly storeHttpHeader: boolean;
  /** `clusters`: number of storage clusters documents are spread over. */
  readonly clusters: number;
}

export interface StoredDocument {
  readonly body: Uint8Array;
  /** The raw response header block ("HTTP/1.1 200 OK\r\nName: value\r\n…"), when store_http_header is on. */
  readonly header: string | undefined;
  readonly mime: string;
}

/** Opaque to callers; persisted in the crawl store. */
export type ContentRef = string;

export interface ContentStore {
  /** Stores a document; resolves once it is durable. Storing the same URL again replaces it (a new ref). */
  put(url: string, doc: StoredDocument): Promise<ContentRef>;
  /** The document, or undefined when the ref is unknown or was deleted. */
  get(ref: ContentRef): Promise<StoredDocument | undefined>;
  /** Removes a document; deleting an unknown ref is a no-op. */
  delete(ref: ContentRef): Promise<void>;
  /** Bytes used on disk. */
  diskUsage(): Promise<number>;
  close(): Promise<void>;
}
