import path from 'node:path';
import { ConfigError, type CommonConfig } from '../config/config';
import type { Logger } from '../telemetry/logger';
import type { ObjectStore } from './port';
import { DirectoryObjectStore } from './directory-object-store';
import { MinioObjectStore } from './minio-object-store';

/**
 * The object store for this configuration: MinIO (S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY,
 * S3_BUCKET, S3_REGION) in distributed mode, the directory `${VISION_DATA_DIR}/objects` in standalone
 * mode.
 */
export function createObjectStore(
  cfg: Pick<
    CommonConfig,
    | 'VISION_MODE'
    | 'VISION_DATA_DIR'
    | 'S3_ENDPOINT'
    | 'S3_ACCESS_KEY'
    | 'S3_SECRET_KEY'
    | 'S3_BUCKET'
    | 'S3_REGION'
  >,
  opts: { logger?: Logger } = {},
): ObjectStore {
  if (cfg.VISION_MODE === 'distributed') {
    const missing = (['S3_ENDPOINT', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'] as const).filter((k) => !cfg[k]);
    if (missing.length > 0)
      throw new ConfigError(missing.map((k) => `${k}: required in distributed mode (not set)`));
    try {
      new URL(cfg.S3_ENDPOINT as string);
    } catch {
      throw new ConfigError(['S3_ENDPOINT: expected a URL such as http://127.0.0.1:9000']);
    }
    return new MinioObjectStore({
      endpoint: cfg.S3_ENDPOINT as string,
      accessKey: cfg.S3_ACCESS_KEY as string,
      secretKey: cfg.S3_SECRET_KEY as string,
      bucket: cfg.S3_BUCKET,
      region: cfg.S3_REGION,
      logger: opts.logger,
    });
  }
  return new DirectoryObjectStore(path.join(cfg.VISION_DATA_DIR, 'objects'));
}
