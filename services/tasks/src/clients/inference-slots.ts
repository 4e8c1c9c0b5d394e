/**
 * The job slots tasks shares between subjects (domain/fair-share.ts): the sum over the live job-running inference
 * replicas, as inference reports it (GET /internal/v1/capacity), read again at most every `ttlMs`. While inference
 * cannot say (unreachable, its breaker open, or a backend that does not report it), the last figure it gave holds,
 * and before any the configured one (TASKS_INFERENCE_SLOTS, else INFERENCE_MAX_JOBS).
 */
import type { Identity, InferenceClient } from '@vision/shared';
import type { SlotSource } from '../ports';

export class InferenceSlots implements SlotSource {
  private value: number;
  private readAt = -Infinity;
  private reading?: Promise<number>;

  constructor(
    private readonly inference: Pick<InferenceClient, 'capacity'>,
    private readonly identity: () => Identity,
    fallback: number,
    private readonly ttlMs = 2000,
  ) {
    this.value = fallback;
  }

  current(): Promise<number> {
    if (performance.now() - this.readAt < this.ttlMs) return Promise.resolve(this.value);
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(): Promise<number> {
    try {
      const c = await this.inference.capacity(this.identity());
      if (c) this.value = c.slots;
    } catch {
      // The last figure holds: admission still asks the backend itself, which says when it is full.
    }
    this.readAt = performance.now();
    return this.value;
  }
}
