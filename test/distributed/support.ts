import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  startDistributedStack,
  type DistributedStack,
  type DistributedStackOptions,
} from '../helpers/distributed';
import { waitFor } from '../helpers/media-server';
import { MEDIA, type ApiResponse } from '../helpers/stack';

/** The fault tests need the real servers: they run only under scripts/test-distributed.sh (E2E_STACK=distributed). */
export const describeDistributed = process.env.E2E_STACK === 'distributed' ? describe : describe.skip;

/**
 * The container tests need the services as containers of the service image: VISION_DEPLOYMENT_RUNTIME=container
 * (scripts/distributed/container-runtime.js). Without it their file lists them as skipped, with the command.
 */
export const CONTAINERS = process.env.VISION_DEPLOYMENT_RUNTIME === 'container';
export const describeContainers = CONTAINERS ? describeDistributed : describe.skip;

export const KEY = 'dist-fault-acme-0123456789';
export const clip = (name: string) => path.join(MEDIA, 'videos', name);
export const TERMINAL = ['stopped', 'succeeded', 'failed', 'refunded'];
export { waitFor };

export interface Frame {
  frame_id: string;
  frame_time_ms: number;
}

export function startFaultStack(opts: DistributedStackOptions = {}): Promise<DistributedStack> {
  return startDistributedStack({ keys: `${KEY}:acme`, ...opts });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls against one stack with the test key. */
export function client(stack: DistributedStack, base = stack.url, key = KEY) {
  const api = (
    method: string,
    urlPath: string,
    init: { headers?: Record<string, string>; body?: RequestInit['body'] } = {},
  ) => stack.apiAt(base, method, urlPath, { key, ...init });
  const c = {
    api,
    /**
     * For reads whose 503 docs/openapi.yaml does not list yet (GET task, task list, results): the
     * envelope is checked here instead of the OpenAPI document.
     */
    async raw(method: string, urlPath: string): Promise<ApiResponse> {
      const res = await fetch(`${base}${urlPath}`, { method, headers: { authorization: `Bearer ${key}` } });
      const body = (await res.json()) as { error?: { code?: unknown; request_id?: unknown } };
      if (res.status >= 400) {
        expect(typeof body.error?.code).toBe('string');
        expect(body.error?.request_id).toBe(res.headers.get('x-request-id'));
      }
      return { status: res.status, headers: res.headers, body };
    },
    createByUrl: (streamUrl: string, idem: string = randomUUID(), scene = 'person_vehicle') =>
      api('POST', '/v1/vision/tasks', {
        headers: { 'content-type': 'application/json', 'idempotency-key': idem },
        body: JSON.stringify({ scene_code: scene, stream_url: streamUrl }),
      }),
    upload: (file: string, idem: string = randomUUID(), scene = 'person_vehicle') => {
      const form = new FormData();
      form.append('scene_code', scene);
      form.append('file', new Blob([readFileSync(file)]), path.basename(file));
      return api('POST', '/v1/vision/video-tasks', { headers: { 'idempotency-key': idem }, body: form });
    },
    task: (id: string) => api('GET', `/v1/vision/tasks/${id}`),
    /** Every video task of the key (all pages). */
    async tasks(): Promise<{ task_id: string; status: string; request_id: string }[]> {
      const out: { task_id: string; status: string; request_id: string }[] = [];
      let cursor = '';
      for (let i = 0; i < 100; i++) {
        const q = new URLSearchParams({ kind: 'video', limit: '100', ...(cursor ? { cursor } : {}) });
        const r = await api('GET', `/v1/vision/tasks?${q}`);
        expect(r.status).toBe(200);
        out.push(...r.body.items);
        if (!r.body.next_cursor) return out;
        cursor = r.body.next_cursor;
      }
      throw new Error('too many pages');
    },
    async quota(): Promise<{ used: number; held: number }> {
      const r = await api('GET', '/v1/vision/quota');
      expect(r.status).toBe(200);
      return r.body.video_tasks;
    },
    waitForStatus: (id: string, statuses: string[], timeoutMs = 120_000) =>
      waitFor(
        `task ${id} to reach ${statuses.join('|')}`,
        async () => {
          const r = await c.task(id);
          return r.status === 200 && statuses.includes(r.body.status)
            ? (r.body as { status: string })
            : undefined;
        },
        timeoutMs,
      ),
    /**
     * A stored picture (an event's snapshot or best shot) as bytes, read as a client reads it: a 429 of the key's
     * rate is waited out for its Retry-After and the read made again.
     */
    async picture(picturePath: string): Promise<{ status: number; bytes: Buffer }> {
      for (let i = 0; ; i++) {
        const res = await fetch(`${base}${picturePath}`, { headers: { authorization: `Bearer ${key}` } });
        const bytes = Buffer.from(await res.arrayBuffer());
        if (res.status !== 429 || i === 20) return { status: res.status, bytes };
        await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
      }
    },
    /**
     * Every frame of a task, paging to the end (the last page has an empty cursor), as a client pages: a 429 of the
     * key's rate (the polls before it share the key) is waited out for its Retry-After and the page read again.
     */
    async allFrames(id: string, limit = 100): Promise<Frame[]> {
      const frames: Frame[] = [];
      let cursor = '';
      for (let page = 0, held = 0; page < 1000; page++) {
        const q = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
        const r = await api('GET', `/v1/vision/tasks/${id}/results?${q}`);
        if (r.status === 429 && held++ < 20) {
          await sleep(Number(r.headers.get('retry-after') ?? 1) * 1000);
          page--;
          continue;
        }
        expect(r.status).toBe(200);
        frames.push(...r.body.items);
        if (r.body.next_cursor === '') return frames;
        cursor = r.body.next_cursor;
      }
      throw new Error('too many pages');
    },
  };
  return c;
}

/** A 5xx answer must be a 503 with one of the spec's codes (never a 500 or a bare proxy error). */
export function expectUnavailable(r: ApiResponse, codes: string[]): void {
  expect(r.status).toBe(503);
  expect(codes).toContain(r.body?.error?.code);
}

/**
 * The books balance: every task that was not refunded is charged exactly once, and nothing else is
 * (quota `used` counts charges minus refunds).
 */
export async function expectChargesMatchTasks(c: ReturnType<typeof client>): Promise<void> {
  const tasks = await c.tasks();
  const charged = tasks.filter((t) => t.status !== 'refunded').length;
  expect((await c.quota()).used).toBe(charged);
}

/**
 * The task succeeds and its results hold the frames of a fault-free reference run (`expected`, their
 * frame_time_ms), each exactly once.
 */
export async function expectSucceededWithEveryFrameOnce(
  c: ReturnType<typeof client>,
  id: string,
  expected: number[],
): Promise<void> {
  expect((await c.waitForStatus(id, ['succeeded', 'failed'], 240_000)).status).toBe('succeeded');
  const frames = await waitFor(
    'every frame to reach results',
    async () => {
      const f = await c.allFrames(id, 500);
      return f.length >= expected.length ? f : undefined;
    },
    120_000,
  );
  expect(frames.map((f) => f.frame_time_ms)).toEqual(expected);
  expect(new Set(frames.map((f) => f.frame_id)).size).toBe(frames.length);
}

/** Every task ends (none stuck in submitting/resolving/running/stopping). */
export async function waitAllTerminal(c: ReturnType<typeof client>, timeoutMs = 120_000): Promise<void> {
  await waitFor(
    'every task to end',
    async () => {
      const tasks = await c.tasks();
      return tasks.every((t) => TERMINAL.includes(t.status)) ? true : undefined;
    },
    timeoutMs,
  );
}
