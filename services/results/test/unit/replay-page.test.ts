/**
 * A replay page (use-cases/replay-analytics.ts) over frames in memory: it stops at max_frames or at its work
 * budget, whichever comes first, and hands back a cursor; it yields to the event loop while it works; a state too
 * large for a cursor makes the page shorter, never longer; the pages together are one replay.
 */
import { heaviestRules } from '../../../../test/helpers/places';
import { CursorCodec } from '../../src/domain/cursor';
import type { StoredFrame } from '../../src/domain/frames';
import { frameWork, workPerObject } from '../../src/domain/analytics/replay-budget';
import {
  replayPage,
  replayStart,
  type ReplayDeps,
  type ReplayOutcome,
} from '../../src/use-cases/replay-analytics';
import type { FramesStore } from '../../src/store/frames-store';
import { rules } from './analytics-fixtures';

const TASK = 'task-1';
const N = 300;
/** Five cars moving right across the picture, one track each. */
const FRAMES: StoredFrame[] = Array.from({ length: N }, (_, seq) => ({
  taskId: TASK,
  seq,
  frameId: `f${seq}`,
  frameTimeMs: seq * 200,
  width: 640,
  height: 480,
  objects: Array.from({ length: 5 }, (_, j) => ({
    l: 'car',
    s: 0.9,
    b: [((seq * 0.004 + j * 0.15) % 0.9) + 0.05, 0.3 + 0.1 * j, 0.08, 0.08] as [
      number,
      number,
      number,
      number,
    ],
    t: `c${j}-${Math.floor(seq / 100)}`,
  })),
}));
const store = {
  page: async (_t: string, after: number, limit: number) =>
    FRAMES.filter((f) => f.seq > after).slice(0, limit),
} as unknown as FramesStore;
const cursors = new CursorCodec('replay-test-secret-0123456789', 'replay');
const HEAVY = rules(heaviestRules(['car']) as never);

async function pages(deps: Partial<ReplayDeps>, maxFrames: number): Promise<ReplayOutcome[]> {
  const out: ReplayOutcome[] = [];
  let cursor: string | undefined;
  do {
    const start = replayStart(cursors, TASK, HEAVY, cursor);
    const page = await replayPage({ frames: store, cursors, pageSize: 64, ...deps }, TASK, HEAVY, start, {
      maxEvents: 10_000,
      maxFrames,
    });
    out.push(page);
    cursor = page.next_cursor;
  } while (cursor !== '' && out.length < N + 1);
  return out;
}
const eventsOf = (ps: ReplayOutcome[]) => ps.flatMap((p) => p.events).map((e) => JSON.stringify(e));

describe('a replay page', () => {
  it('ends at its work budget before max_frames, and the pages are one replay', async () => {
    const one = await pages({}, N);
    expect(one.map((p) => p.frames)).toEqual([N]);
    const perFrame = frameWork(workPerObject(HEAVY), 5);
    const budgeted = await pages({ workBudget: 40 * perFrame }, N);
    expect(budgeted.map((p) => p.frames)).toEqual([...Array<number>(7).fill(40), 20]);
    expect(eventsOf(budgeted)).toEqual(eventsOf(one));
    expect(budgeted[budgeted.length - 1].analytics).toEqual(one[0].analytics);
  });

  it('never evaluates more than max_frames, and a state too large for a cursor makes the page shorter', async () => {
    const one = await pages({}, N);
    const probe = await pages({}, 50);
    const longest = Math.max(...probe.slice(0, -1).map((p) => p.next_cursor.length));
    // A cursor limit that the state after 50 frames passes: the pages halve until theirs fit.
    const shorter = await pages({ maxCursor: longest - 1 }, 50);
    expect(Math.max(...shorter.map((p) => p.frames))).toBeLessThanOrEqual(50);
    expect(shorter.length).toBeGreaterThan(probe.length);
    for (const p of shorter) expect(p.next_cursor.length).toBeLessThan(longest);
    expect(eventsOf(shorter)).toEqual(eventsOf(one));
  });

  it('lets the event loop serve other work while it evaluates', async () => {
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    try {
      await pages({}, N);
    } finally {
      clearInterval(tick);
    }
    expect(turns).toBeGreaterThan(2);
  });
});
