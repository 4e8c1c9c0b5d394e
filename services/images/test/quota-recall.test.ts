/**
 * Two images replicas spend one subject's day through the real quota service, calls spread unevenly between them
 * (as a Service behind a proxy spreads them): every unit of the day is spent, whichever replica's lease holds it.
 * When the day has no unit free for one replica's call while the other's lease holds some, quota recalls that
 * lease and the call waits for its units instead of answering 429 early; the 429 comes only once the day is spent.
 */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  createLogger,
  type RunningService,
  ServiceClient,
  type SpendOutcome,
  systemClock,
} from '@vision/shared';
import { start as startQuota } from '@vision/quota';
import { QuotaLeaseClient } from '../src/clients/quota-client';
import { QuotaLeases, type Spend } from '../src/use-cases/quota-leases';
import { identityDir, signerOf } from '../../../test/helpers/identity';

const logger = createLogger('quota-recall-test', { level: 'silent' });
const LIMIT = 20;
const identity = (subject = 'twenty') => ({ subject, requestId: `call-${randomUUID()}` });
const callOf = (taskId: string, subject = 'twenty') => ({
  ref: { subject, key: taskId, taskId, attempt: 1 },
  taskId,
  sceneCode: 'fire_smoke',
  results: [],
});

describe('quota leases of two images replicas', () => {
  let quota: RunningService;
  /** Each recorded spend: its subject and quota's outcome. */
  const recorded: Array<[string, SpendOutcome]> = [];
  const outcomesOf = (subject: string) => recorded.filter(([s]) => s === subject).map(([, o]) => o);
  const replicas: QuotaLeases[] = [];

  beforeAll(async () => {
    quota = await startQuota({
      env: {
        VISION_IDENTITY_DIR: identityDir(),
        VISION_DATA_DIR: ':memory:',
        LOG_LEVEL: 'silent',
        QUOTA_OVERRIDES: JSON.stringify({ twenty: { image: LIMIT }, busy: { image: LIMIT } }),
      },
      port: 0,
      host: '127.0.0.1',
      logger,
    });
    for (let i = 0; i < 2; i++) {
      const leases = new QuotaLeases({
        client: new QuotaLeaseClient(new ServiceClient('quota', quota.url, signerOf('images'))),
        clock: systemClock,
        logger,
        // The service's defaults, but a lease's units beyond the call's own: more than the day has.
        settings: {
          chunk: 32,
          windowMs: 10_000,
          idleMs: 1000,
          ttlMs: 60_000,
          flushMs: 50,
          recallWaitMs: 3000,
        },
        onRecorded: async (s: Spend, outcome: SpendOutcome) => {
          recorded.push([s.identity.subject, outcome]);
        },
      });
      leases.start();
      replicas.push(leases);
    }
  });
  afterAll(async () => {
    for (const r of replicas) await r.stop();
    await quota?.close();
  });

  it('spends every unit of the day over both replicas, then refuses with the 429 of a spent day', async () => {
    // Every third call goes to the first replica: its lease stays in use while the other one's calls run out.
    const replicaOf = (i: number) => replicas[i % 3 === 0 ? 0 : 1];
    let served = 0;
    let refused: unknown;
    for (let i = 0; i < LIMIT + 5 && refused === undefined; i++) {
      const leases = replicaOf(i);
      const who = identity();
      try {
        const r = await leases.reserve(who, 1);
        leases.spent(who, r, callOf(`call-${i}`), 1);
        served += 1;
      } catch (err) {
        refused = err;
      }
    }
    expect({ served, refused: String(refused), details: (refused as ApiError)?.details }).toMatchObject({
      served: LIMIT,
    });
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'OP-QUOTA-DAILY-EXHAUSTED' });
    // The caller's 429 carries quota's figures, not the recall between replicas.
    expect((refused as ApiError).details).not.toHaveProperty('recalled');
    expect((refused as ApiError).details).toMatchObject({ limit: LIMIT, remaining: 0 });

    // Each call served was charged once, from a lease: none came back `exhausted` after its answer.
    for (const r of replicas) await r.flush();
    expect(outcomesOf('twenty')).toEqual(Array(LIMIT).fill('charged'));
    // The other replica is refused too: nothing of the day is left anywhere.
    await expect(replicas[0].reserve(identity(), 1)).rejects.toMatchObject({
      code: 'OP-QUOTA-DAILY-EXHAUSTED',
    });
  });

  it('six callers at once over both replicas: the day is served to its last unit, and only then refused', async () => {
    let next = 0;
    let served = 0;
    const refusals: unknown[] = [];
    const caller = async (c: number) => {
      for (let i = next++; i < 2 * LIMIT; i = next++) {
        const leases = replicas[(i + c) % 2];
        const who = identity('busy');
        try {
          const r = await leases.reserve(who, 1);
          // The call's detection, while the other callers reserve.
          await new Promise((res) => setTimeout(res, 20 + ((i * 37) % 80)));
          leases.spent(who, r, callOf(`busy-${i}`, 'busy'), 1);
          served += 1;
        } catch (err) {
          refusals.push(err);
        }
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5].map(caller));
    expect(served).toBe(LIMIT);
    expect(refusals).toHaveLength(LIMIT);
    for (const r of refusals) expect(r).toMatchObject({ code: 'OP-QUOTA-DAILY-EXHAUSTED' });
    for (const r of replicas) await r.flush();
    expect(outcomesOf('busy')).toEqual(Array(LIMIT).fill('charged'));
  });
});
