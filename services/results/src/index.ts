import type { Express } from 'express';
import {
  AdmissionQueue,
  createObjectStore,
  InferencePictures,
  ServiceClient,
  closeServer,
  createBus,
  createLogger,
  listen,
  openDb,
  systemClock,
  type Bus,
  type Clock,
  type Db,
  type Logger,
  type ObjectStore,
  type RunningService,
  type StartOptions,
  type Subscription,
} from '@vision/shared';
import { createApp } from './http/app';
import { loadResultsConfig, type ResolvedResultsConfig } from './config';
import { CursorCodec } from './domain/cursor';
import { AnalyticsStore } from './store/analytics-store';
import { EvidenceStore } from './store/evidence-store';
import { EvidenceCapture } from './use-cases/capture-evidence';
import { EvidenceReader } from './use-cases/read-evidence';
import { FramesStore } from './store/frames-store';
import { migrations } from './store/migrations';
import { TasksStore } from './store/tasks-store';
import { AnalyticsReader } from './use-cases/read-analytics';
import { ResultsReader } from './use-cases/read-results';
import { TaskResolver } from './use-cases/resolve-task';
import { AnalyticsRunner } from './use-cases/run-analytics';
import { FrameWriter } from './workers/frame-writer';
import { subscribeIngest } from './workers/ingest';
import { JobFencesStore } from './store/job-fences-store';
import { Janitor } from './workers/janitor';
import { createWebhooks, type WebhookParts } from './webhooks';

export { createApp } from './http/app';
export { resultsShape, loadResultsConfig } from './config';
export { CursorCodec } from './domain/cursor';
export { framesBatchHandler, taskEventsBatchHandler, subscribeIngest, RESULTS_GROUP } from './workers/ingest';
export { Janitor } from './workers/janitor';
export { FrameWriter } from './workers/frame-writer';
export { ResultsReader } from './use-cases/read-results';
export { FramesStore, toRow } from './store/frames-store';
export { toStoredFrame, toPublicFrame } from './domain/frames';
export { frameMessageSchema, taskEventSchema } from './domain/messages';
export { TasksStore } from './store/tasks-store';
export { migrations } from './store/migrations';
export { TaskResolver } from './use-cases/resolve-task';
export { createWebhooks, type WebhookParts } from './webhooks';
export { EVENT_TYPES } from './domain/webhooks/events';

export interface ResultsDeps {
  db: Db;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  cfg: ResolvedResultsConfig;
  /** The tasks service, asked about a task read before its first event arrived. */
  tasksClient: ServiceClient;
  /** Where the pictures of events are kept; absent: none is taken (docs/EVIDENCE.md). */
  objects?: ObjectStore;
  /** The job-running inference backend, asked for the pictures. */
  inference?: InferencePictures;
}

export interface ResultsParts {
  app: Express;
  frames: FramesStore;
  tasks: TasksStore;
  /** The fences of jobs' owners (domain/job-fence.ts). */
  fences: JobFencesStore;
  janitor: Janitor;
  webhooks: WebhookParts;
  /** Evaluates zones and lines on ingest (docs/ANALYTICS.md). */
  analytics: AnalyticsRunner;
  /** Subscribes the ingest handlers to the bus and starts the retention timer. */
  startWorkers(): Promise<void>;
  /** Stops retention (waits for a pass in progress) and closes the bus subscriptions. */
  stopWorkers(): Promise<void>;
}

/** The results service's composition root: stores, the read use case, the ingest and retention workers, the app. */
export function createResults(deps: ResultsDeps): ResultsParts {
  const { db, bus, clock, logger, cfg } = deps;
  const frames = new FramesStore(db.knex);
  const tasks = new TasksStore(db.knex);
  const fences = new JobFencesStore(db.knex);
  const cursors = new CursorCodec(cfg.cursorSecret);
  const webhooks = createWebhooks({ db, bus, clock, logger, cfg, cursors });
  const resolver = new TaskResolver(tasks, deps.tasksClient, clock, logger);
  const reader = new ResultsReader({
    frames,
    resolver,
    cursors,
    clock,
    endGraceMs: cfg.RESULTS_END_GRACE_MS,
  });
  const analyticsStore = new AnalyticsStore(db.knex);
  const evidenceStore = new EvidenceStore(db.knex);
  const objects = deps.objects;
  const evidence = objects && {
    capture: new EvidenceCapture({
      inference: deps.inference,
      objects,
      logger,
      concurrency: cfg.RESULTS_SNAPSHOT_CONCURRENCY,
    }),
    store: evidenceStore,
    frames,
    objects,
    logger,
  };
  const analytics = new AnalyticsRunner({
    store: analyticsStore,
    frames,
    tasks,
    fanout: webhooks.fanout,
    clock,
    logger,
    ...(evidence && { evidence }),
  });
  const analyticsReader = new AnalyticsReader({
    store: analyticsStore,
    frames,
    resolver,
    cursors: new CursorCodec(cfg.cursorSecret, 'events'),
    replayCursors: new CursorCodec(cfg.cursorSecret, 'replay'),
    clock,
    endGraceMs: cfg.RESULTS_END_GRACE_MS,
    evidence: evidenceStore,
  });
  const stream = {
    pollMs: cfg.RESULTS_STREAM_POLL_MS,
    heartbeatMs: cfg.RESULTS_STREAM_HEARTBEAT_MS,
    maxDurationMs: cfg.RESULTS_STREAM_MAX_MS,
    stallMs: cfg.RESULTS_STREAM_STALL_MS,
  };
  const app = createApp({
    logger,
    identity: cfg.identity.verifier,
    reader,
    defaultLimit: cfg.RESULTS_DEFAULT_LIMIT,
    stream,
    readiness: { database: () => db.check(), bus: () => bus.check() },
    webhooks: webhooks.routes,
    ...(objects && {
      evidence: new EvidenceReader({ analytics: analyticsReader, store: evidenceStore, objects }),
    }),
    analytics: {
      reader: analyticsReader,
      logger,
      defaultLimit: cfg.RESULTS_DEFAULT_LIMIT,
      replayMaxFrames: cfg.RESULTS_REPLAY_MAX_FRAMES,
      admission: new AdmissionQueue({
        queue: 'replays',
        what: 'replays',
        maxInFlight: cfg.RESULTS_REPLAY_MAX_IN_FLIGHT,
        maxWaitMs: cfg.RESULTS_REPLAY_QUEUE_MAX_WAIT_MS,
        limit: cfg.ADMISSION_LIMIT,
      }),
      stream,
    },
  });
  const janitor = new Janitor({
    frames,
    tasks,
    analytics: analyticsStore,
    evidence: objects && { store: evidenceStore, objects },
    clock,
    logger,
    deleteBatch: cfg.RESULTS_DELETE_BATCH,
    orphanRetentionMs: cfg.orphanRetentionMs,
    tombstoneRetentionMs: cfg.orphanRetentionMs,
    intervalMs: cfg.RESULTS_JANITOR_INTERVAL_MS,
    analyze:
      db.kind === 'pglite'
        ? async () => {
            await db.knex.raw('ANALYZE result_frames, result_tasks');
          }
        : undefined,
  });
  let subs: Subscription[] = [];
  return {
    app,
    frames,
    tasks,
    fences,
    janitor,
    webhooks,
    analytics,
    startWorkers: async () => {
      const writer = new FrameWriter(frames, tasks, clock, { lingerMs: cfg.RESULTS_INGEST_LINGER_MS });
      subs = await subscribeIngest(bus, {
        frames,
        tasks,
        writer,
        clock,
        logger,
        analytics,
        grantKey: cfg.jobGrantKey,
        fences,
      });
      await webhooks.start();
      janitor.start();
    },
    stopWorkers: async () => {
      await janitor.stop();
      // Each consumer's leave waits for its fetch in flight: all leave together.
      await Promise.allSettled([webhooks.stop(), ...subs.map((s) => s.close())]);
    },
  };
}

/** The client results asks inference for pictures with: one breaker, so a backend that is down costs no wait. */
function pictures(cfg: ResolvedResultsConfig, logger: Logger): InferencePictures {
  const t = cfg.RESULTS_SNAPSHOT_TIMEOUT_MS;
  return new InferencePictures(
    new ServiceClient('inference', cfg.INFERENCE_URL, cfg.identity.signer),
    { timeoutMs: t, hangMs: t, errorThresholdPercentage: 50, resetTimeoutMs: 10_000, volumeThreshold: 5 },
    logger,
  );
}

/** The running service, with the parts tests and benchmarks drive directly. */
export interface RunningResults extends RunningService {
  db: Db;
  janitor: Janitor;
  frames: FramesStore;
  tasks: TasksStore;
  fences: JobFencesStore;
  webhooks: WebhookParts;
  analytics: AnalyticsRunner;
}

/** Starts the results service: config, database (schema `results`), bus, workers, HTTP. */
export async function start(opts: StartOptions = {}): Promise<RunningResults> {
  const cfg = loadResultsConfig(opts.env ?? process.env);
  const logger = opts.logger ?? createLogger('results', { level: cfg.LOG_LEVEL });
  const clock = opts.clock ?? systemClock;
  const ownBus: Bus | undefined = opts.bus ? undefined : createBus(cfg, { clientId: 'results', logger });
  const bus = opts.bus ?? ownBus!;
  let db: Db | undefined;
  let parts: ResultsParts | undefined;
  let inference: InferencePictures | undefined;
  try {
    db = await openDb(cfg, { schema: 'results', migrations, logger });
    const tasksClient = new ServiceClient('tasks', cfg.TASKS_URL, cfg.identity.signer);
    const objects = createObjectStore(cfg, { logger });
    inference = pictures(cfg, logger);
    parts = createResults({ db, bus, clock, logger, cfg, tasksClient, objects, inference });
    await parts.startWorkers();
    const host = opts.host ?? (opts.port === 0 ? '127.0.0.1' : '0.0.0.0');
    const server = await listen(parts.app, opts.port ?? cfg.RESULTS_PORT, host);
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? cfg.RESULTS_PORT);
    const running = parts;
    const database = db;
    let closing: Promise<void> | undefined;
    return {
      name: 'results',
      port,
      url: `http://127.0.0.1:${port}`,
      db,
      janitor: running.janitor,
      frames: running.frames,
      tasks: running.tasks,
      fences: running.fences,
      webhooks: running.webhooks,
      analytics: running.analytics,
      close: () =>
        (closing ??= (async () => {
          await closeServer(server);
          await running.stopWorkers();
          inference?.shutdown();
          await ownBus?.close();
          await database.close();
        })()),
    };
  } catch (err) {
    await parts?.stopWorkers();
    inference?.shutdown();
    await ownBus?.close().catch(() => undefined);
    await db?.close().catch(() => undefined);
    throw err;
  }
}
