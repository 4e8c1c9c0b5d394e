import { ConfigError, type CommonConfig } from '../config';
import type { Logger } from '../logger';
import type { Bus } from '../ports/bus';
import { InProcessBus } from './in-process-bus';
import { KafkaBus } from './kafka-bus';
import { PlatformaticKafkaBus } from './platformatic-bus';

/** The Kafka client library the bus runs on (KAFKA_CLIENT); both implement the same Bus contract. */
export type KafkaClient = 'kafkajs' | 'platformatic';

/** A Kafka bus on `client`. */
export function createKafkaBus(
  client: KafkaClient,
  opts: { brokers: string[]; clientId: string; logger?: Logger; retryBackoffMs?: number },
): Bus {
  return client === 'platformatic' ? new PlatformaticKafkaBus(opts) : new KafkaBus(opts);
}

/**
 * The bus for this configuration: Kafka (KAFKA_BROKERS, on the client KAFKA_CLIENT names) in distributed mode, a
 * new in-process bus in standalone mode. Standalone services that must talk to each other share one InProcessBus
 * instance (StartOptions.bus) instead of calling this.
 */
export function createBus(
  cfg: Pick<CommonConfig, 'VISION_MODE' | 'KAFKA_BROKERS'> & Partial<Pick<CommonConfig, 'KAFKA_CLIENT'>>,
  opts: { clientId: string; logger?: Logger },
): Bus {
  if (cfg.VISION_MODE === 'distributed') {
    if (cfg.KAFKA_BROKERS.length === 0)
      throw new ConfigError(['KAFKA_BROKERS: required in distributed mode (not set)']);
    return createKafkaBus(cfg.KAFKA_CLIENT ?? 'kafkajs', {
      brokers: cfg.KAFKA_BROKERS,
      clientId: opts.clientId,
      logger: opts.logger,
    });
  }
  return new InProcessBus({ logger: opts.logger });
}
