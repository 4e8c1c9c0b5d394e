/**
 * A replay evaluates at most RESULTS_REPLAY_MAX_FRAMES stored frames per request (here 5); a longer task is
 * replayed page by page with `next_cursor`, and the pages together give exactly the task's own events.
 */
import { randomUUID } from 'node:crypto';
import { TOPICS } from '@vision/shared';
import { heaviestRules } from '../../../test/helpers/places';
import { endMessage, risingCarFrame } from './helpers';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';

let h: WebhookHarness;

beforeAll(async () => {
  h = await startWebhookHarness({ RESULTS_REPLAY_MAX_FRAMES: '5' });
});
afterAll(async () => {
  await h.close();
});

const ZONE = {
  id: 'upper',
  polygon: [
    [0.2, 0.1],
    [0.8, 0.1],
    [0.8, 0.4],
    [0.2, 0.4],
  ],
  labels: ['car'],
};
const LINE = { id: 'gate', start: [0.1, 0.5], end: [0.9, 0.5], labels: ['car'] };
const RULES = { zones: [ZONE], lines: [LINE] };

type Replay = {
  events: unknown[];
  events_total: number;
  frames: number;
  next_cursor: string;
  analytics: unknown;
};
const replay = async (body: Record<string, unknown>) =>
  h.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, { body });

let taskId = '';

describe('replay of a task longer than one request may read', () => {
  beforeAll(async () => {
    taskId = randomUUID();
    await h.taskEvent(taskId, 'running', { type: 'task.created', rules_version: 1, rules: RULES });
    await h.bus.publish(
      TOPICS.frames,
      Array.from({ length: 12 }, (_, i) => risingCarFrame(taskId, i)),
    );
    await h.bus.publish(TOPICS.frames, [endMessage(taskId, 12)]);
    await h.taskEvent(taskId, 'succeeded', { rules_version: 1, rules: RULES });
    await waitFor('every frame evaluated', async () => {
      const r = await h.api('GET', `/v1/vision/tasks/${taskId}/events?limit=100`);
      return r.body.next_cursor === '' && r.body.items.length === 3;
    });
  });

  it('reads at most the configured frames per request, and the pages together are the task’s events', async () => {
    const stored = (await h.api('GET', `/v1/vision/tasks/${taskId}/events?limit=100`)).body
      .items as unknown[];
    const summary = (await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body as unknown;
    const pages: Replay[] = [];
    let cursor: string | undefined;
    do {
      const r = await replay({ ...RULES, ...(cursor ? { cursor } : {}) });
      expect(r.status).toBe(200);
      pages.push(r.body as Replay);
      cursor = (r.body as Replay).next_cursor;
    } while (cursor !== '' && pages.length < 10);
    expect(pages.map((p) => p.frames)).toEqual([5, 5, 2]);
    expect(pages.map((p) => p.events_total)).toEqual([0, 2, 1]);
    expect(pages.flatMap((p) => p.events).map((e) => JSON.stringify(e))).toEqual(
      stored.map((e) => JSON.stringify(e)),
    );
    expect(pages[2].analytics).toEqual(summary);
    // A smaller page on request; a larger one than the service allows is refused.
    const small = await replay({ ...RULES, max_frames: 2 });
    expect([small.body.frames, small.body.next_cursor === '']).toEqual([2, false]);
    const big = await replay({ ...RULES, max_frames: 6 });
    expect(big.status).toBe(400);
    expect(big.body.error).toMatchObject({
      code: 'OP-TASK-REQUEST-INVALID',
      details: { reason: 'invalid_field', field: 'max_frames' },
    });
  });

  it('refuses a cursor of other rules, of another task, altered, or of another kind', async () => {
    const first = (await replay(RULES)).body as Replay;
    const refused = async (body: Record<string, unknown>) => {
      const r = await replay(body);
      expect(r.status).toBe(400);
      expect(r.body.error.details).toMatchObject({ reason: 'invalid_cursor', field: 'cursor' });
    };
    await refused({ lines: [LINE], cursor: first.next_cursor });
    await refused({ ...RULES, cursor: `${first.next_cursor.slice(0, -2)}AA` });
    const events = await h.api('GET', `/v1/vision/tasks/${taskId}/events?limit=1`);
    await refused({ ...RULES, cursor: events.body.next_cursor });
    const other = randomUUID();
    await h.taskEvent(other, 'running', { type: 'task.created', rules_version: 1, rules: RULES });
    await waitFor('the other task known', async () => (await h.svc.tasks.get(other)) !== undefined);
    const r = await h.api('POST', `/v1/vision/tasks/${other}/analytics/replay`, {
      body: { ...RULES, cursor: first.next_cursor },
    });
    expect(r.body.error.details).toMatchObject({ reason: 'invalid_cursor' });
    const empty = await replay({ ...RULES, cursor: '' });
    expect(empty.body.error.details).toMatchObject({ reason: 'invalid_field', field: 'cursor' });
  });
});

describe('replay with the largest rule set the API accepts', () => {
  const LARGEST = heaviestRules(['car']);
  const over = {
    zones: LARGEST.zones.map((z, i) =>
      i === 0 ? { ...z, labels: [...(z.labels as string[]), 'x'.repeat(200)] } : z,
    ),
  };

  it('refuses a set over RULE_LIMITS.maxBytes, and pages the largest one within max_frames, each body under 1 MiB', async () => {
    // One more label passes the limit: refused like any invalid set.
    const big = await replay(over);
    expect(big.status).toBe(400);
    expect(big.body.error.details).toMatchObject({ reason: 'invalid_field', field: 'zones' });
    const pages = async (maxFrames: number) => {
      const out: Replay[] = [];
      let cursor: string | undefined;
      do {
        const body = { ...LARGEST, max_frames: maxFrames, ...(cursor ? { cursor } : {}) };
        expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThan(1024 * 1024);
        const r = await replay(body);
        expect(r.status).toBe(200);
        out.push(r.body as Replay);
        cursor = (r.body as Replay).next_cursor;
      } while (cursor !== '' && out.length < 20);
      return out;
    };
    const small = await pages(2);
    expect(small.map((p) => p.frames)).toEqual([2, 2, 2, 2, 2, 2]);
    // The cursor carries the engine's state, not the rules.
    expect(small[0].next_cursor.length).toBeLessThan(4096);
    const large = await pages(5);
    expect(large.map((p) => p.frames)).toEqual([5, 5, 2]);
    const events = (ps: Replay[]) => ps.flatMap((p) => p.events).map((e) => JSON.stringify(e));
    expect(events(small)).toEqual(events(large));
    expect(small[small.length - 1].analytics).toEqual(large[large.length - 1].analytics);
  });
});
