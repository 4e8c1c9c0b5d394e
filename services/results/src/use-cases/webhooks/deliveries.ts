/** The delivery log of an endpoint (attempts, status, latency, next retry) and the redelivery of a dead delivery. */
import { REASON, invalidRequest, notFound, type Clock, type Identity } from '@vision/shared';
import { z } from 'zod';
import { deliveriesQueryShape } from '../../domain/webhooks/requests';
import { deliveryView, type DeliveryView } from '../../domain/webhooks/views';
import type { WebhookDeliveriesStore } from '../../store/webhook-deliveries-store';
import type { WebhookEndpointsStore } from '../../store/webhook-endpoints-store';

export interface DeliveriesDeps {
  endpoints: WebhookEndpointsStore;
  deliveries: WebhookDeliveriesStore;
  clock: Clock;
  horizonMs: number;
  /** Wakes the dispatcher (a redelivery is due at once). */
  wake: () => void;
}

export class WebhookDeliveries {
  constructor(private readonly d: DeliveriesDeps) {}

  private async ownEndpoint(identity: Identity, endpointId: string) {
    const e = await this.d.endpoints.get(identity.subject, endpointId);
    if (!e) throw notFound('Webhook endpoint not found');
    return e;
  }

  async page(
    identity: Identity,
    endpointId: string,
    query: Record<string, unknown>,
  ): Promise<{ items: DeliveryView[]; next_cursor: string }> {
    const parsed = z.object(deliveriesQueryShape).strict().safeParse(query);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      throw invalidRequest(
        i.code === 'unrecognized_keys' ? 'Unknown query parameter' : `Invalid ${i.path.join('.')}`,
        i.code === 'unrecognized_keys' ? REASON.unknown_field : REASON.invalid_query,
        { field: i.code === 'unrecognized_keys' ? i.keys.join(',').slice(0, 64) : i.path.join('.') },
      );
    }
    await this.ownEndpoint(identity, endpointId);
    const q = parsed.data;
    const rows = await this.d.deliveries.page(endpointId, {
      status: q.status,
      limit: q.limit + 1,
      before: q.cursor !== undefined ? Number(q.cursor) : undefined,
    });
    const more = rows.length > q.limit;
    const pageRows = more ? rows.slice(0, q.limit) : rows;
    const attempts = await this.d.deliveries.attemptsOf(
      endpointId,
      pageRows.map((r) => r.delivery_id),
    );
    return {
      items: pageRows.map((r) =>
        deliveryView(
          r,
          attempts.filter((a) => a.delivery_id === r.delivery_id),
        ),
      ),
      next_cursor: more ? String(pageRows[pageRows.length - 1].seq) : '',
    };
  }

  async get(identity: Identity, endpointId: string, deliveryId: string): Promise<DeliveryView> {
    await this.ownEndpoint(identity, endpointId);
    const d = await this.d.deliveries.get(endpointId, deliveryId);
    if (!d) throw notFound('Delivery not found');
    return deliveryView(d, await this.d.deliveries.attemptsOf(endpointId, [deliveryId]), true);
  }

  /** Puts a dead delivery back in line (same webhook-id, fresh retry horizon). */
  async redeliver(identity: Identity, endpointId: string, deliveryId: string): Promise<DeliveryView> {
    const e = await this.ownEndpoint(identity, endpointId);
    if (!e.enabled)
      throw invalidRequest('The endpoint is disabled; register it again', REASON.webhook_disabled);
    const existing = await this.d.deliveries.get(endpointId, deliveryId);
    if (!existing) throw notFound('Delivery not found');
    const row = await this.d.deliveries.redeliver(
      endpointId,
      deliveryId,
      this.d.clock.now(),
      this.d.horizonMs,
    );
    if (!row)
      throw invalidRequest('Only a dead delivery can be redelivered', REASON.delivery_not_dead, {
        status: existing.status,
      });
    this.d.wake();
    return deliveryView(row, await this.d.deliveries.attemptsOf(endpointId, [deliveryId]));
  }
}
