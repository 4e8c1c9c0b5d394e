/**
 * Connectivity probe: runs ffprobe as a child process against a stream URL and succeeds only when it
 * finds a video stream within the time limit. ffprobe gets a protocol whitelist for the URL's scheme,
 * TCP transport for RTSP, and no HTTP redirects (the guard checked the hops already).
 */
import { spawn } from 'node:child_process';
import {
  decoderCommand,
  decoderEnv,
  ffmpegInputGuard,
  startPinnedRelay,
  throughRelay,
  timeoutRecorder,
} from '@vision/shared';
import type { StreamScheme } from '../domain/stream-url';

export type ProbeResult =
  | { ok: true; codec: string; width?: number; height?: number }
  /** ourSide: ffprobe itself could not run (missing, not executable): not the caller's fault. */
  | { ok: false; problem: string; ourSide?: boolean; refused?: boolean };

const WHITELIST: Record<StreamScheme, string> = {
  http: 'http,tcp',
  https: 'https,tls,tcp',
  rtsp: 'rtsp,rtp,tcp', // TCP interleaved only: never UDP
  rtmp: 'rtmp,tcp',
};

/**
 * `httpProxy`: the egress proxy (startEgressProxy) that every HTTP(S) connection of the probe goes
 * through, HLS segments on other hosts included; each connection's address is checked when made.
 */
export function ffprobeArgs(
  url: string,
  scheme: StreamScheme,
  timeoutMs: number,
  httpProxy?: string,
): string[] {
  const args = ['-v', 'error', '-hide_banner', ...ffmpegInputGuard(scheme, WHITELIST[scheme], httpProxy)];
  const us = String(timeoutMs * 1000);
  if (scheme === 'rtsp') args.push('-rtsp_transport', 'tcp', '-timeout', us);
  else if (scheme === 'http' || scheme === 'https') args.push('-max_redirects', '0', '-rw_timeout', us);
  else args.push('-rw_timeout', us);
  args.push(
    '-analyzeduration',
    String(Math.min(timeoutMs, 3000) * 1000),
    '-probesize',
    '5000000',
    '-select_streams',
    'v',
    '-show_entries',
    'stream=codec_type,codec_name,width,height',
    '-of',
    'json',
    url,
  );
  return args;
}

/**
 * Probes `url`. RTSP and RTMP connect through a loopback relay to `pin`, the address the guard
 * checked (no second resolution: DNS rebinding cannot reach another address); an RTSP redirect, or a
 * reply ffmpeg could read differently, is refused there. HTTP(S) goes through the egress proxy.
 */
export async function probeStream(
  url: string,
  scheme: StreamScheme,
  opts: { timeoutMs: number; ffprobePath?: string; httpProxy?: string; pin?: string; port?: number },
): Promise<ProbeResult> {
  if (!opts.pin || (scheme !== 'rtsp' && scheme !== 'rtmp')) return runProbe(url, scheme, opts);
  const relay = await startPinnedRelay({
    address: opts.pin,
    port: opts.port ?? (scheme === 'rtsp' ? 554 : 1935),
    protocol: scheme,
  });
  try {
    const result = await runProbe(throughRelay(url, relay), scheme, opts);
    const refusal = relay.refusal();
    if (refusal)
      return { ok: false, problem: `the stream's RTSP server sent ${refusal} (refused)`, refused: true };
    return result;
  } finally {
    await relay.close();
  }
}

/** Runs ffprobe; the child is killed when `timeoutMs` passes. Output never includes the URL. */
function runProbe(
  url: string,
  scheme: StreamScheme,
  opts: { timeoutMs: number; ffprobePath?: string; httpProxy?: string },
): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const cmd = decoderCommand(
      opts.ffprobePath ?? 'ffprobe',
      ffprobeArgs(url, scheme, opts.timeoutMs, opts.httpProxy),
    );
    const child = spawn(cmd.file, cmd.args, { stdio: ['ignore', 'pipe', 'pipe'], env: decoderEnv() });
    let out = '';
    let done = false;
    const finish = (r: ProbeResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(r);
    };
    // A probe that runs out of time shows on the request's span (a caller's stream: not counted as ours).
    const timedOut = timeoutRecorder('stream', opts.timeoutMs, false);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      timedOut();
      finish({ ok: false, problem: 'no video found in time' });
    }, opts.timeoutMs);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      if (out.length < 65536) out += d;
    });
    child.stderr.resume(); // may echo the URL: never kept
    child.on('error', () => finish({ ok: false, problem: 'probe could not run', ourSide: true }));
    child.on('close', (code) => {
      // 126: the decoder sandbox refused to start (no Landlock here): our side, not the caller's stream.
      if (code === 126) return finish({ ok: false, problem: 'probe could not run', ourSide: true });
      if (code !== 0) return finish({ ok: false, problem: 'stream could not be opened' });
      try {
        const parsed = JSON.parse(out) as {
          streams?: { codec_type?: string; codec_name?: string; width?: number; height?: number }[];
        };
        const v = parsed.streams?.find((s) => s.codec_type === 'video');
        if (!v) return finish({ ok: false, problem: 'no video stream found' });
        finish({ ok: true, codec: String(v.codec_name ?? 'unknown'), width: v.width, height: v.height });
      } catch {
        finish({ ok: false, problem: 'probe output unreadable' });
      }
    });
  });
}
