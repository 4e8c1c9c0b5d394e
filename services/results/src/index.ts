import {
  ServiceClient,
  closeServer,
  createBus,
  createLogger,
  listen,
  openDb,
  systemClock,
  type Bus,
  type Db,
  type RunningService,
  type StartOptions,
  type Subscription,
} from '@vision/shared';
import { createApp } from './app';
import { loadResultsConfig } from './config';
import { CursorCodec } from './domain/cursor';
import { FrameWriter } from './frame-writer';
import { subscribeIngest } from './ingest';
import { Janitor } from './janitor';
import { ResultsReader } from './results-reader';
import { FramesStore } from './store/frames-store';
import { migrations } from './store/migrations';
import { TasksStore } from './store/tasks-store';
import { TaskResolver } from './task-resolver';

export { createApp } from './app';
export { resultsShape, loadResultsConfig } from './config';
export { CursorCodec } from './domain/cursor';
export { framesBatchHandler, taskEventsBatchHandler, subscribeIngest, RESULTS_GROUP } from './ingest';
export { Janitor } from './janitor';
export { FrameWriter } from './frame-writer';
export { ResultsReader } from './results-reader';
export { FramesStore, toRow } from './store/frames-store';
export { toStoredFrame, toPublicFrame } from './domain/frames';
export { frameMessageSchema, taskEventSchema } from './domain/messages';
export { TasksStore } from './store/tasks-store';
export { migrations } from './store/migrations';
export { TaskResolver } from './task-resolver';

/** The running service, with the parts tests and benchmarks drive directly. */
export interface RunningResults extends RunningService {
  db: Db;
  janitor: Janitor;
  frames: FramesStore;
  tasks: TasksStore;
}

export async function start(opts: StartOptions = {}): Promise<RunningResults> {
  const cfg = loadResultsConfig(opts.env ?? process.env);
  const logger = opts.logger ?? createLogger('results', { level: cfg.LOG_LEVEL });
  const clock = opts.clock ?? systemClock;
  const ownBus: Bus | undefined = opts.bus ? undefined : createBus(cfg, { clientId: 'results', logger });
  const bus = opts.bus ?? ownBus!;
  let db: Db | undefined;
  let subs: Subscription[] = [];
  let janitor: Janitor | undefined;
  try {
    db = await openDb(cfg, { schema: 'results', migrations, logger });
    const frames = new FramesStore(db.knex);
    const tasks = new TasksStore(db.knex);
    const resolver = new TaskResolver(
      tasks,
      new ServiceClient('tasks', cfg.TASKS_URL, cfg.INTERNAL_SECRET),
      clock,
      logger,
    );
    const reader = new ResultsReader({
      frames,
      resolver,
      cursors: new CursorCodec(cfg.cursorSecret),
      clock,
      endGraceMs: cfg.RESULTS_END_GRACE_MS,
    });
    const database = db;
    const app = createApp({
      logger,
      identitySecret: cfg.INTERNAL_SECRET,
      reader,
      defaultLimit: cfg.RESULTS_DEFAULT_LIMIT,
      readiness: { database: () => database.check(), bus: () => bus.check() },
    });
    const writer = new FrameWriter(frames, tasks, clock);
    subs = await subscribeIngest(bus, { frames, tasks, writer, clock, logger });
    janitor = new Janitor({
      frames,
      tasks,
      clock,
      logger,
      deleteBatch: cfg.RESULTS_DELETE_BATCH,
      orphanRetentionMs: cfg.orphanRetentionMs,
      tombstoneRetentionMs: cfg.orphanRetentionMs,
      intervalMs: cfg.RESULTS_JANITOR_INTERVAL_MS,
      analyze:
        database.kind === 'pglite'
          ? async () => {
              await database.knex.raw('ANALYZE result_frames, result_tasks');
            }
          : undefined,
    });
    janitor.start();
    const host = opts.host ?? (opts.port === 0 ? '127.0.0.1' : '0.0.0.0');
    const server = await listen(app, opts.port ?? cfg.RESULTS_PORT, host);
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? cfg.RESULTS_PORT);
    const runningJanitor = janitor;
    let closing: Promise<void> | undefined;
    return {
      name: 'results',
      port,
      url: `http://127.0.0.1:${port}`,
      db,
      janitor: runningJanitor,
      frames,
      tasks,
      close: () =>
        (closing ??= (async () => {
          await closeServer(server);
          await runningJanitor.stop();
          await Promise.allSettled(subs.map((s) => s.close()));
          await ownBus?.close();
          await database.close();
        })()),
    };
  } catch (err) {
    await janitor?.stop();
    await Promise.allSettled(subs.map((s) => s.close()));
    await ownBus?.close().catch(() => undefined);
    await db?.close().catch(() => undefined);
    throw err;
  }
}
