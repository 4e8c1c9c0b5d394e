import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import {
  createLogger,
  type Db,
  FakeClock,
  InProcessBus,
  type IncomingMessage,
  openDb,
  TOPICS,
  type Subscription,
} from '@vision/shared';
import { createQuota, type QuotaParts } from '../src/index';
import { migrations } from '../src/store/migrations';
import type { Overrides } from '../src/domain/limits';
import type { QuotaEvent } from '../src/domain/events';
import { type SignableRequest, signedAs, verifierOfAll } from '../../../test/helpers/identity';

export interface Harness {
  clock: FakeClock;
  db: Db;
  bus: InProcessBus;
  parts: QuotaParts;
  server: Server;
  /** Quota events the bus delivered, in order of delivery. */
  events: QuotaEvent[];
  http: ReturnType<typeof request>;
  /** A supertest plugin signing each request it is used on as `subject`. */
  auth(subject: string): (req: SignableRequest) => void;
  close(): Promise<void>;
}

export interface HarnessOptions {
  start?: string;
  video?: number;
  image?: number;
  overrides?: Overrides;
  /** A real Postgres database (its URL) instead of in-memory PGlite: concurrent calls get their own connections. */
  databaseUrl?: string;
}

/** The quota service over in-memory PGlite (or o.databaseUrl), an in-process bus and a FakeClock, on a free port. */
export async function startHarness(o: HarnessOptions = {}): Promise<Harness> {
  const clock = new FakeClock(o.start ?? '2026-03-09T04:00:00Z');
  const logger = createLogger('quota-test', { level: 'silent' });
  const db = o.databaseUrl
    ? await openDb(
        { VISION_MODE: 'distributed', VISION_DATA_DIR: ':memory:', DATABASE_URL: o.databaseUrl },
        { schema: 'quota', migrations },
      )
    : await openDb(
        { VISION_MODE: 'standalone', VISION_DATA_DIR: ':memory:', DATABASE_URL: undefined },
        { schema: 'quota', migrations, memory: true },
      );
  const bus = new InProcessBus();
  const events: QuotaEvent[] = [];
  const sub: Subscription = await bus.subscribe({
    topic: TOPICS.quotaEvents,
    group: 'quota-test',
    handleBatch: async (messages: IncomingMessage[]) => {
      for (const m of messages) events.push(m.value as QuotaEvent);
    },
  });
  const parts = createQuota({
    db,
    bus,
    clock,
    logger,
    identity: verifierOfAll(),
    limits: { video: o.video ?? 5, image: o.image ?? 100, overrides: o.overrides ?? {} },
    holdTtlMs: 600_000,
    sweepIntervalMs: 3_600_000,
    outboxIntervalMs: 3_600_000,
  });
  const server = await new Promise<Server>((resolve) => {
    const s = parts.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  let n = 0;
  return {
    clock,
    db,
    bus,
    parts,
    server,
    events,
    http: request(`http://127.0.0.1:${port}`),
    auth: (subject: string) => signedAs({ subject, requestId: `req-${++n}` }, 'quota'),
    close: async () => {
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await parts.stopLoops();
      await sub.close();
      await bus.close();
      await db.close();
    },
  };
}

/** Waits until `pred` holds, polling (for bus deliveries, which are asynchronous). */
export async function eventually(pred: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
