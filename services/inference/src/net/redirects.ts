import { checkStreamHost, type Resolver } from './stream-url';

export type RedirectOutcome =
  | {
      ok: true;
      url: string;
      /** Content-Type of the final answer. */
      contentType?: string;
      /** It announced its length: a file, not an endless stream. */
      finite?: boolean;
    }
  | { ok: false; refused: boolean; reason: string };

export interface RedirectOptions {
  allowPrivate: boolean;
  resolve?: Resolver;
  maxHops?: number;
  timeoutMs?: number;
  /** Injected in tests; the global fetch otherwise. */
  fetchImpl?: typeof fetch;
}

/**
 * Walks the redirect chain of an http(s) stream URL one hop at a time, checking every hop's address
 * right before it is contacted, and returns the final URL for ffmpeg (which then runs with
 * `-max_redirects 0`, so it never follows a hop that was not checked). User information is sent as
 * Basic auth and kept only while the chain stays on the original origin.
 */
export async function resolveRedirects(start: string, opts: RedirectOptions): Promise<RedirectOutcome> {
  const maxHops = opts.maxHops ?? 5;
  const doFetch = opts.fetchImpl ?? fetch;
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
    let res: Response;
    try {
      res = await doFetch(bare.href, {
        method: 'GET',
        redirect: 'manual',
        headers,
        signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
      });
    } catch (err) {
      return { ok: false, refused: false, reason: `stream unreachable: ${(err as Error).message}` };
    }
    // Only the status line and headers matter: never read the (endless) body.
    await res.body?.cancel().catch(() => undefined);
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    if (!location)
      return {
        ok: true,
        url: current.href,
        contentType: res.headers.get('content-type') ?? undefined,
        finite: res.headers.has('content-length'),
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
