import {
  Admin,
  compatibilityPartitioner,
  ProduceAcks,
  Producer,
  SASLMechanisms,
  stringSerializers,
  type SASLOptions,
} from '@platformatic/kafka';
import type { Bus, OutgoingMessage, SubscribeOptions, Subscription } from './port';
import type { Logger } from '../telemetry/logger';
import { tracedPublish } from './bus-tracing';
import { TrackedSubscriptions } from './tracked-subscriptions';
import type { KafkaSasl } from './kafka-bus';
import { startPlatformaticSubscription } from './platformatic-subscription';

export interface PlatformaticKafkaBusOptions {
  brokers: string[];
  clientId: string;
  logger?: Logger;
  /** Wait before a rejected batch is handed over again. Default 500 ms. */
  retryBackoffMs?: number;
  sasl?: KafkaSasl;
}

function saslOptions(sasl: KafkaSasl | undefined): SASLOptions | undefined {
  if (!sasl) return undefined;
  return { mechanism: SASLMechanisms.SCRAM_SHA_512, username: sasl.username, password: sasl.password };
}

/**
 * The distributed message bus over @platformatic/kafka (KAFKA_CLIENT=platformatic), the same contract as KafkaBus
 * (kafka-bus.ts, kafkajs): an idempotent producer that waits for all in-sync replicas and places a key on the
 * partition the Java client (and kafkajs) would, topics never created by the client, and subscriptions of
 * platformatic-subscription.ts.
 */
export class PlatformaticKafkaBus implements Bus {
  readonly kind = 'kafka' as const;
  private producer?: Producer<string, string, string, string>;
  private admin?: Admin;
  private readonly subscriptions = new TrackedSubscriptions();
  private readonly base: { clientId: string; bootstrapBrokers: string[]; sasl?: SASLOptions };
  private readonly logger?: Logger;
  private readonly retryBackoffMs: number;

  constructor(opts: PlatformaticKafkaBusOptions) {
    if (opts.brokers.length === 0) throw new Error('KAFKA_BROKERS is empty');
    const sasl = saslOptions(opts.sasl);
    this.base = { clientId: opts.clientId, bootstrapBrokers: opts.brokers, ...(sasl ? { sasl } : {}) };
    this.logger = opts.logger;
    this.retryBackoffMs = opts.retryBackoffMs ?? 500;
  }

  private getProducer(): Producer<string, string, string, string> {
    if (!this.producer) {
      const producer = new Producer<string, string, string, string>({
        ...this.base,
        idempotent: true,
        acks: ProduceAcks.ALL,
        autocreateTopics: false,
        partitioner: compatibilityPartitioner,
        serializers: stringSerializers,
      });
      producer.on('error', (err: unknown) => this.logger?.error({ err }, 'kafka producer error'));
      this.producer = producer;
    }
    return this.producer;
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const producer = this.getProducer();
    await tracedPublish('kafka', topic, messages, async (traced) => {
      await producer.send({
        messages: traced.map((m) => ({
          topic,
          key: m.key,
          value: JSON.stringify(m.value),
          headers: new Map(Object.entries(m.headers ?? {})),
        })),
      });
    });
  }

  async subscribe(opts: SubscribeOptions): Promise<Subscription> {
    const inner = await startPlatformaticSubscription(
      {
        brokers: this.base.bootstrapBrokers,
        clientId: this.base.clientId,
        ...(this.base.sasl ? { sasl: this.base.sasl } : {}),
        logger: this.logger,
        retryBackoffMs: this.retryBackoffMs,
      },
      opts,
    );
    return this.subscriptions.track(inner);
  }

  async check(): Promise<void> {
    if (!this.admin) {
      const admin = new Admin(this.base);
      admin.on('error', (err: unknown) => this.logger?.error({ err }, 'kafka admin error'));
      this.admin = admin;
    }
    try {
      await this.admin.listTopics();
    } catch (err) {
      const admin = this.admin;
      this.admin = undefined;
      await admin.close().catch(() => undefined);
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.subscriptions.closeAll();
    await Promise.allSettled([this.producer?.close(), this.admin?.close()]);
    this.producer = undefined;
    this.admin = undefined;
  }
}
