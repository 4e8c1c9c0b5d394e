import type { Express } from 'express';
import {
  AdmissionQueue,
  type Bus,
  type Clock,
  type Db,
  type HostResolver,
  InferenceClient,
  type Logger,
  type ObjectStore,
  type RunningService,
  SceneGate,
  ServiceClient,
  type StartOptions,
  closeServer,
  createBus,
  createLogger,
  createObjectStore,
  listen,
  metrics,
  openDb,
  startEgressProxy,
  streamResolver,
  systemClock,
  loadCallingIdentity,
  type CallingIdentity,
  deriveSecret,
  decoderSandbox,
  unconfinedDecoderWarning,
} from '@vision/shared';
import type { AddressInfo } from 'node:net';
import { ImagesClient } from './clients/images-client';
import { QuotaClient } from './clients/quota-client';
import { type TasksConfig, loadTasksConfig } from './config';
import { createApp } from './http/app';
import { workerIdentity, type InferencePort, type QuotaPort, type Signals, type TaskContext } from './ports';
import { InferenceSlots } from './clients/inference-slots';
import { migrations } from './store/migrations';
import { StreamUrlSeal, sealStoredStreamUrls } from './store/stream-url-seal';
import { TaskStore } from './store/task-store';
import { CreateTask } from './use-cases/create-task';
import { ImageCalls } from './use-cases/image-calls';
import { TaskWorkers } from './workers';
import { subscribeImageCalls } from './workers/image-calls';

export { createApp } from './http/app';
export { TaskStore } from './store/task-store';
export { migrations } from './store/migrations';
export { TaskWorkers } from './workers';
export * from './domain/state-machine';
export { classifyAddress } from '@vision/shared';

export interface TasksDeps {
  cfg: TasksConfig;
  identity: CallingIdentity;
  db: Db;
  bus: Bus;
  objects: ObjectStore;
  clock: Clock;
  logger: Logger;
  /** Adapters; the HTTP clients of the sibling services when absent. */
  quota?: QuotaPort;
  inference?: InferencePort & Pick<InferenceClient, 'scenes' | 'shutdown'>;
  images?: Pick<ImagesClient, 'callRecord'>;
  /** Egress proxy URL for the probe's HTTP(S) connections. */
  httpProxy?: string;
  /** Resolver of callers' stream hosts; streamResolver over STREAM_DNS_* when absent. */
  resolve?: HostResolver;
}

export interface TasksParts {
  app: Express;
  ctx: TaskContext;
  create: CreateTask;
  workers: TaskWorkers;
  store: TaskStore;
  inference: InferencePort & Pick<InferenceClient, 'scenes' | 'shutdown'>;
  /** Image call records: stored from `vision.image-calls` (subscribeImageCalls), read from images meanwhile. */
  imageCalls: ImageCalls;
}

/** Composition root: wires the use cases, workers and HTTP routes of the tasks service over its adapters. */
export function createTasks(deps: TasksDeps): TasksParts {
  const { cfg, db, bus, objects, clock, logger } = deps;
  const unconfined = unconfinedDecoderWarning(decoderSandbox());
  if (unconfined) logger.warn(unconfined);
  const store = new TaskStore(db.knex, clock, {
    maxVersions: cfg.TASKS_RULES_MAX_VERSIONS,
    maxBytes: cfg.TASKS_RULES_MAX_BYTES,
  });
  const inference =
    deps.inference ??
    new InferenceClient(
      new ServiceClient('inference', cfg.INFERENCE_URL, deps.identity.signer, cfg.TASKS_BACKEND_TIMEOUT_MS),
      {
        timeoutMs: cfg.TASKS_BACKEND_TIMEOUT_MS,
        hangMs: cfg.TASKS_BREAKER_HANG_MS,
        errorThresholdPercentage: cfg.TASKS_BREAKER_ERROR_PERCENT,
        resetTimeoutMs: cfg.TASKS_BREAKER_RESET_MS,
        volumeThreshold: cfg.TASKS_BREAKER_VOLUME,
        window: cfg.TASKS_BREAKER_WINDOW,
        // No slowFloorMs: only a call that times out counts as failed (a job start waits on the caller's stream).
      },
      logger,
      deps.identity.signer,
    );
  const quota =
    deps.quota ??
    new QuotaClient(new ServiceClient('quota', cfg.QUOTA_URL, deps.identity.signer, 10_000), clock);
  // Bound once the workers exist (they are what the signals wake).
  // The slots of the live inference replicas; TASKS_INFERENCE_SLOTS until inference first says them.
  const slots =
    inference instanceof InferenceClient
      ? new InferenceSlots(
          inference,
          () => workerIdentity('tasks-service'),
          cfg.TASKS_INFERENCE_SLOTS ?? cfg.INFERENCE_MAX_JOBS ?? 4,
        )
      : undefined;
  const signals: Signals = { eventsWritten: () => undefined, driveStops: async () => undefined };
  const ctx: TaskContext = {
    store,
    quota,
    inference,
    objects,
    clock,
    logger,
    signals,
    inflight: new Set(),
    ...(slots && { slots }),
    streamUrls: new StreamUrlSeal(
      cfg.TASKS_STREAM_URL_KEY ?? deriveSecret(deps.identity.signer, 'tasks-stream-url-seal'),
    ),
    settings: {
      maxActive: cfg.TASKS_MAX_ACTIVE,
      inferenceSlots: cfg.TASKS_INFERENCE_SLOTS ?? cfg.INFERENCE_MAX_JOBS ?? 4,
      queueMax: cfg.TASKS_QUEUE_MAX,
      queueMaxWaitMs: cfg.TASKS_QUEUE_MAX_WAIT_MS,
      maintenance: cfg.TASKS_MAINTENANCE,
      idempotencyWaitMs: cfg.TASKS_IDEMPOTENCY_WAIT_MS,
      resolveGraceMs: cfg.TASKS_RESOLVE_GRACE_MS,
      jobRestarts: cfg.TASKS_JOB_RESTARTS,
      recoverAfterMs: cfg.TASKS_RECOVER_AFTER_MS,
      stopWaitMs: cfg.TASKS_STOP_WAIT_MS,
      pollIntervalMs: cfg.TASKS_POLL_INTERVAL_MS,
      reconcileIntervalMs: cfg.TASKS_RECONCILE_INTERVAL_MS,
      janitorIntervalMs: cfg.TASKS_JANITOR_INTERVAL_MS,
      outboxLingerMs: cfg.TASKS_OUTBOX_LINGER_MS,
    },
  };
  const workers = new TaskWorkers(ctx, { knex: db.knex, bus });
  signals.eventsWritten = () => workers.outbox.nudge();
  signals.driveStops = () => workers.stopDriver.kick();
  const create = new CreateTask(ctx);
  const scenes = new SceneGate(
    inference,
    { cacheMs: cfg.TASKS_SCENES_CACHE_MS, staleMs: cfg.TASKS_SCENES_STALE_MS },
    clock,
    logger,
    'tasks-service',
  );
  const imageCalls = new ImageCalls({
    store,
    images:
      deps.images ??
      new ImagesClient(
        new ServiceClient('images', cfg.IMAGES_URL, deps.identity.signer, cfg.TASKS_BACKEND_TIMEOUT_MS),
        logger,
      ),
    scenes,
    signals,
    clock,
    logger,
    settings: { businessThreshold: cfg.TASKS_BUSINESS_THRESHOLD, retentionDays: cfg.TASKS_RETENTION_DAYS },
  });
  const app = createApp(
    {
      logger,
      identity: deps.identity.verifier,
      readiness: {
        database: () => db.check(),
        bus: () => bus.check(),
        objects: () => objects.check(),
        inference: async () => (inference.isOpen() ? { degraded: 'inference breaker open' } : undefined),
      },
    },
    {
      ctx,
      create,
      scenes,
      imageCalls,
      objects,
      adminToken: cfg.TASKS_ADMIN_TOKEN,
      admission: new AdmissionQueue({
        queue: 'task_creations',
        what: 'task creations',
        maxInFlight: cfg.TASKS_CREATE_MAX_IN_FLIGHT,
        maxWaitMs: cfg.TASKS_CREATE_MAX_WAIT_MS,
        limit: cfg.ADMISSION_LIMIT,
      }),
      settings: {
        allowPrivateNetworks: cfg.STREAM_ALLOW_PRIVATE_NETWORKS,
        probeTimeoutMs: cfg.TASKS_PROBE_TIMEOUT_MS,
        ffprobePath: cfg.TASKS_FFPROBE_PATH,
        httpProxy: deps.httpProxy,
        resolveHost:
          deps.resolve ??
          streamResolver({ servers: cfg.STREAM_DNS_SERVERS, timeoutMs: cfg.STREAM_DNS_TIMEOUT_MS }),
        maxVideoBytes: cfg.TASKS_MAX_VIDEO_BYTES,
        businessThreshold: cfg.TASKS_BUSINESS_THRESHOLD,
        retentionDays: cfg.TASKS_RETENTION_DAYS,
      },
    },
  );
  return { app, ctx, create, workers, store, inference, imageCalls };
}

export interface TasksService extends RunningService {
  parts: TasksParts;
  workers: TaskWorkers;
  store: TaskStore;
  db: Db;
}

/** Starts the tasks service: config, adapters, migrations, background workers, HTTP. */
export async function start(opts: StartOptions = {}): Promise<TasksService> {
  const cfg = loadTasksConfig(opts.env ?? process.env);
  const identity = loadCallingIdentity(cfg.VISION_IDENTITY_DIR, 'tasks');
  const logger = opts.logger ?? createLogger('tasks', { level: cfg.LOG_LEVEL });
  const clock = opts.clock ?? systemClock;
  const db = await openDb(cfg, { schema: 'tasks', migrations, logger });
  const ownBus = !opts.bus;
  const bus = opts.bus ?? createBus(cfg, { clientId: 'tasks', logger });
  const objects = createObjectStore(cfg, { logger });
  // The probe's HTTP(S) connections (playlists, HLS segments on any host) are address-checked when made.
  const resolve = streamResolver({ servers: cfg.STREAM_DNS_SERVERS, timeoutMs: cfg.STREAM_DNS_TIMEOUT_MS });
  const egress = await startEgressProxy({ allowPrivate: cfg.STREAM_ALLOW_PRIVATE_NETWORKS, resolve, logger });
  const parts = createTasks({
    cfg,
    identity,
    db,
    bus,
    objects,
    clock,
    logger,
    httpProxy: egress.url,
    resolve,
  });
  const sealedRows = await sealStoredStreamUrls(db.knex, parts.ctx.streamUrls);
  if (sealedRows > 0) logger.info({ rows: sealedRows }, 'stored stream URLs sealed');
  const stopTaskGauge = metrics.tasks.addSource(() => parts.store.countByStatus());
  const server = await listen(
    parts.app,
    opts.port ?? cfg.TASKS_PORT,
    opts.host ?? (cfg.VISION_MODE === 'distributed' ? '0.0.0.0' : '127.0.0.1'),
  );
  parts.workers.start();
  const imageCalls = await subscribeImageCalls(bus, parts.imageCalls, logger);
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, private_networks: cfg.STREAM_ALLOW_PRIVATE_NETWORKS }, 'tasks service started');
  return {
    name: 'tasks',
    port,
    url: `http://127.0.0.1:${port}`,
    parts,
    workers: parts.workers,
    store: parts.store,
    db,
    close: async () => {
      stopTaskGauge();
      await imageCalls.close();
      await closeServer(server);
      await parts.workers.stop();
      // One last round so that the events of the final requests are not left waiting for a restart.
      await parts.workers.outbox
        .flush()
        .catch((err: unknown) => logger.warn({ err }, 'final outbox flush failed'));
      await egress.close();
      parts.inference.shutdown();
      if (ownBus) await bus.close();
      await db.close();
    },
  };
}
