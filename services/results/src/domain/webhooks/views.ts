/** Public shapes of webhook endpoints and deliveries (docs/openapi.yaml). Pure. */
import type { AttemptRow, DeliveryRow, EndpointRow } from './rows';

export interface EndpointView {
  endpoint_id: string;
  url: string;
  event_types: string[];
  description?: string;
  status: 'enabled' | 'disabled';
  disabled_reason?: string;
  /** While a rotated-out secret still signs beside the new one. */
  previous_secret_expires_at?: string;
  created_at: string;
  updated_at: string;
}

export function endpointView(e: EndpointRow, now: Date): EndpointView {
  const v: EndpointView = {
    endpoint_id: e.endpoint_id,
    url: e.url,
    event_types: e.event_types,
    status: e.enabled ? 'enabled' : 'disabled',
    created_at: e.created_at.toISOString(),
    updated_at: e.updated_at.toISOString(),
  };
  if (e.description) v.description = e.description;
  if (!e.enabled && e.disabled_reason) v.disabled_reason = e.disabled_reason;
  if (e.previous_secret_until && e.previous_secret_until.getTime() > now.getTime())
    v.previous_secret_expires_at = e.previous_secret_until.toISOString();
  return v;
}

export interface AttemptView {
  attempt: number;
  started_at: string;
  latency_ms: number;
  status_code?: number;
  outcome: string;
}

export interface DeliveryView {
  delivery_id: string;
  event_type: string;
  status: string;
  attempts: number;
  created_at: string;
  next_attempt_at?: string;
  delivered_at?: string;
  dead_at?: string;
  last_status_code?: number;
  last_outcome?: string;
  attempt_log: AttemptView[];
  event?: unknown;
}

export function deliveryView(d: DeliveryRow, attempts: AttemptRow[], withEvent = false): DeliveryView {
  const v: DeliveryView = {
    delivery_id: d.delivery_id,
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    created_at: d.created_at.toISOString(),
    attempt_log: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: a.started_at.toISOString(),
      latency_ms: a.duration_ms,
      ...(a.status_code !== null ? { status_code: a.status_code } : {}),
      outcome: a.outcome,
    })),
  };
  if (d.status === 'pending' && d.next_attempt_at) v.next_attempt_at = d.next_attempt_at.toISOString();
  if (d.delivered_at) v.delivered_at = d.delivered_at.toISOString();
  if (d.dead_at) v.dead_at = d.dead_at.toISOString();
  if (d.last_status_code !== null) v.last_status_code = d.last_status_code;
  if (d.last_outcome !== null) v.last_outcome = d.last_outcome;
  if (withEvent) v.event = JSON.parse(d.body) as unknown;
  return v;
}
