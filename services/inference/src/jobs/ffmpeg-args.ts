import { ffmpegInputGuard } from '@vision/shared';
import { LETTERBOX_PAD_VALUE } from '../model/letterbox';
import type { InputKind, ResolvedInput } from './job-types';

/** Protocols ffmpeg may open for each input kind (nothing else: no file:, concat:, subfile:, data: ...). */
export const PROTOCOL_WHITELIST: Record<InputKind, string> = {
  file: 'file',
  http: 'http,tcp',
  https: 'https,tls,tcp',
  rtsp: 'rtsp,rtp,tcp',
  rtmp: 'rtmp,tcp',
};

export interface FfmpegArgsOptions {
  input: string;
  kind: InputKind;
  /** True for live sources (network read timeout applies). */
  live: boolean;
  sampleFps: number;
  /** Side of the square letterboxed output. */
  size: number;
  /** Network read/write timeout for live sources, in ms. */
  ioTimeoutMs?: number;
  /**
   * The egress proxy (startEgressProxy) every HTTP(S) connection of a caller-given stream goes
   * through, HLS segments included: each connection's address is checked when it is made.
   */
  httpProxy?: string;
  /** Read the input at its native frame rate (a progressive file served over HTTP(S)); never for playlists. */
  nativePace?: boolean;
  /** RTMP: the tcUrl of the caller's URL (ffmpeg connects to a loopback relay, see pinned-relay). */
  rtmpTcUrl?: string;
  /** A file's frames again from this point (seconds; redecode-plan.ts): every frame's time is less by it. */
  seekS?: number;
  /** At most this many frames out. */
  maxFrames?: number;
}

/**
 * The network read timeout of a live input. RTSP is a demuxer that opens its own connections: it takes
 * `-timeout` (socket I/O, microseconds, ffmpeg >= 5) and refuses the protocol-level `-rw_timeout`
 * ("Option rw_timeout not found"). RTMP and HTTP(S) are protocols read through avio: `-rw_timeout` (rtmp's
 * own `-timeout` would mean "listen"). TCP interleaved transport for RTSP, video only.
 */
export function ioTimeoutArgs(kind: InputKind, timeoutMs: number): string[] {
  const us = String(Math.round(timeoutMs * 1000));
  if (kind === 'rtsp') return ['-rtsp_transport', 'tcp', '-allowed_media_types', 'video', '-timeout', us];
  return ['-rw_timeout', us];
}

const hex = (v: number) => v.toString(16).padStart(2, '0');

/**
 * Filter chain: sample at `fps`, report each sampled frame (pts_time and the original size) with
 * showinfo on stderr (without its checksums), resize by r = min(S/w, S/h) to (round(w*r), round(h*r))
 * with bilinear interpolation, convert to BGR and pad to S x S at the top-left with 114 (PROVENANCE.md 1.1).
 * The frame comes out planar (gbrp: the G, B and R planes, in that order), so that the model's BGR planes
 * are three typed-array copies (packGbrpTensor) instead of a per-pixel loop on the event loop: 0.07 ms
 * against 0.5-0.7 ms per frame, for 0.2 ms more of ffmpeg. The conversion goes through bgr24 first:
 * bgr24 -> gbrp only moves bytes (the frames are byte for byte those of bgr24), while swscale's direct
 * yuv -> gbrp rounds differently.
 */
export function letterboxFilter(sampleFps: number, size: number): string {
  const r = `min(${size}/iw,${size}/ih)`;
  const pad = `0x${hex(LETTERBOX_PAD_VALUE).repeat(3)}`;
  return [
    `fps=${sampleFps}`,
    // No plane checksums: nothing reads them, and they cost ffmpeg 0.1-0.2 ms of CPU per frame.
    'showinfo=checksum=0',
    `scale=w='round(iw*${r})':h='round(ih*${r})':flags=bilinear`,
    'format=bgr24',
    'format=gbrp',
    `pad=${size}:${size}:0:0:color=${pad}`,
  ].join(',');
}

/** ffmpeg arguments (no shell): raw planar gbrp frames of size x size on stdout, nothing on disk. */
export function ffmpegArgs(o: FfmpegArgsOptions): string[] {
  const args = ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'info'];
  args.push(...ffmpegInputGuard(o.kind, PROTOCOL_WHITELIST[o.kind], o.httpProxy));
  // Redirects are walked (and every hop's address checked) before ffmpeg starts: it follows none itself.
  if (o.kind === 'http' || o.kind === 'https') args.push('-max_redirects', '0');
  if (o.live && o.kind !== 'file') args.push(...ioTimeoutArgs(o.kind, o.ioTimeoutMs ?? 10_000));
  // A live input is probed for 0.5 s, not ffmpeg's 5: its first frame comes seconds sooner, at a job's start as after
  // a reconnection or a handover between replicas (docs/INTERNAL.md, "Who runs a job"). An RTSP session describes
  // its stream (SDP), and MPEG-TS carries its parameters with every keyframe.
  if (o.live && o.kind !== 'file') args.push('-analyzeduration', '500000', '-probesize', '500000');
  if (o.kind === 'rtmp' && o.rtmpTcUrl) args.push('-rtmp_tcurl', o.rtmpTcUrl);
  // A caller's HTTP(S) URL may be a file (progressive MP4) that ffmpeg would read faster than real time:
  // read it at its own pace, like a camera, so capture times and tracking follow the video. (A live
  // playlist paces itself; read at 1x it would fall behind its sliding window.)
  if (o.live && o.nativePace && (o.kind === 'http' || o.kind === 'https')) args.push('-re');
  if (o.seekS) args.push('-ss', String(o.seekS));
  args.push('-i', o.input);
  args.push('-map', '0:v:0', '-an', '-sn', '-dn');
  args.push('-vf', letterboxFilter(o.sampleFps, o.size));
  if (o.maxFrames) args.push('-frames:v', String(o.maxFrames));
  args.push('-fps_mode', 'passthrough', '-f', 'rawvideo', '-pix_fmt', 'gbrp', 'pipe:1');
  return args;
}

/** The tcUrl ffmpeg would send for the caller's URL (`rtmp://host[:port]/app`), kept when it connects via the relay. */
export function rtmpTcUrl(input: string): string {
  const u = new URL(input);
  const app = u.pathname.split('/').filter(Boolean)[0] ?? '';
  return `${u.protocol}//${u.host}/${app}`;
}

/** The decoder of one job run: ffmpeg's arguments, the frame size, and (live) when a silent decoder is restarted. */
export function jobDecoder(o: {
  input: ResolvedInput;
  /** The checked address to read (after redirects, or through the pinned relay); the input's own if unset. */
  streamInput?: string;
  sampleFps: number;
  size: number;
  ioTimeoutMs?: number;
  httpProxy?: string;
  nativePace: boolean;
  seekS?: number;
  maxFrames?: number;
}): { args: string[]; frameBytes: number; stallMs?: number } {
  const { input, size } = o;
  return {
    args: ffmpegArgs({
      input: o.streamInput ?? input.input,
      kind: input.kind,
      live: input.live,
      sampleFps: o.sampleFps,
      size,
      ioTimeoutMs: o.ioTimeoutMs,
      httpProxy: input.live ? o.httpProxy : undefined,
      nativePace: o.nativePace,
      rtmpTcUrl: input.kind === 'rtmp' ? rtmpTcUrl(input.input) : undefined,
      seekS: o.seekS,
      maxFrames: o.maxFrames,
    }),
    frameBytes: size * size * 3,
    // A live decoder that runs without producing frames is restarted (its timeouts only see dead sockets).
    stallMs: input.live ? Math.max(o.ioTimeoutMs ?? 10_000, 3000 / o.sampleFps) : undefined,
  };
}
