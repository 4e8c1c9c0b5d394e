/**
 * No secret of a stream URL reaches a span, a log line or an answer. The standalone process
 * (apps/standalone/dist/main.js) exports its spans over OTLP/HTTP to a receiver in this test and logs at
 * debug level to its stdout; video tasks are created with stream URLs that carry user information, a
 * presigned S3 query (X-Amz-Credential, X-Amz-Security-Token, X-Amz-Signature) with a CDN `token`,
 * and an RTMP stream key in the path. Some run (a progressive MP4 over http, read by ffprobe and ffmpeg
 * through the egress proxy; a live RTMP stream that is then lost), some are refused (a host that does
 * not resolve, the cloud metadata address, a missing file, an RTMP stream nobody publishes); a request
 * to the service itself carries a token in its query. Every string of every span batch (attributes,
 * events, status, resource), every log line and every answer (bodies and headers, the operator's view
 * included) is searched for each planted value, and the stream host must receive no trace header.
 * docs/SECURITY.md "Secrets in URLs" states the rule.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { startMediaServer, waitFor, type MediaServer } from '../helpers/media-server';
import { receivedSpans, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver';
import { MEDIA } from '../helpers/stack';
import { startStandaloneProcess, type StandaloneProcess } from '../helpers/standalone-process';
import { cameraMedia, streamServer, type StreamServer } from '../helpers/stream-servers';

const hex = (n: number) => randomBytes(n).toString('hex');
const KEY = `secrets-acme-${hex(8)}`;
const ADMIN = `admin-${hex(12)}`;
const USER = `camuser${hex(4)}`;
const PASS = `campass${hex(6)}`;
const ACCESS_KEY_ID = `AKIA${hex(8).toUpperCase()}`;
const SESSION_TOKEN = `IQoJb3JpZ2luX2VjE${hex(12)}`;
const SIGNATURE = hex(32);
const CDN_TOKEN = `cdn${hex(10)}`;
const QUERY_TOKEN = `qt${hex(10)}`;
const STREAM_KEY = `live_${hex(10)}`;
const UNPUBLISHED_KEY = `live_${hex(10)}`;

/** Every value that must never be shown (the Basic credential too: the probe sends user information as one). */
const SECRETS: Record<string, string> = {
  'api key': KEY,
  'operator token': ADMIN,
  'user name': USER,
  password: PASS,
  'basic credential': Buffer.from(`${USER}:${PASS}`).toString('base64'),
  'X-Amz-Credential access key id': ACCESS_KEY_ID,
  'X-Amz-Security-Token': SESSION_TOKEN,
  'X-Amz-Signature': SIGNATURE,
  'CDN token': CDN_TOKEN,
  'token in a query sent to the service': QUERY_TOKEN,
  'RTMP stream key': STREAM_KEY,
  'unpublished RTMP stream key': UNPUBLISHED_KEY,
};

const TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage'];

const PRESIGNED = new URLSearchParams({
  'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
  'X-Amz-Credential': `${ACCESS_KEY_ID}/20250101/us-east-1/s3/aws4_request`,
  'X-Amz-Date': '20250101T000000Z',
  'X-Amz-Expires': '900',
  'X-Amz-SignedHeaders': 'host',
  'X-Amz-Security-Token': SESSION_TOKEN,
  'X-Amz-Signature': SIGNATURE,
  token: CDN_TOKEN,
}).toString();

/** Where in `value` (any JSON-like value or text) a secret appears: `where` plus the JSON path. */
function findSecrets(where: string, value: unknown, found: string[], depth = 0): void {
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    for (const [name, secret] of Object.entries(SECRETS)) {
      const at = lower.indexOf(secret.toLowerCase());
      if (at >= 0) found.push(`${name} in ${where}: …${value.slice(Math.max(0, at - 80), at + 80)}…`);
    }
  } else if (Array.isArray(value))
    value.forEach((v, i) => findSecrets(`${where}[${i}]`, v, found, depth + 1));
  else if (value && typeof value === 'object' && depth < 64)
    for (const [k, v] of Object.entries(value)) findSecrets(`${where}.${k}`, v, found, depth + 1);
}

describe('secrets in stream URLs', () => {
  let otlp: OtlpReceiver;
  let media: MediaServer;
  let rtmp: StreamServer;
  let publisher: ChildProcess | undefined;
  let svc: StandaloneProcess;
  /** Trace context headers that reached the stream host (none may: docs/EGRESS.md, "What the caller's host receives"). */
  const traceHeaders: string[] = [];
  /** Every answer the test read: status, headers and body. */
  const answers: { what: string; status: number; headers: Record<string, string>; body: unknown }[] = [];

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    media = await startMediaServer(
      { 'clip.mp4': path.join(MEDIA, 'videos', 'person_bicycle_car_parkinglot_intel.mp4') },
      (req) => traceHeaders.push(...Object.keys(req.headers).filter((h) => TRACE_HEADERS.includes(h))),
    );
    rtmp = await streamServer('rtmp');
    await rtmp.start();
    svc = await startStandaloneProcess({
      LOG_LEVEL: 'debug',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '200',
      VISION_API_KEYS: `${KEY}:acme`,
      TASKS_ADMIN_TOKEN: ADMIN,
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      TASKS_PROBE_TIMEOUT_MS: '20000',
      TASKS_POLL_INTERVAL_MS: '300',
      INFERENCE_SAMPLE_FPS: '2',
      INFERENCE_STREAM_GIVEUP_MS: '4000',
      INFERENCE_RECONNECT_MIN_MS: '300',
      INFERENCE_RECONNECT_MAX_MS: '1000',
    });
  }, 240_000);

  afterAll(async () => {
    publisher?.kill('SIGKILL');
    await svc?.stop();
    await rtmp?.stop();
    await media?.close();
    await otlp?.close();
  });

  async function call(what: string, url: string, init: RequestInit = {}) {
    const res = await fetch(url, init);
    const text = await res.text();
    const body: unknown = res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
    answers.push({ what, status: res.status, headers: Object.fromEntries(res.headers), body });
    return { status: res.status, body: body as Record<string, unknown> };
  }
  const api = (what: string, method: string, urlPath: string, body?: unknown) =>
    call(what, `${svc.url}${urlPath}`, {
      method,
      headers: {
        authorization: `Bearer ${KEY}`,
        ...(body ? { 'content-type': 'application/json', 'idempotency-key': randomUUID() } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
  const create = (what: string, streamUrl: string) =>
    api(`create ${what}`, 'POST', '/v1/vision/tasks', {
      scene_code: 'person_vehicle',
      stream_url: streamUrl,
    });
  const task = (id: string) => api(`task ${id}`, 'GET', `/v1/vision/tasks/${id}`);
  const ended = (id: string) =>
    waitFor(
      `task ${id} to end`,
      async () => {
        const r = await task(id);
        return ['succeeded', 'failed', 'stopped', 'refunded'].includes(String(r.body.status)) ? r : undefined;
      },
      180_000,
    );

  const created: string[] = [];

  it('runs, loses and refuses tasks whose stream URLs carry secrets', async () => {
    const file = await create(
      'http file',
      `http://${USER}:${PASS}@127.0.0.1:${new URL(media.url).port}/file/clip.mp4?${PRESIGNED}`,
    );
    expect(file.status).toBe(201);
    created.push(String(file.body.task_id));

    publisher = spawn(
      'ffmpeg',
      ['-hide_banner', '-loglevel', 'error', '-nostdin', '-re', '-stream_loop', '-1']
        .concat(['-i', cameraMedia().ts, '-map', '0:v:0', '-c', 'copy', '-f', 'flv'])
        .concat([`rtmp://127.0.0.1:${rtmp.port}/live/${STREAM_KEY}`]),
      { stdio: 'ignore' },
    );
    const live = await waitFor(
      'the RTMP stream to be published and accepted',
      async () => {
        const r = await create('rtmp', `rtmp://127.0.0.1:${rtmp.port}/live/${STREAM_KEY}`);
        return r.status === 201 ? r : undefined;
      },
      120_000,
    );
    const liveId = String(live.body.task_id);
    created.push(liveId);
    await waitFor(
      'frames of the live task',
      async () => {
        const r = await api('results', 'GET', `/v1/vision/tasks/${liveId}/results?limit=5`);
        return Array.isArray(r.body.items) && r.body.items.length > 0 ? true : undefined;
      },
      120_000,
    );
    // The publisher goes away: the job reconnects (each attempt logged), then gives up.
    publisher.kill('SIGKILL');
    publisher = undefined;

    const refused: [string, string][] = [
      [
        'missing file',
        `http://${USER}:${PASS}@127.0.0.1:${new URL(media.url).port}/missing.mp4?${PRESIGNED}`,
      ],
      ['unresolvable host', `https://${USER}:${PASS}@stream.invalid/live/index.m3u8?${PRESIGNED}`],
      ['metadata address rtmp', `rtmp://169.254.169.254/live/${STREAM_KEY}`],
      ['metadata address rtsp', `rtsp://${USER}:${PASS}@169.254.169.254/cam?${PRESIGNED}`],
      ['unpublished rtmp', `rtmp://127.0.0.1:${rtmp.port}/live/${UNPUBLISHED_KEY}`],
    ];
    for (const [what, url] of refused) {
      const r = await create(what, url);
      expect({ what, status: r.status }).toEqual({ what, status: 400 });
    }

    for (const id of created) {
      const end = await ended(id);
      expect(end.status).toBe(200);
    }
    expect((await task(liveId)).body.status).toBe('failed');
    expect((await task(created[0])).body.status).toBe('succeeded');
    await api('task list', 'GET', '/v1/vision/tasks?kind=video&limit=100');
    await api('task list with a token', 'GET', `/v1/vision/tasks?kind=video&access_token=${QUERY_TOKEN}`);

    // The operator's view shows the URL as stored for display.
    const views = [];
    for (const id of created) {
      const v = await call(`operator view ${id}`, `${svc.tasksUrl}/internal/v1/admin/tasks/${id}`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      expect(v.status).toBe(200);
      views.push(v.body.stream_url);
    }
    expect(views).toEqual([
      expect.stringMatching(
        /^http:\/\/\*\*\*@127\.0\.0\.1:\d+\/file\/clip\.mp4\?X-Amz-Algorithm=AWS4-HMAC-SHA256&/,
      ),
      `rtmp://127.0.0.1:${rtmp.port}/live/***`,
    ]);
  }, 480_000);

  it('shows none of them in any span, log line or answer', async () => {
    await svc.stop(); // flushes the last spans
    const found: string[] = [];
    otlp.batches.forEach((b, i) => findSecrets(`span batch ${i}`, b, found));
    svc
      .output()
      .split('\n')
      .forEach((line, i) => findSecrets(`log line ${i + 1}`, line, found));
    for (const a of answers) findSecrets(`answer to ${a.what}`, a, found);
    expect({ found, traceHeaders }).toEqual({ found: [], traceHeaders: [] });

    // What was searched is real: spans of the requests, log lines of the jobs, the answers read.
    const spans = receivedSpans(otlp);
    expect(spans.some((s) => s.service === 'gateway' && s.name === 'POST /v1/vision/tasks')).toBe(true);
    expect(spans.some((s) => s.service === 'inference' && s.name === 'POST /internal/v1/jobs')).toBe(true);
    expect(svc.output()).toContain('"msg":"job ended"');
    expect(answers.length).toBeGreaterThan(10);
  }, 120_000);
});
