import type { Clock, Logger, ObjectStore } from '@vision/shared';
import { IMAGE_PREFIX, retentionCutoff } from '../domain/object-key';
import type { CallStore } from '../store/call-store';

const BATCH = 500;

/**
 * 90-day retention (SPEC.md 8): deletes uploaded images and stored call results older than the
 * retention period. Idempotent; safe to run on several replicas at once.
 */
export class RetentionJanitor {
  constructor(
    private readonly store: ObjectStore,
    private readonly calls: CallStore,
    private readonly clock: Clock,
    private readonly retentionDays: number,
    private readonly logger: Logger,
  ) {}

  async runOnce(): Promise<{ objects: number; calls: number }> {
    const cutoff = retentionCutoff(this.clock.now(), this.retentionDays);
    let objects = 0;
    for (;;) {
      const old = await this.store.listOlderThan(IMAGE_PREFIX, cutoff, BATCH);
      if (old.length === 0) break;
      await this.store.delete(old.map((o) => o.key));
      objects += old.length;
      if (old.length < BATCH) break;
    }
    let calls = 0;
    for (;;) {
      const n = await this.calls.deleteOlderThan(cutoff, BATCH);
      calls += n;
      if (n < BATCH) break;
    }
    if (objects > 0 || calls > 0)
      this.logger.info({ objects, calls, cutoff }, 'retention: deleted expired images and results');
    return { objects, calls };
  }
}
