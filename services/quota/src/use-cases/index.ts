import type { Kind } from '../domain/ledger';
import type {
  ChargeView,
  DayUsage,
  HoldView,
  LeaseView,
  RefundView,
  SettleView,
  SpendView,
} from '../domain/views';
import { charge, refund } from './charges';
import type { LedgerContext } from './context';
import { expireHolds, hold, settle } from './holds';
import { closeLease, lease, type LeaseRequest, spend } from './leases';
import { usage } from './usage';

export type { LedgerContext } from './context';
export type { LeaseRequest } from './leases';

/** The quota service's use cases over one ledger context (docs/INTERNAL.md, "quota"). */
export interface QuotaUseCases {
  usage(subject: string): Promise<Record<Kind, DayUsage>>;
  charge(
    subject: string,
    chargeId: string,
    kind: Kind,
    units: number,
  ): Promise<{ created: boolean; charge: ChargeView }>;
  refund(subject: string, chargeId: string): Promise<RefundView>;
  hold(
    subject: string,
    holdId: string,
    kind: Kind,
    units: number,
    ttlMs?: number,
  ): Promise<{ created: boolean; hold: HoldView }>;
  settle(subject: string, holdId: string, units: number): Promise<SettleView>;
  expireHolds(): Promise<number>;
  lease(subject: string, leaseId: string, r: LeaseRequest): Promise<{ created: boolean; lease: LeaseView }>;
  spend(
    subject: string,
    leaseId: string,
    spends: ReadonlyArray<{ charge_id: string; units: number }>,
  ): Promise<SpendView>;
  closeLease(subject: string, leaseId: string): Promise<LeaseView>;
}

export function quotaUseCases(ctx: LedgerContext): QuotaUseCases {
  return {
    usage: (subject) => usage(ctx, subject),
    charge: (subject, chargeId, kind, units) => charge(ctx, subject, chargeId, kind, units),
    refund: (subject, chargeId) => refund(ctx, subject, chargeId),
    hold: (subject, holdId, kind, units, ttlMs) => hold(ctx, subject, holdId, kind, units, ttlMs),
    settle: (subject, holdId, units) => settle(ctx, subject, holdId, units),
    expireHolds: () => expireHolds(ctx),
    lease: (subject, leaseId, r) => lease(ctx, subject, leaseId, r),
    spend: (subject, leaseId, spends) => spend(ctx, subject, leaseId, spends),
    closeLease: (subject, leaseId) => closeLease(ctx, subject, leaseId),
  };
}
