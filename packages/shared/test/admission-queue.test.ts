import type { ApiError } from '../src';
import { AdmissionQueue, REASON, type Turn } from '../src';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('AdmissionQueue', () => {
  const queue = (maxInFlight: number, maxWaitMs: number) =>
    new AdmissionQueue({ queue: 'test_calls', what: 'test calls', maxInFlight, maxWaitMs });

  /** Runs one call of `ms` through `q`; resolves with 'ok' or the refusal's reason and Retry-After. */
  const call = (q: AdmissionQueue, subject: string, ms: number, deadline?: number, signal?: AbortSignal) =>
    q.enter(subject, { deadline, signal }).then(
      async (turn) => {
        await sleep(ms);
        turn.release();
        return 'ok';
      },
      (err: ApiError) => `${String(err.details?.reason)} ${err.headers?.['Retry-After']}`,
    );

  it('runs at most maxInFlight at once and starts the waiting ones as slots free', async () => {
    const q = queue(2, 5000);
    const results = Promise.all([1, 2, 3, 4].map(() => call(q, 'a', 50)));
    await sleep(10);
    expect(q.usage()).toEqual({ running: 2, waiting: 2 });
    expect(await results).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(q.usage()).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses at once, 503 overloaded with Retry-After, what would wait past the bound', async () => {
    const q = queue(1, 150);
    expect(await call(q, 'a', 100)).toBe('ok'); // measures a call: about 100 ms
    const first = call(q, 'a', 100);
    const second = call(q, 'a', 100); // waits about 100 ms: within the bound
    const started = Date.now();
    const third = await call(q, 'a', 100); // would wait about 200 ms
    expect(Date.now() - started).toBeLessThan(50);
    expect(third).toBe(`${REASON.overloaded} 1`);
    expect(await Promise.all([first, second])).toEqual(['ok', 'ok']);
  });

  it('with the answer bound, admits to wait only a call expected to be answered within it', async () => {
    const q = new AdmissionQueue({
      queue: 'test_calls',
      what: 'test calls',
      maxInFlight: 1,
      maxWaitMs: 150,
      bound: 'answer',
    });
    expect(await call(q, 'a', 100)).toBe('ok'); // measures a call: about 100 ms
    const first = call(q, 'a', 100);
    // It would wait about 100 ms (within the 150 ms a wait bound allows), then take about 100 ms: refused.
    expect(await call(q, 'a', 100)).toBe(`${REASON.overloaded} 1`);
    expect(await first).toBe('ok');
  });

  /** A queue of one slot and the answer bound, on its own clock, that has measured calls of these durations (ms). */
  const measuredAnswerQueue = async (durations: number[], subject = 'a') => {
    const clock = { t: 0 };
    const q = new AdmissionQueue({
      queue: 'test_calls',
      what: 'test calls',
      maxInFlight: 1,
      maxWaitMs: 1000,
      bound: 'answer',
      now: () => clock.t,
    });
    for (const ms of durations) {
      const turn = await q.enter(subject);
      clock.t += ms;
      turn.release();
    }
    return { q, clock };
  };

  it('with the answer bound, lets fewer calls wait when call times vary than when they are steady', async () => {
    /** How many calls the queue lets wait behind a running one before it refuses one. */
    const admittedToWait = async (q: AdmissionQueue) => {
      const running = await q.enter('a');
      const waiting: Promise<Turn>[] = [];
      for (;;) {
        const entered = q.enter('a');
        if (q.usage().waiting === waiting.length) {
          await expect(entered).rejects.toMatchObject({ details: { reason: REASON.overloaded } });
          break;
        }
        waiting.push(entered);
      }
      running.release();
      for (const turn of waiting) (await turn).release();
      return waiting.length;
    };
    // Steady calls of 100 ms, and calls that alternate between 180 and 20 ms (their mean ends near 92 ms).
    const steady = await admittedToWait((await measuredAnswerQueue(Array<number>(20).fill(100))).q);
    const varying = await admittedToWait(
      (await measuredAnswerQueue(Array.from({ length: 20 }, (_, i) => (i % 2 ? 20 : 180)))).q,
    );
    expect(steady).toBeGreaterThanOrEqual(8); // about 100 ms each, within 1000 ms with a call's own time
    // On the mean alone the varying calls would wait as many; their deviation leaves room for fewer.
    expect(varying).toBeLessThan(steady - 2);
    expect(varying).toBeGreaterThan(0);
  });

  it('with the answer bound, starts the oldest call once it has waited half of the wait the bound leaves', async () => {
    const { q, clock } = await measuredAnswerQueue(Array<number>(20).fill(100), 'light');
    // Steady calls of 100 ms: the bound leaves about 900 ms of wait, half of it about 450 ms.
    const running = await q.enter('heavy');
    const started: string[] = [];
    const join = (subject: string) =>
      q.enter(subject).then((turn) => {
        started.push(subject);
        turn.release();
      });
    const waiting = [join('heavy'), join('heavy')];
    clock.t += 470;
    waiting.push(join('light'));
    running.release();
    await Promise.all(waiting);
    // The light subject has fewer calls in the queue, but the oldest heavy call has waited 470 ms: its turn.
    expect(started[0]).toBe('heavy');
  });

  it('refuses a call whose deadline passed, and drops a waiting one when its deadline comes', async () => {
    const q = queue(1, 5000);
    expect(await call(q, 'a', 0, Date.now() - 1)).toBe(`${REASON.deadline_exceeded} 1`);
    const busy = call(q, 'a', 200);
    expect(await call(q, 'b', 0, Date.now() + 50)).toBe(`${REASON.deadline_exceeded} 1`);
    await busy;
  });

  it('drops a waiting call whose caller went away, and the next one starts in its place', async () => {
    const q = queue(1, 5000);
    const busy = call(q, 'a', 100);
    const gone = new AbortController();
    const left = call(q, 'b', 0, undefined, gone.signal);
    const next = call(q, 'c', 0);
    gone.abort();
    expect(await left).toBe(`${REASON.overloaded} 1`);
    expect(await Promise.all([busy, next])).toEqual(['ok', 'ok']);
  });

  it('serves a light subject before a heavy one that fills the queue', async () => {
    const q = queue(1, 5000);
    const done: string[] = [];
    const run = (subject: string) => call(q, subject, 30).then(() => done.push(subject));
    const all = [1, 2, 3, 4].map(() => run('heavy'));
    await sleep(5);
    all.push(run('light'));
    await Promise.all(all);
    // The first heavy call was running; the light one went next, before the three heavy ones waiting.
    expect(done).toEqual(['heavy', 'light', 'heavy', 'heavy', 'heavy']);
  });

  it('refuses the heavy subject, not the light one, when the queue is full', async () => {
    const q = queue(1, 100);
    expect(await call(q, 'heavy', 40)).toBe('ok');
    const heavy = [1, 2, 3].map(() => call(q, 'heavy', 40));
    await sleep(5);
    expect(await call(q, 'light', 40)).toBe('ok');
    expect((await Promise.all(heavy)).filter((o) => o !== 'ok').length).toBeGreaterThan(0);
  });

  it('with the gradient limit, runs more than maxInFlight while calls stay fast, and fewer once they slow', async () => {
    let t = 0;
    const q = new AdmissionQueue({
      queue: 'test_calls',
      what: 'test calls',
      maxInFlight: 8,
      maxWaitMs: 600_000,
      limit: 'gradient',
      now: () => t,
    });
    const turns: Turn[] = [];
    const pending = Array.from({ length: 400 }, () => q.enter('a').then((turn) => turns.push(turn)));
    const flush = () => new Promise((r) => setImmediate(r));
    /** Lets every running call take `ms`, then ends them together (the waiting ones take their places). */
    const round = async (ms: number) => {
      await flush();
      const batch = turns.splice(0);
      t += ms;
      for (const turn of batch) turn.release();
      await flush();
    };
    expect(q.usage().running).toBe(8);
    for (let i = 0; i < 10; i++) await round(10);
    expect(q.limit()).toBeGreaterThan(8);
    expect(q.usage().running).toBe(q.limit());
    for (let i = 0; i < 10; i++) await round(100);
    expect(q.limit()).toBeLessThan(8);
    expect(q.usage().waiting).toBeGreaterThan(0);
    expect(q.usage().running).toBe(q.limit());
    expect(q.limit()).toBeGreaterThanOrEqual(1);
    while (q.usage().waiting > 0 || turns.length > 0) await round(100);
    await Promise.all(pending);
    expect(q.usage()).toEqual({ running: 0, waiting: 0 });
  });

  it('with the fixed limit, runs maxInFlight however fast the calls are', async () => {
    let t = 0;
    const q = new AdmissionQueue({
      queue: 'test_calls',
      what: 'test calls',
      maxInFlight: 8,
      maxWaitMs: 600_000,
      now: () => t,
    });
    const turns: Turn[] = [];
    const pending = Array.from({ length: 200 }, () => q.enter('a').then((turn) => turns.push(turn)));
    const flush = () => new Promise((r) => setImmediate(r));
    for (let i = 0; i < 10; i++) {
      await flush();
      const batch = turns.splice(0);
      t += 10;
      for (const turn of batch) turn.release();
      expect(q.usage().running).toBe(8);
      expect(q.limit()).toBe(8);
    }
    while (q.usage().waiting > 0) {
      await flush();
      for (const turn of turns.splice(0)) turn.release();
    }
    await flush();
    for (const turn of turns.splice(0)) turn.release();
    await Promise.all(pending);
  });
});
