/**
 * What a request does with the claim another request holds on its Idempotency-Key (docs/ARCHITECTURE.md
 * "Idempotent requests"). Pure: the store supplies the claim, the clock supplies `now`. The same rule
 * holds for video-task creation (tasks) and image detection (images).
 *
 * A claim is `running` while its owner works and nothing durable is owed (a dead owner's work is simply
 * run again), `settling` once the outcome is stored and what is left needs no request body (charge and
 * submit a stored task; settle a stored call's quota hold), `completed` once the answer is final. The
 * owner renews its lease while it works; a lapsed lease means the owner died.
 */
export type ClaimState = 'running' | 'settling' | 'completed';

export interface ClaimView {
  fingerprint: string;
  state: ClaimState;
  leaseUntil: Date;
}

export type ClaimDecision =
  /** Another meaning under the same key: 400 idempotency_mismatch. */
  | 'mismatch'
  /** The outcome is stored: answer it (the service's replay step may say "not yet": then wait). */
  | 'replay'
  /** Another request is running it now: wait, then look again. */
  | 'wait'
  /** Its owner died before anything was owed: take the claim (attempt + 1) and run the request again. */
  | 'take_over'
  /** Its owner died after storing the outcome: finish what is owed (once), then replay. */
  | 'finish';

/** `fingerprints`: the request's meaning as the service fingerprints it now, then as it did earlier. */
export function decideClaim(claim: ClaimView, fingerprints: readonly string[], now: Date): ClaimDecision {
  if (!fingerprints.includes(claim.fingerprint)) return 'mismatch';
  if (claim.state === 'completed') return 'replay';
  const lapsed = claim.leaseUntil.getTime() <= now.getTime();
  if (claim.state === 'settling') return lapsed ? 'finish' : 'replay';
  return lapsed ? 'take_over' : 'wait';
}

/** The lease of a claim taken at `now`. */
export function leaseUntil(now: Date, leaseMs: number): Date {
  return new Date(now.getTime() + leaseMs);
}

/** How often an owner renews its lease: three times per lease, so that one late renewal is harmless. */
export function renewEveryMs(leaseMs: number): number {
  return Math.max(250, Math.floor(leaseMs / 3));
}
