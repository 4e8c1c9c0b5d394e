import type { Logger } from '@vision/shared';

/** Runs `work` every `intervalMs` (never two at once); `kick()` runs it soon; `stop()` waits for the current run. */
export class Periodic {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly work: () => Promise<void>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.schedule(0);
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
    if (this.running) {
      this.again = true;
      await this.running;
      if (this.running) await this.running;
      return;
    }
    await this.run();
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
    } else this.schedule(this.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
