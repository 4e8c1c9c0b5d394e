import { InferenceSlots } from '../../src/clients/inference-slots';
import type { JobCapacity } from '@vision/shared';

const identity = () => ({ subject: 'tasks-service', requestId: 'tasks-worker-test' });

function source(answers: (JobCapacity | null | Error)[]) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    capacity: async () => {
      const a = answers[Math.min(calls++, answers.length - 1)];
      if (a instanceof Error) throw a;
      return a;
    },
  };
}

describe('the inference slots tasks shares', () => {
  it('are the live replicas’ sum as inference reports it, read again only after the cache time', async () => {
    const s = source([
      { slots: 12, running: 3, replicas: 3 },
      { slots: 16, running: 3, replicas: 4 },
    ]);
    const slots = new InferenceSlots(s, identity, 4, 50);
    expect(await slots.current()).toBe(12);
    expect(await slots.current()).toBe(12);
    expect(s.calls).toBe(1);
    await new Promise((r) => setTimeout(r, 60));
    expect(await slots.current()).toBe(16);
    expect(s.calls).toBe(2);
  });

  it('keep the last figure while inference cannot say, and the configured one before any', async () => {
    const s = source([
      new Error('unreachable'),
      { slots: 8, running: 0, replicas: 2 },
      new Error('breaker open'),
    ]);
    const slots = new InferenceSlots(s, identity, 4, 0);
    expect(await slots.current()).toBe(4);
    expect(await slots.current()).toBe(8);
    expect(await slots.current()).toBe(8);
  });

  it('keep the configured figure with a backend that does not report its capacity', async () => {
    const slots = new InferenceSlots(source([null]), identity, 6, 0);
    expect(await slots.current()).toBe(6);
  });

  it('ask once for concurrent readers', async () => {
    const s = source([{ slots: 10, running: 0, replicas: 2 }]);
    const slots = new InferenceSlots(s, identity, 4, 1000);
    expect(await Promise.all([slots.current(), slots.current(), slots.current()])).toEqual([10, 10, 10]);
    expect(s.calls).toBe(1);
  });
});
