import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  decoderCommand,
  decoderEnv,
  decoderSandbox,
  unconfinedDecoderWarning,
} from '../src/egress/decoder-env';

const SOURCE = path.join(__dirname, '../../../scripts/image/decoder-sandbox.c');

describe('decoderCommand', () => {
  it('wraps the decoder in the launcher, with the files it may read', () => {
    const sandbox = { mode: 'landlock' as const, launcher: '/opt/sb' };
    expect(decoderCommand('ffmpeg', ['-i', '/data/a.mp4'], ['/data/a.mp4'], sandbox)).toEqual({
      file: '/opt/sb',
      args: ['--read', '/data/a.mp4', '--', 'ffmpeg', '-i', '/data/a.mp4'],
    });
  });

  it('runs the decoder as it is when the sandbox is off, and says so', () => {
    const off = decoderSandbox({ VISION_DECODER_SANDBOX: 'off' });
    expect(off.mode).toBe('off');
    expect(decoderCommand('ffprobe', ['-v', 'error'], [], off)).toEqual({
      file: 'ffprobe',
      args: ['-v', 'error'],
    });
    expect(unconfinedDecoderWarning(off)).toMatch(/UNCONFINED/);
    expect(decoderSandbox({ VISION_DECODER_SANDBOX: '/x/sb' })).toEqual({
      mode: 'landlock',
      launcher: '/x/sb',
    });
  });
});

/** The launcher itself, built with this machine's C compiler, on this kernel (skipped without either). */
const cc = spawnSync('cc', ['--version']).status === 0;
describe('the decoder sandbox launcher', () => {
  let dir: string;
  let launcher: string;
  let landlock = false;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'decoder-sandbox-'));
    if (!cc) return;
    launcher = path.join(dir, 'sb');
    execFileSync('cc', ['-O2', '-Wall', '-Wextra', '-Werror', '-o', launcher, SOURCE]);
    landlock = spawnSync(launcher, ['--', 'true']).status === 0;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (script: string, read: string[] = []) => {
    const cmd = decoderCommand('sh', ['-c', script], read, { mode: 'landlock', launcher });
    return spawnSync(cmd.file, cmd.args, { env: decoderEnv(), encoding: 'utf8' });
  };

  it('lets the decoder read its input and the system, and nothing of its parent or other files', () => {
    if (!cc || !landlock) return console.warn('no C compiler or no Landlock here: launcher not tried');
    const secret = path.join(dir, 'service.key');
    const input = path.join(dir, 'input.mp4');
    writeFileSync(secret, 'secret');
    writeFileSync(input, 'input');
    const check = (p: string) => `if cat "${p}" >/dev/null 2>&1; then printf R; else printf D; fi;`;
    const r = run(
      [input, '/usr/bin/env', secret, '/proc/$PPID/environ', '/proc/$PPID/cmdline', '/proc/self/status']
        .map(check)
        .join(' ') + ' if kill -0 $PPID 2>/dev/null; then printf R; else printf D; fi',
      [input],
    );
    expect(r.stdout).toBe('RRDDDDD');
  });

  it('refuses a malformed command line without running anything', () => {
    if (!cc) return console.warn('no C compiler here: launcher not tried');
    const r = spawnSync(launcher, ['--read'], { encoding: 'utf8' });
    expect(r.status).toBe(126);
    expect(r.stderr).toMatch(/usage/);
  });
});
