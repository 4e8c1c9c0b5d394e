import { IDENTITY_HEADER, TOPICS } from '@vision/shared';
import type { PublicFrame } from '../src/domain/frames';
import { endMessage, publishFrames, publishTaskEvent, startHarness, waitFor, type Harness } from './helpers';
import { signFor } from '../../../test/helpers/identity';

let h: Harness;

beforeEach(async () => {
  h = await startHarness({
    RESULTS_STREAM_POLL_MS: '10',
    RESULTS_STREAM_HEARTBEAT_MS: '100',
    RESULTS_STREAM_MAX_MS: '60000',
  });
});

afterEach(async () => {
  await h.close();
});

interface SseEvent {
  event: string;
  id?: string;
  data?: string;
}

interface StreamRead {
  status: number;
  contentType: string | null;
  events: SseEvent[];
  heartbeats: number;
  /** True when the server closed the stream (not the reader). */
  closedByServer: boolean;
  body?: unknown;
}

let n = 0;
/**
 * Opens the stream and parses events (WHATWG framing) until the server ends it or `stopAfter` frames
 * arrived, then drops the connection as a vanishing client would.
 */
async function readStream(
  taskId: string,
  opts: { lastEventId?: string; query?: Record<string, string>; stopAfter?: number; subject?: string } = {},
): Promise<StreamRead> {
  n += 1;
  const qs = new URLSearchParams(opts.query ?? {}).toString();
  const ac = new AbortController();
  const target = `/v1/vision/tasks/${taskId}/results/stream${qs ? `?${qs}` : ''}`;
  const headers: Record<string, string> = {
    [IDENTITY_HEADER]: signFor({ subject: opts.subject ?? 'alice', requestId: `s-${n}` }, 'results', {
      method: 'GET',
      target,
    }),
  };
  if (opts.lastEventId !== undefined) headers['Last-Event-ID'] = opts.lastEventId;
  const res = await fetch(`${h.svc.url}${target}`, {
    headers,
    signal: ac.signal,
  });
  const out: StreamRead = {
    status: res.status,
    contentType: res.headers.get('content-type'),
    events: [],
    heartbeats: 0,
    closedByServer: false,
  };
  if (!out.contentType?.startsWith('text/event-stream')) {
    out.body = await res.json();
    return out;
  }
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let frames = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      out.closedByServer = true;
      return out;
    }
    buf += decoder.decode(value, { stream: true });
    let at: number;
    while ((at = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, at);
      buf = buf.slice(at + 2);
      const ev: SseEvent = { event: 'message' };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) out.heartbeats += 1;
        else if (line.startsWith('event: ')) ev.event = line.slice(7);
        else if (line.startsWith('id: ')) ev.id = line.slice(4);
        else if (line.startsWith('data: ')) ev.data = line.slice(6);
      }
      if (ev.data === undefined) continue;
      out.events.push(ev);
      if (ev.event === 'frame') frames += 1;
      if (opts.stopAfter !== undefined && frames >= opts.stopAfter) {
        ac.abort();
        await reader.cancel().catch(() => undefined);
        return out;
      }
    }
  }
}

const frameIds = (r: StreamRead) =>
  r.events.filter((e) => e.event === 'frame').map((e) => (JSON.parse(e.data!) as PublicFrame).frame_id);

describe('results stream', () => {
  it('sends every stored frame as an event whose id is the cursor, then `end` when the task ends', async () => {
    await publishTaskEvent(h.bus, 'done');
    await publishFrames(h.bus, 'done', 0, 250);
    await h.bus.publish(TOPICS.frames, [endMessage('done', 250)]);
    await waitFor('end marker', async () => (await h.svc.tasks.get('done'))?.end !== undefined);

    const r = await readStream('done', { query: { limit: '100' } });
    expect(r.status).toBe(200);
    expect(r.closedByServer).toBe(true);
    expect(frameIds(r)).toEqual(Array.from({ length: 250 }, (_, i) => `done-f${i}`));
    expect(r.events[r.events.length - 1].event).toBe('end');
    // The id of a frame is the page endpoint's cursor: reading from it gives the frames after it.
    const page = await h.get('done', 'alice', { cursor: r.events[99].id!, limit: '1' });
    expect(page.body.items.map((f) => f.frame_id)).toEqual(['done-f100']);
  });

  it('a reader that drops the connection at random while frames arrive gets every frame exactly once', async () => {
    await publishTaskEvent(h.bus, 'live');
    const total = 600;
    const producing = (async () => {
      for (let seq = 0; seq < total; seq += 20) {
        await publishFrames(h.bus, 'live', seq, seq + 20);
        await new Promise((r) => setTimeout(r, 5));
      }
      await h.bus.publish(TOPICS.frames, [endMessage('live', total)]);
    })();

    const seen: string[] = [];
    let lastEventId: string | undefined;
    let ended = false;
    let reconnects = 0;
    while (!ended) {
      const stopAfter = 1 + Math.floor(Math.random() * 80);
      const r = await readStream('live', { lastEventId, stopAfter });
      expect(r.status).toBe(200);
      seen.push(...frameIds(r));
      const ids = r.events.filter((e) => e.id !== undefined);
      if (ids.length > 0) lastEventId = ids[ids.length - 1].id;
      ended = r.events.some((e) => e.event === 'end');
      reconnects += 1;
      expect(reconnects).toBeLessThan(1000);
    }
    await producing;
    expect(reconnects).toBeGreaterThan(2);
    expect(seen).toEqual(Array.from({ length: total }, (_, i) => `live-f${i}`));
  });

  it('applies min_score as the page endpoint does and sends heartbeats while no frame arrives', async () => {
    await publishTaskEvent(h.bus, 'quiet');
    await publishFrames(h.bus, 'quiet', 0, 3, [
      { label: 'person', score: 0.95 },
      { label: 'car', score: 0.5 },
    ]);
    await waitFor('frames', async () => (await h.svc.frames.count('quiet')) === 3);
    const reading = readStream('quiet', { query: { min_score: '0.9' }, stopAfter: 4 });
    await new Promise((r) => setTimeout(r, 400));
    await publishFrames(h.bus, 'quiet', 3, 4, [{ label: 'person', score: 0.99 }]);
    const r = await reading;
    expect(r.heartbeats).toBeGreaterThanOrEqual(2);
    const frames = r.events.filter((e) => e.event === 'frame').map((e) => JSON.parse(e.data!) as PublicFrame);
    expect(frames).toHaveLength(4);
    expect(frames[0].objects.map((o) => o.label)).toEqual(['person']);
    expect(frames[0].objects_total).toBe(2);
  });

  it('answers a JSON error, not a stream, for a bad cursor, an unknown task or another subject', async () => {
    await publishTaskEvent(h.bus, 'mine');
    await waitFor('task', async () => (await h.svc.tasks.get('mine'))?.meta !== undefined);
    const bad = await readStream('mine', { lastEventId: 'garbage' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'OP-TASK-REQUEST-INVALID' } });
    expect((await readStream('nope')).status).toBe(404);
    expect((await readStream('mine', { subject: 'mallory' })).status).toBe(404);
    expect((await readStream('mine', { query: { min_score: '2' } })).status).toBe(400);
  });
});

describe('results stream cursor and Last-Event-ID', () => {
  const invalid = { error: { code: 'OP-TASK-REQUEST-INVALID', details: { reason: 'invalid_cursor' } } };

  beforeEach(async () => {
    await publishTaskEvent(h.bus, 'six');
    await publishFrames(h.bus, 'six', 0, 6);
    await h.bus.publish(TOPICS.frames, [endMessage('six', 6)]);
    await waitFor('end marker', async () => (await h.svc.tasks.get('six'))?.end !== undefined);
  });

  it('refuses a cursor query the API did not give out with 400, whatever the Last-Event-ID header', async () => {
    const given = (await readStream('six')).events[1].id!;
    for (const lastEventId of [undefined, '', ' ', given, 'garbage']) {
      const r = await readStream('six', { lastEventId, query: { cursor: '\u0084' } });
      expect({ lastEventId, status: r.status }).toEqual({ lastEventId, status: 400 });
      expect(r.body).toMatchObject(invalid);
    }
    const other = await readStream('six', { lastEventId: given, query: { cursor: 'abc.def' } });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject(invalid);
  });

  it('ignores an empty Last-Event-ID (the cursor query applies); a non-empty one wins over the query', async () => {
    const ids = (await readStream('six')).events.map((e) => e.id);
    const fromQuery = await readStream('six', { lastEventId: '', query: { cursor: ids[1]! } });
    expect(fromQuery.status).toBe(200);
    expect(frameIds(fromQuery)).toEqual(['six-f2', 'six-f3', 'six-f4', 'six-f5']);
    const fromStart = await readStream('six', { lastEventId: '' });
    expect(frameIds(fromStart)).toHaveLength(6);
    const fromHeader = await readStream('six', { lastEventId: ids[3], query: { cursor: ids[1]! } });
    expect(frameIds(fromHeader)).toEqual(['six-f4', 'six-f5']);
  });
});

describe('results stream duration', () => {
  it('closes a stream at its maximum duration without `end`; Last-Event-ID resumes after the last frame', async () => {
    await h.close();
    h = await startHarness({ RESULTS_STREAM_POLL_MS: '10', RESULTS_STREAM_MAX_MS: '1000' });
    await publishTaskEvent(h.bus, 'long');
    await publishFrames(h.bus, 'long', 0, 5);
    await waitFor('frames', async () => (await h.svc.frames.count('long')) === 5);
    const first = await readStream('long');
    expect(first.closedByServer).toBe(true);
    expect(first.events.some((e) => e.event === 'end')).toBe(false);
    expect(frameIds(first)).toHaveLength(5);
    await publishFrames(h.bus, 'long', 5, 7);
    await h.bus.publish(TOPICS.frames, [endMessage('long', 7)]);
    const again = await readStream('long', { lastEventId: first.events[4].id });
    expect(frameIds(again)).toEqual(['long-f5', 'long-f6']);
    expect(again.events[again.events.length - 1].event).toBe('end');
  });
});
