import type { Bus, IncomingMessage, OutgoingMessage, SubscribeOptions, Subscription } from './port';
import type { Logger } from '../telemetry/logger';
import { tracedHandler, tracedPublish, type TracedHandler } from './bus-tracing';

export interface InProcessBusOptions {
  /** Partitions per topic; messages of one key always land in the same partition. Default 8. */
  partitions?: number;
  /**
   * The bound of the in-memory queue, per topic: publish resolves at once while the slowest active
   * consumer group has fewer than this many messages outstanding on the topic, and waits for room
   * otherwise (back-pressure instead of unbounded memory). Messages retained for groups with no
   * active subscriber (or for no group at all) are capped at the same number per partition; the
   * oldest are dropped beyond it, with a warning. Default 10,000.
   */
  maxQueued?: number;
  /** Most messages handed to one handleBatch call. Default 100. */
  maxBatch?: number;
  /** Redelivery backoff after a handler rejection: starts here and doubles up to maxBackoffMs. Default 50. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  logger?: Logger;
}

interface StoredMessage {
  key: string;
  /** The value as JSON text, as Kafka would hold it; each delivery parses its own copy. */
  json: string;
  headers: Record<string, string>;
}

interface Partition {
  /** Offset of messages[0]. */
  start: number;
  messages: StoredMessage[];
}

interface Member {
  id: number;
  handleBatch: TracedHandler;
  inFlight: Set<Promise<void>>;
  closed: boolean;
}

interface Group {
  name: string;
  committed: number[];
  members: Member[];
  /** Partitions whose delivery loop is running. */
  pumping: boolean[];
}

interface TopicState {
  name: string;
  partitions: Partition[];
  groups: Map<string, Group>;
  /** Publishers waiting for room in the queue. */
  waiters: Array<() => void>;
}

function hashKey(key: string): number {
  // FNV-1a, 32 bit.
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/**
 * Standalone message bus: Kafka-like topics inside one process. Per-key ordering (a key maps to a
 * partition, each partition is delivered in order), consumer groups (each message is handled once
 * per group; the subscribers of a group share the partitions), batches committed only when the
 * handler resolves and redelivered after a backoff when it rejects (at least once). Values are
 * copied through JSON so consumers see what Kafka would give them. Nothing survives a restart.
 */
export class InProcessBus implements Bus {
  readonly kind = 'memory' as const;
  private readonly topics = new Map<string, TopicState>();
  private readonly partitionCount: number;
  private readonly maxQueued: number;
  private readonly maxBatch: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly logger?: Logger;
  private nextMemberId = 1;
  private closed = false;

  constructor(opts: InProcessBusOptions = {}) {
    this.partitionCount = Math.max(1, opts.partitions ?? 8);
    this.maxQueued = Math.max(1, opts.maxQueued ?? 10_000);
    this.maxBatch = Math.max(1, opts.maxBatch ?? 100);
    this.minBackoffMs = opts.minBackoffMs ?? 50;
    this.maxBackoffMs = opts.maxBackoffMs ?? 2_000;
    this.logger = opts.logger;
  }

  private topic(name: string): TopicState {
    let t = this.topics.get(name);
    if (!t) {
      t = {
        name,
        partitions: Array.from({ length: this.partitionCount }, () => ({ start: 0, messages: [] })),
        groups: new Map(),
        waiters: [],
      };
      this.topics.set(name, t);
    }
    return t;
  }

  /** Messages the slowest active group has not yet committed on this topic. */
  private backlog(t: TopicState): number {
    let worst = 0;
    for (const g of t.groups.values()) {
      if (g.members.length === 0) continue;
      let n = 0;
      t.partitions.forEach((p, i) => (n += p.start + p.messages.length - g.committed[i]));
      worst = Math.max(worst, n);
    }
    return worst;
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (this.closed) throw new Error('bus is closed');
    if (messages.length === 0) return;
    await tracedPublish('memory', topic, messages, (traced) => this.enqueue(topic, traced));
  }

  private async enqueue(topic: string, messages: OutgoingMessage[]): Promise<void> {
    // Serialise up front: a value that is not JSON fails the publish, as it would with Kafka.
    const stored = messages.map((m) => {
      if (typeof m.key !== 'string') throw new TypeError('message key must be a string');
      const json = JSON.stringify(m.value) as string | undefined;
      if (json === undefined) throw new TypeError('message value must be JSON');
      return {
        key: m.key,
        json,
        headers: { ...(m.headers ?? {}) },
      };
    });
    const t = this.topic(topic);
    for (;;) {
      const backlog = this.backlog(t);
      if (backlog === 0 || backlog + stored.length <= this.maxQueued) break;
      await new Promise<void>((resolve) => t.waiters.push(resolve));
      if (this.closed) throw new Error('bus is closed');
    }
    for (const m of stored) t.partitions[hashKey(m.key) % this.partitionCount].messages.push(m);
    this.trim(t);
    for (const g of t.groups.values()) this.kick(t, g);
  }

  /** Drops messages every group has committed, and caps what is kept for idle groups. */
  private trim(t: TopicState): void {
    t.partitions.forEach((p, i) => {
      const end = p.start + p.messages.length;
      let keepFrom = end;
      for (const g of t.groups.values()) keepFrom = Math.min(keepFrom, g.committed[i]);
      if (t.groups.size === 0) keepFrom = p.start;
      // Cap per partition so that idle groups or no group at all cannot grow memory without bound.
      const floor = end - this.maxQueued;
      if (keepFrom < floor) {
        for (const g of t.groups.values()) {
          if (g.committed[i] < floor) {
            if (g.members.length > 0) continue; // active groups are bounded by back-pressure instead
            this.logger?.warn(
              { topic: t.name, group: g.name, partition: i, dropped: floor - g.committed[i] },
              'in-process bus dropped messages for a group without subscribers',
            );
            g.committed[i] = floor;
          }
        }
        keepFrom = end;
        for (const g of t.groups.values()) keepFrom = Math.min(keepFrom, g.committed[i]);
        if (t.groups.size === 0) keepFrom = Math.max(p.start, floor);
      }
      if (keepFrom > p.start) {
        p.messages.splice(0, keepFrom - p.start);
        p.start = keepFrom;
      }
    });
    if (t.waiters.length > 0 && this.backlog(t) < this.maxQueued) {
      const waiters = t.waiters.splice(0);
      for (const w of waiters) w();
    }
  }

  async subscribe(opts: SubscribeOptions): Promise<Subscription> {
    if (this.closed) throw new Error('bus is closed');
    const t = this.topic(opts.topic);
    let g = t.groups.get(opts.group);
    if (!g) {
      g = {
        name: opts.group,
        committed: t.partitions.map((p) => (opts.fromBeginning ? p.start : p.start + p.messages.length)),
        members: [],
        pumping: t.partitions.map(() => false),
      };
      t.groups.set(opts.group, g);
    }
    const member: Member = {
      id: this.nextMemberId++,
      handleBatch: tracedHandler('memory', opts),
      inFlight: new Set(),
      closed: false,
    };
    g.members.push(member);
    this.kick(t, g);
    const group = g;
    return {
      close: async () => {
        if (member.closed) return;
        member.closed = true;
        group.members = group.members.filter((m) => m !== member);
        await Promise.allSettled([...member.inFlight]);
        this.trim(t);
      },
    };
  }

  private kick(t: TopicState, g: Group): void {
    if (this.closed || g.members.length === 0) return;
    t.partitions.forEach((p, i) => {
      if (g.pumping[i] || g.committed[i] >= p.start + p.messages.length) return;
      g.pumping[i] = true;
      setImmediate(() => {
        this.pump(t, g, i)
          .catch((err: unknown) =>
            this.logger?.error({ err, topic: t.name }, 'in-process bus delivery loop failed'),
          )
          .finally(() => {
            g.pumping[i] = false;
            // Messages may have arrived after the loop saw the end.
            if (!this.closed && g.members.length > 0 && g.committed[i] < p.start + p.messages.length)
              this.kick(t, g);
          });
      });
    });
  }

  /** Delivers partition `i` to the group, one batch at a time, until it is caught up. */
  private async pump(t: TopicState, g: Group, i: number): Promise<void> {
    const p = t.partitions[i];
    let backoff = this.minBackoffMs;
    while (!this.closed && g.members.length > 0) {
      const from = g.committed[i];
      const end = p.start + p.messages.length;
      if (from >= end) return;
      const member = g.members[i % g.members.length];
      const slice = p.messages.slice(from - p.start, Math.min(end, from + this.maxBatch) - p.start);
      const batch: IncomingMessage[] = slice.map((m, j) => ({
        topic: t.name,
        key: m.key,
        // Each delivery gets its own copy: a handler that mutates a value cannot affect redelivery.
        value: JSON.parse(m.json) as unknown,
        headers: { ...m.headers },
        offset: String(from + j),
        partition: i,
      }));
      const lagAfter = end - (from + batch.length);
      const run = Promise.resolve().then(() => member.handleBatch(batch, lagAfter));
      member.inFlight.add(run);
      try {
        await run;
        if (g.committed[i] === from) g.committed[i] = from + batch.length;
        backoff = this.minBackoffMs;
        this.trim(t);
      } catch (err) {
        this.logger?.warn(
          { err, topic: t.name, group: g.name, partition: i, offset: from, retry_in_ms: backoff },
          'handler rejected a batch; it will be delivered again',
        );
        await sleep(backoff);
        backoff = Math.min(this.maxBackoffMs, backoff * 2);
      } finally {
        member.inFlight.delete(run);
      }
    }
  }

  async check(): Promise<void> {
    if (this.closed) throw new Error('bus is closed');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const inFlight: Promise<void>[] = [];
    for (const t of this.topics.values()) {
      for (const w of t.waiters.splice(0)) w();
      for (const g of t.groups.values()) for (const m of g.members) inFlight.push(...m.inFlight);
    }
    await Promise.allSettled(inFlight);
  }
}
