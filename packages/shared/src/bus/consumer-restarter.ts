import type { Logger } from '../telemetry/logger';

/** First wait before replacing a consumer that failed for good; it doubles up to the second. */
const FIRST_RESTART_MS = 1000;
const MAX_RESTART_MS = 30_000;

/** How a subscription opens, starts and stops one consumer of its group (of whichever Kafka client). */
interface ConsumerLifecycle<C> {
  /** A new consumer in the group; rejects when it could not start one (having stopped what it opened). */
  open(): Promise<C>;
  /** Called once `consumer` is the current one (and so before any failure of it is taken as current). */
  adopted?(consumer: C): void;
  /** Stops `consumer`: one that failed (before its replacement is opened), or one at or after close. */
  stop(consumer: C, why: 'failed' | 'closed'): Promise<void>;
}

export interface ConsumerRestarterOptions<C> extends ConsumerLifecycle<C> {
  logger?: Logger;
  /** What the log lines name (the group and the topic). */
  where: Record<string, unknown>;
  firstDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Keeps one consumer of a subscription running: a consumer that fails for good (failed()) is stopped and replaced
 * by a new one after a backoff (firstDelayMs, doubling to maxDelayMs, back to the first once a consumer joins its
 * group: joined()). A failed start is retried the same way. Nothing it calls may throw into the event loop: a
 * lifecycle step that throws or rejects is logged and taken as that consumer's failure. close() ends the
 * restarts and stops the current consumer, and a consumer that was opening when it closed is stopped as it opens.
 */
export class ConsumerRestarter<C> {
  private consumer: C | undefined;
  private isClosed = false;
  private delay: number;
  private timer: NodeJS.Timeout | undefined;
  /** Consumers that failed before they were adopted (a failure while open() was still pending). */
  private readonly failedEarly = new WeakSet<object>();

  constructor(private readonly opts: ConsumerRestarterOptions<C>) {
    this.delay = opts.firstDelayMs ?? FIRST_RESTART_MS;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** The consumer running now (none while one is being replaced, or after close). */
  get current(): C | undefined {
    return this.consumer;
  }

  /** The first consumer: rejects as open() does (no retry), so the caller sees a subscription that cannot start. */
  async start(): Promise<void> {
    const consumer = await this.opts.open();
    this.adopt(consumer);
  }

  /** The current consumer joined its group: the next restart waits the first delay again. */
  joined(): void {
    this.delay = this.opts.firstDelayMs ?? FIRST_RESTART_MS;
  }

  /** `consumer` stopped for good: stop it and open a replacement after the backoff. Stale or late reports are ignored. */
  failed(consumer: C, err: unknown): void {
    if (this.isClosed) return;
    if (this.consumer !== consumer) {
      if (typeof consumer === 'object' && consumer !== null) this.failedEarly.add(consumer);
      return;
    }
    this.opts.logger?.error({ ...this.opts.where, err }, 'kafka consumer failed; replacing it');
    this.consumer = undefined;
    this.stopQuietly(consumer, 'failed');
    this.scheduleRestart();
  }

  /** Ends the restarts and stops the current consumer (awaiting its stop). */
  async close(): Promise<void> {
    this.isClosed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const consumer = this.consumer;
    this.consumer = undefined;
    if (consumer !== undefined) await this.opts.stop(consumer, 'closed');
  }

  private adopt(consumer: C): void {
    this.consumer = consumer;
    if (typeof consumer === 'object' && consumer !== null && this.failedEarly.has(consumer)) {
      this.failed(consumer, new Error('the consumer failed while it started'));
      return;
    }
    try {
      this.opts.adopted?.(consumer);
    } catch (err) {
      this.failed(consumer, err);
    }
  }

  private stopQuietly(consumer: C, why: 'failed' | 'closed'): void {
    let stopping: Promise<void>;
    try {
      stopping = this.opts.stop(consumer, why);
    } catch (err) {
      stopping = Promise.reject(err);
    }
    stopping.catch((err: unknown) =>
      this.opts.logger?.warn({ ...this.opts.where, err }, 'kafka consumer did not stop cleanly'),
    );
  }

  private scheduleRestart(): void {
    if (this.isClosed || this.timer) return;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, this.opts.maxDelayMs ?? MAX_RESTART_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.isClosed) void this.restart();
    }, wait);
  }

  private async restart(): Promise<void> {
    let consumer: C;
    try {
      consumer = await this.opts.open();
    } catch (err) {
      this.opts.logger?.error(
        { ...this.opts.where, err },
        'could not replace the kafka consumer; trying again',
      );
      this.scheduleRestart();
      return;
    }
    if (this.isClosed) {
      this.stopQuietly(consumer, 'closed');
      return;
    }
    this.adopt(consumer);
    if (this.consumer === consumer) this.opts.logger?.info(this.opts.where, 'kafka consumer replaced');
  }
}
