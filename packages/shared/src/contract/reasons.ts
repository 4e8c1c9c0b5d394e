/**
 * The closed vocabulary of `details.reason` in error answers (docs/API.md "Error reasons" lists each
 * with its code). Every service names a reason through REASON; a new one is added here, in
 * docs/API.md and in docs/openapi.yaml together.
 */
export const REASONS = [
  // request shape (JSON bodies, query strings, headers)
  'unknown_field',
  'invalid_field',
  'missing_field',
  'malformed_body',
  'malformed_json',
  'unsupported_encoding',
  'body_too_large',
  'body_truncated',
  'upload_stalled',
  'malformed_request',
  'invalid_path',
  'method_not_allowed',
  'range_not_satisfiable',
  'invalid_query',
  'invalid_cursor',
  'invalid_limit',
  'invalid_min_score',
  'too_many_ids',
  // zones and lines of a task
  'rule_history_full',
  // Idempotency-Key
  'idempotency_key',
  'idempotency_mismatch',
  'in_progress',
  // multipart uploads
  'not_multipart',
  'malformed_multipart',
  'duplicate_field',
  'field_too_large',
  'too_many_fields',
  'too_many_parts',
  'too_many_files',
  'file_missing',
  'file_too_large',
  'unsupported_type',
  'too_many_pixels',
  // stream addresses (SPEC.md 4.1)
  'stream_url_invalid',
  'stream_unreachable',
  // scenes
  'unknown_scene',
  'scene_disabled',
  // quota and admission
  'active_tasks',
  'fair_share',
  'queue_full',
  'charge_id_conflict',
  'hold_id_conflict',
  'hold_already_settled',
  'units_exceed_hold',
  'hold_expired',
  'lease_id_conflict',
  'lease_ended',
  // availability
  'maintenance',
  'breaker_open',
  'decoder_unavailable',
  'probe_unavailable',
  'overloaded',
  'deadline_exceeded',
  // webhooks
  'webhook_url_invalid',
  'webhook_unreachable',
  'webhook_verification_failed',
  'too_many_webhooks',
  'delivery_not_dead',
  'webhook_disabled',
  // internal and operator endpoints
  'not_resolving',
  'task_id_taken',
] as const;

export type Reason = (typeof REASONS)[number];

/** `REASON.unknown_field === 'unknown_field'`: the constants code and tests name reasons by. */
export const REASON = Object.freeze(
  Object.fromEntries(REASONS.map((r) => [r, r])) as { readonly [K in Reason]: K },
);

export function isReason(value: unknown): value is Reason {
  return typeof value === 'string' && (REASONS as readonly string[]).includes(value);
}
