import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { DistributedStack } from '../helpers/distributed';
import { startMediaServer, type MediaServer } from '../helpers/media-server';
import {
  awaitObservabilityBackends,
  newTraceparent,
  waitForProm,
  waitForTrace,
  type Span,
} from '../helpers/observability';
import {
  client,
  clip,
  describeDistributed,
  expectChargesMatchTasks,
  startFaultStack,
  waitFor,
} from './support';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

/** A create request of the test, carrying its own trace context (so its trace can be fetched from Jaeger). */
function createTraced(stack: DistributedStack, streamUrl: string, traceparent: string, idem = randomUUID()) {
  return client(stack).api('POST', '/v1/vision/tasks', {
    headers: { 'content-type': 'application/json', 'idempotency-key': idem, traceparent },
    body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: streamUrl }),
  });
}

const services = (spans: Span[]) => new Set(spans.map((s) => s.service));

// It reads traces and series: it starts once the stack runs Jaeger and Prometheus.
awaitObservabilityBackends();

describeDistributed('fault: the inference backend answers after the timeout', () => {
  let stack: DistributedStack;
  let media: MediaServer;
  beforeAll(async () => {
    stack = await startFaultStack({
      toxiproxy: true,
      env: {
        TASKS_BACKEND_TIMEOUT_MS: '1000',
        TASKS_RECONCILE_INTERVAL_MS: '500',
        TASKS_POLL_INTERVAL_MS: '300',
        TASKS_RESOLVE_GRACE_MS: '3000',
        TASKS_BREAKER_VOLUME: '50',
        // The scene list is fetched from inference too: keep the copy fetched below for the whole test.
        TASKS_SCENES_CACHE_MS: '600000',
      },
    });
    media = await startMediaServer({ 'pedestrians.mov': clip('pedestrians_vtest_opencv_10s.mov') });
    const warm = await client(stack).createByUrl(`${media.url}/file/pedestrians.mov`);
    expect(warm.status).toBe(201);
  }, 180_000);
  afterAll(async () => {
    await media?.close();
    await stack?.close();
  });

  it('answers 202 resolving when the acceptance arrives late; the reconciler settles it as created', async () => {
    const c = client(stack);
    const before = (await c.quota()).used;
    const idem = randomUUID();
    // The backend receives the submission at once, but its answer comes back after the 1 s timeout.
    await stack.addToxic('inference', {
      name: 'slow-answer',
      type: 'latency',
      stream: 'downstream',
      attributes: { latency: 2500, jitter: 0 },
    });
    const traced = newTraceparent();
    let created;
    try {
      created = await createTraced(stack, `${media.url}/live/pedestrians.mov`, traced.header, idem);
    } finally {
      await stack.removeToxic('inference', 'slow-answer');
    }
    expect([created.status, created.body?.error?.code]).toEqual([202, undefined]);
    expect(created.body.status).toBe('resolving');
    const id = created.body.task_id as string;

    // Jaeger: the 202 is explained by its trace alone: gateway -> tasks -> quota -> inference, and the
    // tasks span of the call to inference says it timed out after 1000 ms.
    const timedOut = (x: Span) =>
      x.service === 'tasks' &&
      x.operationName === 'call inference' &&
      x.tag['error.type'] === 'timeout' &&
      x.tag.timeout_ms === 1000 &&
      x.events.some((e) => e.event === 'timeout');
    const spans = await waitForTrace('the trace of the timed-out create', traced.traceId, (t) => {
      const names = services(t);
      return ['gateway', 'tasks', 'quota', 'inference'].every((n) => names.has(n)) && t.some(timedOut);
    });
    const op = (service: string) => spans.filter((x) => x.service === service).map((x) => x.operationName);
    // Named by route or operation, never express's anonymous middleware.
    expect(spans.filter((x) => /middleware|request handler|anonymous/.test(x.operationName))).toEqual([]);
    expect(op('gateway')).toContain('POST /v1/vision/tasks');
    expect(op('tasks')).toContain('POST /v1/vision/tasks');
    expect(op('inference')).toContain('POST /internal/v1/jobs');
    const server = spans.find((x) => x.service === 'gateway' && x.operationName === 'POST /v1/vision/tasks');
    expect(
      String(
        server?.tag['http.request.header.x-request-id'] ?? server?.tag['http.response.header.x-request-id'],
      ),
    ).toContain(created.headers.get('x-request-id') as string);
    const call = spans.find(timedOut) as Span;
    // The inference side of the same call is in the trace too (it answered, too late).
    expect(spans.some((x) => x.service === 'inference' && x.traceID === call.traceID)).toBe(true);
    expect((await c.quota()).used).toBe(before + 1);

    const settled = await c.waitForStatus(
      id,
      ['running', 'succeeded', 'failed', 'stopped', 'refunded'],
      60_000,
    );
    expect(settled.status).toBe('running');
    // A replay returns the same task and charges nothing more.
    const replay = await c.createByUrl(`${media.url}/live/pedestrians.mov`, idem);
    expect(replay.status).toBe(200);
    expect(replay.body.task_id).toBe(id);
    expect((await c.quota()).used).toBe(before + 1);
    await waitFor('frames of the settled task', async () => {
      const r = await c.api('GET', `/v1/vision/tasks/${id}/results?limit=10`);
      return r.body.items.length > 0 ? true : undefined;
    });
    expect((await c.api('POST', `/v1/vision/tasks/${id}/stop`)).status).toBe(200);
    await c.waitForStatus(id, ['stopped']);
  }, 180_000);

  it("ties an uploaded file task's frames to its trace: vision.frames producer (inference) and consumer (results) spans", async () => {
    const tp = newTraceparent();
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append(
      'file',
      new Blob([readFileSync(clip('person_bicycle_car_parkinglot_intel.mp4'))]),
      'parking.mp4',
    );
    const created = await client(stack).api('POST', '/v1/vision/video-tasks', {
      headers: { 'idempotency-key': randomUUID(), traceparent: tp.header },
      body: form,
    });
    expect(created.status).toBe(201);
    const spans = await waitForTrace('the frames of the uploaded task in its trace', tp.traceId, (t) => {
      const sends = t.filter((x) => x.service === 'inference' && x.operationName === 'send vision.frames');
      return (
        ['gateway', 'tasks', 'quota', 'inference', 'results'].every((n) => services(t).has(n)) &&
        t.some(
          (x) =>
            x.service === 'results' &&
            x.operationName === 'process vision.frames' &&
            x.references.some((r) => sends.some((p) => p.spanID === r.spanID)),
        ) &&
        // The task event is sent by the outbox relay, under the traceparent its row kept.
        t.some((x) => x.service === 'tasks' && x.operationName === 'send vision.task-events')
      );
    });
    const send = spans.find((x) => x.operationName === 'send vision.frames') as Span;
    expect(send.tag['span.kind']).toBe('producer');
    expect(send.tag['messaging.system']).toBe('kafka');
    expect(send.tag['messaging.destination.name']).toBe('vision.frames');
    const processed = spans.find((x) => x.operationName === 'process vision.frames') as Span;
    expect(processed.tag['span.kind']).toBe('consumer');
    expect(processed.tag['messaging.consumer.group.name']).toBe('results');
    // The create request, the job submission and the frames are one trace.
    expect(['gateway', 'tasks', 'quota', 'inference', 'results'].every((n) => services(spans).has(n))).toBe(
      true,
    );
    // Prometheus: the results consumer's lag on vision.frames (from Kafka's offsets) and the ingest lag.
    const id = stack.deployment.id;
    await waitForProm(
      'the results consumer lag on vision.frames',
      `vision_bus_consumer_lag_messages{deployment="${id}",service="results",topic="vision.frames",group="results"}`,
      (r) => r.length > 0 && r.every((x) => Number(x.value[1]) >= 0),
    );
    await waitForProm(
      'ingest lag observations',
      `vision_results_ingest_lag_seconds_count{deployment="${id}",service="results"} > 0`,
      (r) => r.length === 1,
    );
  }, 120_000);

  it('answers 202 resolving when the submission never arrives; the reconciler refunds it', async () => {
    const c = client(stack);
    const before = (await c.quota()).used;
    // Nothing gets through to the backend; the connection is closed after 1.5 s.
    await stack.addToxic('inference', {
      name: 'black-hole',
      type: 'timeout',
      stream: 'upstream',
      attributes: { timeout: 1500 },
    });
    let created;
    try {
      created = await c.createByUrl(`${media.url}/live/pedestrians.mov`);
    } finally {
      await stack.removeToxic('inference', 'black-hole');
    }
    expect([created.status, created.body?.error?.code]).toEqual([202, undefined]);
    expect(created.body.status).toBe('resolving');
    const id = created.body.task_id as string;
    expect((await c.quota()).used).toBe(before + 1);
    const settled = await c.waitForStatus(id, ['running', 'refunded', 'failed'], 60_000);
    expect(settled.status).toBe('refunded');
    expect((await c.quota()).used).toBe(before);
    await expectChargesMatchTasks(c);
  }, 180_000);
});
