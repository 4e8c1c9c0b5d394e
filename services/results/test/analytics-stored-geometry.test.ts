import { randomUUID } from 'node:crypto';
import { TOPICS } from '@vision/shared';
import type { EngineSnapshot } from '../src/domain/analytics';
import { AnalyticsStore } from '../src/store/analytics-store';
import { jobGrantFor } from '../../../test/helpers/identity';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';

/**
 * Lines are decided on the frame's pixels; a task whose evaluation was stored before that (its snapshot names
 * no geometry) keeps the normalized geometry, so that its creation rules replayed still give its stored events
 * (docs/ANALYTICS.md, "Tasks evaluated before").
 */
let h: WebhookHarness;

beforeAll(async () => {
  h = await startWebhookHarness({ RESULTS_STREAM_POLL_MS: '20' });
});
afterAll(async () => {
  await h.close();
});
afterEach(() => jest.restoreAllMocks());

// A diagonal on a 480 x 360 frame; a person's feet from (0.6, 0.7) to (0.6, 0.35). On the image, (0.6, 0.35) is
// within the segment's strip and the person crosses it "in"; in normalized units it is outside the strip.
const RULES = { lines: [{ id: 'diag', start: [0.5, 0.5], end: [0.9, 0.9] }] };
const FEET = [0.7, 0.35];

function frame(taskId: string, seq: number) {
  return {
    key: taskId,
    value: {
      schema: 1,
      type: 'frame',
      task_id: taskId,
      seq,
      frame_id: `f${seq}`,
      frame_time_ms: 1000 * seq,
      image: { width: 480, height: 360 },
      objects: [
        {
          label: 'person',
          score: 0.9,
          track_id: '1',
          bbox: { format: 'cxcywh_normalized', cx: 0.6, cy: FEET[seq] - 0.05, width: 0.04, height: 0.1 },
        },
      ],
      grant: jobGrantFor(taskId),
    },
  };
}

/** Creates the task with RULES, stores its two frames, and waits for both to be evaluated. */
async function evaluated(taskId: string): Promise<{ stored: string[]; inTotal: number }> {
  await h.taskEvent(taskId, 'running', { type: 'task.created', rules_version: 1, rules: RULES });
  await h.bus.publish(TOPICS.frames, [frame(taskId, 0), frame(taskId, 1)]);
  let summary: Record<string, unknown> = {};
  await waitFor('both frames evaluated', async () => {
    summary = (await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body as Record<string, unknown>;
    return summary.as_of_seq === 1;
  });
  const events = await h.api('GET', `/v1/vision/tasks/${taskId}/events?limit=100`);
  const stored = (events.body.items as unknown[]).map((e) => JSON.stringify(e));
  const [line] = summary.rules as { in_total: number }[];
  return { stored, inTotal: line.in_total };
}

async function replayed(taskId: string): Promise<string[]> {
  const replay = await h.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, { body: RULES });
  expect(replay.status).toBe(200);
  return (replay.body.events as unknown[]).map((e) => JSON.stringify(e));
}

describe('the geometry a task was evaluated under', () => {
  it('a task evaluated now counts on the image, and its replay gives its stored events', async () => {
    const taskId = randomUUID();
    const { stored, inTotal } = await evaluated(taskId);
    expect(inTotal).toBe(1);
    expect(stored).toHaveLength(1);
    expect(JSON.parse(stored[0])).toMatchObject({ kind: 'line.crossed', direction: 'in', seq: 1 });
    expect(await replayed(taskId)).toEqual(stored);
  });

  it('a task whose evaluation was stored before keeps the normalized geometry, replays included', async () => {
    const taskId = randomUUID();
    // The record as the earlier version wrote it: a snapshot without `geometry`.
    const create = AnalyticsStore.prototype.create;
    jest.spyOn(AnalyticsStore.prototype, 'create').mockImplementation(function (
      this: AnalyticsStore,
      id,
      version,
      digest,
      _snapshot,
      now,
    ) {
      const legacy: EngineSnapshot = {
        format: 1,
        task_id: id,
        rules_version: version,
        as_of_seq: null,
        media_ms: null,
        versions: [],
        zones: [],
        lines: [],
      };
      return create.call(this, id, version, digest, legacy, now);
    });
    const { stored, inTotal } = await evaluated(taskId);
    expect(inTotal).toBe(0);
    expect(stored).toEqual([]);
    expect(await replayed(taskId)).toEqual(stored);
    // Replays with other rules run under the task's geometry too: the same line drawn again counts nothing.
    const other = await h.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, {
      body: { lines: [{ ...RULES.lines[0], id: 'again' }] },
    });
    expect(other.body.events_total).toBe(0);
  });
});
