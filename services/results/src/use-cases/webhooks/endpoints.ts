/**
 * Webhook endpoints of a subject: register (after a signed `vision.webhook.verification` event answered
 * 2xx), list, read, rotate the secret, delete. The secret is answered once, at registration and at rotation,
 * and is stored sealed; no read ever returns it.
 */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  REASON,
  invalidRequest,
  notFound,
  strictBody,
  type Clock,
  type Identity,
} from '@vision/shared';
import { verificationEvent } from '../../domain/webhooks/events';
import { parseWebhookUrl, registerShape } from '../../domain/webhooks/requests';
import { deliveryHeaders, newSecret, type SecretBox } from '../../domain/webhooks/signing';
import { endpointView, type EndpointView } from '../../domain/webhooks/views';
import type { WebhookEndpointsStore } from '../../store/webhook-endpoints-store';
import { checkWebhookHost, sendAttempt, type Egress } from './send-attempt';

export interface EndpointsDeps {
  endpoints: WebhookEndpointsStore;
  box: SecretBox;
  clock: Clock;
  egress: Egress;
  maxEndpoints: number;
  rotationOverlapMs: number;
}

const tooMany = (max: number) =>
  invalidRequest(`A subject may register at most ${max} webhook endpoints`, REASON.too_many_webhooks, {
    limit: max,
  });

export class WebhookEndpoints {
  constructor(private readonly d: EndpointsDeps) {}

  async register(identity: Identity, body: unknown): Promise<EndpointView & { secret: string }> {
    const input = strictBody(registerShape, body);
    const parsed = parseWebhookUrl(input.url);
    if (!parsed.ok) throw invalidRequest(parsed.problem, REASON.webhook_url_invalid, { field: 'url' });
    const { endpoints, clock, maxEndpoints } = this.d;
    if ((await endpoints.count(identity.subject)) >= maxEndpoints) throw tooMany(maxEndpoints);
    const host = await checkWebhookHost(parsed.url, this.d.egress);
    if (!host.ok)
      throw host.refused
        ? invalidRequest('url points at an address webhooks may not reach', REASON.webhook_url_invalid, {
            field: 'url',
          })
        : invalidRequest('url host does not resolve', REASON.webhook_unreachable, { field: 'url' });
    const endpointId = `ep_${randomUUID().replace(/-/g, '')}`;
    const secret = newSecret();
    // The receiver proves it takes our signed POSTs before anything is stored.
    const id = randomUUID();
    const event = JSON.stringify(verificationEvent(id, endpointId, clock.now()));
    const headers = deliveryHeaders([secret], id, new Date(), event);
    const sent = await sendAttempt(parsed.url.href, headers, event, this.d.egress);
    if (sent.outcome !== 'delivered')
      throw invalidRequest(
        'The verification event was not answered with a 2xx status',
        REASON.webhook_verification_failed,
        { field: 'url' },
      );
    const now = clock.now();
    const row = {
      endpoint_id: endpointId,
      subject: identity.subject,
      url: parsed.url.href,
      event_types: input.event_types,
      description: input.description ?? null,
      secret_sealed: this.d.box.seal(secret),
      enabled: true,
      created_at: now,
      updated_at: now,
    };
    if (!(await endpoints.insertWithin(row, maxEndpoints))) throw tooMany(maxEndpoints);
    const stored = await endpoints.get(identity.subject, endpointId);
    if (!stored) throw new ApiError('OP-SYS-UNAVAILABLE', 'The endpoint was not stored; try again');
    return { ...endpointView(stored, now), secret };
  }

  async list(identity: Identity): Promise<{ items: EndpointView[] }> {
    const now = this.d.clock.now();
    return { items: (await this.d.endpoints.list(identity.subject)).map((e) => endpointView(e, now)) };
  }

  async get(identity: Identity, endpointId: string): Promise<EndpointView> {
    const e = await this.d.endpoints.get(identity.subject, endpointId);
    if (!e) throw notFound('Webhook endpoint not found');
    return endpointView(e, this.d.clock.now());
  }

  /** A new secret; the current one keeps signing beside it for the overlap (a secret older than that is dropped). */
  async rotate(identity: Identity, endpointId: string): Promise<EndpointView & { secret: string }> {
    const { endpoints, box, clock } = this.d;
    const e = await endpoints.get(identity.subject, endpointId);
    if (!e) throw notFound('Webhook endpoint not found');
    const secret = newSecret();
    const now = clock.now();
    const updated = await endpoints.rotate(
      identity.subject,
      endpointId,
      box.seal(secret),
      e.secret_sealed,
      new Date(now.getTime() + this.d.rotationOverlapMs),
      now,
    );
    if (!updated) throw notFound('Webhook endpoint not found');
    return { ...endpointView(updated, now), secret };
  }

  /** Ends the previous secret's overlap now (a leaked secret); the same answer when there is none. */
  async revokePreviousSecret(identity: Identity, endpointId: string): Promise<EndpointView> {
    const now = this.d.clock.now();
    const updated = await this.d.endpoints.revokePrevious(identity.subject, endpointId, now);
    if (!updated) throw notFound('Webhook endpoint not found');
    return endpointView(updated, now);
  }

  async remove(identity: Identity, endpointId: string): Promise<void> {
    if (!(await this.d.endpoints.delete(identity.subject, endpointId)))
      throw notFound('Webhook endpoint not found');
  }
}

/** The secrets that sign a delivery now: the current one, and the rotated-out one during its overlap. */
export function signingSecrets(
  box: SecretBox,
  e: { secret_sealed: string; previous_secret_sealed: string | null; previous_secret_until: Date | null },
  now: Date,
): string[] {
  const secrets: string[] = [];
  const current = box.open(e.secret_sealed);
  if (current) secrets.push(current);
  if (
    e.previous_secret_sealed &&
    e.previous_secret_until &&
    e.previous_secret_until.getTime() > now.getTime()
  ) {
    const previous = box.open(e.previous_secret_sealed);
    if (previous) secrets.push(previous);
  }
  return secrets;
}
