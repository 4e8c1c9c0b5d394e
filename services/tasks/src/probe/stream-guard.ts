/**
 * SSRF guard for stream URLs: resolves the host and refuses addresses the policy forbids
 * (packages/shared/src/egress/address-policy.ts). For http(s) it also walks the redirect chain itself, one hop at a time
 * with `redirect: 'manual'`, checking every hop, and hands ffprobe the final address with redirects
 * switched off (`-max_redirects 0`) so that ffprobe never follows a hop we did not check.
 * Each request is pinned to the addresses that were checked (pinned-agent.ts): the name is resolved
 * once. What the caller hears is only what they could learn from outside: that the URL could not be
 * reached, never the status or headers our network got back.
 */
import {
  type HostResolver,
  type PinnedExchange,
  checkHostAddresses,
  pinnedFetch,
  timeoutRecorder,
} from '@vision/shared';
import { type ParsedStreamUrl, parseStreamUrl } from '../domain/stream-url';

export type GuardResult =
  | { ok: true; url: ParsedStreamUrl; /** The checked addresses of the final host. */ addresses: string[] }
  | { ok: false; reason: 'stream_url_invalid' | 'stream_unreachable'; problem: string };

export interface GuardOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  maxRedirects?: number;
  /** The resolver of callers' hosts (streamResolver); the system's when absent. */
  resolve?: HostResolver;
}

/** Resolves `host` (all addresses) and checks each against the policy. */
export async function checkHost(
  host: string,
  allowPrivate: boolean,
  resolve?: HostResolver,
): Promise<{ ok: true; addresses: string[] } | { ok: false; unresolvable: boolean; problem: string }> {
  const check = await checkHostAddresses(host, { allowPrivate, resolve });
  if (check.ok) return check;
  if (check.unresolvable)
    return {
      ok: false,
      unresolvable: true,
      problem: check.timedOut
        ? 'stream_url host did not resolve in time'
        : 'stream_url host does not resolve',
    };
  return { ok: false, unresolvable: false, problem: `stream_url points at a ${check.refused.cls} address` };
}

/** Percent-decodes per the URL standard: valid `%XX` become bytes (read as UTF-8), anything else stays. */
export function percentDecode(s: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < s.length;) {
    if (s[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const ch = String.fromCodePoint(s.codePointAt(i) ?? 0);
      bytes.push(...Buffer.from(ch, 'utf8'));
      i += ch.length;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * fetch refuses URLs with user information: the request goes to the URL without it, and the user
 * information (percent-decoded) is sent as `Authorization: Basic`. Neither is ever logged.
 */
export function fetchTargetOf(href: string): { url: string; headers: Record<string, string> } {
  const u = new URL(href);
  if (!u.username && !u.password) return { url: u.href, headers: {} };
  const user = percentDecode(u.username);
  const pass = percentDecode(u.password);
  u.username = '';
  u.password = '';
  const token = Buffer.from(`${user}:${pass}`, 'utf8').toString('base64');
  return { url: u.href, headers: { authorization: `Basic ${token}` } };
}

/** Checks the URL's host, then (http/https) every redirect hop. Returns the URL ffprobe should open. */
export async function guardStreamUrl(url: ParsedStreamUrl, opts: GuardOptions): Promise<GuardResult> {
  const maxRedirects = opts.maxRedirects ?? 5;
  let current = url;
  const deadline = Date.now() + opts.timeoutMs;
  for (let hop = 0; ; hop++) {
    const host = await checkHost(current.host, opts.allowPrivate, opts.resolve);
    if (!host.ok)
      return {
        ok: false,
        // A name that does not resolve cannot be reached; an address the policy refuses is invalid.
        reason: host.unresolvable ? 'stream_unreachable' : 'stream_url_invalid',
        problem: host.problem,
      };
    if (current.scheme !== 'http' && current.scheme !== 'https')
      return { ok: true, url: current, addresses: host.addresses };
    // One request without following redirects: only the status line and headers are read.
    const remaining = deadline - Date.now();
    const timedOut = timeoutRecorder('stream', opts.timeoutMs, false);
    if (remaining <= 0) {
      timedOut();
      return { ok: false, reason: 'stream_unreachable', problem: 'stream_url did not answer in time' };
    }
    let exchange: PinnedExchange;
    const ac = new AbortController();
    const timer = setTimeout(() => {
      timedOut();
      ac.abort();
    }, remaining);
    try {
      const target = fetchTargetOf(current.href);
      exchange = await pinnedFetch(target.url, host.addresses, {
        method: 'GET',
        redirect: 'manual',
        signal: ac.signal,
        headers: target.headers,
      });
    } catch {
      return { ok: false, reason: 'stream_unreachable', problem: 'stream_url could not be reached' };
    } finally {
      clearTimeout(timer);
    }
    const res = exchange.response;
    await res.body?.cancel().catch(() => undefined);
    ac.abort();
    await exchange.close();
    if (res.status < 300 || res.status >= 400) {
      if (res.status >= 400)
        return { ok: false, reason: 'stream_unreachable', problem: 'stream_url could not be opened' };
      return { ok: true, url: current, addresses: host.addresses };
    }
    const location = res.headers.get('location');
    if (!location) return { ok: false, reason: 'stream_unreachable', problem: 'redirect without a location' };
    if (hop + 1 > maxRedirects)
      return { ok: false, reason: 'stream_unreachable', problem: 'too many redirects' };
    let nextHref: string;
    try {
      nextHref = new URL(location, current.href).href;
    } catch {
      return { ok: false, reason: 'stream_url_invalid', problem: 'redirect to an invalid URL' };
    }
    const next = parseStreamUrl(nextHref);
    if (!next.ok || (next.url.scheme !== 'http' && next.url.scheme !== 'https'))
      return { ok: false, reason: 'stream_url_invalid', problem: 'redirect to a refused URL' };
    current = next.url;
  }
}
