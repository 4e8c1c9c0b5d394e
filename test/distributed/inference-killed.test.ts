import { randomUUID } from 'node:crypto';
import { startMediaServer, type MediaServer } from '../helpers/media-server';
import type { DistributedStack } from '../helpers/distributed';
import {
  awaitObservabilityBackends,
  newTraceparent,
  promQuery,
  waitForProm,
  waitForTrace,
} from '../helpers/observability';
import {
  client,
  clip,
  describeDistributed,
  expectChargesMatchTasks,
  expectUnavailable,
  sleep,
  startFaultStack,
  waitAllTerminal,
  waitFor,
} from './support';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

/**
 * How many of the task's stored frames have a seq of at least `from` (the seq is the frame id's last part). It
 * reads the pages a second apart until one is short (it caught up with a running task: a live job's frames keep
 * coming, so a page is never empty for long) or the last, and counts 0 while the key is held to its rate (429).
 */
async function framesFromSeq(c: ReturnType<typeof client>, id: string, from: number): Promise<number> {
  const limit = 500;
  let n = 0;
  let cursor = '';
  for (let page = 0; page < 50; page++) {
    const q = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
    const r = await c.api('GET', `/v1/vision/tasks/${id}/results?${q}`);
    if (r.status === 429) return 0;
    expect(r.status).toBe(200);
    const items = r.body.items as { frame_id: string }[];
    n += items.filter((f) => Number(f.frame_id.split(':').pop()) >= from).length;
    cursor = r.body.next_cursor as string;
    if (!cursor || items.length < limit) break;
    await sleep(1000);
  }
  await sleep(1000);
  return n;
}

// It reads traces and series: it starts once the stack runs Jaeger and Prometheus.
awaitObservabilityBackends();

describeDistributed('fault: the inference backend is killed while tasks run', () => {
  let stack: DistributedStack;
  let media: MediaServer;
  beforeAll(async () => {
    stack = await startFaultStack({
      env: {
        QUOTA_VIDEO_DAILY: '100',
        TASKS_MAX_ACTIVE: '20',
        TASKS_BREAKER_VOLUME: '2',
        TASKS_BREAKER_RESET_MS: '3000',
        TASKS_BACKEND_TIMEOUT_MS: '3000',
        TASKS_POLL_INTERVAL_MS: '300',
        TASKS_RECONCILE_INTERVAL_MS: '500',
      },
    });
    media = await startMediaServer({ 'pedestrians.mov': clip('pedestrians_vtest_opencv_10s.mov') });
  }, 180_000);
  afterAll(async () => {
    await media?.close();
    await stack?.close();
  });

  it('fails creations fast once the breaker opens, recovers, takes the lost jobs over, and charges no task twice', async () => {
    const c = client(stack);
    const id = stack.deployment.id;
    // Prometheus scrapes every process of the deployment.
    await waitForProm(
      'up == 1 for all six services',
      `up{deployment="${id}"} == 1`,
      (r) => new Set(r.map((x) => x.metric.service)).size === 6,
    );
    const breaker = `vision_breaker_state{deployment="${id}",service="tasks",upstream="inference"`;
    await waitForProm('the breaker closed', `${breaker},state="closed"} == 1`, (r) => r.length === 1);
    const live = `${media.url}/live/pedestrians.mov`;
    const running: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await c.createByUrl(live);
      expect(r.status).toBe(201);
      running.push(r.body.task_id);
    }
    expect((await c.quota()).used).toBe(2);
    await waitFor(
      'frames of both tasks',
      async () =>
        (await Promise.all(running.map((t) => framesFromSeq(c, t, 0)))).every((n) => n > 0)
          ? true
          : undefined,
      60_000,
    );

    await stack.kill('inference', { signal: 'SIGKILL' });
    const storedAtKill = await Promise.all(running.map((t) => framesFromSeq(c, t, 0)));

    // Creations now fail with 503 (backend down), and once the breaker is open, with OP-TASK-BREAKER-OPEN.
    const codes: string[] = [];
    for (let i = 0; i < 15 && !codes.includes('OP-TASK-BREAKER-OPEN'); i++) {
      const r = await c.createByUrl(live);
      expectUnavailable(r, ['OP-TASK-UPSTREAM-DOWN', 'OP-TASK-BREAKER-OPEN']);
      codes.push(r.body.error.code);
    }
    expect(codes).toContain('OP-TASK-BREAKER-OPEN');
    // While it is open, a creation is refused before anything is charged.
    const refusedTrace = newTraceparent();
    const open = await c.api('POST', '/v1/vision/tasks', {
      headers: {
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
        traceparent: refusedTrace.header,
      },
      body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: live }),
    });
    expectUnavailable(open, ['OP-TASK-BREAKER-OPEN']);
    expect((await c.quota()).used).toBe(2);
    // Prometheus saw the breaker open (over the last minutes: it goes half-open after its reset time).
    await waitForProm(
      'the breaker open',
      `max_over_time(${breaker},state="open"}[5m]) == 1`,
      (r) => r.length === 1,
      30_000,
    );
    // Jaeger: the refusal's trace says why (breaker.state=open and the breaker.open event on the tasks span).
    await waitForTrace('the trace of the refused create', refusedTrace.traceId, (spans) =>
      spans.some(
        (x) =>
          x.service === 'tasks' &&
          x.tag['breaker.state'] === 'open' &&
          x.events.some((e) => e.event === 'breaker.open'),
      ),
    );

    await stack.restart('inference');

    // The breaker closes again after its reset time: a creation succeeds.
    // waitFor retries whatever throws, so a wrong answer ends the wait as an outcome and fails the test below
    // (only the two 503 codes of a backend still coming back are retried).
    const retried = ['OP-TASK-UPSTREAM-DOWN', 'OP-TASK-BREAKER-OPEN'];
    const outcome = await waitFor(
      'a creation to succeed after the backend came back',
      async () => {
        const r = await c.createByUrl(live);
        if (r.status === 201) return { created: r.body as { task_id: string } };
        if (r.status !== 503 || !retried.includes(r.body?.error?.code)) return { wrong: r };
        await sleep(500);
        return undefined;
      },
      60_000,
    );
    if (outcome.wrong) expectUnavailable(outcome.wrong, retried);
    expect(outcome.created).toMatchObject({ task_id: expect.any(String) });
    const resumed = outcome.created as { task_id: string };
    // ... and closed again, after passing through half-open.
    await waitForProm('the breaker closed again', `${breaker},state="closed"} == 1`, (r) => r.length === 1);
    const transitions = await promQuery(
      `vision_breaker_transitions_total{deployment="${id}",service="tasks",upstream="inference"}`,
    );
    expect(new Set(transitions.filter((x) => Number(x.value[1]) > 0).map((x) => x.metric.state))).toEqual(
      new Set(['open', 'half_open', 'closed']),
    );
    const stop = await c.api('POST', `/v1/vision/tasks/${resumed.task_id}/stop`);
    expect(stop.status).toBe(200);

    // The jobs that ran when the backend died were taken over by the restarted backend once the dead one's lease ran
    // out (docs/ARCHITECTURE.md, "Who runs a video job"): their frames go on from the last checkpoint, under the same
    // run (no seq of a job started again from scratch, 2^28 and above), and no task was charged again.
    for (const [i, id] of running.entries()) {
      await waitFor(
        `frames of the job of ${id} after the takeover`,
        async () => ((await framesFromSeq(c, id, 0)) > storedAtKill[i] + 3 ? true : undefined),
        90_000,
      );
      expect(await framesFromSeq(c, id, 2 ** 28)).toBe(0);
      expect(['running', 'succeeded']).toContain((await c.task(id)).body.status);
      await c.api('POST', `/v1/vision/tasks/${id}/stop`);
    }
    await waitAllTerminal(c);
    for (const id of running) expect(['succeeded', 'stopped']).toContain((await c.task(id)).body.status);
    await expectChargesMatchTasks(c);
    expect((await c.tasks()).length).toBe(3);
  }, 480_000);
});
