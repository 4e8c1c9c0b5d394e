/** /v1/vision/webhooks: endpoints of the caller's subject and their delivery logs (docs/WEBHOOKS.md). */
import type { Express, Request } from 'express';
import { identityOf, notFound, route } from '@vision/shared';
import { DELIVERY_ID, ENDPOINT_ID } from '../domain/webhooks/requests';
import type { WebhookDeliveries } from '../use-cases/webhooks/deliveries';
import type { WebhookEndpoints } from '../use-cases/webhooks/endpoints';

export interface WebhookRouteDeps {
  endpoints: WebhookEndpoints;
  deliveries: WebhookDeliveries;
}

/** An id that cannot exist answers 404 like an unknown one (no lookup). */
function endpointIdOf(req: Request): string {
  const id = String(req.params.endpointId);
  if (!ENDPOINT_ID.test(id)) throw notFound('Webhook endpoint not found');
  return id;
}

function deliveryIdOf(req: Request): string {
  const id = String(req.params.deliveryId);
  if (!DELIVERY_ID.test(id)) throw notFound('Delivery not found');
  return id;
}

export function mountWebhookRoutes(app: Express, d: WebhookRouteDeps): void {
  const base = '/v1/vision/webhooks';
  app.post(
    base,
    route(async (req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.status(201).json(await d.endpoints.register(identityOf(res), req.body));
    }),
  );
  app.get(
    base,
    route(async (_req, res) => {
      res.json(await d.endpoints.list(identityOf(res)));
    }),
  );
  app.get(
    `${base}/:endpointId`,
    route(async (req, res) => {
      res.json(await d.endpoints.get(identityOf(res), endpointIdOf(req)));
    }),
  );
  app.delete(
    `${base}/:endpointId`,
    route(async (req, res) => {
      await d.endpoints.remove(identityOf(res), endpointIdOf(req));
      res.status(204).end();
    }),
  );
  app.post(
    `${base}/:endpointId/rotate-secret`,
    route(async (req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.json(await d.endpoints.rotate(identityOf(res), endpointIdOf(req)));
    }),
  );
  app.post(
    `${base}/:endpointId/revoke-previous-secret`,
    route(async (req, res) => {
      res.json(await d.endpoints.revokePreviousSecret(identityOf(res), endpointIdOf(req)));
    }),
  );
  app.get(
    `${base}/:endpointId/deliveries`,
    route(async (req, res) => {
      res.json(
        await d.deliveries.page(identityOf(res), endpointIdOf(req), req.query as Record<string, unknown>),
      );
    }),
  );
  app.get(
    `${base}/:endpointId/deliveries/:deliveryId`,
    route(async (req, res) => {
      res.json(await d.deliveries.get(identityOf(res), endpointIdOf(req), deliveryIdOf(req)));
    }),
  );
  app.post(
    `${base}/:endpointId/deliveries/:deliveryId/redeliver`,
    route(async (req, res) => {
      res
        .status(202)
        .json(await d.deliveries.redeliver(identityOf(res), endpointIdOf(req), deliveryIdOf(req)));
    }),
  );
}
