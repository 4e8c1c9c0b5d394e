/**
 * Sends due webhook deliveries. Any number of results replicas run one each: a delivery is leased for one
 * attempt (store claimDue, `FOR UPDATE SKIP LOCKED`) for longer than an attempt can take, so no attempt is
 * sent twice at once; a dispatcher that dies mid-attempt leaves its lease to lapse and the delivery is sent
 * again (same webhook-id) by whoever comes next. Each attempt is a span linked to the trace of the event.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  isSpanContextValid,
  propagation,
  trace,
  type Link,
} from '@opentelemetry/api';
import { Periodic, metrics, type Clock, type Logger } from '@vision/shared';
import { decide, type AttemptResult, type RetryPolicy } from '../domain/webhooks/retry';
import { deliveryHeaders, type SecretBox } from '../domain/webhooks/signing';
import type { DeliveryRow, WebhookDeliveriesStore } from '../store/webhook-deliveries-store';
import type { EndpointRow, WebhookEndpointsStore } from '../store/webhook-endpoints-store';
import { sendAttempt, type Egress, type SentAttempt } from '../use-cases/webhooks/send-attempt';
import { signingSecrets } from '../use-cases/webhooks/endpoints';

/** Lease beyond the attempt deadline: room for the resolve and the database writes after the answer. */
const LEASE_MARGIN_MS = 30_000;

export interface DispatcherDeps {
  deliveries: WebhookDeliveriesStore;
  endpoints: WebhookEndpointsStore;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  egress: Egress;
  policy: RetryPolicy;
  concurrency: number;
  pollMs: number;
  random?: () => number;
}

function linkOf(headers: Record<string, string> | null): Link[] {
  if (!headers?.traceparent) return [];
  const sc = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, headers));
  return sc && isSpanContextValid(sc) ? [{ context: sc }] : [];
}

export class WebhookDispatcher {
  private readonly loop: Periodic;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly d: DispatcherDeps) {
    this.loop = new Periodic('webhook dispatcher', d.pollMs, () => this.fill(), d.logger);
  }

  start(): void {
    this.stopped = false;
    this.loop.start();
  }

  /** Looks for due deliveries soon (after new ones were written). */
  wake(): void {
    if (!this.stopped) this.loop.nudge(0);
  }

  /** Stops claiming and waits for the attempts under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop.stop();
    await Promise.allSettled([...this.inFlight]);
  }

  /** Claims due deliveries while slots are free; each attempt runs on its own and frees its slot. */
  private async fill(): Promise<void> {
    while (!this.stopped && this.inFlight.size < this.d.concurrency) {
      const want = this.d.concurrency - this.inFlight.size;
      const now = this.d.clock.now();
      const lease = new Date(now.getTime() + this.d.egress.timeoutMs + LEASE_MARGIN_MS);
      const claimed = await this.d.deliveries.claimDue(now, lease, want);
      if (claimed.length === 0) return;
      const endpoints = await this.d.endpoints.byIds([...new Set(claimed.map((c) => c.endpoint_id))]);
      for (const delivery of claimed) {
        const run: Promise<void> = this.attempt(delivery, endpoints.get(delivery.endpoint_id)).finally(() => {
          this.inFlight.delete(run);
          this.wake();
        });
        this.inFlight.add(run);
      }
      if (claimed.length < want) return;
    }
  }

  /** One attempt of one leased delivery. Never rejects: a failure to record leaves the lease to lapse. */
  private async attempt(delivery: DeliveryRow, endpoint: EndpointRow | undefined): Promise<void> {
    if (!endpoint) return; // deleted meanwhile (its deliveries went with it)
    const { clock, logger } = this.d;
    const span = trace.getTracer('vision-webhooks').startSpan('webhook attempt', {
      kind: SpanKind.CLIENT,
      root: true,
      links: linkOf(delivery.trace_headers),
      attributes: {
        'vision.webhook.endpoint_id': endpoint.endpoint_id,
        'vision.webhook.delivery_id': delivery.delivery_id,
        'vision.webhook.event_type': delivery.event_type,
        'vision.webhook.attempt': delivery.attempts,
      },
    });
    try {
      const startedAt = clock.now();
      const secrets = signingSecrets(this.d.box, endpoint, startedAt);
      const sent: SentAttempt =
        secrets.length === 0
          ? { outcome: 'secret_unavailable', durationMs: 0 }
          : await sendAttempt(
              endpoint.url,
              deliveryHeaders(secrets, delivery.delivery_id, new Date(), delivery.body),
              delivery.body,
              this.d.egress,
            );
      metrics.webhookAttempts.inc({ outcome: sent.outcome });
      metrics.webhookAttemptDuration.observe({ outcome: sent.outcome }, sent.durationMs / 1000);
      span.setAttribute('vision.webhook.outcome', sent.outcome);
      if (sent.statusCode !== undefined) span.setAttribute('http.response.status_code', sent.statusCode);
      if (sent.outcome !== 'delivered') span.setStatus({ code: SpanStatusCode.ERROR, message: sent.outcome });
      await this.record(delivery, endpoint, sent, startedAt);
    } catch (err) {
      logger.warn(
        { err, delivery_id: delivery.delivery_id },
        'webhook attempt not recorded; its lease will lapse',
      );
    } finally {
      span.end();
    }
  }

  private async record(
    delivery: DeliveryRow,
    endpoint: EndpointRow,
    sent: AttemptResult & { durationMs: number },
    startedAt: Date,
  ) {
    const now = this.d.clock.now();
    const roundAttempts = delivery.attempts - delivery.round_start_attempts;
    const decision = decide(
      sent,
      roundAttempts,
      now,
      delivery.give_up_at,
      this.d.policy,
      (this.d.random ?? Math.random)(),
    );
    const next =
      decision.kind === 'delivered'
        ? ({ status: 'delivered' } as const)
        : decision.kind === 'retry'
          ? ({ status: 'pending', at: decision.at } as const)
          : decision.kind === 'dead'
            ? ({ status: 'dead' } as const)
            : ({ status: 'disabled', subject: endpoint.subject } as const);
    const recorded = await this.d.deliveries.complete(
      {
        endpoint_id: delivery.endpoint_id,
        delivery_id: delivery.delivery_id,
        attempt: delivery.attempts,
        started_at: startedAt,
        duration_ms: Math.round(sent.durationMs),
        status_code: sent.statusCode ?? null,
        outcome: sent.outcome,
      },
      next,
      now,
    );
    if (!recorded) return;
    if (decision.kind === 'delivered') metrics.webhookDeliveries.inc({ result: 'delivered' });
    else if (decision.kind === 'dead') metrics.webhookDeliveries.inc({ result: 'dead' });
    else if (decision.kind === 'disable_endpoint') {
      metrics.webhookDeliveries.inc({ result: 'endpoint_disabled' });
      this.d.logger.warn(
        { endpoint_id: endpoint.endpoint_id },
        'webhook endpoint answered 410 Gone: disabled',
      );
    }
  }
}
