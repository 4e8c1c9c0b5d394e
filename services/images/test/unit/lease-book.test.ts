import { LeaseBook } from '../../src/domain/lease-book';
import { QuotaLeases, type Spend } from '../../src/use-cases/quota-leases';
import { ApiError, createLogger, FakeClock } from '@vision/shared';
import type { SpendOutcome } from '../../src/clients/quota-client';

describe('the lease book of one replica', () => {
  it('reserves from the current lease while it has room and its window lasts, else says what to ask for', () => {
    const book = new LeaseBook(8, 60_000);
    expect(book.take('alice', 2, 0)).toEqual({ need: { minUnits: 2, maxUnits: 10 } });
    book.granted('alice', { leaseId: 'l1', units: 10, usableUntil: 1000 }, 0);
    expect(book.take('alice', 6, 1)).toEqual({ leaseId: 'l1' });
    expect(book.take('alice', 4, 2)).toEqual({ leaseId: 'l1' });
    // 10 of 10 committed: the lease must grow by the call's units (and a chunk more if the day allows).
    expect(book.take('alice', 1, 3)).toEqual({ need: { leaseId: 'l1', minUnits: 11, maxUnits: 19 } });
    // The first call spent 3 of its 6: the other 3 are free again.
    book.release('l1', 6, 3, 0);
    expect(book.take('alice', 3, 4)).toEqual({ leaseId: 'l1' });
    // Past its window no call reserves from it; a new lease is asked for.
    expect(book.take('alice', 1, 1000)).toEqual({ need: { minUnits: 1, maxUnits: 9 } });
    // Other subjects have leases of their own.
    expect(book.take('bob', 1, 5)).toEqual({ need: { minUnits: 1, maxUnits: 9 } });
  });

  it('closes a lease only once it ended, no call holds it and its spends were reported', () => {
    const book = new LeaseBook(0, 60_000);
    book.granted('alice', { leaseId: 'l1', units: 2, usableUntil: 1000 }, 0);
    book.take('alice', 1, 0);
    expect(book.closable(500)).toEqual([]);
    book.granted('alice', { leaseId: 'l2', units: 2, usableUntil: 2000 }, 0);
    // Replaced by l2, but a call still holds a reservation on l1.
    expect(book.closable(600)).toEqual([]);
    book.release('l1', 1, 1, 0);
    expect(book.closable(700)).toEqual([]);
    book.reported('l1', 1);
    expect(book.closable(800)).toEqual([{ subject: 'alice', leaseId: 'l1' }]);
    expect(book.closable(1999)).toEqual([]);
    expect(book.closable(2000)).toEqual([{ subject: 'alice', leaseId: 'l2' }]);
    expect(book.take('alice', 1, 2001)).toEqual({ need: { minUnits: 1, maxUnits: 1 } });
  });

  it('a lease no call used for the idle time is closed', () => {
    const book = new LeaseBook(4, 1000);
    book.granted('alice', { leaseId: 'l1', units: 5, usableUntil: 60_000 }, 0);
    book.take('alice', 1, 100);
    book.release('l1', 1, 0, 200);
    expect(book.closable(1199)).toEqual([]);
    expect(book.closable(1200)).toEqual([{ subject: 'alice', leaseId: 'l1' }]);
  });

  it('a lease quota recalled takes no more calls and closes once its calls are reported', () => {
    const book = new LeaseBook(4, 60_000);
    book.granted('alice', { leaseId: 'l1', units: 5, usableUntil: 60_000 }, 0);
    book.take('alice', 1, 100);
    // A spend report's answer: quota ended its window at 150 for another replica's call.
    book.window('l1', 150);
    expect(book.take('alice', 1, 200)).toEqual({ need: { minUnits: 1, maxUnits: 5 } });
    expect(book.closable(200)).toEqual([]);
    book.release('l1', 1, 1, 200);
    book.reported('l1', 1);
    expect(book.closable(210)).toEqual([{ subject: 'alice', leaseId: 'l1' }]);
    // A later window never lengthens it.
    book.granted('alice', { leaseId: 'l2', units: 5, usableUntil: 60_000 }, 300);
    book.window('l2', 90_000);
    expect(book.closable(59_999)).toEqual([]);
  });

  it('the call that asked for a lease reserves from it even when quota answered after its window', () => {
    const book = new LeaseBook(4, 60_000);
    book.granted('alice', { leaseId: 'slow', units: 5, usableUntil: 1000 }, 1500);
    expect(book.take('alice', 1, 1500)).toEqual({ need: { minUnits: 1, maxUnits: 5 } });
    expect(book.take('alice', 1, 1500, 'slow')).toEqual({ leaseId: 'slow' });
  });

  it('a lease quota ended is replaced at the next call', () => {
    const book = new LeaseBook(4, 60_000);
    book.granted('alice', { leaseId: 'l1', units: 1, usableUntil: 1000 }, 0);
    book.take('alice', 1, 0);
    book.ended('alice', 'l1');
    expect(book.take('alice', 1, 1)).toEqual({ need: { minUnits: 1, maxUnits: 5 } });
  });
});

describe('quota leases of one replica (a fake quota)', () => {
  const identity = { subject: 'alice', requestId: 'r' };
  function fakeQuota(limit: number) {
    const leases = new Map<string, number>();
    const charged = new Map<string, number>();
    let asked = 0;
    let down = false;
    const free = () => limit - [...leases.values()].reduce((a, b) => a + b, 0);
    return {
      leases,
      charged,
      get asked() {
        return asked;
      },
      set down(v: boolean) {
        down = v;
      },
      client: {
        lease: async (_i: unknown, id: string, r: { minUnits: number; maxUnits: number }) => {
          asked += 1;
          const have = leases.get(id) ?? 0;
          const want = Math.min(r.maxUnits, have + free());
          if (want < r.minUnits) throw new ApiError('OP-QUOTA-DAILY-EXHAUSTED', 'exhausted');
          leases.set(id, Math.max(have, want));
          return { lease_id: id, units: leases.get(id) ?? 0, usable_until: '2026-03-09T04:00:10Z' };
        },
        spend: async (
          _i: unknown,
          _id: string,
          spends: ReadonlyArray<{ charge_id: string; units: number }>,
        ) => {
          if (down) throw new ApiError('OP-SYS-UNAVAILABLE', 'down');
          const outcomes = new Map<string, SpendOutcome>();
          for (const s of spends) {
            outcomes.set(s.charge_id, charged.has(s.charge_id) ? 'replayed' : 'charged');
            charged.set(s.charge_id, s.units);
          }
          return { outcomes };
        },
        close: async (_i: unknown, id: string) => {
          leases.delete(id);
        },
      },
    };
  }

  const callOf = (taskId: string) => ({
    ref: { subject: 'alice', key: taskId, taskId, attempt: 1 },
    taskId,
    sceneCode: 'fire_smoke',
    results: [],
  });

  function leasesOver(q: ReturnType<typeof fakeQuota>, recorded: Array<[string, SpendOutcome]>) {
    return new QuotaLeases({
      client: q.client,
      clock: new FakeClock('2026-03-09T04:00:00Z'),
      logger: createLogger('lease-test', { level: 'silent' }),
      settings: {
        chunk: 8,
        windowMs: 10_000,
        idleMs: 1000,
        ttlMs: 60_000,
        flushMs: 3_600_000,
        recallWaitMs: 0,
      },
      onRecorded: async (s: Spend, o: SpendOutcome) => {
        recorded.push([s.chargeId, o]);
      },
    });
  }

  it('concurrent calls share one request to quota, spend locally, and are reported once each', async () => {
    const q = fakeQuota(100);
    const recorded: Array<[string, SpendOutcome]> = [];
    const l = leasesOver(q, recorded);
    const rs = await Promise.all(Array.from({ length: 5 }, () => l.reserve(identity, 1)));
    expect(q.asked).toBe(1);
    rs.forEach((r, i) => l.spent(identity, r, callOf(`call-${i}`), i % 2));
    await l.flush();
    expect([...q.charged.keys()].sort()).toEqual(['call-1', 'call-3']);
    expect(recorded.sort()).toEqual([
      ['call-1', 'charged'],
      ['call-3', 'charged'],
    ]);
  });

  it('a failed report is tried again; a refused lease is the 429 of the call', async () => {
    const q = fakeQuota(2);
    const recorded: Array<[string, SpendOutcome]> = [];
    const l = leasesOver(q, recorded);
    const r = await l.reserve(identity, 2);
    q.down = true;
    l.spent(identity, r, callOf('call-a'), 2);
    await l.flush();
    expect(recorded).toEqual([]);
    q.down = false;
    await l.flush();
    expect(recorded).toEqual([['call-a', 'charged']]);
    await expect(l.reserve(identity, 1)).rejects.toMatchObject({ code: 'OP-QUOTA-DAILY-EXHAUSTED' });
  });
});
