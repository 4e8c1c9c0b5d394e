import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  ConfigError,
  createBus,
  createLogger,
  loadConfig,
  LocalCalls,
  writeIdentityKeys,
  commonShape,
  env,
  runInService,
  startMetricsServer,
  type MetricsServer,
  type Bus,
  type Clock,
  type Logger,
  type RunningService,
  type StartOptions,
} from '@vision/shared';
import { loadGatewayConfig, openGatewayKeys, type GatewayKeys, type RunningGateway } from '@vision/gateway';
import { COCO_MODEL, start as startInference } from '@vision/inference';
import { start as startQuota } from '@vision/quota';
import { start as startResults } from '@vision/results';
import { start as startTasks } from '@vision/tasks';
import { start as startImages } from '@vision/images';
import { startGatewayThread } from './gateway-host';

const standaloneShape = {
  ...commonShape,
  PORT: env.port(8080),
  HOST: env.str('127.0.0.1'),
  VISION_MODELS_DIR: env.str(''),
  // The internal services listen on loopback only, on a free port unless one is set here.
  INFERENCE_PORT: env.optionalInt(1, 65535),
  QUOTA_PORT: env.optionalInt(1, 65535),
  TASKS_PORT: env.optionalInt(1, 65535),
  RESULTS_PORT: env.optionalInt(1, 65535),
  IMAGES_PORT: env.optionalInt(1, 65535),
  // Calls that a service of this process answers in it (images' detect calls to inference) skip the HTTP
  // hop; false sends every call over loopback HTTP, as the deployment's services do.
  STANDALONE_LOCAL_CALLS: env.bool(true),
};

/** Only the gateway listens on HOST; the other services, and metrics unless METRICS_HOST says so, on loopback. */
const INTERNAL_HOST = '127.0.0.1';

/**
 * Runs `listen`; an address already taken becomes a ConfigError naming it and the variable that moves
 * it (a second `npm start` beside the first needs another PORT and METRICS_PORT, nothing else).
 */
async function bindOrExplain<T>(variable: string, address: string, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      throw new ConfigError([
        `cannot listen on ${address} (${code}): set ${variable} to another port or address`,
      ]);
    throw err;
  }
}

export interface StandaloneOptions {
  env?: Record<string, string | undefined>;
  /** 'ephemeral' gives every service (and the gateway unless `port` is set) a free port: tests use it. */
  ports?: 'fixed' | 'ephemeral';
  port?: number;
  clock?: Clock;
  logger?: Logger;
  /**
   * An error in the gateway's thread, or its exit while running. Default: thrown again on the main thread,
   * where the process-wide crash handler logs it, counts it and exits as for any other fatal error.
   */
  onFatal?: (err: Error) => void;
}

const rethrow = (err: Error): void => {
  setImmediate(() => {
    throw err;
  });
};

export interface Standalone {
  url: string;
  gateway: RunningGateway;
  services: Record<string, RunningService>;
  bus: Bus;
  /** The Prometheus endpoint of the process: all six services' metrics, labelled by service. */
  metrics: MetricsServer;
  /** The environment every service was started with (secrets included: never print it). */
  env: Record<string, string | undefined>;
  close(): Promise<void>;
}

/**
 * The identity keys of the six services (identity-keys.ts): VISION_IDENTITY_DIR when set, else
 * `<data dir>/identity`, made at first start and kept, so that cursors signed with a key derived from
 * them survive restarts.
 */
function identityDir(configured: string | undefined, dataDir: string): string {
  const dir = path.resolve(configured ?? path.join(dataDir, 'identity'));
  if (!configured) writeIdentityKeys(dir);
  return dir;
}

/**
 * Where the models are: VISION_MODELS_DIR, else ./models, else ../shared/models (a checkout beside the
 * test data), whichever holds the COCO model. (The repository's own models/ holds only our fire/smoke
 * model, which the inference catalogue finds by itself.)
 */
function modelsDir(configured: string): string {
  if (configured) return path.resolve(configured);
  const candidates = [path.resolve('models'), path.resolve('../shared/models')];
  return candidates.find((c) => existsSync(path.join(c, COCO_MODEL))) ?? candidates[0];
}

/**
 * Runs all six services in this process with no external servers: PGlite under the data dir, one
 * in-process bus, a directory object store, memory limiters. Each service still listens on its own
 * loopback port and the gateway proxies to it, so the request path is the one of production, but for
 * the calls a service answers in process (STANDALONE_LOCAL_CALLS: images' detect calls to inference).
 */
export async function startStandalone(opts: StandaloneOptions = {}): Promise<Standalone> {
  const source = { ...(opts.env ?? process.env), VISION_MODE: 'standalone' };
  const cfg = loadConfig(standaloneShape, source);
  const configuredInference: string | undefined = (opts.env ?? process.env).INFERENCE_URL;
  const dataDir = path.resolve(cfg.VISION_DATA_DIR);
  const ephemeral = opts.ports === 'ephemeral';
  const logger = opts.logger ?? createLogger('standalone', { level: cfg.LOG_LEVEL });
  const shared: Record<string, string | undefined> = {
    ...source,
    VISION_DATA_DIR: dataDir,
    VISION_MODELS_DIR: modelsDir(cfg.VISION_MODELS_DIR),
    VISION_IDENTITY_DIR: identityDir(cfg.VISION_IDENTITY_DIR, dataDir),
  };
  const bus = createBus(cfg, { clientId: 'standalone', logger });
  const services: Record<string, RunningService> = {};
  let metricsServer: MetricsServer | undefined;
  let gatewayKeys: GatewayKeys | undefined;
  // An operator's hop in front of inference (INFERENCE_URL) is kept: its calls go through it.
  const local = cfg.STANDALONE_LOCAL_CALLS && !configuredInference ? new LocalCalls() : undefined;
  const base: StartOptions = { bus, clock: opts.clock, local };
  const run = async (
    name: string,
    start: (o: StartOptions) => Promise<RunningService>,
    port: number | undefined,
    urlVar: string,
  ): Promise<void> => {
    const portVar = `${name.toUpperCase()}_PORT`;
    const chosen = ephemeral || port === undefined ? 0 : port;
    // Everything the service schedules runs as that service: its spans and metrics carry its name.
    const svc = await bindOrExplain(portVar, `${INTERNAL_HOST}:${chosen}`, () =>
      runInService(name, () =>
        start({
          ...base,
          host: INTERNAL_HOST,
          env: shared,
          port: chosen,
          logger: logger.child({ service: name }),
        }),
      ),
    );
    services[name] = svc;
    // INFERENCE_URL, when set, is a hop of the operator's own in front of INFERENCE_PORT (a relay, a fault proxy).
    shared[urlVar] = (urlVar === 'INFERENCE_URL' && configuredInference) || svc.url;
  };
  try {
    await run('inference', startInference, cfg.INFERENCE_PORT, 'INFERENCE_URL');
    await run('quota', startQuota, cfg.QUOTA_PORT, 'QUOTA_URL');
    // Images before tasks: tasks asks images for an image call whose record is still on the bus.
    await run('images', startImages, cfg.IMAGES_PORT, 'IMAGES_URL');
    await run('tasks', startTasks, cfg.TASKS_PORT, 'TASKS_URL');
    await run('results', startResults, cfg.RESULTS_PORT, 'RESULTS_URL');
    const gatewayPort = opts.port ?? (ephemeral ? 0 : cfg.PORT);
    // The key store stays here, beside the one database; the gateway's HTTP side runs on its own thread.
    const gatewayLogger = logger.child({ service: 'gateway' });
    gatewayKeys = await runInService('gateway', () =>
      openGatewayKeys(loadGatewayConfig(shared), gatewayLogger, opts.clock),
    );
    const keys = gatewayKeys;
    const gateway = await bindOrExplain('PORT', `${cfg.HOST}:${gatewayPort}`, () =>
      startGatewayThread({
        env: shared,
        port: gatewayPort,
        host: cfg.HOST,
        keys,
        onFatal: (err) => {
          gatewayLogger.fatal({ err }, 'the gateway thread failed');
          (opts.onFatal ?? rethrow)(err);
        },
      }),
    );
    services.gateway = gateway;
    const metricsHost = cfg.METRICS_HOST ?? INTERNAL_HOST;
    const metricsPort = ephemeral ? 0 : cfg.METRICS_PORT;
    metricsServer = await bindOrExplain('METRICS_PORT', `${metricsHost}:${metricsPort}`, () =>
      startMetricsServer(metricsPort, metricsHost, {
        readiness: gateway.readiness,
        threads: gateway.metrics,
      }),
    );
    const metrics = metricsServer;
    const closeAll = async () => {
      for (const name of ['gateway', 'images', 'results', 'tasks', 'quota', 'inference']) {
        await services[name]
          ?.close()
          .catch((err: unknown) => logger.error({ err, service: name }, 'close failed'));
      }
      await bus.close();
      await metrics.close();
    };
    return { url: gateway.url, gateway, services, bus, metrics, env: shared, close: closeAll };
  } catch (err) {
    await metricsServer?.close();
    if (!services.gateway) await gatewayKeys?.close().catch(() => undefined);
    for (const svc of Object.values(services).reverse()) await svc.close().catch(() => undefined);
    await bus.close().catch(() => undefined);
    throw err;
  }
}
