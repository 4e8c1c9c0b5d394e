import { ConfigError, type CommonConfig } from '../config';
import type { Logger } from '../logger';
import type { Bus } from '../ports/bus';
import { InProcessBus } from './in-process-bus';
import { KafkaBus, type KafkaSasl } from './kafka-bus';
import { PlatformaticKafkaBus } from './platformatic-bus';

/** The Kafka client library the bus runs on (KAFKA_CLIENT); both implement the same Bus contract. */
export type KafkaClient = 'kafkajs' | 'platformatic';

/** A Kafka bus on `client`, signed in as `sasl` when given. */
export function createKafkaBus(
  client: KafkaClient,
  opts: { brokers: string[]; clientId: string; logger?: Logger; retryBackoffMs?: number; sasl?: KafkaSasl },
): Bus {
  return client === 'platformatic' ? new PlatformaticKafkaBus(opts) : new KafkaBus(opts);
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
 * KAFKA_SASL_USERNAME) in distributed mode, a new in-process bus in standalone mode. Standalone services that must
 * talk to each other share one InProcessBus instance (StartOptions.bus) instead of calling this.
 */
export function createBus(
  cfg: Pick<CommonConfig, 'VISION_MODE' | 'KAFKA_BROKERS'> &
    Partial<Pick<CommonConfig, 'KAFKA_CLIENT' | 'KAFKA_SASL_USERNAME' | 'KAFKA_SASL_PASSWORD'>>,
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
    });
  }
  return new InProcessBus({ logger: opts.logger });
}
