import { execFile } from 'node:child_process';
import { ffmpegArgs } from './ffmpeg-args';
import type { InputKind } from './job-types';
import { decoderCommand, decoderEnv } from '@vision/shared';

export type DecoderCheck = { ok: true; version: string } | { ok: false; reason: string };

/**
 * Which option classes of `ffmpeg -h full` take the input options of each kind. The RTSP demuxer opens
 * its own connections: protocol-level options (URLContext's rw_timeout) never reach it, which is
 * exactly how "Option rw_timeout not found" failed every RTSP job.
 */
const INPUT_CLASSES: Record<InputKind, string[]> = {
  file: ['AVFormatContext', 'URLContext', 'file'],
  http: ['AVFormatContext', 'URLContext', 'http', 'tcp'],
  https: ['AVFormatContext', 'URLContext', 'https', 'http', 'tls', 'tcp'],
  rtsp: ['AVFormatContext', 'RTSP demuxer'],
  rtmp: ['AVFormatContext', 'URLContext', 'rtmp', 'tcp'],
};
/** Options whose meaning changed between ffmpeg versions: the help text must say what we mean. */
const MEANING: { cls: string; option: string; text: RegExp }[] = [
  // ffmpeg < 5 reads the RTSP demuxer's -timeout as "listen for a connection".
  { cls: 'RTSP demuxer', option: 'timeout', text: /socket I\/O/i },
];

const run = (file: string, args: string[], timeoutMs = 20_000) =>
  new Promise<{ code: number | null; out: string; err?: NodeJS.ErrnoException }>((resolve) => {
    const cmd = decoderCommand(file, args);
    execFile(
      cmd.file,
      cmd.args,
      { timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024, env: decoderEnv(), encoding: 'utf8' },
      (err, stdout, stderr) => {
        const e = err as (NodeJS.ErrnoException & { code?: unknown }) | null;
        resolve({
          code: e ? (typeof e.code === 'number' ? e.code : -1) : 0,
          out: `${stdout}\n${stderr}`,
          err: e && typeof e.code === 'string' ? e : undefined,
        });
      },
    );
  });

/** `ffmpeg -h full` -> class name -> option name -> help line. */
export function parseOptionHelp(text: string): Map<string, Map<string, string>> {
  const classes = new Map<string, Map<string, string>>();
  let cur: Map<string, string> | undefined;
  for (const line of text.split('\n')) {
    const head = /^(\S.*) AVOptions:$/.exec(line);
    if (head) {
      cur = classes.get(head[1]) ?? new Map();
      classes.set(head[1], cur);
      continue;
    }
    const opt = /^\s{2}-(\S+)\s+<\S+>\s+(.*)$/.exec(line);
    if (opt && cur) cur.set(opt[1], opt[2]);
    else if (/^\S/.test(line)) cur = undefined;
  }
  return classes;
}

/** The `-name value` input options before `-i` (flags without a value are ffmpeg's own: -re, -nostdin ...). */
function inputOptions(args: string[]): string[] {
  const end = args.indexOf('-i');
  const names: string[] = [];
  for (let i = 0; i < end; i++) {
    const a = args[i];
    if (!a.startsWith('-')) continue;
    const next = args[i + 1];
    if (i + 1 < end && next !== undefined && !next.startsWith('-')) {
      names.push(a.slice(1));
      i++;
    }
  }
  return names.filter((n) => n !== 'loglevel');
}

/** Every input option we pass for each kind is one the classes taking it know (and means what we mean). */
export function checkOptionSupport(help: Map<string, Map<string, string>>): string | undefined {
  for (const kind of Object.keys(INPUT_CLASSES) as InputKind[]) {
    const args = ffmpegArgs({
      input: 'x',
      kind,
      live: kind !== 'file',
      sampleFps: 5,
      size: 64,
      httpProxy: kind === 'http' || kind === 'https' ? 'http://127.0.0.1:9' : undefined,
      rtmpTcUrl: kind === 'rtmp' ? 'rtmp://h/app' : undefined,
    });
    for (const name of inputOptions(args)) {
      if (!INPUT_CLASSES[kind].some((c) => help.get(c)?.has(name)))
        return `ffmpeg does not accept -${name} for ${kind} inputs`;
    }
  }
  for (const m of MEANING) {
    const line = help.get(m.cls)?.get(m.option);
    if (line && !m.text.test(line)) return `ffmpeg's ${m.cls} -${m.option} does not mean ${m.text.source}`;
  }
  return undefined;
}

/**
 * The decoder preflight, at start: ffmpeg and ffprobe exist, ffmpeg accepts every input option we pass
 * for each source kind (from its own option list), and a one-second synthetic clip goes through the
 * exact output half of our arguments (filters, pixel format, raw frames on stdout).
 */
export async function checkDecoder(ffmpegPath: string, ffprobePath: string): Promise<DecoderCheck> {
  const version = await run(ffmpegPath, ['-hide_banner', '-version']);
  // The sandbox launcher's own refusal (no Landlock in this kernel, or the seccomp profile denies it).
  if (version.code === 126 && /vision-decoder-sandbox/.test(version.out))
    return {
      ok: false,
      reason: 'the decoder sandbox cannot start (Landlock unavailable); see VISION_DECODER_SANDBOX',
    };
  if (version.err || version.code !== 0)
    return { ok: false, reason: 'ffmpeg is not installed or does not run' };
  const probe = await run(ffprobePath, ['-hide_banner', '-version']);
  if (probe.err || probe.code !== 0) return { ok: false, reason: 'ffprobe is not installed or does not run' };
  const help = await run(ffmpegPath, ['-hide_banner', '-h', 'full']);
  if (help.code !== 0) return { ok: false, reason: 'ffmpeg does not list its options' };
  const unsupported = checkOptionSupport(parseOptionHelp(help.out));
  if (unsupported) return { ok: false, reason: unsupported };
  const args = ffmpegArgs({ input: 'x', kind: 'file', live: false, sampleFps: 5, size: 64 });
  const out = args.slice(args.indexOf('-i') + 2).map((a) => (a === 'pipe:1' ? '-' : a));
  const trial = await run(ffmpegPath, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=96x64:rate=10:duration=1',
    ...out.filter((a) => a !== '-'),
    '-y',
    '/dev/null',
  ]);
  if (trial.code !== 0) return { ok: false, reason: 'ffmpeg cannot run our decoding filters' };
  return { ok: true, version: /version (\S+)/.exec(version.out)?.[1] ?? 'unknown' };
}
