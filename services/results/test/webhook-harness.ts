import { randomUUID } from 'node:crypto';
import { IDENTITY_HEADER, InProcessBus, TOPICS, systemClock } from '@vision/shared';
import { start, type RunningResults } from '../src/index';
import { TasksStub, logger, waitFor } from './helpers';
import { identityDir, signFor } from '../../../test/helpers/identity';

export interface Call {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test convenience
  body: any;
}

export interface WebhookHarness {
  bus: InProcessBus;
  svc: RunningResults;
  api(method: string, path: string, opts?: { subject?: string; body?: unknown }): Promise<Call>;
  /** Publishes a task event as the tasks service's outbox would (occurred now). */
  taskEvent(taskId: string, status: string, f?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

/** The results service with webhook settings fast enough for tests, on the real clock. */
export async function startWebhookHarness(env: Record<string, string> = {}): Promise<WebhookHarness> {
  const bus = new InProcessBus({ logger });
  const tasksStub = new TasksStub();
  await tasksStub.start();
  const svc = await start({
    env: {
      VISION_IDENTITY_DIR: identityDir(),
      VISION_DATA_DIR: ':memory:',
      TASKS_URL: tasksStub.url,
      RESULTS_JANITOR_INTERVAL_MS: '0',
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      RESULTS_WEBHOOK_RETRY_BASE_MS: '50',
      RESULTS_WEBHOOK_RETRY_MAX_MS: '400',
      RESULTS_WEBHOOK_POLL_MS: '20',
      RESULTS_WEBHOOK_TIMEOUT_MS: '1000',
      RESULTS_WEBHOOK_FRAMES_INTERVAL_MS: '200',
      ...env,
    },
    bus,
    clock: systemClock,
    logger,
    port: 0,
  });
  let n = 0;
  return {
    bus,
    svc,
    async api(method, path, opts = {}) {
      n += 1;
      const headers: Record<string, string> = {
        [IDENTITY_HEADER]: signFor({ subject: opts.subject ?? 'alice', requestId: `w-${n}` }, 'results', {
          method,
          target: path,
        }),
      };
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${svc.url}${path}`, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
    },
    async taskEvent(taskId, status, f = {}) {
      const eventId = randomUUID();
      await bus.publish(TOPICS.taskEvents, [
        {
          key: taskId,
          value: {
            schema: 1,
            event_id: eventId,
            type: 'task.status_changed',
            task_id: taskId,
            subject: 'alice',
            kind: 'video',
            scene_code: 'person_vehicle',
            status,
            business_threshold: 0.8,
            lower_bound: 0.3,
            result_expires_at: '2030-01-01T00:00:00.000Z',
            occurred_at: new Date().toISOString(),
            ...f,
          },
        },
      ]);
      return eventId;
    },
    async close() {
      await svc.close();
      await bus.close();
      await tasksStub.close();
    },
  };
}

export { waitFor };
