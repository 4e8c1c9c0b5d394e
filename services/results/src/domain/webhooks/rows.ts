/** Rows of the webhook tables as the stores hand them out (plain values). */
import type { AttemptOutcome } from './retry';
import type { DeliveryStatus } from './requests';

export interface EndpointRow {
  endpoint_id: string;
  subject: string;
  url: string;
  event_types: string[];
  description: string | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: Date | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  seq: number;
  endpoint_id: string;
  delivery_id: string;
  event_type: string;
  order_key: string;
  body: string;
  trace_headers: Record<string, string> | null;
  status: DeliveryStatus;
  attempts: number;
  round_start_attempts: number;
  next_attempt_at: Date | null;
  lease_until: Date | null;
  give_up_at: Date;
  last_status_code: number | null;
  last_outcome: string | null;
  created_at: Date;
  updated_at: Date;
  delivered_at: Date | null;
  dead_at: Date | null;
}

export interface AttemptRow {
  endpoint_id: string;
  delivery_id: string;
  attempt: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  outcome: AttemptOutcome;
}
