/**
 * The one mechanism behind every idempotent create (video tasks, image detections; docs/ARCHITECTURE.md
 * "Idempotent requests"): claim the key in the service's table, then run | wait -> replay | mismatch |
 * in_progress | take over | finish. Concurrent duplicates, in one process or in several, are serialised
 * by the database claim alone. The owner renews its lease with the shared Periodic helper while it works;
 * a lapsed lease means its process died: the next duplicate runs the request again (nothing was owed) or
 * finishes what was owed (outcome stored), and so does the service's sweeper (finishLapsed).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../time/clock';
import type { Logger } from '../telemetry/logger';
import { Periodic } from '../time/periodic';
import { decideClaim, leaseUntil, renewEveryMs } from './claim-decision';
import type { ClaimPort, ClaimRecord, ClaimRef } from './claim-table';
import { awaitFirstRequest, idempotencyInProgress, idempotencyMismatch } from './key';

export interface ClaimSettings {
  /** Lease of a claim; renewed by its owner three times per lease. */
  leaseMs: number;
  /** How long a duplicate waits for the first request before 503 in_progress. */
  waitMs: number;
  /** Poll period while waiting. */
  pollMs?: number;
}

/** The claim a request owns while it runs the request. */
export interface OwnedClaim<R extends ClaimRecord> {
  readonly ref: ClaimRef;
  readonly taskId: string;
  /** True for a new claim; false for one taken over from a dead owner (`previous`). */
  readonly fresh: boolean;
  readonly previous?: R;
  /** Forgets the claim (nothing was charged): the key may be used again. */
  release(): Promise<void>;
  /** Ends the lease now: the next duplicate (or the sweeper) takes over at once. */
  letGo(): Promise<void>;
}

/** A service's own steps. */
export interface ClaimSteps<R extends ClaimRecord, A> {
  /**
   * Runs the request as the claim's owner: moves the claim to settling when the outcome is stored and
   * to completed when it is final; releases it on a refusal before anything was charged. When it throws,
   * the driver lets go of the claim (lease ends now).
   */
  run(owned: OwnedClaim<R>): Promise<A>;
  /** The answer of a settling or completed claim; undefined while it cannot be given yet (wait). */
  replay(claim: R): Promise<A | undefined>;
  /** Finishes a settling claim whose owner died: what is owed, once, then completed. */
  finish(claim: R): Promise<void>;
}

export interface IdempotentRequest<N> {
  subject: string;
  key: string;
  fingerprint: string;
  /**
   * Fingerprints the same meaning had under an earlier rule of the service (a claim stored by a replica of
   * an earlier release): a claim holding one of them is this meaning, not a mismatch. Never stored.
   */
  earlierFingerprints?: readonly string[];
  /** The service's columns of a new claim. */
  data: N;
}

const refOf = (c: ClaimRecord): ClaimRef => ({
  subject: c.subject,
  key: c.key,
  taskId: c.taskId,
  attempt: c.attempt,
});

export class IdempotentRequests<R extends ClaimRecord, N> {
  constructor(
    private readonly d: {
      store: ClaimPort<R, N>;
      clock: Clock;
      logger: Logger;
      settings: ClaimSettings;
      /** Names the lease loop (its spans and log lines). */
      name: string;
    },
  ) {}

  /** Handles one request under its Idempotency-Key. */
  handle<A>(req: IdempotentRequest<N>, steps: ClaimSteps<R, A>): Promise<A> {
    return awaitFirstRequest(() => this.look(req, steps), {
      waitMs: this.d.settings.waitMs,
      pollMs: this.d.settings.pollMs,
      onTimeout: () => {
        throw idempotencyInProgress();
      },
    });
  }

  /** Finishes settling claims whose owner died (the sweeper); returns how many it took. */
  async finishLapsed(finish: (claim: R) => Promise<void>, limit = 100): Promise<number> {
    const lapsed = await this.d.store.lapsedSettling(this.d.clock.now(), limit);
    let n = 0;
    for (const claim of lapsed) if (await this.finishOne(claim, finish)) n += 1;
    return n;
  }

  /** One look at the key: an answer, or undefined while another request holds it. */
  private async look<A>(req: IdempotentRequest<N>, steps: ClaimSteps<R, A>): Promise<A | undefined> {
    const { store, clock, settings, logger } = this.d;
    for (;;) {
      const now = clock.now();
      const taskId = randomUUID();
      const fresh = { subject: req.subject, key: req.key, taskId, fingerprint: req.fingerprint };
      if (
        await store.claim({
          ...req.data,
          ...fresh,
          leaseUntil: leaseUntil(now, settings.leaseMs),
          createdAt: now,
        })
      )
        return this.own({ subject: req.subject, key: req.key, taskId, attempt: 0 }, undefined, steps);

      const existing = await store.get(req.subject, req.key);
      if (!existing) continue; // released between our insert and our read
      switch (decideClaim(existing, [req.fingerprint, ...(req.earlierFingerprints ?? [])], clock.now())) {
        case 'mismatch':
          throw idempotencyMismatch();
        case 'wait':
          return undefined;
        case 'replay':
          return steps.replay(existing);
        case 'take_over': {
          const at = clock.now();
          if (!(await store.takeOver(refOf(existing), at, leaseUntil(at, settings.leaseMs)))) continue;
          const ref = { ...refOf(existing), attempt: existing.attempt + 1 };
          logger.warn(
            { task_id: existing.taskId, attempt: ref.attempt },
            'taking over an interrupted request',
          );
          return this.own(ref, existing, steps);
        }
        case 'finish': {
          if (!(await this.finishOne(existing, steps.finish))) continue;
          const after = await store.get(req.subject, req.key);
          return after && after.state !== 'running' && after.fingerprint === req.fingerprint
            ? steps.replay(after)
            : undefined;
        }
      }
    }
  }

  /** Runs the request as the owner of `ref`, its lease renewed meanwhile. */
  private async own<A>(ref: ClaimRef, previous: R | undefined, steps: ClaimSteps<R, A>): Promise<A> {
    const { store, clock } = this.d;
    const owned: OwnedClaim<R> = {
      ref,
      taskId: ref.taskId,
      fresh: previous === undefined,
      previous,
      release: () => store.release(ref),
      letGo: () => store.renewLease(ref, clock.now()),
    };
    try {
      return await this.withLease(ref, () => steps.run(owned));
    } catch (err) {
      await owned.letGo().catch(() => undefined);
      throw err;
    }
  }

  /** Takes a lapsed settling claim and finishes it; false when another request or sweeper took it. */
  private async finishOne(claim: R, finish: (claim: R) => Promise<void>): Promise<boolean> {
    const { store, clock, settings, logger } = this.d;
    const at = clock.now();
    if (!(await store.takeSettling(refOf(claim), at, leaseUntil(at, settings.leaseMs)))) return false;
    try {
      await this.withLease(refOf(claim), () => finish(claim));
    } catch (err) {
      // Its lease lapses again: the next duplicate or sweep tries once more.
      logger.warn({ err, task_id: claim.taskId }, 'finishing an interrupted request failed; will retry');
    }
    return true;
  }

  private async withLease<T>(ref: ClaimRef, work: () => Promise<T>): Promise<T> {
    const { store, clock, settings, logger, name } = this.d;
    const every = renewEveryMs(settings.leaseMs);
    const heartbeat = new Periodic(
      `${name} lease`,
      every,
      () => store.renewLease(ref, leaseUntil(clock.now(), settings.leaseMs)),
      logger,
    );
    heartbeat.start(every);
    try {
      return await work();
    } finally {
      await heartbeat.stop();
    }
  }
}
