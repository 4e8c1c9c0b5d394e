/**
 * What ingest writes per frame, with and without rules (docs/PERFORMANCE.md, "Analytics storage"): the bytes of
 * write-ahead log the database writes while frames arrive five at a time, as a live stream's batches do, and
 * each batch is stored and evaluated. A step writes the frames' annotations, the events and the engine's state;
 * never the rules, so the largest rule set the API accepts costs per frame what a set of the same rules without
 * its long names and labels costs. The figures are printed.
 */
import { randomUUID } from 'node:crypto';
import { TOPICS } from '@vision/shared';
import { heaviestRules } from '../../../test/helpers/places';
import { frameMessage, type Obj } from './helpers';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';

jest.setTimeout(180_000);

let h: WebhookHarness;

beforeAll(async () => {
  h = await startWebhookHarness({ RESULTS_STREAM_POLL_MS: '20' });
});
afterAll(async () => {
  await h.close();
});

const FRAMES = 150;
const BATCH = 5;
const OBJECTS: Obj[] = ['car', 'person', 'car', 'truck', 'person'].map((label, i) => ({
  label,
  score: 0.9,
  track_id: String(i + 1),
}));

const knex = () => h.svc.db.knex;

async function walBytes(): Promise<bigint> {
  const r = (await knex().raw('SELECT pg_current_wal_insert_lsn()::text AS lsn')) as {
    rows: { lsn: string }[];
  };
  const [hi, lo] = r.rows[0].lsn.split('/').map((x) => BigInt(`0x${x}`));
  return (hi << 32n) + lo;
}

/** Bytes of log per frame while `FRAMES` frames of a task with `rules` (none: undefined) are stored and evaluated. */
async function bytesPerFrame(rules: object | undefined): Promise<number> {
  const taskId = `storage-${randomUUID()}`;
  if (rules) await h.taskEvent(taskId, 'running', { rules_version: 1, rules });
  else await h.taskEvent(taskId, 'running');
  await waitFor('the task is known', async () =>
    Boolean(await knex()('result_tasks').where({ task_id: taskId }).first()),
  );
  const before = await walBytes();
  for (let seq = 0; seq < FRAMES; seq += BATCH) {
    await h.bus.publish(
      TOPICS.frames,
      Array.from({ length: BATCH }, (_, i) => frameMessage(taskId, seq + i, OBJECTS)),
    );
    const last = seq + BATCH - 1;
    await waitFor(`frame ${last} stored${rules ? ' and evaluated' : ''}`, async () => {
      const q = knex()('result_frames').where({ task_id: taskId, seq: last });
      return Boolean(await (rules ? q.whereNotNull('zones') : q).first('seq'));
    });
  }
  return Number((await walBytes()) - before) / FRAMES;
}

/** The heaviest set's zones with short names and one label each: the same rules, a fraction of the bytes. */
function sameRulesFewBytes(): object {
  const { zones } = heaviestRules(['car']);
  return { zones: zones.map((z) => ({ ...z, name: String(z.id), labels: ['car'] })) };
}

/**
 * The heaviest set (64 KiB) with its long names and padding labels made of seeded random letters, so that the
 * database's compression cannot shrink a copy of it: the same rules and bytes as heaviestRules.
 */
function heaviestIncompressible(): object {
  let seed = 7;
  const letter = () => String.fromCharCode(97 + ((seed = (seed * 16807) % 2147483647) % 26));
  const scramble = (text: string, keep: number) =>
    text.slice(0, keep) + Array.from({ length: text.length - keep }, letter).join('');
  const { zones } = heaviestRules(['car']);
  return {
    zones: zones.map((z) => ({
      ...z,
      name: scramble(String(z.name), 2),
      labels: (z.labels as string[]).map((l) => (l === 'car' ? l : scramble(l, 8))),
    })),
  };
}

test('the bytes ingest writes per frame do not grow with the size of the rule set', async () => {
  const bare = await bytesPerFrame(undefined);
  const small = await bytesPerFrame({
    zones: [
      {
        id: 'bay',
        polygon: [
          [0.2, 0.2],
          [0.8, 0.2],
          [0.8, 0.8],
          [0.2, 0.8],
        ],
        labels: ['car'],
      },
    ],
    lines: [{ id: 'gate', start: [0.1, 0.5], end: [0.9, 0.5] }],
  });
  const few = await bytesPerFrame(sameRulesFewBytes());
  const heaviest = await bytesPerFrame(heaviestIncompressible());
  process.stdout.write(
    `bytes of log per frame (${OBJECTS.length} objects, ${BATCH} frames a batch): no rules ${bare.toFixed(0)}, ` +
      `one zone and one line ${small.toFixed(0)}, 20 coverage zones ${few.toFixed(0)}, ` +
      `the same 20 at the largest size (64 KiB) ${heaviest.toFixed(0)}\n`,
  );
  expect(heaviest).toBeLessThan(few * 1.25);
});
