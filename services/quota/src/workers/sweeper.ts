import type { Logger } from '@vision/shared';
import type { QuotaUseCases } from '../use-cases';
import type { OutboxRelay } from '../store/outbox';

const SENT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Periodic housekeeping: marks holds past their expiry as expired (reads already ignore them; this
 * keeps the stored status honest) and deletes outbox rows sent more than 7 days ago.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly ledger: Pick<QuotaUseCases, 'expireHolds'>,
    private readonly relay: OutboxRelay,
    private readonly now: () => Date,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.busy) return;
      this.busy = true;
      this.sweep()
        .catch((err: unknown) => this.logger.warn({ err }, 'quota sweep failed; will retry'))
        .finally(() => {
          this.busy = false;
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  async sweep(): Promise<{ expired: number; pruned: number }> {
    const expired = await this.ledger.expireHolds();
    const pruned = await this.relay.prune(new Date(this.now().getTime() - SENT_RETENTION_MS));
    if (expired > 0) this.logger.info({ expired }, 'quota holds expired');
    return { expired, pruned };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
