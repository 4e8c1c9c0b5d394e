import type { Express } from 'express';
import {
  createServiceApp,
  identityOf,
  type Logger,
  type ReadinessCheck,
  route,
  type IdentityVerifier,
} from '@vision/shared';
import type { QuotaUseCases } from '../use-cases';
import { chargeBody, holdBody, idSchema, leaseBody, parseWith, settleBody, spendBody } from './schemas';

export interface QuotaAppDeps {
  ledger: QuotaUseCases;
  logger: Logger;
  /** Its callers' public keys: every route but /healthz and /readyz requires the signed identity. */
  identity: IdentityVerifier;
  readiness?: Record<string, ReadinessCheck>;
}

/** The quota service's HTTP surface (docs/INTERNAL.md, "quota"). The subject is always the caller's identity. */
export function createApp(deps: QuotaAppDeps): Express {
  const { ledger } = deps;
  return createServiceApp(
    { name: 'quota', logger: deps.logger, identity: deps.identity, readiness: deps.readiness },
    (app) => {
      app.get(
        '/v1/vision/quota',
        route(async (_req, res) => {
          const { subject } = identityOf(res);
          const u = await ledger.usage(subject);
          const view = (d: typeof u.video) => ({
            limit: d.limit,
            used: d.used,
            held: d.held,
            remaining: d.remaining,
            day: d.day,
            resets_at: d.resets_at,
          });
          res.setHeader('Cache-Control', 'no-store');
          res.json({ video_tasks: view(u.video), images: view(u.image) });
        }),
      );

      app.post(
        '/internal/v1/charges',
        route(async (req, res) => {
          const { subject } = identityOf(res);
          const body = parseWith(chargeBody, req.body);
          const r = await ledger.charge(subject, body.charge_id, body.kind, body.units);
          res.status(r.created ? 201 : 200).json(r.charge);
        }),
      );

      app.post(
        '/internal/v1/charges/:charge_id/refund',
        route(async (req, res) => {
          const { subject } = identityOf(res);
          const id = parseWith(idSchema, req.params.charge_id, 'charge_id');
          res.json(await ledger.refund(subject, id));
        }),
      );

      app.post(
        '/internal/v1/holds',
        route(async (req, res) => {
          const { subject } = identityOf(res);
          const body = parseWith(holdBody, req.body);
          const r = await ledger.hold(subject, body.hold_id, body.kind, body.units, body.ttl_ms);
          res.status(r.created ? 201 : 200).json(r.hold);
        }),
      );

      app.post(
        '/internal/v1/holds/:hold_id/settle',
        route(async (req, res) => {
          const { subject } = identityOf(res);
          const id = parseWith(idSchema, req.params.hold_id, 'hold_id');
          const body = parseWith(settleBody, req.body);
          res.json(await ledger.settle(subject, id, body.units));
        }),
      );

      app.put(
        '/internal/v1/leases/:lease_id',
        route(async (req, res) => {
          const { subject } = identityOf(res);
          const id = parseWith(idSchema, req.params.lease_id, 'lease_id');
          const b = parseWith(leaseBody, req.body);
          const r = await ledger.lease(subject, id, {
            kind: b.kind,
            minUnits: b.min_units,
            maxUnits: b.max_units,
            windowMs: b.window_ms,
            ttlMs: b.ttl_ms,
          });
          res.status(r.created ? 201 : 200).json(r.lease);
        }),
      );

      app.post(
        '/internal/v1/leases/:lease_id/spends',
        route(async (req, res) => {
          const { subject } = identityOf(res);
          const id = parseWith(idSchema, req.params.lease_id, 'lease_id');
          res.json(await ledger.spend(subject, id, parseWith(spendBody, req.body).spends));
        }),
      );

      app.post(
        '/internal/v1/leases/:lease_id/close',
        route(async (req, res) => {
          const { subject } = identityOf(res);
          res.json(await ledger.closeLease(subject, parseWith(idSchema, req.params.lease_id, 'lease_id')));
        }),
      );
    },
  );
}
