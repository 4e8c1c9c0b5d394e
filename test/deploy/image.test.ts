/**
 * The service image built from the Dockerfile (scripts/image/build.sh, run by CI before the tests), checked with
 * podman: size budget, the default models and their checksums, non-root user, read-only root filesystem, the
 * entry points and tools the services use, and the reuse of its dependency layers when only sources change. Runs where podman holds the image (VISION_IMAGE, default
 * localhost/vision:dev).
 */
import { execSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SHARED_DIR } from '../helpers/stack';
import { SERVICES, repoRoot } from './deploy-support';

jest.setTimeout(5 * 60 * 1000);

const image = process.env.VISION_IMAGE ?? 'localhost/vision:dev';
const maxMb = Number(process.env.VISION_IMAGE_MAX_MB ?? 760);
const hasImage = spawnSync('podman', ['image', 'exists', image]).status === 0;

function inImage(script: string, input?: string, mounts: string[] = []) {
  const volumes = mounts.flatMap((m) => ['-v', m]);
  const r = spawnSync(
    'podman',
    ['run', '--rm', '-i', '--read-only', '--network', 'none', ...volumes, image, 'sh', '-c', script],
    {
      encoding: 'utf8',
      input,
    },
  );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** The steps of a `podman build` log that ran instead of coming from the layer cache, by their command. */
function rebuiltSteps(log: string): string[] {
  const steps = log.split(/^(?=\[\d+\/\d+\] STEP |STEP )/m).filter((s) => /STEP \d+\/\d+: /.test(s));
  return steps
    .filter((step) => /^(RUN|COPY)/.test(step.replace(/^.*?STEP \d+\/\d+: /s, '')))
    .filter((step) => !/--> Using cache/.test(step))
    .map((step) => /STEP \d+\/\d+: (.*)/.exec(step)?.[1] ?? '');
}

(hasImage ? describe : describe.skip)(`the service image ${image}`, () => {
  test(`is under the ${maxMb} MB budget`, () => {
    const r = spawnSync('podman', ['image', 'inspect', '--format', '{{.Size}}', image], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(Number(r.stdout.trim()) / 1e6).toBeLessThan(maxMb);
  });
  test('runs the Node.js of .node-version', () => {
    const wanted = readFileSync(path.join(repoRoot, '.node-version'), 'utf8').trim();
    expect(inImage('node --version')).toEqual({ status: 0, out: `v${wanted}\n` });
  });
  test('carries the default models with the checksums the build checked', () => {
    const sums = readFileSync(path.join(repoRoot, 'scripts/image/models.sha256'), 'utf8');
    const r = inImage('cd /models && sha256sum -c -', sums);
    expect(r).toEqual({ status: 0, out: expect.stringContaining('yolox_nano.onnx: OK') });
    expect(r.out).toContain('fire_smoke_yolox_nano.onnx: OK');
  });
  test('runs as uid 1000 and cannot write to its read-only root filesystem', () => {
    expect(inImage('id -u').out.trim()).toBe('1000');
    const write = inImage('touch /app/probe');
    expect(write.status).not.toBe(0);
    expect(write.out).toMatch(/Read-only file system/);
  });
  test('holds every service entry point, the console build and ffmpeg/ffprobe', () => {
    const files = SERVICES.map((s) => `services/${s}/dist/main.js`).concat(['docs/openapi.yaml']);
    const r = inImage(
      `cd /app && for f in ${files.join(' ')}; do test -f "$f" || echo "missing $f"; done; ` +
        'ls packages/console/dist >/dev/null || echo "missing console"; ffmpeg -version >/dev/null && ffprobe -version >/dev/null && echo tools-ok',
    );
    expect(r.out.trim()).toBe('tools-ok');
  });
  test('reuses its dependency, ffmpeg and model layers when only a source file changes', () => {
    // The build context is the repository's committed tree with one TypeScript source changed.
    const context = mkdtempSync(path.join(os.tmpdir(), 'image-layers-'));
    const tag = `${image}-layer-probe`;
    try {
      // tar.umask 022: the modes of a checkout (git archive writes 0664 by default, which is another layer).
      execSync(`git -C ${repoRoot} -c tar.umask=0022 archive HEAD | tar -x -C ${context}`);
      // A change no earlier build has seen (a repeated one would find its compiled layers in the cache too).
      appendFileSync(
        path.join(context, 'services/gateway/src/main.ts'),
        `\n// a source-only change ${randomUUID()}\n`,
      );
      // scripts/image/base.sh's default tag, named by the Node version of .node-version.
      const nodeVersion = readFileSync(path.join(repoRoot, '.node-version'), 'utf8').trim();
      const base = process.env.VISION_BASE_IMAGE ?? `localhost/vision-node${nodeVersion}-base:bookworm`;
      const coco = process.env.VISION_COCO_MODELS ?? path.join(SHARED_DIR, 'models');
      const build = spawnSync(
        'nice',
        [
          '-n',
          '10',
          'podman',
          'build',
          '--network',
          'host',
          '--build-arg',
          `NODE_IMAGE=${base}`,
          '--build-context',
          `coco-model=${coco}`,
          '-t',
          tag,
          context,
        ],
        { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      );
      expect(build.status).toBe(0);
      const rebuilt = rebuiltSteps(`${build.stdout}${build.stderr}`);
      // The source tree is copied and compiled again, and the runtime stage takes the new build output ...
      expect(rebuilt.some((s) => s.startsWith('RUN npm run build'))).toBe(true);
      // ... while the dependency installs, the apt layer with ffmpeg and the checked models come from the cache.
      expect(rebuilt.filter((s) => /npm ci|apt-get|sha256sum/.test(s))).toEqual([]);
    } finally {
      spawnSync('podman', ['rmi', '--force', tag]);
      rmSync(context, { recursive: true, force: true });
    }
  });
  test('decodes an H.264 clip with its ffmpeg and probes it with its ffprobe', () => {
    // The image leaves out libraries Debian's ffmpeg pulls in for a display; decoding must not need them.
    const clip = '/media/person_bicycle_car_parkinglot_intel.mp4';
    const r = inImage(
      `ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 ${clip}; ` +
        `ffmpeg -v error -i ${clip} -t 2 -vf fps=5 -f rawvideo -pix_fmt bgr24 - | wc -c`,
      undefined,
      [`${path.join(SHARED_DIR, 'media/videos')}:/media:ro`],
    );
    expect(r.status).toBe(0);
    // 10 frames of 480 x 270 BGR.
    expect(r.out.trim().split('\n')).toEqual(['h264,480,270', String(10 * 480 * 270 * 3)]);
  });
});
