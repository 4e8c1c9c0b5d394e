import type { Express } from 'express';
import {
  AdmissionQueue,
  type Bus,
  type Clock,
  InferenceClient,
  SceneGate,
  type Db,
  type LocalAnswerer,
  type Logger,
  type ObjectStore,
  OutboxRelay,
  Periodic,
  type RunningService,
  ServiceClient,
  type StartOptions,
  closeServer,
  createBus,
  createLogger,
  createObjectStore,
  listen,
  openDb,
  systemClock,
  loadCallingIdentity,
  type CallingIdentity,
} from '@vision/shared';
import { createApp } from './http/app';
import { QuotaClient, QuotaLeaseClient } from './clients/quota-client';
import { QuotaLeases } from './use-cases/quota-leases';
import { type ImagesConfig, loadImagesConfig } from './config';
import { ImageDetections } from './use-cases/detect-images';
import { RetentionJanitor } from './workers/retention';
import { ensureImagesLifecycle } from './store/lifecycle';
import { CallStore } from './store/call-store';
import { migrations } from './store/migrations';

export { createApp, IMAGE_DETECTIONS_PATH } from './http/app';
export { loadImagesConfig, imagesShape, type ImagesConfig } from './config';
export { ImageDetections, DEFAULT_SCENE } from './use-cases/detect-images';
export { RetentionJanitor } from './workers/retention';
export { ensureImagesLifecycle } from './store/lifecycle';
export { CallStore } from './store/call-store';
export type { ImageCallRecorded, ImageTaskRecord } from './store/call-record';
export { migrations } from './store/migrations';
export { sniffImageType } from './domain/image-type';

export const IMAGES_SCHEMA = 'images';

/** How long published rows of the call records' outbox are kept. */
const SENT_OUTBOX_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface ImagesParts {
  app: Express;
  detections: ImageDetections;
  janitor: RetentionJanitor;
  inference: InferenceClient;
  calls: CallStore;
  /** Publishes the call records of the outbox on `vision.image-calls`. */
  relay: OutboxRelay;
  /** The quota leases of this replica: stopped after the server (reports the last spends, closes the leases). */
  leases: QuotaLeases;
  /** Starts the janitor, the sweeper of interrupted settles, the outbox relay and the spend reports. */
  startLoops(): void;
  stopLoops(): Promise<void>;
}

export interface ImagesPartsDeps {
  cfg: ImagesConfig;
  identity: CallingIdentity;
  db: Db;
  bus: Bus;
  store: ObjectStore;
  clock: Clock;
  logger: Logger;
  /** Inference's answerer when it runs in this process (standalone): detect calls skip the HTTP hop. */
  inferenceHere?: LocalAnswerer;
}

/** Wires the images service over an open database and object store. */
export function createImages(deps: ImagesPartsDeps): ImagesParts {
  const { cfg, db, store, clock, logger } = deps;
  const { signer } = deps.identity;
  const relay = new OutboxRelay({
    knex: db.knex,
    bus: deps.bus,
    clock,
    logger,
    intervalMs: cfg.IMAGES_OUTBOX_INTERVAL_MS,
    lingerMs: cfg.IMAGES_OUTBOX_LINGER_MS,
    name: 'images outbox relay',
  });
  const calls = new CallStore(db.knex, { clock, recorded: () => relay.nudge() });
  const inference = new InferenceClient(
    new ServiceClient('inference', cfg.INFERENCE_URL, signer, undefined, deps.inferenceHere),
    {
      timeoutMs: cfg.IMAGES_DETECT_TIMEOUT_MS,
      hangMs: cfg.IMAGES_BREAKER_HANG_MS,
      errorThresholdPercentage: cfg.IMAGES_BREAKER_ERROR_PERCENT,
      resetTimeoutMs: cfg.IMAGES_BREAKER_RESET_MS,
      volumeThreshold: cfg.IMAGES_BREAKER_VOLUME_THRESHOLD,
      window: cfg.IMAGES_BREAKER_WINDOW,
      slowFloorMs: cfg.IMAGES_BREAKER_SLOW_MS,
    },
    logger,
  );
  const scenes = new SceneGate(
    inference,
    { cacheMs: cfg.IMAGES_SCENE_CACHE_MS, staleMs: cfg.IMAGES_SCENE_STALE_MS },
    clock,
    logger,
    'images-service',
  );
  const quotaService = new ServiceClient('quota', cfg.QUOTA_URL, signer);
  // A call's spend is reported after its answer; quota's record of it completes the call (detections).
  const leases: QuotaLeases = new QuotaLeases({
    client: new QuotaLeaseClient(quotaService),
    clock,
    logger,
    settings: {
      chunk: cfg.IMAGES_QUOTA_LEASE_UNITS,
      windowMs: cfg.IMAGES_QUOTA_LEASE_WINDOW_MS,
      idleMs: cfg.IMAGES_QUOTA_LEASE_IDLE_MS,
      ttlMs: cfg.IMAGES_QUOTA_LEASE_WINDOW_MS + cfg.IMAGES_QUOTA_LEASE_GRACE_MS,
      flushMs: cfg.IMAGES_QUOTA_REPORT_MS,
      // A recalled lease closes at its holder's first report after its calls in flight end, or once idle; a call
      // waits for that, but never longer than half a lease window (a holder that reports seldom keeps its units).
      recallWaitMs: Math.min(
        cfg.IMAGES_QUOTA_LEASE_IDLE_MS + 2 * cfg.IMAGES_QUOTA_REPORT_MS + 2000,
        cfg.IMAGES_QUOTA_LEASE_WINDOW_MS / 2,
      ),
    },
    onRecorded: (spend, outcome) => detections.spendRecorded(spend.call, outcome),
  });
  const detections = new ImageDetections({
    calls,
    store,
    leases,
    quota: new QuotaClient(quotaService),
    inference,
    scenes,
    clock,
    logger,
    settings: {
      claimMs: cfg.IMAGES_CALL_CLAIM_MS,
      idempotencyWaitMs: cfg.IMAGES_IDEMPOTENCY_WAIT_MS,
      detectConcurrency: cfg.IMAGES_DETECT_CONCURRENCY,
    },
  });
  const janitor = new RetentionJanitor(store, calls, clock, cfg.IMAGES_RETENTION_DAYS, logger);
  const app = createApp({
    logger,
    identity: deps.identity.verifier,
    detections,
    admission: new AdmissionQueue({
      queue: 'image_calls',
      what: 'image calls',
      maxInFlight: cfg.IMAGES_MAX_IN_FLIGHT,
      maxWaitMs: cfg.IMAGES_QUEUE_MAX_WAIT_MS,
      limit: cfg.ADMISSION_LIMIT,
    }),
    limits: {
      maxFileBytes: cfg.IMAGES_MAX_FILE_BYTES,
      maxBodyBytes: cfg.IMAGES_MAX_BODY_BYTES,
      maxFiles: cfg.IMAGES_MAX_FILES,
      maxPixels: cfg.IMAGES_MAX_PIXELS,
    },
    // Not the bus: a 201 does not wait for it (the outbox keeps the records until it is back).
    readiness: { database: () => db.check(), objects: () => store.check() },
    calls,
  });
  // The sweeper of interrupted settles and the retention janitor: the shared loop helper.
  const sweeper = new Periodic(
    'settle sweeper',
    cfg.IMAGES_CALL_CLAIM_MS,
    () => detections.recoverLapsed(),
    logger,
  );
  // Each pass also deletes the outbox rows published more than a week ago.
  const retention = new Periodic(
    'retention janitor',
    cfg.IMAGES_JANITOR_INTERVAL_MS,
    async () => {
      await janitor.runOnce();
      await relay.prune(new Date(clock.now().getTime() - SENT_OUTBOX_RETENTION_MS));
    },
    logger,
  );
  return {
    app,
    detections,
    janitor,
    inference,
    calls,
    relay,
    leases,
    startLoops: () => {
      leases.start();
      sweeper.start();
      retention.start();
      relay.start();
    },
    stopLoops: async () => {
      await Promise.all([sweeper.stop(), retention.stop(), relay.stop()]);
      inference.shutdown();
    },
  };
}

export interface RunningImages extends RunningService {
  parts: ImagesParts;
  db: Db;
  store: ObjectStore;
}

/** Starts the images service: config, database (schema `images`), object store, bus, loops, HTTP. */
export async function start(opts: StartOptions & { store?: ObjectStore } = {}): Promise<RunningImages> {
  const cfg = loadImagesConfig(opts.env ?? process.env);
  const identity = loadCallingIdentity(cfg.VISION_IDENTITY_DIR, 'images');
  const logger = opts.logger ?? createLogger('images', { level: cfg.LOG_LEVEL });
  const clock = opts.clock ?? systemClock;
  const store = opts.store ?? createObjectStore(cfg, { logger });
  const db = await openDb(cfg, { schema: IMAGES_SCHEMA, migrations, logger });
  const ownBus = opts.bus === undefined;
  const bus = opts.bus ?? createBus(cfg, { clientId: 'images', logger });
  // Not awaited: an unreachable store must not keep the service from starting (readiness reports it).
  void ensureImagesLifecycle(store, cfg.IMAGES_RETENTION_DAYS, logger);
  try {
    const inferenceHere = opts.local?.answererFor('inference');
    const parts = createImages({ cfg, identity, db, bus, store, clock, logger, inferenceHere });
    const host = opts.host ?? '0.0.0.0';
    const server = await listen(parts.app, opts.port ?? cfg.IMAGES_PORT, host);
    parts.startLoops();
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : (opts.port ?? cfg.IMAGES_PORT);
    const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    return {
      name: 'images',
      port,
      url: `http://${urlHost}:${port}`,
      parts,
      db,
      store,
      close: async () => {
        await parts.stopLoops();
        await closeServer(server);
        await parts.leases.stop();
        // One last round so that the records of the final calls are not left waiting for a restart.
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
