/**
 * The message bus: its port, with the topics and their messages (port.ts), and the adapters that implement it:
 * in process for the standalone mode (in-process-bus.ts), Kafka through kafkajs (kafka-bus.ts and its
 * kafka-* parts) or @platformatic/kafka (platformatic-bus.ts, platformatic-subscription.ts), chosen by
 * bus-factory.ts; trace headers across it (bus-tracing.ts); each service's Kafka principal and ACLs
 * (kafka-principals.ts, kafka-scram.ts); and the outbox relay that publishes what a store wrote (outbox-relay.ts).
 */
export * from './port';
export * from './in-process-bus';
export * from './kafka-bus';
export * from './kafka-principals';
export * from './bus-factory';
export * from './bus-tracing';
export * from './outbox-relay';
