import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MEDIA, startStack, type TestStack } from '../../../test/helpers/stack';
import { startLocalRegistry, type LocalRegistry } from './support/local-registry';

const ROOT = path.resolve(__dirname, '../../..');
const SDK = path.join(ROOT, 'packages/sdk');
const KEY = 'sdk-pack-key-0123456789';
const TSC = require.resolve('typescript/bin/tsc', { paths: [ROOT] });

/** The consumer's code, type-checked against the packed declarations and then run. */
const CONSUMER_TS = `
import { TERMINAL_STATUSES, VisionApiError, VisionClient, type Scene } from '@vision/sdk';

async function main(): Promise<void> {
  const client = new VisionClient({
    baseUrl: String(process.env.VISION_BASE_URL),
    apiKey: String(process.env.VISION_API_KEY),
  });
  const scenes: Scene[] = await client.scenes();
  const quota = await client.quota();
  const detection = await client.detectImages([String(process.env.IMAGE)], { scene: 'person_vehicle' });
  let code = '';
  try {
    await client.getTask('no-such-task');
  } catch (err) {
    if (err instanceof VisionApiError) code = err.code;
  }
  console.log(
    JSON.stringify({
      scenes: scenes.map((s) => s.scene_code),
      videoLimit: quota.video_tasks.limit,
      firstImage: detection.results[0].status,
      code,
      terminal: TERMINAL_STATUSES,
    }),
  );
}
void main();
`;

const CONSUMER_MJS = `
import { VisionClient } from '@vision/sdk';
const client = new VisionClient({ baseUrl: process.env.VISION_BASE_URL, apiKey: process.env.VISION_API_KEY });
console.log(JSON.stringify({ videoLimit: (await client.quota()).video_tasks.limit }));
`;

describe('the SDK as a user installs it (npm pack, npm install of the tarball)', () => {
  let stack: TestStack;
  let registry: LocalRegistry | undefined;
  let dir: string;
  // npm and node run with a clean environment: no npm_config_* of a surrounding npm script, and no user npmrc
  // (npm reads an empty one in the work folder), so the caller's registry, proxy and cache settings play no part.
  const env = () => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME ?? os.homedir(),
    npm_config_userconfig: path.join(dir, 'user.npmrc'),
  });
  // Asynchronous: the stack answering the consumer runs in this process.
  const run = async (cmd: string, args: string[], extra: Record<string, string> = {}) =>
    (
      await promisify(execFile)(cmd, args, {
        cwd: dir,
        env: { ...env(), ...extra },
        encoding: 'utf8',
        timeout: 240_000,
      })
    ).stdout;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vision-sdk-consumer-'));
    writeFileSync(path.join(dir, 'user.npmrc'), '');
    mkdirSync(path.join(dir, 'registry'));
    registry = await startLocalRegistry(SDK, ROOT, path.join(dir, 'registry'), env());
    stack = await startStack({ keys: `${KEY}:sdk-pack` });
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await registry?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('packs only the built code and README, installs into a fresh project, type-checks and runs there', async () => {
    // Build the SDK as published (a no-op when npm run build is fresh).
    execFileSync(process.execPath, [TSC, '-b', SDK], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const packed = JSON.parse(
      execFileSync('npm', ['pack', SDK, '--json', '--pack-destination', dir], {
        cwd: dir,
        env: env(),
        encoding: 'utf8',
      }),
    ) as { filename: string; files: { path: string }[] }[];
    const files = packed[0].files.map((f) => f.path).sort();
    expect(files).toEqual(
      expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts']),
    );
    expect(files.filter((f) => !/^(README\.md|package\.json|dist\/.*\.(js|d\.ts))$/.test(f))).toEqual([]);
    expect(files).toContain('dist/generated/openapi.d.ts');

    writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'sdk-consumer', version: '1.0.0', private: true }),
    );
    // Its runtime dependencies come from the loopback registry, which serves only what the SDK declares, into a
    // cache of its own: no network, nothing of the caller's npm cache, and a failure fails at once (no retries).
    await run('npm', [
      'install',
      `./${packed[0].filename}`,
      `--registry=${registry?.url}`,
      `--cache=${path.join(dir, 'npm-cache')}`,
      '--fetch-retries=0',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
    ]);

    writeFileSync(path.join(dir, 'consumer.ts'), CONSUMER_TS);
    writeFileSync(path.join(dir, 'consumer.mjs'), CONSUMER_MJS);
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: 'Node16',
          moduleResolution: 'Node16',
          outDir: 'out',
          types: ['node'],
          typeRoots: [path.join(ROOT, 'node_modules/@types')],
        },
        files: ['consumer.ts'],
      }),
    );
    // No skipLibCheck: the packed declarations must type-check as they are.
    await run(process.execPath, [TSC, '-p', 'tsconfig.json']);

    const vars = {
      VISION_BASE_URL: stack.url,
      VISION_API_KEY: KEY,
      IMAGE: path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg'),
    };
    const out = JSON.parse(await run(process.execPath, ['out/consumer.js'], vars)) as Record<string, unknown>;
    expect(out).toEqual({
      scenes: expect.arrayContaining(['person_vehicle', 'fire_smoke']),
      videoLimit: 5,
      firstImage: 'succeeded',
      code: 'OP-NOT-FOUND',
      terminal: ['stopped', 'succeeded', 'failed', 'refunded'],
    });
    expect(JSON.parse(await run(process.execPath, ['consumer.mjs'], vars))).toEqual({ videoLimit: 5 });
  }, 300_000);
});
