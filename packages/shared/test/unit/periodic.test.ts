/** The loop helper's wake-ups: kick() at once, nudge(withinMs) shared by the nudges of that time. */
import { Periodic, createLogger } from '../../src';

const logger = createLogger('test', { level: 'silent' });
/** Moves the fake clock on, running the timers and promise callbacks due meanwhile. */
const advance = (ms: number) => jest.advanceTimersByTimeAsync(ms);

/** A loop that never runs on its own during a test (first run and interval far off); each run takes `workMs`. */
function loop(workMs = 0) {
  const runs: number[] = [];
  const p = new Periodic(
    'test loop',
    60_000,
    async () => {
      runs.push(Date.now());
      if (workMs) await new Promise((r) => setTimeout(r, workMs));
    },
    logger,
  );
  p.start(60_000);
  return { p, runs };
}

describe('Periodic wake-ups', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('nudge() without a delay runs at once', async () => {
    const { p, runs } = loop();
    p.nudge();
    await advance(0);
    expect(runs).toHaveLength(1);
    await p.stop();
  });

  it('the nudges within the linger share one run, which starts when the first nudge asked', async () => {
    const { p, runs } = loop();
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) {
      p.nudge(60);
      await advance(5);
    }
    expect(runs).toHaveLength(0);
    await advance(100);
    expect(runs).toEqual([t0 + 60]);
    await p.stop();
  });

  it('a run already due sooner stands; a shorter linger brings a later one forward', async () => {
    const { p, runs } = loop();
    const t0 = Date.now();
    p.nudge(20);
    p.nudge(500);
    await advance(600);
    expect(runs).toEqual([t0 + 20]);
    const t1 = Date.now();
    p.nudge(500);
    p.nudge(20);
    await advance(600);
    expect(runs).toEqual([t0 + 20, t1 + 20]);
    await p.stop();
  });

  it('a nudge during a run asks for one more run, its linger counted from the end of that run', async () => {
    const { p, runs } = loop(40);
    const t0 = Date.now();
    p.nudge();
    await advance(5);
    p.nudge(50);
    p.nudge(50);
    await advance(300);
    expect(runs).toEqual([t0, t0 + 40 + 50]);
    await p.stop();
  });

  it('stop() drops a lingering nudge', async () => {
    const { p, runs } = loop();
    p.nudge(30);
    await p.stop();
    await advance(100);
    expect(runs).toHaveLength(0);
  });
});
