/**
 * What an HTTP(S) stream URL serves, decided once, at a job's first look (SPEC: a live source never
 * ends `succeeded` because its server went away). Pure: no I/O.
 *  - `file`: a progressive file (it announced its length, not a playlist): ends `succeeded` at its end;
 *  - `vod`: an HLS playlist with `#EXT-X-ENDLIST` (all segments listed): ends `succeeded` at its end;
 *  - `live`: an HLS playlist without it, or an endless body: never ends `succeeded`; when the decoder
 *    exits (even with status 0: the server restarted, or served a stale playlist) the job reconnects.
 */
export type SourceKind = 'file' | 'vod' | 'live';

/** An HTTP(S) source that was a file or a finished (VOD) playlist at the first look: it may end `succeeded`. */
export function isFiniteHttp(inputKind: string, kind: SourceKind | undefined): boolean {
  return (inputKind === 'http' || inputKind === 'https') && (kind === 'file' || kind === 'vod');
}

/** An HLS playlist, by its type or (without one) its extension. */
export function isPlaylist(url: string, contentType: string | undefined): boolean {
  if (contentType && /mpegurl/i.test(contentType)) return true;
  return /\.m3u8?$/i.test(new URL(url).pathname);
}

export type PlaylistLook =
  | { kind: 'vod' | 'live' }
  /** A master playlist: its first variant decides (URL relative to the master's). */
  | { kind: 'master'; variant: string };

/** Reads a playlist's text: ENDLIST -> vod; a master playlist -> its first variant; else live. */
export function lookAtPlaylist(text: string): PlaylistLook {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  if (lines.some((l) => l.startsWith('#EXT-X-ENDLIST'))) return { kind: 'vod' };
  const inf = lines.findIndex((l) => l.startsWith('#EXT-X-STREAM-INF'));
  if (inf >= 0) {
    const variant = lines.slice(inf + 1).find((l) => l !== '' && !l.startsWith('#'));
    if (variant) return { kind: 'master', variant };
  }
  return { kind: 'live' };
}
