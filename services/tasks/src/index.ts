import {
  ConfigError,
  type Db,
  type RunningService,
  ServiceClient,
  type StartOptions,
  closeServer,
  createBus,
  createLogger,
  createObjectStore,
  listen,
  metrics,
  startEgressProxy,
  openDb,
  systemClock,
} from '@vision/shared';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { InferenceClient } from './clients/inference-client';
import { QuotaClient } from './clients/quota-client';
import { loadTasksConfig } from './config';
import { SceneCatalogue } from './scene-catalogue';
import { migrations } from './store/migrations';
import { TaskStore } from './store/task-store';
import { TaskEngine } from './task-engine';

export { createApp } from './app';
export { TaskEngine } from './task-engine';
export { TaskStore } from './store/task-store';
export { migrations } from './store/migrations';
export * from './domain/state-machine';
export { classifyAddress } from '@vision/shared';

export interface TasksService extends RunningService {
  engine: TaskEngine;
  store: TaskStore;
  db: Db;
}

/** Starts the tasks service: config, adapters, migrations, background workers, HTTP. */
export async function start(opts: StartOptions = {}): Promise<TasksService> {
  const cfg = loadTasksConfig(opts.env ?? process.env);
  if (!cfg.INTERNAL_SECRET)
    throw new ConfigError(['INTERNAL_SECRET: required by the tasks service (not set)']);
  const logger = opts.logger ?? createLogger('tasks', { level: cfg.LOG_LEVEL });
  const clock = opts.clock ?? systemClock;
  const db = await openDb(cfg, { schema: 'tasks', migrations, logger });
  const ownBus = !opts.bus;
  const bus = opts.bus ?? createBus(cfg, { clientId: 'tasks', logger });
  const objects = createObjectStore(cfg, { logger });
  const store = new TaskStore(db.knex, clock);
  const stopTaskGauge = metrics.tasks.addSource(() => store.countByStatus());
  const inference = new InferenceClient(
    new ServiceClient('inference', cfg.INFERENCE_URL, cfg.INTERNAL_SECRET, cfg.TASKS_BACKEND_TIMEOUT_MS),
    {
      timeoutMs: cfg.TASKS_BACKEND_TIMEOUT_MS,
      errorThresholdPercentage: cfg.TASKS_BREAKER_ERROR_PERCENT,
      resetTimeoutMs: cfg.TASKS_BREAKER_RESET_MS,
      volumeThreshold: cfg.TASKS_BREAKER_VOLUME,
      rollingWindowMs: cfg.TASKS_BREAKER_WINDOW_MS,
    },
    logger,
  );
  const quota = new QuotaClient(
    new ServiceClient('quota', cfg.QUOTA_URL, cfg.INTERNAL_SECRET, 10_000),
    clock,
  );
  const scenes = new SceneCatalogue(
    inference,
    {
      cacheMs: cfg.TASKS_SCENES_CACHE_MS,
      staleMs: cfg.TASKS_SCENES_STALE_MS,
      businessThreshold: cfg.TASKS_BUSINESS_THRESHOLD,
    },
    clock,
    logger,
  );
  const engine = new TaskEngine(
    store,
    quota,
    inference,
    objects,
    bus,
    clock,
    {
      maxActive: cfg.TASKS_MAX_ACTIVE,
      maintenance: cfg.TASKS_MAINTENANCE,
      idempotencyWaitMs: cfg.TASKS_IDEMPOTENCY_WAIT_MS,
      resolveGraceMs: cfg.TASKS_RESOLVE_GRACE_MS,
      recoverAfterMs: cfg.TASKS_RECOVER_AFTER_MS,
      stopWaitMs: cfg.TASKS_STOP_WAIT_MS,
      pollIntervalMs: cfg.TASKS_POLL_INTERVAL_MS,
      reconcileIntervalMs: cfg.TASKS_RECONCILE_INTERVAL_MS,
      janitorIntervalMs: cfg.TASKS_JANITOR_INTERVAL_MS,
    },
    logger,
  );
  // The probe's HTTP(S) connections (playlists, HLS segments on any host) are address-checked when made.
  const egress = await startEgressProxy({ allowPrivate: cfg.STREAM_ALLOW_PRIVATE_NETWORKS, logger });
  const app = createApp({
    logger,
    identitySecret: cfg.INTERNAL_SECRET,
    engine,
    store,
    scenes,
    objects,
    clock,
    adminToken: cfg.TASKS_ADMIN_TOKEN,
    readiness: {
      database: () => db.check(),
      bus: () => bus.check(),
      objects: () => objects.check(),
      inference: async () => (inference.isOpen() ? { degraded: 'inference breaker open' } : undefined),
    },
    settings: {
      allowPrivateNetworks: cfg.STREAM_ALLOW_PRIVATE_NETWORKS,
      probeTimeoutMs: cfg.TASKS_PROBE_TIMEOUT_MS,
      ffprobePath: cfg.TASKS_FFPROBE_PATH,
      httpProxy: egress.url,
      maxVideoBytes: cfg.TASKS_MAX_VIDEO_BYTES,
      businessThreshold: cfg.TASKS_BUSINESS_THRESHOLD,
      retentionDays: cfg.TASKS_RETENTION_DAYS,
    },
  });
  const server = await listen(
    app,
    opts.port ?? cfg.TASKS_PORT,
    opts.host ?? (cfg.VISION_MODE === 'distributed' ? '0.0.0.0' : '127.0.0.1'),
  );
  engine.startWorkers();
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, private_networks: cfg.STREAM_ALLOW_PRIVATE_NETWORKS }, 'tasks service started');
  return {
    name: 'tasks',
    port,
    url: `http://127.0.0.1:${port}`,
    engine,
    store,
    db,
    close: async () => {
      stopTaskGauge();
      await closeServer(server);
      await engine.stopWorkers();
      await egress.close();
      inference.shutdown();
      if (ownBus) await bus.close();
      await db.close();
    },
  };
}
