import type { LifecycleRule } from 'minio';
import { type Logger, MinioObjectStore, type ObjectStore } from '@vision/shared';
import { IMAGE_PREFIX } from '../domain/object-key';

export const IMAGES_LIFECYCLE_RULE_ID = 'images-retention';

/**
 * On MinIO, adds (or updates) a bucket lifecycle rule expiring objects under `images/` after the
 * retention period, as a second line behind the janitor. Other rules of the bucket (other services'
 * prefixes) are kept. The directory store has no lifecycle: the janitor alone applies there.
 */
export async function ensureImagesLifecycle(
  store: ObjectStore,
  retentionDays: number,
  logger: Logger,
): Promise<boolean> {
  if (!(store instanceof MinioObjectStore)) return false;
  try {
    await store.check();
    let existing: LifecycleRule[] = [];
    try {
      existing = (await store.client.getBucketLifecycle(store.bucket))?.Rule ?? [];
    } catch {
      existing = []; // NoSuchLifecycleConfiguration
    }
    const mine: LifecycleRule = {
      ID: IMAGES_LIFECYCLE_RULE_ID,
      Status: 'Enabled',
      Filter: { Prefix: IMAGE_PREFIX },
      Expiration: { Days: retentionDays },
      AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
    };
    const rules = [...existing.filter((r) => r.ID !== IMAGES_LIFECYCLE_RULE_ID), mine];
    await store.client.setBucketLifecycle(store.bucket, { Rule: rules });
    return true;
  } catch (err) {
    logger.warn(
      { err },
      'could not set the bucket lifecycle rule for images; the janitor still applies retention',
    );
    return false;
  }
}
