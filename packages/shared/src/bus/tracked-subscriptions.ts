import type { Subscription } from './port';

/** The open subscriptions of a Kafka bus (either client), so that closing the bus closes each of them. */
export class TrackedSubscriptions {
  private readonly open = new Set<Subscription>();

  /** `inner`, as a subscription that leaves this set when it closes. */
  track(inner: Subscription): Subscription {
    const sub: Subscription = {
      close: async () => {
        this.open.delete(sub);
        await inner.close();
      },
    };
    this.open.add(sub);
    return sub;
  }

  /** Closes every open subscription; one that fails to close does not keep the others open. */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.open].map((s) => s.close()));
  }
}
