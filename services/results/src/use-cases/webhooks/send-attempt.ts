/**
 * One signed POST to a receiver through the pinned egress of callers' hosts (packages/shared pinned-agent):
 * the host is resolved once and checked against the stream-URL policy (host-check.ts), the connection goes to
 * a checked address only, redirects are answered as failures (never followed), the deadline covers connect,
 * send and the status line, and no trace context or baggage leaves with the request.
 */
import { checkHostAddresses, pinnedFetch, retryAfterMs, type HostResolver } from '@vision/shared';
import { outcomeOfStatus, type AttemptResult } from '../../domain/webhooks/retry';

export interface Egress {
  allowPrivate: boolean;
  resolve?: HostResolver;
  timeoutMs: number;
}

export interface SentAttempt extends AttemptResult {
  durationMs: number;
}

/** Resolves and checks the URL's host: the addresses to dial, or why not. */
export async function checkWebhookHost(
  url: URL,
  egress: Pick<Egress, 'allowPrivate' | 'resolve'>,
): Promise<{ ok: true; addresses: string[] } | { ok: false; refused: boolean }> {
  const check = await checkHostAddresses(url.hostname, {
    allowPrivate: egress.allowPrivate,
    resolve: egress.resolve,
  });
  if (check.ok) return { ok: true, addresses: check.addresses };
  return { ok: false, refused: !check.unresolvable };
}

/** Sends `body` with `headers` to `href` once. Never throws: every failure is an outcome. */
export async function sendAttempt(
  href: string,
  headers: Record<string, string>,
  body: string,
  egress: Egress,
): Promise<SentAttempt> {
  const started = Date.now();
  const done = (r: AttemptResult): SentAttempt => ({ ...r, durationMs: Date.now() - started });
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return done({ outcome: 'refused_address' });
  }
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), egress.timeoutMs);
  try {
    const host = await checkWebhookHost(url, egress);
    if (!host.ok) return done({ outcome: host.refused ? 'refused_address' : 'unreachable' });
    if (ac.signal.aborted) return done({ outcome: 'timeout' });
    const exchange = await pinnedFetch(url.href, host.addresses, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: ac.signal,
    });
    const res = exchange.response;
    await res.body?.cancel().catch(() => undefined);
    await exchange.close();
    const outcome = outcomeOfStatus(res.status);
    const asked = retryAfterMs(res.headers.get('retry-after'), Date.now());
    const retryAfterS = asked === undefined ? undefined : Math.ceil(asked / 1000);
    return done({ outcome, statusCode: res.status, ...(retryAfterS !== undefined ? { retryAfterS } : {}) });
  } catch {
    return done({ outcome: ac.signal.aborted ? 'timeout' : 'unreachable' });
  } finally {
    clearTimeout(timer);
  }
}
