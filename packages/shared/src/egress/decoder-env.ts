import { existsSync } from 'node:fs';

/**
 * The environment ffmpeg and ffprobe run with: the locale and a search path, nothing else. No
 * DATABASE_URL, object-store keys, identity keys directory, admin token, proxies or no_proxy: a decoder reading
 * a caller's stream must not be able to use (or leak) what the service holds.
 */
export function decoderEnv(from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    PATH: from.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
  };
}

/** Where the image installs the decoder sandbox (scripts/image/decoder-sandbox.c). */
const SANDBOX_IN_IMAGE = '/usr/local/bin/vision-decoder-sandbox';

/**
 * How decoders are confined: `landlock` runs each one under the sandbox launcher (no /proc, no secret files,
 * no service files: docs/SECURITY.md); `off` runs them as the service's own user with only `decoderEnv()`.
 * VISION_DECODER_SANDBOX: the launcher's path, or `off`; unset: the image's launcher where it exists, else off.
 */
export type DecoderSandbox = { mode: 'landlock'; launcher: string } | { mode: 'off'; why: string };

export function decoderSandbox(from: NodeJS.ProcessEnv = process.env): DecoderSandbox {
  const set = from.VISION_DECODER_SANDBOX?.trim();
  if (set === 'off') return { mode: 'off', why: 'VISION_DECODER_SANDBOX=off' };
  if (set) return { mode: 'landlock', launcher: set };
  if (existsSync(SANDBOX_IN_IMAGE)) return { mode: 'landlock', launcher: SANDBOX_IN_IMAGE };
  return { mode: 'off', why: `no decoder sandbox at ${SANDBOX_IN_IMAGE} and VISION_DECODER_SANDBOX unset` };
}

/**
 * The command that runs decoder `file` with `args`: under the sandbox launcher when there is one, which
 * lets it read `read` (the input file, if any) besides the system's files. Every ffmpeg and ffprobe
 * child is spawned through this, with `decoderEnv()`.
 */
export function decoderCommand(
  file: string,
  args: string[],
  read: string[] = [],
  sandbox: DecoderSandbox = decoderSandbox(),
): { file: string; args: string[] } {
  if (sandbox.mode === 'off') return { file, args };
  return { file: sandbox.launcher, args: [...read.flatMap((p) => ['--read', p]), '--', file, ...args] };
}

/** The line a service logs at start when its decoders run unconfined (a developer machine without the launcher). */
export function unconfinedDecoderWarning(sandbox: DecoderSandbox): string | undefined {
  return sandbox.mode === 'off'
    ? `decoders run UNCONFINED as this service's user (${sandbox.why}): a hostile stream that takes over ffmpeg ` +
        `can read this service's files and /proc/<pid>/environ; run the image, or set VISION_DECODER_SANDBOX`
    : undefined;
}
