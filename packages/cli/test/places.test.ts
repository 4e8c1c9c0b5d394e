/**
 * `vision rules`, `analytics`, `events` (and their pictures) and the rules of `task create` and `detect`, spawned
 * against the standalone stack.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { CURB, LEFT_LANE, PARKING_LOT } from '../../../test/helpers/places';
import { MEDIA, startStack, type TestStack } from '../../../test/helpers/stack';
import { runVision } from './support/vision-process';

const KEY = 'cli-places-key-0123456789';
const PARKING = PARKING_LOT;
/** 80 s of video: a task that is still running while a test changes its rules. */
const LONG_CLIP = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv.mp4');
const LANE = LEFT_LANE;

describe('zones and lines through the vision command', () => {
  let stack: TestStack;
  let tmp: string;
  const vision = (args: string[]) => runVision(args, { VISION_BASE_URL: stack.url, VISION_API_KEY: KEY });
  const file = (name: string, value: unknown) => {
    const p = path.join(tmp, name);
    writeFileSync(p, typeof value === 'string' ? value : JSON.stringify(value));
    return p;
  };

  beforeAll(async () => {
    if (!existsSync(path.resolve(__dirname, '../dist/main.js')))
      throw new Error('packages/cli is not built: run `npm run build` first');
    stack = await startStack({ keys: `${KEY}:cli-places`, env: { TASKS_POLL_INTERVAL_MS: '300' } });
    tmp = mkdtempSync(path.join(os.tmpdir(), 'vision-cli-places-'));
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('task create --rules, then events (pages and --follow alike), analytics, rules get and rules set', async () => {
    const rules = file('rules.json', { zones: [LANE], lines: [CURB] });
    /** `task create --file CLIP --rules ...`: the new task's id. */
    const create = async (clip: string) => {
      const created = await vision([
        'task',
        'create',
        '--file',
        clip,
        '--scene',
        'person_vehicle',
        '--rules',
        rules,
        '--json',
      ]);
      expect(created.code).toBe(0);
      return (JSON.parse(created.stdout) as { task_id: string }).task_id;
    };
    const taskId = await create(PARKING);

    const [followed, paged] = await Promise.all([
      vision(['events', taskId, '--follow', '--json']),
      vision(['events', taskId, '--json', '--page-size', '3']),
    ]);
    expect([followed.code, paged.code]).toEqual([0, 0]);
    const events = paged.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; kind: string; direction?: string; has_snapshot: boolean });
    expect(followed.stdout).toBe(paged.stdout);
    const crossingsIn = events.filter((e) => e.kind === 'line.crossed' && e.direction === 'in').length;
    expect(crossingsIn).toBeGreaterThanOrEqual(1);
    const text = await vision(['events', taskId]);
    expect(text.stdout.trim().split('\n')).toHaveLength(events.length);
    expect(text.stdout).toContain('line.crossed');

    // Each event's picture, saved as DIR/<event id>.jpg: a JPEG of the event's frame.
    const dir = path.join(tmp, 'snapshots');
    const saved = await vision(['events', '--task', taskId, '--snapshots', dir]);
    expect(saved.code).toBe(0);
    const pictured = events.filter((e) => e.has_snapshot);
    expect(pictured.length).toBeGreaterThanOrEqual(crossingsIn);
    expect(readdirSync(dir).sort()).toEqual(pictured.map((e) => `${e.id}.jpg`).sort());
    for (const e of pictured)
      expect((await sharp(readFileSync(path.join(dir, `${e.id}.jpg`))).metadata()).format).toBe('jpeg');
    expect(saved.stderr).toContain(`${pictured.length} snapshots in ${dir}`);

    const analytics = await vision(['analytics', taskId, '--json']);
    const a = JSON.parse(analytics.stdout) as { rules: { id: string; in_total?: number }[] };
    expect(a.rules.find((r) => r.id === 'curb')?.in_total).toBe(crossingsIn);
    expect((await vision(['analytics', taskId])).stdout).toContain(`line curb  in ${crossingsIn}`);

    const got = await vision(['rules', 'get', taskId]);
    expect(got.stdout).toContain('rules version 1');
    expect(got.stdout).toContain('zone lane');
    // The task has ended: its rules are final, and the command says so.
    const refused = await vision([
      'rules',
      'set',
      taskId,
      file('lines-only.json', { lines: [CURB] }),
      '--json',
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('OP-TASK-ENDED');
    // A task still running takes them as a new version.
    const runningId = await create(LONG_CLIP);
    const set = await vision([
      'rules',
      'set',
      runningId,
      file('lines-only.json', { lines: [CURB] }),
      '--json',
    ]);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ rules_version: 2, zones: [], lines: [{ id: 'curb' }] });
    expect((await vision(['task', 'stop', runningId])).code).toBe(0);
  }, 300_000);

  it('answers --help for the rules, analytics and events commands', async () => {
    for (const cmd of [['rules'], ['rules', 'get'], ['rules', 'set'], ['analytics'], ['events']]) {
      const r = await vision([...cmd, '--help']);
      expect([cmd.join(' '), r.code]).toEqual([cmd.join(' '), 0]);
      expect(r.stdout).toContain(`Usage: vision ${cmd.join(' ')}`);
    }
  }, 60_000);

  it('detect --zones prints the counts per zone', async () => {
    const zones = file('zones.json', {
      zones: [
        {
          id: 'frame',
          polygon: [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
          ],
        },
      ],
    });
    const r = await vision([
      'detect',
      path.join(MEDIA, 'images', 'street_bus_pedestrians_coco2006.jpg'),
      '--scene',
      'person_vehicle',
      '--zones',
      zones,
      '--json',
    ]);
    expect(r.code).toBe(0);
    const result = (
      JSON.parse(r.stdout) as {
        results: { objects: unknown[]; zones: { counts: Record<string, number> }[] }[];
      }
    ).results[0];
    expect(result.zones[0].counts['*']).toBe(result.objects.length);
  }, 60_000);

  it('a rules file that is not a rule set is a usage error (2); rules the service refuses are an API error (1)', async () => {
    const bad = await vision([
      'task',
      'create',
      '--file',
      PARKING,
      '--scene',
      'person_vehicle',
      '--rules',
      file('bad.json', '{nope'),
    ]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('is not JSON')]);
    const list = await vision(['rules', 'set', 'x', file('list.json', [LANE])]);
    expect(list.code).toBe(2);
    const bowtie = file('bowtie.json', {
      zones: [
        {
          id: 'z',
          polygon: [
            [0, 0],
            [1, 1],
            [1, 0],
            [0, 1],
          ],
        },
      ],
    });
    const refused = await vision([
      'task',
      'create',
      '--file',
      PARKING,
      '--scene',
      'person_vehicle',
      '--rules',
      bowtie,
    ]);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining('OP-TASK-REQUEST-INVALID')]);
    expect((await vision(['rules', 'get', 'no-such-task'])).code).toBe(1);
  }, 120_000);
});
