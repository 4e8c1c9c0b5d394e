/**
 * What a user does, through the Gateway API route that Traefik serves on the real node (scripts/test-cluster.sh):
 * an API key made the documented way (the keys CLI in the gateway's pod), the scenes, an image detection, a file
 * video task to its end with its frames, the results stream flowing unbuffered with its heartbeats on time, a live
 * RTSP task from a camera on the host, zones and lines with their events, a signed webhook delivered to a receiver
 * on the host, and one image detection's trace in the stack's Jaeger across the gateway, images and detection pods.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { readStackEnv } from '../../scripts/distributed/stack-servers';
import { Receiver } from '../../services/results/test/webhook-receiver';
import { newTraceparent, waitForTrace } from '../helpers/observability';
import { CURB, LEFT_LANE, PARKING_LOT } from '../helpers/places';
import { streamServer, type StreamServer } from '../helpers/stream-servers';
import { eventually, gatewayUrl, get, hostIp, installRelease, MEDIA, type Release } from './node-cluster';
import { eventArrivals, heartbeatTimes } from './stream-beats';
import { hostServers } from './host-servers';

jest.setTimeout(900_000);

let release: Release;
let key = '';
// The camera of the live task and the webhook receiver: on the host's end of the node's network, where pods reach.
let camera: StreamServer;
let hooks: Receiver;
const api = (p: string, init: RequestInit = {}) =>
  fetch(`${gatewayUrl()}${p}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string> | undefined) },
    signal: AbortSignal.timeout(120_000),
  });
const json = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
  body: JSON.stringify(body),
});

beforeAll(async () => {
  camera = await streamServer('rtsp', { address: hostIp() });
  hooks = await new Receiver().start('/hook', hostIp());
  release = await installRelease(
    'journey',
    'journey',
    ...hostServers(camera.port),
    // Heartbeats every 2 s, so that the route's timing of them is seen within the test.
    ...['--set-string', 'services.results.env.RESULTS_STREAM_HEARTBEAT_MS=2000'],
  );
  // docs/KUBERNETES.md, "API keys": the keys CLI in the gateway's pod.
  key = release.createKey('node-journey');
  expect(key).not.toBe('');
  // The route is programmed once Traefik has read it: the public health answer comes through.
  await eventually(async () => {
    const r = await fetch(`${gatewayUrl()}/healthz`, { signal: AbortSignal.timeout(5000) });
    if (r.status !== 200) throw new Error(`GET /healthz through the route: ${r.status}`);
  });
});
afterAll(async () => {
  await camera?.stop();
  await hooks?.close();
  if (release) await release.uninstall();
});

/** One image detection of the street photo; `headers` added to the call's. */
async function detect(headers: Record<string, string> = {}) {
  const form = new FormData();
  form.append('scene_code', 'person_vehicle');
  form.append(
    'files',
    new Blob([readFileSync(path.join(MEDIA, 'images/street_people_car_coco9891.jpg'))]),
    'street.jpg',
  );
  const r = await api('/v1/vision/image-detections', {
    method: 'POST',
    body: form,
    headers: { 'idempotency-key': randomUUID(), ...headers },
  });
  const body = (await r.json()) as {
    task_id: string;
    results: { status: string; objects: { label: string }[] }[];
  };
  return { status: r.status, body };
}

/** Polls a video task until it leaves its waiting and running states. */
const ended = (task: string, ms = 600_000, every = 3000) =>
  eventually(
    async () => {
      const t = (await (await api(`/v1/vision/tasks/${task}`)).json()) as { status: string; reason?: string };
      if (['pending', 'queued', 'submitting', 'resolving', 'running', 'stopping'].includes(t.status))
        throw new Error(t.status);
      return t;
    },
    ms,
    every,
  );

test("Traefik accepted the release's Gateway and its HTTPRoute, and resolved the route's backend", () => {
  const conditions = (o: { status?: Record<string, unknown> }, path: string[]) => {
    let v: unknown = o.status;
    for (const k of path) v = (v as Record<string, unknown> | undefined)?.[k];
    return Object.fromEntries(
      ((v ?? []) as { type: string; status: string }[]).map((c) => [c.type, c.status]),
    );
  };
  const [gateway] = get(['gateways.gateway.networking.k8s.io', '-n', release.namespace]);
  expect(conditions(gateway, ['conditions'])).toMatchObject({ Accepted: 'True', Programmed: 'True' });
  const [route] = get(['httproutes.gateway.networking.k8s.io', '-n', release.namespace]);
  const parents = (route.status as { parents: { conditions: { type: string; status: string }[] }[] }).parents;
  expect(parents).toHaveLength(1);
  expect(conditions({ status: parents[0] }, ['conditions'])).toMatchObject({
    Accepted: 'True',
    ResolvedRefs: 'True',
  });
});

test('the scenes', async () => {
  const r = await api('/api/op/v1/scenes');
  expect(r.status).toBe(200);
  const body = (await r.json()) as { scenes: { scene_code: string }[] };
  expect(body.scenes.map((s) => s.scene_code)).toEqual(expect.arrayContaining(['person_vehicle', 'ship']));
});

test('an image detection', async () => {
  const { status, body } = await detect();
  expect({ status, body }).toEqual({ status: 201, body: expect.anything() });
  expect(body.results[0].status).toBe('succeeded');
  expect(body.results[0].objects.map((o) => o.label)).toContain('person');
});

test('a file video task runs to its end, with its frames; its stream flows through the route unbuffered', async () => {
  const form = new FormData();
  form.append('scene_code', 'person_vehicle');
  form.append(
    'file',
    new Blob([readFileSync(path.join(MEDIA, 'videos/pedestrians_vtest_opencv_10s.mov'))]),
    'clip.mov',
  );
  const created = await api('/v1/vision/video-tasks', {
    method: 'POST',
    body: form,
    headers: { 'idempotency-key': randomUUID() },
  });
  expect(created.status).toBe(201);
  const { task_id: task } = (await created.json()) as { task_id: string };

  // The stream, read to its `end` beside the task: frames arrive while the task runs. A proxy that buffers the
  // answer (to its end, or by size) holds them until after the task ended.
  const stream = await fetch(`${gatewayUrl()}/v1/vision/tasks/${task}/results/stream`, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    signal: AbortSignal.timeout(900_000),
  });
  expect(stream.status).toBe(200);
  expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const arrivals = eventArrivals(stream, 'frame');
  const done = await ended(task, 600_000, 250);
  const endedAt = Date.now();
  expect(done.status).toBe('succeeded');
  const { at, end } = await arrivals;
  const r = await api(`/v1/vision/tasks/${task}/results?limit=500`);
  const page = (await r.json()) as { items: { objects: unknown[] }[] };
  const before = at.filter((t) => t < endedAt);
  console.log(
    `results stream: ${before.length} of ${at.length} frames arrived before the task was seen ended, ` +
      `the first ${endedAt - at[0]} ms before`,
  );
  expect({ end, frames: at.length, whileRunning: before.length > 0 }).toEqual({
    end: true,
    frames: page.items.length,
    whileRunning: true,
  });
});

test('a live RTSP task from a camera on the host: running, frames as they come, stopped when asked', async () => {
  await camera.start();
  const t0 = Date.now();
  const created = await api(
    '/v1/vision/tasks',
    json({ scene_code: 'person_vehicle', stream_url: `rtsp://${hostIp()}:${camera.port}/cam` }),
  );
  const body = (await created.json()) as { task_id: string; status: string };
  expect({ status: created.status, body }).toMatchObject({ status: 201, body: { status: 'running' } });
  const frames = await eventually(
    async () => {
      const r = await api(`/v1/vision/tasks/${body.task_id}/results?limit=100`);
      const { items } = (await r.json()) as { items: { frame_time_ms: number }[] };
      if (items.length < 5) throw new Error(`${items.length} frames so far`);
      return items;
    },
    180_000,
    3000,
  );
  // Live frames carry their capture times: from now on, not the clip's.
  for (const f of frames) expect(f.frame_time_ms).toBeGreaterThan(t0 - 5000);
  // Its events stream (no rules: heartbeats only) through the route: each heartbeat on time, not held by a buffer.
  const events = await api(`/v1/vision/tasks/${body.task_id}/events/stream`, {
    headers: { accept: 'text/event-stream' },
  });
  expect(events.status).toBe(200);
  const beats = await heartbeatTimes(events, 4, 25_000);
  const gaps = beats.slice(1).map((at, i) => at - beats[i]);
  // 2 s apart, plus results' poll and the route's latency.
  expect({ beats: beats.length, late: gaps.filter((g) => g > 4000) }).toEqual({ beats: 4, late: [] });
  const stop = await api(`/v1/vision/tasks/${body.task_id}/stop`, { method: 'POST' });
  expect(stop.status).toBe(200);
  expect(await ended(body.task_id, 120_000)).toMatchObject({ status: 'stopped' });
  await camera.stop();
});

test('zones and lines: the car crosses the line and enters the zone, and the events say so', async () => {
  const form = new FormData();
  form.append('scene_code', 'person_vehicle');
  form.append('zones', JSON.stringify([{ ...LEFT_LANE, name: 'left lane' }]));
  form.append('lines', JSON.stringify([CURB]));
  form.append('file', new Blob([readFileSync(PARKING_LOT)]), 'lot.mp4');
  const created = await api('/v1/vision/video-tasks', {
    method: 'POST',
    body: form,
    headers: { 'idempotency-key': randomUUID() },
  });
  const task = (await created.json()) as { task_id: string; rules_version: number };
  expect({ status: created.status, task }).toMatchObject({ status: 201, task: { rules_version: 1 } });
  expect(await ended(task.task_id)).toMatchObject({ status: 'succeeded' });
  // Every event, once results has evaluated every frame (an ended task's last page has no next cursor).
  type Event = { kind: string; rule_id: string; direction?: string; label?: string };
  const events = await eventually(async () => {
    const all: Event[] = [];
    for (let cursor = ''; ;) {
      const r = await api(`/v1/vision/tasks/${task.task_id}/events?limit=100&cursor=${cursor}`);
      const page = (await r.json()) as { items: Event[]; next_cursor: string };
      all.push(...page.items);
      if (page.next_cursor === '') return all;
      if (page.items.length === 0) throw new Error(`${all.length} events so far`);
      cursor = page.next_cursor;
    }
  });
  const crossed = events.filter((e) => e.kind === 'line.crossed');
  expect(crossed.length).toBeGreaterThanOrEqual(1);
  expect(crossed.every((e) => e.rule_id === 'curb' && e.direction === 'in' && e.label === 'car')).toBe(true);
  expect(
    events.filter((e) => e.kind === 'zone.entered' && e.rule_id === 'lane').length,
  ).toBeGreaterThanOrEqual(1);
});

test('a webhook to a receiver on the host: verified at registration, then each event signed', async () => {
  const reg = await api(
    '/v1/vision/webhooks',
    json({ url: hooks.url, event_types: ['vision.image_detection.completed'] }),
  );
  const endpoint = (await reg.json()) as { endpoint_id: string; secret: string };
  expect({ status: reg.status, endpoint }).toMatchObject({
    status: 201,
    endpoint: { secret: expect.stringMatching(/^whsec_/) },
  });
  // The verification request reached the host before the answer, signed with the new secret.
  const [check] = hooks.received;
  expect(() =>
    new Webhook(endpoint.secret).verify(check.body, check.headers as Record<string, string>),
  ).not.toThrow();
  hooks.secrets = [endpoint.secret];
  const { status, body } = await detect();
  expect(status).toBe(201);
  const event = await eventually(() => {
    const e = hooks.events().find((x) => x.data.task_id === body.task_id);
    if (!e) throw new Error(`no verified event of ${body.task_id}: ${hooks.received.length} requests`);
    return e;
  }, 120_000);
  expect(event).toMatchObject({
    type: 'vision.image_detection.completed',
    data: { status: 'succeeded', images: { total: 1 } },
  });
});

test("an image detection's trace in Jaeger spans the gateway, images and the detection pool's pods", async () => {
  // The pods export to Jaeger on the host's end while the stack runs it (installRelease sets the endpoint).
  expect(readStackEnv().pod?.otlpEndpoint).toMatch(/^http:\/\//);
  const tp = newTraceparent();
  expect((await detect({ traceparent: tp.header })).status).toBe(201);
  const services = (spans: { service: string }[]) => new Set(spans.map((s) => s.service));
  const spans = await waitForTrace(
    'the image detection trace',
    tp.traceId,
    (t) => ['gateway', 'images', 'inference'].every((n) => services(t).has(n)),
    120_000,
  );
  expect([...services(spans)]).toEqual(expect.arrayContaining(['gateway', 'images', 'inference']));
  // images called the detection pool's Service (inference-detect), not the job-running inference pod.
  const calls = spans.filter((s) => s.service === 'images' && s.tag['span.kind'] === 'client');
  expect(calls.map((s) => String(s.tag['server.address']))).toContainEqual(
    expect.stringMatching(/inference-detect/),
  );
});
