import type { Express } from 'express';
import {
  AdmissionQueue,
  ConfigError,
  closeServer,
  createBus,
  createLogger,
  createObjectStore,
  listen,
  loadConfig,
  metrics,
  startEgressProxy,
  streamResolver,
  type Bus,
  type LocalAnswerer,
  type Logger,
  type ObjectStore,
  type RunningService,
  type StartOptions,
  loadServiceIdentity,
  decoderSandbox,
  unconfinedDecoderWarning,
  openDb,
  type Db,
} from '@vision/shared';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { createApp } from './http/app';
import { createDetectCall } from './detect/detect-call';
import { detectAnswerer } from './in-process/detect-answerer';
import { SceneCatalogue } from './catalogue/catalogue';
import { exposeSceneEngines, fallbackReadiness, logSceneEngines } from './catalogue/engine-report';
import { inferenceShape, type InferenceConfig } from './config';
import { JobManager } from './jobs/job-manager';
import { checkDecoder } from './jobs/decoder-preflight';
import type { Resolver } from './net/stream-url';
import { OwnedJobs } from './ownership/owned-jobs';
import { ReplicaOwner } from './ownership/replica-owner';
import { KnexLeaseStore } from './ownership/store/lease-store';
import { migrations as ownershipMigrations, OWNERSHIP_SCHEMA } from './ownership/store/migrations';

export { createApp } from './http/app';
export { SceneCatalogue } from './catalogue/catalogue';
export { COCO_MODEL, DEFAULT_SCENES, FIRE_SMOKE_DEFAULT_MODEL } from './catalogue/scene-config';
export { inferenceShape, type InferenceConfig } from './config';
export { JobManager, type SubmitOutcome } from './jobs/job-manager';
export type { JobView } from './jobs/job-types';
export { OnnxModel, parseLabels } from './model/onnx-model';
export { prepareImage } from './model/preprocess';
export { detectImages } from './detect/detect-images';
export { ByteTracker, type TrackerState } from './tracking/byte-tracker';
export { migrations, OWNERSHIP_SCHEMA } from './ownership/store/migrations';
export { KnexLeaseStore } from './ownership/store/lease-store';
export { ReplicaOwner } from './ownership/replica-owner';
export type { JobCheckpoint, JobRecord, LeaseStore, LocalJobs } from './ownership/port';
export { classifyAddress } from '@vision/shared';
export type { RawDetection, PixelBox, RgbImage } from './detection-types';

export function loadInferenceConfig(env: Record<string, string | undefined> = process.env): InferenceConfig {
  const cfg = loadConfig(inferenceShape, env);
  // A replica fences its jobs once a beat is later than the lease less one beat: fewer than three beats to a lease
  // would fence them at every late beat.
  if (cfg.INFERENCE_LEASE_TTL_MS < 3 * cfg.INFERENCE_LEASE_BEAT_MS)
    throw new ConfigError([
      `INFERENCE_LEASE_TTL_MS: expected at least three times INFERENCE_LEASE_BEAT_MS (got ${cfg.INFERENCE_LEASE_TTL_MS} and ${cfg.INFERENCE_LEASE_BEAT_MS})`,
    ]);
  return cfg;
}

export interface InferenceParts {
  app: Express;
  catalogue: SceneCatalogue;
  jobs: JobManager;
  /** The detect call for a service of this process (in-process/detect-answerer.ts). */
  answerer: LocalAnswerer;
  /** This replica's part in the shared video jobs (with a database store); started once it listens. */
  owner?: ReplicaOwner;
  /** The jobs API answered alike by every replica (with a database store). */
  owned?: OwnedJobs;
  close(): Promise<void>;
}

export interface InferenceDeps {
  cfg: InferenceConfig;
  bus: Bus;
  objectStore: ObjectStore;
  logger: Logger;
  resolve?: Resolver;
  /** Where our fire model is looked for after VISION_MODELS_DIR (catalogue.ts); null: nowhere else. */
  bundledModelsDir?: string | null;
  /** The database of the shared video jobs (INFERENCE_JOB_STORE=database); without it, jobs live in this process. */
  db?: Db;
}

/** Composition root of the inference service: loads the scenes' models, wires the job manager and the app. */
export async function createInference(deps: InferenceDeps): Promise<InferenceParts> {
  const { cfg } = deps;
  // Public keys only: inference calls no one, so it holds no key that could sign a caller's identity.
  const identity = loadServiceIdentity(cfg.VISION_IDENTITY_DIR, 'inference').verifier;
  // Callers' stream hosts: bounded, off the thread pool (a slow name server is the caller's problem).
  const resolve =
    deps.resolve ?? streamResolver({ servers: cfg.STREAM_DNS_SERVERS, timeoutMs: cfg.STREAM_DNS_TIMEOUT_MS });
  // The decoder preflight runs while the models load (it takes a few seconds).
  const decoderCheck = checkDecoder(cfg.FFMPEG_PATH, cfg.FFPROBE_PATH);
  const catalogue = await SceneCatalogue.load({
    modelsDir: cfg.VISION_MODELS_DIR,
    scenesFile: cfg.INFERENCE_SCENES_FILE,
    fire: {
      FIRE_SMOKE_MODEL: cfg.FIRE_SMOKE_MODEL,
      FIRE_SMOKE_LABELS: cfg.FIRE_SMOKE_LABELS,
      FIRE_SMOKE_DECODER: cfg.FIRE_SMOKE_DECODER,
      FIRE_SMOKE_LOWER_BOUND: cfg.FIRE_SMOKE_LOWER_BOUND,
    },
    session: { sessions: cfg.INFERENCE_MODEL_SESSIONS, intraOpNumThreads: cfg.INFERENCE_INTRA_OP_THREADS },
    logger: deps.logger,
    ...(deps.bundledModelsDir !== undefined ? { bundledModelsDir: deps.bundledModelsDir } : {}),
  });
  // What serves each scene, said once: a fallback (a model missing) is a warning, a degraded readiness entry
  // and `fallback="true"` on vision_scene_engine_info.
  const engineReports = catalogue.engineReports();
  logSceneEngines(engineReports, deps.logger);
  // Every HTTP(S) connection ffmpeg makes for a caller-given stream (playlists, HLS segments on any
  // host, reconnects) is address-checked when it is made (egress-proxy.ts).
  const egress = await startEgressProxy({
    allowPrivate: cfg.STREAM_ALLOW_PRIVATE_NETWORKS,
    resolve,
    logger: deps.logger,
  });
  const decoder = await decoderCheck;
  const unconfined = unconfinedDecoderWarning(decoderSandbox());
  if (unconfined) deps.logger.warn(unconfined);
  if (!decoder.ok)
    deps.logger.error({ reason: decoder.reason }, 'decoder preflight failed: video tasks are refused');
  const jobs = new JobManager({
    decoder,
    bus: deps.bus,
    catalogue,
    objectStore: deps.objectStore,
    logger: deps.logger,
    maxJobs: cfg.INFERENCE_MAX_JOBS,
    defaultSampleFps: cfg.INFERENCE_SAMPLE_FPS,
    ffmpegPath: cfg.FFMPEG_PATH,
    giveupMs: cfg.INFERENCE_STREAM_GIVEUP_MS,
    reconnectMinMs: cfg.INFERENCE_RECONNECT_MIN_MS,
    reconnectMaxMs: Math.max(cfg.INFERENCE_RECONNECT_MAX_MS, cfg.INFERENCE_RECONNECT_MIN_MS),
    liveQueue: cfg.INFERENCE_LIVE_QUEUE,
    allowPrivateNetworks: cfg.STREAM_ALLOW_PRIVATE_NETWORKS,
    resolve,
    httpProxy: egress.url,
    ringFrames: cfg.INFERENCE_FRAME_RING,
    ringLingerMs: cfg.INFERENCE_FRAME_RING_LINGER_MS,
    redecodeConcurrency: cfg.INFERENCE_REDECODE_CONCURRENCY,
    redecodeTimeoutMs: cfg.INFERENCE_REDECODE_TIMEOUT_MS,
  });
  const owner = deps.db
    ? new ReplicaOwner({
        store: new KnexLeaseStore(deps.db.knex),
        jobs,
        logger: deps.logger,
        replicaId: `${hostname()}-${randomUUID().slice(0, 8)}`,
        capacity: cfg.INFERENCE_MAX_JOBS,
        leaseTtlMs: cfg.INFERENCE_LEASE_TTL_MS,
        beatMs: cfg.INFERENCE_LEASE_BEAT_MS,
        takeMs: cfg.INFERENCE_TAKE_INTERVAL_MS,
        givenMs: Math.max(3000, 3 * cfg.INFERENCE_TAKE_INTERVAL_MS),
        rebalance: cfg.INFERENCE_REBALANCE,
        overlapMs: cfg.INFERENCE_HANDOVER_OVERLAP_MS,
      })
    : undefined;
  const owned = owner && deps.db ? new OwnedJobs(new KnexLeaseStore(deps.db.knex), owner, jobs) : undefined;
  const stopJobGauge = metrics.inferenceActiveJobs.addSource(() => [[{}, jobs.runningCount]]);
  const stopEngineGauge = exposeSceneEngines(engineReports);
  const detect = createDetectCall({ catalogue, maxPixels: cfg.INFERENCE_MAX_IMAGE_PIXELS });
  const admission = new AdmissionQueue({
    queue: 'detections',
    what: 'detections',
    maxInFlight: cfg.INFERENCE_DETECT_MAX_IN_FLIGHT,
    maxWaitMs: cfg.INFERENCE_DETECT_MAX_WAIT_MS,
    limit: cfg.ADMISSION_LIMIT,
  });
  const app = createApp({
    logger: deps.logger,
    catalogue,
    jobs,
    ...(owned && { owned }),
    identity,
    maxImagePixels: cfg.INFERENCE_MAX_IMAGE_PIXELS,
    detect,
    admission,
    readiness: {
      models: async () => {
        if (catalogue.models().length === 0) throw new Error('no model loaded');
        const off = catalogue.statuses().filter((s) => !s.enabled);
        if (off.length > 0)
          return { degraded: `disabled scenes: ${off.map((s) => s.scene_code).join(', ')}` };
      },
      decoder: async () => {
        if (!decoder.ok) throw new Error(`video decoding unavailable: ${decoder.reason}`);
      },
      bus: () => deps.bus.check(),
      object_store: () => deps.objectStore.check(),
      ...fallbackReadiness(engineReports),
    },
  });
  return {
    app,
    catalogue,
    jobs,
    answerer: detectAnswerer({ detect, admission, logger: deps.logger }),
    ...(owner && { owner }),
    ...(owned && { owned }),
    close: async () => {
      stopJobGauge();
      stopEngineGauge();
      // A planned stop: every job is handed over before the decoders go (docs/OPERATIONS.md, "Scaling video jobs").
      await owner?.drain().catch((err: unknown) => deps.logger.error({ err }, 'jobs not handed over'));
      await jobs.close();
      await egress.close();
      await catalogue.close();
    },
  };
}

export interface InferenceStartOptions extends StartOptions {
  objectStore?: ObjectStore;
  resolve?: Resolver;
}

/** Starts the inference service: config, models, bus, object store, HTTP on INFERENCE_PORT. */
export async function start(opts: InferenceStartOptions): Promise<RunningService> {
  const cfg = loadInferenceConfig(opts.env ?? process.env);
  const logger = opts.logger ?? createLogger('inference', { level: cfg.LOG_LEVEL });
  const ownBus = opts.bus === undefined;
  const bus = opts.bus ?? createBus(cfg, { clientId: 'inference', logger });
  const objectStore = opts.objectStore ?? createObjectStore(cfg, { logger });
  let parts: InferenceParts | undefined;
  let db: Db | undefined;
  try {
    if (cfg.INFERENCE_JOB_STORE === 'database')
      db = await openDb(cfg, { schema: OWNERSHIP_SCHEMA, migrations: ownershipMigrations, logger });
    parts = await createInference({ cfg, bus, objectStore, logger, resolve: opts.resolve, db });
    const host = opts.host ?? '0.0.0.0';
    const server = await listen(parts.app, opts.port ?? cfg.INFERENCE_PORT, host);
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : (opts.port ?? cfg.INFERENCE_PORT);
    const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    await parts.owner?.start(cfg.INFERENCE_REPLICA_URL ?? `http://${urlHost}:${port}`);
    const running = parts;
    const unregister = opts.local?.register('inference', parts.answerer);
    return {
      name: 'inference',
      port,
      url: `http://${urlHost}:${port}`,
      close: async () => {
        unregister?.();
        await closeServer(server);
        await running.close();
        if (ownBus) await bus.close();
        await db?.close();
      },
    };
  } catch (err) {
    await parts?.close().catch(() => undefined);
    if (ownBus) await bus.close().catch(() => undefined);
    await db?.close().catch(() => undefined);
    throw err;
  }
}
