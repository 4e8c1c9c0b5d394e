import { PartitionAssigners, type Consumer, type EachBatchPayload, type Kafka } from 'kafkajs';
import type { IncomingMessage, SubscribeOptions, Subscription } from './port';
import type { Logger } from '../telemetry/logger';
import { tracedHandler } from './bus-tracing';
import { subscriptionAwareAssigner } from './kafka-assigner';
import { decodeHeaders, decodeValue } from './kafka-message';
import { ConsumerRestarter } from './consumer-restarter';

export interface KafkaSubscriptionDeps {
  kafka: Kafka;
  logger?: Logger;
  /** Redelivery backoff after a handler rejection (before kafkajs seeks back). */
  retryBackoffMs: number;
}

/**
 * A member's heartbeat is when it learns that its group rebalances: a second consumer joining a group makes the
 * first one rejoin on its next beat, so the join waits up to one interval (kafkajs default 3 s).
 */
const HEARTBEAT_MS = 1000;
/**
 * The longest an empty fetch waits on the broker (kafkajs default 5 s). A fetch with records returns at once; a
 * disconnect waits for the fetch in flight, so this bounds how long a consumer takes to leave.
 */
const FETCH_WAIT_MS = 1000;

/**
 * One batch: hand it to the handler, then resolve and commit its offsets. When the handler rejects, wait a
 * little and rethrow, so kafkajs seeks back to the last committed offset and delivers the batch again.
 */
function batchRunner(deps: KafkaSubscriptionDeps, opts: SubscribeOptions) {
  const handleBatch = tracedHandler('kafka', opts);
  return async ({
    batch,
    resolveOffset,
    heartbeat,
    commitOffsetsIfNecessary,
    isRunning,
    isStale,
  }: EachBatchPayload) => {
    if (!isRunning() || isStale() || batch.messages.length === 0) return;
    const messages: IncomingMessage[] = batch.messages.map((m) => ({
      topic: batch.topic,
      key: m.key ? m.key.toString('utf8') : '',
      value: decodeValue(m.value),
      headers: decodeHeaders(m.headers as Record<string, unknown> | undefined),
      offset: m.offset,
      partition: batch.partition,
    }));
    try {
      await handleBatch(messages, Number(batch.offsetLag()));
    } catch (err) {
      deps.logger?.warn(
        {
          err,
          topic: batch.topic,
          group: opts.group,
          partition: batch.partition,
          offset: batch.firstOffset(),
        },
        'handler rejected a batch; it will be delivered again',
      );
      await new Promise((r) => setTimeout(r, deps.retryBackoffMs));
      throw err;
    }
    for (const m of batch.messages) resolveOffset(m.offset);
    // Commit now rather than on the auto-commit schedule: the batch is handled.
    const next = (BigInt(batch.lastOffset()) + 1n).toString();
    await commitOffsetsIfNecessary({
      topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }],
    });
    await heartbeat();
  };
}

/**
 * A consumer in `opts.group` that stays in its group. kafkajs restarts a crashed consumer itself only when
 * the cause is retriable; a TypeError (thrown by a handler, or by kafkajs itself in a rebalance race) ends it
 * for good (kafkajs has disconnected it), and the process would silently stop consuming. Such a consumer is
 * replaced by the subscription's ConsumerRestarter (consumer-restarter.ts: a backoff of 1 s doubling to 30 s, reset
 * once the new one joins its group).
 */
export async function startKafkaSubscription(
  deps: KafkaSubscriptionDeps,
  opts: SubscribeOptions,
): Promise<Subscription> {
  const eachBatch = batchRunner(deps, opts);
  const restarter: ConsumerRestarter<Consumer> = new ConsumerRestarter<Consumer>({
    logger: deps.logger,
    where: { group: opts.group, topic: opts.topic },
    open: async () => {
      const consumer = deps.kafka.consumer({
        groupId: opts.group,
        allowAutoTopicCreation: false,
        heartbeatInterval: HEARTBEAT_MS,
        maxWaitTimeInMs: FETCH_WAIT_MS,
        partitionAssigners: [subscriptionAwareAssigner, PartitionAssigners.roundRobin],
      });
      consumer.on(consumer.events.GROUP_JOIN, () => restarter.joined());
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (payload.restart) return;
        restarter.failed(consumer, (payload.error as Error & { cause?: Error }).cause ?? payload.error);
      });
      await consumer.connect();
      try {
        await consumer.subscribe({ topic: opts.topic, fromBeginning: opts.fromBeginning ?? false });
        await consumer.run({ eachBatchAutoResolve: false, autoCommit: true, eachBatch });
      } catch (err) {
        await consumer.disconnect().catch(() => undefined);
        throw err;
      }
      return consumer;
    },
    // A consumer that crashed for good is disconnected already.
    stop: async (consumer, why) => {
      if (why === 'closed') await consumer.disconnect();
    },
  });
  await restarter.start();
  return { close: () => restarter.close() };
}
