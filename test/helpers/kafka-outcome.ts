import { Kafka, logLevel, type LogEntry } from 'kafkajs';

/**
 * 'ok' when the Kafka call succeeds, else the broker's error code as kafkajs names it (`type`, on the error or a
 * cause; a topic whose metadata is refused comes as a plain error naming it), else the error's class name.
 */
export async function kafkaOutcome(q: Promise<unknown>): Promise<string> {
  try {
    await q;
    return 'ok';
  } catch (err) {
    for (let e = err as { type?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e)
      if (e.type) return e.type;
    if (/Not authorized to access topics/.test((err as Error).message)) return 'TOPIC_AUTHORIZATION_FAILED';
    return (err as Error).name ?? String(err);
  }
}

/** A kafkajs client signed in as `username` (no retries); its log lines, debug ones included, go to `logs`. */
export function kafkaAs(
  brokers: string[],
  username: string,
  password: string,
  logs: string[] = [],
  clientId = 'kafka-outcome',
): Kafka {
  return new Kafka({
    clientId,
    brokers,
    sasl: { mechanism: 'scram-sha-512', username, password },
    retry: { retries: 0 },
    logLevel: logLevel.DEBUG,
    logCreator:
      () =>
      ({ log }: LogEntry) => {
        const e = (log as { error?: unknown }).error;
        logs.push(`${log.message} ${typeof e === 'string' ? e : ((e as Error | undefined)?.message ?? '')}`);
      },
  });
}

/** Publishes one probe message to `topic` with `kafka`: 'ok' or why the broker refused (kafkaOutcome). */
export async function produceOutcome(kafka: Kafka, topic: string): Promise<string> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  try {
    return await kafkaOutcome(
      producer
        .connect()
        .then(() => producer.send({ topic, messages: [{ key: 'probe', value: '{"probe":true}' }] })),
    );
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
}

/**
 * Joins `group` reading `topic` with `kafka` (made by kafkaAs with `logs`): 'joined', or the broker's refusal
 * (kafkajs reports a refused FindCoordinator as "coordinator not found" and names the broker's error only in its
 * debug log).
 */
export async function joinOutcome(
  kafka: Kafka,
  logs: string[],
  group: string,
  topic: string,
): Promise<string> {
  const consumer = kafka.consumer({ groupId: group, retry: { retries: 0 } });
  const result = new Promise<string>((resolve) => {
    consumer.on(consumer.events.GROUP_JOIN, () => resolve('joined'));
    consumer.on(consumer.events.CRASH, (e) => {
      const err = e.payload.error as { type?: string; name?: string };
      const refused = logs.find((l) => /Not authorized to access group/.test(l));
      resolve(refused ? 'GROUP_AUTHORIZATION_FAILED' : (err.type ?? err.name ?? 'crash'));
    });
  });
  try {
    const started = await kafkaOutcome(
      consumer
        .connect()
        .then(() => consumer.subscribe({ topics: [topic], fromBeginning: true }))
        .then(() => consumer.run({ eachMessage: async () => undefined })),
    );
    return started === 'ok' ? await result : started;
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
}
