/**
 * The ingest's evaluation of stored frames (AnalyticsRunner) works in slices, as a replay does: with the
 * costliest rule set the API accepts, a page of frames is never evaluated in one turn of the event loop; other
 * work runs between slices of at most SLICE_WORK units (replay-budget.ts). Counted in frames between two turns,
 * not timed.
 */
import { randomUUID } from 'node:crypto';
import { parseRules, TOPICS } from '@vision/shared';
import { heaviestRules } from '../../../test/helpers/places';
import { AnalyticsEngine } from '../src/domain/analytics';
import { frameWork, SLICE_WORK, workPerObject } from '../src/domain/analytics/replay-budget';
import { frameMessage, type Obj } from './helpers';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';

jest.setTimeout(120_000);

let h: WebhookHarness;

beforeAll(async () => {
  h = await startWebhookHarness({ RESULTS_STREAM_POLL_MS: '20' });
});
afterAll(async () => {
  await h.close();
});

const FRAMES = 400;
const OBJECTS: Obj[] = Array.from({ length: 5 }, (_, i) => ({
  label: 'car',
  score: 0.9,
  track_id: String(i),
}));

test('a page of stored frames under the heaviest rules is evaluated in slices that let the event loop turn', async () => {
  const rules = heaviestRules(['car']);
  const parsed = parseRules(rules);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const perSlice = Math.ceil(SLICE_WORK / frameWork(workPerObject(parsed.rules), OBJECTS.length));

  const taskId = `slices-${randomUUID()}`;
  // The frames are stored before the rules arrive: the whole page is evaluated in one step.
  await h.bus.publish(
    TOPICS.frames,
    Array.from({ length: FRAMES }, (_, seq) => frameMessage(taskId, seq, OBJECTS)),
  );
  await waitFor('the frames stored', async () =>
    Boolean(
      await h.svc.db
        .knex('result_frames')
        .where({ task_id: taskId, seq: FRAMES - 1 })
        .first(),
    ),
  );

  let sinceTurn = 0;
  let longest = 0;
  let evaluated = 0;
  const processFrame = AnalyticsEngine.prototype.processFrame;
  const spy = jest.spyOn(AnalyticsEngine.prototype, 'processFrame').mockImplementation(function (
    this: AnalyticsEngine,
    ...args
  ) {
    if (this.taskId === taskId) {
      sinceTurn++;
      evaluated++;
      longest = Math.max(longest, sinceTurn);
    }
    return processFrame.apply(this, args);
  });
  let turning = true;
  const turn = () => {
    sinceTurn = 0;
    if (turning) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    await h.taskEvent(taskId, 'running', { rules_version: 1, rules });
    await waitFor('every frame evaluated', async () =>
      Boolean(
        await h.svc.db
          .knex('result_frames')
          .where({ task_id: taskId, seq: FRAMES - 1 })
          .whereNotNull('zones')
          .first(),
      ),
    );
  } finally {
    turning = false;
    spy.mockRestore();
  }
  expect(evaluated).toBeGreaterThanOrEqual(FRAMES);
  expect(longest).toBeLessThanOrEqual(perSlice);
});
