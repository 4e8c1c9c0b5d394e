/** Server-Sent Events framing (WHATWG HTML, "Server-sent events"): pure, no I/O. */

/** One event: `id:` is the results cursor after the frame, so Last-Event-ID resumes exactly. */
export function sseEvent(event: string, data: unknown, id?: string): string {
  const lines = [`event: ${event}`];
  if (id !== undefined) lines.push(`id: ${id}`);
  // JSON.stringify never emits a raw newline, so the data is one `data:` line.
  lines.push(`data: ${JSON.stringify(data)}`);
  return `${lines.join('\n')}\n\n`;
}

/** A comment line: ignored by EventSource, keeps proxies and idle cuts from closing the stream. */
export const SSE_HEARTBEAT = ': heartbeat\n\n';

/** How long a client waits before reconnecting after the server ends a stream early (max duration). */
export function sseRetry(ms: number): string {
  return `retry: ${Math.max(0, Math.floor(ms))}\n\n`;
}

/**
 * The cursor to resume from: a `Last-Event-ID` (set by a reconnecting EventSource) wins over the `cursor`
 * query parameter. An empty (or blank) header is ignored, as if absent: an EventSource never sends an
 * empty last event ID (WHATWG HTML sends the header only when the ID is not the empty string), so the
 * `cursor` query, if any, applies. The caller still validates a `cursor` query that the header overrides.
 */
export function resumeCursor(
  lastEventId: string | undefined,
  queryCursor: string | undefined,
): string | undefined {
  const id = lastEventId?.trim();
  if (id !== undefined && id !== '') return id;
  return queryCursor;
}
