/**
 * The breaker around inference in the standalone process (docs/OVERLOAD.md), with a process of its own on the
 * hop from images to inference (test/helpers/tcp-relay.js, reached through INFERENCE_URL): inference itself runs
 * inside the standalone process, and stopping that process would stop the gateway and the test's own caller too.
 * - The relay stopped (SIGSTOP: connections accepted, nothing answered), then a backend that answers after 10 s.
 * - Calls one at a time: the breaker opens within 5 s of the hang (the hang bound, IMAGES_BREAKER_HANG_MS, and
 *   room for the machine), none waiting past its documented bound, and the next call gets 503
 *   OP-TASK-BREAKER-OPEN with Retry-After at once.
 * - Back to normal: the first call made once the Retry-After has passed is the half-open trial, served, and it
 *   closes the breaker, although the scene list's copy is stale by then (its refresh does not take the trial).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MEDIA, startStandaloneStack, type ApiResponse, type TestStack } from '../helpers/stack';

const KEY = 'breaker-acme-0123456789abcdef';
const IMAGE = readFileSync(path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg'));
/** The longest one image call may wait on a backend that does not answer: IMAGES_DETECT_TIMEOUT_MS (docs/OVERLOAD.md). */
const DETECT_CEILING_MS = 10_000;
/** What a loaded test machine may add to it (the call's own work, the hops). */
const SLACK_MS = 10_000;
/** The breaker opens this soon after the backend stops answering, at any traffic (docs/OVERLOAD.md). */
const OPENS_WITHIN_MS = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('standalone: inference stopped or slow, calls one at a time', () => {
  let stack: TestStack;
  let relay: ChildProcess;
  let relayOut = '';
  /** Sends the relay a command and waits for its acknowledgement. */
  const command = async (line: string) => {
    const seen = relayOut.length;
    relay.stdin!.write(`${line}\n`);
    while (!relayOut.slice(seen).includes(`ok ${line}\n`)) await sleep(20);
  };
  const imageCall = () => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('files', new Blob([IMAGE]), 'street.jpg');
    return stack.api('POST', '/v1/vision/image-detections', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
  };

  /** Calls one at a time until the breaker answers; each call's wait is kept, and when it opened. */
  const untilOpen = async () => {
    const since = Date.now();
    let open: ApiResponse | undefined;
    let openedAfter = Number.POSITIVE_INFINITY;
    const waited: number[] = [];
    for (let i = 0; i < 10 && !open; i++) {
      const t0 = Date.now();
      const r = await imageCall();
      waited.push(Date.now() - t0);
      if (r.status === 503) {
        expect(r.body.error.code).toBe('OP-TASK-BREAKER-OPEN');
        open = r;
        openedAfter = Date.now() - since;
      } else {
        // The image failed, not the call (partial success), and it was not charged.
        expect(r.status).toBe(201);
        expect(r.body.results[0].error_code).toBe('OP-TASK-UPSTREAM-DOWN');
      }
    }
    return { open, waited, openedAfter };
  };

  /** The backend is back: the first call once the Retry-After has passed is the trial, and it is served. */
  const firstAfterResetServed = async (open: ApiResponse | undefined) => {
    await sleep(1000 * Number(open?.headers.get('retry-after') ?? 1));
    const r = await imageCall();
    expect([r.status, r.body.error?.code]).toEqual([201, undefined]);
    expect(r.body.results[0].status).toBe('succeeded');
    expect((await imageCall()).status).toBe(201);
  };

  const expectOpenedInBound = ({ open, waited, openedAfter }: Awaited<ReturnType<typeof untilOpen>>) => {
    expect(open?.body.error.details.reason).toBe('breaker_open');
    expect(Number(open?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(openedAfter).toBeLessThanOrEqual(OPENS_WITHIN_MS);
    // Opened after a few failed calls, none of them waiting past its bound.
    expect(waited.length).toBeLessThanOrEqual(5);
    for (const ms of waited) expect(ms).toBeLessThanOrEqual(DETECT_CEILING_MS + SLACK_MS);
  };

  beforeAll(async () => {
    relay = spawn(process.execPath, [path.join(__dirname, '../helpers/tcp-relay.js')], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const relayPort = await new Promise<number>((resolve, reject) => {
      relay.stdout!.on('data', (b: Buffer) => {
        relayOut += b.toString();
        const m = /listening (\d+)/.exec(relayOut);
        if (m) resolve(Number(m[1]));
      });
      relay.once('exit', (code) => reject(new Error(`the relay exited (${code})`)));
    });
    stack = await startStandaloneStack({
      keys: `${KEY}:acme`,
      env: {
        INFERENCE_URL: `http://127.0.0.1:${relayPort}`,
        IMAGES_BREAKER_RESET_MS: '3000',
        // The scene list's copy is stale when the breaker turns half-open: its refresh must leave the trial alone.
        IMAGES_SCENE_CACHE_MS: '1000',
      },
    });
    await command(`target ${stack.standalone!.services.inference.port}`);
    // Measured calls: the detect timeout comes from their time (below the ceiling), and the scene list is held.
    for (let i = 0; i < 5; i++) expect((await imageCall()).status).toBe(201);
  }, 180_000);
  afterAll(async () => {
    relay?.kill('SIGCONT');
    relay?.kill('SIGKILL');
    await stack?.close();
  });

  it('inference stopped: opens the breaker within 5 s, answers OP-TASK-BREAKER-OPEN; after SIGCONT the first call after the reset is served', async () => {
    relay.kill('SIGSTOP');
    let seen: Awaited<ReturnType<typeof untilOpen>>;
    try {
      seen = await untilOpen();
    } finally {
      relay.kill('SIGCONT');
    }
    expectOpenedInBound(seen);
    await firstAfterResetServed(seen.open);
  }, 180_000);

  it('inference answering after 10 s: opens the breaker within 5 s; once it answers at once the first call after the reset is served', async () => {
    await command('slow');
    let seen: Awaited<ReturnType<typeof untilOpen>>;
    try {
      seen = await untilOpen();
    } finally {
      await command('fast');
    }
    expectOpenedInBound(seen);
    await firstAfterResetServed(seen.open);
  }, 180_000);
});
