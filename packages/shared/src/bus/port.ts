/** Message bus port: Kafka in distributed mode, an in-process bus in standalone mode. */

export const TOPICS = {
  frames: 'vision.frames',
  taskEvents: 'vision.task-events',
  quotaEvents: 'vision.quota-events',
  /** The record of each image call whose results are stored (images -> tasks), keyed by task id. */
  imageCalls: 'vision.image-calls',
} as const;

export type Topic = (typeof TOPICS)[keyof typeof TOPICS];

/** The consumer groups: each belongs to the one service that consumes in it (kafka-principals.ts grants it). */
export const GROUPS = {
  /** results: task events and frames into its store. */
  results: 'results',
  /** results: task and quota events into webhook deliveries. */
  resultsWebhooks: 'results-webhooks',
  /** tasks: image calls into its usage records. */
  tasksImageCalls: 'tasks-image-calls',
} as const;

/**
 * What KAFKA_PREFIX may hold: the characters of a Kafka topic name, at most 100 of them (a topic name is at most
 * 249). The prefix is used as it is, separator included (`staging.`); empty: the names above, unchanged.
 */
export const KAFKA_PREFIX_RE = /^[A-Za-z0-9._-]{0,100}$/;

/**
 * The name on the brokers of a topic or consumer group of the deployment whose KAFKA_PREFIX is `prefix`: the
 * prefix, then the name. Two deployments of different prefixes on one Kafka cluster share no topic and no group.
 */
export function busName(prefix: string, name: string): string {
  if (!KAFKA_PREFIX_RE.test(prefix))
    throw new Error(`invalid Kafka prefix ${JSON.stringify(prefix)}: at most 100 of A-Z a-z 0-9 . _ -`);
  return `${prefix}${name}`;
}

/** Every topic of the deployment whose KAFKA_PREFIX is `prefix`, as the brokers name them. */
export function busTopics(prefix: string): string[] {
  return Object.values(TOPICS).map((t) => busName(prefix, t));
}

export interface OutgoingMessage {
  /** Partition key (the task id for frames and task events): messages of one key keep their order. */
  key: string;
  /** JSON-serialisable value; carries `schema` and `event_id` by convention. */
  value: object;
  headers?: Record<string, string>;
}

export interface IncomingMessage {
  /** The topic as the brokers name it (with the deployment's KAFKA_PREFIX), for diagnostics. */
  topic: string;
  key: string;
  value: unknown;
  headers: Record<string, string>;
  /** Position within its partition, for diagnostics. */
  offset: string;
  partition: number;
}

export interface SubscribeOptions {
  topic: string;
  /** Consumer group: each message is handled once per group. */
  group: string;
  fromBeginning?: boolean;
  /**
   * Handles one batch of one partition, in order. When it resolves the batch is committed; when it
   * rejects the batch is delivered again (at least once: handlers dedupe).
   */
  handleBatch(messages: IncomingMessage[]): Promise<void>;
}

export interface Subscription {
  close(): Promise<void>;
}

export interface Bus {
  readonly kind: 'kafka' | 'memory';
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  subscribe(opts: SubscribeOptions): Promise<Subscription>;
  /** Resolves when the broker is reachable. */
  check(): Promise<void>;
  close(): Promise<void>;
}
