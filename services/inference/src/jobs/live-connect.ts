/**
 * Before each (re)connection of a live job: the caller's host is checked again (and pinned), an http(s)
 * URL's redirects are walked and what it serves is classed; RTSP and RTMP get a relay pinned to the
 * checked address. No second resolution happens after the check (DNS rebinding cannot reach another address).
 */
import { startPinnedRelay, throughRelay, type PinnedRelay } from '@vision/shared';
import { checkStreamHost, type Resolver } from '../net/stream-url';
import { resolveRedirects, sourceKindOf } from '../net/redirects';
import { isPlaylist, type SourceKind } from '../net/playlist';
import type { ResolvedInput } from './job-types';

export type LiveCheck =
  | { kind: 'refused' }
  | { kind: 'unreachable'; reason: string }
  | {
      kind: 'ok';
      /** The checked address to pin RTSP/RTMP connections to. */
      pinned?: string;
      /** http(s): the final checked URL, whether to read it at native pace, and what it serves. */
      http?: { url: string; nativePace: boolean; sourceKind: SourceKind };
    };

/** `known`: the source kind decided at the first look (not classed again). */
export async function checkLiveSource(
  input: ResolvedInput,
  opts: { allowPrivate: boolean; resolve?: Resolver },
  known?: SourceKind,
): Promise<LiveCheck> {
  if (!input.host) return { kind: 'ok' };
  const check = await checkStreamHost(input.host, { allowPrivate: opts.allowPrivate, resolve: opts.resolve });
  if (!check.ok && check.reason.includes('refused')) return { kind: 'refused' };
  if (!check.ok) return { kind: 'unreachable', reason: 'host does not resolve' };
  const pinned = check.addresses[0];
  if (input.kind !== 'http' && input.kind !== 'https') return { kind: 'ok', pinned };
  const walk = { allowPrivate: opts.allowPrivate, resolve: opts.resolve };
  const hops = await resolveRedirects(input.input, walk);
  if (!hops.ok && hops.refused) return { kind: 'refused' };
  if (!hops.ok) return { kind: 'unreachable', reason: hops.reason.replace(/:.*$/, '') };
  return {
    kind: 'ok',
    pinned,
    http: {
      url: hops.url,
      // A file (it announced its length), not a playlist: read at its native rate.
      nativePace: hops.finite === true && !isPlaylist(hops.url, hops.contentType),
      sourceKind: known ?? (await sourceKindOf(hops, walk)),
    },
  };
}

/**
 * RTSP and RTMP: a loopback relay to the address just checked, through which ffmpeg connects (RTSP
 * redirects are refused there). HTTP(S) goes through the egress proxy instead: undefined.
 */
export async function startRelayFor(
  input: ResolvedInput,
  address: string | undefined,
): Promise<{ relay: PinnedRelay; streamInput: string } | undefined> {
  const kind = input.kind;
  if (!address || (kind !== 'rtsp' && kind !== 'rtmp')) return undefined;
  const url = new URL(input.input);
  const relay = await startPinnedRelay({
    address,
    port: url.port ? Number(url.port) : kind === 'rtsp' ? 554 : 1935,
    protocol: kind,
  });
  return { relay, streamInput: throughRelay(input.input, relay) };
}
