import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { SDK_VERSION, VisionClient, type ImageDetection, type Task } from '@vision/sdk';
import { MEDIA, settledQuota, startStack, type TestStack } from '../../../test/helpers/stack';
import { startMediaServer, type MediaServer } from '../../../test/helpers/media-server';
import { colorFor } from '../src/draw';
import { BIN, runVision } from './support/vision-process';
import { keepClearOfQuotaDayTurn } from '../../../test/helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const KEY = 'cli-main-key-0123456789';
const LOW = 'cli-low-key-0123456789';
const ROOT = path.resolve(__dirname, '../../..');
const PARKING = path.join(MEDIA, 'videos', 'person_bicycle_car_parkinglot_intel.mp4');
const image = (name: string) => path.join(MEDIA, 'images', name);

describe('the vision command, spawned as a process, against the standalone stack', () => {
  let stack: TestStack;
  let media: MediaServer;
  let tmp: string;

  const vision = (args: string[], env: Record<string, string | undefined> = {}) =>
    runVision(args, { VISION_BASE_URL: stack.url, VISION_API_KEY: KEY, ...env });

  beforeAll(async () => {
    if (!existsSync(path.resolve(__dirname, '../dist/main.js')))
      throw new Error('packages/cli is not built: run `npm run build` first');
    stack = await startStack({
      keys: `${KEY}:cli-main,${LOW}:cli-low`,
      env: {
        QUOTA_OVERRIDES: JSON.stringify({ 'cli-low': { image: 1 } }),
        TASKS_POLL_INTERVAL_MS: '300',
        // The live create probes the stream (ffmpeg's first frames): generous on a busy machine.
        TASKS_PROBE_TIMEOUT_MS: '45000',
      },
    });
    tmp = mkdtempSync(path.join(os.tmpdir(), 'vision-cli-'));
    media = await startMediaServer({
      'pedestrians.mov': path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov'),
    });
  }, 180_000);
  afterAll(async () => {
    await media?.close();
    await stack?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('answers --help for every command', async () => {
    const commands = [
      [],
      ['scenes'],
      ['detect'],
      ['task'],
      ['task', 'create'],
      ['task', 'get'],
      ['task', 'stop'],
    ];
    commands.push(['task', 'wait'], ['tasks'], ['results'], ['quota']);
    for (const cmd of commands) {
      const r = await vision([...cmd, '--help']);
      expect([cmd.join(' '), r.code]).toEqual([cmd.join(' '), 0]);
      expect(r.stdout).toContain(`Usage: vision${cmd.length ? ` ${cmd.join(' ')}` : ''}`);
    }
    expect((await vision(['--help'])).stdout).toContain('Exit status:');
    // As a user runs it from the repository root after npm run build: npm links the bin.
    const npx = await new Promise<string>((resolve, reject) =>
      execFile('npx', ['--no-install', 'vision', '--version'], { cwd: ROOT }, (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    expect(npx.trim()).toBe(SDK_VERSION);
  }, 120_000);

  it('tells usage errors (2), API errors (1) and an exhausted quota (3) apart', async () => {
    const noKey = await vision(['quota'], { VISION_API_KEY: undefined });
    expect([noKey.code, noKey.stderr]).toEqual([2, expect.stringContaining('VISION_API_KEY')]);
    expect((await vision(['frobnicate'])).code).toBe(2);
    expect((await vision(['task', 'create', '--scene', 'ship'])).code).toBe(2);
    expect((await vision(['results', 'x', '--min-score', '2'])).code).toBe(2);
    expect((await vision(['results', 'x', '--format', 'xml'])).code).toBe(2);
    expect((await vision(['detect', 'missing-file.jpg'])).code).toBe(2);

    const notFound = await vision(['task', 'get', 'no-such-task']);
    expect(notFound.code).toBe(1);
    expect(notFound.stderr).toMatch(/OP-NOT-FOUND.*request id/);
    const badKey = await vision(['scenes'], { VISION_API_KEY: 'wrong-key-0123456789' });
    expect([badKey.code, badKey.stderr]).toEqual([1, expect.stringContaining('OP-AUTH-REQUIRED')]);

    // cli-low may detect 1 image a day: 2 are refused as a whole.
    const two = [image('street_people_car_coco9891.jpg'), image('sheep_coco5992.jpg')];
    const exhausted = await vision(['detect', ...two], { VISION_API_KEY: LOW });
    expect([exhausted.code, exhausted.stderr]).toEqual([
      3,
      expect.stringContaining('OP-QUOTA-DAILY-EXHAUSTED'),
    ]);
  }, 120_000);

  it('task create --file --wait reaches succeeded with progress to 100 %; results --format jsonl prints every frame', async () => {
    const r = await vision([
      'task',
      'create',
      '--file',
      PARKING,
      '--scene',
      'person_vehicle',
      '--wait',
      '--json',
    ]);
    expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('upload 100%')]);
    const task = JSON.parse(r.stdout) as Task;
    expect(task.status).toBe('succeeded');
    // Plain lines (stdout is a pipe): upload steps, then one line per status, ending succeeded.
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^upload 0% /);
    expect(lines[lines.length - 1]).toBe(`task ${task.task_id} succeeded`);

    const client = new VisionClient({ baseUrl: stack.url, apiKey: KEY });
    const ids: string[] = [];
    for await (const f of client.results(task.task_id)) ids.push(f.frame_id);
    expect(ids.length).toBeGreaterThan(5);

    const jsonl = await vision(['results', task.task_id, '--format', 'jsonl', '--page-size', '4']);
    expect(jsonl.code).toBe(0);
    const printed = jsonl.stdout.trimEnd().split('\n');
    expect(printed.map((l) => (JSON.parse(l) as { frame_id: string }).frame_id)).toEqual(ids);

    const followed: string[] = [];
    for await (const f of client.followResults(task.task_id)) followed.push(f.frame_id);
    expect(followed).toEqual(ids);
    const live = await vision(['results', task.task_id, '--follow']);
    expect(live.code).toBe(0);
    expect(
      live.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { frame_id: string }).frame_id),
    ).toEqual(ids);

    const json = await vision(['results', task.task_id, '--format', 'json', '--min-score', '0.5']);
    const frames = JSON.parse(json.stdout) as { frame_id: string; objects_total?: number }[];
    expect(frames.map((f) => f.frame_id)).toEqual(ids);
    expect(frames.every((f) => typeof f.objects_total === 'number')).toBe(true);
    const csv = await vision(['results', task.task_id, '--format', 'csv']);
    const rows = csv.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^frame_id,frame_time_ms,/);
    expect(new Set(rows.slice(1).map((row) => row.split(',')[0]))).toEqual(new Set(ids));

    const listed = await vision(['tasks', '--status', 'succeeded', '--kind', 'video', '--json']);
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as Task).task_id),
    ).toEqual([task.task_id]);
    const stop = await vision(['task', 'stop', task.task_id]);
    expect([stop.code, stop.stderr]).toEqual([1, expect.stringContaining('OP-TASK-NOT-STOPPABLE')]);
    const got = await vision(['task', 'get', task.task_id]);
    expect(got.stdout).toMatch(/status\s+succeeded/);
  }, 240_000);

  it('on a terminal, task create --wait draws an upload bar and a spinner', async () => {
    // script(1) (util-linux) gives the command a pseudo-terminal, as a person at a shell has.
    const cmd = [
      process.execPath,
      BIN,
      'task',
      'create',
      '--file',
      PARKING,
      '--scene',
      'person_vehicle',
      '--wait',
    ];
    const screen = await new Promise<string>((resolve, reject) =>
      execFile(
        'script',
        ['-qec', cmd.map((a) => `'${a}'`).join(' '), '/dev/null'],
        {
          env: { PATH: process.env.PATH, VISION_BASE_URL: stack.url, VISION_API_KEY: KEY, TERM: 'xterm' },
          timeout: 240_000,
        },
        (err, stdout) => (err ? reject(err) : resolve(stdout)),
      ),
    );
    expect(screen).toMatch(/upload \[[█░]+\] 100%/);
    expect(screen).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] task \S+ (submitting|running)/);
    expect(screen).toMatch(/✔ task \S+ succeeded/);
    expect(screen).toMatch(/status\s+succeeded/);
  }, 240_000);

  it('detect --draw writes images whose drawn boxes sit where the returned boxes say', async () => {
    const inputs = [
      image('fishing_standin_people_in_boat_kodim14.png'),
      image('street_people_car_coco9891.jpg'),
    ];
    const out = path.join(tmp, 'drawn');
    const r = await vision(['detect', ...inputs, '--scene', 'person_vehicle', '--json', '--draw', out]);
    expect(r.code).toBe(0);
    const answer = JSON.parse(r.stdout) as ImageDetection;
    let checked = 0;
    for (const result of answer.results) {
      expect(result.status).toBe('succeeded');
      const objects = result.objects ?? [];
      expect(objects.length).toBeGreaterThan(0);
      const input = inputs[result.seq];
      const drawn = await sharp(path.join(out, path.basename(input)))
        .raw()
        .toBuffer({ resolveWithObject: true });
      const original = await sharp(input).raw().toBuffer({ resolveWithObject: true });
      const { width, height } = drawn.info;
      expect([width, height]).toEqual([original.info.width, original.info.height]);
      const px = (img: typeof drawn, x: number, y: number) => {
        const i = (Math.round(y) * width + Math.round(x)) * img.info.channels;
        return [img.data[i], img.data[i + 1], img.data[i + 2]];
      };
      const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]) <= 40);
      for (const o of objects) {
        const want = hex(colorFor(o.label));
        const left = (o.bbox.cx - o.bbox.width / 2) * width;
        const right = (o.bbox.cx + o.bbox.width / 2) * width;
        const bottom = (o.bbox.cy + o.bbox.height / 2) * height;
        const top = (o.bbox.cy - o.bbox.height / 2) * height;
        // Five points down each side and along the bottom, away from the label at the top.
        const points: [number, number][] = [];
        for (let k = 1; k <= 5; k++) {
          const y = top + ((bottom - top) * (k + 2)) / 8;
          points.push([left, y], [Math.min(right, width - 1), y]);
          points.push([left + ((right - left) * k) / 6, Math.min(bottom, height - 1)]);
        }
        // On the line (within one pixel: the stroke is centred on the box edge), the box's colour.
        const shows = (x: number, y: number, color: number[]) =>
          [-1, 0, 1].some((dx) => [-1, 0, 1].some((dy) => near(px(drawn, x + dx, y + dy), color)));
        const onLine = points.filter(([x, y]) => shows(x, y, want));
        // Where another box's line or label covers this one (boxes on the same image border), that
        // box's colour; nearly every point shows this box's own colour.
        const others = objects.map((other) => hex(colorFor(other.label)));
        expect(points.filter(([x, y]) => !others.some((c) => shows(x, y, c)))).toEqual([]);
        expect(onLine.length).toBeGreaterThanOrEqual(10);
        // And the drawing changed those pixels: the original was not already that colour there.
        expect(onLine.filter(([x, y]) => !near(px(original, x, y), want)).length).toBeGreaterThan(6);
        checked++;
      }
      // Far from every box and its label (drawn above its top-left corner) the picture is untouched.
      const inside = (x: number, y: number) =>
        objects.some((o) => {
          const [u, v, m] = [x / width, y / height, 0.03];
          const [left, top] = [o.bbox.cx - o.bbox.width / 2, o.bbox.cy - o.bbox.height / 2];
          const inBox =
            Math.abs(u - o.bbox.cx) <= o.bbox.width / 2 + m &&
            Math.abs(v - o.bbox.cy) <= o.bbox.height / 2 + m;
          const inLabel = u >= left - m && u <= left + 0.3 && v >= top - 0.12 && v <= top + 0.12;
          return inBox || inLabel;
        });
      let untouched = 0;
      for (let y = 2; y < height; y += 37)
        for (let x = 2; x < width; x += 41)
          if (!inside(x, y)) {
            expect(near(px(drawn, x, y), px(original, x, y))).toBe(true);
            untouched++;
          }
      expect(untouched).toBeGreaterThan(0);
    }
    expect(checked).toBeGreaterThan(3);
    expect(r.stderr).toContain('drew ');
  }, 120_000);

  it('scenes and quota print what the service answers, as lines or as JSON', async () => {
    const client = new VisionClient({ baseUrl: stack.url, apiKey: KEY });
    const scenes = await client.scenes();
    const plain = await vision(['scenes']);
    expect(plain.code).toBe(0);
    const lines = plain.stdout.trimEnd().split('\n');
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual(scenes.map((s) => s.scene_code));
    for (const [i, s] of scenes.entries()) {
      expect(lines[i]).toContain(s.enabled ? ' enabled ' : ' disabled ');
      expect(lines[i]).toContain(`labels: ${s.labels.join(', ')}`);
    }
    expect(JSON.parse((await vision(['scenes', '--json'])).stdout)).toEqual(scenes);

    // The figures once the calls above settled (a charge is reported just after its answer, a lease's unspent
    // units return once it is idle), so that the API and the CLI read the same ones.
    await settledQuota(stack, KEY);
    const quota = await client.quota();
    const q = await vision(['quota']);
    expect(q.code).toBe(0);
    expect(q.stdout).toMatch(
      new RegExp(
        `^video tasks +${quota.video_tasks.used} used, .* ${quota.video_tasks.remaining} of ${quota.video_tasks.limit} left`,
        'm',
      ),
    );
    expect(q.stdout).toMatch(
      new RegExp(
        `^images +${quota.images.used} used, .* ${quota.images.remaining} of ${quota.images.limit} left`,
        'm',
      ),
    );
    expect(JSON.parse((await vision(['quota', '--json'])).stdout)).toEqual(quota);
    // The flags instead of the environment.
    const flags = await vision(['--base-url', stack.url, '--api-key', KEY, 'quota', '--json'], {
      VISION_BASE_URL: undefined,
      VISION_API_KEY: undefined,
    });
    expect([flags.code, JSON.parse(flags.stdout)]).toEqual([0, quota]);
  }, 60_000);

  it('task create --url runs a live stream; task stop stops it; task wait reports it ended stopped (exit 4)', async () => {
    const created = await vision([
      'task',
      'create',
      '--url',
      `${media.url}/live/pedestrians.mov`,
      '--scene',
      'person_vehicle',
      '--json',
    ]);
    expect([created.code, created.stderr]).toEqual([0, '']);
    const task = JSON.parse(created.stdout) as Task;
    expect(['submitting', 'running']).toContain(task.status);
    const client = new VisionClient({ baseUrl: stack.url, apiKey: KEY });
    await client.waitForTask(task.task_id, { until: ['running'], timeoutMs: 60_000 });
    const stop = await vision(['task', 'stop', task.task_id, '--json']);
    expect(stop.code).toBe(0);
    expect(['stopping', 'stopped']).toContain((JSON.parse(stop.stdout) as Task).status);
    const waited = await vision(['task', 'wait', task.task_id, '--timeout', '60']);
    expect([waited.code, waited.stderr]).toEqual([
      4,
      expect.stringContaining(`task ${task.task_id} ended stopped`),
    ]);
  }, 120_000);
});

function hex(color: string): number[] {
  return [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16));
}
