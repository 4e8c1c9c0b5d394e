import {
  Consumer,
  MessagesStreamFallbackModes,
  MessagesStreamModes,
  type ClusterMetadata,
  type ExtendedGroupProtocolSubscription,
  type GroupPartitionsAssignments,
  type Message,
  type MessagesStream,
  type SASLOptions,
} from '@platformatic/kafka';
import type { IncomingMessage, SubscribeOptions, Subscription } from './port';
import type { Logger } from '../telemetry/logger';
import { tracedHandler } from './bus-tracing';
import { assignBySubscription, SUBSCRIPTION_AWARE } from './kafka-assigner';
import { decodeHeaders, decodeValue } from './kafka-message';
import { ConsumerRestarter } from './consumer-restarter';

export interface PlatformaticSubscriptionDeps {
  brokers: string[];
  clientId: string;
  sasl?: SASLOptions;
  logger?: Logger;
  /** Wait before a rejected batch is handed to the handler again. */
  retryBackoffMs: number;
}

/** The same group timings as the kafkajs consumer (kafka-subscription.ts says why 1 s for these two). */
const HEARTBEAT_MS = 1000;
const FETCH_WAIT_MS = 1000;
const SESSION_TIMEOUT_MS = 30_000;
const REBALANCE_TIMEOUT_MS = 60_000;
/** How old the partitions' end offsets behind the lag figure may be. */
const LAG_REFRESH_MS = 1000;

type Record_ = Message<Buffer, Buffer, Buffer, Buffer>;
type Stream = MessagesStream<Buffer, Buffer, Buffer, Buffer>;
type PConsumer = Consumer<Buffer, Buffer, Buffer, Buffer>;
/** A consumer of the group and the record stream it reads. */
interface Member {
  consumer: PConsumer;
  stream: Stream;
}

/** assignBySubscription as a platformatic partition assigner (it hands the leader every member's topics). */
export function platformaticAssigner(
  _current: string,
  members: Map<string, ExtendedGroupProtocolSubscription>,
  _topics: Set<string>,
  metadata: ClusterMetadata,
): GroupPartitionsAssignments[] {
  const group = [...members.values()].map((m) => ({ id: m.memberId, topics: m.topics ?? [] }));
  const assignment = assignBySubscription(group, (topic) => {
    const count = metadata.topics.get(topic)?.partitionsCount ?? 0;
    return Array.from({ length: count }, (_, i) => i);
  });
  return group.map(({ id }) => ({
    memberId: id,
    assignments: new Map(
      Object.entries(assignment.get(id) ?? {}).map(([topic, partitions]) => [topic, { topic, partitions }]),
    ),
  }));
}

/** The records read so far, split into runs of one partition each, in order. */
export function byPartition<T extends { partition: number }>(records: readonly T[]): T[][] {
  const runs = new Map<number, T[]>();
  for (const r of records) runs.set(r.partition, [...(runs.get(r.partition) ?? []), r]);
  return [...runs.values()];
}

function toIncoming(r: Record_): IncomingMessage {
  return {
    topic: r.topic,
    key: r.key ? r.key.toString('utf8') : '',
    value: decodeValue(r.value),
    headers: decodeHeaders(r.headerEntries),
    offset: r.offset.toString(),
    partition: r.partition,
  };
}

/** Every record the stream holds now (none when it holds none). */
function drain(stream: Stream): Record_[] {
  const out: Record_[] = [];
  for (let r = stream.read() as Record_ | null; r !== null; r = stream.read() as Record_ | null) out.push(r);
  return out;
}

/**
 * A wait for the stream's next records. The stream fetches only while someone listens for them (its
 * readableFlowing is not null), so one 'readable' listener stays for the stream's life and each wait takes the
 * next event (or the stream's close).
 */
function readableWaits(stream: Stream): () => Promise<void> {
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  stream.on('readable', notify);
  stream.on('close', notify);
  return () =>
    stream.destroyed
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          wake = resolve;
        });
}

/**
 * The lag a batch leaves on its partition (vision_bus_consumer_lag_messages): the partition's end offset less the
 * offset after the batch. platformatic's records carry no high watermark (kafkajs' batches do), so the end offsets
 * are listed in the background, at most once a second; until the first answer the lag is unknown.
 */
function lagTracker(
  consumer: PConsumer,
  topic: string,
): (partition: number, next: bigint) => number | undefined {
  let ends: bigint[] | undefined;
  let asked = 0;
  let pending = false;
  return (partition, next) => {
    if (!pending && Date.now() - asked >= LAG_REFRESH_MS) {
      pending = true;
      asked = Date.now();
      consumer
        .listOffsets({ topics: [topic] })
        .then(
          (offsets) => {
            ends = offsets.get(topic) ?? ends;
          },
          () => undefined, // the next batch asks again
        )
        .finally(() => {
          pending = false;
        });
    }
    const end = ends?.[partition];
    return end === undefined ? undefined : Math.max(0, Number(end - next));
  };
}

/**
 * A consumer in `opts.group` on @platformatic/kafka, with the semantics of the kafkajs one
 * (kafka-subscription.ts): each partition's records are handed over in order, a batch at a time; a batch's
 * offset is committed after handleBatch resolves; a rejected batch is handed over again after a backoff for as
 * long as this member owns its partition (then its new owner reads it from the last commit); the group is assigned
 * by assignBySubscription; a consumer or stream that fails is replaced by the subscription's ConsumerRestarter
 * (consumer-restarter.ts: 1 s doubling to 30 s); close waits for the batch in flight, then leaves the group.
 */
export async function startPlatformaticSubscription(
  deps: PlatformaticSubscriptionDeps,
  opts: SubscribeOptions,
): Promise<Subscription> {
  const handleBatch = tracedHandler('kafka', opts);
  const where = { group: opts.group, topic: opts.topic };
  /** The batch being handled: close waits for it, so its commit lands before the member leaves. */
  let inflight: Promise<void> = Promise.resolve();

  const owns = (consumer: PConsumer, partition: number): boolean =>
    (consumer.assignments ?? []).some((a) => a.topic === opts.topic && a.partitions.includes(partition));
  const live = (member: Member): boolean => !restarter.closed && restarter.current === member;

  const handleRun = async (
    member: Member,
    run: Record_[],
    lag: (partition: number, next: bigint) => number | undefined,
  ): Promise<void> => {
    const messages = run.map(toIncoming);
    const lagAfter = lag(run[0].partition, run[run.length - 1].offset + 1n);
    for (;;) {
      if (!live(member)) return;
      try {
        await handleBatch(messages, lagAfter);
        break;
      } catch (err) {
        deps.logger?.warn(
          { ...where, err, partition: run[0].partition, offset: messages[0].offset },
          'handler rejected a batch; it will be delivered again',
        );
        await new Promise((r) => setTimeout(r, deps.retryBackoffMs));
        if (!owns(member.consumer, run[0].partition)) return;
      }
    }
    try {
      await run[run.length - 1].commit();
    } catch (err) {
      // The partition moved in a rebalance: its new owner reads from the last commit (handlers dedupe).
      deps.logger?.warn({ ...where, err, partition: run[0].partition }, 'kafka offset commit failed');
    }
  };

  const pump = async (member: Member): Promise<void> => {
    const readable = readableWaits(member.stream);
    const lag = lagTracker(member.consumer, opts.topic);
    while (live(member) && !member.stream.destroyed) {
      const records = drain(member.stream);
      if (records.length === 0) {
        await readable();
        continue;
      }
      for (const run of byPartition(records)) {
        inflight = handleRun(member, run, lag);
        await inflight;
      }
    }
  };

  const restarter: ConsumerRestarter<Member> = new ConsumerRestarter<Member>({
    logger: deps.logger,
    where,
    open: async () => {
      const consumer: PConsumer = new Consumer<Buffer, Buffer, Buffer, Buffer>({
        clientId: deps.clientId,
        bootstrapBrokers: deps.brokers,
        ...(deps.sasl ? { sasl: deps.sasl } : {}),
        groupId: opts.group,
        autocreateTopics: false,
        autocommit: false,
        heartbeatInterval: HEARTBEAT_MS,
        maxWaitTime: FETCH_WAIT_MS,
        sessionTimeout: SESSION_TIMEOUT_MS,
        rebalanceTimeout: REBALANCE_TIMEOUT_MS,
        protocols: [{ name: SUBSCRIPTION_AWARE, version: 0 }],
        partitionAssigner: platformaticAssigner,
      });
      consumer.on('consumer:group:join', () => restarter.joined());
      // Listened to from the start: an 'error' event nobody listens to would throw into the event loop.
      let member: Member | undefined;
      let failedWhileOpening: unknown;
      consumer.on('error', (err: unknown) => {
        if (member) restarter.failed(member, err);
        else failedWhileOpening ??= err;
      });
      try {
        const stream = await consumer.consume({
          topics: [opts.topic],
          mode: MessagesStreamModes.COMMITTED,
          fallbackMode: opts.fromBeginning
            ? MessagesStreamFallbackModes.EARLIEST
            : MessagesStreamFallbackModes.LATEST,
        });
        if (failedWhileOpening !== undefined) throw failedWhileOpening;
        const opened: Member = { consumer, stream };
        stream.on('error', (err: unknown) => restarter.failed(opened, err));
        member = opened;
        return opened;
      } catch (err) {
        await consumer.close(true).catch(() => undefined);
        throw err;
      }
    },
    // A stream that ends while the subscription is open (not by close) is replaced like a failed one.
    adopted: (member) => {
      pump(member).then(
        () => restarter.failed(member, new Error('the message stream ended')),
        (err: unknown) => restarter.failed(member, err),
      );
    },
    // force: close the stream first, then leave the group; on close, after the batch in flight is committed.
    stop: async ({ consumer }, why) => {
      if (why === 'closed') await inflight;
      await consumer.close(true);
    },
  });

  await restarter.start();
  return { close: () => restarter.close() };
}
