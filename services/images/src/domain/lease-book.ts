/**
 * The quota leases one images replica holds, free of I/O (docs/INTERNAL.md, "quota", leases). Each subject
 * has at most one current lease that calls reserve units from; a call gives back what it did not spend when it
 * ends. A lease ends when its window has passed, a newer one replaced it, or no call used it for `idleMs`; it is
 * closed (its unspent units returned to the day) once no call holds a reservation on it and every spend of it was
 * reported. So a subject's leased units stop counting as held soon after its calls stop.
 */

export interface LeaseGrant {
  leaseId: string;
  /** Units of the lease in all (quota's figure, spent ones included). */
  units: number;
  /** Epoch ms: no reservation is taken from it from then on. */
  usableUntil: number;
}

/** What a call needs from quota before it can reserve: a new lease, or the current one grown to `minUnits`. */
export interface LeaseNeed {
  /** The current lease to grow; absent for a new one. */
  leaseId?: string;
  minUnits: number;
  maxUnits: number;
}

export type Take = { leaseId: string } | { need: LeaseNeed };

interface Lease extends LeaseGrant {
  subject: string;
  /** Units reserved by calls in flight plus units they spent. */
  committed: number;
  /** Calls holding a reservation on it. */
  inFlight: number;
  /** Spends not yet reported to quota. */
  unreported: number;
  current: boolean;
  /** Epoch ms of the last reservation taken or given back. */
  lastUsed: number;
}

export class LeaseBook {
  private readonly leases = new Map<string, Lease>();
  private readonly current = new Map<string, string>();

  /**
   * `chunk`: units asked for beyond a call's own, so that the next calls need no round trip to quota;
   * `idleMs`: how long a lease no call uses is kept.
   */
  constructor(
    private readonly chunk: number,
    private readonly idleMs: number,
  ) {}

  /**
   * Reserves `units` of the subject's current lease, or says what to ask quota for. `asked`: the lease quota
   * just granted to this call's own request, which it may reserve from even if its window has passed meanwhile
   * (a slow answer); quota charges it while the lease lives.
   */
  take(subject: string, units: number, now: number, asked?: string): Take {
    const id = this.current.get(subject);
    const lease = id !== undefined && id === asked ? this.leases.get(id) : this.usable(subject, now);
    if (lease && lease.units - lease.committed >= units) {
      lease.committed += units;
      lease.inFlight += 1;
      lease.lastUsed = now;
      return { leaseId: lease.leaseId };
    }
    const base = lease ? lease.committed : 0;
    return {
      need: {
        ...(lease ? { leaseId: lease.leaseId } : {}),
        minUnits: base + units,
        maxUnits: base + units + this.chunk,
      },
    };
  }

  /** Quota's answer to a need: the lease becomes (or stays) the subject's current one, with its figures. */
  granted(subject: string, g: LeaseGrant, now: number): void {
    const known = this.leases.get(g.leaseId);
    if (known) {
      known.units = Math.max(known.units, g.units);
      known.usableUntil = g.usableUntil;
      return;
    }
    this.retire(subject);
    this.leases.set(g.leaseId, {
      ...g,
      subject,
      committed: 0,
      inFlight: 0,
      unreported: 0,
      current: true,
      lastUsed: now,
    });
    this.current.set(subject, g.leaseId);
  }

  /**
   * A call asks quota to grow the lease: it is held as a reservation would hold it (never closed meanwhile, however
   * long quota takes), until `unpin`.
   */
  pin(leaseId: string): void {
    const lease = this.leases.get(leaseId);
    if (lease) lease.inFlight += 1;
  }

  /** The grow `pin` held the lease for has been answered. */
  unpin(leaseId: string, now: number): void {
    const lease = this.leases.get(leaseId);
    if (!lease) return;
    lease.inFlight -= 1;
    lease.lastUsed = now;
  }

  /** Quota says the lease can no longer grow (past its window, closed or expired): calls take a new one. */
  ended(subject: string, leaseId: string): void {
    if (this.current.get(subject) === leaseId) this.retire(subject);
  }

  /**
   * Quota's window of the lease now (a spend report's answer): a lease quota recalled for another holder ends here,
   * so calls take a new one and it closes once its calls are reported.
   */
  window(leaseId: string, usableUntil: number): void {
    const lease = this.leases.get(leaseId);
    if (lease) lease.usableUntil = Math.min(lease.usableUntil, usableUntil);
  }

  /** A call that reserved `reserved` units ends having spent `spent` (0 when it was refused or failed). */
  release(leaseId: string, reserved: number, spent: number, now: number): void {
    const lease = this.leases.get(leaseId);
    if (!lease) return;
    lease.committed -= reserved - spent;
    lease.inFlight -= 1;
    lease.lastUsed = now;
    if (spent > 0) lease.unreported += 1;
  }

  /** `count` spends of the lease reached quota. */
  reported(leaseId: string, count: number): void {
    const lease = this.leases.get(leaseId);
    if (lease) lease.unreported = Math.max(0, lease.unreported - count);
  }

  /** The leases to close now (forgotten by the book): ended, with no call and no spend left on them. */
  closable(now: number): Array<{ subject: string; leaseId: string }> {
    const out: Array<{ subject: string; leaseId: string }> = [];
    for (const lease of this.leases.values()) {
      const over = !lease.current || now >= lease.usableUntil || now - lease.lastUsed >= this.idleMs;
      if (!over || lease.inFlight > 0 || lease.unreported > 0) continue;
      if (lease.current) this.current.delete(lease.subject);
      this.leases.delete(lease.leaseId);
      out.push({ subject: lease.subject, leaseId: lease.leaseId });
    }
    return out;
  }

  /** Whether `units` more fit the lease now: a call waiting to grow it may reserve there after all. */
  fits(leaseId: string, units: number): boolean {
    const lease = this.leases.get(leaseId);
    return lease !== undefined && lease.units - lease.committed >= units;
  }

  /** Whether the book still holds the lease (not closed). */
  has(leaseId: string): boolean {
    return this.leases.has(leaseId);
  }

  /** Leases the book holds now, current or ending. */
  get size(): number {
    return this.leases.size;
  }

  /** Ends every current lease: calls take new ones, and the ended ones close once idle (closable). */
  retireAll(): void {
    for (const subject of [...this.current.keys()]) this.retire(subject);
  }

  private usable(subject: string, now: number): Lease | undefined {
    const id = this.current.get(subject);
    const lease = id === undefined ? undefined : this.leases.get(id);
    return lease && now < lease.usableUntil ? lease : undefined;
  }

  private retire(subject: string): void {
    const id = this.current.get(subject);
    const lease = id === undefined ? undefined : this.leases.get(id);
    if (lease) lease.current = false;
    this.current.delete(subject);
  }
}
