/**
 * What a user does, through the Gateway API route that Traefik serves on the real node (scripts/test-cluster.sh):
 * an API key made the documented way (the keys CLI in the gateway's pod), the scenes, an image detection, a file
 * video task to its end with its frames, and the results stream flowing unbuffered with its heartbeats on time.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { eventually, gatewayUrl, get, installRelease, MEDIA, type Release } from './node-cluster';

jest.setTimeout(900_000);

let release: Release;
let key = '';
const api = (p: string, init: RequestInit = {}) =>
  fetch(`${gatewayUrl()}${p}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string> | undefined) },
    signal: AbortSignal.timeout(120_000),
  });

beforeAll(async () => {
  release = await installRelease('journey', 'journey');
  // docs/DEPLOYMENT.md, "API keys": the keys CLI in the gateway's pod.
  key = release.createKey('node-journey');
  expect(key).not.toBe('');
  // The route is programmed once Traefik has read it: the public health answer comes through.
  await eventually(async () => {
    const r = await fetch(`${gatewayUrl()}/healthz`, { signal: AbortSignal.timeout(5000) });
    if (r.status !== 200) throw new Error(`GET /healthz through the route: ${r.status}`);
  });
});
afterAll(async () => {
  if (release) await release.uninstall();
});

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
    headers: { 'idempotency-key': randomUUID() },
  });
  const body = (await r.json()) as { results: { status: string; objects: { label: string }[] }[] };
  expect({ status: r.status, body }).toEqual({ status: 201, body: expect.anything() });
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

  // The stream: the first event arrives while the task runs, not when the response ends.
  const streamStart = Date.now();
  const stream = await api(`/v1/vision/tasks/${task}/results/stream`, {
    headers: { accept: 'text/event-stream' },
  });
  expect(stream.status).toBe(200);
  expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = stream.body!.getReader();
  const first = await reader.read();
  const firstAfter = Date.now() - streamStart;
  expect(first.done).toBe(false);
  await reader.cancel();

  const done = await eventually(
    async () => {
      const r = await api(`/v1/vision/tasks/${task}`);
      const t = (await r.json()) as { status: string; reason?: string };
      if (t.status === 'running' || t.status === 'queued' || t.status === 'pending')
        throw new Error(t.status);
      return t;
    },
    600_000,
    3000,
  );
  expect(done.status).toBe('succeeded');
  const r = await api(`/v1/vision/tasks/${task}/results?limit=100`);
  const page = (await r.json()) as { items: { objects: unknown[] }[] };
  expect(page.items.length).toBeGreaterThan(0);
  // Unbuffered: the first bytes came before the task ended (a buffering proxy holds them to the end).
  expect(firstAfter).toBeLessThan(60_000);
});
