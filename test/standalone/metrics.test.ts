/**
 * The standalone process's Prometheus endpoint: one GET /metrics (its own port, not the gateway) serves
 * all six services' metrics, each series labelled with its service. Every family documented in
 * docs/OPERATIONS.md is exposed, and a real run (an image detection, an uploaded video task to its
 * end, a refused key, a live task whose stream is lost) moves the families it touches under the right
 * service. Images' detect call to inference is answered in process (STANDALONE_LOCAL_CALLS), not by its route.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MEDIA, startStandaloneStack, type TestStack } from '../helpers/stack';
import { startMediaServer, waitFor } from '../helpers/media-server';
import { parseSamples, total } from '../helpers/scrape';
import { detectImage, uploadVideoTask } from '../helpers/uploads';

const KEY = 'metrics-acme-0123456789abcdef';
const repoRoot = path.resolve(__dirname, '../..');

/** Families of the table in docs/OPERATIONS.md, "Metrics". */
function documentedFamilies(): string[] {
  const doc = readFileSync(path.join(repoRoot, 'docs/OPERATIONS.md'), 'utf8');
  return [...doc.matchAll(/^\| `(vision_[a-z_]+)` \| (counter|gauge|histogram) \|/gm)].map((m) => m[1]);
}

describe('standalone GET /metrics', () => {
  let stack: TestStack;
  let metricsUrl: string;
  beforeAll(async () => {
    stack = await startStandaloneStack({
      keys: `${KEY}:acme`,
      // The live create probes the stream (ffmpeg's first frames): generous on a busy machine.
      env: { TASKS_PROBE_TIMEOUT_MS: '45000', INFERENCE_RECONNECT_MIN_MS: '300' },
    });
    metricsUrl = stack.standalone!.metrics.url;
  }, 120_000);
  afterAll(() => stack?.close());

  const scrape = async () => {
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text();
  };
  const sum = (text: string, name: string, labels: Record<string, string>) =>
    total(parseSamples(text), name, labels);

  it('is served on its own port, not through the gateway', async () => {
    expect(new URL(metricsUrl).port).not.toBe(new URL(stack.url).port);
    const viaGateway = await fetch(`${stack.url}/metrics`);
    expect(viaGateway.status).not.toBe(200);
  });

  it('exposes every documented family, and each family is documented', async () => {
    const text = await scrape();
    const documented = documentedFamilies();
    expect(documented.length).toBeGreaterThanOrEqual(23);
    const exposed = [...text.matchAll(/^# TYPE (vision_[a-z_]+) (\w+)$/gm)]
      .map((m) => m[1])
      .filter((n) => !n.startsWith('vision_process_'));
    expect([...exposed].sort()).toEqual([...documented].sort());
  });

  it('counts a real run under the service that did the work', async () => {
    const bad = await fetch(`${stack.url}/v1/vision/quota`, {
      headers: { authorization: 'Bearer nope-0123456789' },
    });
    expect(bad.status).toBe(401);

    await detectImage(stack, KEY, path.join(MEDIA, 'images', 'street_bus_pedestrians_coco2006.jpg'), {
      filename: 'bus.jpg',
      scene: 'person_vehicle',
    });

    const id = await uploadVideoTask(
      stack,
      KEY,
      path.join(MEDIA, 'videos', 'person_bicycle_car_parkinglot_intel.mp4'),
    );
    await waitFor(
      'the video task to end',
      async () => {
        const t = await stack.api('GET', `/v1/vision/tasks/${id}`, { key: KEY });
        return ['succeeded', 'failed'].includes(t.body.status) ? t.body : undefined;
      },
      120_000,
    );
    // Results ingest the frames after the task ends on the bus: wait for the lag histogram.
    const text = await waitFor(
      'ingest lag observations',
      async () => {
        const t = await scrape();
        return sum(t, 'vision_results_ingest_lag_seconds_count', { service: 'results' }) > 0 ? t : undefined;
      },
      60_000,
    );

    const expectPositive = (name: string, labels: Record<string, string>) =>
      expect([name, labels, sum(text, name, labels) > 0]).toEqual([name, labels, true]);
    expectPositive('vision_gateway_auth_failures_total', { service: 'gateway', reason: 'unknown_key' });
    expectPositive('vision_http_server_request_duration_seconds_count', {
      service: 'gateway',
      route: '/v1/vision/video-tasks',
      status_code: '201',
    });
    expectPositive('vision_http_server_request_duration_seconds_count', {
      service: 'tasks',
      route: '/v1/vision/video-tasks',
    });
    expectPositive('vision_http_server_request_duration_seconds_count', {
      service: 'inference',
      route: '/internal/v1/jobs',
    });
    expectPositive('vision_upstream_request_duration_seconds_count', {
      service: 'tasks',
      upstream: 'inference',
      outcome: 'ok',
    });
    // The image's detection was a call from images to inference, answered in this process: counted as a call,
    // never seen by inference's HTTP route.
    expectPositive('vision_upstream_request_duration_seconds_count', {
      service: 'images',
      upstream: 'inference',
      outcome: 'ok',
    });
    expect(
      sum(text, 'vision_http_server_request_duration_seconds_count', {
        service: 'inference',
        route: '/internal/v1/detect',
      }),
    ).toBe(0);
    expectPositive('vision_task_transitions_total', { service: 'tasks', from: 'none', to: 'submitting' });
    expectPositive('vision_task_transitions_total', { service: 'tasks', from: 'submitting', to: 'running' });
    expectPositive('vision_tasks', { service: 'tasks' });
    expectPositive('vision_quota_charges_total', { service: 'quota', kind: 'video' });
    expectPositive('vision_quota_charges_total', { service: 'quota', kind: 'image' });
    expectPositive('vision_quota_holds_total', { service: 'quota', kind: 'image', outcome: 'placed' });
    expectPositive('vision_inference_frames_decoded_total', {
      service: 'inference',
      scene: 'person_vehicle',
    });
    expectPositive('vision_inference_frames_published_total', {
      service: 'inference',
      scene: 'person_vehicle',
    });
    expectPositive('vision_inference_model_latency_seconds_count', { service: 'inference' });
    expectPositive('vision_bus_messages_published_total', { service: 'inference', topic: 'vision.frames' });
    expectPositive('vision_bus_messages_consumed_total', {
      service: 'results',
      topic: 'vision.frames',
      group: 'results',
    });
    expectPositive('vision_bus_messages_published_total', { service: 'tasks', topic: 'vision.task-events' });
    // The tasks gauge reads the database at scrape time: the finished task is counted.
    expect(
      sum(text, 'vision_tasks', { service: 'tasks', status: 'succeeded' }) +
        sum(text, 'vision_tasks', { service: 'tasks', status: 'failed' }),
    ).toBeGreaterThanOrEqual(1);
    // No series of a family that belongs to one service leaks under another.
    for (const s of parseSamples(text).filter((x) => x.name.startsWith('vision_inference_frames')))
      expect(s.labels.service).toBe('inference');
  }, 300_000);

  it('counts a live job while it runs and the decoder restarts when its stream is lost', async () => {
    const clip = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov');
    const media = await startMediaServer({ 'cam.mov': clip });
    let id: string;
    try {
      const created = await stack.api('POST', '/v1/vision/tasks', {
        key: KEY,
        headers: { 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
        body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: `${media.url}/live/cam.mov` }),
      });
      expect(created.status).toBe(201);
      id = created.body.task_id as string;
      await waitFor('the live job in vision_inference_active_jobs', async () =>
        sum(await scrape(), 'vision_inference_active_jobs', { service: 'inference' }) >= 1 ? true : undefined,
      );
      const restarts = async () =>
        sum(await scrape(), 'vision_inference_decoder_restarts_total', {
          service: 'inference',
          reason: 'stream_lost',
        });
      const before = await restarts();
      // The stream server goes away: the job's decoder ends and is started again (reconnect attempts).
      await media.close();
      await waitFor('a decoder restart', async () => ((await restarts()) > before ? true : undefined));
    } finally {
      await media.close();
    }
    const stop = await stack.api('POST', `/v1/vision/tasks/${id}/stop`, { key: KEY });
    expect(stop.status).toBe(200);
    await waitFor('the job to end', async () =>
      sum(await scrape(), 'vision_inference_active_jobs', { service: 'inference' }) === 0 ? true : undefined,
    );
  }, 180_000);
});
