import type { Server } from 'node:http';
import {
  FakeClock,
  IDENTITY_HEADER,
  InProcessBus,
  TOPICS,
  closeServer,
  createLogger,
  createServiceApp,
  listen,
  type Bus,
} from '@vision/shared';
import type { PublicFrame } from '../src/domain/frames';
import { start, type RunningResults } from '../src/index';
import { identityDir, jobGrantFor, signFor, verifierOfAll } from '../../../test/helpers/identity';

export const logger = createLogger('results-test', { level: 'silent' });

export interface Obj {
  label: string;
  score: number;
  track_id?: string;
}

export function frameMessage(taskId: string, seq: number, objects: Obj[] = [], lowerBound = 0.3) {
  return {
    key: taskId,
    value: {
      schema: 1,
      type: 'frame',
      event_id: `${taskId}:${seq}`,
      task_id: taskId,
      seq,
      frame_id: `${taskId}-f${seq}`,
      frame_time_ms: 1000 * seq,
      image: { width: 640, height: 360 },
      objects: objects.map((o, i) => ({
        label: o.label,
        score: o.score,
        bbox: { format: 'cxcywh_normalized', cx: 0.5, cy: 0.5, width: 0.1 + i * 0.01, height: 0.2 },
        track_id: o.track_id ?? String(i + 1),
      })),
      lower_bound: lowerBound,
      grant: jobGrantFor(taskId),
    },
  };
}

/** Car 7 rises through a line at y 0.5 (seq 5) into a zone above it (seq 6) and is gone from seq 10 on. */
export function risingCarFrame(taskId: string, seq: number) {
  const objects =
    seq < 10
      ? [
          {
            label: 'car',
            score: 0.9,
            track_id: '7',
            bbox: { format: 'cxcywh_normalized', cx: 0.5, cy: 0.8 - 0.08 * seq, width: 0.1, height: 0.1 },
          },
        ]
      : [];
  return {
    key: taskId,
    value: {
      schema: 1,
      type: 'frame',
      task_id: taskId,
      seq,
      frame_id: `f${seq}`,
      frame_time_ms: 1000 * seq,
      image: { width: 640, height: 360 },
      objects,
      lower_bound: 0.3,
      grant: jobGrantFor(taskId),
    },
  };
}

export function endMessage(taskId: string, frames: number, status = 'succeeded') {
  return {
    key: taskId,
    value: {
      schema: 1,
      type: 'end',
      event_id: `${taskId}:end`,
      task_id: taskId,
      seq: frames,
      frames,
      status,
      grant: jobGrantFor(taskId),
    },
  };
}

export async function publishFrames(bus: Bus, taskId: string, from: number, to: number, objects?: Obj[]) {
  const msgs = [];
  for (let seq = from; seq < to; seq++) msgs.push(frameMessage(taskId, seq, objects));
  for (let i = 0; i < msgs.length; i += 1000) await bus.publish(TOPICS.frames, msgs.slice(i, i + 1000));
}

export interface TaskFields {
  subject?: string;
  status?: string;
  kind?: 'video' | 'image';
  business_threshold?: number;
  lower_bound?: number;
  result_expires_at?: string;
  occurred_at?: string;
  /** The task's zones and lines, as tasks sends them (with `rules_version`, 1 unless given). */
  rules?: unknown;
  rules_version?: number;
}

export function taskBody(taskId: string, f: TaskFields = {}) {
  return {
    task_id: taskId,
    subject: f.subject ?? 'alice',
    kind: f.kind ?? 'video',
    scene_code: 'person_vehicle',
    status: f.status ?? 'running',
    business_threshold: f.business_threshold ?? 0.8,
    lower_bound: f.lower_bound ?? 0.3,
    result_expires_at: f.result_expires_at ?? '2026-04-01T00:00:00.000Z',
  };
}

let eventCounter = 0;
export async function publishTaskEvent(bus: Bus, taskId: string, f: TaskFields = {}) {
  eventCounter += 1;
  await bus.publish(TOPICS.taskEvents, [
    {
      key: taskId,
      value: {
        schema: 1,
        event_id: `ev-${eventCounter}`,
        type: 'task.status_changed',
        ...taskBody(taskId, f),
        occurred_at: f.occurred_at ?? '2026-01-01T00:00:00.000Z',
        ...(f.rules !== undefined && { rules_version: f.rules_version ?? 1, rules: f.rules }),
      },
    },
  ]);
}

export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A stand-in for the tasks service's internal task lookup (our own port contract). */
export class TasksStub {
  readonly tasks = new Map<string, ReturnType<typeof taskBody>>();
  readonly calls: { taskId: string; subject: string }[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    const app = createServiceApp(
      { name: 'tasks-stub', audience: 'tasks', logger, identity: verifierOfAll() },
      (a) => {
        a.get('/internal/v1/tasks/:id', (req, res) => {
          const id = String(req.params.id);
          this.calls.push({ taskId: id, subject: (res.locals.identity as { subject: string }).subject });
          const t = this.tasks.get(id);
          if (!t) {
            res
              .status(404)
              .json({ error: { code: 'OP-NOT-FOUND', message: 'no such task', request_id: 'x' } });
            return;
          }
          res.json(t);
        });
      },
    );
    this.server = await listen(app, 0, '127.0.0.1');
    const addr = this.server.address();
    this.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }

  async close(): Promise<void> {
    if (this.server) await closeServer(this.server);
  }
}

/** A results page or an error envelope, as a test sees it. */
export interface ReplyBody {
  items: PublicFrame[];
  next_cursor: string;
  error?: { code: string; message: string; details?: { reason?: string; field?: string } };
}

export interface Reply {
  status: number;
  body: ReplyBody;
  headers: Headers;
}

export interface Harness {
  bus: InProcessBus;
  clock: FakeClock;
  svc: RunningResults;
  tasksStub: TasksStub;
  get(taskId: string, subject: string, query?: Record<string, string>): Promise<Reply>;
  close(): Promise<void>;
}

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const bus = new InProcessBus({ logger });
  const clock = new FakeClock('2026-01-01T00:00:00Z');
  const tasksStub = new TasksStub();
  await tasksStub.start();
  const svc = await start({
    env: {
      VISION_IDENTITY_DIR: identityDir(),
      VISION_DATA_DIR: ':memory:',
      TASKS_URL: tasksStub.url,
      RESULTS_JANITOR_INTERVAL_MS: '0',
      LOG_LEVEL: 'silent',
      ...env,
    },
    bus,
    clock,
    logger,
    port: 0,
  });
  let n = 0;
  return {
    bus,
    clock,
    svc,
    tasksStub,
    async get(taskId, subject, query = {}) {
      n += 1;
      const qs = new URLSearchParams(query).toString();
      const target = `/v1/vision/tasks/${encodeURIComponent(taskId)}/results${qs ? `?${qs}` : ''}`;
      const res = await fetch(`${svc.url}${target}`, {
        headers: {
          [IDENTITY_HEADER]: signFor({ subject, requestId: `req-${n}` }, 'results', {
            method: 'GET',
            target,
          }),
        },
      });
      return { status: res.status, body: (await res.json()) as ReplyBody, headers: res.headers };
    },
    async close() {
      await svc.close();
      await bus.close();
      await tasksStub.close();
    },
  };
}
