import {
  Kafka,
  PartitionAssigners,
  logLevel,
  type Admin,
  type KafkaConfig,
  type LogEntry,
  type Producer,
} from 'kafkajs';
import type { Bus, IncomingMessage, OutgoingMessage, SubscribeOptions, Subscription } from '../ports/bus';
import type { Logger } from '../logger';
import { tracedHandler, tracedPublish } from './bus-tracing';
import { subscriptionAwareAssigner } from './kafka-assigner';

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  logger?: Logger;
  /** Redelivery backoff after a handler rejection (before kafkajs seeks back). Default 500 ms. */
  retryBackoffMs?: number;
}

/** Routes kafkajs' own log lines into the service's pino logger. */
function kafkaLogCreator(logger: Logger | undefined): KafkaConfig['logCreator'] {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      if (!logger) return;
      const { message, timestamp: _t, ...extra } = log;
      const entry = { kafka: namespace, ...extra };
      if (level === logLevel.ERROR) logger.error(entry, message);
      else if (level === logLevel.WARN) logger.warn(entry, message);
      else if (level === logLevel.INFO) logger.debug(entry, message);
      else logger.trace(entry, message);
    };
}

function newKafka(brokers: string[], clientId: string, logger?: Logger): Kafka {
  if (brokers.length === 0) throw new Error('KAFKA_BROKERS is empty');
  return new Kafka({ clientId, brokers, logLevel: logLevel.WARN, logCreator: kafkaLogCreator(logger) });
}

function decodeValue(raw: Buffer | null): unknown {
  if (raw === null) return null;
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Not JSON: hand the text over; handlers validate what they receive.
    return text;
  }
}

function decodeHeaders(headers: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (Buffer.isBuffer(v)) out[k] = v.toString('utf8');
    else if (typeof v === 'string') out[k] = v;
    else if (Array.isArray(v) && v.length > 0) out[k] = String(v[v.length - 1]);
  }
  return out;
}

/**
 * Creates the topics that do not exist yet with `partitions` partitions. Resolves true when it created
 * at least one. Topics that already exist are left untouched.
 */
export async function ensureTopics(
  brokers: string[],
  topics: string[],
  partitions: number,
  opts: { clientId?: string; logger?: Logger; replicationFactor?: number } = {},
): Promise<boolean> {
  const admin = newKafka(brokers, opts.clientId ?? 'vision-admin', opts.logger).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length === 0) return false;
    return await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((topic) => ({
        topic,
        numPartitions: partitions,
        ...(opts.replicationFactor ? { replicationFactor: opts.replicationFactor } : {}),
      })),
    });
  } finally {
    await admin.disconnect();
  }
}

/**
 * Distributed message bus over Kafka (kafkajs). The producer is idempotent and waits for all in-sync
 * replicas (acks -1). Each subscription is its own consumer in its group; a batch's offsets are
 * resolved and committed only after handleBatch resolves. When the handler rejects, the consumer
 * waits a little and rethrows, so kafkajs seeks back to the last committed offset and delivers the
 * batch again (at least once).
 */
export class KafkaBus implements Bus {
  readonly kind = 'kafka' as const;
  private readonly kafka: Kafka;
  private producer?: Producer;
  private producerReady?: Promise<Producer>;
  private admin?: Admin;
  private adminReady?: Promise<Admin>;
  private readonly subscriptions = new Set<Subscription>();
  private readonly logger?: Logger;
  private readonly retryBackoffMs: number;

  constructor(opts: KafkaBusOptions) {
    this.kafka = newKafka(opts.brokers, opts.clientId, opts.logger);
    this.logger = opts.logger;
    this.retryBackoffMs = opts.retryBackoffMs ?? 500;
  }

  private connectProducer(): Promise<Producer> {
    if (!this.producerReady) {
      const producer = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
      });
      this.producer = producer;
      this.producerReady = producer.connect().then(
        () => producer,
        (err: unknown) => {
          this.producerReady = undefined;
          throw err;
        },
      );
    }
    return this.producerReady;
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const producer = await this.connectProducer();
    await tracedPublish('kafka', topic, messages, async (traced) => {
      await producer.send({
        topic,
        acks: -1,
        messages: traced.map((m) => ({ key: m.key, value: JSON.stringify(m.value), headers: m.headers })),
      });
    });
  }

  async subscribe(opts: SubscribeOptions): Promise<Subscription> {
    const consumer = this.kafka.consumer({
      groupId: opts.group,
      allowAutoTopicCreation: false,
      partitionAssigners: [subscriptionAwareAssigner, PartitionAssigners.roundRobin],
    });
    const handleBatch = tracedHandler('kafka', opts);
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: opts.topic, fromBeginning: opts.fromBeginning ?? false });
      await consumer.run({
        eachBatchAutoResolve: false,
        autoCommit: true,
        eachBatch: async ({
          batch,
          resolveOffset,
          heartbeat,
          commitOffsetsIfNecessary,
          isRunning,
          isStale,
        }) => {
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
            this.logger?.warn(
              {
                err,
                topic: batch.topic,
                group: opts.group,
                partition: batch.partition,
                offset: batch.firstOffset(),
              },
              'handler rejected a batch; it will be delivered again',
            );
            await new Promise((r) => setTimeout(r, this.retryBackoffMs));
            throw err;
          }
          for (const m of batch.messages) resolveOffset(m.offset);
          // Commit now rather than on the auto-commit schedule: the batch is handled.
          await commitOffsetsIfNecessary({
            topics: [
              {
                topic: batch.topic,
                partitions: [
                  { partition: batch.partition, offset: (BigInt(batch.lastOffset()) + 1n).toString() },
                ],
              },
            ],
          });
          await heartbeat();
        },
      });
    } catch (err) {
      await consumer.disconnect().catch(() => undefined);
      throw err;
    }
    const sub: Subscription = {
      close: async () => {
        this.subscriptions.delete(sub);
        await consumer.disconnect();
      },
    };
    this.subscriptions.add(sub);
    return sub;
  }

  private connectAdmin(): Promise<Admin> {
    if (!this.adminReady) {
      const admin = this.kafka.admin();
      this.admin = admin;
      this.adminReady = admin.connect().then(
        () => admin,
        (err: unknown) => {
          this.adminReady = undefined;
          throw err;
        },
      );
    }
    return this.adminReady;
  }

  async check(): Promise<void> {
    try {
      const admin = await this.connectAdmin();
      await admin.listTopics();
    } catch (err) {
      const admin = this.admin;
      this.adminReady = undefined;
      this.admin = undefined;
      await admin?.disconnect().catch(() => undefined);
      throw err;
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.subscriptions].map((s) => s.close()));
    await Promise.allSettled([
      this.producerReady ? this.producer?.disconnect() : undefined,
      this.adminReady ? this.admin?.disconnect() : undefined,
    ]);
    this.producerReady = undefined;
    this.adminReady = undefined;
  }
}
