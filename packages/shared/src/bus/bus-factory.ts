import { ConfigError, type CommonConfig } from '../config/config';
import type { Logger } from '../telemetry/logger';
import { busName, type Bus, type OutgoingMessage, type SubscribeOptions, type Subscription } from './port';
import { InProcessBus } from './in-process-bus';
import { KafkaBus, type KafkaSasl } from './kafka-bus';
import { PlatformaticKafkaBus } from './platformatic-bus';

/** The Kafka client library the bus runs on (KAFKA_CLIENT); both implement the same Bus contract. */
export type KafkaClient = 'kafkajs' | 'platformatic';

/**
 * A bus whose topics and consumer groups are those of `inner` with `prefix` before each name (busName): the services
 * publish and subscribe by the names of TOPICS and GROUPS, and the brokers see the deployment's own.
 */
export class PrefixedBus implements Bus {
  readonly kind: Bus['kind'];

  constructor(
    private readonly inner: Bus,
    readonly prefix: string,
  ) {
    busName(prefix, ''); // refuses a prefix that is no part of a topic name now, not at the first publish
    this.kind = inner.kind;
  }

  publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    return this.inner.publish(busName(this.prefix, topic), messages);
  }

  subscribe(opts: SubscribeOptions): Promise<Subscription> {
    return this.inner.subscribe({
      ...opts,
      topic: busName(this.prefix, opts.topic),
      group: busName(this.prefix, opts.group),
    });
  }

  check(): Promise<void> {
    return this.inner.check();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * A Kafka bus on `client`, signed in as `sasl` when given; with a non-empty `prefix` (KAFKA_PREFIX), its topics and
 * groups carry it (PrefixedBus).
 */
export function createKafkaBus(
  client: KafkaClient,
  opts: {
    brokers: string[];
    clientId: string;
    logger?: Logger;
    retryBackoffMs?: number;
    sasl?: KafkaSasl;
    prefix?: string;
  },
): Bus {
  const { prefix = '', ...rest } = opts;
  const bus = client === 'platformatic' ? new PlatformaticKafkaBus(rest) : new KafkaBus(rest);
  return prefix === '' ? bus : new PrefixedBus(bus, prefix);
}

type BusConfig = Pick<
  CommonConfig,
  'VISION_MODE' | 'KAFKA_BROKERS' | 'KAFKA_SASL_USERNAME' | 'KAFKA_SASL_PASSWORD'
>;

/**
 * The SASL/SCRAM-SHA-512 credential of KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD, or none when neither is
 * set. One without the other is a configuration error (the password is never echoed).
 */
export function kafkaSaslFromConfig(cfg: Partial<BusConfig>): KafkaSasl | undefined {
  const { KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = cfg;
  if (username === undefined && password === undefined) return undefined;
  if (username === undefined || password === undefined)
    throw new ConfigError([
      `${username === undefined ? 'KAFKA_SASL_USERNAME' : 'KAFKA_SASL_PASSWORD'}: required with ${
        username === undefined ? 'KAFKA_SASL_PASSWORD' : 'KAFKA_SASL_USERNAME'
      } (not set)`,
    ]);
  return { mechanism: 'scram-sha-512', username, password };
}

/**
 * The bus for this configuration: Kafka (KAFKA_BROKERS, on the client KAFKA_CLIENT names, signed in as
 * KAFKA_SASL_USERNAME, its topics and groups prefixed with KAFKA_PREFIX) in distributed mode, a new in-process bus
 * in standalone mode. Standalone services that must talk to each other share one InProcessBus instance
 * (StartOptions.bus) instead of calling this.
 */
export function createBus(
  cfg: Pick<CommonConfig, 'VISION_MODE' | 'KAFKA_BROKERS'> &
    Partial<
      Pick<CommonConfig, 'KAFKA_CLIENT' | 'KAFKA_SASL_USERNAME' | 'KAFKA_SASL_PASSWORD' | 'KAFKA_PREFIX'>
    >,
  opts: { clientId: string; logger?: Logger },
): Bus {
  if (cfg.VISION_MODE === 'distributed') {
    if (cfg.KAFKA_BROKERS.length === 0)
      throw new ConfigError(['KAFKA_BROKERS: required in distributed mode (not set)']);
    return createKafkaBus(cfg.KAFKA_CLIENT ?? 'kafkajs', {
      brokers: cfg.KAFKA_BROKERS,
      clientId: opts.clientId,
      logger: opts.logger,
      sasl: kafkaSaslFromConfig(cfg),
      prefix: cfg.KAFKA_PREFIX ?? '',
    });
  }
  return new InProcessBus({ logger: opts.logger });
}
