import { Client, type LifecycleRule } from 'minio';
import { Transform, pipeline, type Readable } from 'node:stream';
import type { ByteRange, ObjectInfo, ObjectStore } from './port';
import type { Logger } from '../telemetry/logger';
import { ObjectNotFoundError, validateObjectKey } from './directory-object-store';

export interface MinioObjectStoreOptions {
  /** S3_ENDPOINT as a URL, e.g. http://127.0.0.1:9000 */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  region: string;
  /** Lifetime of the presigned URLs locate() returns. Default 3600 s. */
  presignSeconds?: number;
  logger?: Logger;
}

export interface ExpiryRule {
  id: string;
  /** Key prefix the rule applies to ('' for the whole bucket). */
  prefix: string;
  days: number;
}

/** Parses S3_ENDPOINT (a URL) into minio client options. */
export function minioClientOptions(endpoint: string) {
  const url = new URL(endpoint);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error('S3_ENDPOINT must be an http(s) URL');
  const useSSL = url.protocol === 'https:';
  return { endPoint: url.hostname, port: url.port ? Number(url.port) : useSSL ? 443 : 80, useSSL };
}

/**
 * Sets the bucket's lifecycle to expire objects under each prefix after `days` days (for example
 * 90-day retention of uploads), and to abort multipart uploads left incomplete for a day.
 */
export async function setBucketLifecycle(client: Client, bucket: string, rules: ExpiryRule[]): Promise<void> {
  const Rule: LifecycleRule[] = rules.map((r) => ({
    ID: r.id,
    Status: 'Enabled',
    Filter: { Prefix: r.prefix },
    Expiration: { Days: r.days },
    AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
  }));
  await client.setBucketLifecycle(bucket, { Rule });
}

/**
 * Multipart part size, fixed (minio-js then never picks another): the S3 minimum, 5 MiB. minio-js
 * holds a part in memory per upload, several times over while it hashes and sends it (about 40 MB per
 * upload with 8 MiB parts, measured by test/distributed/uploads.test.ts); for a stream of unknown size
 * it would otherwise size parts for a 5 TiB object (about 528 MiB each). 10,000 parts of 5 MiB make
 * 48 GiB the largest object; ours are at most 512 MB.
 */
export const PART_SIZE = 5 * 1024 * 1024;

function isNotFound(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'NotFound' || code === 'NoSuchKey' || code === 'NoSuchObject';
}

/**
 * Distributed object store on MinIO (any S3 API). The bucket is created on first use when missing. A
 * put is a single S3 PUT or multipart upload: an object appears only when the upload completes.
 */
export class MinioObjectStore implements ObjectStore {
  readonly kind = 'minio' as const;
  readonly client: Client;
  readonly bucket: string;
  private readonly region: string;
  private readonly presignSeconds: number;
  private ready?: Promise<void>;

  constructor(opts: MinioObjectStoreOptions) {
    this.client = new Client({
      ...minioClientOptions(opts.endpoint),
      accessKey: opts.accessKey,
      secretKey: opts.secretKey,
      region: opts.region,
      pathStyle: true,
      partSize: PART_SIZE,
    });
    this.bucket = opts.bucket;
    this.region = opts.region;
    this.presignSeconds = opts.presignSeconds ?? 3600;
  }

  /** Creates the bucket when it does not exist (once per instance; retried after a failure). */
  ensureBucket(): Promise<void> {
    if (!this.ready) {
      this.ready = (async () => {
        if (await this.client.bucketExists(this.bucket)) return;
        try {
          await this.client.makeBucket(this.bucket, this.region);
        } catch (err) {
          const code = (err as { code?: unknown })?.code;
          if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw err;
        }
      })().catch((err: unknown) => {
        this.ready = undefined;
        throw err;
      });
    }
    return this.ready;
  }

  async put(
    key: string,
    body: Readable | Buffer,
    opts: { contentType?: string; size?: number } = {},
  ): Promise<{ size: number }> {
    validateObjectKey(key);
    await this.ensureBucket();
    const meta = opts.contentType ? { 'Content-Type': opts.contentType } : {};
    if (Buffer.isBuffer(body)) {
      await this.client.putObject(this.bucket, key, body, body.length, meta);
      return { size: body.length };
    }
    // Count through a pass-through stage: a 'data' listener on `body` would switch it to flowing mode
    // and lose the chunks emitted before the client starts reading (an empty multipart upload).
    let size = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        cb(null, chunk);
      },
    });
    // pipeline() also reports a body that failed before this call (the caller may destroy it early).
    const failed = new Promise<never>((_, reject) => {
      pipeline(body, counted, (err) => {
        if (err) reject(err);
      });
    });
    try {
      await Promise.race([this.client.putObject(this.bucket, key, counted, opts.size, meta), failed]);
    } catch (err) {
      await this.client.removeIncompleteUpload(this.bucket, key).catch(() => undefined);
      throw err;
    }
    if (opts.size !== undefined && opts.size !== size) {
      await this.client.removeObject(this.bucket, key).catch(() => undefined);
      throw new Error(`object ${key}: expected ${opts.size} bytes, received ${size}`);
    }
    return { size };
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    validateObjectKey(key);
    try {
      if (range)
        return await this.client.getPartialObject(this.bucket, key, range.start, range.end - range.start + 1);
      return await this.client.getObject(this.bucket, key);
    } catch (err) {
      if (isNotFound(err)) throw new ObjectNotFoundError(key);
      throw err;
    }
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    validateObjectKey(key);
    try {
      const s = await this.client.statObject(this.bucket, key);
      return { key, size: s.size, lastModified: s.lastModified };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async delete(keys: string[]): Promise<void> {
    keys.forEach(validateObjectKey);
    for (let i = 0; i < keys.length; i += 1000) {
      await this.client.removeObjects(this.bucket, keys.slice(i, i + 1000));
    }
  }

  async listOlderThan(prefix: string, before: Date, limit: number): Promise<ObjectInfo[]> {
    const out: ObjectInfo[] = [];
    if (limit <= 0) return out;
    const stream = this.client.listObjectsV2(this.bucket, prefix, true);
    try {
      for await (const item of stream as AsyncIterable<{
        name?: string;
        size: number;
        lastModified?: Date;
      }>) {
        if (item.name && item.lastModified && item.lastModified < before) {
          out.push({ key: item.name, size: item.size, lastModified: item.lastModified });
          if (out.length >= limit) break;
        }
      }
    } finally {
      stream.destroy();
    }
    return out;
  }

  async locate(key: string): Promise<string> {
    if (!(await this.stat(key))) throw new ObjectNotFoundError(key);
    return this.client.presignedGetObject(this.bucket, key, this.presignSeconds);
  }

  async check(): Promise<void> {
    await this.ensureBucket();
    if (!(await this.client.bucketExists(this.bucket)))
      throw new Error(`bucket ${this.bucket} does not exist`);
  }
}
