/** The consumer of `vision.image-calls` (group `tasks-image-calls`): each image call's record becomes its task. */
import {
  GROUPS,
  type Bus,
  type IncomingMessage,
  type Logger,
  type Subscription,
  TOPICS,
} from '@vision/shared';
import { z } from 'zod';
import { imageCallRecordSchema } from '../domain/image-call';
import type { ImageCalls } from '../use-cases/image-calls';

export const IMAGE_CALLS_GROUP = GROUPS.tasksImageCalls;

const recordedSchema = imageCallRecordSchema.extend({
  schema: z.literal(1),
  event_id: z.string().max(100),
  type: z.literal('image_call.recorded'),
});

/**
 * Stores each record of a batch in order. A message that is not a record is logged and skipped (it would
 * come back forever); a record that cannot be stored now (database, scene list) fails the batch, which
 * is delivered again (the store is idempotent).
 */
export function imageCallsBatchHandler(
  calls: Pick<ImageCalls, 'record'>,
  logger: Logger,
): (messages: IncomingMessage[]) => Promise<void> {
  return async (messages) => {
    for (const m of messages) {
      const parsed = recordedSchema.safeParse(m.value);
      if (!parsed.success) {
        logger.error(
          { partition: m.partition, offset: m.offset, issue: parsed.error.issues[0]?.message },
          'skipped a vision.image-calls message that is not an image call record',
        );
        continue;
      }
      await calls.record(parsed.data);
    }
  };
}

export function subscribeImageCalls(
  bus: Bus,
  calls: Pick<ImageCalls, 'record'>,
  logger: Logger,
): Promise<Subscription> {
  return bus.subscribe({
    topic: TOPICS.imageCalls,
    group: IMAGE_CALLS_GROUP,
    fromBeginning: true,
    handleBatch: imageCallsBatchHandler(calls, logger),
  });
}
