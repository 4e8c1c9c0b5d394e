import type { Express } from 'express';
import {
  type Bus,
  type Clock,
  closeServer,
  createBus,
  createLogger,
  type Db,
  listen,
  type Logger,
  OutboxRelay,
  openDb,
  type RunningService,
  type StartOptions,
  systemClock,
  type IdentityVerifier,
  loadServiceIdentity,
} from '@vision/shared';
import { createApp } from './http/app';
import { loadQuotaConfig, type QuotaConfig } from './config';
import type { Limits } from './domain/limits';
import { LedgerStore } from './store/ledger-store';
import { migrations } from './store/migrations';
import { quotaUseCases, type QuotaUseCases } from './use-cases';
import { Sweeper } from './workers/sweeper';

export { createApp } from './http/app';
export { loadQuotaConfig, quotaShape, type QuotaConfig } from './config';
export { dayOf, nextResetAt } from './domain/day';
export { migrations } from './store/migrations';
export { OutboxRelay } from '@vision/shared';
export { quotaUseCases, type QuotaUseCases } from './use-cases';
export { Sweeper } from './workers/sweeper';

export const QUOTA_SCHEMA = 'quota';

export interface QuotaParts {
  app: Express;
  ledger: QuotaUseCases;
  relay: OutboxRelay;
  sweeper: Sweeper;
  /** Starts the outbox relay and the hold sweeper loops. */
  startLoops(): void;
  /** Stops both loops (waits for a relay round in progress). */
  stopLoops(): Promise<void>;
}

export interface QuotaPartsDeps {
  db: Db;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  identity: IdentityVerifier;
  limits: Limits;
  holdTtlMs: number;
  sweepIntervalMs: number;
  outboxIntervalMs: number;
  /** QUOTA_OUTBOX_LINGER_MS (default 0: the relay runs right after each commit). */
  outboxLingerMs?: number;
}

/**
 * The quota service's composition root: wires the ledger use cases (over the store), the outbox relay, the
 * sweeper and the express app over an open database and a bus. `start()` below opens those from configuration.
 */
export function createQuota(deps: QuotaPartsDeps): QuotaParts {
  const relay = new OutboxRelay({
    knex: deps.db.knex,
    bus: deps.bus,
    clock: deps.clock,
    logger: deps.logger,
    intervalMs: deps.outboxIntervalMs,
    lingerMs: deps.outboxLingerMs,
  });
  const ledger = quotaUseCases({
    store: new LedgerStore(deps.db.knex, () => relay.nudge()),
    clock: deps.clock,
    limits: deps.limits,
    holdTtlMs: deps.holdTtlMs,
  });
  const sweeper = new Sweeper(ledger, relay, () => deps.clock.now(), deps.logger, deps.sweepIntervalMs);
  const app = createApp({
    ledger,
    logger: deps.logger,
    identity: deps.identity,
    readiness: { database: () => deps.db.check(), bus: () => deps.bus.check() },
  });
  return {
    app,
    ledger,
    relay,
    sweeper,
    startLoops: () => {
      relay.start();
      sweeper.start();
    },
    stopLoops: async () => {
      await sweeper.stop();
      await relay.stop();
    },
  };
}

export function limitsOf(cfg: QuotaConfig): Limits {
  return { video: cfg.QUOTA_VIDEO_DAILY, image: cfg.QUOTA_IMAGE_DAILY, overrides: cfg.QUOTA_OVERRIDES };
}

/** Starts the quota service: config, database (schema `quota`, migrations), bus, loops, HTTP. */
export async function start(opts: StartOptions): Promise<RunningService> {
  const cfg = loadQuotaConfig(opts.env ?? process.env);
  const logger = opts.logger ?? createLogger('quota', { level: cfg.LOG_LEVEL });
  const clock = opts.clock ?? systemClock;
  const db = await openDb(cfg, { schema: QUOTA_SCHEMA, migrations, logger });
  const ownBus = opts.bus === undefined;
  const bus = opts.bus ?? createBus(cfg, { clientId: 'quota', logger });
  try {
    const parts = createQuota({
      db,
      bus,
      clock,
      logger,
      identity: loadServiceIdentity(cfg.VISION_IDENTITY_DIR, 'quota').verifier,
      limits: limitsOf(cfg),
      holdTtlMs: cfg.QUOTA_HOLD_TTL_MS,
      sweepIntervalMs: cfg.QUOTA_SWEEP_INTERVAL_MS,
      outboxIntervalMs: cfg.QUOTA_OUTBOX_INTERVAL_MS,
      outboxLingerMs: cfg.QUOTA_OUTBOX_LINGER_MS,
    });
    const host = opts.host ?? '0.0.0.0';
    const server = await listen(parts.app, opts.port ?? cfg.QUOTA_PORT, host);
    parts.startLoops();
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : (opts.port ?? cfg.QUOTA_PORT);
    const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    return {
      name: 'quota',
      port,
      url: `http://${urlHost}:${port}`,
      close: async () => {
        await closeServer(server);
        await parts.stopLoops();
        // One last round so that events of the final requests are not left waiting for a restart.
        await parts.relay.flush().catch((err: unknown) => logger.warn({ err }, 'final outbox flush failed'));
        if (ownBus) await bus.close();
        await db.close();
      },
    };
  } catch (err) {
    if (ownBus) await bus.close().catch(() => undefined);
    await db.close();
    throw err;
  }
}
