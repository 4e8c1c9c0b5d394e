import type { SubmitOutcome } from './job-manager';

/**
 * Submissions in flight, one per job id: a second submission of an id while the first runs gets the first's outcome,
 * a `duplicate` where it was accepted. Both steps are synchronous up to the promise they return, so two submissions
 * of one id never both start.
 */
export class Submissions {
  private readonly inFlight = new Map<string, Promise<SubmitOutcome>>();

  get size(): number {
    return this.inFlight.size;
  }

  /** The outcome of the submission of `id` in flight, as its duplicate's; undefined when none is. */
  joined(id: string): Promise<SubmitOutcome> | undefined {
    return this.inFlight
      .get(id)
      ?.then((first) => (first.outcome === 'accepted' ? { outcome: 'duplicate', job: first.job } : first));
  }

  /** Runs `start()` as the submission of `id` in flight until it settles. */
  async run(id: string, start: () => Promise<SubmitOutcome>): Promise<SubmitOutcome> {
    const p = start();
    this.inFlight.set(id, p);
    try {
      return await p;
    } finally {
      this.inFlight.delete(id);
    }
  }
}
