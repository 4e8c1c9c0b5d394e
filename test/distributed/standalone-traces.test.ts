/**
 * The standalone process (`npm start`, one process for the six services) exporting OTLP to the stack's
 * real Jaeger (scripts/stack/start.sh jaeger): each span belongs to the service whose code made it,
 * server spans are named by route, a video task's frames ride the in-process bus in the task's trace
 * (vision.frames producer and consumer spans), the task event written through the outbox joins the
 * request's trace, X-Request-Id is on the gateway's span, and log lines carry the ids of the span
 * they were written in; its start banner prints the one metrics address of the six services. Runs in
 * the distributed suite because it needs that Jaeger.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { readStackEnv } from '../../scripts/distributed/launcher';
import {
  awaitObservabilityBackends,
  jaegerUrl,
  newTraceparent,
  waitForTrace,
  type Span,
} from '../helpers/observability';
import { MEDIA } from '../helpers/stack';
import { startStandaloneProcess, type StandaloneProcess } from '../helpers/standalone-process';
import { describeDistributed, waitFor } from './support';

const KEY = 'traces-acme-0123456789abcdef';

const services = (spans: Span[]) => new Set(spans.map((s) => s.service));
const named = (spans: Span[], service: string) =>
  spans.filter((s) => s.service === service).map((s) => s.operationName);

// It reads traces: it starts once the stack runs Jaeger and Prometheus.
awaitObservabilityBackends();

describeDistributed('standalone traces in the real Jaeger', () => {
  let proc: StandaloneProcess;
  let url = '';
  const out = () => proc.output();

  beforeAll(async () => {
    const otlp = readStackEnv().otlpEndpoint;
    if (!otlp) throw new Error('Jaeger is not running: scripts/stack/start.sh jaeger');
    proc = await startStandaloneProcess({
      VISION_API_KEYS: `${KEY}:acme`,
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
      OTEL_BSP_SCHEDULE_DELAY: '300',
    });
    url = proc.url;
  }, 150_000);

  afterAll(() => proc?.stop());

  const post = (urlPath: string, traceparent: string, body: FormData) =>
    fetch(`${url}${urlPath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': randomUUID(), traceparent },
      body,
    });

  it("a video task's trace: every service under its own name, routes, frames over the in-process bus, outbox, logs", async () => {
    const tp = newTraceparent();
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    const clip = path.join(MEDIA, 'videos', 'person_bicycle_car_parkinglot_intel.mp4');
    form.append('file', new Blob([readFileSync(clip)]), path.basename(clip));
    const res = await post('/v1/vision/video-tasks', tp.header, form);
    expect(res.status).toBe(201);
    const requestId = res.headers.get('x-request-id') as string;
    const taskId = ((await res.json()) as { task_id: string }).task_id;

    const spans = await waitForTrace(
      'the task trace with its frames ingested',
      tp.traceId,
      (t) => {
        const sends = t.filter((x) => x.operationName === 'send vision.frames');
        return (
          ['gateway', 'tasks', 'quota', 'inference', 'results'].every((n) => services(t).has(n)) &&
          t.some(
            (x) =>
              x.operationName === 'process vision.frames' &&
              x.references.some((r) => sends.some((s) => s.spanID === r.spanID)),
          ) &&
          t.some((x) => x.operationName === 'process vision.task-events')
        );
      },
      120_000,
    );
    // One service per span, never the process's fallback name; no anonymous middleware spans.
    expect([...services(spans)].sort()).toEqual(['gateway', 'inference', 'quota', 'results', 'tasks']);
    expect(spans.filter((s) => /middleware|request handler|anonymous/.test(s.operationName))).toEqual([]);
    // Server spans are named by route.
    expect(named(spans, 'gateway')).toContain('POST /v1/vision/video-tasks');
    expect(named(spans, 'tasks')).toContain('POST /v1/vision/video-tasks');
    expect(named(spans, 'quota')).toContain('POST /internal/v1/charges');
    expect(named(spans, 'inference')).toContain('POST /internal/v1/jobs');
    // Frames: producer spans in inference, consumer spans in results, by the messaging conventions.
    const send = spans.find((s) => s.operationName === 'send vision.frames') as Span;
    expect([send.service, send.tag['span.kind'], send.tag['messaging.destination.name']]).toEqual([
      'inference',
      'producer',
      'vision.frames',
    ]);
    expect(send.tag['messaging.kafka.message.key']).toBe(taskId);
    const processed = spans.find((s) => s.operationName === 'process vision.frames') as Span;
    expect([
      processed.service,
      processed.tag['span.kind'],
      processed.tag['messaging.consumer.group.name'],
    ]).toEqual(['results', 'consumer', 'results']);
    // The task event went through the tasks outbox (a background relay sent it) and still joins the trace.
    const event = spans.find((s) => s.operationName === 'send vision.task-events') as Span;
    expect([event.service, event.tag['span.kind']]).toEqual(['tasks', 'producer']);
    // X-Request-Id is recorded on the gateway's server span.
    const server = spans.find(
      (s) => s.service === 'gateway' && s.operationName === 'POST /v1/vision/video-tasks',
    ) as Span;
    expect(String(server.tag['http.response.header.x-request-id'])).toContain(requestId);
    // The process says it is the standalone one.
    const trace = await (await fetch(`${jaegerUrl()}/api/traces/${tp.traceId}`)).json();
    const modes = Object.values(
      (trace as { data: { processes: Record<string, { tags: { key: string; value: unknown }[] }> }[] })
        .data[0].processes,
    ).map((p) => p.tags.find((t) => t.key === 'deployment.mode')?.value);
    expect(new Set(modes)).toEqual(new Set(['standalone']));

    // Log lines written for the task (its job's end) carry the ids of a span of its trace.
    const line = await waitFor(
      "the job's end in the log",
      async () =>
        out()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l.job_id === taskId && l.msg === 'job ended'),
      60_000,
    );
    expect(line.trace_id).toBe(tp.traceId);
    expect(spans.map((s) => s.spanID)).toContain(line.span_id);
  }, 240_000);

  it("an image detection's trace: gateway, images, quota and inference, each under its own name", async () => {
    const tp = newTraceparent();
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    const image = path.join(MEDIA, 'images', 'street_bus_pedestrians_coco2006.jpg');
    form.append('files', new Blob([readFileSync(image)]), 'bus.jpg');
    const res = await post('/v1/vision/image-detections', tp.header, form);
    expect(res.status).toBe(201);
    const spans = await waitForTrace('the image detection trace', tp.traceId, (t) =>
      ['gateway', 'images', 'quota', 'inference'].every((n) => services(t).has(n)),
    );
    expect(named(spans, 'images')).toContain('POST /v1/vision/image-detections');
    // Images' detect call to inference is answered in this process (STANDALONE_LOCAL_CALLS): no HTTP hop.
    expect(named(spans, 'images')).toContain('call inference');
    expect(named(spans, 'inference')).toContain('detect (in process)');
  }, 120_000);

  it('the start banner prints the metrics address; it serves all six services by label, the gateway does not', async () => {
    const shown = /^Metrics \(Prometheus.*: (http:\S+)$/m.exec(out())?.[1];
    expect(shown).toBe(proc.metricsUrl);
    const res = await fetch(shown as string);
    expect([res.status, res.headers.get('content-type')]).toEqual([
      200,
      expect.stringContaining('text/plain'),
    ]);
    const text = await res.text();
    const labelled = new Set(
      [...text.matchAll(/^vision_[a-z_]+\{[^}]*service="([a-z]+)"/gm)].map((m) => m[1]),
    );
    expect([...labelled].sort()).toEqual(['gateway', 'images', 'inference', 'quota', 'results', 'tasks']);
    expect((await fetch(`${url}/metrics`)).status).not.toBe(200);
  });
});
