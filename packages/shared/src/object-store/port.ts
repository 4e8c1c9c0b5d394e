import type { Readable } from 'node:stream';

/** Object storage port: MinIO (S3) in distributed mode, a local directory in standalone mode. */
export interface ObjectInfo {
  key: string;
  size: number;
  lastModified: Date;
}

/** A byte range of an object, both ends inclusive (as in an HTTP Range header). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface ObjectStore {
  readonly kind: 'minio' | 'directory';
  /** Writes an object from a stream or buffer. A failed write leaves no object behind. */
  put(
    key: string,
    body: Readable | Buffer,
    opts?: { contentType?: string; size?: number },
  ): Promise<{ size: number }>;
  /** Reads an object, or only the bytes `range.start..range.end` (inclusive) of it. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  stat(key: string): Promise<ObjectInfo | undefined>;
  delete(keys: string[]): Promise<void>;
  /** Objects under a prefix older than `before`, at most `limit` of them (for retention janitors). */
  listOlderThan(prefix: string, before: Date, limit: number): Promise<ObjectInfo[]>;
  /**
   * A location ffmpeg can open with seeking: a file path for the directory store, a short-lived
   * presigned URL for MinIO.
   */
  locate(key: string): Promise<string>;
  check(): Promise<void>;
}
