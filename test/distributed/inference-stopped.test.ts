import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DistributedStack } from '../helpers/distributed';
import { MEDIA } from '../helpers/stack';
import { CONTAINERS, client, describeDistributed, sleep, startFaultStack } from './support';

const IMAGE = readFileSync(path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg'));
/** The longest one image call may wait on a backend that does not answer: IMAGES_DETECT_TIMEOUT_MS (docs/OVERLOAD.md). */
const DETECT_CEILING_MS = 10_000;
/** What a loaded test machine may add to it (the call's own work, the hops). */
const SLACK_MS = 10_000;

/**
 * Inference stopped (SIGSTOP: it accepts connections and never answers), one image call at a time: the
 * breaker around inference opens within a few calls, each waiting at most its documented bound, and the
 * next call gets 503 OP-TASK-BREAKER-OPEN with Retry-After at once; after SIGCONT the probe closes it.
 */
// SIGSTOP reaches a service process of the launcher, not one inside a container.
const describeProcesses = CONTAINERS ? describe.skip : describeDistributed;

describeProcesses('fault: inference stopped, calls one at a time', () => {
  let stack: DistributedStack;
  let pid: number;
  const imageCall = () => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('files', new Blob([IMAGE]), 'street.jpg');
    return client(stack).api('POST', '/v1/vision/image-detections', {
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
  };
  beforeAll(async () => {
    stack = await startFaultStack({ env: { IMAGES_BREAKER_RESET_MS: '3000' } });
    pid = stack.deployment.procs.inference[0]?.child?.pid as number;
    // Measured calls: the detect timeout comes from their time (below the ceiling), and the scene list is held.
    for (let i = 0; i < 5; i++) expect((await imageCall()).status).toBe(201);
  }, 180_000);
  afterAll(async () => {
    if (pid) process.kill(pid, 'SIGCONT');
    await stack?.close();
  });

  it('opens the breaker within seconds, answers OP-TASK-BREAKER-OPEN with Retry-After, and closes after SIGCONT', async () => {
    process.kill(pid, 'SIGSTOP');
    let open: Awaited<ReturnType<typeof imageCall>> | undefined;
    const waited: number[] = [];
    try {
      for (let i = 0; i < 10 && !open; i++) {
        const t0 = Date.now();
        const r = await imageCall();
        waited.push(Date.now() - t0);
        if (r.status === 503) {
          expect(r.body.error.code).toBe('OP-TASK-BREAKER-OPEN');
          open = r;
        } else {
          // The image failed, not the call (partial success), and it was not charged.
          expect(r.status).toBe(201);
          expect(r.body.results[0].error_code).toBe('OP-TASK-UPSTREAM-DOWN');
        }
      }
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(open?.body.error.details.reason).toBe('breaker_open');
    expect(Number(open?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Opened after a few failed calls, none of them waiting past its bound.
    expect(waited.length).toBeLessThanOrEqual(5);
    for (const ms of waited) expect(ms).toBeLessThanOrEqual(DETECT_CEILING_MS + SLACK_MS);

    // Back: once the probe is due, a call goes through and closes the breaker.
    let served: Awaited<ReturnType<typeof imageCall>> | undefined;
    for (let i = 0; i < 20 && !served; i++) {
      const r = await imageCall();
      if (r.status === 201 && r.body.results[0].status === 'succeeded') served = r;
      else await sleep(1000 * Math.max(1, Number(r.headers.get('retry-after') ?? 1)));
    }
    expect(served?.body.results[0].status).toBe('succeeded');
    expect((await imageCall()).status).toBe(201);
  }, 180_000);
});
