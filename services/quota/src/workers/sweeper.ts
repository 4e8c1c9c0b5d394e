import { type Logger, type OutboxRelay, Periodic } from '@vision/shared';
import type { QuotaUseCases } from '../use-cases';

const SENT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Periodic housekeeping: marks holds past their expiry as expired (reads already ignore them; this
 * keeps the stored status honest) and deletes outbox rows sent more than 7 days ago.
 */
export class Sweeper {
  private readonly loop: Periodic;

  constructor(
    private readonly ledger: Pick<QuotaUseCases, 'expireHolds'>,
    private readonly relay: OutboxRelay,
    private readonly now: () => Date,
    private readonly logger: Logger,
    intervalMs: number,
  ) {
    this.loop = new Periodic('quota sweeper', intervalMs, () => this.sweep(), logger);
  }

  start(): void {
    this.loop.start();
  }

  async sweep(): Promise<{ expired: number; pruned: number }> {
    const expired = await this.ledger.expireHolds();
    const pruned = await this.relay.prune(new Date(this.now().getTime() - SENT_RETENTION_MS));
    if (expired > 0) this.logger.info({ expired }, 'quota holds expired');
    return { expired, pruned };
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
