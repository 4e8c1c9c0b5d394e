/** Removes secrets from values that may reach logs, traces, events or responses. */
import { createHash } from 'node:crypto';

/** `rtsp://user:pass@host/x` -> `rtsp://***@host/x`. Leaves strings without user information untouched. */
export function redactUrl(value: string): string {
  return value.replace(/\b([a-z][a-z0-9+.-]*:\/\/)([^/?#@\s]*)@/gi, '$1***@');
}

/** A short, non-reversible label for an API key, safe to log. */
export function keyFingerprint(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

const SECRET_QUERY = /([?&](?:api[_-]?key|token|access_token|password|secret|sig|signature)=)[^&#\s]*/gi;

/** Redacts user information and well-known secret query parameters inside a URL or free text. */
export function redactText(value: string): string {
  return redactUrl(value).replace(SECRET_QUERY, '$1***');
}
