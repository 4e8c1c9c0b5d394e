import type { Logger } from './logger';

/**
 * The one loop helper of every background worker (sweepers, janitors, pollers, relays): runs `work`
 * every `intervalMs`, never two runs at once; `kick()` runs it soon and resolves when that run is
 * over; `stop()` waits for the current run. A failed run is logged and the loop goes on.
 */
export class Periodic {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

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
    this.running = (async () => {
      try {
        await this.work();
      } catch (err) {
        this.logger.warn({ err, worker: this.name }, 'background work failed; will retry');
      }
    })();
    await this.running;
    this.running = undefined;
    if (this.again) {
      this.again = false;
      this.schedule(0);
    } else if (this.intervalMs > 0) this.schedule(this.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
