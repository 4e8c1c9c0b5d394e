import { Kafka, logLevel, type Admin, type KafkaConfig, type LogEntry, type Producer } from 'kafkajs';
import type { Bus, OutgoingMessage, SubscribeOptions, Subscription } from './port';
import type { Logger } from '../telemetry/logger';
import { tracedPublish } from './bus-tracing';
import { TrackedSubscriptions } from './tracked-subscriptions';
import { startKafkaSubscription } from './kafka-subscription';
import { stopIdleKafkajsRequestChecks } from './kafkajs-request-queue';

/** A Kafka principal's credential: SASL/SCRAM-SHA-512, the one mechanism the brokers take from clients. */
export interface KafkaSasl {
  mechanism: 'scram-sha-512';
  username: string;
  password: string;
}

/**
 * Where a Kafka client connects, and as whom (no `sasl`: unauthenticated, for a broker without SASL). SASL/PLAIN
 * is for a provisioning super user defined in the brokers' own configuration (compose's); services use SCRAM.
 */
export interface KafkaConnection {
  brokers: string[];
  sasl?: KafkaSasl | { mechanism: 'plain'; username: string; password: string };
}

export interface KafkaBusOptions extends KafkaConnection {
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

/** A kafkajs client of `conn`, its log lines into `logger`. */
export function newKafka(conn: KafkaConnection, clientId: string, logger?: Logger): Kafka {
  if (conn.brokers.length === 0) throw new Error('KAFKA_BROKERS is empty');
  stopIdleKafkajsRequestChecks();
  return new Kafka({
    clientId,
    brokers: conn.brokers,
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(logger),
    ...(conn.sasl ? { sasl: { ...conn.sasl } } : {}),
  });
}

/**
 * Creates the topics that do not exist yet with `partitions` partitions. Resolves true when it created
 * at least one. Topics that already exist are left untouched.
 */
export async function ensureTopics(
  brokers: string[],
  topics: string[],
  partitions: number,
  opts: {
    clientId?: string;
    logger?: Logger;
    replicationFactor?: number;
    sasl?: KafkaConnection['sasl'];
  } = {},
): Promise<boolean> {
  const admin = newKafka({ brokers, sasl: opts.sasl }, opts.clientId ?? 'vision-admin', opts.logger).admin();
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
 * replicas (acks -1). Each subscription is its own consumer in its group (kafka-subscription.ts): a
 * batch's offsets are committed only after handleBatch resolves, a rejected batch is delivered again
 * (at least once), and a consumer that kafkajs gives up on is replaced.
 */
export class KafkaBus implements Bus {
  readonly kind = 'kafka' as const;
  private readonly kafka: Kafka;
  private producer?: Producer;
  private producerReady?: Promise<Producer>;
  private admin?: Admin;
  private adminReady?: Promise<Admin>;
  private readonly subscriptions = new TrackedSubscriptions();
  private readonly logger?: Logger;
  private readonly retryBackoffMs: number;

  constructor(opts: KafkaBusOptions) {
    this.kafka = newKafka(opts, opts.clientId, opts.logger);
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
    const inner = await startKafkaSubscription(
      { kafka: this.kafka, logger: this.logger, retryBackoffMs: this.retryBackoffMs },
      opts,
    );
    return this.subscriptions.track(inner);
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
    await this.subscriptions.closeAll();
    await Promise.allSettled([
      this.producerReady ? this.producer?.disconnect() : undefined,
      this.adminReady ? this.admin?.disconnect() : undefined,
    ]);
    this.producerReady = undefined;
    this.adminReady = undefined;
  }
}
