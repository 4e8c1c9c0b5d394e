/**
 * The breaker around inference in the standalone process (docs/OVERLOAD.md), with a process of its own on the
 * hop from images to inference (test/helpers/tcp-relay.js, reached through INFERENCE_URL): inference itself runs
 * inside the standalone process, and stopping that process would stop the gateway and the test's own caller too.
 * - The relay stopped (SIGSTOP: connections accepted, nothing answered), then a backend that answers after 10 s.
 * - Calls one at a time: the breaker opens within a few calls, none waiting past its documented bound, and the
 *   next call gets 503 OP-TASK-BREAKER-OPEN with Retry-After at once; back to normal, the probe closes it.
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

  /** Calls one at a time until the breaker answers; each call's wait is kept. */
  const untilOpen = async () => {
    let open: ApiResponse | undefined;
    const waited: number[] = [];
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
    return { open, waited };
  };

  /** Calls, waiting as told, until one is served: the half-open probe closed the breaker. */
  const untilServed = async () => {
    let served: ApiResponse | undefined;
    for (let i = 0; i < 30 && !served; i++) {
      const r = await imageCall();
      if (r.status === 201 && r.body.results[0].status === 'succeeded') served = r;
      else await sleep(1000 * Math.max(1, Number(r.headers.get('retry-after') ?? 1)));
    }
    expect(served?.body.results[0].status).toBe('succeeded');
    expect((await imageCall()).status).toBe(201);
  };

  const expectOpenedInBound = ({ open, waited }: Awaited<ReturnType<typeof untilOpen>>) => {
    expect(open?.body.error.details.reason).toBe('breaker_open');
    expect(Number(open?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
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
      env: { INFERENCE_URL: `http://127.0.0.1:${relayPort}`, IMAGES_BREAKER_RESET_MS: '3000' },
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

  it('inference stopped: opens the breaker within seconds, answers OP-TASK-BREAKER-OPEN, closes after SIGCONT', async () => {
    relay.kill('SIGSTOP');
    let seen: Awaited<ReturnType<typeof untilOpen>>;
    try {
      seen = await untilOpen();
    } finally {
      relay.kill('SIGCONT');
    }
    expectOpenedInBound(seen);
    await untilServed();
  }, 180_000);

  it('inference answering after 10 s: opens the breaker within seconds, closes once it answers at once', async () => {
    await command('slow');
    let seen: Awaited<ReturnType<typeof untilOpen>>;
    try {
      seen = await untilOpen();
    } finally {
      await command('fast');
    }
    expectOpenedInBound(seen);
    await untilServed();
  }, 180_000);
});
