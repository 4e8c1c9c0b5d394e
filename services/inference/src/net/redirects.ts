import { type PinnedExchange, type PinnedRequestInit, pinnedFetch } from '@vision/shared';
import { checkStreamHost, type Resolver } from './stream-url';
import { isPlaylist, lookAtPlaylist, type SourceKind } from './playlist';

export type RedirectOutcome =
  | {
      ok: true;
      url: string;
      /** Content-Type of the final answer. */
      contentType?: string;
      /** It announced its length: a file, not an endless stream. */
      finite?: boolean;
      /** An HLS playlist's text (its first 256 KiB), read to tell a live playlist from a finished one. */
      playlist?: string;
    }
  | { ok: false; refused: boolean; reason: string };

export interface RedirectOptions {
  allowPrivate: boolean;
  resolve?: Resolver;
  maxHops?: number;
  timeoutMs?: number;
  /** Injected in tests; otherwise pinnedFetch, dialling only the checked addresses. */
  fetchImpl?: (url: string, addresses: readonly string[], init: PinnedRequestInit) => Promise<PinnedExchange>;
}

/**
 * Walks the redirect chain of an http(s) stream URL one hop at a time, checking every hop's address
 * right before it is contacted, and returns the final URL for ffmpeg (which then runs with
 * `-max_redirects 0`, so it never follows a hop that was not checked). User information is sent as
 * Basic auth and kept only while the chain stays on the original origin. Every request is pinned to
 * the addresses just checked (pinned-agent.ts), so the name is resolved once per hop.
 */
export async function resolveRedirects(start: string, opts: RedirectOptions): Promise<RedirectOutcome> {
  const maxHops = opts.maxHops ?? 5;
  const doFetch = opts.fetchImpl ?? pinnedFetch;
  let current = new URL(start);
  const origin = current.origin;
  const user = decodeURIComponent(current.username);
  const pass = decodeURIComponent(current.password);
  for (let hop = 0; hop <= maxHops; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:')
      return { ok: false, refused: true, reason: `redirect to a ${current.protocol} address (refused)` };
    const check = await checkStreamHost(current.hostname, {
      allowPrivate: opts.allowPrivate,
      resolve: opts.resolve,
    });
    if (!check.ok) return { ok: false, refused: check.reason.includes('refused'), reason: check.reason };
    const bare = new URL(current.href);
    bare.username = '';
    bare.password = '';
    const headers: Record<string, string> = {};
    if ((user || pass) && current.origin === origin)
      headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    let exchange: PinnedExchange;
    try {
      exchange = await doFetch(bare.href, check.addresses, {
        method: 'GET',
        redirect: 'manual',
        headers,
        signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
      });
    } catch {
      return { ok: false, refused: false, reason: 'stream unreachable' };
    }
    const res = exchange.response;
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    const contentType = res.headers.get('content-type') ?? undefined;
    // Only the status line and headers matter, and a playlist's text: never read an (endless) media body.
    const playlist =
      !location && res.ok && isPlaylist(current.href, contentType)
        ? await readSome(res, 256 * 1024)
        : undefined;
    await res.body?.cancel().catch(() => undefined);
    await exchange.close();
    if (!location)
      return {
        ok: true,
        url: current.href,
        contentType,
        finite: res.headers.has('content-length'),
        ...(playlist !== undefined ? { playlist } : {}),
      };
    const next = new URL(location, bare);
    if (next.origin === origin && (user || pass)) {
      next.username = current.username;
      next.password = current.password;
    }
    current = next;
  }
  return { ok: false, refused: false, reason: `more than ${maxHops} redirects` };
}

/** The first `max` bytes of a body as text (the rest is never read). */
async function readSome(res: PinnedExchange['response'], max: number): Promise<string | undefined> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    return undefined;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

/**
 * What the final answer of a walk serves (playlist.ts): a progressive file, a finished (VOD) playlist
 * or a live one. A master playlist is decided by its first variant, walked and checked the same way.
 */
export async function sourceKindOf(
  hops: Extract<RedirectOutcome, { ok: true }>,
  opts: RedirectOptions,
): Promise<SourceKind> {
  if (hops.playlist === undefined)
    return hops.finite === true && !isPlaylist(hops.url, hops.contentType) ? 'file' : 'live';
  let look = lookAtPlaylist(hops.playlist);
  if (look.kind === 'master') {
    const variant = await resolveRedirects(new URL(look.variant, hops.url).href, opts);
    look = variant.ok && variant.playlist !== undefined ? lookAtPlaylist(variant.playlist) : { kind: 'live' };
  }
  return look.kind === 'vod' ? 'vod' : 'live';
}
