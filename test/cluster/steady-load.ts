/**
 * A steady, bounded load through the route for the fault tests of test/cluster: a few callers in closed loops of
 * image detections (one small image each) and result reads, each outcome recorded. What a caller may see is only
 * what the API documents under a fault: success, or 503 with Retry-After. Anything else (another status, a reset
 * connection, no answer) is a failure, named with its call and time.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MEDIA } from './node-cluster';

export interface Outcome {
  call: 'image' | 'read';
  at: number;
  status?: number;
  retryAfter?: string | null;
  /** The start of a failed answer's body (which hop answered, with what). */
  body?: string;
  error?: string;
}

export interface SteadyLoad {
  /** Stops the loops and resolves with every outcome, once the calls in flight have ended. */
  stop(): Promise<Outcome[]>;
}

/** Outcomes a caller may not see: neither a success nor a 503 with Retry-After. */
export function undocumented(outcomes: Outcome[]): Outcome[] {
  return outcomes.filter(
    (o) => o.error !== undefined || !(o.status! < 300 || (o.status === 503 && o.retryAfter)),
  );
}

/**
 * Failed outcomes as an assertion prints them: how many, and the first and last three. A fault that breaks every call
 * for minutes fails hundreds, and listing each would push the rest of the run's output out of a CI log's tail.
 */
export function failures(outcomes: Outcome[]): { count: number; first: Outcome[]; last: Outcome[] } {
  return { count: outcomes.length, first: outcomes.slice(0, 3), last: outcomes.slice(3).slice(-3) };
}

/**
 * Starts `images` callers of POST /v1/vision/image-detections and `readers` of GET /v1/vision/tasks/{task}/results,
 * in closed loops until stop(), each waiting its pause between calls (an image caller 200 ms, a reader 500 ms: a call
 * is nearly always in flight, and the load stays under the key's rate limits, whose 429 is no fault's answer; the
 * release under test gives the key a daily image quota that the load cannot use up). The connections are Traefik's:
 * the pods behind it come and go, the route stays.
 */
export function startSteadyLoad(opts: {
  baseUrl: string;
  key: string;
  task: string;
  images?: number;
  readers?: number;
  pauseMs?: { image: number; read: number };
}): SteadyLoad {
  const pauseMs = opts.pauseMs ?? { image: 200, read: 500 };
  const image = readFileSync(path.join(MEDIA, 'images/street_people_car_coco9891.jpg'));
  const outcomes: Outcome[] = [];
  let running = true;
  const started = Date.now();
  const once = async (call: Outcome['call']): Promise<void> => {
    const at = Date.now() - started;
    try {
      let r: Response;
      if (call === 'image') {
        const form = new FormData();
        form.append('scene_code', 'person_vehicle');
        form.append('files', new Blob([image]), 'street.jpg');
        r = await fetch(`${opts.baseUrl}/v1/vision/image-detections`, {
          method: 'POST',
          body: form,
          headers: { authorization: `Bearer ${opts.key}`, 'idempotency-key': randomUUID() },
          signal: AbortSignal.timeout(60_000),
        });
      } else {
        r = await fetch(`${opts.baseUrl}/v1/vision/tasks/${opts.task}/results?limit=20`, {
          headers: { authorization: `Bearer ${opts.key}` },
          signal: AbortSignal.timeout(60_000),
        });
      }
      const body = await r.text();
      outcomes.push({
        call,
        at,
        status: r.status,
        retryAfter: r.headers.get('retry-after'),
        ...(r.status >= 300 ? { body: body.slice(0, 400) } : {}),
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      outcomes.push({ call, at, error: e.cause?.code ?? e.cause?.message ?? e.message });
    }
  };
  const loop = async (call: Outcome['call']) => {
    while (running) {
      await once(call);
      await new Promise((resolve) => setTimeout(resolve, pauseMs[call]));
    }
  };
  const loops = [
    ...Array.from({ length: opts.images ?? 3 }, () => loop('image')),
    ...Array.from({ length: opts.readers ?? 1 }, () => loop('read')),
  ];
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}
