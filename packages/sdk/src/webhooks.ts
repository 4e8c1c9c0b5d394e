/**
 * Webhook endpoints of this key's subject (docs/WEBHOOKS.md), and `verifyWebhook()` for receivers:
 * the Standard Webhooks signature check (the `standardwebhooks` package) over the raw body.
 */
import type { Client } from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { components, paths } from './types';

type Schemas = components['schemas'];
export type WebhookEventType = Schemas['WebhookEventType'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
export type WebhookDelivery = Schemas['WebhookDelivery'];

export interface DeliveryPage {
  items: WebhookDelivery[];
  next_cursor: string;
}

/** A verified event: the CloudEvents 1.0 envelope the service sent. */
export interface WebhookEvent<D = Record<string, unknown>> {
  specversion: '1.0';
  id: string;
  source: string;
  type: WebhookEventType | 'vision.webhook.verification';
  subject?: string;
  time: string;
  datacontenttype: 'application/json';
  data: D;
}

type Unwrap = <T>(call: Promise<{ data?: T; error?: unknown; response: Response }>) => Promise<T>;
const path = (endpointId: string) => ({ params: { path: { endpoint_id: endpointId } } });
const deliveryPath = (endpointId: string, deliveryId: string) => ({
  params: { path: { endpoint_id: endpointId, delivery_id: deliveryId } },
});

export class WebhooksApi {
  constructor(
    private readonly api: Client<paths>,
    private readonly unwrap: Unwrap,
  ) {}

  /** Registers an endpoint (the service first sends it a signed verification event); keep the `secret`. */
  create(body: {
    url: string;
    event_types: WebhookEventType[];
    description?: string;
  }): Promise<WebhookEndpointWithSecret> {
    return this.unwrap(this.api.POST('/v1/vision/webhooks', { body }));
  }

  async list(): Promise<WebhookEndpoint[]> {
    return (await this.unwrap(this.api.GET('/v1/vision/webhooks'))).items;
  }

  get(endpointId: string): Promise<WebhookEndpoint> {
    return this.unwrap(this.api.GET('/v1/vision/webhooks/{endpoint_id}', path(endpointId)));
  }

  /** A new secret; the old one keeps signing beside it until `previous_secret_expires_at`. */
  rotateSecret(endpointId: string): Promise<WebhookEndpointWithSecret> {
    return this.unwrap(this.api.POST('/v1/vision/webhooks/{endpoint_id}/rotate-secret', path(endpointId)));
  }

  /** Ends the rotated-out secret's overlap now: from here on only the current secret signs. */
  revokePreviousSecret(endpointId: string): Promise<WebhookEndpoint> {
    return this.unwrap(
      this.api.POST('/v1/vision/webhooks/{endpoint_id}/revoke-previous-secret', path(endpointId)),
    );
  }

  async delete(endpointId: string): Promise<void> {
    const { response, error } = await this.api.DELETE('/v1/vision/webhooks/{endpoint_id}', path(endpointId));
    if (!response.ok) await this.unwrap(Promise.resolve({ error, response }));
  }

  /** One page of the delivery log, newest first. */
  deliveries(
    endpointId: string,
    query: { status?: 'pending' | 'delivered' | 'dead'; limit?: number; cursor?: string } = {},
  ): Promise<DeliveryPage> {
    return this.unwrap(
      this.api.GET('/v1/vision/webhooks/{endpoint_id}/deliveries', {
        params: { path: { endpoint_id: endpointId }, query },
      }),
    );
  }

  delivery(endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
    return this.unwrap(
      this.api.GET(
        '/v1/vision/webhooks/{endpoint_id}/deliveries/{delivery_id}',
        deliveryPath(endpointId, deliveryId),
      ),
    );
  }

  /** Sends a dead delivery again (same webhook-id). */
  redeliver(endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
    return this.unwrap(
      this.api.POST(
        '/v1/vision/webhooks/{endpoint_id}/deliveries/{delivery_id}/redeliver',
        deliveryPath(endpointId, deliveryId),
      ),
    );
  }
}

/**
 * Checks a received webhook: `webhook-signature` over `webhook-id`, `webhook-timestamp` (within 5 minutes) and the
 * raw body, against `secret` (`whsec_…`; during a rotation either secret verifies). Returns the event; throws
 * when the signature or timestamp does not check out. Pass the body exactly as received, before any JSON parsing.
 */
export function verifyWebhook<D = Record<string, unknown>>(
  secret: string,
  rawBody: string | Buffer,
  headers: Record<string, string | string[] | undefined> | Headers,
): WebhookEvent<D> {
  const flat: Record<string, string> = {};
  if (headers instanceof Headers) headers.forEach((v, k) => (flat[k.toLowerCase()] = v));
  else
    for (const [k, v] of Object.entries(headers))
      if (v !== undefined) flat[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return new Webhook(secret).verify(rawBody, flat) as WebhookEvent<D>;
}
