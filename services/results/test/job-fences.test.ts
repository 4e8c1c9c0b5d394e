/**
 * A replica that lost a job (paused, cut off, slow to die) keeps publishing under its old epoch: results stores
 * none of its frames once a later owner was seen, across batches and restarts of the handler, and counts them.
 */
import { TOPICS, loadJobGrantKey, metrics } from '@vision/shared';
import { identityDir, jobGrantFor } from '../../../test/helpers/identity';
import { FrameWriter } from '../src/workers/frame-writer';
import { framesBatchHandler } from '../src/workers/ingest';
import { frameMessage, logger, startHarness, type Harness } from './helpers';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.close();
});

function handler() {
  return framesBatchHandler({
    frames: h.svc.frames,
    tasks: h.svc.tasks,
    writer: new FrameWriter(h.svc.frames, h.svc.tasks, h.clock),
    clock: h.clock,
    logger,
    grantKey: loadJobGrantKey(identityDir()),
    fences: h.svc.fences,
  });
}

let offset = 0;
const asBatch = (values: { key: string; value: object }[]) =>
  values.map((v) => ({ topic: TOPICS.frames, partition: 0, offset: String(offset++), headers: {}, ...v }));

const framed = (task: string, seq: number, epoch: number, label: string) => {
  const m = frameMessage(task, seq, [{ label, score: 0.9 }]);
  return { key: m.key, value: { ...m.value, epoch } };
};
const owner = (task: string, epoch: number) => ({
  key: task,
  value: { schema: 1, type: 'owner', task_id: task, epoch, grant: jobGrantFor(task) },
});

const storedLabels = async (task: string) =>
  (await h.svc.frames.page(task, -1, 100)).map((f) => f.objects[0]?.l);

it("drops a stale owner's frames once the new owner announced itself, in one batch and in the next", async () => {
  const refused = async () =>
    (await metrics.framesRefused.family.get()).values
      .filter((v) => v.labels.reason === 'stale_owner')
      .reduce((n, v) => n + v.value, 0);
  const before = await refused();
  const handle = handler();
  await handle(
    asBatch([
      framed('moved', 0, 1, 'old'),
      framed('moved', 1, 1, 'old'), // published before the take: kept
      owner('moved', 2),
      framed('moved', 2, 1, 'stale'), // the cut-off owner goes on
      framed('moved', 2, 2, 'new'),
    ]),
  );
  // A later batch, by a fresh handler (another replica of results): the fence was stored.
  await handler()(asBatch([framed('moved', 3, 2, 'new'), framed('moved', 4, 1, 'stale')]));
  expect(await storedLabels('moved')).toEqual(['old', 'old', 'new', 'new']);
  expect((await refused()) - before).toBe(2);
  expect((await h.svc.fences.read(['moved'])).get('moved')).toBe(2);
});
