/**
 * Result frames of a task with zones are served evaluated: a client that reads a task's results the moment it has
 * ended, paging to the end as docs/RESULTS.md teaches, and one that follows the live stream from the start, find
 * every frame with its zones, counted as an exact point-in-polygon test counts them. The evaluation really lags:
 * frames arrive in batches of Kafka's size (stored, then evaluated), each with many objects, while the process is
 * kept busy by a burner that takes most of every turn of its event loop.
 */
import { IDENTITY_HEADER, InProcessBus, TOPICS } from '@vision/shared';
import type { PublicFrame } from '../src/domain/frames';
import { start, type RunningResults } from '../src/index';
import { endMessage, logger, publishTaskEvent, TasksStub, waitFor } from './helpers';
import { identityDir, jobGrantFor, signFor } from '../../../test/helpers/identity';

jest.setTimeout(180_000);

const TASK = 'evaluated-on-read';
const FRAMES = 1000;
const OBJECTS = 12;
/** The burner's bursts: one every 2 × BURN_MS, so that it takes about half of the process's time. */
const BURN_MS = 2;
const WIDTH = 640;
const HEIGHT = 360;
const BOX_H = 0.1;

/** Two rectangles; every anchor of the frames below lies at least 0.01 (of the image) from their edges. */
const ZONES = [
  { id: 'west', rect: [0.1, 0.2, 0.5, 0.8] },
  { id: 'east', rect: [0.6, 0.4, 0.9, 1.0] },
] as const;
const RULES = {
  zones: ZONES.map(({ id, rect: [x0, y0, x1, y1] }) => ({
    id,
    labels: ['person'],
    polygon: [
      [x0, y0],
      [x1, y0],
      [x1, y1],
      [x0, y1],
    ],
  })),
  lines: [],
};

/**
 * Object i of frame `seq`: its box centre. Its anchor (the bottom centre) lies on a grid of 0.02, 0.01 off the
 * zones' edges, and its box inside the image; it moves every tenth frame.
 */
function place(seq: number, i: number): { cx: number; cy: number } {
  const step = Math.floor(seq / 10);
  const col = (i * 7 + step) % 49;
  const row = (i * 3 + step * 5) % 44;
  return { cx: 0.01 + 0.02 * col, cy: 0.11 + 0.02 * row - BOX_H / 2 };
}

/** The zones object i of frame `seq` is in: its bottom-centre anchor, in pixels, in the rectangle in pixels. */
function expectedZones(seq: number, i: number): string[] {
  const { cx, cy } = place(seq, i);
  const x = cx * WIDTH;
  const y = (cy + BOX_H / 2) * HEIGHT;
  return ZONES.filter(
    ({ rect: [x0, y0, x1, y1] }) =>
      x >= x0 * WIDTH && x <= x1 * WIDTH && y >= y0 * HEIGHT && y <= y1 * HEIGHT,
  ).map((z) => z.id);
}

function frame(seq: number) {
  return {
    key: TASK,
    value: {
      schema: 1,
      type: 'frame',
      event_id: `${TASK}:${seq}`,
      task_id: TASK,
      seq,
      frame_id: `f${seq}`,
      frame_time_ms: 200 * seq,
      image: { width: WIDTH, height: HEIGHT },
      objects: Array.from({ length: OBJECTS }, (_, i) => ({
        label: 'person',
        score: 0.9,
        track_id: String(i),
        bbox: { format: 'cxcywh_normalized', ...place(seq, i), width: 0.02, height: BOX_H },
      })),
      lower_bound: 0.3,
      grant: jobGrantFor(TASK),
    },
  };
}

/**
 * What a reader got: how many frames, how many of them carry no zones, and how many carry zones that are not those
 * of an exact point-in-polygon test on their objects' anchors.
 */
function check(items: PublicFrame[]): {
  frames: number;
  ordered: boolean;
  unevaluated: number;
  miscounted: number;
} {
  const ordered = items.every((f, i) => f.frame_id === `f${i}`);
  let unevaluated = 0;
  let miscounted = 0;
  for (const f of items) {
    if (!f.zones) {
      unevaluated += 1;
      continue;
    }
    const seq = Number(f.frame_id.slice(1));
    const counted = Object.fromEntries(ZONES.map((z) => [z.id, 0]));
    let wrong = f.objects.length !== OBJECTS;
    for (let i = 0; i < OBJECTS && !wrong; i++) {
      const want = expectedZones(seq, i);
      wrong = JSON.stringify(f.objects[i].zones) !== JSON.stringify(want);
      for (const id of want) counted[id] += 1;
    }
    if (wrong || ZONES.some((z) => (f.zones![z.id]?.counts.person ?? 0) !== counted[z.id])) miscounted += 1;
  }
  return { frames: items.length, ordered, unevaluated, miscounted };
}

let bus: InProcessBus;
let tasksStub: TasksStub;
let svc: RunningResults;
let n = 0;

function signed(target: string): Record<string, string> {
  n += 1;
  return {
    [IDENTITY_HEADER]: signFor({ subject: 'alice', requestId: `e-${n}` }, 'results', {
      method: 'GET',
      target,
    }),
  };
}

/** Every page from the first frame until `next_cursor` is empty, as docs/RESULTS.md's loop reads them. */
async function pageToTheEnd(limit: number): Promise<PublicFrame[]> {
  const items: PublicFrame[] = [];
  let cursor = '';
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const target = `/v1/vision/tasks/${TASK}/results?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await fetch(`${svc.url}${target}`, { headers: signed(target) });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: PublicFrame[]; next_cursor: string };
    items.push(...page.items);
    if (page.next_cursor === '') return items;
    cursor = page.next_cursor;
    if (page.items.length === 0) await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no end of data after ${items.length} frames`);
}

/** The frames of the live stream from the first one until its `end`. */
async function followStream(signal: AbortSignal): Promise<PublicFrame[]> {
  const target = `/v1/vision/tasks/${TASK}/results/stream?limit=100`;
  const res = await fetch(`${svc.url}${target}`, { headers: signed(target), signal });
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const frames: PublicFrame[] = [];
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body!) {
    buf += decoder.decode(chunk as Uint8Array, { stream: true });
    let at: number;
    while ((at = buf.indexOf('\n\n')) >= 0) {
      const lines = buf.slice(0, at).split('\n');
      buf = buf.slice(at + 2);
      const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
      if (lines.includes('event: end')) return frames;
      if (lines.includes('event: frame') && data !== undefined) frames.push(JSON.parse(data) as PublicFrame);
    }
  }
  throw new Error('the stream closed without its end');
}

beforeAll(async () => {
  // The task's frames and its end come in one batch, as a Kafka consumer polls them: stored, then evaluated.
  bus = new InProcessBus({ logger, maxBatch: FRAMES + 1 });
  tasksStub = new TasksStub();
  await tasksStub.start();
  svc = await start({
    env: {
      VISION_IDENTITY_DIR: identityDir(),
      VISION_DATA_DIR: ':memory:',
      TASKS_URL: tasksStub.url,
      RESULTS_JANITOR_INTERVAL_MS: '0',
      RESULTS_STREAM_POLL_MS: '20',
      LOG_LEVEL: 'silent',
    },
    bus,
    logger,
    port: 0,
  });
});
afterAll(async () => {
  await svc.close();
  await bus.close();
  await tasksStub.close();
});

/** The task's status, with its rules, as tasks publishes it. */
const taskEvent = (status: string) =>
  publishTaskEvent(bus, TASK, {
    status,
    result_expires_at: '2030-01-01T00:00:00.000Z',
    occurred_at: new Date().toISOString(),
    rules: RULES,
  });

test('results read while a task with zones runs and the moment it ends hold every frame evaluated, on a busy process', async () => {
  await taskEvent('running');
  await waitFor('the rules known', async () =>
    Boolean(await svc.db.knex('analytics_tasks').where({ task_id: TASK }).first()),
  );

  // Bursts of BURN_MS of work, one every 2 × BURN_MS: the process, the evaluation included, runs at about half
  // its speed, as on a loaded machine.
  const burner = setInterval(() => {
    const until = performance.now() + BURN_MS;
    while (performance.now() < until);
  }, 2 * BURN_MS);
  const stream = new AbortController();
  try {
    // Two readers follow the task from its start: the documented page loop and the live stream.
    const paging = pageToTheEnd(100);
    const streaming = followStream(stream.signal);
    await bus.publish(TOPICS.frames, [
      ...Array.from({ length: FRAMES }, (_, seq) => frame(seq)),
      endMessage(TASK, FRAMES),
    ]);
    await taskEvent('succeeded');
    await waitFor('the task ended', async () => {
      const t = await svc.tasks.get(TASK);
      return t?.meta?.status === 'succeeded' && t.end !== undefined;
    });
    // A third reads all of it the moment the task has ended.
    const atTheEnd = await pageToTheEnd(100);

    const all = { frames: FRAMES, ordered: true, unevaluated: 0, miscounted: 0 };
    expect({
      paging: check(await paging),
      streaming: check(await streaming),
      atTheEnd: check(atTheEnd),
    }).toEqual({ paging: all, streaming: all, atTheEnd: all });
  } finally {
    clearInterval(burner);
    stream.abort();
  }
});
