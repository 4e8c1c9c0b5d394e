/**
 * Several onnxruntime sessions of one model file, each in its own worker thread (session-worker.ts), and
 * a run given to the session with the fewest runs in flight. One session runs one model call at a time
 * over its intra-op threads; on a small machine two single-thread sessions keep both cores busy where
 * one two-thread session leaves them waiting on each other at every operator (docs/PERFORMANCE.md,
 * "Session settings"). With one session this is the plain session worker.
 */
import type { InferenceSession } from 'onnxruntime-node';
import { SessionWorker, type RawOutput, type SessionInfo } from './session-worker';

export class SessionPool {
  private readonly inFlight: number[];

  private constructor(private readonly workers: SessionWorker[]) {
    this.inFlight = workers.map(() => 0);
  }

  static async start(file: string, options: InferenceSession.SessionOptions, size = 1): Promise<SessionPool> {
    const started = await Promise.allSettled(
      Array.from({ length: Math.max(1, size) }, () => SessionWorker.start(file, options)),
    );
    const workers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      await Promise.all(workers.map((w) => w.close()));
      throw failed.reason;
    }
    return new SessionPool(workers);
  }

  get info(): SessionInfo {
    return this.workers[0].info;
  }

  /** How many runs can execute at once. */
  get size(): number {
    return this.workers.length;
  }

  /** Runs in flight per session, in pool order. */
  busy(): number[] {
    return [...this.inFlight];
  }

  /** See SessionWorker.run (`lend`: move the input to the worker instead of copying it; `into`: the output's buffer). */
  async run(
    input: string,
    output: string,
    data: Float32Array,
    dims: readonly number[],
    lend = false,
    into?: Float32Array,
  ): Promise<RawOutput> {
    let best = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.inFlight[i] < this.inFlight[best]) best = i;
    this.inFlight[best]++;
    try {
      return await this.workers[best].run(input, output, data, dims, lend, into);
    } finally {
      this.inFlight[best]--;
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }
}
