/**
 * Two people walking close together across a line count two, end to end. The clip is six seconds of the plaza
 * clip (50.0-56.0 s, every frame at 10 fps): a couple walks across the lawn from the right, one just behind the
 * other. The detector sees them as one box until 53.6 s, as two for nine frames (one of them born beside the
 * other's track, their boxes overlapping), and as one again from 54.5 s, when the one behind hides the other.
 * - The one in front crosses a vertical segment at x = 175 px while both are seen apart (54.0 s).
 * - The one behind crosses it after the other is hidden (54.8 s).
 * So the line counts two only if the tracker starts a second track beside a confirmed one, keeps each on its own
 * person while their boxes overlap, and gives the one box left afterwards to the person it shows: a swap there
 * moves a track back across the segment and counts three, and a merge counts one. Nobody else enters the band.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { taskEvents } from '../helpers/places';
import { uploadVideoTask } from '../helpers/uploads';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';
import { until } from '../helpers/webhooks';

const KEY = 'e2e-close-pair-0123456789';
const PLAZA = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv.mp4');
const [WIDTH, HEIGHT] = [480, 360];
/** The lawn's part of a vertical line at x = 175 px, drawn downwards: its "in" side is the right. */
const LINE = { id: 'lawn', start: [175 / WIDTH, 200 / HEIGHT], end: [175 / WIDTH, 1], labels: ['person'] };

type Event = { kind: string; rule_id: string; direction: string; track_id: string; media_ms: number };

describe('a line crossed by two people walking close together', () => {
  let stack: TestStack;
  const work = mkdtempSync(path.join(tmpdir(), 'vision-close-pair-'));
  const clip = path.join(work, 'couple.mp4');

  beforeAll(async () => {
    // Re-encoded from 50.0 s, so that the cut starts at a key frame and keeps every frame.
    execFileSync('ffmpeg', ['-loglevel', 'error', '-y', '-ss', '50', '-i', PLAZA, '-t', '6', '-an', clip]);
    stack = await startStack({ keys: `${KEY}:pair`, env: { INFERENCE_SAMPLE_FPS: '10' } });
  }, 300_000);
  afterAll(async () => {
    await stack?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const api = (method: string, p: string) => stack.api(method, p, { key: KEY });

  it('counts two, one crossing for each of two tracks', async () => {
    const taskId = await uploadVideoTask(stack, KEY, clip, 'couple.mp4', { lines: JSON.stringify([LINE]) });

    // Every event, once the task ended and results evaluated its every frame.
    const { items } = await until(
      'every event',
      async () => {
        const r = await taskEvents<Event>(api, taskId);
        return r.ended ? r : undefined;
      },
      240_000,
    );
    const crossings = items
      .filter((e) => e.kind === 'line.crossed')
      .map((e) => ({ track: e.track_id, direction: e.direction, at_ms: e.media_ms }));
    const summary = await api('GET', `/v1/vision/tasks/${taskId}/analytics`);
    expect(summary.status).toBe(200);
    const line = (summary.body.rules as { id: string; in_total: number; out_total: number }[]).find(
      (r) => r.id === LINE.id,
    );
    // One verdict with every figure: a failure shows the crossings as they were.
    expect({ crossings, in: line?.in_total, out: line?.out_total }).toEqual({
      crossings: [
        { track: expect.any(String), direction: 'out', at_ms: expect.any(Number) },
        { track: expect.any(String), direction: 'out', at_ms: expect.any(Number) },
      ],
      in: 0,
      out: 2,
    });
    expect(crossings[0].track).not.toBe(crossings[1].track);
  }, 300_000);
});
