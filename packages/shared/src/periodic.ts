import { SpanStatusCode, trace, type SpanContext } from '@opentelemetry/api';
import type { Logger } from './logger';
import { redactText } from './redact';
import { currentService, runInService } from './service-context';

/**
 * The one loop helper of every background worker (sweepers, janitors, pollers, relays): runs `work`
 * every `intervalMs`, never two runs at once; `kick()` runs it soon and resolves when that run is
 * over; `stop()` waits for the current run. A failed run is logged and the loop goes on.
 * Each run is one root span named after the worker (linked to the span that kicked it, if any), so
 * the run's log lines carry its trace_id/span_id and its queries and calls are one trace.
 */
export class Periodic {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
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
    this.timer = setTimeout(() => void this.run(), ms);
    this.timer.unref();
  }

  /** Runs now (or right after the current run). Resolves when that run finishes. */
  async kick(): Promise<void> {
    if (this.stopped) return;
    const current = this.running;
    if (current !== undefined) {
      this.again = true;
      await current;
      // The run asked for starts right after: wait for it too.
      const next = this.running;
      if (next !== undefined) await next;
      return;
    }
    await this.run();
  }

  /** Like kick(), without waiting. */
  nudge(): void {
    void this.kick();
  }

  private async run(): Promise<void> {
    if (this.stopped || this.running) return;
    clearTimeout(this.timer);
    this.running = this.traced();
    await this.running;
    this.running = undefined;
    if (this.again) {
      this.again = false;
      this.schedule(0);
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
    await this.running;
  }
}
