import { ConfigError, type CommonConfig } from '../config';
import type { Logger } from '../logger';
import type { Bus } from '../ports/bus';
import { InProcessBus } from './in-process-bus';
import { KafkaBus } from './kafka-bus';

/**
 * The bus for this configuration: Kafka (KAFKA_BROKERS) in distributed mode, a new in-process bus in
 * standalone mode. Standalone services that must talk to each other share one InProcessBus instance
 * (StartOptions.bus) instead of calling this.
 */
export function createBus(
  cfg: Pick<CommonConfig, 'VISION_MODE' | 'KAFKA_BROKERS'>,
  opts: { clientId: string; logger?: Logger },
): Bus {
  if (cfg.VISION_MODE === 'distributed') {
    if (cfg.KAFKA_BROKERS.length === 0)
      throw new ConfigError(['KAFKA_BROKERS: required in distributed mode (not set)']);
    return new KafkaBus({ brokers: cfg.KAFKA_BROKERS, clientId: opts.clientId, logger: opts.logger });
  }
  return new InProcessBus({ logger: opts.logger });
}
