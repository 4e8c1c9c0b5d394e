import { SpanStatusCode, trace, type SpanContext } from '@opentelemetry/api';
import type { Logger } from '../telemetry/logger';
import { redactText } from '../secrets/redact';
import { currentService, runInService } from '../telemetry/service-context';

/**
 * The one loop helper of every background worker (sweepers, janitors, pollers, relays): runs `work`
 * every `intervalMs`, never two runs at once; `kick()` runs it soon and resolves when that run is
 * over; `nudge(withinMs)` asks for a run within that time, so that the nudges of that time share one run;
 * `stop()` waits for the current run. A failed run is logged and the loop goes on.
 * Each run is one root span named after the worker (linked to the span that kicked it, if any), so
 * the run's log lines carry its trace_id/span_id and its queries and calls are one trace.
 */
export class Periodic {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  /** When the scheduled run is due (ms since the epoch), if one is scheduled. */
  private dueAt?: number;
  /** A run was asked for while one ran: it starts this many ms after that run ends. */
  private againIn?: number;
  private stopped = false;
  /** The service that made the loop: its runs report under it, whoever kicks them. */
  private readonly service = currentService();

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly work: () => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  /** First run after `firstDelayMs` (default: at once). An interval of 0 or less never starts. */
  start(firstDelayMs = 0): void {
    if (this.intervalMs <= 0) return;
    this.stopped = false;
    this.schedule(firstDelayMs);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.dueAt = Date.now() + ms;
    this.timer = setTimeout(() => void this.run(), ms);
    this.timer.unref();
  }

  /** Runs now (or right after the current run). Resolves when that run finishes. */
  async kick(): Promise<void> {
    if (this.stopped) return;
    const current = this.running;
    if (current !== undefined) {
      this.againIn = 0;
      await current;
      // The run asked for starts right after: wait for it too.
      const next = this.running;
      if (next !== undefined) await next;
      return;
    }
    await this.run();
  }

  /**
   * Like kick(), without waiting. With `withinMs` > 0 the run starts within that time instead of at once
   * (a run already due sooner stands), so that the nudges of that time share one run.
   */
  nudge(withinMs = 0): void {
    if (withinMs <= 0) {
      void this.kick();
      return;
    }
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.againIn = Math.min(this.againIn ?? withinMs, withinMs);
      return;
    }
    if (this.dueAt !== undefined && this.dueAt <= Date.now() + withinMs) return;
    this.schedule(withinMs);
  }

  private async run(): Promise<void> {
    if (this.stopped || this.running) return;
    clearTimeout(this.timer);
    this.dueAt = undefined;
    this.running = this.traced();
    await this.running;
    this.running = undefined;
    if (this.againIn !== undefined) {
      const ms = this.againIn;
      this.againIn = undefined;
      this.schedule(ms);
    } else if (this.intervalMs > 0) this.schedule(this.intervalMs);
  }

  private traced(): Promise<void> {
    const trigger = trace.getActiveSpan()?.spanContext();
    return runInService(this.service, () => this.inSpan(trigger));
  }

  private inSpan(trigger: SpanContext | undefined): Promise<void> {
    return trace.getTracer('vision-worker').startActiveSpan(
      this.name,
      {
        root: true,
        attributes: { 'vision.worker': this.name },
        links: trigger ? [{ context: trigger }] : [],
      },
      async (span) => {
        try {
          await this.work();
        } catch (err) {
          // Messages can name a stream URL: recorded redacted, like the log line.
          const e = err instanceof Error ? err : new Error(String(err));
          span.recordException({ name: e.name, message: redactText(e.message) });
          span.setStatus({ code: SpanStatusCode.ERROR, message: redactText(e.message) });
          this.logger.warn({ err, worker: this.name }, 'background work failed; will retry');
        } finally {
          span.end();
        }
      },
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.dueAt = undefined;
    await this.running;
  }
}
